/*
 * hsum: a summary tree over the run tables of a compression pass's holes
 * (policies/backfilling/hole_runs.c), so that the movement test of may_move.c finds the holes
 * worth testing without looking up every table. Private to policies/.
 *
 * Contract. Leaves are hole indices 0 .. FBF_BF_HSUM_LEAVES - 1. The
 * owner's leaf callback gives hole i's table (a staircase, policies/
 * level_runs.h) or says it has none; each node keeps the staircase of the
 * tables under it (per level the widest run and the latest end), so that
 * one lookup rules out a whole range of holes. Summaries are computed on
 * demand, and the owner reports every change of a hole's table (built,
 * dropped, moved to another index) with fbf_bf_hsum_changed before the
 * next query; a staircase handed out by the callback must stay as it is
 * until then.
 *
 * Ownership: _create/_destroy; not thread-safe. Allocation failures are
 * not errors: a node that cannot be summarised is looked through.
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
