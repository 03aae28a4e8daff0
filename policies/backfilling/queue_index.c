/*
 * queue_index: see queue_index.h. In-order traversal follows the index's
 * order, heap order on prio (odd, from a fixed splitmix64 sequence: runs
 * are reproducible), and each node's agg combines its job's and its
 * children's. Layout and groups (the _at functions): docs/backfilling.md.
 */
#include "policies/backfilling/queue_index.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct qnode {
    uint32_t l, r, prio;
    uint32_t min_res; /* subtree aggregates ... */
    double min_wall;
    double key; /* the job's key, copied: descents touch no job record */
} qnode;

typedef struct qrsv {
    double min, max; /* ... and, with FBF_QINDEX_RSV, these */
} qrsv;

struct fbf_qindex {
    const fbf_order_ops *ord; /* NULL: D1 */
    qnode *n;   /* slot h + 1 for handle h */
    qrsv *rsv;  /* the same slots; NULL without FBF_QINDEX_RSV */
    double *sub; /* the same slots: subtimes, for an order other than D1 */
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
    return (uint32_t)((z ^ (z >> 31)) >> 32) | 1u;
}

static fbf_qagg own(fbf_sched *s, uint32_t x)
{
    const fbf_job *j = fbf_sched_job(s, x - 1);
    double r = isnan(j->rsv) ? INFINITY : j->rsv;
    return (fbf_qagg){j->res, j->walltime, r, r};
}

/* The aggregates of subtree x (the neutral ones for nil). */
static inline fbf_qagg agg_of(const fbf_qindex *q, uint32_t x)
{
    const qnode *n = &q->n[x];
    fbf_qagg a = {n->min_res, n->min_wall, neutral.min_rsv, neutral.max_rsv};
    if (q->rsv) {
        a.min_rsv = q->rsv[x].min;
        a.max_rsv = q->rsv[x].max;
    }
    return a;
}

