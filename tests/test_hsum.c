/*
 * test_hsum: the summary tree over hole tables (policies/backfilling/runs_over_holes.c) finds
 * exactly the first hole a lookup per hole would find, while tables are
 * built, dropped and moved under it (each change reported), and a range
 * of holes that all rule a query out costs no lookup of theirs once
 * summarised.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "policies/backfilling/runs_over_holes.h"
#include "policies/backfilling/level_runs.h"
#include "support/testkit.h"

#define N FBF_BF_HSUM_LEAVES
#define CAP 64
#define MAX_STEPS 12

typedef struct leaf {
    fbf_bf_stair v[MAX_STEPS];
    size_t n;
    bool none; /* no table: always a candidate */
} leaf;

static leaf leaves[N];
static unsigned long calls;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
    return fbf_test_rnd(&rng, bound);
}

static int leaf_fn(void *ctx, size_t i, const fbf_bf_stair **v, size_t *n)
{
    (void)ctx;
    calls++;
    if (leaves[i].none)
        return -1;
    *v = leaves[i].v;
    *n = leaves[i].n;
    return 0;
}

/* A random staircase: levels down, widest run and latest end up. */
static void random_leaf(leaf *x)
{
    x->none = rnd(12) == 0;
    x->n = rnd(MAX_STEPS + 1);
    int64_t h = CAP + 1;
    double w = 0, e = rnd(50);
    size_t k = 0;
    for (; k < x->n; k++) {
        h -= 1 + rnd(6);
        if (h < 1)
            break;
        w += 1 + rnd(20);
        e += rnd(30);
        x->v[k] = (fbf_bf_stair){h, rnd(40) == 0 ? INFINITY : w, e};
        if (isinf(x->v[k].w))
            w = INFINITY;
    }
    x->n = k;
}

/* A lookup per hole: the first that does not rule the query out. */
static size_t plain_first(size_t from, size_t to, uint32_t res, double l, double end)
{
    for (size_t i = from; i < to; i++) {
        const leaf *x = &leaves[i];
        if (x->none)
            return i;
        size_t n = fbf_bf_stairs_at(x->v, x->n, res);
        double w = n ? x->v[n - 1].w : 0, e = n ? x->v[n - 1].e : -INFINITY;
        if (!(w < l && e < end))
            return i;
    }
    return to;
}

static void test_first_matches_plain(void **state)
{
    (void)state;
    fbf_bf_hsum *h = fbf_bf_hsum_create(leaf_fn);
    assert_non_null(h);
    for (size_t i = 0; i < N; i++)
        random_leaf(&leaves[i]);
    unsigned long found = 0, none = 0;
    for (int round = 0; round < 200000; round++) {
        if (rnd(8) == 0) {
            /* A table changes: rebuilt, dropped, or two swap places (a
             * remap), each reported. */
            size_t i = rnd(N);
            if (rnd(3) == 0) {
                size_t j = rnd(N);
                leaf t = leaves[i];
                leaves[i] = leaves[j];
                leaves[j] = t;
                fbf_bf_hsum_changed(h, j);
            } else {
                random_leaf(&leaves[i]);
            }
            fbf_bf_hsum_changed(h, i);
        }
        if (rnd(5000) == 0) {
            for (size_t i = 0; i < N; i++)
                random_leaf(&leaves[i]);
            fbf_bf_hsum_reset(h);
        }
        size_t from = rnd(N + 1), to = from + rnd(N + 1 - (uint32_t)from);
        uint32_t res = 1 + rnd(CAP + 4);
        double l = rnd(50) == 0 ? NAN : 1 + rnd(300);
        double end = rnd(50) == 0 ? INFINITY : 50 + rnd(400);
        size_t want = plain_first(from, to, res, l, end);
        assert_int_equal(fbf_bf_hsum_first(h, NULL, from, to, res, l, end), want);
        found += want < to;
        none += want == to && to > from;
    }
    /* Both answers were common, or the test says little. */
    assert_true(found > 20000);
    assert_true(none > 20000);
    fbf_bf_hsum_destroy(h);
}

static void test_summaries_skip(void **state)
{
    (void)state;
    fbf_bf_hsum *h = fbf_bf_hsum_create(leaf_fn);
    assert_non_null(h);
    /* Every hole holds runs of 10 s at most, ending by 100. */
    for (size_t i = 0; i < N; i++) {
        leaves[i] = (leaf){.n = 1};
        leaves[i].v[0] = (fbf_bf_stair){CAP, 10, 100};
    }
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 0, N, 1, 20, 200), N);
    calls = 0;
    for (int k = 0; k < 100; k++)
        assert_int_equal(fbf_bf_hsum_first(h, NULL, 0, N, 1 + k % CAP, 20, 200), N);
    assert_int_equal(calls, 0); /* the root answered */
    /* One hole gets a long run: found, and only its path is looked at
     * again. */
    leaves[37].v[0].w = 30;
    fbf_bf_hsum_changed(h, 37);
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 0, N, 1, 20, 200), 37);
    assert_int_equal(calls, 1);
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 38, N, 1, 20, 200), N);
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 0, N, 1, 20, 100), 0); /* ends reach 100 */
    /* A hole without a table is always a candidate. */
    leaves[5].none = true;
    fbf_bf_hsum_changed(h, 5);
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 0, N, 1, 40, 200), 5);
    assert_int_equal(fbf_bf_hsum_first(h, NULL, 6, N, 1, 40, 200), N);
    fbf_bf_hsum_destroy(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_first_matches_plain),
        cmocka_unit_test(test_summaries_skip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
