/*
 * bv5_decode: Batsim 5 JSON messages into typed events (see bv5_decode.h).
 */
#include "io/bv5_decode.h"
#include "io/json_strict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/host_pstates.h"
#include "io/job_json.h"

typedef struct ctx {
    fbf_bv5_decoder *d;
    int index;
    const char *type;
    double ts;
    fbf_error *err;
} ctx;

static const cJSON *get(const cJSON *o, const char *k) { return fbf_json_get(o, k); }

static int bad(const ctx *c, const char *field, const char *want, const cJSON *got)
{
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s: expected %s, got %s", c->index,
                      c->type, field, want, fbf_job_json_kind(got));
}

static int oom(const ctx *c) { return fbf_errorf(c->err, -ENOMEM, "out of memory"); }

#define NEED(cond, field, want, got)                                                           \
    do {                                                                                       \
        if (!(cond))                                                                           \
            return bad(c, field, want, got);                                                   \
    } while (0)

static fbf_event *push(const ctx *c, fbf_event_kind kind)
{
    return fbf_event_list_push(&c->d->events, kind, c->ts, c->index, c->type);
}

/* A machine set of this message; each is allocated once and kept, so that
 * the events pointing to them never see them move. */
static fbf_idset *next_set(fbf_bv5_decoder *d)
{
    if (d->nsets == d->sets_cap) {
        size_t cap = d->sets_cap ? 2 * d->sets_cap : 8;
        fbf_idset **v = realloc(d->set_ptrs, cap * sizeof *v);
        if (!v)
            return NULL;
        d->set_ptrs = v;
        for (size_t i = d->sets_cap; i < cap; i++)
            d->set_ptrs[i] = NULL;
        d->sets_cap = cap;
    }
    fbf_idset **s = &d->set_ptrs[d->nsets];
    if (!*s && !(*s = malloc(sizeof **s)))
        return NULL;
    fbf_idset_init(*s);
    d->nsets++;
    return *s;
}

/* An interval set "0-3 7" (Batsim 5 writes hyphenated ranges separated by
 * spaces). */
static int read_hosts(const ctx *c, const cJSON *v, const char *field, const fbf_idset **out)
{
    NEED(cJSON_IsString(v), field, "an interval set string", v);
    fbf_idset *set = next_set(c->d);
    if (!set)
        return oom(c);
    fbf_error e;
    if (fbf_idset_parse(set, v->valuestring, &e) < 0)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s: %s", c->index, c->type, field,
                          e.text);
    *out = set;
    return 0;
}

static bool is_count(const cJSON *v, double max)
{
    return fbf_job_json_is_int(v) && v->valuedouble >= 0 && v->valuedouble <= max;
}

/* ---------- SimulationBeginsEvent ---------- */

static int host_state(const ctx *c, const cJSON *st, uint32_t id, fbf_machine_state *out)
{
    static const struct {
        const char *name;
        fbf_machine_state st;
    } names[] = {
        {"IDLE", FBF_MACHINE_ON},          {"COMPUTING", FBF_MACHINE_ON},
        {"SLEEPING", FBF_MACHINE_OFF},     {"SWITCHING_ON", FBF_MACHINE_SWITCHING_ON},
        {"SWITCHING_OFF", FBF_MACHINE_SWITCHING_OFF},
    };
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (cJSON_IsString(st) && strcmp(st->valuestring, names[k].name) == 0) {
            *out = names[k].st;
            return 0;
        }
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): event.computation_hosts[].state: host "
                      "%u: unknown state %s%s%s (IDLE, COMPUTING, SLEEPING, SWITCHING_ON, "
                      "SWITCHING_OFF)", c->index, c->type, id, cJSON_IsString(st) ? "\"" : "",
                      cJSON_IsString(st) ? st->valuestring : fbf_job_json_kind(st),
                      cJSON_IsString(st) ? "\"" : "");
}

