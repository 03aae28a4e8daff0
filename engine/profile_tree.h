/*
 * profile_tree: the B+ tree of breakpoints under engine/profile.c: its
 * nodes, their storage, the updates that keep it balanced and the walks
 * over its keys in order. Private to
 * engine/: profile.c reads the nodes directly for its queries.
 *
 * A leaf holds up to FBF_PTREE_LEAF_MAX breakpoints in key order: the
 * time, the change of used() there, and how many live span endpoints sit
 * there. An inner node holds up to FBF_PTREE_INNER_MAX children and, for
 * child i, hi[i], the largest key under it (its keys lie in
 * (hi[i - 1], hi[i]]), and a[i], the aggregates of its keys k1 < ... < km:
 *   sum  = delta(k1) + ... + delta(km)
 *   maxp = max over j in 1..m of delta(k1) + ... + delta(kj)
 *   minp = min over the same non-empty prefixes;
 * the empty prefix is excluded so that "base + maxp > x" means that some
 * key under the child really has used() > x (base = the sum of all keys
 * before it). All leaves are `height` levels below the root (0: the root
 * is a leaf, which may be empty).
 *
 * Ownership: a tree lives inside its profile (init/fini). Node indices
 * stay valid until the next update; pointers from the accessors until the
 * next fbf_ptree_reserve. Errors: -ENOMEM from init and reserve, which
 * leave the tree as it was.
 */
#ifndef FBF_PROFILE_TREE_H
#define FBF_PROFILE_TREE_H

#include <stddef.h>
#include <stdint.h>

#define FBF_PTREE_LEAF_MAX 32
#define FBF_PTREE_INNER_MAX 16

typedef struct fbf_ptree_agg {
    int64_t sum, maxp, minp;
} fbf_ptree_agg;

typedef struct fbf_ptree_leaf {
    double key[FBF_PTREE_LEAF_MAX];
    int64_t delta[FBF_PTREE_LEAF_MAX];
    uint32_t refs[FBF_PTREE_LEAF_MAX];
    uint32_t n;
} fbf_ptree_leaf;

typedef struct fbf_ptree_inner {
    double hi[FBF_PTREE_INNER_MAX];
    fbf_ptree_agg a[FBF_PTREE_INNER_MAX];
    uint32_t kid[FBF_PTREE_INNER_MAX];
    uint32_t n;
} fbf_ptree_inner;

/* Fixed-size slots addressed by index; see profile_tree.c. */
typedef struct fbf_ptree_pool {
    unsigned char *v;
    size_t size;
    uint32_t cap, hw, free_head, nfree;
} fbf_ptree_pool;

typedef struct fbf_ptree {
    fbf_ptree_pool leaves, inners;
    uint32_t root;
    unsigned height;
    size_t count; /* stored keys */
} fbf_ptree;

int fbf_ptree_init(fbf_ptree *t);
void fbf_ptree_fini(fbf_ptree *t);

/* Makes room for the nodes two insertions can need, so that the two
 * fbf_ptree_upsert calls of one span cannot fail half-way. */
int fbf_ptree_reserve(fbf_ptree *t);

/* Adds d to the delta and dref (+1 or -1) to the endpoint count at key,
 * inserting the key if absent (after fbf_ptree_reserve) and removing it
 * once no span ends there and its delta is 0. */
void fbf_ptree_upsert(fbf_ptree *t, double key, int64_t d, int dref);

/* Calls fn(key, sum, ctx) for each key in ascending order (every key, or
 * those with lo < key < hi), sum being the sum of the deltas up to and
 * including it. */
void fbf_ptree_foreach(const fbf_ptree *t, void (*fn)(double key, int64_t sum, void *ctx),
                       void *ctx);
void fbf_ptree_foreach_between(const fbf_ptree *t, double lo, double hi,
                               void (*fn)(double key, int64_t sum, void *ctx), void *ctx);

static inline const fbf_ptree_leaf *fbf_ptree_leaf_at(const fbf_ptree *t, uint32_t x)
{
    return (const fbf_ptree_leaf *)t->leaves.v + x;
}

static inline const fbf_ptree_inner *fbf_ptree_inner_at(const fbf_ptree *t, uint32_t x)
{
    return (const fbf_ptree_inner *)t->inners.v + x;
}

/* The child of x whose keys may hold key: the first whose largest key is
 * >= key, else the last. */
static inline uint32_t fbf_ptree_route(const fbf_ptree_inner *x, double key)
{
    uint32_t i = 0;
    while (i + 1 < x->n && x->hi[i] < key)
        i++;
    return i;
}

#endif
