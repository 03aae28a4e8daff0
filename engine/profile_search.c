/*
 * profile_search: the searches of engine/profile.c over the tree of
 * breakpoints by a threshold on used(); see profile_search.h.
 *
 * Descents (last_above, first_key) walk down from the root keeping base,
 * the sum of the deltas before the node they are in, and skip children
 * whose aggregates (profile_tree.h) rule them out. The earliest-fit search
 * walks forward over the keys instead, passing whole subtrees where it
 * can, and falls back to descents past a budget of steps.
 */
#include "engine/profile_search.h"

#include <math.h>

typedef fbf_ptree_leaf leaf;
typedef fbf_ptree_inner inner;

static const leaf *L(const fbf_ptree *p, uint32_t x) { return fbf_ptree_leaf_at(p, x); }
static const inner *I(const fbf_ptree *p, uint32_t x) { return fbf_ptree_inner_at(p, x); }

/* Where last_above found its key: the leaf, the key's index in it and
 * used() at the key, so that a caller can go on forward from there. */
typedef struct found_at {
    const leaf *l;
    uint32_t i;
    int64_t used;
} found_at;

/*
 * The last key k with lo < k < hi and used(k) > limit under x (keys above
 * lb); end is used() after x's last key (base + x's sum), so the walk runs
 * backward from the right without a prefix pass: used at a key is end
 * less the deltas after it. Children whose maxp says no key exceeds limit
 * are skipped; a child wholly inside the range that is not skipped surely
 * holds an answer, so the cost stays O(height * INNER_MAX).
 */
static bool last_above(const fbf_ptree *p, uint32_t x, unsigned h, int64_t end, double lb,
                       double lo, double hi, int64_t limit, double *out, found_at *at)
{
    if (h == 0) {
        const leaf *l = L(p, x);
        for (uint32_t i = l->n; i-- > 0 && l->key[i] > lo; end -= l->delta[i])
            if (l->key[i] < hi && end > limit) {
                *out = l->key[i];
                if (at)
                    *at = (found_at){l, i, end};
                return true;
            }
        return false;
    }
    const inner *in = I(p, x);
    for (uint32_t i = in->n; i-- > 0; end -= in->a[i].sum) {
        double klo = i ? in->hi[i - 1] : lb;
        if (!(in->hi[i] > lo))
            break;
        int64_t before = end - in->a[i].sum;
        if (klo < hi && before + in->a[i].maxp > limit &&
            last_above(p, in->kid[i], h - 1, end, klo, lo, hi, limit, out, at))
            return true;
    }
    return false;
}

/* The first key k > after with used(k) <= limit (at_most), or > limit
 * (!at_most), under x; children whose minp (maxp) rules them out are
 * skipped, so only the child holding `after` can be descended in vain. */
static bool first_key(const fbf_ptree *p, uint32_t x, unsigned h, int64_t base, double after,
                      int64_t limit, bool at_most, double *out)
{
    if (h == 0) {
        const leaf *l = L(p, x);
        for (uint32_t i = 0; i < l->n; i++) {
            base += l->delta[i];
            if (l->key[i] > after && (at_most ? base <= limit : base > limit)) {
                *out = l->key[i];
                return true;
            }
        }
        return false;
    }
    const inner *in = I(p, x);
    for (uint32_t i = 0; i < in->n; i++) {
        if (in->hi[i] > after &&
            (at_most ? base + in->a[i].minp <= limit : base + in->a[i].maxp > limit) &&
            first_key(p, in->kid[i], h - 1, base, after, limit, at_most, out))
            return true;
        base += in->a[i].sum;
    }
    return false;
}

/* first_at_most(found key) within the found key's leaf: the key after a
 * window's last blocking key is usually the next one, and in the same
 * leaf, so the search from the root is seldom needed. */
static bool first_at_most_in_leaf(const found_at *at, int64_t limit, double *out)
{
    int64_t used = at->used;
    for (uint32_t i = at->i + 1; i < at->l->n; i++) {
        used += at->l->delta[i];
        if (used <= limit) {
            *out = at->l->key[i];
            return true;
        }
    }
    return false;
}

