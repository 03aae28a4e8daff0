/*
 * v5_reply: checks every reply of a Batsim 5 EDC at least as strictly as
 * Batsim 5.0.0-rc2 does, with its texts where it has one (src/protocol.cpp,
 * server.cpp, jobs.cpp, jobs_execution.cpp), and applies the decisions one
 * event at a time, in order, to the state the v4 replay uses.
 *
 * The message: one trailing NUL allowed, none inside; valid JSON; an
 * object with a number now, not before the request's now; an events
 * array, empty in the reply to SimulationEndsEvent. Each event: an object
 * with a number timestamp (not after now, not before the previous one:
 * Batsim's texts), a string event_type naming a batprotocol event the EDC
 * may send, an object event. Then, per type:
 *   ExecuteJobEvent  job_id a well-formed id ("Invalid string job
 *       identifier ...") of a job that exists ("Cannot get job '...': it
 *       does not exist", also once its end was sent) and is SUBMITTED
 *       ("Cannot execute job '...': its state (...) is not
 *       JOB_STATE_SUBMITTED."); allocation.host_allocation a non-empty
 *       interval set ("0-3 7") of existing hosts ("Cannot get machine N: it
 *       does not exist"), exactly resource_request of them, none busy (the
 *       replayer runs rigid jobs alone on their hosts), ON under --energy;
 *       allocation.executor_placement_type PredefinedExecutorPlacement-
 *       StrategyWrapper (strategy SpreadOverHostsFirst or
 *       FillOneHostCoresFirst) or CustomExecutorToHostMapping (mapping of
 *       indexes below the host count), a missing type being Batsim's
 *       "executor placement type ... is NONE"
 *   RejectJobEvent  a SUBMITTED job ("Invalid job rejection received: ...")
 *   KillJobsEvent   job_ids of jobs running or complete ("Invalid KILL_JOB:
 *       ..."), not rejected ("Invalid kill: ... has not been started yet");
 *       ids already being killed are dropped from the acknowledgement, as
 *       Batsim does; the JobsKilledEvent comes even when none is left
 *   CallMeLaterEvent, StopCallMeLaterEvent, TurnOnOffHostsEvent,
 *       ChangeHostsPStateEvent  v5_calls.c
 *   ForceSimulationStopEvent  the rest of the reply is dropped and
 *       SimulationEndsEvent comes next
 *   RegisterProfileEvent, RegisterJobEvent, FinishRegistrationEvent
 *       v5_register.c
 *   EDCHelloEvent  "External decision component said hello twice!"
 *   refused: events Batsim sends ("Unhandled event type received (...)"),
 *       probes (not supported yet),
 *       unknown types
 */
#include "tools/replay/v5.h"
#include "tools/replay/machines.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_arena.h" /* fbf_json_get */

#define fail fbf_replay_fail

cJSON *fbf_v5_parse(const char *text, size_t len, char *why, size_t cap)
{
    /* Batsim reads a NUL-terminated text: one at the end is the
     * terminator, one before it would cut the message short. */
    if (len && text[len - 1] == '\0')
        len--;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        snprintf(why, cap, "byte %zu of %zu is a NUL inside the message (Batsim would read "
                 "the message up to it)", (size_t)(nul - text), len);
        return NULL;
    }
    /* cJSON's own allocation, not an arena: a library EDC in this process
     * may hold libcjson's allocation hooks (fastbf's does, for its own
     * arena), and an arena of the replayer would take them from it. */
    cJSON *root = cJSON_ParseWithLength(text, len);
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
        size_t show = len - off < 40 ? len - off : 40;
        snprintf(why, cap, "malformed JSON at byte %zu of %zu: '%.*s'", off, len, (int)show,
                 text + off);
    }
    return root;
}

