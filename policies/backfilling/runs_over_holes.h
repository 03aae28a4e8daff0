/*
 * runs_over_holes: which holes of a compression pass could hold a window
 * of r resources for l seconds: a segment tree over the holes' run tables
 * (hole_runs.c), each node the staircase of the tables under it, so one
 * lookup rules out a range of holes. The owner's leaf callback gives a
 * hole's table and reports each change (fbf_bf_hsum_changed) before the
 * next query. Not thread-safe; a node it cannot summarise is looked
 * through. Details: docs/backfilling.md.
 */
#ifndef FBF_HSUM_H
#define FBF_HSUM_H

#include <stddef.h>
#include <stdint.h>

#include "policies/backfilling/level_runs.h"

#define FBF_BF_HSUM_LEAVES 64

typedef struct fbf_bf_hsum fbf_bf_hsum;

/* Hole i's table: 0 with its steps in *v, *n, or -1 when it has none
 * (the hole must then be tested on its own). */
typedef int (*fbf_bf_hsum_leaf_fn)(void *ctx, size_t i, const fbf_bf_stair **v, size_t *n);

fbf_bf_hsum *fbf_bf_hsum_create(fbf_bf_hsum_leaf_fn leaf);
void fbf_bf_hsum_destroy(fbf_bf_hsum *h);

/* Hole i's table changed (every hole's, for _reset). */
void fbf_bf_hsum_changed(fbf_bf_hsum *h, size_t i);
void fbf_bf_hsum_reset(fbf_bf_hsum *h);

/* The first hole i in [from, to) (to <= FBF_BF_HSUM_LEAVES) that has no
 * table, or whose table holds, at level res, a run at least l long or a
 * run ending at or after `end`; `to` if there is none. NaN compares as
 * "holds": only holes whose table rules both out are passed over. */
size_t fbf_bf_hsum_first(fbf_bf_hsum *h, void *ctx, size_t from, size_t to, uint32_t res,
                         double l, double end);

#endif
