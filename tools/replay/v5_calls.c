/*
 * v5_calls: Batsim 5's requested calls and host switches, for the batsim5
 * mode (v5.h), as Batsim 5.0.0-rc2 runs them (src/server.cpp,
 * jobs_execution.cpp, periodic.cpp):
 *
 *   CallMeLaterEvent {call_me_later_id, when_type, when}
 *     OneShot {time, time_unit Second (default) | Millisecond}: one
 *       RequestedCallEvent at that time, but never sooner than 1e-5 s after
 *       the decision (Batsim's waiter), or at once when the time has
 *       passed (Batsim skips the wait)
 *     Periodic {period (a whole number of time_unit), offset 0, time_unit,
 *       mode_type Infinite | FinitePeriodNumber, mode {nb_periods >= 1}}:
 *       a RequestedCallEvent at every multiple of the period after the
 *       decision, the last of a finite one with last_periodic_call true;
 *       an id may serve one live periodic call at a time, and periods of
 *       live calls must divide one another (Batsim's static schedule)
 *   StopCallMeLaterEvent {call_me_later_id}: ends a live periodic call;
 *     any other id is ignored (Batsim only warns)
 *   RequestedCallEvent {call_me_later_id, last_periodic_call}
 *   TurnOnOffHostsEvent {host_ids, state} (--energy): the hosts go to pstate
 *     state, a sleep one for idle computing hosts, the computation one for
 *     sleeping hosts, through machines.c's switch delays; then one
 *     HostsTurnedOnOffEvent {host_ids, state}
 *   ChangeHostsPStateEvent {host_ids, pstate} (--energy): the same change
 *     at once, as Batsim sets a pstate without delay, acknowledged by one
 *     HostsPStateChangedEvent {host_ids, pstate} at the decision's time
 *     (the replayer models two pstates: --compute-pstate, --sleep-pstate)
 * The texts of Batsim's refusals are kept where it has one.
 */
#include "tools/replay/v5.h"
#include "tools/replay/machines.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_arena.h"

#define fail fbf_replay_fail

/* A time_unit member: seconds per unit, or 0 after fail(). */
static double unit(fbf_replay *r, const cJSON *when, long ev, const char *T)
{
    const cJSON *u = fbf_json_get(when, "time_unit");
    if (!u || (cJSON_IsString(u) && strcmp(u->valuestring, "Second") == 0))
        return 1;
    if (cJSON_IsString(u) && strcmp(u->valuestring, "Millisecond") == 0)
        return 1e-3;
    fail(r, ev, T, NULL, "event.when.time_unit: expected Second or Millisecond");
    return 0;
}

static int64_t new_call(fbf_replay *r, const char *id)
{
    fbf_v5 *v = r->v5;
    if (!fbf_replay_grow((void **)&v->calls, &v->calls_cap, v->ncalls + 1, sizeof *v->calls))
        return -1;
    char *copy = strdup(id);
    if (!copy)
        return -1;
    v->calls[v->ncalls] = (fbf_v5_call){.id = copy, .live = true};
    return (int64_t)v->ncalls++;
}

/* The next trigger of periodic call c after time t: the next multiple of
 * its period, in Batsim's milliseconds. */
static double next_multiple(const fbf_v5_call *c, double t)
{
    double k = floor(t * 1e3 / (double)c->period_ms) + 1;
    return k * (double)c->period_ms / 1e3;
}

