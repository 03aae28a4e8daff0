/*
 * engine: the event API (engine.h) and the policy-facing API
 * (policy_api.h) over the job store, the partitioned queue, the free
 * resources and the worker pool.
 *
 * Invariants between calls:
 *   - a WAITING job is linked in exactly one partition (job->part), and
 *     nb_waiting is the sum of the partitions' counts once the rings are
 *     drained (decide drains them first);
 *   - free_set and the allocations of RUNNING jobs partition the compute
 *     resources; nb_free == fbf_idset_count(free_set);
 *   - every RUNNING job has one live entry in the running heap (stale
 *     entries of ended jobs are dropped lazily when they surface);
 *   - holds (holds.c: power.c, failures.c) are RUNNING pseudo-jobs of the machines
 *     they hold, in the heap like jobs but not in nb_running.
 * Jobs go to partition seq % workers, so partitions stay balanced whatever
 * the arrival pattern. Kills and give-ups (deadlines.c) and energy saving
 * (energy.c) are extensions (extension.h), called at fixed points.
 */
#include "engine/engine.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/extension.h"
#include "engine/jobs.h"
#include "engine/order_api.h"
#include "engine/policy_api.h"

/* The engine's own decision-makers beside the policy (extension.h). */
static const fbf_extension_ops *const extensions[] = {&fbf_ext_deadlines, &fbf_ext_energy};
#define NEXT (sizeof extensions / sizeof extensions[0])
#include "engine/pool.h"
#include "engine/queue.h"
#include "engine/runheap.h"

/* Below these sizes, waking the workers costs more than the work. */
#define INLINE_SYNC_BELOW 512
#define PARALLEL_SCAN_FROM 4096

int fbf_hvec_push(fbf_hvec *h, fbf_job_h j)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 64;
        fbf_job_h *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        h->v = v;
        h->cap = cap;
    }
    h->v[h->n++] = j;
    return 0;
}

void fbf_hvec_fini(fbf_hvec *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}

/* Worker side of a SUBMIT message: the job joins the worker's partition. */
static void apply_msg(void *ctx, unsigned w, uint64_t msg)
{
    fbf_engine *e = ctx;
    fbf_partition_insert(&e->parts[w], e->jobs, (fbf_job_h)msg);
}

fbf_engine *fbf_engine_create(const fbf_engine_config *cfg, fbf_error *err)
{
    if (!cfg || !cfg->policy || cfg->workers < 1 || cfg->workers > 256 ||
        cfg->reservation_depth < 1 || !(cfg->kill_after >= 0) || isinf(cfg->kill_after) ||
        !(cfg->max_wait >= 0) || isinf(cfg->max_wait) || !fbf_estimate_name(cfg->estimate)) {
        fbf_errorf(err, -EINVAL, "engine: invalid configuration (policy required, "
                                 "1 <= workers <= 256, reservation depth >= 1, "
                                 "kill delay and maximum wait finite and >= 0, "
                                 "a known estimate)");
        errno = EINVAL;
        return NULL;
    }
    fbf_engine *e = calloc(1, sizeof *e);
    if (!e)
        goto nomem;
    e->cfg = *cfg;
    e->ops = cfg->policy;
    e->order = cfg->order;
    e->border = cfg->backfill_order ? cfg->backfill_order : cfg->order;
    e->qmode = fbf_engine_queue_mode(cfg->order);
    e->cml = NAN;
    fbf_idset_init(&e->free_set);
    unsigned n = cfg->workers;
    e->jobs = fbf_jobs_create();
    e->parts = calloc(n, sizeof *e->parts);
    e->scan_out = calloc(n, sizeof *e->scan_out);
    e->cursor = calloc(n, sizeof *e->cursor);
    e->cursor_at = calloc(n, sizeof *e->cursor_at);
    e->est = fbf_estimator_create(cfg->estimate);
    if (!e->jobs || !e->parts || !e->scan_out || !e->cursor || !e->cursor_at ||
        !e->est)
        goto nomem;
    for (unsigned i = 0; i < n; i++)
        fbf_partition_init_mode(&e->parts[i], e->qmode);
    e->pool = fbf_pool_create(n, apply_msg, e);
    if (!e->pool) {
        fbf_errorf(err, -errno, "engine: cannot start %u worker threads", n);
        fbf_engine_destroy(e);
        return NULL;
    }
    for (size_t i = 0; i < NEXT; i++)
        if (extensions[i]->create && extensions[i]->create(e, err) < 0) {
            fbf_engine_destroy(e);
            errno = ENOMEM;
            return NULL;
        }
    int rc = e->ops->create(e, cfg->reservation_depth, &e->pstate, err);
    e->cfg.policy_options = NULL; /* borrowed for create only */
    if (rc < 0) {
        fbf_engine_destroy(e);
        errno = -rc;
        return NULL;
    }
    return e;
nomem:
    fbf_errorf(err, -ENOMEM, "engine: out of memory");
    fbf_engine_destroy(e);
    errno = ENOMEM;
    return NULL;
}

