/*
 * test_profile: the availability profile against hand-computed cases and
 * against a deliberately naive reference (an array of spans scanned
 * linearly) under thousands of random operations.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/profile.h"

/* ---- helpers ---------------------------------------------------------- */

typedef struct dump {
    double t[256];
    int64_t used[256];
    size_t n;
} dump;

static void dump_fn(double t, int64_t used_after, void *ctx)
{
    dump *d = ctx;
    assert_true(d->n < 256);
    d->t[d->n] = t;
    d->used[d->n] = used_after;
    d->n++;
}

static fbf_profile *mk(uint32_t cap)
{
    fbf_profile *p = fbf_profile_create(cap);
    assert_non_null(p);
    return p;
}

/* ---- hand-computed cases ---------------------------------------------- */

static void test_add_remove_basics(void **state)
{
    (void)state;
    fbf_profile *p = mk(10);
    assert_int_equal(fbf_profile_capacity(p), 10);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    assert_int_equal(fbf_profile_free_at(p, 0), 10);

    assert_int_equal(fbf_profile_add(p, 2, 5, 3), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 2);
    assert_int_equal(fbf_profile_free_at(p, 1.999), 10);
    assert_int_equal(fbf_profile_free_at(p, 2), 7);
    assert_int_equal(fbf_profile_free_at(p, 4.999), 7);
    assert_int_equal(fbf_profile_free_at(p, 5), 10);

    /* Same start: the key is shared, not duplicated. */
    assert_int_equal(fbf_profile_add(p, 2, 8, 4), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 3);
    assert_int_equal(fbf_profile_free_at(p, 3), 3);
    assert_int_equal(fbf_profile_free_at(p, 6), 6);

    dump d = { .n = 0 };
    fbf_profile_foreach(p, dump_fn, &d);
    assert_int_equal(d.n, 3);
    assert_true(d.t[0] == 2 && d.t[1] == 5 && d.t[2] == 8);
    assert_int_equal(d.used[0], 7);
    assert_int_equal(d.used[1], 4);
    assert_int_equal(d.used[2], 0);

    assert_int_equal(fbf_profile_remove(p, 2, 5, 3), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 2);
    assert_int_equal(fbf_profile_free_at(p, 3), 6);
    assert_int_equal(fbf_profile_remove(p, 2, 8, 4), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    assert_int_equal(fbf_profile_free_at(p, 3), 10);

    /* Invalid spans. */
    assert_int_equal(fbf_profile_add(p, 5, 5, 1), -EINVAL);
    assert_int_equal(fbf_profile_add(p, 6, 5, 1), -EINVAL);
    assert_int_equal(fbf_profile_add(p, 1, 5, 0), -EINVAL);
    assert_int_equal(fbf_profile_add(p, NAN, 5, 1), -EINVAL);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    fbf_profile_destroy(p);
    fbf_profile_destroy(NULL);
}

static void test_half_open(void **state)
{
    (void)state;
    fbf_profile *p = mk(4);
    assert_int_equal(fbf_profile_add(p, 0, 10, 4), 0);
    assert_int_equal(fbf_profile_add(p, 10, 20, 4), 0);
    /* At 10 the first span is over and the second has begun: never 8. */
    assert_int_equal(fbf_profile_free_at(p, 10), 0);
    assert_int_equal(fbf_profile_min_free(p, 0, 20), 0);
    assert_int_equal(fbf_profile_min_free(p, 0, 30), 0);
    /* The shared key 10 nets to 0 but stays: both spans end there. */
    assert_int_equal(fbf_profile_breakpoints(p), 3);
    assert_int_equal(fbf_profile_free_at(p, 20), 4);
    assert_true(fbf_profile_earliest(p, 0, 1, 5) == 20);
    /* Removing a span whose endpoint delta cancelled must still work. */
    assert_int_equal(fbf_profile_remove(p, 0, 10, 4), 0);
    assert_int_equal(fbf_profile_free_at(p, 5), 4);
    assert_int_equal(fbf_profile_free_at(p, 10), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 2);
    assert_true(fbf_profile_earliest(p, 0, 1, 10) == 0);
    assert_true(fbf_profile_earliest(p, 0, 1, 11) == 20);
    assert_int_equal(fbf_profile_remove(p, 10, 20, 4), 0);
    assert_int_equal(fbf_profile_remove(p, 10, 20, 4), -ENOENT);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    /* A window ending exactly where a span starts does not touch it. */
    fbf_profile *q = mk(4);
    assert_int_equal(fbf_profile_add(q, 10, 20, 4), 0);
    assert_int_equal(fbf_profile_min_free(q, 0, 10), 4);
    assert_int_equal(fbf_profile_min_free(q, 0, 10.5), 0);
    assert_true(fbf_profile_earliest(q, 0, 4, 10) == 0);
    assert_true(fbf_profile_earliest(q, 0, 4, 11) == 20);
    fbf_profile_destroy(q);
    fbf_profile_destroy(p);
}

static void test_remove_absent(void **state)
{
    (void)state;
    fbf_profile *p = mk(8);
    assert_int_equal(fbf_profile_add(p, 0, 10, 2), 0);
    assert_int_equal(fbf_profile_add(p, 5, 15, 3), 0);
    dump before = { .n = 0 }, after = { .n = 0 };
    fbf_profile_foreach(p, dump_fn, &before);

    assert_int_equal(fbf_profile_remove(p, 1, 10, 2), -ENOENT); /* no key 1 */
    assert_int_equal(fbf_profile_remove(p, 0, 11, 2), -ENOENT); /* no key 11 */
    assert_int_equal(fbf_profile_remove(p, 3, 4, 1), -ENOENT);
    assert_int_equal(fbf_profile_remove(p, 10, 0, 2), -EINVAL);

    fbf_profile_foreach(p, dump_fn, &after);
    assert_int_equal(before.n, 4);
    assert_int_equal(after.n, before.n);
    assert_memory_equal(before.t, after.t, before.n * sizeof before.t[0]);
    assert_memory_equal(before.used, after.used, before.n * sizeof before.used[0]);
    assert_int_equal(fbf_profile_free_at(p, 7), 3);
    fbf_profile_destroy(p);
}

static void test_infinite_end(void **state)
{
    (void)state;
    fbf_profile *p = mk(4);
    assert_int_equal(fbf_profile_add(p, 5, INFINITY, 3), 0);
    assert_int_equal(fbf_profile_free_at(p, 4), 4);
    assert_int_equal(fbf_profile_free_at(p, 1e300), 1);
    assert_int_equal(fbf_profile_free_at(p, INFINITY), 4);
    assert_int_equal(fbf_profile_min_free(p, 0, INFINITY), 1);
    assert_true(fbf_profile_earliest(p, 0, 1, INFINITY) == 0);
    assert_true(fbf_profile_earliest(p, 0, 2, 5) == 0);
    /* Never: the only breakpoint where 2 come free is the end at infinity. */
    assert_true(isinf(fbf_profile_earliest(p, 0, 2, 6)));
    assert_true(isinf(fbf_profile_earliest(p, 0, 2, INFINITY)));
    assert_int_equal(fbf_profile_add(p, 0, 2, 1), 0);
    /* free: [0,2)=3, [2,5)=4, [5,inf)=1. n=4,d=3 fits only at 2. */
    assert_true(fbf_profile_earliest(p, 0, 4, 3) == 2);
    assert_true(isinf(fbf_profile_earliest(p, 0, 4, 3.5)));
    assert_int_equal(fbf_profile_remove(p, 5, INFINITY, 3), 0);
    assert_int_equal(fbf_profile_remove(p, 0, 2, 1), 0);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    fbf_profile_destroy(p);
}

static void test_worked_example(void **state)
{
    (void)state;
    fbf_profile *p = mk(4);
    assert_int_equal(fbf_profile_add(p, 0, 10, 2), 0);  /* A running */
    assert_int_equal(fbf_profile_add(p, 10, 15, 4), 0); /* B reserved */
    assert_int_equal(fbf_profile_add(p, 0, 5, 2), 0);   /* C */
    assert_true(fbf_profile_earliest(p, 0, 1, 20) == 15);
    assert_true(fbf_profile_earliest(p, 0, 2, 5) == 5);
    assert_true(fbf_profile_earliest(p, 0, 2, 6) == 15);
    assert_true(fbf_profile_earliest(p, 3, 2, 5) == 5);
    assert_true(fbf_profile_earliest(p, 15, 4, 100) == 15);
    assert_true(fbf_profile_earliest(p, 16.5, 4, 1) == 16.5);
    assert_int_equal(fbf_profile_min_free(p, 0, 20), 0);
    assert_int_equal(fbf_profile_min_free(p, 5, 5), 2);
    assert_int_equal(fbf_profile_min_free(p, 5, 5.25), 0);
    fbf_profile_destroy(p);
}

static void test_earliest_zero_duration(void **state)
{
    (void)state;
    fbf_profile *p = mk(4);
    assert_int_equal(fbf_profile_add(p, 0, 10, 3), 0);
    assert_int_equal(fbf_profile_add(p, 10, 12, 4), 0);
    assert_true(fbf_profile_earliest(p, 0, 1, 0) == 0);
    assert_true(fbf_profile_earliest(p, 0, 2, 0) == 12);
    assert_true(fbf_profile_earliest(p, 11, 1, 0) == 12);
    assert_true(fbf_profile_earliest(p, 12.5, 4, 0) == 12.5);
    assert_int_equal(fbf_profile_min_free(p, 10, 0), 0);
    assert_int_equal(fbf_profile_min_free(p, 9, 0), 1);
    fbf_profile_destroy(p);
}

static void test_earliest_over_capacity(void **state)
{
    (void)state;
    fbf_profile *p = mk(4);
    assert_true(isinf(fbf_profile_earliest(p, 0, 5, 1)));
    assert_true(isinf(fbf_profile_earliest(p, 0, 5, 0)));
    assert_true(fbf_profile_earliest(p, 7, 4, INFINITY) == 7);
    fbf_profile *z = mk(0);
    assert_true(isinf(fbf_profile_earliest(z, 0, 1, 1)));
    assert_true(fbf_profile_earliest(z, 3, 0, 1) == 3);
    fbf_profile_destroy(z);
    fbf_profile_destroy(p);
}

/* Over-subscription is allowed: used may exceed capacity, free goes < 0. */
static void test_oversubscribed(void **state)
{
    (void)state;
    fbf_profile *p = mk(2);
    assert_int_equal(fbf_profile_add(p, 0, 4, 2), 0);
    assert_int_equal(fbf_profile_add(p, 1, 3, 2), 0);
    assert_int_equal(fbf_profile_free_at(p, 2), -2);
    assert_int_equal(fbf_profile_min_free(p, 0, 10), -2);
    assert_true(fbf_profile_earliest(p, 0, 1, 1) == 4);
    fbf_profile_destroy(p);
}

/* ---- randomized comparison with a naive reference --------------------- */

typedef struct span {
    double s, e;
    uint32_t n;
} span;

typedef struct ref {
    span *v;
    size_t n, cap;
    uint32_t capacity;
} ref;

static int64_t ref_used(const ref *r, double u)
{
    int64_t acc = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->v[i].s <= u && u < r->v[i].e)
            acc += r->v[i].n;
    return acc;
}

