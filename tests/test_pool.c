/*
 * test_pool: the worker pool's contract (engine/pool.h): messages posted to
 * a worker reach it in order, a full ring loses nothing, a phase runs on
 * every worker after its messages are applied, and destroy drains.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "engine/pool.h"

/* ---- fbf_pool ---------------------------------------------------------------- */

enum { PW = 4, PCAP = 300000 };

/* What the workers saw; worker w only writes slot w, the owner reads
 * after fbf_pool_run() or fbf_pool_destroy() returns. */
typedef struct pool_log {
    uint64_t v[PW][PCAP];
    size_t n[PW];
    unsigned phases[PW];
    size_t seen[PW]; /* n[w] when the phase function ran */
} pool_log;

static pool_log plog;

static void log_apply(void *ctx, unsigned w, uint64_t msg)
{
    pool_log *l = ctx;
    if (l->n[w] < PCAP)
        l->v[w][l->n[w]] = msg;
    l->n[w]++;
}

static void log_phase(void *arg, unsigned w)
{
    pool_log *l = arg;
    l->phases[w]++;
    l->seen[w] = l->n[w];
}

static pool_log *mk_log(void)
{
    memset(&plog, 0, sizeof plog);
    return &plog;
}

/* Worker w received exactly the messages m = w + PW * i, i < count, in order. */
static void expect_fifo(const pool_log *l, unsigned w, size_t count, uint64_t base)
{
    assert_int_equal(l->n[w], count);
    for (size_t i = 0; i < count; i++)
        if (l->v[w][i] != base + w + PW * i)
            fail_msg("worker %u message %zu: %llu", w, i, (unsigned long long)l->v[w][i]);
}

static void test_pool_delivery_and_phases(void **state)
{
    (void)state;
    pool_log *l = mk_log();
    errno = 0;
    assert_null(fbf_pool_create(0, log_apply, l));
    assert_int_equal(errno, EINVAL);
    assert_null(fbf_pool_create(257, log_apply, l));
    fbf_pool_destroy(NULL);
    fbf_pool *p = fbf_pool_create(PW, log_apply, l);
    assert_non_null(p);
    assert_int_equal(fbf_pool_size(p), PW);
    for (uint64_t m = 0; m < 1000; m++)
        fbf_pool_post(p, (unsigned)(m % PW), m);
    fbf_pool_run(p, log_phase, l); /* drain first, then the phase */
    for (unsigned w = 0; w < PW; w++) {
        expect_fifo(l, w, 250, 0);
        assert_int_equal(l->phases[w], 1);
        assert_int_equal(l->seen[w], 250);
    }
    for (int r = 0; r < 9; r++)
        fbf_pool_run(p, log_phase, l);
    fbf_pool_run(p, NULL, NULL); /* a pure drain runs no phase function */
    for (unsigned w = 0; w < PW; w++)
        assert_int_equal(l->phases[w], 10);
    fbf_pool_destroy(p);
}

/* A ring holds 65536 messages: posting more must lose none. */
static void test_pool_full_ring(void **state)
{
    (void)state;
    pool_log *l = mk_log();
    fbf_pool *p = fbf_pool_create(PW, log_apply, l);
    assert_non_null(p);
    enum { M = 200000 };
    for (uint64_t i = 0; i < M; i++)
        fbf_pool_post(p, 1, 1 + PW * i);
    for (uint64_t i = 0; i < 10; i++)
        fbf_pool_post(p, 2, 2 + PW * i);
    fbf_pool_run(p, log_phase, l);
    expect_fifo(l, 1, M, 0);
    expect_fifo(l, 2, 10, 0);
    assert_int_equal(l->n[0], 0);
    assert_int_equal(l->seen[1], M);
    fbf_pool_destroy(p);
}

static void test_pool_destroy_drains(void **state)
{
    (void)state;
    pool_log *l = mk_log();
    fbf_pool *p = fbf_pool_create(PW, log_apply, l);
    assert_non_null(p);
    for (uint64_t m = 0; m < 4000; m++)
        fbf_pool_post(p, (unsigned)(m % PW), 100 + m);
    fbf_pool_destroy(p);
    for (unsigned w = 0; w < PW; w++) {
        expect_fifo(l, w, 1000, 100);
        assert_int_equal(l->phases[w], 0);
    }
}

/* One worker is the owner: a post is applied at once and a phase runs on
 * the calling thread, so --workers 1 has no thread to wake. */
typedef struct solo_log {
    pthread_t owner;
    unsigned applied, phases, off_thread;
} solo_log;

static void solo_apply(void *ctx, unsigned w, uint64_t msg)
{
    solo_log *l = ctx;
    l->applied += w == 0 && msg == l->applied;
    l->off_thread += !pthread_equal(pthread_self(), l->owner);
}

static void solo_phase(void *arg, unsigned w)
{
    solo_log *l = arg;
    l->phases += w == 0;
    l->off_thread += !pthread_equal(pthread_self(), l->owner);
}

static void test_pool_one_worker_is_the_owner(void **state)
{
    (void)state;
    solo_log l = {.owner = pthread_self()};
    fbf_pool *p = fbf_pool_create(1, solo_apply, &l);
    assert_non_null(p);
    assert_int_equal(fbf_pool_size(p), 1);
    for (uint64_t m = 0; m < 100000; m++) {
        fbf_pool_post(p, 0, m);
        assert_int_equal(l.applied, m + 1); /* applied when posted */
    }
    fbf_pool_sync(p, 0);
    fbf_pool_run(p, solo_phase, &l);
    fbf_pool_run(p, NULL, NULL);
    fbf_pool_run_inline(p, solo_phase, &l);
    assert_int_equal(l.phases, 2);
    assert_int_equal(l.off_thread, 0);
    fbf_pool_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pool_delivery_and_phases),
        cmocka_unit_test(test_pool_full_ring),
        cmocka_unit_test(test_pool_destroy_drains),
        cmocka_unit_test(test_pool_one_worker_is_the_owner),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
