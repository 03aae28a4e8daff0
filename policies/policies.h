/*
 * policies: the ops tables of the policies fastbf ships (one file each).
 * Reach them by name through registry.h.
 */
#ifndef FBF_POLICIES_H
#define FBF_POLICIES_H

#include "engine/policy_api.h"

extern const fbf_policy_ops fbf_policy_fcfs;
/* The backfilling family: reservation depth 1 = EASY (D6), unlimited =
 * conservative (D7), k in between (D8). */
extern const fbf_policy_ops fbf_policy_backfill;

/* Its options and statistics: policies/backfilling/tuning.h. */

#endif
