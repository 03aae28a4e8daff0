/* wfp3: WFP3 of Tang et al., (wait / estimate)^3 x res, the largest first
 * (D9 key: -(q * q * q * res), q = wait / max(est, 1), multiplied left to
 * right). Changes with now. */
#include "engine/order_api.h"

static double wfp3_key(const fbf_job *j, double now)
{
    double q = (now - j->subtime) / fmax(fbf_job_est(j), 1);
    return -(q * q * q * (double)j->res);
}

const fbf_order_ops fbf_order_wfp3 = {
    .name = "wfp3",
    .summary = "largest (wait / estimate)^3 x resources first",
    .key = wfp3_key,
    .dynamic = true,
};
