/*
 * test_cells: the index over a pass's released ranges (policies/cells.c,
 * used by policies/runs.c) changes which ranges a search visits, never
 * which ones it gets: on long random profiles, with ranges added and
 * merged and free() changing (and reported) between searches, the ranges
 * fbf_bf_runs_next gives with the index are exactly those it gives
 * visiting every range one by one. And the summaries really skip.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/profile.h"
#include "policies/cells.h"
#include "policies/runs.h"

#define CAP 16
#define HORIZON 3000
#define MAX_SPANS 1200

typedef struct span {
    double s, e;
    uint32_t n;
} span;

static span spans[MAX_SPANS];
static size_t nspans;
static uint64_t rng = 0x5bd1e9955bd1e995ull;

static uint32_t rnd(uint32_t bound)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32) % bound;
}

/* A packed schedule: short spans everywhere up to the horizon, so that
 * runs of free() are short and many ranges hold none long enough. */
static void add_span(fbf_profile *p)
{
    span s = {(double)rnd(HORIZON), 0, 1 + rnd(CAP / 2)};
    s.e = s.s + 1 + rnd(30);
    assert_int_equal(fbf_profile_add(p, s.s, s.e, s.n), 0);
    spans[nspans++] = s;
}

static void both_changed(fbf_bf_runs *x, fbf_bf_runs *y, double a, double b)
{
    fbf_bf_runs_changed(x, a, b);
    fbf_bf_runs_changed(y, a, b);
}

static void both_add(fbf_bf_runs *x, fbf_bf_runs *y, double now)
{
    double a = now + rnd(HORIZON), b = a + 1 + rnd(rnd(8) ? 20 : 200);
    fbf_bf_runs_add(x, now, a, b);
    fbf_bf_runs_add(y, now, a, b);
}

/* One search, both ways: the same ranges in the same order. Returns how
 * many ranges the one-by-one walk passed over. */
static size_t same_search(fbf_bf_runs *cells, fbf_bf_runs *plain, const fbf_profile *p, double now)
{
    double a = now + rnd(HORIZON), b = rnd(4) ? a + rnd(HORIZON / 2) : INFINITY;
    uint32_t res = 1 + rnd(CAP);
    double l = 1 + rnd(rnd(4) ? 20 : 60) + rnd(100) / 100.0;
    double kept = rnd(2) ? INFINITY : a + rnd(HORIZON);
    size_t kc = fbf_bf_runs_first(cells, a), kp = fbf_bf_runs_first(plain, a);
    assert_int_equal(kc, kp);
    size_t got = 0, first = kp;
    double xc, yc, xp, yp;
    for (;;) {
        bool c = fbf_bf_runs_next(cells, p, now, &kc, b, res, l, kept, &xc, &yc);
        bool q = fbf_bf_runs_next(plain, p, now, &kp, b, res, l, kept, &xp, &yp);
        if (c != q)
            fail_msg("res %u l %g kept %g [%g, %g): indexed %s, one by one %s [%g, %g)", res, l,
                     kept, a, b, c ? "gives a range" : "ends", q ? "gives" : "ends", xp, yp);
        if (!c)
            break;
        if (xc != xp || yc != yp)
            fail_msg("res %u l %g kept %g: indexed [%g, %g), one by one [%g, %g)", res, l, kept,
                     xc, yc, xp, yp);
        got++;
    }
    /* kp now counts the ranges the plain walk looked at. */
    return kp - first - got;
}