static int periodic(fbf_replay *r, const cJSON *when, long ev, const char *id, double at)
{
    static const char T[] = "CallMeLaterEvent";
    double u = unit(r, when, ev, T);
    if (u == 0)
        return -EPROTO;
    const cJSON *p = fbf_json_get(when, "period"), *off = fbf_json_get(when, "offset");
    if (!cJSON_IsNumber(p) || !(p->valuedouble >= 1) || p->valuedouble != floor(p->valuedouble) ||
        p->valuedouble > 1e15)
        return fail(r, ev, T, NULL, "event.when.period: expected a whole number > 0 of "
                    "time_unit");
    if (off && !(cJSON_IsNumber(off) && off->valuedouble == 0))
        return fail(r, ev, T, NULL, "CallMeLater (id='%s') has non-zero offset (%s), which is "
                    "not supported", id, cJSON_IsNumber(off) ? "not 0" : "not a number");
    const cJSON *mt = fbf_json_get(when, "mode_type"), *mode = fbf_json_get(when, "mode");
    if (!mt || (cJSON_IsString(mt) && strcmp(mt->valuestring, "NONE") == 0))
        return fail(r, ev, T, NULL, "invalid periodic received: periodic mode is NONE");
    bool infinite = cJSON_IsString(mt) && strcmp(mt->valuestring, "Infinite") == 0;
    if (!infinite && !(cJSON_IsString(mt) && strcmp(mt->valuestring, "FinitePeriodNumber") == 0))
        return fail(r, ev, T, NULL, "event.when.mode_type: expected Infinite or "
                    "FinitePeriodNumber (a PeriodicMode)");
    if (!cJSON_IsObject(mode))
        return fail(r, ev, T, NULL, "event.when.mode is missing or not an object");
    uint32_t n = 0;
    if (!infinite) {
        const cJSON *np = fbf_json_get(mode, "nb_periods");
        double d = cJSON_IsNumber(np) ? np->valuedouble : 0;
        if (!(d >= 1) || d != floor(d) || d > UINT32_MAX)
            return fail(r, ev, T, NULL, "invalid CallMeLater (call_id='%s'): finite but "
                        "nb_periods=%.0f should be greater than 0", id, d > 0 ? d : 0);
        n = (uint32_t)d;
    }
    uint64_t ms = (uint64_t)(p->valuedouble * (u == 1 ? 1000 : 1));
    fbf_v5 *v = r->v5;
    for (size_t k = 0; k < v->ncalls; k++) {
        const fbf_v5_call *c = &v->calls[k];
        if (!c->live || !c->period_ms)
            continue;
        if (strcmp(c->id, id) == 0)
            return fail(r, ev, T, NULL, "received a new CallMeLater with call_id='%s' while this "
                        "call_id is already in use", id);
        uint64_t lo = c->period_ms < ms ? c->period_ms : ms;
        uint64_t hi = c->period_ms < ms ? ms : c->period_ms;
        if (hi % lo)
            return fail(r, ev, T, NULL, "Period inconsistency found within periodic triggers. "
                        "All periods should be the same, or longer periods should be a multiple "
                        "of all shorter periods. Period %llu is incompatible with period %llu, "
                        "as the remainder of %llu/%llu is non-zero (ms; calls '%s' and '%s')",
                        (unsigned long long)hi, (unsigned long long)lo, (unsigned long long)hi,
                        (unsigned long long)lo, id, c->id);
    }
    int64_t idx = new_call(r, id);
    if (idx < 0)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_v5_call *c = &v->calls[idx];
    c->period_ms = ms;
    c->period = (double)ms / 1e3;
    c->infinite = infinite;
    c->left = n;
    fbf_replay_heap_push(r, next_multiple(c, at), FBF_EV_CALL, (uint32_t)idx << 1, r->seq++);
    return 0;
}

