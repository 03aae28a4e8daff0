/*
 * profile: availability profile over a B+ tree of breakpoints; see
 * profile.h for the contract, engine/profile_tree.h for the tree and
 * engine/profile_search.h for the searches by a threshold on used().
 *
 * Purpose: answer used(t), min free over a window and "earliest start for
 * n resources during d" in O(log B) per step, B = number of breakpoints,
 * with millions of live spans. A query walks down from the root keeping
 * base, the sum of the deltas before the node it is in, so that used() at
 * any key is base plus a prefix inside its node; children whose
 * aggregates settle a question are answered without a descent.
 *
 * Invariants: those of the tree (profile_tree.c); the deltas of all keys
 * sum to 0 (add and remove each change two keys by n and -n), so used()
 * after the last key is 0; and -ENOMEM from add
 * leaves the profile unchanged, because the nodes its two insertions can
 * need are reserved before either is made. A remove never allocates.
 */
#include "engine/profile.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/profile_search.h"
#include "engine/profile_tree.h"

typedef fbf_ptree_leaf leaf;
typedef fbf_ptree_inner inner;


struct fbf_profile {
    fbf_ptree t;
    uint32_t capacity;
};

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static const leaf *L(const fbf_profile *p, uint32_t x) { return fbf_ptree_leaf_at(&p->t, x); }
static const inner *I(const fbf_profile *p, uint32_t x) { return fbf_ptree_inner_at(&p->t, x); }

/* ---- queries -------------------------------------------------------------- */

/* Whether some live span starts or ends at key. */
static bool has_endpoint(const fbf_profile *p, double key)
{
    uint32_t x = p->t.root;
    for (unsigned h = p->t.height; h > 0; h--)
        x = I(p, x)->kid[fbf_ptree_route(I(p, x), key)];
    const leaf *l = L(p, x);
    for (uint32_t i = 0; i < l->n && !(l->key[i] > key); i++)
        if (l->key[i] == key)
            return l->refs[i] > 0;
    return false;
}

/* used(t): sum of deltas at keys <= t. */
static int64_t used_at(const fbf_profile *p, double t)
{
    uint32_t x = p->t.root;
    int64_t acc = 0;
    for (unsigned h = p->t.height; h > 0; h--) {
        const inner *in = I(p, x);
        uint32_t i = 0;
        for (; i + 1 < in->n && in->hi[i] <= t; i++)
            acc += in->a[i].sum;
        x = in->kid[i];
    }
    const leaf *l = L(p, x);
    for (uint32_t i = 0; i < l->n && l->key[i] <= t; i++)
        acc += l->delta[i];
    return acc;
}

/*
 * Maximum (or minimum) of used(k) over keys lo < k < hi under x, whose
 * keys all lie above lb; INT64_MIN (INT64_MAX) if there is none. base =
 * sum of the deltas before x. A child wholly inside the range answers by
 * its maxp (minp); only the two children at its ends are descended, so the
 * cost is O(height * FBF_PTREE_INNER_MAX).
 */
static int64_t range_ext(const fbf_profile *p, uint32_t x, unsigned h, int64_t base, double lb,
                         double lo, double hi, bool want_max)
{
    int64_t res = want_max ? INT64_MIN : INT64_MAX;
    if (h == 0) {
        const leaf *l = L(p, x);
        for (uint32_t i = 0; i < l->n && l->key[i] < hi; i++) {
            base += l->delta[i];
            if (l->key[i] > lo)
                res = want_max ? max64(res, base) : min64(res, base);
        }
        return res;
    }
    const inner *in = I(p, x);
    for (uint32_t i = 0; i < in->n; i++) {
        double klo = i ? in->hi[i - 1] : lb, khi = in->hi[i];
        if (!(klo < hi))
            break;
        if (khi > lo) {
            int64_t v = klo >= lo && khi < hi
                            ? base + (want_max ? in->a[i].maxp : in->a[i].minp)
                            : range_ext(p, in->kid[i], h - 1, base, klo, lo, hi, want_max);
            res = want_max ? max64(res, v) : min64(res, v);
        }
        base += in->a[i].sum;
    }
    return res;
}

/* ---- the API -------------------------------------------------------------- */

fbf_profile *fbf_profile_create(uint32_t capacity)
{
    fbf_profile *p = calloc(1, sizeof *p);
    if (!p || fbf_ptree_init(&p->t) < 0) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    p->capacity = capacity;
    return p;
}

