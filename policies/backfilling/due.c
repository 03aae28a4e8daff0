/*
 * due: which reservations are due, on the plain path: a min-heap of
 * (rsv, job) whose stale entries (the job started, or its reservation
 * moved) are dropped lazily and purged when they outnumber live ones.
 * The fast path asks the queue index instead (conservative.c).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"

int fbf_bf_due_note(fbf_bf_due *b, double t, fbf_job_h j)
{
    if (!b)
        return 0; /* the fast path: qi holds it */
    fbf_bf_rsv_item *v = fbf_policy_grow(b->heap, &b->cap, b->n, sizeof *v, 256);
    if (!v)
        return -ENOMEM;
    b->heap = v;
    size_t i = b->n++;
    while (i > 0 && t < b->heap[(i - 1) / 2].t) {
        b->heap[i] = b->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    b->heap[i] = (fbf_bf_rsv_item){t, j};
    return 0;
}

static void heap_sift_down(fbf_bf_due *b, size_t i)
{
    fbf_bf_rsv_item x = b->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= b->n)
            break;
        if (c + 1 < b->n && b->heap[c + 1].t < b->heap[c].t)
            c++;
        if (!(b->heap[c].t < x.t))
            break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    b->heap[i] = x;
}

static void heap_pop(fbf_bf_due *b)
{
    b->heap[0] = b->heap[--b->n];
    if (b->n)
        heap_sift_down(b, 0);
}

static bool live(fbf_sched *s, const fbf_bf_rsv_item *it)
{
    const fbf_job *j = fbf_sched_job(s, it->j);
    return j->state == FBF_JOB_WAITING && j->rsv == it->t;
}

/* Drops stale entries once they outnumber the live ones (amortised O(1)). */
static void heap_purge(fbf_bf_due *b, fbf_sched *s, size_t live_rsv)
{
    if (b->n < 2 * live_rsv + 1024)
        return;
    size_t k = 0;
    for (size_t i = 0; i < b->n; i++)
        if (live(s, &b->heap[i]))
            b->heap[k++] = b->heap[i];
    b->n = k;
    for (size_t i = k / 2; i-- > 0;)
        heap_sift_down(b, i);
}

int fbf_bf_due_take(fbf_bf_due *b, fbf_sched *s, double now, fbf_hvec *out)
{
    while (b->n && b->heap[0].t <= now) {
        if (live(s, &b->heap[0]) && fbf_hvec_push(out, b->heap[0].j) < 0)
            return -ENOMEM;
        heap_pop(b);
    }
    return 0;
}

double fbf_bf_due_first(fbf_bf_due *b, fbf_sched *s, size_t live_rsv)
{
    heap_purge(b, s, live_rsv);
    while (b->n && !live(s, &b->heap[0]))
        heap_pop(b);
    return b->n ? b->heap[0].t : INFINITY;
}

void fbf_bf_due_fini(fbf_bf_due *b)
{
    free(b->heap);
}
