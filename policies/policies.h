/*
 * policies: the ops tables of the policies fastbf ships (one file each).
 * Reach them by name through registry.h.
 */
#ifndef FBF_POLICIES_H
#define FBF_POLICIES_H

#include <stdbool.h>

#include "engine/policy_api.h"

extern const fbf_policy_ops fbf_policy_fcfs;
/* The backfilling family: reservation depth 1 = EASY (D6), unlimited =
 * conservative (D7), k in between (D8). */
extern const fbf_policy_ops fbf_policy_backfill;

/* Tests only: backfilling engines created from now on use the plain loops
 * (on) or the indexed ones (off, the default); the decisions are the same.
 * Not thread-safe: set it before creating engines. */
void fbf_backfill_set_plain(bool plain);

/* Tests only: how many passes of the indexed EASY / depth-k scan have spent
 * their budget and finished with the plain scan (see backfill.c). */
unsigned long fbf_backfill_plain_fallbacks(void);

#endif
