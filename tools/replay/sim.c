/*
 * sim: the discrete-event side of fastbf-replay (time model in replay.h).
 *
 * Pending events live in one binary min-heap keyed by (time, kind, seq),
 * events.c: job completions (seq = start order), JOB_KILLED
 * acknowledgements, requested calls and the final NOTIFY. Submissions need
 * no heap: they are
 * a cursor over the jobs sorted once by (subtime, file order), merged with
 * the heap as a message is built. So one event costs O(log running) and a
 * message costs no allocation once the buffers have grown.
 *
 * Invariants: build_message() sends only when it has an event; a message
 * whose events are all delivered changes the job states at that moment
 * (a submitted job waits from then on, a completed job's resources are
 * free); the run ends with SIMULATION_ENDS only when every job is done or
 * rejected and the heap is empty, or after --max-exchanges K exchanges
 * (truncated: jobs may still wait or run), and as a deadlock when jobs
 * still wait with nothing left that could wake the scheduler.
 */
#include "tools/replay/replay.h"
#include "tools/replay/machines.h"
#include "tools/replay/v5.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
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

/* ---------- setup ---------- */

typedef struct sub_key {
    double t;
    uint32_t idx;
} sub_key;

static int sub_cmp(const void *a, const void *b)
{
    const sub_key *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int fbf_replay_init(fbf_replay *r, fbf_workload *wl, const fbf_replay_config *cfg,
                    fbf_error *err)
{
    memset(r, 0, sizeof *r);
    r->wl = wl;
    r->cfg = *cfg;
    fbf_idset_init(&r->scratch);
    size_t n = wl->nb_jobs;
    r->nb_static = n;
    r->nb_static_profiles = wl->nb_profiles;
    r->reg_open = cfg->dyn_jobs;
    r->reg_next = -1;
    r->jobs_cap = n ? n : 1;
    r->jobs = calloc(r->jobs_cap, sizeof *r->jobs);
    r->order = malloc((n ? n : 1) * sizeof *r->order);
    r->owner = malloc((size_t)cfg->nb_res * sizeof *r->owner);
    r->text = malloc(r->text_cap = 256);
    if (!r->owner)
        return fbf_errorf(err, -ENOMEM, "out of memory for the state of %u resources",
                          cfg->nb_res);
    if (!r->jobs || !r->order || !r->text)
        return fbf_errorf(err, -ENOMEM, "out of memory for %zu jobs", n);
    r->text[0] = '\0';
    r->text_len = 1;
    for (uint32_t i = 0; i < cfg->nb_res; i++)
        r->owner[i] = FBF_NO_JOB;
    /* Traces are usually sorted by submit time already: check in O(n)
     * before paying for a sort. */
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        r->order[i] = (uint32_t)i;
        if (i && wl->jobs[i].subtime < wl->jobs[i - 1].subtime)
            sorted = false;
    }
    if (!sorted) {
        sub_key *k = malloc(n * sizeof *k);
        if (!k)
            return fbf_errorf(err, -ENOMEM, "out of memory sorting %zu jobs", n);
        for (size_t i = 0; i < n; i++)
            k[i] = (sub_key){wl->jobs[i].subtime, (uint32_t)i};
        qsort(k, n, sizeof *k, sub_cmp);
        for (size_t i = 0; i < n; i++)
            r->order[i] = k[i].idx;
        free(k);
    }
    if (cfg->energy && fbf_machines_create(r, cfg->energy) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory for %u machines", cfg->nb_res);
    if (cfg->protocol == FBF_PROTO_BV5 && fbf_v5_create(r) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    if (n == 0 && cfg->protocol != FBF_PROTO_BV2) /* nothing to submit: say so at once */
        fbf_replay_heap_push(r, 0, FBF_EV_NOTIFY, 0, 0);
    if (cfg->external_end >= 0) /* arg 1: the external-events notification */
        fbf_replay_heap_push(r, cfg->external_end, FBF_EV_NOTIFY, 1, r->seq++);
    return 0;
}

void fbf_replay_fini(fbf_replay *r)
{
    free(r->jobs);
    free(r->order);
    free(r->owner);
    free(r->heap);
    free(r->kills);
    free(r->kill_items);
    free(r->ranges);
    free(r->text);
    free(r->lat);
    free(r->unsent);
    free(r->rows);
    free(r->err_long);
    free(r->v2_buf);
    fbf_replay_dynamic_fini(r);
    free(r->store_q);
    free(r->profile_stored);
    fbf_machines_destroy(r);
    fbf_v5_destroy(r);
    fbf_idset_fini(&r->scratch);
    fbf_jbuf_fini(&r->msg);
    fbf_jbuf_fini(&r->store_text);
    fbf_json_arena_destroy(r->arena);
}

/* ---------- message building ---------- */

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
static size_t build_message(fbf_replay *r, bool *calls_only, bool *calls_min)
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
        case FBF_EV_COMPLETED:
            emit_completed(r, &count, e.arg);
            break;
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
        case FBF_EV_ACK:
            emit_submitted(r, &count, e.arg, true);
            break;
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
        case FBF_EV_ANSWER:
            fbf_machines_emit(r, &count, &e);
            break;
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

static void build_ends(fbf_replay *r)
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

/* ---------- the loop ---------- */

static int exchange(fbf_replay *r)
{
    /* Batsim 5's JSON messages end with a NUL byte that their size counts. */
    size_t text_len = r->msg.len;
    if (r->v5)
        fbf_jbuf_raw(&r->msg, "", 1);
    if (r->msg.oom || r->oom)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory building message #%zu",
                          r->msg_index), FBF_EXIT_INTERNAL;
    /* Redis mode: before the scheduler reads */
    int src = r->cfg.protocol == FBF_PROTO_BV2 ? fbf_v2_store_pending(r)
                                                : fbf_replay_store_pending(r);
    if (src != FBF_EXIT_OK)
        return src;
    const char *reply;
    size_t len;
    fbf_error terr;
    fbf_error_clear(&terr);
    if (r->cfg.record && !fbf_replay_record_message(r, "> ", r->msg.p, text_len))
        return fbf_errorf(&r->err, -EIO, "--record: cannot write message #%zu", r->msg_index),
               FBF_EXIT_INTERNAL;
    double a = fbf_replay_now_s();
    int rc = fbf_transport_exchange(r->tr, r->msg.p, r->msg.len, &reply, &len, &terr);
    double b = fbf_replay_now_s();
    if (!fbf_replay_record_exchange(r, a, b))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory"), FBF_EXIT_INTERNAL;
    size_t rec = len - (r->v5 && rc == 0 && len && reply[len - 1] == '\0'); /* its terminator */
    if (rc == 0 && r->cfg.record && !fbf_replay_record_message(r, "< ", reply, rec))
        return fbf_errorf(&r->err, -EIO, "--record: cannot write reply #%zu", r->msg_index),
               FBF_EXIT_INTERNAL;
    if (rc) {
        char t[40];
        fbf_jbuf_fmt(t, sizeof t, r->req_now);
        fbf_errorf(&r->err, rc, "message #%zu (%s, now=%s): %s", r->msg_index, r->msg_kind, t,
                   terr.text);
        return FBF_EXIT_INVALID;
    }
    rc = r->cfg.protocol == FBF_PROTO_BV2 ? fbf_v2_apply_reply(r, reply, len)
         : r->v5                           ? fbf_v5_apply_reply(r, reply, len)
                                           : fbf_replay_apply_reply(r, reply, len);
    if (rc)
        return rc == -ENOMEM ? FBF_EXIT_INTERNAL : FBF_EXIT_INVALID;
    r->msg_index++;
    if (r->cfg.progress)
        fbf_replay_progress(r, b, false);
    return FBF_EXIT_OK;
}

static int deadlock(fbf_replay *r, FILE *out)
{
    char t[40];
    fbf_jbuf_fmt(t, sizeof t, r->clock);
    if (r->reg_open && !r->waiting)
        fbf_errorf(&r->err, -EDEADLK,
                   "deadlock at now=%s: dynamic registration is still open (no %s) but nothing "
                   "is pending, no call and no job: Batsim would wait forever",
                   t, r->v5 ? "FinishRegistrationEvent" : "NOTIFY registration_finished");
    else
        fbf_errorf(&r->err, -EDEADLK,
                   "deadlock at now=%s: %zu jobs wait, none runs, no call is pending and every "
                   "job was submitted%s",
                   t, r->waiting, r->reg_open ? " (registration is still open)" : "");
    if (!out)
        return FBF_EXIT_DEADLOCK;
    fprintf(out, "fastbf-replay: stuck jobs (%zu):", r->waiting);
    size_t shown = 0;
    for (size_t i = 0; i < r->wl->nb_jobs && shown < 20; i++) {
        if (r->jobs[i].state != FBF_RJ_WAITING)
            continue;
        const fbf_wl_job *j = &r->wl->jobs[i];
        char w[40];
        fbf_jbuf_fmt(w, sizeof w, j->walltime);
        fprintf(out, "%s %s (res %lld, walltime %s)", shown ? "," : "", j->id,
                (long long)j->res, w);
        shown++;
    }
    if (r->waiting > shown)
        fprintf(out, " and %zu more", r->waiting - shown);
    fprintf(out, "\n");
    return FBF_EXIT_DEADLOCK;
}

static bool events_left(fbf_replay *r)
{
    drop_stale(r);
    return r->heap_n || r->next_sub < r->nb_static;
}

/* After the reply to the last message: the scheduler must exit. */
static int finish_run(fbf_replay *r)
{
    /* The last progress line ends before the scheduler's last words. */
    if (r->cfg.progress)
        fbf_replay_progress(r, fbf_replay_now_s(), true);
    r->nsched_work = fbf_transport_counters(r->tr, r->sched_work, FBF_REPLAY_MAX_COUNTERS);
    fbf_error ferr;
    fbf_error_clear(&ferr);
    int f = fbf_transport_finish(r->tr, &ferr);
    if (f < 0)
        return fbf_errorf(&r->err, f, "%s", ferr.text), FBF_EXIT_INVALID;
    if (f > 0)
        fbf_errorf(&r->err, 0, "warning: %s", ferr.text);
    return FBF_EXIT_OK;
}

/* SIMULATION_ENDS (or Z), its reply, then the scheduler must exit. */
static int end_run(fbf_replay *r)
{
    /* The last progress line ends before the scheduler can say its last
     * words, which may come as soon as it has the last message. */
    if (r->cfg.progress)
        fbf_replay_progress(r, fbf_replay_now_s(), true);
    build_ends(r);
    int rc = exchange(r);
    return rc != FBF_EXIT_OK ? rc : finish_run(r);
}

int fbf_replay_run(fbf_replay *r, fbf_transport *tr, FILE *out)
{
    r->tr = tr;
    double t0 = fbf_replay_now_s();
    r->progress_last = r->progress_t0 = t0;
    int rc = fbf_replay_store_start(r);
    if (rc == FBF_EXIT_OK && r->v5)
        rc = fbf_v5_hello(r); /* the handshake: the EDC's features shape the rest */
    if (r->cfg.protocol == FBF_PROTO_BV2)
        fbf_v2_begins(r);
    else if (r->v5)
        fbf_v5_begins(r);
    else
        fbf_replay_json_begins(r);
    if (rc == FBF_EXIT_OK)
        rc = exchange(r);
    while (rc == FBF_EXIT_OK) {
        bool calls_only, calls_min;
        /* --max-exchanges K: K exchanges after SIMULATION_BEGINS (which
         * msg_index counts), then a clean end, unless the run ends anyway. */
        if (r->cfg.max_exchanges && r->msg_index > r->cfg.max_exchanges && events_left(r)) {
            r->truncated = true;
            rc = end_run(r);
            break;
        }
        /* batsim5's ForceSimulationStopEvent: what would have come is
         * dropped, and SimulationEndsEvent comes next. */
        if (r->v5 && r->v5->stop_asked) {
            r->truncated = events_left(r) || r->running || r->waiting;
            rc = end_run(r);
            break;
        }
        if (build_message(r, &calls_only, &calls_min) == 0) {
            if (r->done + r->rejected < r->wl->nb_jobs || r->reg_open)
                rc = deadlock(r, out);
            else
                rc = end_run(r);
            break;
        }
        /* A scheduler that keeps asking to be called at once and does
         * nothing else crawls on by Batsim's 1e-5 s minimum sleep. */
        if (calls_only && calls_min) {
            if (++r->same_time_calls > r->cfg.livelock_max) {
                char t[40];
                fbf_jbuf_fmt(t, sizeof t, r->req_now);
                fbf_errorf(&r->err, -ELOOP,
                           "livelock: %zu messages in a row up to now=%s held only a "
                           "REQUESTED_CALL that came at Batsim's minimum sleep (1e-05 s) after "
                           "its CALL_ME_LATER (the scheduler keeps asking to be called at once)",
                           r->same_time_calls, t);
                rc = FBF_EXIT_INVALID;
                break;
            }
        } else {
            r->same_time_calls = 0;
        }
        if (r->ending && r->cfg.progress) /* batsim2: Z goes with the last events */
            fbf_replay_progress(r, fbf_replay_now_s(), true);
        rc = exchange(r);
        if (rc == FBF_EXIT_OK && r->ending) { /* batsim2: Z came with the last events */
            rc = finish_run(r);
            break;
        }
    }
    r->wall_total = fbf_replay_now_s() - t0;
    if (r->cfg.progress)
        fbf_replay_progress(r, fbf_replay_now_s(), true);
    return rc;
}