int fbf_v5_call_me_later(fbf_replay *r, const cJSON *e, long ev, double at)
{
    static const char T[] = "CallMeLaterEvent";
    const char *id;
    if (fbf_v5_string(r, ev, T, e, "event", "call_me_later_id", &id))
        return -EPROTO;
    const cJSON *wt = fbf_json_get(e, "when_type"), *when = fbf_json_get(e, "when");
    if (!wt || (cJSON_IsString(wt) && strcmp(wt->valuestring, "NONE") == 0))
        return fail(r, ev, T, NULL, "invalid CallMeLater received: temporal trigger is NONE");
    bool one = cJSON_IsString(wt) && strcmp(wt->valuestring, "OneShot") == 0;
    if (!one && !(cJSON_IsString(wt) && strcmp(wt->valuestring, "Periodic") == 0))
        return fail(r, ev, T, NULL, "event.when_type: expected OneShot or Periodic (a "
                    "TemporalTrigger)");
    if (!cJSON_IsObject(when))
        return fail(r, ev, T, NULL, "event.when is missing or not an object (a %s)",
                    wt->valuestring);
    if (!one)
        return periodic(r, when, ev, id, at);
    double u = unit(r, when, ev, T);
    if (u == 0)
        return -EPROTO;
    const cJSON *time = fbf_json_get(when, "time");
    if (!cJSON_IsNumber(time) || !isfinite(time->valuedouble) || time->valuedouble < 0)
        return fail(r, ev, T, NULL, "event.when.time is missing or not a number >= 0");
    int64_t idx = new_call(r, id);
    if (idx < 0)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    /* Batsim's waiter never sleeps less than 1e-5 s, and a time already
     * passed is called at once. Low bit: a call that came that soon
     * (sim.c's livelock guard). */
    double w = time->valuedouble * u;
    double due = w <= at ? at : w - at < FBF_REPLAY_MIN_SLEEP ? at + FBF_REPLAY_MIN_SLEEP : w;
    bool soon = w - at < FBF_REPLAY_MIN_SLEEP;
    fbf_replay_heap_push(r, due, FBF_EV_CALL, (uint32_t)idx << 1 | soon, r->seq++);
    return 0;
}

int fbf_v5_stop_call(fbf_replay *r, const cJSON *e, long ev)
{
    const char *id;
    if (fbf_v5_string(r, ev, "StopCallMeLaterEvent", e, "event", "call_me_later_id", &id))
        return -EPROTO;
    for (size_t k = 0; k < r->v5->ncalls; k++) {
        fbf_v5_call *c = &r->v5->calls[k];
        if (c->live && c->period_ms && strcmp(c->id, id) == 0)
            c->live = false; /* its pending trigger is dropped (fbf_v5_call_dead) */
    }
    return 0;
}

bool fbf_v5_call_dead(const fbf_replay *r, const fbf_rev *e)
{
    return !r->v5->calls[e->arg >> 1].live;
}

void fbf_v5_requested_call(fbf_replay *r, size_t *count, const fbf_rev *e)
{
    fbf_v5_call *c = &r->v5->calls[e->arg >> 1];
    bool last = false;
    if (!c->period_ms) {
        c->live = false;
    } else if (!c->infinite && --c->left == 0) {
        last = true;
        c->live = false;
    } else {
        /* An infinite call nobody stops once every job is over counts as
         * a call-only wake-up for the livelock guard. */
        bool idle = r->next_sub >= r->nb_static && r->done + r->rejected == r->wl->nb_jobs;
        fbf_replay_heap_push(r, next_multiple(c, e->t), FBF_EV_CALL,
                             (e->arg & ~1u) | (c->infinite && idle), r->seq++);
    }
    fbf_jbuf *b = &r->msg;
    fbf_replay_ev_open(r, count, e->t, "RequestedCallEvent");
    fbf_jbuf_lit(b, "{\"call_me_later_id\":");
    fbf_jbuf_str(b, c->id);
    if (last)
        fbf_jbuf_lit(b, ",\"last_periodic_call\":true}}");
    else
        fbf_jbuf_lit(b, ",\"last_periodic_call\":false}}");
}