/* used() only changes at span ends, so probing t and every span boundary
 * inside (t, t + d) finds the minimum over the whole window. */
static int64_t ref_min_free(const ref *r, double t, double d)
{
    int64_t worst = ref_used(r, t);
    if (d > 0) {
        double hi = t + d;
        for (size_t i = 0; i < r->n; i++) {
            double b[2] = { r->v[i].s, r->v[i].e };
            for (int j = 0; j < 2; j++)
                if (b[j] > t && b[j] < hi) {
                    int64_t u = ref_used(r, b[j]);
                    if (u > worst)
                        worst = u;
                }
        }
    }
    return (int64_t)r->capacity - worst;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double ref_earliest(const ref *r, double from, uint32_t n, double d)
{
    if (n > r->capacity)
        return INFINITY;
    double *c = malloc((2 * r->n + 1) * sizeof *c);
    assert_non_null(c);
    size_t m = 0;
    c[m++] = from;
    for (size_t i = 0; i < r->n; i++) {
        if (r->v[i].s > from)
            c[m++] = r->v[i].s;
        if (r->v[i].e > from)
            c[m++] = r->v[i].e;
    }
    qsort(c, m, sizeof *c, cmp_double);
    double ans = INFINITY;
    for (size_t i = 0; i < m; i++)
        if (ref_min_free(r, c[i], d) >= (int64_t)n) {
            ans = c[i];
            break;
        }
    free(c);
    return ans;
}

/* Distinct endpoints of live spans, i.e. the stored breakpoints. */
static size_t ref_breakpoints(const ref *r, dump *out)
{
    out->n = 0;
    double *c = malloc((2 * r->n + 1) * sizeof *c);
    assert_non_null(c);
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++) {
        c[m++] = r->v[i].s;
        c[m++] = r->v[i].e;
    }
    qsort(c, m, sizeof *c, cmp_double);
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (i > 0 && c[i] == c[i - 1])
            continue;
        assert_true(out->n < 256);
        out->t[out->n] = c[i];
        out->used[out->n] = ref_used(r, c[i]);
        out->n++;
        k++;
    }
    free(c);
    return k;
}