int64_t fbf_v5_job(fbf_replay *r, const cJSON *v, long ev, const char *type, const char *path)
{
    if (!cJSON_IsString(v))
        return fail(r, ev, type, NULL, "%s is missing or not a string", path), -1;
    const char *id = v->valuestring, *bang = strchr(id, '!');
    if (!bang || strchr(bang + 1, '!'))
        return fail(r, ev, type, NULL, "Invalid string job identifier '%.100s': should be "
                    "formatted as two '!'-separated parts, the second one being any string "
                    "without '!'. Example: 'some_text!42'.", id), -1;
    int64_t j = fbf_workload_find(r->wl, id);
    const fbf_rjob *rj = j >= 0 ? &r->jobs[j] : NULL;
    if (!rj || ((rj->state == FBF_RJ_DONE || rj->state == FBF_RJ_REJECTED) &&
                !(rj->flags & FBF_RJF_UNSENT)))
        return fail(r, ev, type, id, "Cannot get job '%.100s': it does not exist", id), -1;
    return j;
}

/* The hosts of allocation into r->scratch, and the placement's checks. */
static int allocation(fbf_replay *r, const cJSON *a, long ev, const char *T)
{
    const char *hosts, *ptype;
    if (!cJSON_IsObject(a))
        return fail(r, ev, T, NULL, "event.allocation is missing or not an object");
    if (fbf_v5_string(r, ev, T, a, "event.allocation", "host_allocation", &hosts))
        return -EPROTO;
    fbf_error perr;
    if (fbf_idset_parse(&r->scratch, hosts, &perr) < 0)
        return fail(r, ev, T, NULL, "event.allocation.host_allocation '%.40s' is not an interval "
                    "set (\"0-3 7\"): %s", hosts, perr.text);
    if (r->scratch.n == 0)
        return fail(r, ev, T, NULL, "event.allocation.host_allocation is empty");
    const cJSON *pt = fbf_json_get(a, "executor_placement_type");
    if (!pt || (cJSON_IsString(pt) && strcmp(pt->valuestring, "NONE") == 0))
        return fail(r, ev, T, NULL, "invalid ExecuteJob received: executor placement type of "
                    "job's main allocation is NONE");
    if (!cJSON_IsString(pt))
        return fail(r, ev, T, NULL, "event.allocation.executor_placement_type is not a string");
    ptype = pt->valuestring;
    bool predefined = strcmp(ptype, "PredefinedExecutorPlacementStrategyWrapper") == 0;
    if (!predefined && strcmp(ptype, "CustomExecutorToHostMapping") != 0)
        return fail(r, ev, T, NULL, "event.allocation.executor_placement_type '%.60s' is not an "
                    "ExecutorPlacement (PredefinedExecutorPlacementStrategyWrapper or "
                    "CustomExecutorToHostMapping)", ptype);
    const cJSON *p = fbf_json_get(a, "executor_placement");
    if (!cJSON_IsObject(p))
        return fail(r, ev, T, NULL, "event.allocation.executor_placement is missing or not an "
                    "object (a %s)", ptype);
    if (predefined) {
        const cJSON *s = fbf_json_get(p, "strategy");
        if (s && !(cJSON_IsString(s) && (strcmp(s->valuestring, "SpreadOverHostsFirst") == 0 ||
                                         strcmp(s->valuestring, "FillOneHostCoresFirst") == 0)))
            return fail(r, ev, T, NULL, "event.allocation.executor_placement.strategy: expected "
                        "SpreadOverHostsFirst or FillOneHostCoresFirst");
        return 0;
    }
    const cJSON *m = fbf_json_get(p, "mapping");
    if (!cJSON_IsArray(m))
        return fail(r, ev, T, NULL, "event.allocation.executor_placement.mapping is missing or "
                    "not an array");
    uint64_t nh = fbf_idset_count(&r->scratch);
    long k = 0;
    for (const cJSON *x = m->child; x; x = x->next, k++)
        if (!cJSON_IsNumber(x) || x->valuedouble < 0 || x->valuedouble != floor(x->valuedouble) ||
            x->valuedouble >= (double)nh)
            return fail(r, ev, T, NULL, "event.allocation.executor_placement.mapping[%ld]: "
                        "expected an index of host_allocation, in [0, %llu)", k,
                        (unsigned long long)nh);
    return 0;
}