int fbf_v5_turn_onoff(fbf_replay *r, const cJSON *e, long ev, double at, bool pstate_change)
{
    const char *T = pstate_change ? "ChangeHostsPStateEvent" : "TurnOnOffHostsEvent";
    const char *state = pstate_change ? "pstate" : "state";
    if (!r->mach)
        return fail(r, ev, T, NULL, "fastbf-replay simulates host power states only with "
                    "--energy");
    const char *hosts;
    if (fbf_v5_string(r, ev, T, e, "event", "host_ids", &hosts))
        return -EPROTO;
    const cJSON *st = fbf_json_get(e, state);
    if (!cJSON_IsNumber(st) || st->valuedouble < 0 || st->valuedouble != floor(st->valuedouble) ||
        st->valuedouble > UINT32_MAX)
        return fail(r, ev, T, NULL, "event.%s is missing or not a pstate number", state);
    uint32_t ps = (uint32_t)st->valuedouble;
    fbf_error perr;
    fbf_idset *s = &r->scratch;
    if (fbf_idset_parse(s, hosts, &perr) < 0)
        return fail(r, ev, T, NULL, "event.host_ids '%.40s' is not an interval set: %s", hosts,
                    perr.text);
    if (s->n == 0)
        return fail(r, ev, T, NULL, "event.host_ids is empty");
    if (s->r[s->n - 1].hi >= r->cfg.nb_res)
        return fail(r, ev, T, NULL, "Cannot get machine %u: it does not exist",
                    s->r[s->n - 1].lo > r->cfg.nb_res ? s->r[s->n - 1].lo : r->cfg.nb_res);
    const fbf_energy_config *cfg = fbf_machines_config(r);
    bool on = ps == cfg->compute_pstate;
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            int m = fbf_machines_state_of(r, id);
            uint32_t cur = m == FBF_RM_OFF ? cfg->sleep_pstate : cfg->compute_pstate;
            if (m == FBF_RM_SWITCHING_OFF || m == FBF_RM_SWITCHING_ON)
                return fail(r, ev, T, NULL, "Machine %u ('r%u') has an invalid pstate (it is "
                            "%s)", id, id, fbf_machines_state_name(m));
            if (!on && ps != cfg->sleep_pstate && pstate_change)
                return fail(r, ev, T, NULL, "host %u: pstate %u is neither the computation "
                            "pstate (%u) nor the sleep pstate (%u) that fastbf-replay models",
                            id, ps, cfg->compute_pstate, cfg->sleep_pstate);
            if (!on && ps != cfg->sleep_pstate)
                return fail(r, ev, T, NULL, "Invalid turning ON/OFF of host %u ('r%u'): "
                            "Switching from a computation pstate to an invalid pstate: %u -> %u "
                            "(fastbf-replay: computation pstate %u, sleep pstate %u)", id, id,
                            cur, ps, cfg->compute_pstate, cfg->sleep_pstate);
            /* Batsim sets a pstate whatever the host's: only a switch checks. */
            if (!pstate_change && m == FBF_RM_ON && on)
                return fail(r, ev, T, NULL, "Invalid turning ON/OFF of host %u ('r%u'): Asked "
                            "to turn ON a host already in a computing pstate (current: %u "
                            "target: %u)", id, id, cur, ps);
            if (!pstate_change && m == FBF_RM_OFF && !on)
                return fail(r, ev, T, NULL, "Invalid turning ON/OFF of host %u ('r%u'): Asked "
                            "to turn OFF a host already in a sleep pstate (current: %u target: "
                            "%u)", id, id, cur, ps);
            if (r->owner[id] != FBF_NO_JOB)
                return fail(r, ev, T, NULL, "host %u runs job %s: fastbf-replay turns off idle "
                            "hosts only", id, r->wl->jobs[r->owner[id]].id);
        }
    return fbf_machines_apply_at_once(r, s, ps, at, pstate_change) < 0
               ? fbf_errorf(&r->err, -ENOMEM, "out of memory")
               : 0;
}

void fbf_v5_switched(fbf_replay *r, size_t *count, double t, const fbf_range *rg, uint32_t n,
                     uint32_t pstate, bool pstate_change)
{
    fbf_jbuf *b = &r->msg;
    fbf_replay_ev_open(r, count, t,
                       pstate_change ? "HostsPStateChangedEvent" : "HostsTurnedOnOffEvent");
    fbf_jbuf_lit(b, "{\"host_ids\":\"");
    fbf_jbuf_ranges(b, rg, n);
    if (pstate_change)
        fbf_jbuf_lit(b, "\",\"pstate\":");
    else
        fbf_jbuf_lit(b, "\",\"state\":");
    fbf_jbuf_int(b, pstate);
    fbf_jbuf_lit(b, "}}");
}
