/*
 * cells: an index over the ranges a conservative compression pass
 * released (policies/backfilling/hole_runs.c's members), so that neither a search for
 * windows nor the table of a hole has to visit them one by one. Private
 * to policies/.
 *
 * Contract. Time [t0, t1) is cut into a power of two of equal cells; each
 * range belongs to the cell of its start (ranges before t0 to the first,
 * after t1 to the last). Each cell, and each node of a segment tree over
 * the cells, keeps the staircase (policies/backfilling/level_runs.h) of the steps of all
 * the ranges under it, which answers per r for the runs of free() >= r
 * meeting any of them, and bounds on their ends (maxb >= every end, minb
 * <= every |end|). A range whose table cannot answer makes its cell and
 * the nodes above it "wide": they answer nothing.
 *
 * Summaries are computed on demand by the owner's fill callback, only
 * for cells marked dirty (all of them at creation): the owner marks a
 * cell whenever a range in it is added, merged, removed or its table
 * dropped. Ownership: _create/_destroy; not thread-safe. Errors: -ENOMEM
 * (the caller then does without the index).
 */
#ifndef FBF_CELLS_H
#define FBF_CELLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policies/backfilling/level_runs.h"

typedef struct fbf_bf_cells fbf_bf_cells;

/* Gathers into st the steps of every range of cell c (those starting in
 * it), and sets *maxb, *minb (which come in as -INFINITY, INFINITY) and
 * *wide (false) for them. 0 or -ENOMEM. */
typedef int (*fbf_bf_cells_fill_fn)(void *ctx, size_t c, fbf_bf_stairs *st, double *maxb,
                                    double *minb, bool *wide);

/* At least n cells (rounded up to a power of two) over [t0, t1), t0 < t1,
 * for a profile of `capacity` resources; NULL on allocation failure. */
fbf_bf_cells *fbf_bf_cells_create(size_t n, double t0, double t1, int64_t capacity,
                                  fbf_bf_cells_fill_fn fill);
void fbf_bf_cells_destroy(fbf_bf_cells *c);

size_t fbf_bf_cells_count(const fbf_bf_cells *c);
/* The cell of a range that starts at a: monotone in a, so ranges sorted
 * by start are sorted by cell. */
size_t fbf_bf_cells_of(const fbf_bf_cells *c, double a);

/* Cells lo..hi (inclusive) must be computed again. */
void fbf_bf_cells_dirty(fbf_bf_cells *c, size_t lo, size_t hi);

/* The first cell in [from, to) that a search for windows of res
 * resources and l seconds, ending before kept, cannot skip; `to` if there
 * is none. A cell is skipped when no run of free() >= res at least l long
 * (less may_move.c's rounding slack, 1e-9 * (|end| + l)) meets its ranges
 * and every one of them ends at or before kept - l. -ENOMEM in *err
 * (and `from` returned) when a summary could not be computed. */
size_t fbf_bf_cells_next(fbf_bf_cells *c, void *ctx, size_t from, size_t to, uint32_t res,
                         double l, double kept, int *err);

/* Clears st and gathers into it the staircases of cells [from, to)
 * (through O(log n) nodes), and sets *wide when one of them is wide. The
 * fill callback runs before st is cleared, and may use it. 0 or -ENOMEM. */
int fbf_bf_cells_gather(fbf_bf_cells *c, void *ctx, size_t from, size_t to, fbf_bf_stairs *st,
                        bool *wide);

#endif