static int execute(fbf_replay *r, const cJSON *e, long ev, double at)
{
    static const char T[] = "ExecuteJobEvent";
    const cJSON *jid = fbf_json_get(e, "job_id");
    if (!cJSON_IsString(jid))
        return fail(r, ev, T, NULL, "event.job_id is missing or not a string");
    if (allocation(r, fbf_json_get(e, "allocation"), ev, T) < 0)
        return -EPROTO;
    static const char *const optional[] = {"profile_allocation_override", "storage_placement"};
    for (int k = 0; k < 2; k++) {
        const cJSON *o = fbf_json_get(e, optional[k]);
        if (o && !cJSON_IsArray(o))
            return fail(r, ev, T, NULL, "event.%s is not an array", optional[k]);
    }
    int64_t ji = fbf_v5_job(r, jid, ev, T, "event.job_id");
    if (ji < 0)
        return -EPROTO;
    const fbf_wl_job *wj = &r->wl->jobs[ji];
    if (r->jobs[ji].state != FBF_RJ_WAITING)
        return fail(r, ev, T, wj->id, "Cannot execute job '%s': its state (%s) is not "
                    "JOB_STATE_SUBMITTED.", wj->id, fbf_replay_state_name(r, (uint32_t)ji, at));
    const fbf_idset *s = &r->scratch;
    for (uint32_t k = 0; k < s->n; k++)
        if (s->r[k].hi >= r->cfg.nb_res)
            return fail(r, ev, T, wj->id, "Cannot get machine %u: it does not exist (the "
                        "platform has %u hosts: 0-%u)", s->r[k].lo > r->cfg.nb_res ? s->r[k].lo
                        : r->cfg.nb_res, r->cfg.nb_res, r->cfg.nb_res - 1);
    uint64_t count = fbf_idset_count(s);
    if (count != (uint64_t)wj->res)
        return fail(r, ev, T, wj->id, "the allocation has %llu hosts, the job's resource_request "
                    "is %lld (fastbf-replay runs a job on exactly the hosts it requests)",
                    (unsigned long long)count, (long long)wj->res);
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            if (r->owner[id] != FBF_NO_JOB)
                return fail(r, ev, T, wj->id, "host %u is busy (job %s runs there): "
                            "fastbf-replay does not share hosts between jobs", id,
                            r->wl->jobs[r->owner[id]].id);
            if (r->mach && fbf_machines_state_of(r, id) != FBF_RM_ON)
                return fail(r, ev, T, wj->id, "Job '%s': Invalid job allocation: machine %u "
                            "(hostname='r%u') cannot compute jobs now (the machine is not "
                            "computing nor idle, its state is '%s')", wj->id, id, id,
                            fbf_machines_state_name(fbf_machines_state_of(r, id)));
        }
    char why[200];
    int rc = fbf_replay_start_job(r, (uint32_t)ji, s, at, why, sizeof why);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return rc < 0 ? fail(r, ev, T, wj->id, "%s", why) : 0;
}

static int reject(fbf_replay *r, const cJSON *e, long ev)
{
    static const char T[] = "RejectJobEvent";
    int64_t ji = fbf_v5_job(r, fbf_json_get(e, "job_id"), ev, T, "event.job_id");
    if (ji < 0)
        return -EPROTO;
    if (r->jobs[ji].state != FBF_RJ_WAITING)
        return fail(r, ev, T, r->wl->jobs[ji].id, "Invalid job rejection received: job '%s' has "
                    "state='%s' which is not SUBMITTED.", r->wl->jobs[ji].id,
                    fbf_replay_state_name(r, (uint32_t)ji, r->req_now));
    fbf_replay_reject_job(r, (uint32_t)ji);
    return 0;
}

/* A running job whose end is due by at has completed in Batsim, though
 * its JobCompletedEvent is still to be sent. */
static bool completed_by(const fbf_rjob *j, double at)
{
    return j->state == FBF_RJ_RUNNING && j->end <= at;
}

