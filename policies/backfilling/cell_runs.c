/*
 * cell_runs: see cell_runs.h. Node 1 is the root, node k has children 2k
 * and 2k + 1, leaves are n + i; a clean node is the exact merge of its
 * clean children, and every ancestor of a dirty node is dirty.
 */
#include "policies/backfilling/cell_runs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct node {
    fbf_bf_stair *v;
    size_t n, cap;
    double maxb, minb;
    bool wide;
} node;

struct fbf_bf_cells {
    size_t n; /* leaves, a power of two */
    double t0, scale;
    int64_t capacity;
    fbf_bf_cells_fill_fn fill;
    fbf_bf_stairs *st; /* scratch of the leaves' fills */
    node *s;           /* 2n nodes */
    bool *dirty;
};

fbf_bf_cells *fbf_bf_cells_create(size_t n, double t0, double t1, int64_t capacity,
                                  fbf_bf_cells_fill_fn fill)
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
    c->capacity = capacity;
    c->fill = fill;
    c->st = fbf_bf_stairs_create();
    c->s = calloc(2 * m, sizeof *c->s);
    c->dirty = malloc(2 * m * sizeof *c->dirty);
    if (!c->st || !c->s || !c->dirty || !(c->scale > 0) || !isfinite(c->scale)) {
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
    if (c->s)
        for (size_t k = 0; k < 2 * c->n; k++)
            free(c->s[k].v);
    free(c->s);
    free(c->dirty);
    fbf_bf_stairs_destroy(c->st);
    free(c);
}

size_t fbf_bf_cells_count(const fbf_bf_cells *c)
{
    return c->n;
}

size_t fbf_bf_cells_of(const fbf_bf_cells *c, double a)
{
    double x = (a - c->t0) * c->scale;
    if (!(x > 0))
        return 0;
    return x >= (double)(c->n - 1) ? c->n - 1 : (size_t)x;
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

static int fill_leaf(fbf_bf_cells *c, void *ctx, size_t k)
{
    node *x = &c->s[k];
    x->maxb = -INFINITY;
    x->minb = INFINITY;
    x->wide = false;
    fbf_bf_stairs_clear(c->st);
    if (c->fill(ctx, k - c->n, c->st, &x->maxb, &x->minb, &x->wide) < 0 ||
        fbf_bf_stairs_take(c->st, c->capacity, &x->v, &x->n, &x->cap) < 0) {
        fbf_bf_stairs_clear(c->st);
        return -ENOMEM;
    }
    c->dirty[k] = false;
    return 0;
}

/* Node k from its children, both clean. */
static int join(fbf_bf_cells *c, size_t k)
{
    const node *a = &c->s[2 * k], *b = &c->s[2 * k + 1];
    node *x = &c->s[k];
    if (fbf_bf_stairs_merge2(a->v, a->n, b->v, b->n, &x->v, &x->n, &x->cap) < 0)
        return -ENOMEM;
    x->maxb = a->maxb > b->maxb ? a->maxb : b->maxb;
    x->minb = a->minb < b->minb ? a->minb : b->minb;
    x->wide = a->wide || b->wide;
    c->dirty[k] = false;
    return 0;
}

/* Node k clean, and the dirty part of its subtree with it. */
static int compute(fbf_bf_cells *c, void *ctx, size_t k)
{
    if (!c->dirty[k])
        return 0;
    if (k >= c->n)
        return fill_leaf(c, ctx, k);
    if (compute(c, ctx, 2 * k) < 0 || compute(c, ctx, 2 * k + 1) < 0)
        return -ENOMEM;
    return join(c, k);
}

static bool skippable(const node *x, uint32_t res, double l, double kept)
{
    if (x->wide || !(x->maxb <= kept - l))
        return false;
    size_t i = fbf_bf_stairs_at(x->v, x->n, res);
    double w = i ? x->v[i - 1].w : 0;
    /* An empty node (minb infinite) skips whatever the window. */
    return w < l - 1e-9 * ((x->minb < INFINITY ? x->minb : 0) + l);
}

/* The first cell in [from, to) under node k (cells [nl, nr)) that cannot
 * be skipped, or SIZE_MAX. Dirty leaves met are filled; a dirty node
 * whose children both end up clean is joined again. */
static size_t find(fbf_bf_cells *c, void *ctx, size_t k, size_t nl, size_t nr, size_t from,
                   size_t to, uint32_t res, double l, double kept, int *err)
{
    if (nr <= from || nl >= to || *err)
        return SIZE_MAX;
    if (k >= c->n) {
        if (c->dirty[k] && (*err = fill_leaf(c, ctx, k)) < 0)
            return nl;
        return skippable(&c->s[k], res, l, kept) ? SIZE_MAX : nl;
    }
    if (!c->dirty[k] && skippable(&c->s[k], res, l, kept))
        return SIZE_MAX;
    size_t mid = nl + (nr - nl) / 2;
    size_t r = find(c, ctx, 2 * k, nl, mid, from, to, res, l, kept, err);
    if (r == SIZE_MAX)
        r = find(c, ctx, 2 * k + 1, mid, nr, from, to, res, l, kept, err);
    if (!*err && c->dirty[k] && !c->dirty[2 * k] && !c->dirty[2 * k + 1])
        *err = join(c, k);
    return r;
}

size_t fbf_bf_cells_next(fbf_bf_cells *c, void *ctx, size_t from, size_t to, uint32_t res,
                         double l, double kept, int *err)
{
    *err = 0;
    if (to > c->n)
        to = c->n;
    if (from >= to)
        return to;
    /* Most searches start in a cell they must visit: one look at it. */
    size_t leaf = c->n + from;
    if (!c->dirty[leaf] && !skippable(&c->s[leaf], res, l, kept))
        return from;
    size_t r = find(c, ctx, 1, 0, c->n, from, to, res, l, kept, err);
    if (*err)
        return from;
    return r == SIZE_MAX ? to : r;
}

/* The nodes that cover [from, to) exactly, computed, appended to out. */
static int cover(fbf_bf_cells *c, void *ctx, size_t k, size_t nl, size_t nr, size_t from,
                 size_t to, size_t *out, size_t *n)
{
    if (nr <= from || nl >= to)
        return 0;
    if (from <= nl && nr <= to) {
        out[(*n)++] = k;
        return compute(c, ctx, k);
    }
    size_t mid = nl + (nr - nl) / 2;
    if (cover(c, ctx, 2 * k, nl, mid, from, to, out, n) < 0 ||
        cover(c, ctx, 2 * k + 1, mid, nr, from, to, out, n) < 0)
        return -ENOMEM;
    /* Joined here too, so that the next change costs one path. */
    if (c->dirty[k] && !c->dirty[2 * k] && !c->dirty[2 * k + 1])
        return join(c, k);
    return 0;
}

int fbf_bf_cells_gather(fbf_bf_cells *c, void *ctx, size_t from, size_t to, fbf_bf_stairs *st,
                        bool *wide)
{
    size_t nodes[2 * 64], n = 0; /* at most two per level */
    if (to > c->n)
        to = c->n;
    if (from >= to)
        return 0;
    if (cover(c, ctx, 1, 0, c->n, from, to, nodes, &n) < 0)
        return -ENOMEM;
    fbf_bf_stairs_clear(st); /* the fills may have used it */
    for (size_t i = 0; i < n; i++) {
        const node *x = &c->s[nodes[i]];
        *wide |= x->wide;
        if (fbf_bf_stairs_gather(st, x->v, x->n) < 0)
            return -ENOMEM;
    }
    return 0;
}