static uint64_t rng_state;
static uint32_t rnd(uint32_t bound) /* xorshift64*, fixed seed: reproducible */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545f4914f6cdd1dull) >> 32) % bound;
}

static double rnd_time(void)
{
    /* Mostly integers in a small range (many repeated keys), sometimes a
     * half so that probes fall between breakpoints. */
    double t = (double)rnd(40);
    return rnd(8) == 0 ? t + 0.5 : t;
}

static void check_all(fbf_profile *p, const ref *r)
{
    dump got = { .n = 0 }, want;
    size_t k = ref_breakpoints(r, &want);
    assert_int_equal(fbf_profile_breakpoints(p), k);
    fbf_profile_foreach(p, dump_fn, &got);
    assert_int_equal(got.n, want.n);
    for (size_t i = 0; i < got.n; i++) {
        assert_true(got.t[i] == want.t[i]);
        assert_int_equal(got.used[i], want.used[i]);
    }
}

static void run_random(uint32_t capacity, uint64_t seed, int ops)
{
    rng_state = seed;
    fbf_profile *p = mk(capacity);
    ref r = { .v = calloc(64, sizeof(span)), .cap = 64, .capacity = capacity };
    assert_non_null(r.v);
    int n_earliest = 0, n_nontrivial = 0;
    for (int op = 0; op < ops; op++) {
        uint32_t what = rnd(100);
        if (what < 30 && r.n < 60) { /* add */
            span s;
            s.s = rnd_time();
            s.e = rnd(10) == 0 ? INFINITY : s.s + 1 + rnd(15);
            s.n = 1 + rnd(capacity / 2 + 1); /* may oversubscribe */
            assert_int_equal(fbf_profile_add(p, s.s, s.e, s.n), 0);
            if (r.n == r.cap) {
                r.cap *= 2;
                r.v = realloc(r.v, r.cap * sizeof(span));
                assert_non_null(r.v);
            }
            r.v[r.n++] = s;
        } else if (what < 55 && r.n > 0) { /* remove a live span */
            size_t i = rnd((uint32_t)r.n);
            assert_int_equal(fbf_profile_remove(p, r.v[i].s, r.v[i].e, r.v[i].n), 0);
            r.v[i] = r.v[--r.n];
        } else if (what < 58) { /* remove absent: 0.25 is never a key */
            double s = (double)rnd(40) + 0.25;
            assert_int_equal(fbf_profile_remove(p, s, s + 3, 1), -ENOENT);
        } else if (what < 80) { /* earliest */
            double from = rnd(5) == 0 ? rnd_time() + 0.25 : rnd_time();
            uint32_t n = rnd(capacity + 2);
            uint32_t dk = rnd(10);
            double d = dk == 0 ? 0 : dk == 1 ? INFINITY : (double)rnd(20) + (rnd(4) ? 0 : 0.5);
            double want = ref_earliest(&r, from, n, d);
            double got = fbf_profile_earliest(p, from, n, d);
            if (!(got == want))
                fail_msg("op %d earliest(from %g, n %u, d %g): got %g want %g",
                         op, from, n, d, got, want);
            n_earliest++;
            if (got != from)
                n_nontrivial++;
        } else if (what < 86) { /* the step function between two times */
            double t0 = rnd_time() + 0.25 * rnd(2), t1 = t0 + rnd(25);
            dump got = { .n = 0 }, all;
            ref_breakpoints(&r, &all);
            fbf_profile_foreach_between(p, t0, t1, dump_fn, &got);
            size_t k = 0;
            for (size_t i = 0; i < all.n; i++) {
                if (!(all.t[i] > t0 && all.t[i] < t1))
                    continue;
                assert_true(k < got.n);
                assert_true(got.t[k] == all.t[i]);
                assert_int_equal(got.used[k], all.used[i]);
                k++;
            }
            assert_int_equal(got.n, k);
        } else if (what < 89) { /* where runs of free() >= n end */
            double lo = rnd_time() - 1, hi = lo + rnd(30), after = rnd_time() + 0.25 * rnd(2);
            uint32_t n = 1 + rnd(capacity + 1);
            dump all;
            ref_breakpoints(&r, &all);
            double last = -INFINITY, first = INFINITY;
            for (size_t i = 0; i < all.n; i++) {
                bool below = (int64_t)capacity - all.used[i] < (int64_t)n;
                if (below && all.t[i] > lo && all.t[i] < hi)
                    last = all.t[i];
                if (below && all.t[i] > after && first == INFINITY)
                    first = all.t[i];
            }
            assert_true(fbf_profile_last_below(p, lo, hi, n) == last);
            assert_true(fbf_profile_first_below(p, after, n) == first);
        } else if (what < 92) { /* min_free */
            double t = rnd(5) == 0 ? rnd_time() + 0.25 : rnd_time();
            uint32_t dk = rnd(8);
            double d = dk == 0 ? 0 : dk == 1 ? INFINITY : (double)rnd(20) + 0.5 * rnd(2);
            assert_int_equal(fbf_profile_min_free(p, t, d), ref_min_free(&r, t, d));
        } else { /* free_at */
            double t = rnd_time() + 0.25 * rnd(2);
            assert_int_equal(fbf_profile_free_at(p, t), (int64_t)capacity - ref_used(&r, t));
        }
        if (op % 16 == 0)
            check_all(p, &r);
    }
    check_all(p, &r);
    /* The test must really exercise the jumping path. */
    assert_true(n_earliest > ops / 10);
    assert_true(n_nontrivial > n_earliest / 10);
    while (r.n > 0) {
        assert_int_equal(fbf_profile_remove(p, r.v[r.n - 1].s, r.v[r.n - 1].e, r.v[r.n - 1].n), 0);
        r.n--;
    }
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    assert_int_equal(fbf_profile_free_at(p, 3), capacity);
    free(r.v);
    fbf_profile_destroy(p);
}