static void test_index_gives_what_one_by_one_gives(void **state)
{
    (void)state;
    size_t passed_over = 0, searches = 0;
    unsigned long jumps0 = fbf_bf_runs_cell_jumps();
    for (int round = 0; round < 40; round++) {
        fbf_profile *p = fbf_profile_create(CAP);
        fbf_bf_runs *cells = fbf_bf_runs_create(), *plain = fbf_bf_runs_create();
        assert_non_null(p);
        assert_non_null(cells);
        assert_non_null(plain);
        nspans = 0;
        for (uint32_t k = 600 + rnd(400); k > 0; k--)
            add_span(p);
        double now = rnd(50), reach = 5 + rnd(40);
        uint32_t min_res = 1 + rnd(2);
        fbf_bf_runs_reset(cells, reach, min_res, 0);
        fbf_bf_runs_reset(plain, reach, min_res, 0);
        fbf_bf_runs_set_cells_from(cells, 1 + rnd(64));
        fbf_bf_runs_set_cells_from(plain, SIZE_MAX);
        for (uint32_t k = 100 + rnd(300); k > 0; k--)
            both_add(cells, plain, now);
        for (int step = 0; step < 300; step++) {
            uint32_t what = rnd(10);
            if (what == 0) {
                both_add(cells, plain, now);
            } else if (what == 1 && nspans > 0) {
                /* A span leaves (growth), reported as compression does. */
                size_t i = rnd((uint32_t)nspans);
                assert_int_equal(fbf_profile_remove(p, spans[i].s, spans[i].e, spans[i].n), 0);
                both_changed(cells, plain, spans[i].s, spans[i].e);
                spans[i] = spans[--nspans];
            } else if (what == 2 && nspans < MAX_SPANS) {
                add_span(p); /* a drop, reported too: tables stay exact */
                both_changed(cells, plain, spans[nspans - 1].s, spans[nspans - 1].e);
            } else {
                passed_over += same_search(cells, plain, p, now);
                searches++;
            }
        }
        fbf_bf_runs_destroy(cells);
        fbf_bf_runs_destroy(plain);
        fbf_profile_destroy(p);
    }
    unsigned long jumps = fbf_bf_runs_cell_jumps() - jumps0;
    fprintf(stderr, "%zu searches; one by one passed over %zu ranges; the index jumped %lu times\n",
            searches, passed_over, jumps);
    /* Both kinds of skipping must really have been exercised. */
    assert_true(passed_over > 2 * searches);
    assert_true(jumps > searches / 8);
}

/* Summaries by hand: three cells over [0, 30); the middle one holds a
 * range whose longest run of free() >= 4 is 3 s; the others are empty. A
 * query for 4 resources and 5 s skips everything; for 2 s, or with a
 * range ending after kept - l, it stops at the middle cell. */
static void fill_middle(void *ctx, size_t c, fbf_bf_cell_sum *out)
{
    (void)ctx;
    if (c != 1)
        return;
    double w[FBF_BF_CELL_LEVELS];
    for (unsigned q = 0; q < FBF_BF_CELL_LEVELS; q++)
        w[q] = q <= 2 ? 3 : 0; /* levels 1, 2 and 4 */
    fbf_bf_cells_sum_add(out, w, 16);
}

static void test_worked_summaries(void **state)
{
    (void)state;
    fbf_bf_cells *c = fbf_bf_cells_create(3, 0, 40, fill_middle);
    assert_non_null(c);
    assert_int_equal(fbf_bf_cells_count(c), 4);
    assert_int_equal(fbf_bf_cells_of(c, -5), 0);
    assert_int_equal(fbf_bf_cells_of(c, 12), 1);
    assert_int_equal(fbf_bf_cells_of(c, 1e9), 3);
    assert_int_equal(fbf_bf_cells_level(4), 2);
    assert_int_equal(fbf_bf_cells_level(7), 2);
    assert_int_equal(fbf_bf_cells_level(1), 0);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 2, 5, INFINITY), 4);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 2, 2, INFINITY), 1);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 2, 5, 20), 1); /* 16 > 20 - 5 */
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 2, 5, 21), 4);
    /* Eight resources read level 3, where the range has no run at all. */
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 3, 1, INFINITY), 4);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 2, 4, 0, 1, INFINITY), 4);
    fbf_bf_cells_destroy(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_summaries),
        cmocka_unit_test(test_index_gives_what_one_by_one_gives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
