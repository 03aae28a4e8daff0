/*
 * test_cells: the index over a pass's released ranges (policies/backfilling/cell_runs.c,
 * used by policies/backfilling/hole_runs.c) changes which ranges a search visits, never
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
#include "policies/backfilling/cell_runs.h"
#include "policies/backfilling/hole_runs.h"
#include "policies/backfilling/level_runs.h"
#include "support/testkit.h"

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
    return fbf_test_rnd(&rng, bound);
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

/* One hole's table, both ways: the same answer for every res. Returns
 * whether the index merged part of it (more than two cells apart). */
static bool same_hole(fbf_bf_runs *cells, fbf_bf_runs *plain, const fbf_profile *p, double now)
{
    double a = now + rnd(HORIZON), b = a + 1 + rnd(HORIZON / 2);
    fbf_bf_hole v[1] = {{a, b, CAP}};
    fbf_bf_holes hs = {v, 1, 1};
    fbf_bf_runs_remap(cells, &hs);
    fbf_bf_runs_remap(plain, &hs);
    for (uint32_t res = 1; res <= CAP; res++) {
        fbf_bf_run_info x = {0, 0}, y = {0, 0};
        int rc = fbf_bf_runs_query(cells, p, &hs, 0, now, res, &x);
        int rp = fbf_bf_runs_query(plain, p, &hs, 0, now, res, &y);
        assert_int_equal(rc, rp);
        if (rc == 0 && (x.longest != y.longest || x.latest_end != y.latest_end))
            fail_msg("hole [%g, %g) res %u: indexed %g to %g, one by one %g to %g", a, b, res,
                     x.longest, x.latest_end, y.longest, y.latest_end);
    }
    return b - a > 3 * HORIZON / 64.0;
}

static void test_index_gives_what_one_by_one_gives(void **state)
{
    (void)state;
    size_t passed_over = 0, searches = 0, holes = 0;
    unsigned long jumps = 0;
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
        /* Every other round, ranges whose region is wide have no table:
         * they must be visited, and make their hole's table answer none. */
        unsigned share = round % 2 ? 64 : 0;
        fbf_bf_runs_reset(cells, reach, min_res, share);
        fbf_bf_runs_reset(plain, reach, min_res, share);
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
            } else if (what == 3) {
                holes += same_hole(cells, plain, p, now);
            } else {
                passed_over += same_search(cells, plain, p, now);
                searches++;
            }
        }
        jumps += fbf_bf_runs_cell_jumps(cells);
        assert_int_equal(fbf_bf_runs_cell_jumps(plain), 0); /* it has no cells */
        fbf_bf_runs_destroy(cells);
        fbf_bf_runs_destroy(plain);
        fbf_profile_destroy(p);
    }
    fprintf(stderr,
            "%zu searches; one by one passed over %zu ranges; the index jumped %lu times; %zu "
            "hole tables across many cells\n",
            searches, passed_over, jumps, holes);
    /* Both kinds of skipping must really have been exercised. */
    assert_true(passed_over > 2 * searches);
    assert_true(jumps > searches / 8);
    assert_true(holes > 300);
}

/* Summaries by hand: four cells over [0, 40); cell 1 holds a range whose
 * runs of free() >= 4 are at most 3 s long (>= 2: 6 s) and which ends at
 * 16; the others are empty. */
static int fill_one(void *ctx, size_t c, fbf_bf_stairs *st, double *maxb, double *minb,
                    bool *wide)
{
    (void)ctx;
    if (c != 1)
        return 0;
    static const fbf_bf_stair v[] = {{4, 3, 14}, {2, 6, 16}};
    *maxb = *minb = 16;
    *wide = false;
    return fbf_bf_stairs_gather(st, v, 2);
}

