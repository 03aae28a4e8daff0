/*
 * bv5_fb: batprotocol's flatbuffers binary format, reading (see bv5_fb.h;
 * writing and the conversions are in bv5_fb_write.cc). It mirrors
 * io/bv5_decode.c event for event, so that both formats say the same
 * things of the same message.
 */
#include "io/bv5_fb_int.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

extern "C" {
#include "io/host_pstates.h"
}

namespace fb = batprotocol::fb;
using flatbuffers::Offset;

namespace {

/* ---------- reading ---------- */

struct ctx {
    fbf_bv5_decoder *d;
    int index;
    const char *type;
    double ts;
    fbf_error *err;
};

struct got {
    char t[40];
    explicit got(const char *s) { snprintf(t, sizeof t, "%s", s); }
    explicit got(double v) { snprintf(t, sizeof t, "%.17g", v); }
    explicit got(uint64_t v) { snprintf(t, sizeof t, "%" PRIu64, v); }
};

int bad(const ctx &c, const char *field, const char *want, const got &g)
{
    return fbf_errorf(c.err, -EPROTO, "event %d (%s): %s: expected %s, got %s", c.index, c.type,
                      field, want, g.t);
}

int oom(const ctx &c) { return fbf_errorf(c.err, -ENOMEM, "out of memory"); }

#define NEED(cond, field, want, g)                                                             \
    do {                                                                                       \
        if (!(cond))                                                                           \
            return bad(c, field, want, got(g));                                                \
    } while (0)

/* Events go to the decoder's list, as bv5_decode.c puts them. */
fbf_event *push(const ctx &c, fbf_event_kind kind)
{
    return fbf_event_list_push(&c.d->events, kind, c.ts, c.index, c.type);
}

fbf_idset *next_set(fbf_bv5_decoder *d)
{
    if (d->nsets == d->sets_cap) {
        size_t cap = d->sets_cap ? 2 * d->sets_cap : 8;
        fbf_idset **v = static_cast<fbf_idset **>(realloc(d->set_ptrs, cap * sizeof *v));
        if (!v)
            return nullptr;
        d->set_ptrs = v;
        for (size_t i = d->sets_cap; i < cap; i++)
            d->set_ptrs[i] = nullptr;
        d->sets_cap = cap;
    }
    fbf_idset **s = &d->set_ptrs[d->nsets];
    if (!*s && !(*s = static_cast<fbf_idset *>(malloc(sizeof **s))))
        return nullptr;
    fbf_idset_init(*s);
    d->nsets++;
    return *s;
}

int read_hosts(const ctx &c, const flatbuffers::String *v, const char *field,
               const fbf_idset **out)
{
    NEED(v, field, "an interval set string", "nothing");
    fbf_idset *set = next_set(c.d);
    if (!set)
        return oom(c);
    fbf_error e;
    if (fbf_idset_parse(set, v->c_str(), &e) < 0)
        return fbf_errorf(c.err, -EPROTO, "event %d (%s): %s: %s", c.index, c.type, field,
                          e.text);
    *out = set;
    return 0;
}

/* ---------- SimulationBeginsEvent ---------- */

int host_state(const ctx &c, fb::HostState st, uint32_t id, fbf_machine_state *out)
{
    switch (st) {
    case fb::HostState_IDLE:
    case fb::HostState_COMPUTING: *out = FBF_MACHINE_ON; return 0;
    case fb::HostState_SLEEPING: *out = FBF_MACHINE_OFF; return 0;
    case fb::HostState_SWITCHING_ON: *out = FBF_MACHINE_SWITCHING_ON; return 0;
    case fb::HostState_SWITCHING_OFF: *out = FBF_MACHINE_SWITCHING_OFF; return 0;
    }
    return fbf_errorf(c.err, -EPROTO, "event %d (%s): event.computation_hosts[].state: host "
                      "%u: unknown state %d (IDLE, COMPUTING, SLEEPING, SWITCHING_ON, "
                      "SWITCHING_OFF)", c.index, c.type, id, static_cast<int>(st));
}

const char *property(const flatbuffers::Vector<Offset<fb::HostProperty>> *props,
                     const char *key)
{
    if (props)
        for (const fb::HostProperty *p : *props)
            if (strcmp(p->key()->c_str(), key) == 0)
                return p->value()->c_str();
    return nullptr;
}

int push_state(const ctx &c, uint32_t id, fbf_machine_state st)
{
    fbf_bv5_decoder *d = c.d;
    fbf_begins *b = &d->begins;
    if (b->nb_states == d->states_cap) {
        size_t cap = d->states_cap ? 2 * d->states_cap : 64;
        uint32_t *m = static_cast<uint32_t *>(realloc(d->state_machines, cap * sizeof *m));
        if (m)
            d->state_machines = m;
        fbf_machine_state *s =
            static_cast<fbf_machine_state *>(realloc(d->states, cap * sizeof *s));
        if (s)
            d->states = s;
        if (!m || !s)
            return oom(c);
        d->states_cap = cap;
    }
    d->state_machines[b->nb_states] = id;
    d->states[b->nb_states++] = st;
    return 0;
}

int read_hosts_list(const ctx &c, const flatbuffers::Vector<Offset<fb::Host>> *hosts)
{
    fbf_bv5_decoder *d = c.d;
    fbf_host_pstates ps;
    fbf_host_pstates_start(&ps, "event.computation_hosts[].properties.sleep_pstates");
    for (const fb::Host *h : *hosts) {
        uint32_t m = h->id();
        NEED(m <= FBF_IDSET_MAX_ID, "event.computation_hosts[].id", "a host number",
             uint64_t{m});
        if (fbf_idset_contains(&d->compute, m))
            return fbf_errorf(c.err, -EPROTO, "event %d (%s): event.computation_hosts: host %u "
                              "listed twice", c.index, c.type, m);
        if (fbf_idset_add_range(&d->compute, m, m) < 0)
            return oom(c);
        fbf_machine_state s = FBF_MACHINE_ON;
        int rc;
        if ((rc = host_state(c, h->state(), m, &s)) < 0 ||
            (s != FBF_MACHINE_ON && (rc = push_state(c, m, s)) < 0))
            return rc;
        fbf_error inner;
        if ((rc = fbf_host_pstates_add(&ps, m, property(h->properties(), "sleep_pstates"),
                                       property(h->properties(), "wattage_per_state"),
                                       &inner)) < 0)
            return fbf_errorf(c.err, rc, "event %d (%s): %s", c.index, c.type, inner.text);
    }
    fbf_host_pstates_finish(&ps, &d->begins);
    return 0;
}

int read_begins(const ctx &c, const fb::SimulationBeginsEvent *ev)
{
    fbf_bv5_decoder *d = c.d;
    d->begins = fbf_begins{};
    d->begins.compute = &d->compute;
    fbf_idset_clear(&d->compute);
    uint64_t n = ev->computation_host_number(); /* 0: not said */
    if (ev->computation_hosts()) {
        int rc = read_hosts_list(c, ev->computation_hosts());
        if (rc < 0)
            return rc;
    }
    uint64_t count = fbf_idset_count(&d->compute);
    if (count == 0) {
        NEED(n >= 1 && n <= uint64_t{FBF_IDSET_MAX_ID} + 1, "event.computation_host_number",
             "an integer in [1, 2^31]", n);
        if (fbf_idset_add_range(&d->compute, 0, static_cast<uint32_t>(n - 1)) < 0)
            return oom(c);
    } else if (n != 0 && n != count) {
        return fbf_errorf(c.err, -EPROTO, "event %d (%s): event.computation_host_number: "
                          "%" PRIu64 " for %" PRIu64 " computation_hosts", c.index, c.type, n,
                          count);
    }
    d->begins.state_machines = d->state_machines;
    d->begins.states = d->states;
    fbf_event *e = push(c, FBF_EV_SIMULATION_BEGINS);
    if (!e)
        return oom(c);
    e->u.begins = &d->begins;
    return 0;
}

/* ---------- jobs ---------- */

int read_submitted(const ctx &c, const fb::JobSubmittedEvent *ev)
{
    const fb::Job *job = ev->job();
    NEED(ev->job_id(), "event.job_id", "a string", "nothing");
    NEED(job, "event.job", "an object", "nothing");
    uint64_t res = job->resource_request();
    NEED(res >= 1 && res <= 2147483647u, "event.job.resource_request", "an integer >= 1", res);
    double wall = job->walltime().has_value() ? job->walltime().value() : -1.0;
    NEED(wall == -1 || wall > 0, "event.job.walltime", "a number of seconds > 0, or -1", wall);
    double sub = ev->submission_time();
    NEED(std::isfinite(sub), "event.submission_time", "a number", sub);
    fbf_event *e = push(c, FBF_EV_JOB_SUBMITTED);
    if (!e)
        return oom(c);
    e->u.submitted.id = ev->job_id()->c_str();
    e->u.submitted.described = true;
    e->u.submitted.desc = fbf_job_desc{};
    e->u.submitted.desc.res = static_cast<int64_t>(res);
    e->u.submitted.desc.walltime = wall;
    e->u.submitted.desc.subtime = sub;
    return 0;
}

int read_completed(const ctx &c, const fb::JobCompletedEvent *ev)
{
    NEED(ev->job_id(), "event.job_id", "a string", "nothing");
    int st = ev->state();
    NEED(st >= fb::FinalJobState_MIN && st <= fb::FinalJobState_MAX, "event.state",
         "a final job state (COMPLETED_SUCCESSFULLY...)", static_cast<double>(st));
    fbf_event *e = push(c, FBF_EV_JOB_ENDED);
    if (!e)
        return oom(c);
    e->u.ended.id = ev->job_id()->c_str();
    return 0;
}

int read_killed(const ctx &c, const fb::JobsKilledEvent *ev)
{
    NEED(ev->job_ids(), "event.job_ids", "an array", "nothing");
    for (const flatbuffers::String *id : *ev->job_ids()) {
        fbf_event *e = push(c, FBF_EV_JOB_KILLED);
        if (!e)
            return oom(c);
        e->u.killed.id = id->c_str();
    }
    return 0;
}

/* ---------- hosts, notices ---------- */

int push_state_changed(const ctx &c, const fbf_idset *hosts, uint32_t pstate)
{
    fbf_event *e = push(c, FBF_EV_STATE_CHANGED);
    if (!e)
        return oom(c);
    e->u.state.machines = hosts;
    e->u.state.pstate = pstate;
    return 0;
}

int read_pstate_changed(const ctx &c, const fb::HostsPStateChangedEvent *ev)
{
    const fbf_idset *hosts;
    int rc = read_hosts(c, ev->host_ids(), "event.host_ids", &hosts);
    return rc < 0 ? rc : push_state_changed(c, hosts, ev->pstate());
}

int read_turned_onoff(const ctx &c, const fb::HostsTurnedOnOffEvent *ev)
{
    const fbf_idset *hosts;
    int rc = read_hosts(c, ev->host_ids(), "event.host_ids", &hosts);
    if (rc < 0)
        return rc;
    uint64_t st = ev->state();
    NEED(st == 0 || st == 1, "event.state", "0 (on) or 1 (off)", st);
    return push_state_changed(c, hosts, st == 0 ? c.d->compute_pstate : c.d->sleep_pstate);
}

int read_simple(const ctx &c, fbf_event_kind kind, fbf_notice notice)
{
    fbf_event *e = push(c, kind);
    if (!e)
        return oom(c);
    e->u.notice = notice;
    return 0;
}

int wrong_way(const ctx &c)
{
    return fbf_errorf(c.err, -EPROTO, "event %d (%s): event_type: this event goes from the "
                      "decision component to Batsim, not the other way", c.index, c.type);
}

int read_event(ctx &c, const fb::EventAndTimestamp *ev, char *unknown, size_t cap)
{
    fbf_bv5_decoder *d = c.d;
    fb::Event type = ev->event_type();
    if (type == fb::Event_NONE)
        return fbf_errorf(c.err, -EPROTO, "event %d: event_type: expected an event type, got "
                          "NONE", c.index);
    if (type > fb::Event_MAX) {
        snprintf(unknown, cap, "#%d", static_cast<int>(type));
        c.type = unknown;
    } else {
        c.type = fb::EnumNameEvent(type);
    }
    double ts = ev->timestamp();
    NEED(std::isfinite(ts), "timestamp", "a finite number", ts);
    if (ts > d->now || ts < d->prev)
        return fbf_errorf(c.err, -EPROTO, "event %d (%s): timestamp: %.6f is %s %.6f", c.index,
                          c.type, ts, ts > d->now ? "after now" : "before the previous event's",
                          ts > d->now ? d->now : d->prev);
    d->prev = c.ts = ts;
    if (type <= fb::Event_MAX)
        NEED(ev->event(), "event", "an object", "nothing");
    if (d->ended)
        return fbf_errorf(c.err, -EPROTO, "event %d (%s): comes after SimulationEndsEvent",
                          c.index, c.type);
    bool begins = type == fb::Event_SimulationBeginsEvent;
    if (begins == d->begun)
        return fbf_errorf(c.err, -EPROTO, "event %d (%s): %s", c.index, c.type,
                          d->begun ? "the simulation already began"
                                   : "received before SimulationBeginsEvent");
    switch (type) {
    case fb::Event_SimulationBeginsEvent:
        d->begun = true;
        return read_begins(c, ev->event_as_SimulationBeginsEvent());
    case fb::Event_JobSubmittedEvent: return read_submitted(c, ev->event_as_JobSubmittedEvent());
    case fb::Event_JobCompletedEvent: return read_completed(c, ev->event_as_JobCompletedEvent());
    case fb::Event_RequestedCallEvent: return read_simple(c, FBF_EV_CALL_DUE, {});
    case fb::Event_JobsKilledEvent: return read_killed(c, ev->event_as_JobsKilledEvent());
    case fb::Event_AllStaticJobsHaveBeenSubmittedEvent:
        return read_simple(c, FBF_EV_NOTIFY, FBF_NOTICE_NO_MORE_STATIC_JOBS);
    case fb::Event_AllStaticExternalEventsHaveBeenInjectedEvent:
        return read_simple(c, FBF_EV_NOTIFY, FBF_NOTICE_NO_MORE_EXTERNAL_EVENTS);
    case fb::Event_ExternalEventOccurredEvent: return 0; /* nothing a policy of fastbf's uses */
    case fb::Event_HostsPStateChangedEvent:
        return read_pstate_changed(c, ev->event_as_HostsPStateChangedEvent());
    case fb::Event_HostsTurnedOnOffEvent:
        return read_turned_onoff(c, ev->event_as_HostsTurnedOnOffEvent());
    case fb::Event_SimulationEndsEvent:
        d->ended = true;
        return read_simple(c, FBF_EV_SIMULATION_ENDS, {});
    case fb::Event_EDCHelloEvent:
    case fb::Event_ExecuteJobEvent:
    case fb::Event_RejectJobEvent:
    case fb::Event_KillJobsEvent:
    case fb::Event_CallMeLaterEvent:
    case fb::Event_StopCallMeLaterEvent:
    case fb::Event_RegisterProfileEvent:
    case fb::Event_RegisterJobEvent:
    case fb::Event_FinishRegistrationEvent:
    case fb::Event_ForceSimulationStopEvent:
    case fb::Event_ChangeHostsPStateEvent:
    case fb::Event_TurnOnOffHostsEvent: return wrong_way(c);
    default: break; /* the probes, BatsimHelloEvent: unknown to JSON's reader too */
    }
    return fbf_errorf(c.err, -EPROTO, "event %d (%s): event_type: unknown event type", c.index,
                      c.type);
}

int decode(fbf_bv5_fb *f, fbf_bv5_decoder *d, const uint8_t *buf, size_t len, bool begun,
           fbf_error *err)
{
    fbf_event_list_clear(&d->events);
    for (size_t i = 0; i < d->nsets; i++)
        fbf_idset_fini(d->set_ptrs[i]);
    d->nsets = 0;
    if (len >= FLATBUFFERS_MAX_BUFFER_SIZE)
        return fbf_errorf(err, -EPROTO, "flatbuffers: a message of %zu bytes is over the "
                          "format's 2 GiB", len);
    buf = fbf_bv5_fb_aligned(f, buf, len);
    if (!fbf_bv5_fb_verified(buf, len))
        return fbf_errorf(err, -EPROTO, "flatbuffers: the message does not verify");
    const fb::Message *m = fb::GetMessage(buf);
    if (!std::isfinite(m->now()))
        return fbf_errorf(err, -EPROTO, "message: now: expected a finite number, got %s",
                          got(m->now()).t);
    if (!m->events())
        return fbf_errorf(err, -EPROTO, "message: events: expected an array, got nothing");
    d->now = m->now();
    d->prev = -INFINITY;
    d->begun = begun;
    int index = 0;
    char unknown[16];
    for (const fb::EventAndTimestamp *ev : *m->events()) {
        ctx c = {d, index++, "message", 0, err};
        int rc = read_event(c, ev, unknown, sizeof unknown);
        if (rc < 0)
            return rc;
    }
    if (!d->begun)
        return fbf_errorf(err, -EPROTO, "message: the first message must hold "
                          "SimulationBeginsEvent");
    return 0;
}

} // namespace

