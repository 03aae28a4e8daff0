/*
 * runs_over_holes: see its header. Nodes merge lazily, on the way back
 * from a search that had to look at both children; a clean node's
 * summary is exact and every ancestor of a dirty node is dirty.
 */
#include "policies/backfilling/runs_over_holes.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define L FBF_BF_HSUM_LEAVES

typedef struct node {
    const fbf_bf_stair *v; /* the leaf's table, or buf */
    size_t n;
    fbf_bf_stair *buf; /* inner nodes: the merge, owned */
    size_t cap;
    bool clean;
    bool opaque; /* a hole under it has no table: look through */
} node;

struct fbf_bf_hsum {
    fbf_bf_hsum_leaf_fn leaf;
    node s[2 * L];
};

/* One query's bounds and thresholds. */
typedef struct query {
    fbf_bf_hsum *h;
    void *ctx;
    size_t from, to;
    uint32_t res;
    double l, end;
} query;

fbf_bf_hsum *fbf_bf_hsum_create(fbf_bf_hsum_leaf_fn leaf)
{
    if (!leaf)
        return NULL;
    fbf_bf_hsum *h = calloc(1, sizeof *h);
    if (h)
        h->leaf = leaf;
    return h;
}

void fbf_bf_hsum_destroy(fbf_bf_hsum *h)
{
    if (!h)
        return;
    for (size_t k = 1; k < 2 * L; k++)
        free(h->s[k].buf);
    free(h);
}

void fbf_bf_hsum_changed(fbf_bf_hsum *h, size_t i)
{
    if (i >= L)
        return;
    for (size_t k = L + i; k && h->s[k].clean; k >>= 1)
        h->s[k].clean = false;
}

void fbf_bf_hsum_reset(fbf_bf_hsum *h)
{
    for (size_t k = 1; k < 2 * L; k++)
        h->s[k].clean = false;
}

/* Does a clean node rule the query out? */
static bool rules_out(const node *x, const query *q)
{
    if (x->opaque)
        return false;
    size_t n = fbf_bf_stairs_at(x->v, x->n, q->res);
    double w = n ? x->v[n - 1].w : 0, e = n ? x->v[n - 1].e : -INFINITY;
    return w < q->l && e < q->end;
}

static void merge_children(fbf_bf_hsum *h, size_t k)
{
    node *x = &h->s[k], *a = &h->s[2 * k], *b = &h->s[2 * k + 1];
    if (!a->clean || !b->clean)
        return;
    x->opaque = a->opaque || b->opaque;
    x->n = 0;
    if (!x->opaque &&
        fbf_bf_stairs_merge2(a->v, a->n, b->v, b->n, &x->buf, &x->n, &x->cap) < 0)
        return; /* stays dirty: searches look through it */
    x->v = x->buf;
    x->clean = true;
}

/* The first hole under node k (covering [lo, hi)) that the query cannot
 * pass over, or q->to. */
static size_t visit(const query *q, size_t k, size_t lo, size_t hi)
{
    if (hi <= q->from || lo >= q->to)
        return q->to;
    node *x = &q->h->s[k];
    bool inside = q->from <= lo && hi <= q->to;
    if (hi - lo == 1) {
        if (!x->clean) {
            x->opaque = q->h->leaf(q->ctx, lo, &x->v, &x->n) < 0;
            x->clean = true;
        }
        return rules_out(x, q) ? q->to : lo;
    }
    if (inside && x->clean && rules_out(x, q))
        return q->to;
    size_t mid = lo + (hi - lo) / 2, i = visit(q, 2 * k, lo, mid);
    if (i == q->to)
        i = visit(q, 2 * k + 1, mid, hi);
    if (i == q->to && !x->clean)
        merge_children(q->h, k);
    return i;
}

size_t fbf_bf_hsum_first(fbf_bf_hsum *h, void *ctx, size_t from, size_t to, uint32_t res,
                         double l, double end)
{
    if (to > L)
        to = L;
    if (from >= to)
        return to;
    query q = {h, ctx, from, to, res, l, end};
    return visit(&q, 1, 0, L);
}
