/*
 * policy: the backfilling family's ops table (D6, D7, D8: one base with a
 * reservation depth k). It owns the profile of the running jobs and hands
 * each engine event to the depth's part: reserve_k.c for a finite k
 * (EASY is 1), conservative.c for the unlimited depth. The tuning's
 * `plain` (tuning.h) keeps to the plain loops; decisions are the same.
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

typedef struct backfill {
    bool persistent; /* unlimited depth: conservative */
    fbf_profile *p;  /* running jobs' spans (+ reservations, persistent) */
    fbf_bf_finite k;
    fbf_bf_conservative c;
} backfill;

#define NOMEM(err, what) fbf_errorf(err, -ENOMEM, "backfill: out of memory %s", what)

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
    *out = (fbf_backfill_stats){.plain_fallbacks = b->k.plain_fallbacks,
                                .corner_batches = b->c.search.corner_batches,
                                .fit_starts = b->c.search.fit_starts,
                                .scratch_frees = b->c.scratch_frees};
    return 0;
}

static void bf_destroy(void *state)
{
    backfill *b = state;
    if (b->persistent)
        fbf_bf_conservative_fini(&b->c);
    fbf_bf_windex_destroy(b->k.wq);
    fbf_hvec_fini(&b->k.tmp);
    fbf_profile_destroy(b->p);
    free(b);
}

static int bf_create(fbf_sched *s, int64_t depth, void **state, fbf_error *err)
{
    backfill *b = calloc(1, sizeof *b);
    if (!b || !(b->p = fbf_profile_create(fbf_sched_capacity(s) ? fbf_sched_capacity(s) : 1))) {
        free(b);
        return NOMEM(err, "");
    }
    const fbf_backfill_tuning *opt = fbf_sched_policy_options(s);
    fbf_backfill_tuning tune = opt ? *opt : fbf_backfill_tuning_defaults();
    b->persistent = depth == FBF_DEPTH_UNLIMITED;
    const fbf_order_ops *qo = fbf_sched_order(s), *bo = fbf_sched_backfill_order(s);
    /* The indexes hold keys that do not change while a job waits; D10's
     * repair (conservative under predict) runs on the plain path only. */
    bool fast = !tune.plain &&
                !(b->persistent ? (qo && qo->dynamic) ||
                                      fbf_sched_estimate(s) == FBF_ESTIMATE_PREDICT
                                : bo && bo->dynamic);
    int rc = 0;
    if (b->persistent)
        rc = fbf_bf_conservative_init(&b->c, b->p, fast, qo, &tune);
    b->k.depth = depth;
    b->k.same_order = fbf_sched_same_orders(s);
    if (rc == 0 && fast && !b->persistent && !(b->k.wq = fbf_bf_windex_create(bo)))
        rc = -ENOMEM;
    if (rc < 0) {
        bf_destroy(b);
        return NOMEM(err, "");
    }
    *state = b;
    return 0;
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
    b->p = b->c.p = b->c.cmp.p = np;
    return 0;
}

static int bf_submitted(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err)
{
    backfill *b = state;
    if (b->persistent && fbf_bf_conservative_submitted(&b->c, j) < 0)
        return NOMEM(err, "recording arrivals");
    if (b->k.wq && fbf_bf_windex_add(b->k.wq, s, j) < 0)
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
    if (b->persistent &&
        fbf_bf_conservative_released(&b->c, fbf_sched_now(s), j->start, j->est_end) < 0)
        return NOMEM(err, "recording a released range");
    return 0;
}

/* A waiting job given up (max_wait) leaves every index and reservation. */
static int bf_withdrawn(void *state, fbf_sched *s, fbf_job_h h, fbf_error *err)
{
    backfill *b = state;
    if (b->k.wq)
        fbf_bf_windex_remove(b->k.wq, s, h);
    if (!b->persistent)
        return 0; /* finite depth: reservations live within a pass only */
    int rc = fbf_bf_conservative_withdrawn(&b->c, s, h);
    if (rc < 0)
        return fbf_errorf(err, rc, "backfill: job %s left: releasing its reservation: %s",
                          fbf_sched_job(s, h)->id, strerror(-rc));
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
    if (b->k.wq && !done)
        fbf_bf_windex_remove(b->k.wq, s, h);
    if (b->k.wq && done && fbf_bf_windex_add(b->k.wq, s, h) < 0)
        return NOMEM(err, "indexing the queue");
    if (b->persistent && fbf_bf_conservative_rekeyed(&b->c, s, h, done) < 0)
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

static int bf_decide(void *state, fbf_sched *s, fbf_error *err)
{
    backfill *b = state;
    if (ensure_profile(b, s) < 0)
        return NOMEM(err, "for the profile");
    return b->persistent ? fbf_bf_conservative_decide(&b->c, s, err)
                         : fbf_bf_finite_decide(&b->k, b->p, s, err);
}

static int bf_estimate(void *state, fbf_sched *s, uint32_t res, double walltime, double *start,
                       fbf_error *err)
{
    backfill *b = state;
    if (ensure_profile(b, s) < 0)
        return NOMEM(err, "for the profile");
    if (!b->persistent)
        return fbf_bf_finite_estimate(&b->k, b->p, s, res, walltime, start, err);
    *start = fbf_bf_conservative_estimate(&b->c, s, res, walltime);
    return 0;
}

static size_t bf_counters(const void *state, fbf_policy_counter *out, size_t max)
{
    const backfill *b = state;
    if (!b->persistent)
        return 0;
    const fbf_policy_counter all[] = {
        {"reservations_placed", b->c.n_placed},
        {"compression_passes", b->c.cmp.n_passes},
        {"reservations_revisited", b->c.cmp.n_visited},
        {"reservations_moved", b->c.cmp.n_moved},
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
