/*
 * message: the next message of fastbf-replay (see message.h).
 */
#include "tools/replay/message.h"
#include "tools/replay/machines.h"
#include "tools/replay/v5.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Drops completion entries of jobs that were killed meanwhile, and the
 * triggers of batsim5 calls stopped since. */
static void drop_stale(fbf_replay *r)
{
    while (r->heap_n) {
        const fbf_rev *e = &r->heap[0];
        if (e->kind == FBF_EV_COMPLETED) {
            const fbf_rjob *j = &r->jobs[e->arg];
            if (j->state == FBF_RJ_RUNNING && j->start_seq == e->seq)
                return;
        } else if (!(e->kind == FBF_EV_CALL && r->v5 && fbf_v5_call_dead(r, e))) {
            return;
        }
        fbf_replay_heap_pop(r);
    }
}

static const char *const end_names[] = {
    [FBF_END_NONE] = "RUNNING",
    [FBF_END_SUCCESS] = "COMPLETED_SUCCESSFULLY",
    [FBF_END_WALLTIME] = "COMPLETED_WALLTIME_REACHED",
    [FBF_END_KILLED] = "COMPLETED_KILLED",
    [FBF_END_FAILED] = "COMPLETED_FAILED",
};

void fbf_replay_ev_open(fbf_replay *r, size_t *count, double t, const char *type)
{
    fbf_jbuf *b = &r->msg;
    if ((*count)++)
        fbf_jbuf_lit(b, ",");
    else
        r->msg_kind = type;
    fbf_jbuf_lit(b, "{\"timestamp\":");
    if (r->v5) { /* batprotocol: exact times, a union's _type and value */
        fbf_v5_time(b, t);
        fbf_jbuf_lit(b, ",\"event_type\":\"");
        fbf_jbuf_raw(b, type, strlen(type));
        fbf_jbuf_lit(b, "\",\"event\":");
        return;
    }
    fbf_replay_put_f(b, t);
    fbf_jbuf_lit(b, ",\"type\":\"");
    fbf_jbuf_raw(b, type, strlen(type));
    fbf_jbuf_lit(b, "\",\"data\":");
}

void fbf_replay_alloc_text(const fbf_replay *r, uint32_t job, fbf_jbuf *b)
{
    const fbf_rjob *j = &r->jobs[job];
    fbf_jbuf_ranges(b, r->ranges + j->ranges, j->nranges);
}

static void release(fbf_replay *r, uint32_t job)
{
    const fbf_rjob *j = &r->jobs[job];
    for (uint32_t k = 0; k < j->nranges; k++) {
        const fbf_range *g = &r->ranges[j->ranges + k];
        for (uint32_t id = g->lo; id <= g->hi; id++)
            r->owner[id] = FBF_NO_JOB;
    }
}

static void emit_completed(fbf_replay *r, size_t *count, uint32_t job)
{
    fbf_rjob *j = &r->jobs[job];
    fbf_jbuf *b = &r->msg;
    if (r->cfg.protocol == FBF_PROTO_BV2) { /* C:WLOAD!JOB_ID */
        fbf_v2_event(r, count, j->end, 'C');
        fbf_jbuf_lit(b, ":");
        fbf_jbuf_raw(b, r->wl->jobs[job].id, strlen(r->wl->jobs[job].id));
    } else if (r->v5) {
        fbf_v5_completed(r, count, job);
    } else {
        fbf_replay_ev_open(r, count, j->end, "JOB_COMPLETED");
        fbf_jbuf_lit(b, "{\"job_id\":");
        fbf_jbuf_str(b, r->wl->jobs[job].id);
        fbf_jbuf_lit(b, ",\"job_state\":\"");
        fbf_jbuf_raw(b, end_names[j->end_kind], strlen(end_names[j->end_kind]));
        if (j->end_kind == FBF_END_SUCCESS)
            fbf_jbuf_lit(b, "\",\"return_code\":0,\"alloc\":\"");
        else
            fbf_jbuf_lit(b, "\",\"return_code\":-1,\"alloc\":\"");
        fbf_replay_alloc_text(r, job, b);
        fbf_jbuf_lit(b, "\"}}");
    }
    release(r, job);
    j->state = FBF_RJ_DONE;
    fbf_replay_note_row(r, job);
    r->running--;
    r->done++;
    if (j->end_kind == FBF_END_SUCCESS)
        r->success++;
    else
        r->walltime_reached++;
    if (r->cfg.dyn_jobs) /* deleted once this message is out */
        fbf_replay_drop_profile(r, job);
}

