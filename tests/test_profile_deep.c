/*
 * test_profile_deep: the availability profile with thousands of live
 * spans, grown and drained twice, against a reference kept as a sorted
 * array of breakpoints (time, change of used(), live endpoints) whose
 * queries follow profile.h's definitions over every breakpoint. Where
 * test_profile checks the definitions on a few dozen spans, this one
 * checks them where the tree is several levels deep and nodes split, take
 * from their siblings and merge all the time.
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
#include "support/testkit.h"

#define MAX_SPANS 2500

/* What the spans look like: the capacity, the largest span size, the
 * longest span (in half seconds), the longest window queried, and one
 * span in how many takes the whole platform (0: none). */
typedef struct shape {
    uint32_t cap, max_res, max_len, max_d, wall_every;
} shape;

static shape sh;
#define CAP ((int64_t)sh.cap)

typedef struct bp {
    double t;
    int64_t delta;
    uint32_t refs;
} bp;

typedef struct span {
    double s, e;
    uint32_t n;
} span;

static bp *ref;
static size_t nref;
static int64_t *used_after; /* used() from ref[i].t on, rebuilt per query */
static size_t *next_block;  /* the first k >= i with used_after[k] > limit */
static span spans[MAX_SPANS];
static size_t nspans;
static uint64_t rng = 0x51ed270b27ab5f1dull;

static uint32_t rnd(uint32_t bound)
{
    return fbf_test_rnd(&rng, bound);
}

static void ref_upsert(double t, int64_t d, int dref)
{
    size_t lo = 0, hi = nref;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ref[mid].t < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < nref && ref[lo].t == t) {
        ref[lo].delta += d;
        ref[lo].refs += (uint32_t)dref;
        if (ref[lo].refs == 0 && ref[lo].delta == 0)
            memmove(&ref[lo], &ref[lo + 1], (--nref - lo) * sizeof *ref);
        return;
    }
    memmove(&ref[lo + 1], &ref[lo], (nref - lo) * sizeof *ref);
    ref[lo] = (bp){t, d, 1};
    nref++;
}

static void prefix(void)
{
    int64_t acc = 0;
    for (size_t i = 0; i < nref; i++)
        used_after[i] = acc += ref[i].delta;
}

/* The number of breakpoints <= t. */
static size_t upto(double t)
{
    size_t k = 0;
    while (k < nref && ref[k].t <= t)
        k++;
    return k;
}

static int64_t used(double t)
{
    size_t k = upto(t);
    return k ? used_after[k - 1] : 0;
}

/* profile.h: the smallest t >= from among {from} and the breakpoints
 * after it with free() >= n over [t, t + d), below stop. */
static double ref_earliest(double from, uint32_t n, double d, double stop)
{
    if (n > CAP)
        return INFINITY;
    int64_t limit = CAP - (int64_t)n;
    next_block[nref] = nref;
    for (size_t k = nref; k-- > 0;)
        next_block[k] = used_after[k] > limit ? k : next_block[k + 1];
    size_t first = upto(from); /* breakpoints from here on are after from */
    for (size_t c = first; c <= nref; c++) {
        /* c == first: from itself; else the breakpoint c - 1 (> from). */
        double t = c == first ? from : ref[c - 1].t;
        if (!(t < stop))
            return INFINITY;
        if ((c ? used_after[c - 1] : 0) > limit)
            continue;
        size_t b = next_block[c]; /* the first blocking breakpoint after t */
        if (!(d > 0) || b == nref || !(ref[b].t < t + d))
            return t;
    }
    return INFINITY;
}

static double rnd_time(void)
{
    double t = (double)rnd(4000);
    return rnd(6) == 0 ? t + 0.5 : t;
}

typedef struct cursor {
    size_t k;
    double t0, t1;
} cursor;

static void check_step(double t, int64_t u, void *ctx)
{
    cursor *c = ctx;
    while (c->k < nref && !(ref[c->k].t > c->t0))
        c->k++;
    if (c->k >= nref || ref[c->k].t != t || used_after[c->k] != u || !(t < c->t1))
        fail_msg("foreach_between(%g, %g): step %g used %lld unexpected", c->t0, c->t1, t,
                 (long long)u);
    c->k++;
}