static bool last_above_p(const fbf_ptree *p, double lo, double hi, int64_t limit, double *out,
                         found_at *at)
{
    return last_above(p, p->root, p->height, 0, -INFINITY, lo, hi, limit, out, at);
}

static bool first_at_most(const fbf_ptree *p, double after, int64_t limit, double *out)
{
    return first_key(p, p->root, p->height, 0, after, limit, true, out);
}

/*
 * A walk over the keys in ascending order, leaf to leaf, keeping the path
 * from the root: stepping to the next leaf costs O(1) amortised where a
 * search from the root costs O(log B), which is what makes a short scan
 * cheaper than jumping island by island when the islands are small.
 */
#define WALK_MAX_HEIGHT 40 /* a tree of 2^32 nodes is far lower */

typedef struct key_walk {
    uint32_t node[WALK_MAX_HEIGHT + 1], at[WALK_MAX_HEIGHT + 1]; /* by height, 1..height */
    const leaf *l;
    uint32_t i; /* the next key: l->key[i] */
} key_walk;

/* Positions w on the first key > from; returns used(from). */
static int64_t walk_to(key_walk *w, const fbf_ptree *p, double from)
{
    uint32_t x = p->root;
    int64_t base = 0;
    for (unsigned h = p->height; h > 0; h--) {
        const inner *in = I(p, x);
        uint32_t i = 0;
        for (; i + 1 < in->n && !(in->hi[i] > from); i++)
            base += in->a[i].sum;
        w->node[h] = x;
        w->at[h] = i;
        x = in->kid[i];
    }
    const leaf *l = L(p, x);
    uint32_t i = 0;
    for (; i < l->n && !(l->key[i] > from); i++)
        base += l->delta[i];
    w->l = l;
    w->i = i;
    return base;
}

/* In a large profile each leaf the walk reaches is a cache miss: the walk
 * asks for the next leaf while it reads this one. The first lines of its
 * keys and deltas are enough; the hardware follows the rest. */
static inline void prefetch_leaf(const leaf *l)
{
    __builtin_prefetch(l->key);
    __builtin_prefetch(l->key + 8);
    __builtin_prefetch(l->delta);
    __builtin_prefetch(l->delta + 8);
}

/* The first key under inner node x's child i (its leftmost leaf's). */
static double first_key_under(const fbf_ptree *p, const inner *x, uint32_t i, unsigned h)
{
    uint32_t k = x->kid[i];
    for (; h > 1; h--)
        k = I(p, k)->kid[0];
    return L(p, k)->key[0];
}

enum { SCAN_FOUND, SCAN_NONE, SCAN_CANDIDATE, SCAN_BLOCKED };

/* A forward search's state: used() after the last key passed, whether a
 * run of keys with used() <= limit is open and where it starts. */
typedef struct scan_state {
    int64_t u, limit;
    double d, stop, c, last;
    bool have;
} scan_state;

enum { TAKE_PASS, TAKE_DOWN, TAKE_FOUND, TAKE_NONE };

/* take_subtree for a leaf whose keys all lie closer than d to its first,
 * some blocking and some not: forward to its first blocking key while a
 * run is open, backward from its end (used() there is known) to its last. */
static int take_short_leaf(scan_state *s, const leaf *l, int64_t sum, double hi)
{
    if (s->have) {
        uint32_t j = 0;
        for (int64_t u = s->u; u + l->delta[j] <= s->limit; j++)
            u += l->delta[j];
        if (!(l->key[j] < s->c + s->d))
            return TAKE_FOUND;
    }
    uint32_t j = l->n - 1;
    for (int64_t v = s->u + sum; v <= s->limit; j--) /* v: used() after key j */
        v -= l->delta[j];
    s->have = j + 1 < l->n; /* then a run opens after the last */
    if (s->have && !((s->c = l->key[j + 1]) < s->stop))
        return TAKE_NONE;
    s->u += sum;
    s->last = hi;
    return TAKE_PASS;
}

