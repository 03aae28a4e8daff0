/*
 * profile: availability profile as a treap of breakpoints; see profile.h.
 *
 * Purpose: answer used(t), min free over a window and "earliest start for
 * n resources during d" in O(log B) per step, B = number of breakpoints,
 * with up to millions of live spans.
 *
 * Structure: a treap (binary search tree on key, max-heap on a
 * pseudo-random priority) whose node holds one time and the change of
 * used() at that time. A treap was chosen because insert/delete stay
 * short and obviously correct (rotations up, merge to delete), and its
 * expected height is O(log B) whatever the insertion order. Priorities
 * come from a splitmix64 sequence seeded with a constant, so runs are
 * reproducible.
 *
 * Invariants (checked by the tests through the public API):
 *   - in-order keys strictly increase; each key appears once;
 *   - a key is linked exactly while some live span starts or ends at it
 *     (node.refs counts those endpoints), so B <= 2 * live spans. Its
 *     delta may be 0 (one span ends where another of the same size
 *     starts); the key is kept anyway, because remove() must find both
 *     endpoints of a span it undoes (-ENOENT otherwise) and deleting on
 *     delta == 0 would make a legitimate remove of such a span fail.
 *     Zero-delta keys never change what a query returns: used() is the
 *     same just before and at them, so the earliest-start jumps land
 *     where they would without them;
 *   - for every node x over its subtree S (keys in order k1 < ... < km):
 *       sum  = delta(k1) + ... + delta(km)
 *       maxp = max over j in 1..m of delta(k1) + ... + delta(kj)
 *       minp = min over the same non-empty prefixes;
 *     the empty prefix is excluded so that "base + maxp > x" means that
 *     some key of S really has used() > x (base = sum of all keys before S);
 *   - node 0 is a nil sentinel with sum 0; it is never written after
 *     creation, so children can be read without a null test for .sum.
 *
 * Memory: nodes live in one array and are addressed by 32-bit index (half
 * the size of pointers, and the array can be realloc'ed). Freed nodes go
 * to a free list threaded through .l, so steady-state add/remove never
 * call malloc. fbf_profile_add reserves its two nodes before touching
 * the tree; that is what makes -ENOMEM leave the profile unchanged.
 */
#include "engine/profile.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

typedef struct node {
    double key;
    int64_t delta; /* change of used() at key; may be 0 (see refs) */
    int64_t sum;   /* aggregates over the subtree, see the top comment */
    int64_t maxp;
    int64_t minp;
    uint32_t l, r;
    uint32_t prio;
    uint32_t refs; /* live span endpoints at key; unlinked at 0 */
} node;

struct fbf_profile {
    node *n;            /* pool; n[0] is the nil sentinel */
    uint32_t cap;       /* slots allocated in n */
    uint32_t hw;        /* slots [1, hw) have been handed out at least once */
    uint32_t free_head; /* free list of returned slots, linked through .l */
    uint32_t nfree;     /* length of that free list */
    uint32_t root;
    size_t count;       /* linked nodes = breakpoints */
    uint64_t rng;
    uint32_t capacity;
};

