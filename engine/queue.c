/*
 * queue: partitions of the waiting queue and their merged D1 order (see
 * queue.h). Invariant: along next links, fbf_job_key_cmp is strictly
 * increasing; head/tail are FBF_JOB_NONE iff count == 0.
 */
#include "engine/queue.h"

void fbf_partition_init(fbf_partition *p)
{
    p->head = p->tail = FBF_JOB_NONE;
    p->count = 0;
}

void fbf_partition_insert(fbf_partition *p, fbf_jobs *js, fbf_job_h h)
{
    fbf_job *j = fbf_jobs_get(js, h);
    fbf_job_h after = p->tail;
    while (after != FBF_JOB_NONE && fbf_job_key_cmp(fbf_jobs_get(js, after), j) > 0)
        after = fbf_jobs_get(js, after)->prev;
    j->prev = after;
    if (after == FBF_JOB_NONE) {
        j->next = p->head;
        p->head = h;
    } else {
        fbf_job *a = fbf_jobs_get(js, after);
        j->next = a->next;
        a->next = h;
    }
    if (j->next == FBF_JOB_NONE)
        p->tail = h;
    else
        fbf_jobs_get(js, j->next)->prev = h;
    p->count++;
}

void fbf_partition_unlink(fbf_partition *p, fbf_jobs *js, fbf_job_h h)
{
    fbf_job *j = fbf_jobs_get(js, h);
    if (j->prev == FBF_JOB_NONE)
        p->head = j->next;
    else
        fbf_jobs_get(js, j->prev)->next = j->next;
    if (j->next == FBF_JOB_NONE)
        p->tail = j->prev;
    else
        fbf_jobs_get(js, j->next)->prev = j->prev;
    j->prev = j->next = FBF_JOB_NONE;
    p->count--;
}

void fbf_queue_iter_init(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                         fbf_job_h *cur)
{
    it->cur = cur;
    it->n = n;
    for (unsigned i = 0; i < n; i++)
        cur[i] = parts[i].head;
}

fbf_job_h fbf_queue_iter_next(fbf_queue_iter *it, fbf_jobs *js)
{
    unsigned best = it->n;
    const fbf_job *bj = NULL;
    for (unsigned i = 0; i < it->n; i++) {
        if (it->cur[i] == FBF_JOB_NONE)
            continue;
        const fbf_job *j = fbf_jobs_get(js, it->cur[i]);
        if (!bj || fbf_job_key_cmp(j, bj) < 0) {
            bj = j;
            best = i;
        }
    }
    if (best == it->n)
        return FBF_JOB_NONE;
    fbf_job_h h = it->cur[best];
    it->cur[best] = bj->next; /* advance first: the caller may unlink h */
    return h;
}

void fbf_queue_merge(fbf_jobs *js, fbf_job_h *const *lists, const size_t *lens, unsigned n,
                     fbf_job_h *out)
{
    size_t pos[256] = {0};
    size_t k = 0;
    for (;;) {
        unsigned best = n;
        const fbf_job *bj = NULL;
        for (unsigned i = 0; i < n; i++) {
            if (pos[i] == lens[i])
                continue;
            const fbf_job *j = fbf_jobs_get(js, lists[i][pos[i]]);
            if (!bj || fbf_job_key_cmp(j, bj) < 0) {
                bj = j;
                best = i;
            }
        }
        if (best == n)
            return;
        out[k++] = lists[best][pos[best]++];
    }
}