void fbf_engine_destroy(fbf_engine *e)
{
    if (!e)
        return;
    fbf_pool_destroy(e->pool);
    if (e->pstate)
        e->ops->destroy(e->pstate);
    if (e->scan_out)
        for (unsigned i = 0; i < e->cfg.workers; i++)
            fbf_hvec_fini(&e->scan_out[i]);
    free(e->scan_out);
    free(e->cursor);
    free(e->cursor_at);
    free(e->parts);
    fbf_jobs_destroy(e->jobs);
    for (size_t i = 0; i < NEXT; i++)
        if (extensions[i]->destroy)
            extensions[i]->destroy(e);
    fbf_estimator_destroy(e->est);
    free(e->failed);
    fbf_idset_fini(&e->free_set);
    fbf_runheap_fini(&e->heap);
    fbf_hvec_fini(&e->rejects);
    fbf_hvec_fini(&e->execs);
    fbf_hvec_fini(&e->kills);
    fbf_hvec_fini(&e->started);
    fbf_hvec_fini(&e->given_up);
    fbf_hvec_fini(&e->requeued);
    fbf_hvec_fini(&e->rsv_set);
    free(e->dec);
    free(e);
}

int fbf_engine_set_platform(fbf_engine *e, const fbf_idset *compute, fbf_error *err)
{
    if (e->has_platform)
        return fbf_errorf(err, -EINVAL, "platform already set");
    uint64_t n = fbf_idset_count(compute);
    if (n < 1 || n > UINT32_MAX)
        return fbf_errorf(err, -EINVAL, "platform needs at least one compute resource");
    if (fbf_idset_copy(&e->free_set, compute) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < NEXT; i++) {
        int rc = extensions[i]->platform_set ? extensions[i]->platform_set(e, compute, err) : 0;
        if (rc < 0)
            return rc;
    }
    e->nb_compute = e->nb_free = (uint32_t)n;
    e->has_platform = true;
    return 0;
}

bool fbf_engine_has_platform(const fbf_engine *e) { return e->has_platform; }
uint32_t fbf_engine_nb_compute(const fbf_engine *e) { return e->nb_compute; }

int fbf_engine_begin(fbf_engine *e, double now, fbf_error *err)
{
    if (!isfinite(now) || now < e->now)
        return fbf_errorf(err, -EINVAL, "time goes backwards: now %.17g after %.17g", now,
                          e->now);
    e->now = now;
    e->any_ended = false;
    e->rejects.n = e->execs.n = e->kills.n = e->given_up.n = 0;
    e->cml = NAN;
    e->dec_n = 0;
    e->point_seq0 = fbf_jobs_count(e->jobs);
    e->requeued.n = e->rsv_set.n = 0;
    e->rsv_oom = false;
    return 0;
}

int fbf_engine_submit(fbf_engine *e, const char *id, double subtime, int64_t res,
                      double walltime, fbf_error *err)
{
    fbf_submission sub = {.id = id, .subtime = subtime, .res = res, .walltime = walltime,
                          .delay = NAN};
    return fbf_engine_submit_job(e, &sub, err);
}

