/*
 * reserve_k: what starts now at a finite reservation depth k (EASY is
 * k = 1; D6, D8). Each pass walks the queue in queue order: the first k
 * jobs that cannot start get a reservation at their earliest fit, then the
 * scan starts every later job that fits now (may_backfill.c through the
 * waiting index, else plain_scan.c). Reservations live within one pass.
 */
#include <errno.h>
#include <math.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"

/* A reservation of walltime 0 still claims its resources for an instant. */
static int hold_rsv(fbf_profile *p, double t, const fbf_job *j, bool add)
{
    if (j->walltime > 0)
        return add ? fbf_policy_hold(p, t, j) : fbf_policy_release(p, t, j);
    double end = nextafter(t, INFINITY);
    return add ? fbf_profile_add(p, t, end, j->res) : fbf_profile_remove(p, t, end, j->res);
}

/* Walks the queue making up to `depth` reservations (kept in k->tmp);
 * starts jobs that fit now when `start` is set. Returns the first job past
 * the depth in *boundary. */
static int reserve_phase(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, bool start,
                         fbf_job_h *boundary, fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    k->tmp.n = 0;
    *boundary = FBF_JOB_NONE;
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        if ((int64_t)k->tmp.n >= k->depth) {
            *boundary = h;
            break;
        }
        const fbf_job *j = fbf_sched_job(s, h);
        double t = fbf_profile_earliest(p, now, j->res, j->walltime);
        if (start && (t <= now || j->walltime == 0) && j->res <= fbf_sched_free(s)) {
            int rc = fbf_bf_start(k->wq, p, s, h,
                                  k->tmp.n ? FBF_START_BACKFILLED : FBF_START_HEAD, err);
            if (rc < 0)
                return rc;
            continue;
        }
        if (hold_rsv(p, t, j, true) < 0 || fbf_hvec_push(&k->tmp, h) < 0)
            return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
        fbf_sched_set_rsv(s, h, t);
        if (k->wq)
            fbf_bf_windex_update(k->wq, s, h);
    }
    return 0;
}

static void release_phase(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s)
{
    for (size_t i = 0; i < k->tmp.n; i++) {
        const fbf_job *j = fbf_sched_job(s, k->tmp.v[i]);
        hold_rsv(p, j->rsv, j, false);
    }
    k->tmp.n = 0;
}

int fbf_bf_finite_decide(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, fbf_error *err)
{
    fbf_job_h boundary;
    int rc = reserve_phase(k, p, s, true, &boundary, err);
    if (rc == 0 && boundary != FBF_JOB_NONE) {
        /* Under one order, the scan goes on from the boundary; under two,
         * from the backfill order's head: a job reserved in this pass
         * never fits now (docs/backfilling.md). */
        const fbf_job *bj = fbf_sched_job(s, boundary);
        fbf_qindex_probe at = {bj->qkey, bj->subtime, bj->seq};
        if (k->wq)
            rc = fbf_bf_indexed_scan(k, p, s,
                                     k->same_order ? k->tmp.v[k->tmp.n - 1] : FBF_JOB_NONE, err);
        else
            rc = fbf_bf_plain_scan(NULL, p, s, k->same_order, k->same_order ? &at : NULL, false,
                                   err);
    }
    release_phase(k, p, s);
    return rc;
}

/* The start it would get holding a reservation behind the first k. */
int fbf_bf_finite_estimate(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, uint32_t res,
                           double walltime, double *start, fbf_error *err)
{
    fbf_job_h boundary;
    int rc = reserve_phase(k, p, s, false, &boundary, err);
    if (rc == 0)
        *start = fbf_profile_earliest(p, fbf_sched_now(s), res, walltime);
    release_phase(k, p, s);
    return rc;
}