static void test_random_small(void **state)
{
    (void)state;
    run_random(4, 0x1234abcdull, 20000);
}

static void test_random_wide(void **state)
{
    (void)state;
    run_random(16, 0xfeedbeefcafeull, 20000);
}

/* Many spans: grows the pool several times, then drains it, then reuses
 * the free list; checks a few aggregates on the way. */
static void test_many_spans(void **state)
{
    (void)state;
    enum { N = 20000 };
    fbf_profile *p = mk(1u << 20);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            assert_int_equal(fbf_profile_add(p, i, i + 2.5, 1), 0);
        /* At integer u>=1: spans starting at u-2, u-1, u are live. */
        assert_int_equal(fbf_profile_free_at(p, 100), (1 << 20) - 3);
        assert_int_equal(fbf_profile_free_at(p, 100.75), (1 << 20) - 2);
        assert_int_equal(fbf_profile_breakpoints(p), 2 * N);
        /* used: 3 at integers >= 2, 2 at the half-integers, then the
         * tail N-0.5 -> 2, N+0.5 -> 1, N+1.5 -> 0; every integer key
         * blocks a 10-long window for C-2, so ~N jumps happen. */
        assert_true(fbf_profile_earliest(p, 0, (1u << 20) - 2, 10) == N - 0.5);
        assert_true(fbf_profile_earliest(p, 0, (1u << 20) - 1, 0) == 0);
        assert_true(fbf_profile_earliest(p, 5, (1u << 20) - 1, 0) == N + 0.5);
        assert_true(fbf_profile_earliest(p, 5, (1u << 20) - 1, 1) == N + 0.5);
        for (int i = N - 1; i >= 0; i--)
            assert_int_equal(fbf_profile_remove(p, i, i + 2.5, 1), 0);
        assert_int_equal(fbf_profile_breakpoints(p), 0);
    }
    fbf_profile_destroy(p);
}

