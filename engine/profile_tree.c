/*
 * profile_tree: storage, updates and in-order walks of the profile's B+
 * tree (see profile_tree.h for the node layout and the aggregates).
 *
 * Why a B+ tree: with millions of breakpoints nearly every level of a
 * binary tree is a cache miss (a treap of 2M breakpoints took about 2.5 µs
 * a lookup, 29 levels deep on average), while a node here is a few
 * adjacent cache lines and the tree is about 6 levels deep.
 *
 * Invariants:
 *   - keys strictly increase from leaf to leaf; each key appears once;
 *   - a key is stored exactly while some live span starts or ends at it
 *     (refs counts those endpoints). Its delta may be 0 (one span ends
 *     where another of the same size starts); the key is kept anyway,
 *     because a remove must find both endpoints of the span it undoes;
 *   - every node but the root holds at least LEAF_MIN (INNER_MIN)
 *     entries: one that falls below takes entries from a sibling or merges
 *     with it. A root inner node has at least 2 children;
 *   - every hi[] and a[] is current once an update returns.
 *
 * Memory: leaves and inner nodes live in two pools of fixed-size slots
 * addressed by 32-bit index (so a pool can be realloc'ed); a freed slot is
 * linked into its pool's free list through its first 4 bytes. Only
 * fbf_ptree_reserve grows a pool, so an update never fails half-way.
 */
#include "engine/profile_tree.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX FBF_PTREE_LEAF_MAX
#define LEAF_MIN (LEAF_MAX * 3 / 8)
#define INNER_MAX FBF_PTREE_INNER_MAX
#define INNER_MIN (INNER_MAX * 3 / 8)
#define MIN_POOL 16u

typedef fbf_ptree_agg agg;
typedef fbf_ptree_leaf leaf;
typedef fbf_ptree_inner inner;
typedef fbf_ptree_pool pool;

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* ---- pools ---------------------------------------------------------------- */

static int pool_init(pool *pl, size_t size)
{
    *pl = (pool){.size = size, .cap = MIN_POOL};
    pl->v = malloc(MIN_POOL * size);
    return pl->v ? 0 : -ENOMEM;
}

/* Makes sure k slots can be taken without reallocating, so the tree code
 * may hold node pointers across takes. */
static int pool_reserve(pool *pl, uint32_t k)
{
    if (pl->nfree + (pl->cap - pl->hw) >= k)
        return 0;
    uint32_t ncap = pl->cap;
    while (pl->nfree + (ncap - pl->hw) < k) {
        if (ncap > UINT32_MAX / 2)
            return -ENOMEM;
        ncap *= 2;
    }
    unsigned char *nv = realloc(pl->v, (size_t)ncap * pl->size);
    if (!nv)
        return -ENOMEM;
    pl->v = nv;
    pl->cap = ncap;
    return 0;
}

static uint32_t pool_take(pool *pl)
{
    if (pl->nfree) {
        uint32_t x = pl->free_head;
        memcpy(&pl->free_head, pl->v + (size_t)x * pl->size, sizeof pl->free_head);
        pl->nfree--;
        return x;
    }
    return pl->hw++;
}

static void pool_give(pool *pl, uint32_t x)
{
    memcpy(pl->v + (size_t)x * pl->size, &pl->free_head, sizeof pl->free_head);
    pl->free_head = x;
    pl->nfree++;
}

static leaf *L(const fbf_ptree *p, uint32_t x) { return (leaf *)p->leaves.v + x; }
static inner *I(const fbf_ptree *p, uint32_t x) { return (inner *)p->inners.v + x; }

/* ---- aggregates ----------------------------------------------------------- */

static agg leaf_agg(const leaf *l)
{
    int64_t s = 0, mx = INT64_MIN, mn = INT64_MAX;
    for (uint32_t i = 0; i < l->n; i++) {
        s += l->delta[i];
        mx = max64(mx, s);
        mn = min64(mn, s);
    }
    return (agg){s, mx, mn};
}

static agg inner_agg(const inner *x)
{
    int64_t s = 0, mx = INT64_MIN, mn = INT64_MAX;
    for (uint32_t i = 0; i < x->n; i++) {
        mx = max64(mx, s + x->a[i].maxp);
        mn = min64(mn, s + x->a[i].minp);
        s += x->a[i].sum;
    }
    return (agg){s, mx, mn};
}

/* Child i of x (whose children are at `level`) after it changed. */
static void refresh(const fbf_ptree *p, inner *x, uint32_t i, unsigned level)
{
    uint32_t k = x->kid[i];
    if (level == 0) {
        const leaf *l = L(p, k);
        x->hi[i] = l->key[l->n - 1];
        x->a[i] = leaf_agg(l);
    } else {
        const inner *c = I(p, k);
        x->hi[i] = c->hi[c->n - 1];
        x->a[i] = inner_agg(c);
    }
}

/* ---- updates -------------------------------------------------------------- */

/* Leaves and inner nodes share the shape of their moves: entries [from,
 * from + k) of one node to position at of another (or the same). */