int fbf_engine_submit_job(fbf_engine *e, const fbf_submission *sub, fbf_error *err)
{
    const char *id = sub->id;
    double subtime = sub->subtime, walltime = sub->walltime;
    int64_t res = sub->res;
    if (!e->has_platform)
        return fbf_errorf(err, -EINVAL, "job %s submitted before the platform is known", id);
    if (isnan(walltime) || isnan(subtime) || isnan(sub->priority))
        return fbf_errorf(err, -EINVAL, "job %s: walltime, subtime and priority must be numbers",
                          id);
    fbf_job_h h;
    int rc = fbf_jobs_add(e->jobs, id, &h);
    if (rc == -EEXIST)
        return fbf_errorf(err, rc, "job %s submitted twice", id);
    if (rc < 0)
        return fbf_errorf(err, rc, "job %s: cannot store job (%s)", id, strerror(-rc));
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    j->subtime = subtime;
    j->walltime = walltime < 0 ? -1.0 : walltime;
    j->res = res < 1 || res > UINT32_MAX ? 0 : (uint32_t)res;

    /* D2: a job that can never run is rejected at once. */
    if (res < 1 || res > (int64_t)e->nb_compute || (e->ops->needs_walltime && walltime < 0)) {
        j->state = FBF_JOB_REJECTED;
        return fbf_hvec_push(&e->rejects, h) < 0 ? fbf_errorf(err, -ENOMEM, "out of memory")
                                                  : 0;
    }
    double est;
    if (fbf_estimator_submit(e->est, h, sub, &est) < 0)
        return fbf_errorf(err, -ENOMEM, "job %s: out of memory", id);
    j->walltime = isinf(est) ? -1.0 : est; /* D10: what the policies plan with */
    j->prio = sub->priority;
    j->qkey = fbf_order_key(e->order, j, e->now);
    j->state = FBF_JOB_WAITING;
    j->part = (uint16_t)(j->seq % e->cfg.workers);
    e->nb_waiting++;
    fbf_pool_post(e->pool, j->part, h);
    return e->ops->job_submitted ? e->ops->job_submitted(e->pstate, e, h, err) : 0;
}

static const char *state_name(uint8_t s)
{
    switch (s) {
    case FBF_JOB_WAITING: return "waiting";
    case FBF_JOB_RUNNING: return "running";
    case FBF_JOB_DONE: return "already finished";
    case FBF_JOB_REJECTED: return "rejected";
    default: return "unknown";
    }
}

int fbf_engine_complete(fbf_engine *e, const char *id, fbf_error *err)
{
    fbf_job_h h = fbf_engine_find(e, id);
    if (h == FBF_JOB_NONE)
        return fbf_errorf(err, -ENOENT, "unknown job %s", id);
    return fbf_engine_complete_job(e, h, err);
}

int fbf_engine_complete_job(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    return fbf_engine_end_job(e, h, e->now, false, err);
}

