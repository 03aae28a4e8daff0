/* saf: smallest area first, res x estimate (D9 key: res * est). */
#include "engine/order_api.h"

static double saf_key(const fbf_job *j, double now) { return (double)j->res * fbf_job_est(j); }

const fbf_order_ops fbf_order_saf = {
    .name = "saf",
    .summary = "smallest resources x estimate first",
    .key = saf_key,
};
