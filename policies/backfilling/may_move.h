/*
 * may_move: the released ranges ("holes") and the movement test of
 * conservative compression, for move_earlier.c. Private to
 * policies/backfilling/.
 */
#ifndef FBF_BF_MAY_MOVE_H
#define FBF_BF_MAY_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/backfilling/state.h"

/* A pass keeps at most this many holes (merging the closest). */
#define FBF_BF_MAX_HOLES 64

/* The state of one search with fbf_bf_may_move: the holes tested are
 * b->holes, sorted by a. */
typedef struct fbf_bf_move_ctx {
    fbf_bf_compression *b;
    double now;
} fbf_bf_move_ctx;

/* -ENOMEM (hs unchanged). */
int fbf_bf_holes_push(fbf_bf_holes *hs, double a, double b, int64_t mf);
/* Clips to now, sorts, merges, caps the count at FBF_BF_MAX_HOLES by
 * widening, sets mf (max free over each; with keep_mf, the pushed mf are
 * trusted bounds and only merges across gaps are measured) and drops the
 * holes where no job of res >= min_res can fit. */
void fbf_bf_holes_normalize(fbf_bf_compression *b, fbf_bf_holes *hs, double now, uint32_t min_res,
                            bool keep_mf);
/* The movement test, a qindex predicate on a fbf_bf_move_ctx. */
bool fbf_bf_may_move(void *ctx, const fbf_qagg *g);
/* With J's span still in the profile: bit i set (i < 64) when, by its run
 * table, hole i of b->holes holds no window of J's that ends before J's
 * reservation, and no other window of J's can meet it. */
uint64_t fbf_bf_holes_unfit(fbf_bf_compression *b, double now, const fbf_job *j);
/* earliest(J) with J's span out of the profile, given that no fit lies
 * outside b->holes below old (its current reservation) nor in the holes
 * of `unfit`. */
double fbf_bf_earliest_near_holes(fbf_bf_compression *b, double now, const fbf_job *j, double old,
                                  uint64_t unfit);

#endif
