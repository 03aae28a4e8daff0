/*
 * pool: worker threads, SPSC rings and the phase barrier (see pool.h for
 * the DESIGN: who owns what, when).
 *
 * Invariants: `generation` only grows and only the owner bumps it, under
 * the mutex; a worker runs exactly one phase per generation; `pending`
 * counts workers that have not finished the current phase and reaches 0
 * exactly once per phase.
 *
 * One worker is the owner itself: with n == 1 there is no thread, no ring
 * and no barrier; a post is applied at once and a phase is a call, on the
 * owner's thread (the ownership rules of pool.h then hold trivially).
 */
#include "engine/pool.h"

#include <ck_ring.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#define RING_SIZE (1u << 16) /* power of two, as ck_ring requires */

typedef struct worker {
    fbf_pool *pool;
    unsigned idx;
    pthread_t thread;
    unsigned posted; /* owner's count of messages since the last drain */
    ck_ring_t ring;
    ck_ring_buffer_t *buf;
} worker;

struct fbf_pool {
    unsigned n;
    fbf_pool_apply_fn apply;
    void *ctx;
    worker *w;

    pthread_mutex_t mu;
    pthread_cond_t go;   /* owner -> workers: a new generation */
    pthread_cond_t done; /* last worker -> owner: pending hit 0 */
    uint64_t generation;
    unsigned pending;
    bool stop;
    bool solo; /* n == 1: the owner does the work (see above) */
    fbf_pool_phase_fn fn;
    void *arg;
};

static void drain(worker *w)
{
    void *msg;
    /* Messages are stored in the pointer-sized slot itself. */
    while (ck_ring_dequeue_spsc(&w->ring, w->buf, &msg))
        w->pool->apply(w->pool->ctx, w->idx, (uint64_t)(uintptr_t)msg);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    fbf_pool *p = w->pool;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->stop)
            pthread_cond_wait(&p->go, &p->mu);
        bool stop = p->stop && p->generation == seen;
        seen = p->generation;
        fbf_pool_phase_fn fn = p->fn;
        void *farg = p->arg;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            break;

        drain(w);
        if (fn)
            fn(farg, w->idx);

        pthread_mutex_lock(&p->mu);
        if (--p->pending == 0)
            pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
    drain(w);
    return NULL;
}

fbf_pool *fbf_pool_create(unsigned n, fbf_pool_apply_fn apply, void *ctx)
{
    if (n == 0 || n > 256 || !apply) {
        errno = EINVAL;
        return NULL;
    }
    fbf_pool *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->n = n;
    p->apply = apply;
    p->ctx = ctx;
    p->solo = n == 1;
    if (p->solo)
        return p;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->w = calloc(n, sizeof *p->w);
    if (!p->w)
        goto fail;
    for (unsigned i = 0; i < n; i++) {
        worker *w = &p->w[i];
        w->pool = p;
        w->idx = i;
        w->buf = malloc(RING_SIZE * sizeof *w->buf);
        if (!w->buf)
            goto fail;
        ck_ring_init(&w->ring, RING_SIZE);
    }
    for (unsigned i = 0; i < n; i++) {
        if (pthread_create(&p->w[i].thread, NULL, worker_main, &p->w[i]) != 0) {
            /* Join the ones already started before unwinding. */
            pthread_mutex_lock(&p->mu);
            p->stop = true;
            pthread_cond_broadcast(&p->go);
            pthread_mutex_unlock(&p->mu);
            for (unsigned k = 0; k < i; k++)
                pthread_join(p->w[k].thread, NULL);
            p->n = 0;
            goto fail;
        }
    }
    return p;
fail:
    if (p->w)
        for (unsigned i = 0; i < n; i++)
            free(p->w[i].buf);
    free(p->w);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
    errno = ENOMEM;
    return NULL;
}

void fbf_pool_destroy(fbf_pool *p)
{
    if (!p)
        return;
    if (p->solo) {
        free(p);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (unsigned i = 0; i < p->n; i++) {
        pthread_join(p->w[i].thread, NULL);
        free(p->w[i].buf);
    }
    free(p->w);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p);
}

unsigned fbf_pool_size(const fbf_pool *p) { return p->n; }

void fbf_pool_run(fbf_pool *p, fbf_pool_phase_fn fn, void *arg)
{
    if (p->solo) {
        if (fn)
            fn(arg, 0);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn;
    p->arg = arg;
    p->pending = p->n;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    while (p->pending > 0)
        pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

void fbf_pool_post(fbf_pool *p, unsigned w, uint64_t msg)
{
    if (p->solo) {
        p->apply(p->ctx, 0, msg);
        return;
    }
    worker *wk = &p->w[w];
    while (!ck_ring_enqueue_spsc(&wk->ring, wk->buf, (void *)(uintptr_t)msg))
        fbf_pool_sync(p, 0); /* ring full: let every worker drain */
    wk->posted++;
}

void fbf_pool_sync(fbf_pool *p, unsigned inline_below)
{
    if (p->solo)
        return; /* every post was applied when made */
    unsigned total = 0;
    for (unsigned i = 0; i < p->n; i++)
        total += p->w[i].posted;
    if (total == 0)
        return;
    if (total < inline_below) {
        for (unsigned i = 0; i < p->n; i++)
            drain(&p->w[i]);
    } else {
        fbf_pool_run(p, NULL, NULL);
    }
    for (unsigned i = 0; i < p->n; i++)
        p->w[i].posted = 0;
}

void fbf_pool_run_inline(fbf_pool *p, fbf_pool_phase_fn fn, void *arg)
{
    for (unsigned i = 0; i < p->n; i++)
        fn(arg, i);
}
