/*
 * queue: the waiting queue, split into partitions.
 *
 * Each partition holds its waiting jobs in queue order (jobs.h:
 * fbf_job_key_cmp, D9 then D1), with the links in the job records, in one
 * of three forms chosen by the queue order:
 *   - FBF_QUEUE_LIST (D1, the default): a doubly linked list; jobs arrive
 *     almost always in order, so an insert walks back from the tail and
 *     costs O(1) in the common case;
 *   - FBF_QUEUE_TREE (an order whose keys do not change while a job waits:
 *     sjf, saf, priority): a treap (prev/next are the children, the
 *     priority a hash of the handle), O(log n) expected per insert,
 *     removal and step of a walk, whatever the keys;
 *   - FBF_QUEUE_UNSORTED (keys that change with time: lxf, wfp3): a list
 *     that inserts append to, put in order by fbf_partition_sort() once
 *     keys are taken at a decision point.
 * The whole queue's order is the merge of the partitions, walked by
 * fbf_queue_iter (a cursor per partition, the smallest key first;
 * partitions are few, so a linear pick is cheapest).
 *
 * Thread ownership: a partition is touched by one thread at a time: its
 * worker during a pool phase, the engine's owner between phases.
 */
#ifndef FBF_QUEUE_H
#define FBF_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/jobs.h"

typedef enum fbf_queue_mode {
    FBF_QUEUE_LIST = 0,
    FBF_QUEUE_TREE,
    FBF_QUEUE_UNSORTED,
} fbf_queue_mode;

typedef struct fbf_partition {
    fbf_job_h head, tail; /* TREE: head is the root, tail the first job */
    size_t count;
    fbf_queue_mode mode;
} fbf_partition;

/* An empty LIST partition; fbf_partition_init_mode() for the others. */
void fbf_partition_init(fbf_partition *p);
void fbf_partition_init_mode(fbf_partition *p, fbf_queue_mode mode);
/* Inserts j (not in any partition) in queue order (UNSORTED: at the end). */
void fbf_partition_insert(fbf_partition *p, fbf_jobs *js, fbf_job_h j);
/* Removes j, which must be in p with the key it was inserted with. */
void fbf_partition_unlink(fbf_partition *p, fbf_jobs *js, fbf_job_h j);
/* The first job in queue order and the one after h (h in p), or
 * FBF_JOB_NONE. O(1) for lists, O(log n) expected for a tree. */
fbf_job_h fbf_partition_first(const fbf_partition *p, fbf_jobs *js);
fbf_job_h fbf_partition_next(const fbf_partition *p, fbf_jobs *js, fbf_job_h h);
/* Calls fn(ctx, job) for every job of p in queue order, O(n), until fn
 * returns false. */
void fbf_partition_foreach(const fbf_partition *p, fbf_jobs *js,
                           bool (*fn)(void *ctx, fbf_job_h h, const fbf_job *j), void *ctx);
/* UNSORTED: sets every job's qkey to key(j, now) and puts the list in
 * queue order. -ENOMEM (nothing changed). */
int fbf_partition_sort(fbf_partition *p, fbf_jobs *js, double (*key)(const fbf_job *, double),
                       double now);

/* A place in the queue order: a job's key, kept while its record may
 * change. */
typedef struct fbf_queue_place {
    double qkey, subtime;
    uint64_t seq;
    bool pending; /* the iterator's: a walk stopped here in a tree */
} fbf_queue_place;

typedef struct fbf_queue_iter {
    fbf_job_h *cur;
    unsigned n;
    const fbf_partition *parts;
    fbf_queue_place *after; /* NULL: every step looked up at once */
} fbf_queue_iter;

/* cur must hold n slots (owned by the caller). */
void fbf_queue_iter_init(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                         fbf_job_h *cur);
/* The same, a tree's next job looked up only when asked for, from the
 * place of the one returned before (after: n slots, the caller's). A walk
 * that stops after k jobs then costs k lookups, not k + 1. */
void fbf_queue_iter_init_lazy(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                              fbf_job_h *cur, fbf_queue_place *after);
/* Next waiting job in queue order, FBF_JOB_NONE at the end. The returned
 * job may be unlinked before the next call. */
fbf_job_h fbf_queue_iter_next(fbf_queue_iter *it, fbf_jobs *js);

/* Merges n lists of handles, each already in queue order, into out (which
 * must have room for their total). */
void fbf_queue_merge(fbf_jobs *js, fbf_job_h *const *lists, const size_t *lens, unsigned n,
                     fbf_job_h *out);

#endif