static int kill_jobs(fbf_replay *r, const cJSON *e, long ev, double at)
{
    static const char T[] = "KillJobsEvent";
    const cJSON *ids = fbf_json_get(e, "job_ids");
    if (!cJSON_IsArray(ids))
        return fail(r, ev, T, NULL, "event.job_ids is missing or not an array");
    size_t n = (size_t)cJSON_GetArraySize(ids);
    for (const cJSON *v = ids->child; v; v = v->next) /* Batsim reads every id first */
        if (fbf_v5_job(r, v, ev, T, "event.job_ids[]") < 0)
            return -EPROTO;
    if (!fbf_replay_grow((void **)&r->kill_items, &r->kill_items_cap, r->nkill_items + n,
                         sizeof *r->kill_items) ||
        !fbf_replay_grow((void **)&r->kills, &r->kills_cap, r->nkills + 1, sizeof *r->kills))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_kill *k = &r->kills[r->nkills];
    k->first = r->nkill_items;
    k->n = 0;
    for (const cJSON *v = ids->child; v; v = v->next) {
        int64_t ji = fbf_workload_find(r->wl, v->valuestring);
        fbf_rjob *j = &r->jobs[ji];
        const char *id = r->wl->jobs[ji].id;
        if (j->flags & FBF_RJF_KILL_REQ)
            continue; /* Batsim drops it from this kill's acknowledgement */
        if (j->state == FBF_RJ_PENDING || j->state == FBF_RJ_WAITING)
            return fail(r, ev, T, id, "Invalid KILL_JOB: job_id '%s' is neither being executed "
                        "nor completed, it has state='%s'", id,
                        fbf_replay_state_name(r, (uint32_t)ji, at));
        if (j->state == FBF_RJ_REJECTED)
            return fail(r, ev, T, id, "Invalid kill: job %s has not been started yet "
                        "(state='REJECTED')", id);
        j->flags |= FBF_RJF_KILL_REQ;
        double progress = NAN; /* completed before the kill: no progress */
        if (!completed_by(j, at) && j->state == FBF_RJ_RUNNING) {
            double run = r->wl->jobs[ji].runtime;
            progress = run > 0 ? (at - j->start) / run : 0;
            if (progress < 0)
                progress = 0;
            for (uint32_t g = 0; g < j->nranges; g++)
                for (uint32_t h = r->ranges[j->ranges + g].lo; h <= r->ranges[j->ranges + g].hi;
                     h++)
                    r->owner[h] = FBF_NO_JOB;
            j->state = FBF_RJ_DONE;
            j->flags |= FBF_RJF_UNSENT;
            j->end = at;
            j->end_kind = FBF_END_KILLED;
            r->running--;
            r->done++;
            r->killed++;
        }
        r->kill_items[r->nkill_items++] = (fbf_kill_item){(uint32_t)ji, progress};
        k->n++;
    }
    fbf_replay_heap_push(r, at, FBF_EV_KILLED, (uint32_t)r->nkills, r->nkills);
    r->nkills++;
    return 0;
}

static const char *const to_edc[] = {
    "SimulationBeginsEvent", "SimulationEndsEvent", "JobSubmittedEvent", "JobCompletedEvent",
    "JobsKilledEvent", "RequestedCallEvent", "AllStaticJobsHaveBeenSubmittedEvent",
    "AllStaticExternalEventsHaveBeenInjectedEvent", "ExternalEventOccurredEvent",
    "HostsPStateChangedEvent", "HostsTurnedOnOffEvent", "ProbeDataEmittedEvent",
    "BatsimHelloEvent", NULL,
};

static bool listed(const char *const *l, const char *t)
{
    for (; *l; l++)
        if (strcmp(*l, t) == 0)
            return true;
    return false;
}

