/*
 * cell_runs: which cells of time hold a released range that a window of
 * r resources for l seconds could meet: a segment tree of staircases
 * (level_runs.h) over equal cells, each range in the cell of its start,
 * summaries filled on demand through the owner's callback for the cells
 * it marked dirty. A range without a table makes its cells "wide" (they
 * answer nothing). Not thread-safe; -ENOMEM: do without it. Details:
 * docs/backfilling.md.
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
