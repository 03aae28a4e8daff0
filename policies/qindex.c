/*
 * qindex: treap over queue order with subtree aggregates (see qindex.h).
 *
 * Invariants: in-order traversal is strictly increasing in
 * fbf_job_key_cmp; heap order on prio (parent >= child); for every node,
 * agg = combination of its own job's values and its children's agg; nil
 * (slot 0) holds the neutral aggregate and is never written after create.
 * in[h] tells whether handle h is indexed (its slot is meaningful only
 * then). Priorities come from a fixed splitmix64 sequence: reproducible.
 * Groups (the _at functions) are further trees over the same node array,
 * rooted where the caller says; a node belongs to one tree at a time.
 */
#include "policies/qindex.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct qnode {
    uint32_t l, r, prio;
    uint8_t in;
    fbf_qagg agg;
    double subtime; /* the job's key, copied: descents touch no job record */
    uint64_t seq;
} qnode;

struct fbf_qindex {
    qnode *n; /* slot h + 1 for handle h */
    size_t cap;
    uint32_t root;
    size_t count;
    uint64_t rng;
};

static const fbf_qagg neutral = {UINT32_MAX, INFINITY, INFINITY, -INFINITY};

static uint32_t next_prio(fbf_qindex *q)
{
    uint64_t z = (q->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

static fbf_qagg own(fbf_sched *s, uint32_t x)
{
    const fbf_job *j = fbf_sched_job(s, x - 1);
    double r = isnan(j->rsv) ? INFINITY : j->rsv;
    return (fbf_qagg){j->res, j->walltime, r, r};
}

static void combine(fbf_qagg *a, const fbf_qagg *b)
{
    if (b->min_res < a->min_res)
        a->min_res = b->min_res;
    if (b->min_wall < a->min_wall)
        a->min_wall = b->min_wall;
    if (b->min_rsv < a->min_rsv)
        a->min_rsv = b->min_rsv;
    if (b->max_rsv > a->max_rsv)
        a->max_rsv = b->max_rsv;
}

static void pull(fbf_qindex *q, fbf_sched *s, uint32_t x)
{
    qnode *n = q->n;
    fbf_qagg a = own(s, x);
    combine(&a, &n[n[x].l].agg);
    combine(&a, &n[n[x].r].agg);
    n[x].agg = a;
}

static int cmp(const fbf_qindex *q, uint32_t x, const fbf_job *k)
{
    const qnode *n = &q->n[x];
    if (n->subtime < k->subtime)
        return -1;
    if (n->subtime > k->subtime)
        return 1;
    return n->seq < k->seq ? -1 : (n->seq > k->seq);
}

fbf_qindex *fbf_qindex_create(void)
{
    fbf_qindex *q = calloc(1, sizeof *q);
    if (!q || !(q->n = calloc(1024, sizeof *q->n))) {
        free(q);
        return NULL;
    }
    q->cap = 1024;
    q->n[0].agg = neutral;
    q->rng = 0x2545f4914f6cdd1dull;
    return q;
}

void fbf_qindex_destroy(fbf_qindex *q)
{
    if (!q)
        return;
    free(q->n);
    free(q);
}

/* Splits x into keys < k (*l) and keys > k (*r); k itself is not in x. */
static void split(fbf_qindex *q, fbf_sched *s, uint32_t x, const fbf_job *k, uint32_t *l,
                  uint32_t *r)
{
    if (!x) {
        *l = *r = 0;
        return;
    }
    if (cmp(q, x, k) < 0) {
        split(q, s, q->n[x].r, k, &q->n[x].r, r);
        *l = x;
    } else {
        split(q, s, q->n[x].l, k, l, &q->n[x].l);
        *r = x;
    }
    pull(q, s, x);
}

static uint32_t merge(fbf_qindex *q, fbf_sched *s, uint32_t a, uint32_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (q->n[a].prio > q->n[b].prio) {
        q->n[a].r = merge(q, s, q->n[a].r, b);
        pull(q, s, a);
        return a;
    }
    q->n[b].l = merge(q, s, a, q->n[b].l);
    pull(q, s, b);
    return b;
}

/* Inserts x below t: descends while priorities are higher, then splits.
 * The subtrees above x only gain x: their aggregates absorb x's own
 * values (xa) without reading their jobs again. */
static uint32_t insert(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x, const fbf_job *k,
                       const fbf_qagg *xa)
{
    if (!t)
        return x;
    if (q->n[x].prio > q->n[t].prio) {
        split(q, s, t, k, &q->n[x].l, &q->n[x].r);
        pull(q, s, x);
        return x;
    }
    if (cmp(q, t, k) < 0)
        q->n[t].r = insert(q, s, q->n[t].r, x, k, xa);
    else
        q->n[t].l = insert(q, s, q->n[t].l, x, k, xa);
    combine(&q->n[t].agg, xa);
    return t;
}

int fbf_qindex_insert_at(fbf_qindex *q, fbf_sched *s, uint32_t *root, fbf_job_h h)
{
    size_t need = (size_t)h + 2;
    if (need > q->cap) {
        size_t cap = q->cap;
        while (cap < need)
            cap *= 2;
        qnode *v = realloc(q->n, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        memset(v + q->cap, 0, (cap - q->cap) * sizeof *v);
        q->n = v;
        q->cap = cap;
    }
    uint32_t x = h + 1;
    const fbf_job *j = fbf_sched_job(s, h);
    q->n[x] = (qnode){.prio = next_prio(q), .in = 1, .subtime = j->subtime, .seq = j->seq};
    fbf_qagg xa = own(s, x);
    q->n[x].agg = xa;
    *root = insert(q, s, *root, x, j, &xa);
    q->count++;
    return 0;
}

int fbf_qindex_insert(fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    return fbf_qindex_insert_at(q, s, &q->root, h);
}

static uint32_t remove_rec(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x,
                           const fbf_job *k)
{
    if (t == x)
        return merge(q, s, q->n[x].l, q->n[x].r);
    if (cmp(q, t, k) < 0)
        q->n[t].r = remove_rec(q, s, q->n[t].r, x, k);
    else
        q->n[t].l = remove_rec(q, s, q->n[t].l, x, k);
    pull(q, s, t);
    return t;
}

void fbf_qindex_remove_at(fbf_qindex *q, fbf_sched *s, uint32_t *root, fbf_job_h h)
{
    if (!fbf_qindex_contains(q, h))
        return;
    *root = remove_rec(q, s, *root, h + 1, fbf_sched_job(s, h));
    q->n[h + 1].in = 0;
    q->count--;
}

static void update_rec(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x, const fbf_job *k)
{
    if (t != x) {
        if (cmp(q, t, k) < 0)
            update_rec(q, s, q->n[t].r, x, k);
        else
            update_rec(q, s, q->n[t].l, x, k);
    }
    pull(q, s, t);
}

void fbf_qindex_remove(fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_remove_at(q, s, &q->root, h);
}

void fbf_qindex_update_at(fbf_qindex *q, fbf_sched *s, uint32_t root, fbf_job_h h)
{
    if (fbf_qindex_contains(q, h))
        update_rec(q, s, root, h + 1, fbf_sched_job(s, h));
}

void fbf_qindex_update(fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_update_at(q, s, q->root, h);
}

bool fbf_qindex_contains(const fbf_qindex *q, fbf_job_h h)
{
    return (size_t)h + 1 < q->cap && q->n[h + 1].in;
}

size_t fbf_qindex_count(const fbf_qindex *q) { return q->count; }

fbf_qagg fbf_qindex_all(const fbf_qindex *q) { return q->n[q->root].agg; }

size_t fbf_qindex_bytes(const fbf_qindex *q) { return sizeof *q + q->cap * sizeof *q->n; }

/* First job of subtree x in key order, after k when bounded, satisfying
 * pred. Recursion depth is the treap height. */
static uint32_t find(const fbf_qindex *q, fbf_sched *s, uint32_t x, const fbf_job *k,
                     bool bounded, fbf_qindex_pred pred, void *ctx)
{
    const qnode *n = q->n;
    while (x) {
        if (!pred(ctx, &n[x].agg))
            return 0;
        if (bounded && cmp(q, x, k) <= 0) {
            x = n[x].r;
            continue;
        }
        uint32_t y = find(q, s, n[x].l, k, bounded, pred, ctx);
        if (y)
            return y;
        fbf_qagg a = own(s, x);
        if (pred(ctx, &a))
            return x;
        x = n[x].r;
        bounded = false;
    }
    return 0;
}

fbf_job_h fbf_qindex_next_at(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                             fbf_job_h after, fbf_qindex_pred pred, void *ctx)
{
    const fbf_job *k = after == FBF_JOB_NONE ? NULL : fbf_sched_job(s, after);
    uint32_t x = find(q, s, root, k, k != NULL, pred, ctx);
    return x ? x - 1 : FBF_JOB_NONE;
}

fbf_job_h fbf_qindex_next(const fbf_qindex *q, fbf_sched *s, fbf_job_h after,
                          fbf_qindex_pred pred, void *ctx)
{
    return fbf_qindex_next_at(q, s, q->root, after, pred, ctx);
}

/* find() bounded above too: the first job of subtree x after lo (when
 * given) and before hi satisfying pred. Kept apart so that find(), on
 * the EASY scan's path, stays as lean as it was. */
static uint32_t find_before(const fbf_qindex *q, fbf_sched *s, uint32_t x, const fbf_job *lo,
                            const fbf_job *hi, fbf_qindex_pred pred, void *ctx)
{
    const qnode *n = q->n;
    while (x) {
        if (!pred(ctx, &n[x].agg))
            return 0;
        if (lo && cmp(q, x, lo) <= 0) {
            x = n[x].r;
            continue;
        }
        if (cmp(q, x, hi) >= 0) {
            x = n[x].l;
            continue;
        }
        uint32_t y = find_before(q, s, n[x].l, lo, hi, pred, ctx);
        if (y)
            return y;
        fbf_qagg a = own(s, x);
        if (pred(ctx, &a))
            return x;
        x = n[x].r;
        lo = NULL;
    }
    return 0;
}

fbf_job_h fbf_qindex_next_before_at(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                                    fbf_job_h after, fbf_job_h before, fbf_qindex_pred pred,
                                    void *ctx)
{
    if (before == FBF_JOB_NONE)
        return fbf_qindex_next_at(q, s, root, after, pred, ctx);
    const fbf_job *lo = after == FBF_JOB_NONE ? NULL : fbf_sched_job(s, after);
    uint32_t x = find_before(q, s, root, lo, fbf_sched_job(s, before), pred, ctx);
    return x ? x - 1 : FBF_JOB_NONE;
}