/* A static submission, or the acknowledgement of a registration (ack: the
 * job already waits since its REGISTER_JOB). */
static void emit_submitted(fbf_replay *r, size_t *count, uint32_t job, bool ack)
{
    const fbf_wl_job *wj = &r->wl->jobs[job];
    fbf_jbuf *b = &r->msg;
    if (r->cfg.protocol == FBF_PROTO_BV2) { /* S:WLOAD!JOB_ID, the job in Redis */
        fbf_v2_event(r, count, wj->subtime, 'S');
        fbf_jbuf_lit(b, ":");
        fbf_jbuf_raw(b, wj->id, strlen(wj->id));
        fbf_replay_store_queue(r, job);
        r->jobs[job].state = FBF_RJ_WAITING;
        r->submitted++;
        r->waiting++;
        return;
    }
    if (r->v5) {
        fbf_v5_submitted(r, count, job);
        if (!ack) {
            r->jobs[job].state = FBF_RJ_WAITING;
            r->submitted++;
            r->waiting++;
        }
        return;
    }
    fbf_replay_ev_open(r, count, wj->subtime, "JOB_SUBMITTED");
    fbf_jbuf_lit(b, "{\"job_id\":");
    fbf_jbuf_str(b, wj->id);
    if (r->cfg.redis) { /* Batsim's Redis form: the description is in the store */
        fbf_replay_store_queue(r, job);
    } else {
        fbf_jbuf_lit(b, ",\"job\":");
        fbf_replay_job_desc(r, job, b);
        if (r->cfg.forward_profiles) {
            /* The job's own run time is its delay profile's delay. */
            fbf_jbuf_lit(b, ",\"profile\":{\"type\":\"delay\",\"delay\":");
            fbf_jbuf_num(b, wj->runtime);
            fbf_jbuf_lit(b, "}");
        }
    }
    fbf_jbuf_lit(b, "}}");
    if (r->cfg.query_wait) {
        if (fbf_replay_grow((void **)&r->queries, &r->queries_cap, r->nqueries + 1,
                            sizeof *r->queries))
            r->queries[r->nqueries++] = job;
        else
            r->oom = true;
    }
    if (ack)
        return;
    r->jobs[job].state = FBF_RJ_WAITING;
    r->submitted++;
    r->waiting++;
}

void fbf_replay_msg_open(fbf_replay *r, double now)
{
    bool v2 = r->cfg.protocol == FBF_PROTO_BV2;
    fbf_jbuf_reset(&r->msg);
    if (v2) /* VERSION:TIME (FBF_V2_VERSION), the events follow */
        fbf_jbuf_lit(&r->msg, "3:");
    else
        fbf_jbuf_lit(&r->msg, "{\"now\":");
    size_t at = r->msg.len;
    if (r->v5)
        fbf_v5_time(&r->msg, now);
    else
        fbf_replay_put_f(&r->msg, now);
    size_t n = r->msg.len - at;
    if (!v2)
        fbf_jbuf_lit(&r->msg, ",\"events\":[");
    r->req_now = now;
    r->req_shown = now;
    if (now != floor(now) && !r->msg.oom) { /* the value the scheduler reads */
        char t[48];
        memcpy(t, r->msg.p + at, n < sizeof t ? n : sizeof t - 1);
        t[n < sizeof t ? n : sizeof t - 1] = '\0';
        r->req_shown = strtod(t, NULL);
    }
    r->nqueries = 0;
}

/* Builds the next message from every event due by its now. Returns the
 * number of events (0: nothing pending at all). *calls_only tells whether
 * they were all REQUESTED_CALLs (for the livelock guard). */
