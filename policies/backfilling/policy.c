/*
 * backfill: the backfilling family, one base with a reservation depth k
 * (scheduling-semantics.md D6, D7, D8). This file holds the ops table and
 * the finite depths; unlimited depth (conservative, D7) lives in
 * policies/backfilling/conservative.c, the shared state in policies/backfilling/state.h.
 *
 * Finite k (k = 1 is EASY): every pass recomputes the reservations. The
 * queue is walked in queue order (D9); each of the first k jobs that
 * cannot start now gets a reservation at its earliest fit in the profile
 * of the running jobs plus the reservations already made in this pass;
 * jobs that fit now start. Past the k-th reservation, a job starts iff it fits now for its
 * whole walltime in that profile, which for k = 1 is exactly D6's rule
 * (`now + walltime <= shadow` or `res <= extra`), since free() only grows
 * after now except for the head's reservation. A reserved head of walltime
 * 0 holds its resources for an instant ([t, nextafter(t))) so that `extra`
 * still counts it, as D6 does. Reservations of the pass are taken back out
 * of the profile at its end.
 *
 * Past the boundary, the plain scan tests every waiting job on the
 * engine's workers (fbf_sched_scan), then re-tests the candidates in the
 * backfill order (D9) as jobs start: O(N) per pass. When the backfill
 * order is not the queue order, the scan considers every waiting job that
 * holds no reservation, in the backfill order: a job reserved in this pass
 * never fits now (its earliest fit is later, or its res above the free
 * count, and the scan only lowers both), so the scan simply starts from
 * the backfill order's head. The fast path (policies/backfilling/may_backfill.c) finds
 * the same jobs through an index of the waiting queue in
 * O((starts + 1) log N)-ish per pass; see its header for the argument.
 *
 * The tuning's `plain` (tuning.h) makes an engine use the plain loops
 * (every reservation re-placed by compression) instead of the indexed
 * ones; both give the same decisions.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/backfilling/hole_runs.h"
#include "policies/backfilling/state.h"
#include "policies/common.h"
#include "policies/policies.h"

typedef fbf_backfill backfill;

fbf_backfill_tuning fbf_backfill_tuning_defaults(void)
{
    return (fbf_backfill_tuning){.runs_share = FBF_RUNS_SPAN_SHARE,
                                 .runs_cells_from = FBF_RUNS_CELLS_FROM,
                                 .corner_min_batch = FBF_BF_CORNER_MIN_BATCH,
                                 .scratch_keep = FBF_BF_SCRATCH_KEEP};
}

int fbf_backfill_stats_of(const fbf_engine *e, fbf_backfill_stats *out)
{
    const backfill *b = fbf_engine_policy_state(e, &fbf_policy_backfill);
    if (!b)
        return -EINVAL;
    *out = b->stats;
    return 0;
}

static int bf_create(fbf_sched *s, int64_t depth, void **state, fbf_error *err)
{
    backfill *b = calloc(1, sizeof *b);
    if (!b || !(b->p = fbf_profile_create(fbf_sched_capacity(s) ? fbf_sched_capacity(s) : 1))) {
        free(b);
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    }
    const fbf_backfill_tuning *tune = fbf_sched_policy_options(s);
    b->tune = tune ? *tune : fbf_backfill_tuning_defaults();
    b->depth = depth;
    b->persistent = depth == FBF_DEPTH_UNLIMITED;
    b->same_order = fbf_sched_same_orders(s);
    const fbf_order_ops *qo = fbf_sched_order(s), *bo = fbf_sched_backfill_order(s);
    /* The indexes hold keys that do not change while a job waits; D10's
     * repair (conservative under predict) runs on the plain path only. */
    b->fast = !b->tune.plain &&
              !(b->persistent ? (qo && qo->dynamic) ||
                                    fbf_sched_estimate(s) == FBF_ESTIMATE_PREDICT
                              : bo && bo->dynamic);
    if (b->fast && b->persistent && !(b->qi = fbf_qindex_create_ordered(FBF_QINDEX_RSV, qo))) {
        fbf_profile_destroy(b->p);
        free(b);
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    }
    if (b->fast && !b->persistent && !(b->wq = fbf_bf_windex_create(bo))) {
        fbf_profile_destroy(b->p);
        free(b);
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    }
    *state = b;
    return 0;
}

static void bf_destroy(void *state)
{
    backfill *b = state;
    fbf_profile_destroy(b->p);
    fbf_hvec_fini(&b->arrivals);
    fbf_hvec_fini(&b->tmp);
    fbf_backfill_fini_persistent(b);
    fbf_bf_windex_destroy(b->wq);
    free(b);
}