static void leaf_move(leaf *dst, uint32_t at, leaf *src, uint32_t from, uint32_t k)
{
    memmove(&dst->key[at], &src->key[from], k * sizeof dst->key[0]);
    memmove(&dst->delta[at], &src->delta[from], k * sizeof dst->delta[0]);
    memmove(&dst->refs[at], &src->refs[from], k * sizeof dst->refs[0]);
}

static void inner_move(inner *dst, uint32_t at, inner *src, uint32_t from, uint32_t k)
{
    memmove(&dst->hi[at], &src->hi[from], k * sizeof dst->hi[0]);
    memmove(&dst->a[at], &src->a[from], k * sizeof dst->a[0]);
    memmove(&dst->kid[at], &src->kid[from], k * sizeof dst->kid[0]);
}

enum { FITS, SPLIT, SHRUNK }; /* what upsert leaves its parent to do */

static int leaf_upsert(fbf_ptree *p, uint32_t x, double key, int64_t d, int dref,
                       uint32_t *right)
{
    leaf *l = L(p, x);
    uint32_t pos = 0;
    while (pos < l->n && l->key[pos] < key)
        pos++;
    if (pos < l->n && l->key[pos] == key) {
        l->delta[pos] += d;
        l->refs[pos] += (uint32_t)dref;
        /* refs == 0 with delta != 0 only follows a remove() of a span that
         * was never added; keeping the key then keeps sums consistent. */
        if (l->refs[pos] != 0 || l->delta[pos] != 0)
            return FITS;
        leaf_move(l, pos, l, pos + 1, l->n - pos - 1);
        l->n--;
        p->count--;
        return l->n < LEAF_MIN ? SHRUNK : FITS;
    }
    p->count++;
    bool split = l->n == LEAF_MAX;
    if (split) { /* in halves, then the key goes into one of them */
        uint32_t r = pool_take(&p->leaves), half = LEAF_MAX / 2;
        leaf *rl = L(p, r);
        leaf_move(rl, 0, l, half, LEAF_MAX - half);
        rl->n = LEAF_MAX - half;
        l->n = half;
        *right = r;
        if (pos > half) {
            pos -= half;
            l = rl;
        }
    }
    leaf_move(l, pos + 1, l, pos, l->n - pos);
    l->key[pos] = key;
    l->delta[pos] = d;
    l->refs[pos] = 1;
    l->n++;
    return split ? SPLIT : FITS;
}

/* A node at either level: its entry count, and the move of entries
 * [from, from + k) of src to position at of dst. */
static uint32_t *count_of(const fbf_ptree *p, uint32_t x, unsigned level)
{
    return level ? &I(p, x)->n : &L(p, x)->n;
}

static void node_move(const fbf_ptree *p, unsigned level, uint32_t dst, uint32_t at,
                      uint32_t src, uint32_t from, uint32_t k)
{
    if (level)
        inner_move(I(p, dst), at, I(p, src), from, k);
    else
        leaf_move(L(p, dst), at, L(p, src), from, k);
}

/* Child i of x (children at `level`) fell below its minimum: it takes
 * entries from a neighbour, or the two merge. */
static void rebalance(fbf_ptree *p, inner *x, uint32_t i, unsigned level)
{
    if (x->n < 2)
        return;
    uint32_t lo = i + 1 < x->n ? i : i - 1, hi = lo + 1;
    uint32_t a = x->kid[lo], b = x->kid[hi];
    uint32_t *na = count_of(p, a, level), *nb = count_of(p, b, level), total = *na + *nb;
    if (total <= (level ? INNER_MAX : LEAF_MAX)) {
        node_move(p, level, a, *na, b, 0, *nb);
        *na = total;
        pool_give(level ? &p->inners : &p->leaves, b);
        inner_move(x, hi, x, hi + 1, x->n - hi - 1);
        x->n--;
        refresh(p, x, lo, level);
        return;
    }
    if (*na < total / 2) { /* b's first entries to a's end */
        uint32_t k = total / 2 - *na;
        node_move(p, level, a, *na, b, 0, k);
        node_move(p, level, b, 0, b, k, *nb - k);
        *na += k;
        *nb -= k;
    } else { /* a's last entries to b's front */
        uint32_t k = *na - total / 2;
        node_move(p, level, b, k, b, 0, *nb);
        node_move(p, level, b, 0, a, *na - k, k);
        *na -= k;
        *nb += k;
    }
    refresh(p, x, lo, level);
    refresh(p, x, hi, level);
}

/* Adds d to the delta and dref (+1 or -1) to the endpoint count at key
 * under x (at `level`), inserting the key if absent and removing it when
 * no span ends there any more. On SPLIT, *right is x's new right sibling.
 * Nodes a split needs must have been reserved. */
