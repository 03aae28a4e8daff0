/*
 * fcfs: first come, first served (scheduling-semantics.md D5).
 *
 * Start jobs from the head of the queue while the head fits; stop at the
 * first that does not. Walltimes are not needed (D2), so a job without one
 * is accepted; the waiting-time estimate then cannot be given (NAN).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/common.h"
#include "policies/policies.h"

static int fcfs_create(fbf_sched *s, int64_t depth, void **state, fbf_error *err)
{
    *state = NULL;
    return 0;
}

static void fcfs_destroy(void *state) {}

static int fcfs_decide(void *state, fbf_sched *s, fbf_error *err)
{
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        if (fbf_sched_job(s, h)->res > fbf_sched_free(s))
            break;
        int rc = fbf_sched_start(s, h, FBF_START_HEAD, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Places every waiting job in queue order, none before the previous one's
 * start (FCFS never overtakes), then the hypothetical job. */
static int fcfs_estimate(void *state, fbf_sched *s, uint32_t res, double walltime,
                         double *start, fbf_error *err)
{
    *start = NAN;
    if (walltime < 0)
        return 0;
    fbf_profile *p = fbf_profile_create(fbf_sched_capacity(s));
    if (!p)
        return fbf_errorf(err, -ENOMEM, "fcfs: out of memory");
    bool unknown = false;
    double t = fbf_sched_now(s);
    int rc = fbf_policy_running_profile(s, p, &unknown);
    if (rc < 0 || unknown)
        goto unknown;
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        if (j->walltime < 0)
            goto unknown;
        t = fbf_profile_earliest(p, t, j->res, j->walltime);
        if ((rc = fbf_policy_hold(p, t, j)) < 0)
            goto unknown;
    }
    *start = fbf_profile_earliest(p, t, res, walltime);
unknown:
    fbf_profile_destroy(p);
    return rc < 0 ? fbf_errorf(err, rc, "fcfs: out of memory") : 0;
}

const fbf_policy_ops fbf_policy_fcfs = {
    .name = "fcfs",
    .needs_walltime = false,
    .create = fcfs_create,
    .destroy = fcfs_destroy,
    .decide = fcfs_decide,
    .estimate = fcfs_estimate,
};
