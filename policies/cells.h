/*
 * cells: an index over the ranges a conservative compression pass
 * released (policies/runs.c's members), so that a search for windows of
 * (r resources, l seconds) jumps over stretches of ranges where none can
 * hold one, instead of visiting each. Private to policies/.
 *
 * Contract. Time [t0, t1) is cut into a power of two of equal cells; each
 * range belongs to the cell of its start (ranges before t0 to the first,
 * after t1 to the last). A cell's summary bounds its ranges from above:
 * for each level q, w[q] >= the longest run of free() >= 2^q meeting any
 * of them; maxb >= their ends; minb <= |their ends|. A query for (r, l,
 * kept) reads level floor(log2 r) (2^q <= r, so the bound holds for r)
 * and skips a cell only when every range in it could be skipped on its
 * own: no run long enough (w[q] < l less the rounding slack of
 * holes.c, 1e-9 * (|end| + l)) and every end at or before kept - l.
 *
 * Summaries are computed on demand by the owner's fill callback, only
 * for cells marked dirty (all of them at creation): the owner marks a
 * cell whenever a range in it is added, merged, removed or its table
 * dropped. Ownership: _create/_destroy; not thread-safe.
 */
#ifndef FBF_CELLS_H
#define FBF_CELLS_H

#include <stddef.h>
#include <stdint.h>

#define FBF_BF_CELL_LEVELS 16

typedef struct fbf_bf_cell_sum {
    double w[FBF_BF_CELL_LEVELS];
    double maxb, minb;
} fbf_bf_cell_sum;

typedef struct fbf_bf_cells fbf_bf_cells;

/* Computes the summary of cell c (its ranges start in [start(c),
 * start(c + 1))) into *out, which comes in empty. */
typedef void (*fbf_bf_cells_fill_fn)(void *ctx, size_t c, fbf_bf_cell_sum *out);

/* At least n cells (rounded up to a power of two) over [t0, t1), t0 < t1;
 * NULL on allocation failure. */
fbf_bf_cells *fbf_bf_cells_create(size_t n, double t0, double t1, fbf_bf_cells_fill_fn fill);
void fbf_bf_cells_destroy(fbf_bf_cells *c);

size_t fbf_bf_cells_count(const fbf_bf_cells *c);
/* The cell of a range that starts at a: monotone in a, so ranges sorted
 * by start are sorted by cell. */
size_t fbf_bf_cells_of(const fbf_bf_cells *c, double a);

/* Cells lo..hi (inclusive) must be computed again. */
void fbf_bf_cells_dirty(fbf_bf_cells *c, size_t lo, size_t hi);

/* The folding of one range's bounds into a summary: its longest run of
 * free() >= each level in w (w[q] for 2^q), and its end b. */
void fbf_bf_cells_sum_empty(fbf_bf_cell_sum *s);
void fbf_bf_cells_sum_add(fbf_bf_cell_sum *s, const double *w, double b);

/* The level a query for r resources reads. */
unsigned fbf_bf_cells_level(uint32_t r);

/* The first cell in [from, to) that a query for (level q, l, kept) cannot
 * skip; `to` if there is none. */
size_t fbf_bf_cells_next(fbf_bf_cells *c, void *ctx, size_t from, size_t to, unsigned q, double l,
                         double kept);

#endif