/*
 * Child i of in (at height h >= 1), reached whole by the search: passed in
 * one step when its aggregates settle it (all its keys blocking while no
 * run is open, or none blocking while one is, or none blocking: the run
 * opens at its first key), or when its keys all lie closer than d to its
 * first: then only its first and last blocking keys matter, since any
 * window that starts inside it before its last blocking key holds that
 * key. Otherwise TAKE_DOWN: the search goes into it.
 */
static int take_subtree(const fbf_ptree *p, scan_state *s, const inner *in, uint32_t i, unsigned h)
{
    const fbf_ptree_agg *a = &in->a[i];
    bool clear = s->u + a->maxp <= s->limit, blocked = s->u + a->minp > s->limit;
    if (s->have && blocked) {
        if (!(first_key_under(p, in, i, h) < s->c + s->d))
            return TAKE_FOUND;
        s->have = false;
    } else if (!s->have && clear) {
        s->c = first_key_under(p, in, i, h);
        if (!(s->c < s->stop))
            return TAKE_NONE;
        s->have = true;
    } else if (!blocked && !clear) {
        double k0 = first_key_under(p, in, i, h), k;
        if (!(in->hi[i] < k0 + s->d))
            return TAKE_DOWN;
        uint32_t x = in->kid[i];
        if (h == 1)
            return take_short_leaf(s, L(p, x), a->sum, in->hi[i]);
        if (s->have) { /* the run's window ends before, or holds, the first */
            first_key(p, x, h - 1, s->u, -INFINITY, s->limit, false, &k);
            if (!(k < s->c + s->d))
                return TAKE_FOUND;
        }
        found_at at;
        last_above(p, x, h - 1, s->u + a->sum, -INFINITY, -INFINITY, INFINITY, s->limit, &k, &at);
        s->have = k < in->hi[i]; /* then a run opens after the last */
        if (s->have && !first_at_most_in_leaf(&at, s->limit, &s->c))
            first_key(p, x, h - 1, s->u, k, s->limit, true, &s->c);
        if (s->have && !(s->c < s->stop))
            return TAKE_NONE;
    }
    s->u += a->sum;
    s->last = in->hi[i];
    return TAKE_PASS;
}

/*
 * fbf_ptree_earliest's answer by a forward walk from `from` (< stop),
 * for used() <= limit over [t, t + d), that gives up after budget steps.
 * The earliest fit, if any, starts where a run of keys with used() <=
 * limit starts (or at from): a start inside a run has every blocking key
 * of the run's start's window in its own. Subtrees the walk reaches
 * whole are passed in one step where take_subtree can, so a stretch where
 * free() stays below n (or at least n), or one shorter than d, costs a
 * few steps however many keys it holds. SCAN_FOUND or SCAN_NONE settle
 * the answer; SCAN_CANDIDATE leaves in *t a start not yet ruled out
 * (used(*t) <= limit, *t < stop), SCAN_BLOCKED a key with used() > limit
 * after which the search goes on.
 */