size_t fbf_replay_build_message(fbf_replay *r, bool *calls_only, bool *calls_min)
{
    const size_t n = r->nb_static;
    if (r->nunsent) /* the last message is out: Batsim deletes the rejected jobs */
        fbf_replay_delete_unsent(r);
    drop_stale(r);
    double th = r->heap_n ? r->heap[0].t : INFINITY;
    double ts = r->next_sub < n ? r->wl->jobs[r->order[r->next_sub]].subtime : INFINITY;
    double t = th < ts ? th : ts;
    if (t == INFINITY)
        return 0;
    double now = t > r->clock ? t : r->clock;
    fbf_replay_msg_open(r, now);
    size_t count = 0;
    *calls_only = *calls_min = true;
    for (;;) {
        drop_stale(r);
        bool hv = r->heap_n && r->heap[0].t <= now;
        uint32_t next = r->next_sub < n ? r->order[r->next_sub] : 0;
        bool sv = r->next_sub < n && r->wl->jobs[next].subtime <= now;
        if (!hv && !sv)
            break;
        double st = sv ? r->wl->jobs[next].subtime : INFINITY;
        if (sv && (!hv || st < r->heap[0].t ||
                   (st == r->heap[0].t && FBF_EV_SUBMITTED < r->heap[0].kind))) {
            emit_submitted(r, &count, next, false);
            *calls_only = false;
            if (++r->next_sub == n && r->cfg.protocol != FBF_PROTO_BV2)
                fbf_replay_heap_push(r, st, FBF_EV_NOTIFY, 0, 0);
            continue;
        }
        fbf_rev e = fbf_replay_heap_pop(r);
        if (e.kind != FBF_EV_CALL)
            *calls_only = false;
        switch (e.kind) {
        case FBF_EV_COMPLETED: emit_completed(r, &count, e.arg); break;
        case FBF_EV_KILLED:
            /* Batsim writes a killed job's row when its killer is done. */
            for (uint32_t k = 0; k < r->kills[e.arg].n; k++)
                if (r->jobs[r->kill_items[r->kills[e.arg].first + k].job].state == FBF_RJ_DONE)
                    fbf_replay_note_row(r, r->kill_items[r->kills[e.arg].first + k].job);
            if (r->v5)
                fbf_v5_killed(r, &count, e.t, e.arg);
            else
                fbf_replay_json_killed(r, &count, e.t, e.arg);
            break;
        case FBF_EV_ACK: emit_submitted(r, &count, e.arg, true); break;
        case FBF_EV_CALL:
            *calls_min = *calls_min && (e.arg & 1);
            if (r->v5) {
                fbf_v5_requested_call(r, &count, &e);
                break;
            }
            if (r->cfg.protocol == FBF_PROTO_BV2) { /* the wake-up of an n */
                fbf_v2_event(r, &count, e.t, 'N');
                break;
            }
            fbf_replay_ev_open(r, &count, e.t, "REQUESTED_CALL");
            fbf_jbuf_lit(&r->msg, "{}}");
            break;
        case FBF_EV_STATE:
        case FBF_EV_ANSWER: fbf_machines_emit(r, &count, &e); break;
        case FBF_EV_NOTIFY:
            if (r->v5) {
                fbf_v5_notify(r, &count, e.t, e.arg);
                break;
            }
            fbf_replay_ev_open(r, &count, e.t, "NOTIFY");
            if (e.arg)
                fbf_jbuf_lit(&r->msg, "{\"type\":\"no_more_external_event_to_occur\"}}");
            else
                fbf_jbuf_lit(&r->msg, "{\"type\":\"no_more_static_job_to_submit\"}}");
            break;
        }
    }
    if (r->cfg.protocol == FBF_PROTO_BV2) {
        /* As Batsim v2: Z in the message that ends the last job. */
        if (fbf_v2_end_due(r)) {
            fbf_v2_event(r, &count, now, 'Z');
            r->ending = true;
        }
        return count;
    }
    if (r->nqueries)
        fbf_replay_emit_queries(r, &count);
    fbf_jbuf_lit(&r->msg, "]}");
    return count;
}

void fbf_replay_build_ends(fbf_replay *r)
{
    size_t count = 0;
    fbf_replay_msg_open(r, r->clock);
    if (r->cfg.protocol == FBF_PROTO_BV2) {
        fbf_v2_event(r, &count, r->clock, 'Z');
    } else if (r->v5) {
        fbf_v5_ends(r, &count);
    } else {
        fbf_replay_ev_open(r, &count, r->clock, "SIMULATION_ENDS");
        fbf_jbuf_lit(&r->msg, "{}}]}");
    }
    r->ending = true;
}

bool fbf_replay_events_left(fbf_replay *r)
{
    drop_stale(r);
    return r->heap_n || r->next_sub < r->nb_static;
}