static int upsert(fbf_ptree *p, uint32_t x, unsigned level, double key, int64_t d, int dref,
                  uint32_t *right)
{
    if (level == 0)
        return leaf_upsert(p, x, key, d, dref, right);
    inner *in = I(p, x);
    uint32_t i = fbf_ptree_route(in, key), nw = 0;
    int st = upsert(p, in->kid[i], level - 1, key, d, dref, &nw);
    refresh(p, in, i, level - 1);
    if (st == SHRUNK) {
        rebalance(p, in, i, level - 1);
        return in->n < INNER_MIN ? SHRUNK : FITS;
    }
    if (st != SPLIT)
        return FITS;
    /* Child i's new right sibling goes in at i + 1. */
    bool split = in->n == INNER_MAX;
    if (split) {
        uint32_t r = pool_take(&p->inners), half = INNER_MAX / 2;
        inner *ri = I(p, r);
        inner_move(ri, 0, in, half, INNER_MAX - half);
        ri->n = INNER_MAX - half;
        in->n = half;
        *right = r;
        if (i + 1 > half) {
            i -= half;
            in = ri;
        }
    }
    inner_move(in, i + 2, in, i + 1, in->n - i - 1);
    in->kid[i + 1] = nw;
    in->n++;
    refresh(p, in, i + 1, level - 1);
    return split ? SPLIT : FITS;
}

void fbf_ptree_upsert(fbf_ptree *p, double key, int64_t d, int dref)
{
    uint32_t right = 0;
    int st = upsert(p, p->root, p->height, key, d, dref, &right);
    if (st == SPLIT) { /* a new root above the two halves */
        uint32_t r = pool_take(&p->inners);
        inner *in = I(p, r);
        in->n = 2;
        in->kid[0] = p->root;
        in->kid[1] = right;
        refresh(p, in, 0, p->height);
        refresh(p, in, 1, p->height);
        p->root = r;
        p->height++;
    } else if (p->height > 0 && I(p, p->root)->n == 1) { /* the root's one child */
        uint32_t old = p->root;
        p->root = I(p, old)->kid[0];
        pool_give(&p->inners, old);
        p->height--;
    }
}

/* ---- walks --------------------------------------------------------------- */

/* In-order over the keys in (lo, hi) under x (keys above lb), skipping
 * the children outside; base = sum of the deltas before x. Recursion
 * depth is the height. */
static void walk_between(const fbf_ptree *p, uint32_t x, unsigned h, int64_t base, double lb,
                         double lo, double hi, void (*fn)(double, int64_t, void *), void *ctx)
{
    if (h == 0) {
        const leaf *l = L(p, x);
        for (uint32_t i = 0; i < l->n && l->key[i] < hi; i++) {
            base += l->delta[i];
            if (l->key[i] > lo)
                fn(l->key[i], base, ctx);
        }
        return;
    }
    const inner *in = I(p, x);
    for (uint32_t i = 0; i < in->n; i++) {
        double klo = i ? in->hi[i - 1] : lb;
        if (!(klo < hi))
            return;
        if (in->hi[i] > lo)
            walk_between(p, in->kid[i], h - 1, base, klo, lo, hi, fn, ctx);
        base += in->a[i].sum;
    }
}

static void walk(const fbf_ptree *p, uint32_t x, unsigned h, int64_t *acc,
                 void (*fn)(double, int64_t, void *), void *ctx)
{
    if (h == 0) {
        const leaf *l = L(p, x);
        for (uint32_t i = 0; i < l->n; i++)
            fn(l->key[i], *acc += l->delta[i], ctx);
        return;
    }
    const inner *in = I(p, x);
    for (uint32_t i = 0; i < in->n; i++)
        walk(p, in->kid[i], h - 1, acc, fn, ctx);
}

void fbf_ptree_foreach(const fbf_ptree *t, void (*fn)(double key, int64_t sum, void *ctx),
                       void *ctx)
{
    int64_t acc = 0;
    walk(t, t->root, t->height, &acc, fn, ctx);
}

void fbf_ptree_foreach_between(const fbf_ptree *t, double lo, double hi,
                               void (*fn)(double key, int64_t sum, void *ctx), void *ctx)
{
    walk_between(t, t->root, t->height, 0, -INFINITY, lo, hi, fn, ctx);
}

/* ---- the tree ------------------------------------------------------------ */

int fbf_ptree_init(fbf_ptree *t)
{
    *t = (fbf_ptree){0};
    if (pool_init(&t->leaves, sizeof(leaf)) < 0 || pool_init(&t->inners, sizeof(inner)) < 0) {
        fbf_ptree_fini(t);
        return -ENOMEM;
    }
    t->root = pool_take(&t->leaves);
    L(t, t->root)->n = 0;
    return 0;
}

void fbf_ptree_fini(fbf_ptree *t)
{
    free(t->leaves.v);
    free(t->inners.v);
    t->leaves.v = t->inners.v = NULL;
}

int fbf_ptree_reserve(fbf_ptree *t)
{
    /* Each insertion splits at most one leaf and one inner node a level,
     * plus a new root; the first may add a level for the second. */
    if (pool_reserve(&t->leaves, 2) < 0 || pool_reserve(&t->inners, 2 * t->height + 4) < 0)
        return -ENOMEM;
    return 0;
}
