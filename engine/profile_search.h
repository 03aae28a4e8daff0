/*
 * profile_search: the searches of engine/profile.c over its B+ tree of
 * breakpoints (engine/profile_tree.h), by a threshold on used(): limit =
 * capacity - n, so "used() <= limit" is "n resources free". Private to
 * engine/. Pure reads: concurrent calls are safe while nobody writes.
 */
#ifndef FBF_PROFILE_SEARCH_H
#define FBF_PROFILE_SEARCH_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/profile_tree.h"

/* The smallest t >= from (< stop), among {from} and the keys after it,
 * with used(u) <= limit for every u in [t, t + d) (for d <= 0: at t);
 * INFINITY if none. from < stop and limit >= 0 required. */
double fbf_ptree_earliest(const fbf_ptree *t, double from, int64_t limit, double d, double stop);

/* The last key k with lo < k < hi and used(k) > limit; false if none. */
bool fbf_ptree_last_above(const fbf_ptree *t, double lo, double hi, int64_t limit, double *k);

/* The first key k > after with used(k) > limit (above) or used(k) <=
 * limit (!above); false if none. */
bool fbf_ptree_first_key(const fbf_ptree *t, double after, int64_t limit, bool above, double *k);

#endif