static void check_queries(const fbf_profile *p)
{
    prefix();
    assert_int_equal(fbf_profile_breakpoints(p), nref);
    double t = rnd_time() + 0.25 * rnd(2), d = rnd(8) == 0 ? INFINITY : (double)rnd(sh.max_d);
    uint32_t n = 1 + rnd(sh.cap + 1);
    int64_t limit = CAP - (int64_t)n;
    assert_int_equal(fbf_profile_free_at(p, t), CAP - used(t));

    int64_t worst = used(t), best = used(t);
    double last = -INFINITY, first = INFINITY, floor = -INFINITY;
    for (size_t k = 0; k < nref; k++) {
        if (ref[k].t > t && ref[k].t < t + d) {
            worst = used_after[k] > worst ? used_after[k] : worst;
            best = used_after[k] < best ? used_after[k] : best;
            if (used_after[k] > limit)
                last = ref[k].t;
        }
        if (ref[k].t > t && used_after[k] > limit && first == INFINITY)
            first = ref[k].t;
        if (ref[k].t <= t)
            floor = ref[k].t;
    }
    assert_int_equal(fbf_profile_min_free(p, t, d), CAP - worst);
    assert_int_equal(fbf_profile_max_free(p, t, t + d), CAP - best);
    assert_true(fbf_profile_last_below(p, t, t + d, n) == last);
    assert_true(fbf_profile_first_below(p, t, n) == first);
    assert_true(fbf_profile_key_floor(p, t) == floor);

    double stop = rnd(3) == 0 ? t + (double)rnd(2000) : INFINITY;
    double want = ref_earliest(t, n, d, stop), got = fbf_profile_earliest_before(p, t, n, d, stop);
    if (!(got == want))
        fail_msg("earliest_before(%g, n %u, d %g, stop %g): got %g, want %g", t, n, d, stop, got,
                 want);

    cursor c = {0, t, t + d};
    fbf_profile_foreach_between(p, t, t + d, check_step, &c);
    while (c.k < nref && !(ref[c.k].t > t))
        c.k++;
    if (c.k < nref && ref[c.k].t < t + d)
        fail_msg("foreach_between(%g, %g) missed the step at %g", t, t + d, ref[c.k].t);
}

static void check_all(double t, int64_t u, void *ctx)
{
    size_t *k = ctx;
    assert_true(*k < nref);
    assert_true(ref[*k].t == t);
    assert_int_equal(used_after[*k], u);
    (*k)++;
}

static void grow_and_drain(shape s_)
{
    sh = s_;
    nref = nspans = 0;
    ref = malloc(2 * MAX_SPANS * sizeof *ref);
    used_after = malloc(2 * MAX_SPANS * sizeof *used_after);
    next_block = malloc((2 * MAX_SPANS + 1) * sizeof *next_block);
    assert_non_null(next_block);
    assert_non_null(ref);
    assert_non_null(used_after);
    fbf_profile *p = fbf_profile_create(sh.cap);
    assert_non_null(p);
    size_t most = 0;
    for (int cycle = 0; cycle < 2; cycle++) {
        for (int grow = 1; grow >= 0; grow--) {
            while (grow ? nspans < MAX_SPANS : nspans > 0) {
                bool add = nspans == 0 || (nspans < MAX_SPANS && rnd(10) < (grow ? 8u : 2u));
                if (add) {
                    span s = {rnd_time(), 0, 1 + rnd(sh.max_res)};
                    if (sh.wall_every && rnd(sh.wall_every) == 0)
                        s.n = sh.cap;
                    s.e = rnd(50) == 0 ? INFINITY : s.s + 0.5 * (1 + rnd(sh.max_len));
                    assert_int_equal(fbf_profile_add(p, s.s, s.e, s.n), 0);
                    ref_upsert(s.s, s.n, 1);
                    ref_upsert(s.e, -(int64_t)s.n, 1);
                    spans[nspans++] = s;
                } else {
                    size_t i = rnd((uint32_t)nspans);
                    span s = spans[i];
                    assert_int_equal(fbf_profile_remove(p, s.s, s.e, s.n), 0);
                    ref_upsert(s.s, -(int64_t)s.n, -1);
                    ref_upsert(s.e, s.n, -1);
                    spans[i] = spans[--nspans];
                }
                if (rnd(4) == 0) /* 0.25 is never a key */
                    assert_int_equal(fbf_profile_remove(p, rnd(4000) + 0.25, 5000, 1), -ENOENT);
                if (rnd(6) == 0)
                    check_queries(p);
                most = nref > most ? nref : most;
            }
            prefix();
            size_t k = 0;
            fbf_profile_foreach(p, check_all, &k);
            assert_int_equal(k, nref);
        }
    }
    /* Deep enough: thousands of breakpoints at the top. */
    assert_true(most > 3000);
    assert_int_equal(fbf_profile_breakpoints(p), 0);
    assert_int_equal(fbf_profile_free_at(p, 10), CAP);
    fbf_profile_destroy(p);
    free(ref);
    free(used_after);
    free(next_block);
}

/* Many small spans on a large platform: free() rarely near 0. */
static void test_grow_and_drain(void **state)
{
    (void)state;
    grow_and_drain((shape){.cap = 1024, .max_res = 16, .max_len = 400, .max_d = 300});
}

/* A platform about half used by short spans, some wide, a few taking it
 * all: free() goes up and down every few breakpoints, so a search meets
 * islands of free resources, whole subtrees where a job of n resources
 * fits throughout or nowhere, and windows that span hundreds of
 * breakpoints. */
static void test_islands(void **state)
{
    (void)state;
    grow_and_drain(
        (shape){.cap = 64, .max_res = 24, .max_len = 20, .max_d = 60, .wall_every = 40});
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_and_drain),
        cmocka_unit_test(test_islands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
