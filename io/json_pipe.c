/*
 * json_pipe: see json_pipe.h.
 *
 * Invariants, under mu: the batches are a ring; `filled` of them, from
 * `head` on, are the helper's finished work, the first of them the one
 * the consumer reads (cur, from pos); the helper fills slot
 * (head + filled) % N outside the lock, and only while filled < N. A batch
 * with `last` set is the helper's final one: its elements, then its rc
 * (0: the stream ended well) close the sequence. `stop` asks the helper
 * to quit before its next batch.
 */
#include "io/json_pipe.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define N FBF_JSON_PIPE_BATCHES

typedef struct batch {
    fbf_json_arena *arena;
    const cJSON *v[FBF_JSON_PIPE_BATCH];
    size_t n;
    bool last;
    int rc;
    fbf_error err;
} batch;

struct fbf_json_pipe {
    fbf_json_stream *s;
    fbf_json_pipe_check_fn check;
    void *ctx;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t ready; /* the consumer waits for a filled batch */
    pthread_cond_t room;  /* the helper waits for a free slot */
    size_t head, filled;
    bool stop;
    bool started; /* the helper runs (or ran): destroy joins it */
    batch *cur;   /* consumer side: the batch being read, or NULL */
    size_t pos;
    batch b[N];
};

/* Fills one batch; true when the stream is over (b->last). */
static bool fill(fbf_json_pipe *p, batch *b)
{
    fbf_json_arena_clear(b->arena);
    b->n = 0;
    b->rc = 0;
    b->last = false;
    fbf_json_stream *s = p->s;
    s->arena = b->arena;
    while (b->n < FBF_JSON_PIPE_BATCH) {
        cJSON *e;
        int rc = fbf_json_stream_next(s, &e, &b->err);
        if (rc == 1 && (rc = p->check(p->ctx, e, &b->err)) == 0) {
            b->v[b->n++] = e;
            continue;
        }
        b->rc = rc < 0 ? rc : 0;
        b->last = true;
        return true;
    }
    return false;
}

static void *helper_main(void *arg)
{
    fbf_json_pipe *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->filled == N && !p->stop)
            pthread_cond_wait(&p->room, &p->mu);
        bool stop = p->stop;
        batch *b = &p->b[(p->head + p->filled) % N];
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        bool last = fill(p, b);
        pthread_mutex_lock(&p->mu);
        p->filled++;
        pthread_cond_signal(&p->ready);
        pthread_mutex_unlock(&p->mu);
        if (last)
            return NULL;
    }
}

int fbf_json_pipe_start(fbf_json_pipe **out, fbf_json_stream *s, fbf_json_pipe_check_fn check,
                        void *ctx, fbf_error *err)
{
    *out = NULL;
    fbf_json_pipe *p = calloc(1, sizeof *p);
    if (!p)
        return fbf_errorf(err, -ENOMEM, "out of memory starting the parse thread");
    p->s = s;
    p->check = check;
    p->ctx = ctx;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->ready, NULL);
    pthread_cond_init(&p->room, NULL);
    for (size_t i = 0; i < N; i++)
        if (!(p->b[i].arena = fbf_json_arena_create())) {
            fbf_json_pipe_destroy(p);
            return fbf_errorf(err, -ENOMEM, "out of memory starting the parse thread");
        }
    s->keep = true;
    int e = pthread_create(&p->thread, NULL, helper_main, p);
    if (e != 0) {
        s->keep = false;
        fbf_json_pipe_destroy(p);
        return fbf_errorf(err, -EAGAIN, "cannot start the parse thread: %s", strerror(e));
    }
    p->started = true;
    *out = p;
    return 0;
}

int fbf_json_pipe_next(fbf_json_pipe *p, const cJSON **elem, fbf_error *err)
{
    *elem = NULL;
    for (;;) {
        batch *b = p->cur;
        if (b) {
            if (p->pos < b->n) {
                *elem = b->v[p->pos++];
                return 1;
            }
            if (b->last) {
                if (b->rc < 0)
                    *err = b->err;
                return b->rc;
            }
            pthread_mutex_lock(&p->mu);
            p->head = (p->head + 1) % N;
            p->filled--;
            pthread_cond_signal(&p->room);
            pthread_mutex_unlock(&p->mu);
            p->cur = NULL;
        }
        pthread_mutex_lock(&p->mu);
        while (p->filled == 0)
            pthread_cond_wait(&p->ready, &p->mu);
        p->cur = &p->b[p->head];
        pthread_mutex_unlock(&p->mu);
        p->pos = 0;
    }
}

void fbf_json_pipe_destroy(fbf_json_pipe *p)
{
    if (!p)
        return;
    if (p->started) {
        pthread_mutex_lock(&p->mu);
        p->stop = true;
        pthread_cond_signal(&p->room);
        pthread_mutex_unlock(&p->mu);
        pthread_join(p->thread, NULL);
    }
    pthread_cond_destroy(&p->room);
    pthread_cond_destroy(&p->ready);
    pthread_mutex_destroy(&p->mu);
    for (size_t i = 0; i < N; i++)
        fbf_json_arena_destroy(p->b[i].arena);
    free(p);
}