static int scan_earliest(const fbf_ptree *p, double from, int64_t limit, double d, double stop,
                         unsigned budget, double *t)
{
    key_walk w;
    scan_state s = {.limit = limit, .d = d, .stop = stop, .c = from, .last = from};
    s.u = walk_to(&w, p, from);
    s.have = s.u <= limit;
    unsigned h = 0, height = p->height; /* h: the level the walk is at */
    for (;;) {
        if (s.have && !(d > 0))
            break;
        if (budget == 0) {
            *t = s.have ? s.c : s.last;
            return s.have ? SCAN_CANDIDATE : SCAN_BLOCKED;
        }
        if (h == 0 && w.i < w.l->n) { /* keys of this leaf, to the next change */
            const leaf *l = w.l;
            uint32_t i = w.i, n = l->n;
            int64_t u = s.u;
            if (s.have) {             /* the window of c ends at or before a key, or one blocks */
                double end = s.c + d; /* the caller's own sum */
                while (i < n && l->key[i] < end && u + l->delta[i] <= limit)
                    u += l->delta[i++];
                if (i < n && !(l->key[i] < end)) {
                    s.u = u;
                    break;
                }
                if (i < n)
                    u += l->delta[i++], s.have = false;
            } else { /* used() drops to limit after a key */
                while (i < n && !s.have) {
                    double k = l->key[i];
                    if (!(k < stop))
                        return SCAN_NONE;
                    u += l->delta[i++];
                    if (u <= limit)
                        s.have = true, s.c = k;
                }
            }
            if (i > w.i)
                s.last = l->key[i - 1];
            budget = i - w.i < budget ? budget - (i - w.i) : 0; /* a step a key */
            s.u = u;
            w.i = i;
            continue;
        }
        if (h > 0) { /* child at[h] of node[h], whole and not yet passed */
            const inner *in = I(p, w.node[h]);
            if (!s.have && !(s.last < stop))
                return SCAN_NONE;
            if (h == 1 && w.at[1] + 1 < in->n)
                prefetch_leaf(L(p, in->kid[w.at[1] + 1]));
            int what = take_subtree(p, &s, in, w.at[h], h);
            budget--;
            if (what == TAKE_FOUND)
                break;
            if (what == TAKE_NONE)
                return SCAN_NONE;
            if (what == TAKE_DOWN) {
                uint32_t x = in->kid[w.at[h]];
                if (--h == 0) {
                    w.l = L(p, x);
                    w.i = 0;
                } else {
                    w.node[h] = x;
                    w.at[h] = 0;
                }
                continue;
            }
        }
        /* on to the next subtree: the sibling, or up and over */
        if (h == 0)
            h = 1;
        while (h <= height && w.at[h] + 1 >= I(p, w.node[h])->n)
            h++;
        if (h > height)
            break;
        w.at[h]++;
    }
    if (!s.have) /* past the last key, which leaves used() at 0 */
        return SCAN_NONE;
    *t = s.c;
    return SCAN_FOUND;
}

/*
 * The walk first (scan_earliest), which is cheap where islands of free()
 * are short; past its budget, jumps forward over blocking breakpoints. At
 * candidate t (used(t) <= limit), let k be the LAST key in (t, t + d) with
 * used(k) > limit: every start in [t, k] has k inside its window, so the
 * next possible start is the first key after k where used() drops to
 * limit or below (most often found in k's leaf, without a second
 * descent). Each round is O(log B) and passes at least one blocking key;
 * after each, a scan again.
 */
#ifndef FBF_PROFILE_SCAN_BUDGET /* tests set a tiny one: every way is taken */
#define FBF_PROFILE_SCAN_BUDGET 4096
#endif

double fbf_ptree_earliest(const fbf_ptree *p, double from, int64_t limit, double d, double stop)
{
    double t = from;
    for (;;) {
        switch (scan_earliest(p, t, limit, d, stop, FBF_PROFILE_SCAN_BUDGET, &t)) {
        case SCAN_FOUND: return t;
        case SCAN_NONE: return INFINITY;
        case SCAN_BLOCKED:
            if (!first_at_most(p, t, limit, &t) || !(t < stop))
                return INFINITY;
            break;
        default: /* SCAN_CANDIDATE */ break;
        }
        double k;
        /* t + d may round or overflow to INFINITY; either way it is the
         * window end the caller's own arithmetic would use. */
        found_at at;
        if (!last_above_p(p, t, t + d, limit, &k, &at))
            return t;
        if (!first_at_most_in_leaf(&at, limit, &t) && !first_at_most(p, k, limit, &t))
            return INFINITY;
        if (!(t < stop))
            return INFINITY;
    }
}

bool fbf_ptree_last_above(const fbf_ptree *p, double lo, double hi, int64_t limit, double *k)
{
    return last_above_p(p, lo, hi, limit, k, NULL);
}

bool fbf_ptree_first_key(const fbf_ptree *p, double after, int64_t limit, bool above, double *k)
{
    return first_key(p, p->root, p->height, 0, after, limit, !above, k);
}
