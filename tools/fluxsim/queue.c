/*
 * queue: the job manager's containers (see fluxsim.h): the timed events
 * (a binary min-heap by time, kind, sequence) and the alloc queue of SCHED
 * jobs (a binary heap in flux-core's order, priority then submit time
 * then id, whose stale entries, of a job that left or changed priority,
 * are dropped as they surface), and the seeded generator.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <stdlib.h>

int fs_grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    void *p = realloc(*v, c * sz);
    if (!p)
        return -ENOMEM;
    *v = p;
    *cap = c;
    return 0;
}

static bool fs_tev_less(const tev *a, const tev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->seq < b->seq;
}

int fs_heap_push(fluxsim *fs, tev e)
{
    if (fs_grow((void **)&fs->heap, &fs->hcap, fs->nheap, sizeof *fs->heap) < 0)
        return -ENOMEM;
    size_t i = fs->nheap++;
    while (i > 0 && fs_tev_less(&e, &fs->heap[(i - 1) / 2])) {
        fs->heap[i] = fs->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    fs->heap[i] = e;
    return 0;
}

tev fs_heap_pop(fluxsim *fs)
{
    tev top = fs->heap[0], last = fs->heap[--fs->nheap];
    size_t i = 0, n = fs->nheap;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && fs_tev_less(&fs->heap[c + 1], &fs->heap[c]))
            c++;
        if (!fs_tev_less(&fs->heap[c], &last))
            break;
        fs->heap[i] = fs->heap[c];
        i = c;
    }
    if (n)
        fs->heap[i] = last;
    return top;
}

/* flux-core's queue order: priority (higher first), submit time, id. */
bool fs_q_less(const fluxsim *fs, qent a, qent b)
{
    const sjob *x = &fs->jobs[a.job], *y = &fs->jobs[b.job];
    if (x->priority != y->priority)
        return x->priority > y->priority;
    if (x->t_submit != y->t_submit)
        return x->t_submit < y->t_submit;
    return x->id < y->id;
}

int fs_q_push(fluxsim *fs, uint32_t job)
{
    qent e = {job, ++fs->jobs[job].heap_ver};
    if (fs_grow((void **)&fs->queue, &fs->qcap, fs->nqueue, sizeof *fs->queue) < 0)
        return -ENOMEM;
    size_t i = fs->nqueue++;
    while (i > 0 && fs_q_less(fs, e, fs->queue[(i - 1) / 2])) {
        fs->queue[i] = fs->queue[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    fs->queue[i] = e;
    return 0;
}

void fs_q_pop(fluxsim *fs)
{
    qent last = fs->queue[--fs->nqueue];
    size_t i = 0, n = fs->nqueue;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && fs_q_less(fs, fs->queue[c + 1], fs->queue[c]))
            c++;
        if (!fs_q_less(fs, fs->queue[c], last))
            break;
        fs->queue[i] = fs->queue[c];
        i = c;
    }
    if (n)
        fs->queue[i] = last;
}

/* The queue's head, stale entries dropped; UINT32_MAX when empty. */
uint32_t fs_q_head(fluxsim *fs)
{
    while (fs->nqueue) {
        qent e = fs->queue[0];
        const sjob *j = &fs->jobs[e.job];
        if (j->st == SJ_SCHED && j->heap_ver == e.ver)
            return e.job;
        fs_q_pop(fs);
    }
    return UINT32_MAX;
}

uint32_t fs_rnd(uint64_t *s, uint32_t bound)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return (uint32_t)(((*s * 0x2545F4914F6CDD1DULL) >> 32) % bound);
}

double fs_urand(uint64_t *s) { return fs_rnd(s, 1u << 30) / (double)(1u << 30); }

