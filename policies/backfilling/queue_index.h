/*
 * qindex: an index over waiting jobs in an order (D1, or an order of D9
 * whose keys do not change while a job waits), for policies that must
 * find "the next job after J that could possibly do X" without visiting
 * every waiting job.
 *
 * A treap keyed by (key, subtime, seq), one node per indexed job (the key
 * is the subtime itself under D1), addressed by
 * the job's handle (slot h + 1; slot 0 is nil): the slots cover every
 * handle up to the largest indexed, 32 bytes each (48 with reservations).
 * Each subtree keeps the minimum res and walltime and, when asked for, the
 * minimum and maximum reservation of its jobs. A search descends in key
 * order and skips every subtree whose aggregates fail a caller's
 * predicate; the predicate must be monotone
 * (true for a subtree whenever it is true for some job in it, given that
 * job's own values), so skipping never loses a job. Cost: O(log n) per
 * update, O(log n) plus the subtrees the predicate cannot rule out per
 * search.
 *
 * The job records are read through fbf_sched_job(): a job's key must not
 * change while indexed (its node keeps a copy, by which it is removed),
 * and after its res/walltime/rsv change the caller calls
 * fbf_qindex_update(). Ownership: _create/_destroy; single thread.
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
