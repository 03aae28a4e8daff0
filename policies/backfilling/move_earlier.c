/*
 * move_earlier: D7 (a), compression: after a completion, every reservation
 * that can start earlier moves, in queue order. The fast pass asks the
 * queue index for the first reserved job after the last one visited that
 * may move (may_move.c's test against the released ranges) and re-places
 * it; the plain pass re-places every one. Why this is exact, and its
 * cost: docs/backfilling.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"
#include "policies/backfilling/may_move.h"
#include "policies/backfilling/hole_runs.h"

int fbf_bf_index_add(fbf_bf_compression *b, fbf_sched *s, fbf_job_h h)
{
    if (fbf_qindex_insert(b->qi, s, h) < 0)
        return -ENOMEM;
    if (fbf_sched_job(s, h)->walltime > b->max_wall)
        b->max_wall = fbf_sched_job(s, h)->walltime;
    return 0;
}

void fbf_bf_index_remove(fbf_bf_compression *b, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_remove(b->qi, s, h);
}

void fbf_bf_compression_fini(fbf_bf_compression *b)
{
    fbf_bf_runs_destroy(b->runs);
    b->runs = NULL;
    fbf_qindex_destroy(b->qi);
    free(b->pending.v);
    free(b->holes.v);
}

/* Only the part after now can ever matter. */
int fbf_bf_released(fbf_bf_compression *b, double now, double start, double end)
{
    double a = start > now ? start : now;
    if (!b->fast || !(end > a))
        return 0;
    return fbf_bf_holes_push(&b->pending, a, end, 0);
}

/* Re-places one reservation (D7 a). In the fast pass, a move adds the range
 * it released after now to the holes (and to those of the next pass). */
static int replace(fbf_bf_compression *b, fbf_bf_due *due, fbf_bf_search *x, fbf_sched *s,
                   fbf_job_h h, bool fast, fbf_error *err)
{
    double now = fbf_sched_now(s);
    const fbf_job *j = fbf_sched_job(s, h);
    double old = j->rsv;
    uint64_t unfit = fast ? fbf_bf_holes_unfit(b, now, j) : 0;
    if (fbf_policy_release(b->p, old, j) < 0)
        return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
    double t = fast ? fbf_bf_earliest_near_holes(b, now, j, old, unfit)
                    : fbf_profile_earliest(b->p, now, j->res, j->walltime);
    if (t > old && old >= now)
        return fbf_errorf(err, -EPROTO,
                          "conservative: compression moved job %s later (%.17g -> %.17g)",
                          j->id, old, t);
    if (fbf_policy_hold(b->p, t, j) < 0 || (t != old && fbf_bf_due_note(due, t, h) < 0))
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    fbf_sched_set_rsv(s, h, t);
    b->n_visited++;
    b->n_moved += t != old;
    if (fast && t != old) {
        fbf_qindex_update(b->qi, s, h);
        double end = old + j->walltime;
        fbf_bf_search_release(x, old, end);
        if (end > now) {
            double a = old > now ? old : now;
            int64_t mf = fbf_profile_max_free(b->p, a, end);
            if (b->runs) {
                /* Tables over the released range are wrong; those over the
                 * job's new place are only loose, but would let through
                 * jobs that do not move. */
                fbf_bf_runs_changed(b->runs, a, end);
                fbf_bf_runs_changed(b->runs, t, t + j->walltime);
                fbf_bf_runs_add(b->runs, now, a, end);
            }
            if (fbf_bf_holes_push(&b->holes, a, end, mf) < 0 ||
                fbf_bf_holes_push(&b->pending, a, end, 0) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            fbf_bf_holes_normalize(b, &b->holes, now, 1, true);
            if (b->runs)
                fbf_bf_runs_remap(b->runs, &b->holes);
        }
    }
    return 0;
}

/* The pass over qi, from the head. */
static int compress_all(fbf_bf_compression *b, fbf_bf_search *x, fbf_sched *s, fbf_error *err)
{
    fbf_bf_move_ctx c = {.b = b, .now = fbf_sched_now(s)};
    int rc;
    fbf_job_h after = FBF_JOB_NONE;
    for (fbf_job_h h; (h = fbf_qindex_next(b->qi, s, after, fbf_bf_may_move, &c)) != FBF_JOB_NONE;
         after = h)
        if ((rc = replace(b, NULL, x, s, h, true, err)) < 0)
            return rc;
    return 0;
}

int fbf_bf_compress(fbf_bf_compression *b, fbf_bf_due *due, fbf_bf_search *x, fbf_sched *s,
                    fbf_error *err)
{
    int rc;
    b->n_passes++;
    if (b->fast) {
        double now = fbf_sched_now(s);
        fbf_bf_holes t = b->holes;
        b->holes = b->pending; /* the previous pass's and this message's releases */
        b->pending = t;
        b->pending.n = 0;
        uint32_t min_res = fbf_qindex_all(b->qi).min_res;
        if (!b->runs && !b->runs_failed && !(b->runs = fbf_bf_runs_create()))
            b->runs_failed = true;
        if (b->runs) {
            fbf_bf_runs_reset(b->runs, b->max_wall, min_res, b->runs_share);
            fbf_bf_runs_set_cells_from(b->runs, b->runs_cells_from);
            for (size_t i = 0; i < b->holes.n; i++)
                fbf_bf_runs_add(b->runs, now, b->holes.v[i].a, b->holes.v[i].b);
        }
        fbf_bf_holes_normalize(b, &b->holes, now, min_res, false);
        if (b->runs)
            fbf_bf_runs_remap(b->runs, &b->holes);
        rc = compress_all(b, x, s, err);
        if (b->runs)
            fbf_bf_runs_reset(b->runs, b->max_wall, min_res, b->runs_share);
        b->holes.n = 0;
        return rc;
    }
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        if (!(j->walltime > 0) || isnan(j->rsv))
            continue;
        if ((rc = replace(b, due, NULL, s, h, false, err)) < 0)
            return rc;
    }
    return 0;
}