int fbf_engine_end_job(fbf_engine *e, fbf_job_h h, double at, bool killed, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (j->state != FBF_JOB_RUNNING)
        return fbf_errorf(err, -EINVAL, "job %s ended but it is %s, not running", j->id,
                          state_name(j->state));
    if (fbf_idset_union(&e->free_set, &j->alloc) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    e->nb_free += j->res;
    e->nb_running--;
    j->state = FBF_JOB_DONE;
    fbf_estimator_ended(e->est, h, j, at, killed);
    for (size_t i = 0; i < NEXT; i++) {
        int rc = extensions[i]->job_ended ? extensions[i]->job_ended(e, h, err) : 0;
        if (rc < 0)
            return rc;
    }
    e->any_ended = true;
    int rc = e->ops->job_ended ? e->ops->job_ended(e->pstate, e, h, err) : 0;
    if (rc < 0)
        return rc;
    if (e->nb_failed && fbf_failures_freed(e, &j->alloc) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return 0;
}

static int push_decision(fbf_engine *e, fbf_decision d)
{
    if (e->dec_n == e->dec_cap) {
        size_t cap = e->dec_cap ? e->dec_cap * 2 : 64;
        fbf_decision *v = realloc(e->dec, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        e->dec = v;
        e->dec_cap = cap;
    }
    e->dec[e->dec_n++] = d;
    return 0;
}

int fbf_engine_decide(fbf_engine *e, fbf_error *err)
{
    fbf_pool_sync(e->pool, INLINE_SYNC_BELOW); /* every submission is in its partition */
    if (fbf_engine_rekey(e) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = fbf_engine_correct_estimates(e, err);
    for (size_t i = 0; rc == 0 && i < NEXT; i++)
        rc = extensions[i]->before_pass ? extensions[i]->before_pass(e, err) : 0;
    if (rc < 0)
        return rc;
    if (e->has_platform) {
        e->in_pass = true;
        rc = e->ops->decide(e->pstate, e, err);
        e->in_pass = false;
        if (rc < 0)
            return rc;
    }
    for (size_t i = NEXT; i-- > 0;) {
        double wake = NAN;
        if (extensions[i]->after_pass && (rc = extensions[i]->after_pass(e, &wake, err)) < 0)
            return rc;
        e->cml = fmin(e->cml, wake); /* fmin ignores a NAN side */
    }
    /* D0 reply order: rejections, jobs given up, kills, starts, then the
     * call. */
    rc = 0;
    for (size_t i = 0; i < e->rejects.n && rc == 0; i++)
        rc = push_decision(e, (fbf_decision){FBF_DEC_REJECT, e->rejects.v[i], NAN, NULL, 0});
    for (size_t i = 0; i < e->given_up.n && rc == 0; i++)
        rc = push_decision(e, (fbf_decision){FBF_DEC_GIVE_UP, e->given_up.v[i], NAN, NULL, 0});
    for (size_t i = 0; i < e->kills.n && rc == 0; i++)
        rc = push_decision(e, (fbf_decision){FBF_DEC_KILL, e->kills.v[i], NAN, NULL, 0});
    for (size_t i = 0; i < e->execs.n && rc == 0; i++)
        rc = push_decision(e, (fbf_decision){FBF_DEC_EXECUTE, e->execs.v[i], NAN, NULL, 0});
    for (size_t k = 0; k < NEXT && rc == 0; k++) {
        const fbf_idset *sets[2];
        uint32_t ps[2];
        size_t nsets = extensions[k]->state_changes ? extensions[k]->state_changes(e, sets, ps) : 0;
        for (size_t i = 0; i < nsets && rc == 0; i++)
            rc = push_decision(e, (fbf_decision){FBF_DEC_SET_STATE, FBF_JOB_NONE, NAN, sets[i],
                                                 ps[i]});
    }
    if (rc == 0 && !isnan(e->cml))
        rc = push_decision(e, (fbf_decision){FBF_DEC_CALL_ME_LATER, FBF_JOB_NONE, e->cml, NULL, 0});
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}

const fbf_decision *fbf_engine_decisions(const fbf_engine *e, size_t *n)
{
    *n = e->dec_n;
    return e->dec;
}

double fbf_engine_estimate_start(fbf_engine *e, int64_t res, double walltime)
{
    if (res < 1 || res > (int64_t)e->nb_compute)
        return INFINITY;
    if (e->ops->needs_walltime && walltime < 0)
        return INFINITY;
    fbf_pool_sync(e->pool, INLINE_SYNC_BELOW);
    double t;
    /* A policy that fails to tell cannot tell (NAN, see engine.h). */
    return e->ops->estimate(e->pstate, e, (uint32_t)res, walltime, &t, NULL) < 0 ? NAN : t;
}

const void *fbf_engine_policy_state(const fbf_engine *e, const fbf_policy_ops *ops)
{
    return e->ops == ops ? e->pstate : NULL;
}

size_t fbf_engine_policy_counters(const fbf_engine *e, fbf_policy_counter *out, size_t max)
{
    if (!e->ops->counters || max == 0)
        return 0;
    return e->ops->counters(e->pstate, out, max);
}

double fbf_engine_now(const fbf_engine *e) { return e->now; }
fbf_job_h fbf_engine_find(const fbf_engine *e, const char *id)
{
    fbf_job_h h = fbf_jobs_find(e->jobs, id);
    return h != FBF_JOB_NONE && fbf_jobs_get(e->jobs, h)->hold ? FBF_JOB_NONE : h;
}
const char *fbf_engine_job_id(const fbf_engine *e, fbf_job_h j)
{
    return fbf_jobs_get(e->jobs, j)->id;
}
fbf_job_state fbf_engine_job_state(const fbf_engine *e, fbf_job_h j)
{
    return (fbf_job_state)fbf_jobs_get(e->jobs, j)->state;
}
const fbf_idset *fbf_engine_job_alloc(const fbf_engine *e, fbf_job_h j)
{
    return &fbf_jobs_get(e->jobs, j)->alloc;
}
double fbf_engine_job_start(const fbf_engine *e, fbf_job_h j)
{
    const fbf_job *r = fbf_jobs_get(e->jobs, j);
    return r->state == FBF_JOB_RUNNING || r->state == FBF_JOB_DONE ? r->start : NAN;
}
fbf_start_reason fbf_engine_job_start_reason(const fbf_engine *e, fbf_job_h j)
{
    return (fbf_start_reason)fbf_jobs_get(e->jobs, j)->reason;
}
double fbf_engine_job_reservation(const fbf_engine *e, fbf_job_h j)
{
    const fbf_job *r = fbf_jobs_get(e->jobs, j);
    return r->state == FBF_JOB_WAITING ? r->rsv : NAN;
}
size_t fbf_engine_nb_waiting(const fbf_engine *e) { return e->nb_waiting; }
size_t fbf_engine_nb_running(const fbf_engine *e) { return e->nb_running; }
uint32_t fbf_engine_nb_free(const fbf_engine *e) { return e->nb_free; }

/* ---- policy-facing API (policy_api.h) ---- */

double fbf_sched_now(const fbf_sched *s) { return s->now; }
uint32_t fbf_sched_capacity(const fbf_sched *s) { return s->nb_compute; }
uint32_t fbf_sched_free(const fbf_sched *s) { return s->nb_free; }
size_t fbf_sched_nb_waiting(const fbf_sched *s) { return s->nb_waiting; }
bool fbf_sched_any_ended(const fbf_sched *s) { return s->any_ended; }

double fbf_sched_min_running_end(fbf_sched *s)
{
    while (s->heap.n) {
        const fbf_runheap_item *top = &s->heap.v[0];
        const fbf_job *j = fbf_jobs_get(s->jobs, top->job);
        if (j->state == FBF_JOB_RUNNING && j->est_end == top->end)
            return top->end;
        fbf_runheap_pop(&s->heap);
    }
    return INFINITY;
}

void fbf_sched_foreach_running(fbf_sched *s, void (*fn)(void *ctx, const fbf_job *j), void *ctx)
{
    for (size_t i = 0; i < s->heap.n; i++) {
        const fbf_job *j = fbf_jobs_get(s->jobs, s->heap.v[i].job);
        if (j->state == FBF_JOB_RUNNING && j->est_end == s->heap.v[i].end)
            fn(ctx, j);
    }
}

const fbf_job *fbf_sched_job(const fbf_sched *s, fbf_job_h j) { return fbf_jobs_get(s->jobs, j); }

void fbf_sched_set_rsv(fbf_sched *s, fbf_job_h j, double rsv)
{
    fbf_jobs_get(s->jobs, j)->rsv = rsv;
    if (s->track_rsv && s->in_pass && fbf_hvec_push(&s->rsv_set, j) < 0)
        s->rsv_oom = true; /* reported by fbf_engine_reservations_set() */
}

void fbf_sched_iter_init(fbf_sched *s, fbf_sched_iter *it)
{
    fbf_queue_iter qi;
    fbf_queue_iter_init_lazy(&qi, s->parts, s->cfg.workers, s->cursor, s->cursor_at);
    it->cur = s->cursor;
}

fbf_job_h fbf_sched_iter_next(fbf_sched *s, fbf_sched_iter *it)
{
    fbf_queue_iter qi = {.cur = it->cur, .n = s->cfg.workers, .parts = s->parts,
                         .after = s->cursor_at};
    return fbf_queue_iter_next(&qi, s->jobs);
}

typedef struct scan_visit {
    scan_job *sj;
    fbf_hvec *out;
} scan_visit;

static bool scan_one(void *arg, fbf_job_h h, const fbf_job *j)
{
    scan_visit *v = arg;
    if (v->sj->keep(v->sj->ctx, j) && fbf_hvec_push(v->out, h) < 0) {
        __atomic_store_n(&v->sj->err, -ENOMEM, __ATOMIC_RELAXED);
        return false;
    }
    return true;
}

static void scan_phase(void *arg, unsigned w)
{
    scan_job *sj = arg;
    fbf_engine *e = sj->e;
    fbf_hvec *out = &e->scan_out[w];
    out->n = 0;
    if (e->parts[w].mode != FBF_QUEUE_TREE) { /* the default's loop, kept as it was */
        for (fbf_job_h h = e->parts[w].head; h != FBF_JOB_NONE;) {
            const fbf_job *j = fbf_jobs_get(e->jobs, h);
            if (sj->keep(sj->ctx, j) && fbf_hvec_push(out, h) < 0) {
                __atomic_store_n(&sj->err, -ENOMEM, __ATOMIC_RELAXED);
                return;
            }
            h = j->next;
        }
        return;
    }
    scan_visit v = {sj, out};
    fbf_partition_foreach(&e->parts[w], e->jobs, scan_one, &v);
}

int fbf_sched_scan(fbf_sched *s, fbf_sched_filter keep, const void *ctx, fbf_hvec *out)
{
    scan_job sj = {.e = s, .keep = keep, .ctx = ctx, .err = 0};
    if (s->nb_waiting >= PARALLEL_SCAN_FROM)
        fbf_pool_run(s->pool, scan_phase, &sj);
    else
        fbf_pool_run_inline(s->pool, scan_phase, &sj);
    if (sj.err)
        return sj.err;
    unsigned n = s->cfg.workers;
    size_t total = 0;
    fbf_job_h *lists[256];
    size_t lens[256];
    for (unsigned i = 0; i < n; i++) {
        lists[i] = s->scan_out[i].v;
        lens[i] = s->scan_out[i].n;
        total += lens[i];
    }
    if (total == 0)
        return 0; /* out->v may still be NULL: no pointer arithmetic on it */
    if (out->n + total > out->cap) {
        fbf_job_h *v = realloc(out->v, (out->n + total) * sizeof *v);
        if (!v)
            return -ENOMEM;
        out->v = v;
        out->cap = out->n + total;
    }
    fbf_queue_merge(s->jobs, lists, lens, n, out->v + out->n);
    out->n += total;
    return 0;
}

int fbf_sched_start(fbf_sched *s, fbf_job_h h, fbf_start_reason why, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(s->jobs, h);
    if (j->state != FBF_JOB_WAITING)
        return fbf_errorf(err, -EPROTO, "policy bug: starting job %s which is %s", j->id,
                          state_name(j->state));
    if (j->res > s->nb_free)
        return fbf_errorf(err, -EPROTO, "policy bug: job %s needs %u resources, %u free",
                          j->id, j->res, s->nb_free);
    if (fbf_idset_take_lowest(&s->free_set, j->res, &j->alloc) < 0 ||
        fbf_runheap_push(&s->heap, j->walltime < 0 ? INFINITY : s->now + j->walltime, h) < 0 ||
        fbf_hvec_push(&s->execs, h) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory starting job %s", j->id);
    for (size_t i = 0; i < NEXT; i++) {
        int rc = extensions[i]->job_started ? extensions[i]->job_started(s, h, err) : 0;
        if (rc < 0)
            return rc;
    }
    fbf_partition_unlink(&s->parts[j->part], s->jobs, h); /* before qkey goes */
    j->state = FBF_JOB_RUNNING;
    j->reason = (uint8_t)why;
    j->start = s->now;
    j->est_end = j->walltime < 0 ? INFINITY : s->now + j->walltime; /* D4 */
    j->rsv = NAN;
    if (fbf_estimator_started(s->est, h, j) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory starting job %s", j->id);
    s->nb_free -= j->res;
    s->nb_waiting--;
    s->nb_running++;
    return 0;
}

void fbf_sched_call_me_later(fbf_sched *s, double t) { s->cml = t; }

/* ---- machine states (engine/power.h, engine_int.h) ---- */

fbf_power *fbf_engine_power(const fbf_engine *e) { return e->power; }
const fbf_idset *fbf_engine_free_set(const fbf_engine *e) { return &e->free_set; }
int64_t fbf_engine_depth(const fbf_engine *e) { return e->cfg.reservation_depth; }
