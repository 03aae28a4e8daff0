/*
 * queue_index: the next waiting job after J, in an order (D1, or a D9
 * order whose keys do not change while a job waits), that could pass a
 * test, without visiting every job: a treap keyed by (key, subtime, seq),
 * each subtree keeping min res and walltime (and min/max reservation); a
 * search skips subtrees whose aggregates fail a monotone predicate.
 * O(log n) per update. A job's key must not change while indexed; call
 * fbf_qindex_update() after its res/walltime/rsv change. Single thread.
 */
#ifndef FBF_QINDEX_H
#define FBF_QINDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/order_api.h"
#include "engine/policy_api.h"

typedef struct fbf_qindex fbf_qindex;

/* Aggregates of a subtree, or one job's own values (min == max rsv). The
 * reservation of a job without one counts as INFINITY. */
typedef struct fbf_qagg {
    uint32_t min_res;
    double min_wall;
    double min_rsv, max_rsv;
} fbf_qagg;

/* May a job with values dominated as in agg be wanted? Monotone, see above. */
typedef bool (*fbf_qindex_pred)(void *ctx, const fbf_qagg *agg);

/* Flags of fbf_qindex_create(). Without FBF_QINDEX_RSV the index keeps no
 * reservation aggregates (16 bytes less per handle): min_rsv and max_rsv
 * then always read INFINITY and -INFINITY, whatever the jobs hold, and a
 * predicate must not look at them. */
#define FBF_QINDEX_RSV 1u

/* An index in D1 order, and one in the order ord (NULL: D1; not dynamic). */
fbf_qindex *fbf_qindex_create(unsigned flags);
fbf_qindex *fbf_qindex_create_ordered(unsigned flags, const fbf_order_ops *ord);
void fbf_qindex_destroy(fbf_qindex *q);

/* -ENOMEM; the job must not be indexed yet. */
int fbf_qindex_insert(fbf_qindex *q, fbf_sched *s, fbf_job_h h);
void fbf_qindex_remove(fbf_qindex *q, fbf_sched *s, fbf_job_h h);
/* Refreshes the aggregates after the job's rsv (or res, walltime) changed. */
void fbf_qindex_update(fbf_qindex *q, fbf_sched *s, fbf_job_h h);
bool fbf_qindex_contains(const fbf_qindex *q, fbf_job_h h);
size_t fbf_qindex_count(const fbf_qindex *q);
/* Aggregates of all indexed jobs (min_res UINT32_MAX when empty). */
fbf_qagg fbf_qindex_all(const fbf_qindex *q);
/* The root of the qindex's own tree, for the _after and _at functions. */
uint32_t fbf_qindex_root(const fbf_qindex *q);

/* A job's place in the index's order, taken while it waits; -1, 0, 1 as
 * a is before, at or after b in it. */
typedef struct fbf_qindex_probe {
    double key, subtime;
    uint64_t seq;
} fbf_qindex_probe;
/* Order of places: key, then subtime, then seq (D9 then D1). */
static inline int fbf_qindex_probe_cmp(const fbf_qindex_probe *a, const fbf_qindex_probe *b)
{
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}
fbf_qindex_probe fbf_qindex_probe_of(const fbf_qindex *q, fbf_sched *s, fbf_job_h h);
int fbf_qindex_cmp(const fbf_qindex *q, fbf_sched *s, fbf_job_h a, fbf_job_h b);

/* The first indexed job after `after` in the index's order (from the head if
 * FBF_JOB_NONE; `after` need not be indexed) whose own values satisfy
 * pred, or FBF_JOB_NONE. */
fbf_job_h fbf_qindex_next(const fbf_qindex *q, fbf_sched *s, fbf_job_h after,
                          fbf_qindex_pred pred, void *ctx);

/* Groups: several disjoint trees sharing one qindex's node storage, each
 * rooted at a uint32_t the caller keeps (0: empty tree). A job is in at
 * most one tree of a qindex; contains and count cover all of them; the
 * other functions above work on the qindex's own tree. */
int fbf_qindex_insert_at(fbf_qindex *q, fbf_sched *s, uint32_t *root, fbf_job_h h);
void fbf_qindex_remove_at(fbf_qindex *q, fbf_sched *s, uint32_t *root, fbf_job_h h);
void fbf_qindex_update_at(fbf_qindex *q, fbf_sched *s, uint32_t root, fbf_job_h h);
fbf_job_h fbf_qindex_next_at(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                             fbf_job_h after, fbf_qindex_pred pred, void *ctx);
/* The same after a place (NULL: from the head), for a job gone since. */
fbf_job_h fbf_qindex_next_after(const fbf_qindex *q, fbf_sched *s, uint32_t root,
                                const fbf_qindex_probe *after, fbf_qindex_pred pred, void *ctx);

/* Bytes held (for memory accounting). */
size_t fbf_qindex_bytes(const fbf_qindex *q);

#endif