/* The profile was created before the platform size was known. */
static int ensure_profile(backfill *b, fbf_sched *s)
{
    if (fbf_profile_capacity(b->p) == fbf_sched_capacity(s))
        return 0;
    fbf_profile *np = fbf_profile_create(fbf_sched_capacity(s));
    if (!np)
        return -ENOMEM;
    fbf_profile_destroy(b->p);
    b->p = np;
    return 0;
}

#define NOMEM(err, what) fbf_errorf(err, -ENOMEM, "backfill: out of memory %s", what)

static int bf_submitted(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err)
{
    backfill *b = state;
    if (b->persistent && fbf_hvec_push(&b->arrivals, j) < 0)
        return NOMEM(err, "recording arrivals");
    if (b->wq && fbf_bf_windex_add(b->wq, s, j) < 0)
        return NOMEM(err, "indexing the queue");
    return 0;
}

static int bf_ended(void *state, fbf_sched *s, fbf_job_h h, fbf_error *err)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    int rc = fbf_policy_release(b->p, j->start, j);
    if (rc < 0)
        return fbf_errorf(err, rc, "backfill: job %s ended but its span is not held", j->id);
    if (b->persistent)
        fbf_backfill_released(b, fbf_sched_now(s), j->start, j->est_end);
    return 0;
}

/* A waiting job given up (max_wait) leaves every index, and its
 * reservation, if it held one, is released like a completion's range. */
static int bf_withdrawn(void *state, fbf_sched *s, fbf_job_h h, fbf_error *err)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    if (b->wq)
        fbf_bf_windex_remove(b->wq, s, h);
    if (!b->persistent)
        return 0; /* finite depth: reservations live within a pass only */
    if (j->walltime == 0) {
        bool counted = true; /* unless still among this message's arrivals */
        for (size_t i = 0; i < b->arrivals.n && counted; i++)
            counted = b->arrivals.v[i] != h;
        if (counted && b->zero_waiting > 0)
            b->zero_waiting--;
        return 0;
    }
    if (isnan(j->rsv))
        return 0; /* an arrival not placed yet */
    if (b->fast && fbf_qindex_contains(b->qi, h))
        fbf_bf_index_remove(b, s, h);
    int rc = fbf_policy_release(b->p, j->rsv, j);
    if (rc < 0)
        return fbf_errorf(err, rc, "backfill: job %s left but its reservation is not held", j->id);
    fbf_backfill_released(b, fbf_sched_now(s), j->rsv, j->rsv + j->walltime);
    b->live_rsv--;
    return 0;
}

/* A machine that is not ON is held like a running job (engine/power.h):
 * the engine only holds where no reservation needs it. */
static int bf_held(void *state, fbf_sched *s, fbf_job_h h, fbf_error *err)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    if (ensure_profile(b, s) < 0 || fbf_policy_hold(b->p, j->start, j) < 0)
        return NOMEM(err, "holding a machine");
    return 0;
}

/* A waiting job's priority changes (D9): indexes keyed by it let it go
 * and take it back; its reservation stays. */
static int bf_rekeyed(void *state, fbf_sched *s, fbf_job_h h, bool done, fbf_error *err)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    if (b->wq && !done)
        fbf_bf_windex_remove(b->wq, s, h);
    if (b->wq && done && fbf_bf_windex_add(b->wq, s, h) < 0)
        return NOMEM(err, "indexing the queue");
    if (!b->fast || !b->persistent)
        return 0;
    if (!done)
        fbf_bf_index_remove(b, s, h);
    else if (!isnan(j->rsv) && j->walltime > 0 && fbf_bf_index_add(b, s, h) < 0)
        return NOMEM(err, "indexing the reservations");
    return 0;
}

/* A running job outlived its estimate (D10 predict): it holds its
 * resources until start + walltime now. */
static int bf_extended(void *state, fbf_sched *s, fbf_job_h h, double old_walltime,
                       fbf_error *err)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    double end = j->start + old_walltime;
    if ((end > j->start && fbf_profile_remove(b->p, j->start, end, j->res) < 0) ||
        fbf_policy_hold(b->p, j->start, j) < 0)
        return NOMEM(err, "extending a running job's span");
    return 0;
}

