/*
 * sim: the discrete-event side of fastbf-replay (time model in replay.h):
 * the run's state, set up with the jobs sorted once by (subtime, file
 * order) for the submissions' cursor, and the loop that exchanges the
 * messages message.c builds (message.h for the events and their order).
 *
 * Invariants: a message is sent only when it has an event; the run ends
 * with SIMULATION_ENDS only when every job is done or rejected and the
 * heap is empty, or after --max-exchanges K exchanges (truncated: jobs may
 * still wait or run), and as a deadlock when jobs still wait with nothing
 * left that could wake the scheduler.
 */
#include "tools/replay/replay.h"
#include "tools/replay/machines.h"
#include "tools/replay/message.h"
#include "tools/replay/v5.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    fbf_replay_build_ends(r);
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
        if (r->cfg.max_exchanges && r->msg_index > r->cfg.max_exchanges &&
            fbf_replay_events_left(r)) {
            r->truncated = true;
            rc = end_run(r);
            break;
        }
        /* batsim5's ForceSimulationStopEvent: what would have come is
         * dropped, and SimulationEndsEvent comes next. */
        if (r->v5 && r->v5->stop_asked) {
            r->truncated = fbf_replay_events_left(r) || r->running || r->waiting;
            rc = end_run(r);
            break;
        }
        if (fbf_replay_build_message(r, &calls_only, &calls_min) == 0) {
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