/* A window that ends in the gap before a stretch where nothing fits: the
 * earliest fit is the window's start, whether the stretch begins inside a
 * node of the tree or exactly where one begins (some `lead` puts it
 * there, whatever the node sizes), so that the search meets the stretch
 * as a whole subtree, keys as well as aggregates. */
static void test_window_ends_before_wall(void **state)
{
    (void)state;
    for (int lead = 1; lead <= 80; lead++) {
        fbf_profile *p = mk(4);
        for (int i = 0; i < lead; i++) /* used() 1 then 0: room for 3 */
            assert_int_equal(fbf_profile_add(p, i, i + 0.5, 1), 0);
        for (int i = 0; i < 300; i++) /* used() 4 at every key of [1000, 1300) */
            assert_int_equal(fbf_profile_add(p, 1000 + i, 1001 + i, 4), 0);
        assert_true(fbf_profile_earliest(p, 0, 3, 900) == 0);
        assert_true(fbf_profile_earliest(p, 0.25, 3, 999) == 0.25);
        assert_true(fbf_profile_earliest_before(p, 0, 3, 1000, 1) == 0);
        assert_true(fbf_profile_earliest(p, 0, 3, 1001) == 1300);
        assert_true(fbf_profile_earliest(p, 0, 4, 10) == lead - 0.5);
        assert_true(isinf(fbf_profile_earliest_before(p, 0, 3, 1001, 1300)));
        fbf_profile_destroy(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_remove_basics),
        cmocka_unit_test(test_half_open),
        cmocka_unit_test(test_remove_absent),
        cmocka_unit_test(test_infinite_end),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_earliest_zero_duration),
        cmocka_unit_test(test_earliest_over_capacity),
        cmocka_unit_test(test_oversubscribed),
        cmocka_unit_test(test_random_small),
        cmocka_unit_test(test_random_wide),
        cmocka_unit_test(test_many_spans),
        cmocka_unit_test(test_window_ends_before_wall),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