int fbf_backfill_start_job(backfill *b, fbf_sched *s, fbf_job_h h, fbf_start_reason why,
                           fbf_error *err)
{
    int rc = fbf_sched_start(s, h, why, err);
    if (rc < 0)
        return rc;
    if (b->wq)
        fbf_bf_windex_remove(b->wq, s, h);
    if (fbf_policy_hold(b->p, fbf_sched_now(s), fbf_sched_job(s, h)) < 0)
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    return 0;
}

/* ---- finite depth ---- */

/* A reservation of walltime 0 still claims its resources for an instant. */
static int hold_rsv(fbf_profile *p, double t, const fbf_job *j, bool add)
{
    if (j->walltime > 0)
        return add ? fbf_policy_hold(p, t, j) : fbf_policy_release(p, t, j);
    double end = nextafter(t, INFINITY);
    return add ? fbf_profile_add(p, t, end, j->res) : fbf_profile_remove(p, t, end, j->res);
}

typedef struct keep_ctx {
    const fbf_profile *p;
    const fbf_order_ops *order; /* the scan's (backfill) order */
    bool same;                  /* ... which is the queue order: its key is qkey */
    const fbf_qindex_probe *after; /* only jobs from there on (NULL: all) */
    bool strict; /* only jobs after it, not the one there */
    double now;
    uint32_t free;
} keep_ctx;

/* A waiting job's place in the scan's order. */
static fbf_qindex_probe place_of(const keep_ctx *c, const fbf_job *j)
{
    return (fbf_qindex_probe){c->same ? j->qkey : fbf_order_key(c->order, j, c->now),
                              j->subtime, j->seq};
}

static int place_cmp(const fbf_qindex_probe *a, const fbf_qindex_probe *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Whether j fits now for its whole walltime. A job of walltime 0 holds
 * nothing over time and delays nobody: it fits iff its resources are free
 * (D6: now + 0 <= shadow), even when a reservation starts right now. */
static bool fits_now(const fbf_profile *p, double now, uint32_t nb_free, const fbf_job *j)
{
    return j->res <= nb_free &&
           (j->walltime == 0 || fbf_profile_min_free(p, now, j->walltime) >= j->res);
}

/* Runs on the workers: may this job backfill? (necessary condition; the
 * owner re-checks in queue order as resources get taken). */
static bool may_backfill(const void *arg, const fbf_job *j)
{
    const keep_ctx *c = arg;
    if (c->after) {
        fbf_qindex_probe x = place_of(c, j);
        int o = place_cmp(&x, c->after);
        if (!(o > 0 || (o == 0 && !c->strict)))
            return false;
    }
    return fits_now(c->p, c->now, c->free, j);
}

typedef struct placed {
    fbf_qindex_probe at;
    fbf_job_h h;
} placed;

static int placed_cmp(const void *x, const void *y)
{
    return place_cmp(&((const placed *)x)->at, &((const placed *)y)->at);
}

/* Puts candidates found in queue order into the backfill order. */
static int sort_for_scan(const keep_ctx *c, fbf_sched *s, fbf_hvec *v)
{
    if (v->n < 2)
        return 0;
    placed *t = malloc(v->n * sizeof *t);
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < v->n; i++)
        t[i] = (placed){place_of(c, fbf_sched_job(s, v->v[i])), v->v[i]};
    qsort(t, v->n, sizeof *t, placed_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = t[i].h;
    free(t);
    return 0;
}

/* Walks the queue making up to `depth` reservations (kept in b->tmp);
 * starts jobs that fit now when `start` is set. Returns the first job past
 * the depth in *boundary. */
static int reserve_phase(backfill *b, fbf_sched *s, bool start, fbf_job_h *boundary,
                         fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    b->tmp.n = 0;
    *boundary = FBF_JOB_NONE;
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        if ((int64_t)b->tmp.n >= b->depth) {
            *boundary = h;
            break;
        }
        const fbf_job *j = fbf_sched_job(s, h);
        double t = fbf_profile_earliest(b->p, now, j->res, j->walltime);
        if (start && (t <= now || j->walltime == 0) && j->res <= fbf_sched_free(s)) {
            int rc = fbf_backfill_start_job(b, s, h, b->tmp.n ? FBF_START_BACKFILLED : FBF_START_HEAD, err);
            if (rc < 0)
                return rc;
            continue;
        }
        if (hold_rsv(b->p, t, j, true) < 0 || fbf_hvec_push(&b->tmp, h) < 0)
            return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
        fbf_sched_set_rsv(s, h, t);
        if (b->wq)
            fbf_bf_windex_update(b->wq, s, h);
    }
    return 0;
}

