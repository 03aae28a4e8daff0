/*
 * start: a waiting job starts now (fbf_sched_start); the waiting index
 * lets it go and the profile holds its span. See state.h.
 */
#include <errno.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"

int fbf_bf_start(fbf_bf_windex *wq, fbf_profile *p, fbf_sched *s, fbf_job_h h,
                 fbf_start_reason why, fbf_error *err)
{
    int rc = fbf_sched_start(s, h, why, err);
    if (rc < 0)
        return rc;
    if (wq)
        fbf_bf_windex_remove(wq, s, h);
    if (fbf_policy_hold(p, fbf_sched_now(s), fbf_sched_job(s, h)) < 0)
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    return 0;
}
