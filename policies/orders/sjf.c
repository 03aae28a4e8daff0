/* sjf: shortest job first, by the estimate (D9 key: est). */
#include "engine/order_api.h"

static double sjf_key(const fbf_job *j, double now) { return fbf_job_est(j); }

const fbf_order_ops fbf_order_sjf = {
    .name = "sjf",
    .summary = "shortest estimate first",
    .key = sjf_key,
};
