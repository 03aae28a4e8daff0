/* priority: the highest priority first (D9 key: -priority), from the
 * job's `priority` field (0 when absent or not a number) or
 * fbf_engine_set_priority(). */
#include "engine/order_api.h"

static double priority_key(const fbf_job *j, double now) { return -j->prio; }

const fbf_order_ops fbf_order_priority = {
    .name = "priority",
    .summary = "highest priority field first (0 when absent)",
    .key = priority_key,
};