/* The value of a host's property key, from its list of {key, value}. */
static const char *property(const cJSON *props, const char *key)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, props)
    {
        const cJSON *k = get(p, "key"), *v = get(p, "value");
        if (cJSON_IsString(k) && cJSON_IsString(v) && strcmp(k->valuestring, key) == 0)
            return v->valuestring;
    }
    return NULL;
}

static int push_state(const ctx *c, uint32_t id, fbf_machine_state st)
{
    fbf_bv5_decoder *d = c->d;
    fbf_begins *b = &d->begins;
    if (b->nb_states == d->states_cap) {
        size_t cap = d->states_cap ? 2 * d->states_cap : 64;
        uint32_t *m = realloc(d->state_machines, cap * sizeof *m);
        if (m)
            d->state_machines = m;
        fbf_machine_state *s = realloc(d->states, cap * sizeof *s);
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

static int read_hosts_list(const ctx *c, const cJSON *hosts)
{
    fbf_bv5_decoder *d = c->d;
    fbf_host_pstates ps;
    fbf_host_pstates_start(&ps, "event.computation_hosts[].properties.sleep_pstates");
    const cJSON *h;
    cJSON_ArrayForEach(h, hosts)
    {
        const cJSON *id = get(h, "id");
        NEED(cJSON_IsObject(h) && is_count(id, FBF_IDSET_MAX_ID), "event.computation_hosts[].id",
             "a host number", cJSON_IsObject(h) ? id : h);
        uint32_t m = (uint32_t)id->valuedouble;
        if (fbf_idset_contains(&d->compute, m))
            return fbf_errorf(c->err, -EPROTO, "event %d (%s): event.computation_hosts: host %u "
                              "listed twice", c->index, c->type, m);
        if (fbf_idset_add_range(&d->compute, m, m) < 0)
            return oom(c);
        const cJSON *st = get(h, "state");
        fbf_machine_state s = FBF_MACHINE_ON;
        int rc;
        if (st && ((rc = host_state(c, st, m, &s)) < 0 ||
                   (s != FBF_MACHINE_ON && (rc = push_state(c, m, s)) < 0)))
            return rc;
        const cJSON *props = get(h, "properties");
        fbf_error inner;
        if ((rc = fbf_host_pstates_add(&ps, m, property(props, "sleep_pstates"),
                                       property(props, "wattage_per_state"), &inner)) < 0)
            return fbf_errorf(c->err, rc, "event %d (%s): %s", c->index, c->type, inner.text);
    }
    fbf_host_pstates_finish(&ps, &d->begins);
    return 0;
}

static int read_begins(const ctx *c, const cJSON *ev)
{
    fbf_bv5_decoder *d = c->d;
    d->begins = (fbf_begins){.compute = &d->compute};
    d->begins.state_machines = NULL;
    fbf_idset_clear(&d->compute);
    const cJSON *n = get(ev, "computation_host_number");
    const cJSON *hosts = get(ev, "computation_hosts");
    if (hosts) {
        NEED(cJSON_IsArray(hosts), "event.computation_hosts", "an array", hosts);
        int rc = read_hosts_list(c, hosts);
        if (rc < 0)
            return rc;
    }
    if (fbf_idset_count(&d->compute) == 0) {
        NEED(is_count(n, (double)FBF_IDSET_MAX_ID + 1) && n->valuedouble >= 1,
             "event.computation_host_number", "an integer in [1, 2^31]", n);
        if (fbf_idset_add_range(&d->compute, 0, (uint32_t)(n->valuedouble - 1)) < 0)
            return oom(c);
    } else if (n && !(is_count(n, (double)FBF_IDSET_MAX_ID + 1) &&
                      n->valuedouble == (double)fbf_idset_count(&d->compute))) {
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): event.computation_host_number: "
                          "%s for %llu computation_hosts", c->index, c->type,
                          fbf_job_json_kind(n),
                          (unsigned long long)fbf_idset_count(&d->compute));
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

static int read_submitted(const ctx *c, const cJSON *ev)
{
    const cJSON *id = get(ev, "job_id"), *job = get(ev, "job");
    NEED(cJSON_IsString(id), "event.job_id", "a string", id);
    NEED(cJSON_IsObject(job), "event.job", "an object", job);
    const cJSON *res = get(job, "resource_request");
    NEED(is_count(res, 2147483647.0) && res->valuedouble >= 1, "event.job.resource_request",
         "an integer >= 1", res);
    const cJSON *wall = get(job, "walltime");
    if (wall)
        NEED(cJSON_IsNumber(wall) && (wall->valuedouble == -1 || wall->valuedouble > 0),
             "event.job.walltime", "a number of seconds > 0, or -1", wall);
    const cJSON *sub = get(ev, "submission_time");
    if (sub)
        NEED(cJSON_IsNumber(sub) && isfinite(sub->valuedouble), "event.submission_time",
             "a number", sub);
    fbf_event *e = push(c, FBF_EV_JOB_SUBMITTED);
    if (!e)
        return oom(c);
    e->u.submitted.id = id->valuestring;
    e->u.submitted.described = true;
    e->u.submitted.desc = (fbf_job_desc){.res = (int64_t)res->valuedouble,
                                         .walltime = wall ? wall->valuedouble : -1.0,
                                         .subtime = sub ? sub->valuedouble : NAN,
                                         .delay = NAN};
    return 0;
}

static int read_completed(const ctx *c, const cJSON *ev)
{
    static const char *const states[] = {"COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED",
                                         "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED",
                                         "REJECTED"};
    const cJSON *id = get(ev, "job_id"), *st = get(ev, "state");
    NEED(cJSON_IsString(id), "event.job_id", "a string", id);
    if (st) {
        bool known = false;
        for (size_t i = 0; i < sizeof states / sizeof *states; i++)
            known = known || (cJSON_IsString(st) && strcmp(st->valuestring, states[i]) == 0);
        NEED(known, "event.state", "a final job state (COMPLETED_SUCCESSFULLY...)", st);
    }
    fbf_event *e = push(c, FBF_EV_JOB_ENDED);
    if (!e)
        return oom(c);
    e->u.ended.id = id->valuestring;
    return 0;
}

static int read_killed(const ctx *c, const cJSON *ev)
{
    const cJSON *ids = get(ev, "job_ids"), *id;
    NEED(cJSON_IsArray(ids), "event.job_ids", "an array", ids);
    cJSON_ArrayForEach(id, ids) NEED(cJSON_IsString(id), "event.job_ids[]", "a string", id);
    cJSON_ArrayForEach(id, ids)
    {
        fbf_event *e = push(c, FBF_EV_JOB_KILLED);
        if (!e)
            return oom(c);
        e->u.killed.id = id->valuestring;
    }
    return 0;
}

/* ---------- hosts, notices ---------- */

static int read_pstate_changed(const ctx *c, const cJSON *ev)
{
    const fbf_idset *hosts;
    int rc = read_hosts(c, get(ev, "host_ids"), "event.host_ids", &hosts);
    if (rc < 0)
        return rc;
    const cJSON *p = get(ev, "pstate");
    NEED(is_count(p, 4294967295.0), "event.pstate", "a pstate number", p);
    fbf_event *e = push(c, FBF_EV_STATE_CHANGED);
    if (!e)
        return oom(c);
    e->u.state.machines = hosts;
    e->u.state.pstate = (uint32_t)p->valuedouble;
    return 0;
}

static int read_turned_onoff(const ctx *c, const cJSON *ev)
{
    const fbf_idset *hosts;
    int rc = read_hosts(c, get(ev, "host_ids"), "event.host_ids", &hosts);
    if (rc < 0)
        return rc;
    const cJSON *st = get(ev, "state");
    NEED(fbf_job_json_is_int(st) && (st->valuedouble == 0 || st->valuedouble == 1),
         "event.state", "0 (on) or 1 (off)", st);
    fbf_event *e = push(c, FBF_EV_STATE_CHANGED);
    if (!e)
        return oom(c);
    e->u.state.machines = hosts;
    e->u.state.pstate = st->valuedouble == 0 ? c->d->compute_pstate : c->d->sleep_pstate;
    return 0;
}

static int read_simple(const ctx *c, fbf_event_kind kind, fbf_notice notice)
{
    fbf_event *e = push(c, kind);
    if (!e)
        return oom(c);
    e->u.notice = notice;
    return 0;
}

static int read_event(ctx *c, const cJSON *ev)
{
    fbf_bv5_decoder *d = c->d;
    if (!cJSON_IsObject(ev))
        return fbf_errorf(c->err, -EPROTO, "event %d: expected an object, got %s", c->index,
                          fbf_job_json_kind(ev));
    const cJSON *type = get(ev, "event_type");
    if (!cJSON_IsString(type))
        return fbf_errorf(c->err, -EPROTO, "event %d: event_type: expected a string, got %s",
                          c->index, fbf_job_json_kind(type));
    c->type = type->valuestring;
    const cJSON *ts = get(ev, "timestamp");
    NEED(cJSON_IsNumber(ts) && isfinite(ts->valuedouble), "timestamp", "a finite number", ts);
    if (ts->valuedouble > d->now || ts->valuedouble < d->prev)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): timestamp: %.6f is %s %.6f",
                          c->index, c->type, ts->valuedouble,
                          ts->valuedouble > d->now ? "after now" : "before the previous event's",
                          ts->valuedouble > d->now ? d->now : d->prev);
    d->prev = c->ts = ts->valuedouble;
    const cJSON *data = get(ev, "event");
    NEED(cJSON_IsObject(data), "event", "an object", data);
    if (d->ended)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): comes after SimulationEndsEvent",
                          c->index, c->type);
    bool begins = strcmp(c->type, "SimulationBeginsEvent") == 0;
    if (begins == d->begun)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s", c->index, c->type,
                          d->begun ? "the simulation already began"
                                   : "received before SimulationBeginsEvent");
    if (begins) {
        d->begun = true;
        return read_begins(c, data);
    }
    const char *t = c->type;
    if (strcmp(t, "JobSubmittedEvent") == 0)
        return read_submitted(c, data);
    if (strcmp(t, "JobCompletedEvent") == 0)
        return read_completed(c, data);
    if (strcmp(t, "RequestedCallEvent") == 0)
        return read_simple(c, FBF_EV_CALL_DUE, 0);
    if (strcmp(t, "JobsKilledEvent") == 0)
        return read_killed(c, data);
    if (strcmp(t, "AllStaticJobsHaveBeenSubmittedEvent") == 0)
        return read_simple(c, FBF_EV_NOTIFY, FBF_NOTICE_NO_MORE_STATIC_JOBS);
    if (strcmp(t, "AllStaticExternalEventsHaveBeenInjectedEvent") == 0)
        return read_simple(c, FBF_EV_NOTIFY, FBF_NOTICE_NO_MORE_EXTERNAL_EVENTS);
    if (strcmp(t, "ExternalEventOccurredEvent") == 0)
        return 0; /* nothing a policy of fastbf's uses */
    if (strcmp(t, "HostsPStateChangedEvent") == 0)
        return read_pstate_changed(c, data);
    if (strcmp(t, "HostsTurnedOnOffEvent") == 0)
        return read_turned_onoff(c, data);
    if (strcmp(t, "SimulationEndsEvent") == 0) {
        d->ended = true;
        return read_simple(c, FBF_EV_SIMULATION_ENDS, 0);
    }
    static const char *const edc_only[] = {
        "EDCHelloEvent", "ExecuteJobEvent", "RejectJobEvent", "KillJobsEvent",
        "CallMeLaterEvent", "StopCallMeLaterEvent", "RegisterProfileEvent", "RegisterJobEvent",
        "FinishRegistrationEvent", "ForceSimulationStopEvent", "ChangeHostsPStateEvent",
        "TurnOnOffHostsEvent"};
    for (size_t i = 0; i < sizeof edc_only / sizeof *edc_only; i++)
        if (strcmp(t, edc_only[i]) == 0)
            return fbf_errorf(c->err, -EPROTO, "event %d (%s): event_type: this event goes "
                              "from the decision component to Batsim, not the other way",
                              c->index, t);
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): event_type: unknown event type",
                      c->index, t);
}