static void test_worked_summaries(void **state)
{
    (void)state;
    fbf_bf_cells *c = fbf_bf_cells_create(3, 0, 40, CAP, fill_one);
    int err;
    assert_non_null(c);
    assert_int_equal(fbf_bf_cells_count(c), 4);
    assert_int_equal(fbf_bf_cells_of(c, -5), 0);
    assert_int_equal(fbf_bf_cells_of(c, 12), 1);
    assert_int_equal(fbf_bf_cells_of(c, 1e9), 3);
    /* 4 resources: 3 s at most, so a 5 s window skips everything ... */
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 4, 5, INFINITY, &err), 4);
    assert_int_equal(err, 0);
    /* ... a 2 s one stops at cell 1, and so does 2 resources for 5 s;
     * 3 resources are as 4 (no run has a minimum of 3). */
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 4, 2, INFINITY, &err), 1);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 2, 5, INFINITY, &err), 1);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 3, 5, INFINITY, &err), 4);
    /* A window that must end before 20 cannot skip a range ending at 16. */
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 4, 5, 20, &err), 1);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 0, 4, 4, 5, 21, &err), 4);
    assert_int_equal(fbf_bf_cells_next(c, NULL, 2, 4, 1, 0.5, INFINITY, &err), 4);
    /* Gathered over cells 0..3: the range's staircase, as it is. */
    fbf_bf_stairs *st = fbf_bf_stairs_create();
    fbf_bf_stair *v = NULL;
    size_t n = 0, cap = 0;
    bool wide = false;
    assert_int_equal(fbf_bf_cells_gather(c, NULL, 0, 4, st, &wide), 0);
    assert_int_equal(fbf_bf_stairs_take(st, CAP, &v, &n, &cap), 0);
    assert_false(wide);
    assert_int_equal(n, 2);
    assert_true(v[0].h == 4 && v[0].w == 3 && v[0].e == 14);
    assert_true(v[1].h == 2 && v[1].w == 6 && v[1].e == 16);
    free(v);
    fbf_bf_stairs_destroy(st);
    fbf_bf_cells_destroy(c);
}

/* Merging two staircases gives what gathering both and taking gives. */
static void test_merge2_equals_take(void **state)
{
    (void)state;
    fbf_bf_stairs *st = fbf_bf_stairs_create();
    assert_non_null(st);
    for (int round = 0; round < 2000; round++) {
        fbf_bf_stair raw[2][40], *s[2] = {NULL, NULL}, *m = NULL, *t = NULL;
        size_t ns[2] = {0, 0}, cs[2] = {0, 0}, nm = 0, cm = 0, nt = 0, ct = 0;
        fbf_bf_stairs_clear(st);
        for (int k = 0; k < 2; k++) {
            size_t n = rnd(40);
            for (size_t i = 0; i < n; i++) {
                double w = rnd(20) == 0 ? INFINITY : rnd(50);
                raw[k][i] = (fbf_bf_stair){1 + rnd(CAP), w, rnd(8) == 0 ? INFINITY : rnd(100) + w};
            }
            fbf_bf_stairs_clear(st);
            assert_int_equal(fbf_bf_stairs_gather(st, raw[k], n), 0);
            assert_int_equal(fbf_bf_stairs_take(st, CAP, &s[k], &ns[k], &cs[k]), 0);
        }
        assert_int_equal(fbf_bf_stairs_merge2(s[0], ns[0], s[1], ns[1], &m, &nm, &cm), 0);
        fbf_bf_stairs_clear(st);
        assert_int_equal(fbf_bf_stairs_gather(st, s[0], ns[0]), 0);
        assert_int_equal(fbf_bf_stairs_gather(st, s[1], ns[1]), 0);
        assert_int_equal(fbf_bf_stairs_take(st, CAP, &t, &nt, &ct), 0);
        assert_int_equal(nm, nt);
        for (size_t i = 0; i < nm; i++)
            assert_true(m[i].h == t[i].h && m[i].w == t[i].w && m[i].e == t[i].e);
        free(s[0]);
        free(s[1]);
        free(m);
        free(t);
    }
    fbf_bf_stairs_destroy(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_summaries),
        cmocka_unit_test(test_merge2_equals_take),
        cmocka_unit_test(test_index_gives_what_one_by_one_gives),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