/* One event; *stop when it was ForceSimulationStopEvent. */
static int apply_event(fbf_replay *r, const cJSON *e, long i, double now, double *prev,
                       bool *stop)
{
    if (!cJSON_IsObject(e))
        return fail(r, i, NULL, NULL, "the event is not an object");
    const cJSON *type = fbf_json_get(e, "event_type");
    if (!cJSON_IsString(type))
        return fail(r, i, NULL, NULL, "field event_type is missing or not a string");
    const char *t = type->valuestring;
    const cJSON *ts = fbf_json_get(e, "timestamp");
    if (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble))
        return fail(r, i, t, NULL, "field timestamp is missing or not a number");
    double at = ts->valuedouble;
    if (at > now)
        return fail(r, i, t, NULL, "invalid event %ld (type='%s') in message: event timestamp "
                    "(%g) is after message's now (%g)", i, t, at, now);
    if (at < *prev)
        return fail(r, i, t, NULL, "invalid event %ld (type='%s') in message: event timestamp "
                    "(%g) is before preceding event's timestamp (%g) while events should be in "
                    "chronological order", i, t, at, *prev);
    *prev = at;
    const cJSON *ev = fbf_json_get(e, "event");
    if (!cJSON_IsObject(ev))
        return fail(r, i, t, NULL, "field event is missing or not an object (the %s)", t);
    /* A decision takes effect when it is made, not before the request. */
    if (at < r->req_now)
        at = r->req_now;
    if (strcmp(t, "ExecuteJobEvent") == 0)
        return execute(r, ev, i, at);
    if (strcmp(t, "RejectJobEvent") == 0)
        return reject(r, ev, i);
    if (strcmp(t, "KillJobsEvent") == 0)
        return kill_jobs(r, ev, i, at);
    if (strcmp(t, "CallMeLaterEvent") == 0)
        return fbf_v5_call_me_later(r, ev, i, at);
    if (strcmp(t, "StopCallMeLaterEvent") == 0)
        return fbf_v5_stop_call(r, ev, i);
    if (strcmp(t, "TurnOnOffHostsEvent") == 0 || strcmp(t, "ChangeHostsPStateEvent") == 0)
        return fbf_v5_turn_onoff(r, ev, i, at, t[0] == 'C');
    if (strcmp(t, "ForceSimulationStopEvent") == 0) {
        r->v5->stop_asked = *stop = true;
        return 0;
    }
    if (strcmp(t, "RegisterJobEvent") == 0)
        return fbf_v5_register_job(r, ev, i, at);
    if (strcmp(t, "RegisterProfileEvent") == 0)
        return fbf_v5_register_profile(r, ev, i);
    if (strcmp(t, "FinishRegistrationEvent") == 0)
        return fbf_v5_finish_registration(r);
    if (strcmp(t, "EDCHelloEvent") == 0)
        return fail(r, i, t, NULL, "External decision component said hello twice!");
    if (listed(to_edc, t))
        return fail(r, i, t, NULL, "Unhandled event type received (%s)", t);
    static const char *const unsupported[] = {
        "CreateProbeEvent", "StopProbeEvent",
        "TriggerProbeEvent", "ResetProbeEvent", NULL};
    if (listed(unsupported, t))
        return fail(r, i, t, NULL, "%s is not supported by fastbf-replay --protocol batsim5 yet",
                    t);
    return fail(r, i, t, NULL, "unknown event type '%.40s' (not a batprotocol event)", t);
}

int fbf_v5_apply_reply(fbf_replay *r, const char *text, size_t len)
{
    char why[300];
    cJSON *root = fbf_v5_parse(text, len, why, sizeof why);
    if (!root)
        return fail(r, -1, NULL, NULL, "%s", why);
    int rc = 0;
    const cJSON *now = fbf_json_get(root, "now"), *events = fbf_json_get(root, "events");
    char a[40], b[40];
    if (!cJSON_IsObject(root)) {
        rc = fail(r, -1, NULL, NULL, "the reply is not a JSON object");
    } else if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble)) {
        rc = fail(r, -1, NULL, NULL, "field now is missing or not a number");
    } else if (now->valuedouble < r->req_shown) {
        fbf_jbuf_fmt(a, sizeof a, now->valuedouble);
        fbf_jbuf_fmt(b, sizeof b, r->req_shown);
        rc = fail(r, -1, NULL, NULL, "now %s is before the request's now %s (the EDC cannot "
                  "decide in the past)", a, b);
    } else if (!cJSON_IsArray(events)) {
        rc = fail(r, -1, NULL, NULL, "field events is missing or not an array");
    } else if (r->ending && events->child) {
        rc = fail(r, -1, NULL, NULL, "the reply to SimulationEndsEvent must have no events (it "
                  "has %d)", cJSON_GetArraySize(events));
    } else {
        double prev = -INFINITY;
        bool stop = false;
        long i = 0;
        for (const cJSON *e = events->child; e && !rc && !stop; e = e->next, i++)
            rc = apply_event(r, e, i, now->valuedouble, &prev, &stop);
        if (!rc)
            r->clock = now->valuedouble > r->req_now ? now->valuedouble : r->req_now;
    }
    cJSON_Delete(root);
    return rc;
}