void fbf_profile_destroy(fbf_profile *p)
{
    if (!p)
        return;
    fbf_ptree_fini(&p->t);
    free(p);
}

uint32_t fbf_profile_capacity(const fbf_profile *p)
{
    return p->capacity;
}

int fbf_profile_add(fbf_profile *p, double start, double end, uint32_t n)
{
    if (!(start < end) || n == 0) /* also rejects NaN */
        return -EINVAL;
    if (fbf_ptree_reserve(&p->t) < 0)
        return -ENOMEM;
    fbf_ptree_upsert(&p->t, start, (int64_t)n, 1);
    fbf_ptree_upsert(&p->t, end, -(int64_t)n, 1);
    return 0;
}

int fbf_profile_remove(fbf_profile *p, double start, double end, uint32_t n)
{
    /* No add can have had these arguments. */
    if (!(start < end) || n == 0)
        return -EINVAL;
    /* Check both keys first so a failed remove changes nothing; as both
     * exist, the upserts below insert nothing. */
    if (!has_endpoint(p, start) || !has_endpoint(p, end))
        return -ENOENT;
    fbf_ptree_upsert(&p->t, start, -(int64_t)n, -1);
    fbf_ptree_upsert(&p->t, end, (int64_t)n, -1);
    return 0;
}

int64_t fbf_profile_free_at(const fbf_profile *p, double t)
{
    return (int64_t)p->capacity - used_at(p, t);
}

int64_t fbf_profile_min_free(const fbf_profile *p, double t, double d)
{
    int64_t u = used_at(p, t);
    if (d > 0) /* d <= 0 (or NaN) is the empty window: plain free(t) */
        u = max64(u, range_ext(p, p->t.root, p->t.height, 0, -INFINITY, t, t + d, true));
    return (int64_t)p->capacity - u;
}

double fbf_profile_earliest_before(const fbf_profile *p, double from, uint32_t n,
                                   double d, double stop)
{
    if (n > p->capacity || !(from < stop))
        return INFINITY;
    return fbf_ptree_earliest(&p->t, from, (int64_t)p->capacity - n, d, stop);
}

double fbf_profile_earliest(const fbf_profile *p, double from, uint32_t n,
                            double d)
{
    return fbf_profile_earliest_before(p, from, n, d, INFINITY);
}

double fbf_profile_last_below(const fbf_profile *p, double lo, double hi, uint32_t n)
{
    double k;
    return fbf_ptree_last_above(&p->t, lo, hi, (int64_t)p->capacity - n, &k) ? k : -INFINITY;
}

double fbf_profile_first_below(const fbf_profile *p, double after, uint32_t n)
{
    double k;
    return fbf_ptree_first_key(&p->t, after, (int64_t)p->capacity - n, true, &k) ? k : INFINITY;
}

int64_t fbf_profile_max_free(const fbf_profile *p, double t0, double t1)
{
    int64_t u = used_at(p, t0);
    if (t1 > t0)
        u = min64(u, range_ext(p, p->t.root, p->t.height, 0, -INFINITY, t0, t1, false));
    return (int64_t)p->capacity - u;
}

double fbf_profile_key_floor(const fbf_profile *p, double t)
{
    uint32_t x = p->t.root;
    double best = -INFINITY;
    for (unsigned h = p->t.height; h > 0; h--) {
        const inner *in = I(p, x);
        uint32_t i = 0;
        while (i < in->n && in->hi[i] <= t)
            i++;
        if (i == in->n) /* every key under x is <= t */
            return in->hi[in->n - 1];
        if (i > 0)
            best = in->hi[i - 1];
        x = in->kid[i];
    }
    const leaf *l = L(p, x);
    for (uint32_t i = 0; i < l->n && l->key[i] <= t; i++)
        best = l->key[i];
    return best;
}

size_t fbf_profile_breakpoints(const fbf_profile *p)
{
    return p->t.count;
}

void fbf_profile_foreach(const fbf_profile *p,
                         void (*fn)(double t, int64_t used_after, void *ctx),
                         void *ctx)
{
    fbf_ptree_foreach(&p->t, fn, ctx);
}

void fbf_profile_foreach_between(const fbf_profile *p, double t0, double t1,
                                 void (*fn)(double t, int64_t used_after, void *ctx),
                                 void *ctx)
{
    fbf_ptree_foreach_between(&p->t, t0, t1, fn, ctx);
}