static void release_phase(backfill *b, fbf_sched *s)
{
    for (size_t i = 0; i < b->tmp.n; i++) {
        const fbf_job *j = fbf_sched_job(s, b->tmp.v[i]);
        hold_rsv(b->p, j->rsv, j, false);
    }
    b->tmp.n = 0;
}

/* The plain scan: every waiting job from `after` on in the backfill order
 * (after it when strict; NULL: all) is tested on the workers, then
 * re-tested in that order as jobs start. */
int fbf_backfill_plain_scan(backfill *b, fbf_sched *s, const fbf_qindex_probe *after,
                            bool strict, fbf_error *err)
{
    double now = fbf_sched_now(s);
    keep_ctx c = {b->p,   fbf_sched_backfill_order(s), b->same_order, after, strict, now,
                  fbf_sched_free(s)};
    fbf_hvec cand = {0};
    int rc = fbf_sched_scan(s, may_backfill, &c, &cand);
    if (rc == 0 && !b->same_order)
        rc = sort_for_scan(&c, s, &cand);
    if (rc < 0)
        fbf_errorf(err, rc, "backfill: out of memory");
    for (size_t i = 0; rc == 0 && i < cand.n; i++) {
        if (fits_now(b->p, now, fbf_sched_free(s), fbf_sched_job(s, cand.v[i])))
            rc = fbf_backfill_start_job(b, s, cand.v[i], FBF_START_BACKFILLED, err);
    }
    fbf_hvec_fini(&cand);
    return rc;
}

static int decide_finite(backfill *b, fbf_sched *s, fbf_error *err)
{
    fbf_job_h boundary;
    int rc = reserve_phase(b, s, true, &boundary, err);
    if (rc == 0 && boundary != FBF_JOB_NONE) {
        /* Under one order, the scan goes on from the boundary; under two,
         * from the backfill order's head (see the top of this file). */
        keep_ctx c = {.same = true};
        fbf_qindex_probe at = place_of(&c, fbf_sched_job(s, boundary));
        if (b->wq)
            rc = fbf_bf_indexed_scan(b, s, b->same_order ? b->tmp.v[b->tmp.n - 1] : FBF_JOB_NONE,
                                     err);
        else
            rc = fbf_backfill_plain_scan(b, s, b->same_order ? &at : NULL, false, err);
    }
    release_phase(b, s);
    return rc;
}

static int bf_decide(void *state, fbf_sched *s, fbf_error *err)
{
    backfill *b = state;
    if (ensure_profile(b, s) < 0)
        return NOMEM(err, "for the profile");
    return b->persistent ? fbf_backfill_decide_persistent(b, s, err) : decide_finite(b, s, err);
}

static int bf_estimate(void *state, fbf_sched *s, uint32_t res, double walltime, double *start,
                       fbf_error *err)
{
    backfill *b = state;
    double now = fbf_sched_now(s);
    if (ensure_profile(b, s) < 0)
        return NOMEM(err, "for the profile");
    if (b->persistent) {
        *start = fbf_backfill_estimate_persistent(b, s, res, walltime);
        return 0;
    }
    /* The start it would get holding a reservation behind the first k. */
    fbf_job_h boundary;
    int rc = reserve_phase(b, s, false, &boundary, err);
    if (rc == 0)
        *start = fbf_profile_earliest(b->p, now, res, walltime);
    release_phase(b, s);
    return rc;
}

static size_t bf_counters(const void *state, fbf_policy_counter *out, size_t max)
{
    const backfill *b = state;
    if (!b->persistent)
        return 0;
    const fbf_policy_counter all[] = {
        {"reservations_placed", b->n_placed},
        {"compression_passes", b->n_passes},
        {"reservations_revisited", b->n_visited},
        {"reservations_moved", b->n_moved},
    };
    size_t n = sizeof all / sizeof all[0] < max ? sizeof all / sizeof all[0] : max;
    memcpy(out, all, n * sizeof *out);
    return n;
}

const fbf_policy_ops fbf_policy_backfill = {
    .name = "backfill",
    .needs_walltime = true,
    .create = bf_create,
    .destroy = bf_destroy,
    .job_submitted = bf_submitted,
    .job_ended = bf_ended,
    .job_withdrawn = bf_withdrawn,
    .decide = bf_decide,
    .estimate = bf_estimate,
    .resources_held = bf_held,
    .job_rekeyed = bf_rekeyed,
    .job_extended = bf_extended,
    .counters = bf_counters,
};