#define FBF_PROFILE_SEED 0x9e3779b97f4a7c15ull
#define FBF_PROFILE_MIN_POOL 64u

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* splitmix64: tiny, good enough to balance a treap, deterministic. */
static uint32_t next_prio(fbf_profile *p)
{
    uint64_t z = (p->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Recomputes x's aggregates from its children (which must be current). */
static void pull(node *n, uint32_t x)
{
    node *a = &n[x];
    int64_t s = n[a->l].sum + a->delta; /* prefix through a's own key */
    int64_t mx = s, mn = s;
    if (a->l) {
        mx = max64(mx, n[a->l].maxp);
        mn = min64(mn, n[a->l].minp);
    }
    if (a->r) {
        mx = max64(mx, s + n[a->r].maxp);
        mn = min64(mn, s + n[a->r].minp);
    }
    a->sum = s + n[a->r].sum;
    a->maxp = mx;
    a->minp = mn;
}

/* Makes sure k slots can be taken without reallocating, so the tree code
 * below may hold node pointers across allocations. */
static int reserve(fbf_profile *p, uint32_t k)
{
    if (p->nfree + (p->cap - p->hw) >= k)
        return 0;
    if (p->cap > UINT32_MAX / 2)
        return -ENOMEM;
    uint32_t ncap = p->cap * 2;
    node *nn = realloc(p->n, (size_t)ncap * sizeof *nn);
    if (!nn)
        return -ENOMEM;
    p->n = nn;
    p->cap = ncap;
    return 0;
}

static uint32_t take_slot(fbf_profile *p)
{
    uint32_t x;
    if (p->free_head) {
        x = p->free_head;
        p->free_head = p->n[x].l;
        p->nfree--;
    } else {
        x = p->hw++;
    }
    return x;
}

static void give_slot(fbf_profile *p, uint32_t x)
{
    p->n[x].l = p->free_head;
    p->free_head = x;
    p->nfree++;
}

static uint32_t rot_right(node *n, uint32_t x)
{
    uint32_t y = n[x].l;
    n[x].l = n[y].r;
    n[y].r = x;
    pull(n, x);
    pull(n, y);
    return y;
}

static uint32_t rot_left(node *n, uint32_t x)
{
    uint32_t y = n[x].r;
    n[x].r = n[y].l;
    n[y].l = x;
    pull(n, x);
    pull(n, y);
    return y;
}

/* Joins two treaps where every key of a is below every key of b. */
static uint32_t merge(node *n, uint32_t a, uint32_t b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    if (n[a].prio > n[b].prio) {
        n[a].r = merge(n, n[a].r, b);
        pull(n, a);
        return a;
    }
    n[b].l = merge(n, a, n[b].l);
    pull(n, b);
    return b;
}

/* Adds d to the delta and dref (+1 or -1) to the endpoint count at key in
 * subtree x, creating the node if needed and unlinking it when no span
 * ends there any more. Returns the new subtree root. A slot must have
 * been reserved when key may be absent. */
static uint32_t upsert(fbf_profile *p, uint32_t x, double key, int64_t d,
                       int dref)
{
    node *n = p->n;
    if (!x) {
        uint32_t y = take_slot(p);
        n[y] = (node){ .key = key, .delta = d, .prio = next_prio(p), .refs = 1 };
        pull(n, y);
        p->count++;
        return y;
    }
    if (key < n[x].key) {
        n[x].l = upsert(p, n[x].l, key, d, dref);
        if (n[n[x].l].prio > n[x].prio)
            return rot_right(n, x);
    } else if (n[x].key < key) {
        n[x].r = upsert(p, n[x].r, key, d, dref);
        if (n[n[x].r].prio > n[x].prio)
            return rot_left(n, x);
    } else {
        n[x].delta += d;
        n[x].refs += (uint32_t)dref;
        /* refs == 0 with delta != 0 only follows a remove() of a span that
         * was never added; keeping the node then keeps sums consistent. */
        if (n[x].refs == 0 && n[x].delta == 0) {
            /* The merged children keep the heap order: both had priorities
             * below x's, hence below x's parent's. */
            uint32_t y = merge(n, n[x].l, n[x].r);
            give_slot(p, x);
            p->count--;
            return y;
        }
    }
    pull(n, x);
    return x;
}

/* Whether some live span starts or ends at key. */
static bool has_endpoint(const fbf_profile *p, double key)
{
    const node *n = p->n;
    uint32_t x = p->root;
    while (x) {
        if (key < n[x].key)
            x = n[x].l;
        else if (n[x].key < key)
            x = n[x].r;
        else
            return n[x].refs > 0;
    }
    return false;
}

/* used(t): sum of deltas at keys <= t. */
static int64_t used_at(const fbf_profile *p, double t)
{
    const node *n = p->n;
    uint32_t x = p->root;
    int64_t acc = 0;
    while (x) {
        if (n[x].key <= t) {
            acc += n[n[x].l].sum + n[x].delta;
            x = n[x].r;
        } else {
            x = n[x].l;
        }
    }
    return acc;
}

/*
 * Maximum (or minimum) of used(k) over keys k with lo < k < hi (a bound applies only if
 * its flag is set); INT64_MIN if there is none. base = sum of the deltas
 * before subtree x. Once a node inside the range is found the two
 * children each keep only one bound, and a subtree with no bound left is
 * answered by its maxp (minp): the usual O(height) range decomposition.
 */
static int64_t range_ext(const node *n, uint32_t x, int64_t base, double lo, double hi,
                         bool blo, bool bhi, bool want_max)
{
    while (x) {
        if (!blo && !bhi)
            return base + (want_max ? n[x].maxp : n[x].minp);
        int64_t here = base + n[n[x].l].sum + n[x].delta;
        if (blo && !(n[x].key > lo)) {
            base = here;
            x = n[x].r;
        } else if (bhi && !(n[x].key < hi)) {
            x = n[x].l;
        } else {
            int64_t a = range_ext(n, n[x].l, base, lo, hi, blo, false, want_max);
            int64_t b = range_ext(n, n[x].r, here, lo, hi, false, bhi, want_max);
            return want_max ? max64(here, max64(a, b)) : min64(here, min64(a, b));
        }
    }
    return want_max ? INT64_MIN : INT64_MAX;
}

static int64_t range_max(const node *n, uint32_t x, int64_t base, double lo, double hi,
                         bool blo, bool bhi)
{
    return range_ext(n, x, base, lo, hi, blo, bhi, true);
}

/* Minimum of used(k) over keys lo < k < hi; INT64_MAX if there is none. */
static int64_t range_min(const node *n, uint32_t x, int64_t base, double lo, double hi,
                         bool blo, bool bhi)
{
    return range_ext(n, x, base, lo, hi, blo, bhi, false);
}

/*
 * The last key k with lo < k < hi and used(k) > limit. Subtrees whose
 * maxp says no key exceeds limit are skipped in O(1); a subtree lying
 * wholly inside the range that is not skipped surely holds an answer and
 * is descended once, so the cost stays O(height).
 */
static bool last_above(const node *n, uint32_t x, int64_t base, double lo,
                       double hi, int64_t limit, double *out)
{
    while (x && base + n[x].maxp > limit) {
        int64_t here = base + n[n[x].l].sum + n[x].delta;
        if (!(n[x].key > lo)) {
            base = here;
            x = n[x].r;
        } else if (!(n[x].key < hi)) {
            x = n[x].l;
        } else {
            if (last_above(n, n[x].r, here, lo, hi, limit, out))
                return true;
            if (here > limit) {
                *out = n[x].key;
                return true;
            }
            x = n[x].l; /* base unchanged: left subtree starts at base */
        }
    }
    return false;
}

/* The first key k > after with used(k) <= limit; mirror of last_above
 * with minp and a single bound. */
static bool first_at_most(const node *n, uint32_t x, int64_t base,
                          double after, int64_t limit, double *out)
{
    while (x && base + n[x].minp <= limit) {
        int64_t here = base + n[n[x].l].sum + n[x].delta;
        if (!(n[x].key > after)) {
            base = here;
            x = n[x].r;
            continue;
        }
        if (first_at_most(n, n[x].l, base, after, limit, out))
            return true;
        if (here <= limit) {
            *out = n[x].key;
            return true;
        }
        base = here;
        x = n[x].r;
    }
    return false;
}

/* The first key k > after with used(k) > limit; mirror of first_at_most
 * with maxp. */
static bool first_above(const node *n, uint32_t x, int64_t base, double after,
                        int64_t limit, double *out)
{
    while (x && base + n[x].maxp > limit) {
        int64_t here = base + n[n[x].l].sum + n[x].delta;
        if (!(n[x].key > after)) {
            base = here;
            x = n[x].r;
            continue;
        }
        if (first_above(n, n[x].l, base, after, limit, out))
            return true;
        if (here > limit) {
            *out = n[x].key;
            return true;
        }
        base = here;
        x = n[x].r;
    }
    return false;
}

fbf_profile *fbf_profile_create(uint32_t capacity)
{
    fbf_profile *p = calloc(1, sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->n = calloc(FBF_PROFILE_MIN_POOL, sizeof *p->n);
    if (!p->n) {
        free(p);
        errno = ENOMEM;
        return NULL;
    }
    p->cap = FBF_PROFILE_MIN_POOL;
    p->hw = 1; /* slot 0 is the sentinel, zeroed by calloc */
    p->rng = FBF_PROFILE_SEED;
    p->capacity = capacity;
    return p;
}

void fbf_profile_destroy(fbf_profile *p)
{
    if (!p)
        return;
    free(p->n);
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
    int rc = reserve(p, 2);
    if (rc)
        return rc;
    p->root = upsert(p, p->root, start, (int64_t)n, 1);
    p->root = upsert(p, p->root, end, -(int64_t)n, 1);
    return 0;
}

int fbf_profile_remove(fbf_profile *p, double start, double end, uint32_t n)
{
    /* No add can have had these arguments. */
    if (!(start < end) || n == 0)
        return -EINVAL;
    /* Check both keys first so a failed remove changes nothing; as both
     * nodes exist, the upserts below never allocate. */
    if (!has_endpoint(p, start) || !has_endpoint(p, end))
        return -ENOENT;
    p->root = upsert(p, p->root, start, -(int64_t)n, -1);
    p->root = upsert(p, p->root, end, (int64_t)n, -1);
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
        u = max64(u, range_max(p->n, p->root, 0, t, t + d, true, true));
    return (int64_t)p->capacity - u;
}

/*
 * Jumps forward over blocking breakpoints. At candidate t (used(t) <=
 * limit), let k be the LAST key in (t, t + d) with used(k) > limit: every
 * start in [t, k] has k inside its window, so the next possible start is
 * the first key after k where used() drops to limit or below. Each round
 * is O(log B) and passes at least one blocking key.
 */
double fbf_profile_earliest_before(const fbf_profile *p, double from, uint32_t n,
                                   double d, double stop)
{
    if (n > p->capacity || !(from < stop))
        return INFINITY;
    int64_t limit = (int64_t)p->capacity - n;
    double t = from;
    if (used_at(p, t) > limit && !first_at_most(p->n, p->root, 0, t, limit, &t))
        return INFINITY;
    if (!(t < stop))
        return INFINITY;
    if (!(d > 0))
        return t;
    for (;;) {
        double k;
        /* t + d may round or overflow to INFINITY; either way it is the
         * window end the caller's own arithmetic would use. */
        if (!last_above(p->n, p->root, 0, t, t + d, limit, &k))
            return t;
        if (!first_at_most(p->n, p->root, 0, k, limit, &t) || !(t < stop))
            return INFINITY;
    }
}

double fbf_profile_earliest(const fbf_profile *p, double from, uint32_t n,
                            double d)
{
    return fbf_profile_earliest_before(p, from, n, d, INFINITY);
}

double fbf_profile_last_below(const fbf_profile *p, double lo, double hi, uint32_t n)
{
    double k;
    return last_above(p->n, p->root, 0, lo, hi, (int64_t)p->capacity - n, &k) ? k : -INFINITY;
}

double fbf_profile_first_below(const fbf_profile *p, double after, uint32_t n)
{
    double k;
    return first_above(p->n, p->root, 0, after, (int64_t)p->capacity - n, &k) ? k : INFINITY;
}

int64_t fbf_profile_max_free(const fbf_profile *p, double t0, double t1)
{
    int64_t u = used_at(p, t0);
    if (t1 > t0)
        u = min64(u, range_min(p->n, p->root, 0, t0, t1, true, true));
    return (int64_t)p->capacity - u;
}

double fbf_profile_key_floor(const fbf_profile *p, double t)
{
    const node *n = p->n;
    uint32_t x = p->root;
    double best = -INFINITY;
    while (x) {
        if (n[x].key <= t) {
            best = n[x].key;
            x = n[x].r;
        } else {
            x = n[x].l;
        }
    }
    return best;
}

size_t fbf_profile_breakpoints(const fbf_profile *p)
{
    return p->count;
}

static void walk(const node *n, uint32_t x, int64_t *acc,
                 void (*fn)(double, int64_t, void *), void *ctx)
{
    /* Recursion depth is the treap height, O(log B) in expectation. */
    if (!x)
        return;
    walk(n, n[x].l, acc, fn, ctx);
    *acc += n[x].delta;
    fn(n[x].key, *acc, ctx);
    walk(n, n[x].r, acc, fn, ctx);
}

void fbf_profile_foreach(const fbf_profile *p,
                         void (*fn)(double t, int64_t used_after, void *ctx),
                         void *ctx)
{
    int64_t acc = 0;
    walk(p->n, p->root, &acc, fn, ctx);
}

/* In-order over the keys in (lo, hi), skipping the subtrees outside. */
static void walk_between(const node *n, uint32_t x, int64_t base, double lo, double hi,
                         void (*fn)(double, int64_t, void *), void *ctx)
{
    while (x) {
        int64_t here = base + n[n[x].l].sum + n[x].delta;
        if (!(n[x].key > lo)) {
            base = here;
            x = n[x].r;
        } else if (!(n[x].key < hi)) {
            x = n[x].l;
        } else {
            walk_between(n, n[x].l, base, lo, hi, fn, ctx);
            fn(n[x].key, here, ctx);
            base = here;
            x = n[x].r;
        }
    }
}

void fbf_profile_foreach_between(const fbf_profile *p, double t0, double t1,
                                 void (*fn)(double t, int64_t used_after, void *ctx),
                                 void *ctx)
{
    walk_between(p->n, p->root, 0, t0, t1, fn, ctx);
}