void fbf_bv5_decoder_init(fbf_bv5_decoder *d)
{
    *d = (fbf_bv5_decoder){.compute_pstate = 0, .sleep_pstate = 1};
    fbf_idset_init(&d->compute);
}

void fbf_bv5_decoder_pstates(fbf_bv5_decoder *d, uint32_t compute, uint32_t sleep)
{
    d->compute_pstate = compute;
    d->sleep_pstate = sleep;
}

void fbf_bv5_decoder_fini(fbf_bv5_decoder *d)
{
    fbf_event_list_fini(&d->events);
    for (size_t i = 0; i < d->sets_cap; i++) {
        if (d->set_ptrs[i])
            fbf_idset_fini(d->set_ptrs[i]);
        free(d->set_ptrs[i]);
    }
    free(d->set_ptrs);
    fbf_idset_fini(&d->compute);
    free(d->state_machines);
    free(d->states);
}

const char *fbf_bv5_decoded_type(const fbf_bv5_decoder *d, long origin)
{
    return fbf_event_list_type(&d->events, origin, "message");
}

int fbf_bv5_decode(fbf_bv5_decoder *d, fbf_json_arena *arena, const char *text, size_t len,
                   bool begun, fbf_error *err)
{
    fbf_event_list_clear(&d->events);
    for (size_t i = 0; i < d->nsets; i++)
        fbf_idset_fini(d->set_ptrs[i]);
    d->nsets = 0;
    /* Batsim ends its JSON with a NUL byte it counts in the size. */
    if (len && text[len - 1] == '\0')
        len--;
    const char *end = NULL;
    cJSON *r = fbf_json_arena_parse(arena, text, len, &end);
    if (!r && errno == ENOMEM)
        return fbf_errorf(err, -ENOMEM, "out of memory parsing a message of %zu bytes", len);
    if (!r) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        return fbf_errorf(err, -EPROTO, "malformed JSON message near byte %ld", off);
    }
    while (end && end < text + len && strchr(" \t\r\n", *end))
        end++;
    if (end && end < text + len)
        return fbf_errorf(err, -EPROTO, "malformed JSON message: unexpected bytes after the "
                          "message at byte %ld", (long)(end - text));
    int src = fbf_json_strict(text, len, r, err);
    if (src < 0)
        return src;
    const cJSON *now = get(r, "now"), *events = get(r, "events");
    if (!cJSON_IsObject(r))
        return fbf_errorf(err, -EPROTO, "message: expected a JSON object, got %s",
                          fbf_job_json_kind(r));
    if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble))
        return fbf_errorf(err, -EPROTO, "message: now: expected a finite number, got %s",
                          fbf_job_json_kind(now));
    if (!cJSON_IsArray(events))
        return fbf_errorf(err, -EPROTO, "message: events: expected an array, got %s",
                          fbf_job_json_kind(events));
    d->now = now->valuedouble;
    d->prev = -INFINITY;
    d->begun = begun;
    int index = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        ctx c = {.d = d, .index = index++, .type = "message", .err = err};
        int rc = read_event(&c, ev);
        if (rc < 0)
            return rc;
    }
    if (!d->begun)
        return fbf_errorf(err, -EPROTO, "message: the first message must hold "
                          "SimulationBeginsEvent");
    return 0;
}