static void set_agg(fbf_qindex *q, uint32_t x, const fbf_qagg *a)
{
    q->n[x].min_res = a->min_res;
    q->n[x].min_wall = a->min_wall;
    if (q->rsv)
        q->rsv[x] = (qrsv){a->min_rsv, a->max_rsv};
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

/* Folds b into subtree x's stored aggregates. */
static void absorb(fbf_qindex *q, uint32_t x, const fbf_qagg *b)
{
    fbf_qagg a = agg_of(q, x);
    combine(&a, b);
    set_agg(q, x, &a);
}

static void pull(fbf_qindex *q, fbf_sched *s, uint32_t x)
{
    fbf_qagg a = own(s, x), c = agg_of(q, q->n[x].l);
    combine(&a, &c);
    c = agg_of(q, q->n[x].r);
    combine(&a, &c);
    set_agg(q, x, &a);
}

fbf_qindex_probe fbf_qindex_probe_of(const fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    const fbf_job *j = fbf_sched_job(s, h);
    return (fbf_qindex_probe){q->ord ? q->ord->key(j, 0) : j->subtime, j->subtime, j->seq};
}

/* Node x against probe k. */
static int cmp(const fbf_qindex *q, fbf_sched *s, uint32_t x, const fbf_qindex_probe *k)
{
    const qnode *n = &q->n[x];
    if (n->key < k->key)
        return -1;
    if (n->key > k->key)
        return 1;
    if (q->ord) {
        double st = q->sub[x];
        if (st != k->subtime)
            return st < k->subtime ? -1 : 1;
    }
    uint64_t seq = x - 1u;
    return seq < k->seq ? -1 : (seq > k->seq);
}

/* The probe of indexed node x, from its stored key: its job's record may
 * no longer give the same key (a started job's priority is gone). */
static fbf_qindex_probe node_probe(const fbf_qindex *q, fbf_sched *s, uint32_t x)
{
    double key = q->n[x].key;
    return (fbf_qindex_probe){key, q->sub ? q->sub[x] : key, x - 1u};
}

int fbf_qindex_cmp(const fbf_qindex *q, fbf_sched *s, fbf_job_h a, fbf_job_h b)
{
    fbf_qindex_probe x = fbf_qindex_probe_of(q, s, a), y = fbf_qindex_probe_of(q, s, b);
    if (x.key != y.key)
        return x.key < y.key ? -1 : 1;
    if (x.subtime != y.subtime)
        return x.subtime < y.subtime ? -1 : 1;
    return x.seq < y.seq ? -1 : (x.seq > y.seq);
}

fbf_qindex *fbf_qindex_create(unsigned flags) { return fbf_qindex_create_ordered(flags, NULL); }

fbf_qindex *fbf_qindex_create_ordered(unsigned flags, const fbf_order_ops *ord)
{
    /* Slots grow with the handles indexed (insert_at): an engine with a
     * few jobs, as most of a fuzz target's are, zeroes a few slots. */
    enum { FIRST_CAP = 64 };
    fbf_qindex *q = calloc(1, sizeof *q);
    if (!q || !(q->n = calloc(FIRST_CAP, sizeof *q->n)) ||
        ((flags & FBF_QINDEX_RSV) && !(q->rsv = calloc(FIRST_CAP, sizeof *q->rsv))) ||
        (!fbf_order_is_submit(ord) && !(q->sub = calloc(FIRST_CAP, sizeof *q->sub)))) {
        fbf_qindex_destroy(q);
        return NULL;
    }
    q->cap = FIRST_CAP;
    q->ord = fbf_order_is_submit(ord) ? NULL : ord;
    set_agg(q, 0, &neutral);
    q->rng = 0x2545f4914f6cdd1dull;
    return q;
}

void fbf_qindex_destroy(fbf_qindex *q)
{
    if (!q)
        return;
    free(q->n);
    free(q->rsv);
    free(q->sub);
    free(q);
}

/* Grows a slot array from old to cap entries, zeroing the new ones. */
static int grow(void **v, size_t size, size_t old, size_t cap)
{
    unsigned char *p = realloc(*v, cap * size);
    if (!p)
        return -ENOMEM;
    memset(p + old * size, 0, (cap - old) * size);
    *v = p;
    return 0;
}

/* Splits x into keys < k (*l) and keys > k (*r); k itself is not in x. */
static void split(fbf_qindex *q, fbf_sched *s, uint32_t x, const fbf_qindex_probe *k,
                  uint32_t *l, uint32_t *r)
{
    if (!x) {
        *l = *r = 0;
        return;
    }
    if (cmp(q, s, x, k) < 0) {
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
static uint32_t insert(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x,
                       const fbf_qindex_probe *k, const fbf_qagg *xa)
{
    if (!t)
        return x;
    if (q->n[x].prio > q->n[t].prio) {
        split(q, s, t, k, &q->n[x].l, &q->n[x].r);
        pull(q, s, x);
        return x;
    }
    if (cmp(q, s, t, k) < 0)
        q->n[t].r = insert(q, s, q->n[t].r, x, k, xa);
    else
        q->n[t].l = insert(q, s, q->n[t].l, x, k, xa);
    absorb(q, t, xa);
    return t;
}

int fbf_qindex_insert_at(fbf_qindex *q, fbf_sched *s, uint32_t *root, fbf_job_h h)
{
    size_t need = (size_t)h + 2;
    if (need > q->cap) {
        size_t cap = q->cap;
        while (cap < need)
            cap *= 2;
        /* Both arrays first, then the capacity: a failure leaves the
         * index as it was (a grown array is merely larger). */
        if (grow((void **)&q->n, sizeof *q->n, q->cap, cap) < 0 ||
            (q->rsv && grow((void **)&q->rsv, sizeof *q->rsv, q->cap, cap) < 0) ||
            (q->sub && grow((void **)&q->sub, sizeof *q->sub, q->cap, cap) < 0))
            return -ENOMEM;
        q->cap = cap;
    }
    uint32_t x = h + 1;
    fbf_qindex_probe k = fbf_qindex_probe_of(q, s, h);
    q->n[x] = (qnode){.prio = next_prio(q), .key = k.key};
    if (q->sub)
        q->sub[x] = k.subtime;
    fbf_qagg xa = own(s, x);
    set_agg(q, x, &xa);
    *root = insert(q, s, *root, x, &k, &xa);
    q->count++;
    return 0;
}

int fbf_qindex_insert(fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    return fbf_qindex_insert_at(q, s, &q->root, h);
}

static uint32_t remove_rec(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x,
                           const fbf_qindex_probe *k)
{
    if (t == x)
        return merge(q, s, q->n[x].l, q->n[x].r);
    if (cmp(q, s, t, k) < 0)
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
    fbf_qindex_probe k = node_probe(q, s, h + 1);
    *root = remove_rec(q, s, *root, h + 1, &k);
    q->n[h + 1].prio = 0;
    q->count--;
}

static void update_rec(fbf_qindex *q, fbf_sched *s, uint32_t t, uint32_t x,
                       const fbf_qindex_probe *k)
{
    if (t != x) {
        if (cmp(q, s, t, k) < 0)
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
    if (fbf_qindex_contains(q, h)) {
        fbf_qindex_probe k = node_probe(q, s, h + 1);
        update_rec(q, s, root, h + 1, &k);
    }
}

void fbf_qindex_update(fbf_qindex *q, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_update_at(q, s, q->root, h);
}

bool fbf_qindex_contains(const fbf_qindex *q, fbf_job_h h)
{
    return (size_t)h + 1 < q->cap && q->n[h + 1].prio != 0;
}

size_t fbf_qindex_count(const fbf_qindex *q) { return q->count; }

fbf_qagg fbf_qindex_all(const fbf_qindex *q) { return agg_of(q, q->root); }

uint32_t fbf_qindex_root(const fbf_qindex *q) { return q->root; }

size_t fbf_qindex_bytes(const fbf_qindex *q)
{
    return sizeof *q + q->cap * (sizeof *q->n + (q->rsv ? sizeof *q->rsv : 0) +
                                 (q->sub ? sizeof *q->sub : 0));
}

/* First job of subtree x in key order satisfying pred. Recursion depth is
 * the treap height. */
static uint32_t find(const fbf_qindex *q, fbf_sched *s, uint32_t x, fbf_qindex_pred pred,
                     void *ctx)
{
    const qnode *n = q->n;
    while (x) {
        fbf_qagg g = agg_of(q, x);
        if (!pred(ctx, &g))
            return 0;
        uint32_t y = find(q, s, n[x].l, pred, ctx);
        if (y)
            return y;
        fbf_qagg a = own(s, x);
        if (pred(ctx, &a))
            return x;
        x = n[x].r;
    }
    return 0;
}

/* First job of subtree x after k satisfying pred. The way down to k tests
 * nothing: the subtrees along it hold jobs before k, whose values make
 * their aggregates pass nearly always (97% of those tests in compression
 * passes at 1e5 jobs), and what lies after k is tested on the way back,
 * each right subtree once, at no loss of pruning for a monotone pred. */
static uint32_t find_after(const fbf_qindex *q, fbf_sched *s, uint32_t x,
                           const fbf_qindex_probe *k, fbf_qindex_pred pred, void *ctx)
{
    const qnode *n = q->n;
    while (x && cmp(q, s, x, k) <= 0)
        x = n[x].r;
    if (!x)
        return 0;
    uint32_t y = find_after(q, s, n[x].l, k, pred, ctx);
    if (y)
        return y;
    fbf_qagg a = own(s, x);
    if (pred(ctx, &a))
        return x;
    return find(q, s, n[x].r, pred, ctx);
}

fbf_job_h fbf_qindex_next_after(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                                const fbf_qindex_probe *after, fbf_qindex_pred pred, void *ctx)
{
    uint32_t x = after ? find_after(q, s, root, after, pred, ctx) : find(q, s, root, pred, ctx);
    return x ? x - 1 : FBF_JOB_NONE;
}

fbf_job_h fbf_qindex_next_at(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                             fbf_job_h after, fbf_qindex_pred pred, void *ctx)
{
    if (after == FBF_JOB_NONE)
        return fbf_qindex_next_after(q, s, root, NULL, pred, ctx);
    fbf_qindex_probe k = fbf_qindex_probe_of(q, s, after);
    return fbf_qindex_next_after(q, s, root, &k, pred, ctx);
}

fbf_job_h fbf_qindex_next(const fbf_qindex *q, fbf_sched *s, fbf_job_h after,
                          fbf_qindex_pred pred, void *ctx)
{
    return fbf_qindex_next_at(q, s, q->root, after, pred, ctx);
}

