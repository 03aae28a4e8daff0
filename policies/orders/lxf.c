/* lxf: largest expansion factor first (D9 key: -((wait + est) / e), with
 * e = max(est, 1)); -1 for a job without walltime (FCFS only). Changes
 * with now. */
#include "engine/order_api.h"

static double lxf_key(const fbf_job *j, double now)
{
    double est = fbf_job_est(j);
    if (isinf(est))
        return -1;
    return -((now - j->subtime + est) / fmax(est, 1));
}

const fbf_order_ops fbf_order_lxf = {
    .name = "lxf",
    .summary = "largest (wait + estimate) / estimate first",
    .key = lxf_key,
    .dynamic = true,
};
