/*
 * cells: a segment tree of range summaries over equal cells of time; see
 * cells.h for the contract.
 *
 * Why. At depth a pass releases tens of thousands of ranges, and the
 * searches of holes.c asked each range in a stretch in turn whether a
 * window could fit near it: the visits grew with the ranges released so
 * far, so the cost of a move grew with the pass. A summary per cell, and
 * per node the maximum of its children's, lets a search jump to the
 * next cell that may hold a fit in O(log cells).
 *
 * Invariants: node 1 is the root, node k has children 2k and 2k + 1,
 * leaves are n + i; a node's summary is valid only when it is not dirty,
 * and every ancestor of a dirty node is dirty, so a clean node's summary
 * covers clean leaves only. Summaries are bounds, never exact answers:
 * a clean node may be looser than its leaves (never tighter).
 */
#include "policies/cells.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

struct fbf_bf_cells {
    size_t n; /* leaves, a power of two */
    double t0, scale;
    fbf_bf_cells_fill_fn fill;
    fbf_bf_cell_sum *s; /* 2n nodes */
    bool *dirty;
};

void fbf_bf_cells_sum_empty(fbf_bf_cell_sum *s)
{
    for (unsigned q = 0; q < FBF_BF_CELL_LEVELS; q++)
        s->w[q] = -INFINITY;
    s->maxb = -INFINITY;
    s->minb = INFINITY;
}

/* Bounds are never NaN: plain comparisons (fmax is a call). */
static double max2(double x, double y)
{
    return x > y ? x : y;
}

void fbf_bf_cells_sum_add(fbf_bf_cell_sum *s, const double *w, double b)
{
    for (unsigned q = 0; q < FBF_BF_CELL_LEVELS; q++)
        s->w[q] = max2(s->w[q], w[q]);
    s->maxb = max2(s->maxb, b);
    s->minb = fabs(b) < s->minb ? fabs(b) : s->minb;
}

fbf_bf_cells *fbf_bf_cells_create(size_t n, double t0, double t1, fbf_bf_cells_fill_fn fill)
{
    if (!(t0 < t1) || !fill || n == 0 || n > ((size_t)1 << 24))
        return NULL;
    size_t m = 1;
    while (m < n)
        m <<= 1;
    fbf_bf_cells *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = m;
    c->t0 = t0;
    c->scale = (double)m / (t1 - t0);
    c->fill = fill;
    c->s = malloc(2 * m * sizeof *c->s);
    c->dirty = malloc(2 * m * sizeof *c->dirty);
    if (!c->s || !c->dirty || !(c->scale > 0) || !isfinite(c->scale)) {
        fbf_bf_cells_destroy(c);
        return NULL;
    }
    for (size_t k = 0; k < 2 * m; k++)
        c->dirty[k] = true;
    return c;
}

void fbf_bf_cells_destroy(fbf_bf_cells *c)
{
    if (!c)
        return;
    free(c->s);
    free(c->dirty);
    free(c);
}

size_t fbf_bf_cells_count(const fbf_bf_cells *c)
{
    return c->n;
}

/* Monotone in a: the ranges, sorted by start, are sorted by cell. */
size_t fbf_bf_cells_of(const fbf_bf_cells *c, double a)
{
    double x = (a - c->t0) * c->scale;
    if (!(x > 0))
        return 0;
    return x >= (double)(c->n - 1) ? c->n - 1 : (size_t)x;
}

unsigned fbf_bf_cells_level(uint32_t r)
{
    unsigned q = 0;
    while (q + 1 < FBF_BF_CELL_LEVELS && (r >> (q + 1)) != 0)
        q++;
    return q;
}

void fbf_bf_cells_dirty(fbf_bf_cells *c, size_t lo, size_t hi)
{
    if (hi >= c->n)
        hi = c->n - 1;
    for (size_t i = lo; i <= hi; i++) {
        size_t k = c->n + i;
        c->dirty[k] = true;
        /* Ancestors of a dirty node are dirty: stop at the first one. */
        for (k >>= 1; k && !c->dirty[k]; k >>= 1)
            c->dirty[k] = true;
    }
}

static bool skippable(const fbf_bf_cell_sum *s, unsigned q, double l, double kept)
{
    /* An empty summary (minb infinite) skips whatever the window. */
    return s->maxb <= kept - l && s->w[q] < l - 1e-9 * ((s->minb < INFINITY ? s->minb : 0) + l);
}

/* The first cell in [from, to) under node k (cells [nl, nr)) that cannot
 * be skipped, or SIZE_MAX. Dirty leaves met are filled; a dirty node
 * whose children both end up clean is computed again. */
static size_t find(fbf_bf_cells *c, void *ctx, size_t k, size_t nl, size_t nr, size_t from,
                   size_t to, unsigned q, double l, double kept)
{
    if (nr <= from || nl >= to)
        return SIZE_MAX;
    if (k >= c->n) {
        if (c->dirty[k]) {
            fbf_bf_cells_sum_empty(&c->s[k]);
            c->fill(ctx, nl, &c->s[k]);
            c->dirty[k] = false;
        }
        return skippable(&c->s[k], q, l, kept) ? SIZE_MAX : nl;
    }
    if (!c->dirty[k] && skippable(&c->s[k], q, l, kept))
        return SIZE_MAX;
    size_t mid = nl + (nr - nl) / 2;
    size_t r = find(c, ctx, 2 * k, nl, mid, from, to, q, l, kept);
    if (r == SIZE_MAX)
        r = find(c, ctx, 2 * k + 1, mid, nr, from, to, q, l, kept);
    if (c->dirty[k] && !c->dirty[2 * k] && !c->dirty[2 * k + 1]) {
        const fbf_bf_cell_sum *a = &c->s[2 * k], *b = &c->s[2 * k + 1];
        fbf_bf_cell_sum *s = &c->s[k];
        for (unsigned i = 0; i < FBF_BF_CELL_LEVELS; i++)
            s->w[i] = max2(a->w[i], b->w[i]);
        s->maxb = max2(a->maxb, b->maxb);
        s->minb = a->minb < b->minb ? a->minb : b->minb;
        c->dirty[k] = false;
    }
    return r;
}

size_t fbf_bf_cells_next(fbf_bf_cells *c, void *ctx, size_t from, size_t to, unsigned q, double l,
                         double kept)
{
    if (to > c->n)
        to = c->n;
    if (from >= to)
        return to;
    size_t r = find(c, ctx, 1, 0, c->n, from, to, q, l, kept);
    return r == SIZE_MAX ? to : r;
}
