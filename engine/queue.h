/*
 * queue: the waiting queue, split into partitions.
 *
 * Each partition is a doubly linked list of waiting jobs (links live in the
 * job records) kept in D1 order: (subtime, arrival). Jobs arrive almost
 * always in order, so an insert walks back from the tail and costs O(1) in
 * the common case. The whole queue's D1 order is the merge of the
 * partitions, walked by fbf_queue_iter (a cursor per partition, the
 * smallest key first; partitions are few, so a linear pick is cheapest).
 *
 * Thread ownership: a partition is touched by one thread at a time: its
 * worker during a pool phase, the engine's owner between phases.
 */
#ifndef FBF_QUEUE_H
#define FBF_QUEUE_H

#include <stddef.h>

#include "engine/jobs.h"

typedef struct fbf_partition {
    fbf_job_h head, tail;
    size_t count;
} fbf_partition;

void fbf_partition_init(fbf_partition *p);
/* Inserts j (not in any partition) in D1 order. */
void fbf_partition_insert(fbf_partition *p, fbf_jobs *js, fbf_job_h j);
/* Removes j, which must be in p. */
void fbf_partition_unlink(fbf_partition *p, fbf_jobs *js, fbf_job_h j);

typedef struct fbf_queue_iter {
    fbf_job_h *cur;
    unsigned n;
} fbf_queue_iter;

/* cur must hold n slots (owned by the caller). */
void fbf_queue_iter_init(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                         fbf_job_h *cur);
/* Next waiting job in D1 order, FBF_JOB_NONE at the end. The returned
 * job may be unlinked before the next call. */
fbf_job_h fbf_queue_iter_next(fbf_queue_iter *it, fbf_jobs *js);

/* Merges n lists of handles, each already in D1 order, into out (which
 * must have room for their total). */
void fbf_queue_merge(fbf_jobs *js, fbf_job_h *const *lists, const size_t *lens, unsigned n,
                     fbf_job_h *out);

#endif
