/*
 * registry: policy names -> ops tables (see registry.h).
 */
#include "policies/registry.h"

#include <string.h>

#include "policies/policies.h"

static const fbf_policy_entry entries[] = {
    {"fcfs", &fbf_policy_fcfs, 1, "first come, first served (D5)"},
    {"easy", &fbf_policy_backfill, 1, "EASY backfilling: one reservation (D6)"},
    {"conservative", &fbf_policy_backfill, FBF_DEPTH_UNLIMITED,
     "conservative backfilling: a reservation for every job (D7)"},
    {NULL, NULL, 0, NULL},
};

const fbf_policy_entry *fbf_policy_lookup(const char *name)
{
    for (const fbf_policy_entry *e = entries; e->name; e++)
        if (strcmp(e->name, name) == 0)
            return e;
    return NULL;
}

const fbf_policy_entry *fbf_policy_list(void) { return entries; }