/* flatbuffers reads scalars in place: a request not 8-byte aligned (a
 * double's alignment) is copied first. */
const uint8_t *fbf_bv5_fb_aligned(fbf_bv5_fb *f, const uint8_t *buf, size_t len)
{
    if (reinterpret_cast<uintptr_t>(buf) % alignof(uint64_t) == 0)
        return buf;
    f->copy.resize(len / sizeof(uint64_t) + 1);
    memcpy(f->copy.data(), buf, len);
    return reinterpret_cast<const uint8_t *>(f->copy.data());
}

bool fbf_bv5_fb_verified(const uint8_t *buf, size_t len)
{
    /* A table takes at least 4 bytes: the count of tables is bounded by
     * the size, not by flatbuffers' default of a million. */
    flatbuffers::Verifier v(buf, len, 64, len / 4 + 1);
    return fb::VerifyMessageBuffer(v);
}

/* ---------- the C interface: no exception crosses it ---------- */

extern "C" {

fbf_bv5_fb *fbf_bv5_fb_create(void) { return new (std::nothrow) fbf_bv5_fb(); }

void fbf_bv5_fb_destroy(fbf_bv5_fb *f)
{
    if (!f)
        return;
    fbf_jbuf_fini(&f->scratch);
    delete f;
}

int fbf_bv5_fb_decode(fbf_bv5_fb *f, fbf_bv5_decoder *d, const uint8_t *buf, size_t len,
                      bool begun, fbf_error *err)
{
    try {
        return decode(f, d, buf, len, begun, err);
    } catch (const std::bad_alloc &) {
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
}

} // extern "C"
