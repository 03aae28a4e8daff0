/*
 * test_runs: the per-hole run tables of conservative compression
 * (policies/backfilling/hole_runs.c) against a brute-force scan of the profile, on random
 * profiles, through growth that is reported, drops that are not, and
 * holes that change.
 *
 * What compression relies on: a table never answers shorter than the
 * longest run of free() >= r that really meets the hole (else a job that
 * can move would be skipped), and, fresh, it answers exactly that
 * whenever the run is shorter than the reach (else the test would be no
 * sharper than no test at all).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/profile.h"
#include "policies/backfilling/hole_runs.h"
#include "support/testkit.h"

#define CAP 8
#define MAX_SPANS 40

typedef struct span {
    double s, e;
    uint32_t n;
} span;

static span spans[MAX_SPANS];
static size_t nspans;
static uint64_t rng = 0x7a3c9e11d2b4f805ull;

static uint32_t rnd(uint32_t bound)
{
    return fbf_test_rnd(&rng, bound);
}

static int64_t used_at(double u)
{
    int64_t acc = 0;
    for (size_t i = 0; i < nspans; i++)
        if (spans[i].s <= u && u < spans[i].e)
            acc += spans[i].n;
    return acc;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The longest maximal run of free() >= r on [now, inf) that meets [a, b]
 * (closed: touching counts) or (a, b) (strict); *end gets the latest end
 * of such a run (-INFINITY if none). */
static double brute_end(double now, double a, double b, uint32_t r, bool closed, double *end_out)
{
    double cut[2 * MAX_SPANS + 1];
    size_t m = 0;
    cut[m++] = now;
    for (size_t i = 0; i < nspans; i++) {
        if (spans[i].s > now)
            cut[m++] = spans[i].s;
        if (spans[i].e > now && spans[i].e < INFINITY)
            cut[m++] = spans[i].e;
    }
    qsort(cut, m, sizeof *cut, cmp_double);
    double best = 0, start = NAN, last = -INFINITY;
    for (size_t i = 0; i <= m; i++) {
        bool ok = i < m && CAP - used_at(cut[i]) >= (int64_t)r;
        if (ok && isnan(start))
            start = cut[i];
        if (!ok && !isnan(start)) {
            double end = i < m ? cut[i] : INFINITY;
            bool meets = closed ? start <= b && end >= a : start < b && end > a;
            if (meets && end - start > best)
                best = end - start;
            if (meets && end > last)
                last = end;
            start = NAN;
        }
    }
    *end_out = last;
    return best;
}

static double brute(double now, double a, double b, uint32_t r, bool closed)
{
    double end;
    return brute_end(now, a, b, r, closed, &end);
}

static void check(fbf_bf_runs *t, const fbf_profile *p, const fbf_bf_holes *hs, double now,
                  double reach, uint32_t min_res, bool fresh)
{
    for (size_t i = 0; i < hs->n; i++) {
        for (uint32_t r = min_res; r <= CAP; r++) {
            fbf_bf_run_info ri;
            assert_int_equal(fbf_bf_runs_query(t, p, hs, i, now, r, &ri), 0);
            double got = ri.longest, end_strict, end_closed;
            double strict = brute_end(now, hs->v[i].a, hs->v[i].b, r, false, &end_strict);
            double closed = brute_end(now, hs->v[i].a, hs->v[i].b, r, true, &end_closed);
            assert_true(fbf_bf_runs_longest(t, p, hs, i, now, r) == got);
            if (!(got >= strict))
                fail_msg("hole [%g, %g) now %g r %u: %g shorter than the run %g",
                         hs->v[i].a, hs->v[i].b, now, r, got, strict);
            if (!(ri.latest_end >= end_strict))
                fail_msg("hole [%g, %g) now %g r %u: end %g before the run's %g",
                         hs->v[i].a, hs->v[i].b, now, r, ri.latest_end, end_strict);
            if (fresh && closed < reach && got != closed)
                fail_msg("hole [%g, %g) now %g r %u reach %g: %g, want %g",
                         hs->v[i].a, hs->v[i].b, now, r, reach, got, closed);
            if (fresh && end_closed < hs->v[i].b + reach && ri.latest_end != end_closed)
                fail_msg("hole [%g, %g) now %g r %u reach %g: end %g, want %g",
                         hs->v[i].a, hs->v[i].b, now, r, reach, ri.latest_end, end_closed);
        }
    }
}

static void random_holes(fbf_bf_holes *hs, double now)
{
    hs->n = 0;
    double t = now + rnd(6);
    size_t k = 1 + rnd(4);
    for (size_t i = 0; i < k; i++) {
        double a = t, b = a + 1 + rnd(10);
        hs->v[hs->n++] = (fbf_bf_hole){a, b, CAP};
        t = b + 1 + rnd(8);
    }
}

/* The pass's released ranges: here every hole is one. */
static void add_members(fbf_bf_runs *t, const fbf_bf_holes *hs, double now)
{
    for (size_t i = 0; i < hs->n; i++)
        fbf_bf_runs_add(t, now, hs->v[i].a, hs->v[i].b);
}

static void add_span(fbf_profile *p)
{
    span s = {(double)rnd(60), 0, 1 + rnd(CAP / 2)};
    s.e = rnd(12) == 0 ? INFINITY : s.s + 1 + rnd(20);
    assert_int_equal(fbf_profile_add(p, s.s, s.e, s.n), 0);
    spans[nspans++] = s;
}

static void test_random_tables(void **state)
{
    (void)state;
    fbf_bf_hole v[FBF_BF_MAX_HOLES];
    fbf_bf_holes hs = {v, 0, FBF_BF_MAX_HOLES};
    int exact_short = 0;
    for (int round = 0; round < 400; round++) {
        fbf_profile *p = fbf_profile_create(CAP);
        fbf_bf_runs *t = fbf_bf_runs_create();
        assert_non_null(p);
        assert_non_null(t);
        nspans = 0;
        for (uint32_t k = 8 + rnd(24); k > 0; k--)
            add_span(p);
        double now = rnd(20), reach = 3 + rnd(30);
        uint32_t min_res = 1 + rnd(3);
        random_holes(&hs, now);
        fbf_bf_runs_reset(t, reach, min_res, 0);
        add_members(t, &hs, now);
        fbf_bf_runs_remap(t, &hs);
        check(t, p, &hs, now, reach, min_res, true);
        if (brute(now, hs.v[0].a, hs.v[0].b, min_res, true) < reach)
            exact_short++;
        for (int step = 0; step < 12; step++) {
            uint32_t what = rnd(4);
            if (what == 0 && nspans < MAX_SPANS) {
                add_span(p); /* a drop, not reported: tables may be long */
            } else if (what == 1 && nspans > 0) {
                size_t i = rnd((uint32_t)nspans);
                assert_int_equal(fbf_profile_remove(p, spans[i].s, spans[i].e, spans[i].n), 0);
                fbf_bf_runs_changed(t, spans[i].s, spans[i].e);
                spans[i] = spans[--nspans];
            } else if (what == 2) {
                /* Keep the first hole, change the others. */
                fbf_bf_hole first = hs.v[0];
                random_holes(&hs, now);
                add_members(t, &hs, now);
                if (hs.v[0].a > first.b) {
                    memmove(&hs.v[1], &hs.v[0], hs.n * sizeof *hs.v);
                    hs.v[0] = first;
                    hs.n++;
                }
                fbf_bf_runs_remap(t, &hs);
            }
            check(t, p, &hs, now, reach, min_res, false);
        }
        /* A new pass: exact again. */
        fbf_bf_runs_reset(t, reach, min_res, 0);
        add_members(t, &hs, now);
        check(t, p, &hs, now, reach, min_res, true);
        fbf_bf_runs_destroy(t);
        fbf_profile_destroy(p);
    }
    /* The exact branch must really have been exercised. */
    assert_true(exact_short > 40);
}

/* A hand-made case: free() is 4 on [0, 10), 2 on [10, 14), 0 on [14, 15),
 * 8 afterwards; one hole [5, 12). */
static void test_worked_example(void **state)
{
    (void)state;
    fbf_profile *p = fbf_profile_create(CAP);
    fbf_bf_runs *t = fbf_bf_runs_create();
    assert_int_equal(fbf_profile_add(p, 0, 10, 4), 0);
    assert_int_equal(fbf_profile_add(p, 10, 14, 6), 0);
    assert_int_equal(fbf_profile_add(p, 14, 15, 8), 0);
    fbf_bf_hole v[1] = {{5, 12, CAP}};
    fbf_bf_holes hs = {v, 1, 1};
    fbf_bf_runs_reset(t, 100, 1, 0);
    add_members(t, &hs, 0);
    fbf_bf_runs_remap(t, &hs);
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 0, 1) == 14); /* [0, 14) */
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 0, 3) == 10); /* [0, 10) */
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 0, 5) == 0);
    /* From now = 3 the runs start at 3. */
    fbf_bf_runs_reset(t, 100, 1, 0);
    add_members(t, &hs, 3);
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 3, 1) == 11);
    /* The job at [14, 15) leaves: the run of free() >= 1 now goes on for
     * ever, which the table learns only through the report. */
    assert_int_equal(fbf_profile_remove(p, 14, 15, 8), 0);
    fbf_bf_runs_changed(t, 14, 15);
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 3, 1) == INFINITY);
    assert_true(fbf_bf_runs_longest(t, p, &hs, 0, 3, 3) == 7);
    fbf_bf_runs_destroy(t);
    fbf_profile_destroy(p);
}

/* A region that is a large share of the schedule ahead is not swept: the
 * caller is told to search. A narrow one, on a long schedule, is. */
static void test_wide_region_not_built(void **state)
{
    (void)state;
    fbf_profile *p = fbf_profile_create(CAP);
    fbf_bf_runs *t = fbf_bf_runs_create();
    for (int i = 0; i < 100; i++)
        assert_int_equal(fbf_profile_add(p, 10 * i, 10 * i + 9, CAP), 0);
    fbf_bf_hole v[2] = {{0, 500, CAP}, {700, 705, CAP}};
    fbf_bf_holes hs = {v, 2, 2};
    fbf_bf_runs_reset(t, 10, 1, FBF_RUNS_SPAN_SHARE);
    add_members(t, &hs, 0);
    fbf_bf_runs_remap(t, &hs);
    fbf_bf_run_info ri;
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 0, 0, 1, &ri), -1);
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 1, 0, 1, &ri), 0);
    assert_true(ri.longest == 1); /* the gap [699, 700), which touches it */
    fbf_bf_runs_destroy(t);
    fbf_profile_destroy(p);
}

/* A hole merged from two released ranges far apart: a run that meets
 * only the gap between them is not counted (nothing was released there),
 * until a range released inside the gap is added. free() is 0 on
 * [20, 30) and [50, 58) and from 70 on, 8 elsewhere from 20; the hole is
 * [25, 60), made of [25, 26) and [59, 60). */
static void test_members_leave_gaps_out(void **state)
{
    (void)state;
    fbf_profile *p = fbf_profile_create(CAP);
    fbf_bf_runs *t = fbf_bf_runs_create();
    assert_non_null(p);
    assert_non_null(t);
    assert_int_equal(fbf_profile_add(p, 20, 30, CAP), 0);
    assert_int_equal(fbf_profile_add(p, 50, 58, CAP), 0);
    assert_int_equal(fbf_profile_add(p, 70, INFINITY, CAP), 0);
    fbf_bf_hole v[1] = {{25, 60, CAP}};
    fbf_bf_holes hs = {v, 1, 1};
    fbf_bf_runs_reset(t, 100, 1, 0);
    fbf_bf_runs_add(t, 20, 25, 26);
    fbf_bf_runs_add(t, 20, 59, 60);
    fbf_bf_runs_remap(t, &hs);
    fbf_bf_run_info ri;
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 0, 20, 1, &ri), 0);
    assert_true(ri.longest == 12); /* [58, 70), not the gap's [30, 50) */
    assert_true(ri.latest_end == 70);
    /* Released in the gap: the hole keeps its bounds, the table does not. */
    fbf_bf_runs_add(t, 20, 35, 36);
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 0, 20, 1, &ri), 0);
    assert_true(ri.longest == 20);
    /* Growth beside a member: [50, 58) frees, [30, 70) is one run. */
    assert_int_equal(fbf_profile_remove(p, 50, 58, CAP), 0);
    fbf_bf_runs_changed(t, 50, 58);
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 0, 20, 1, &ri), 0);
    assert_true(ri.longest == 40);
    /* A new pass forgets the ranges: nothing released, nothing counted. */
    fbf_bf_runs_reset(t, 100, 1, 0);
    assert_int_equal(fbf_bf_runs_query(t, p, &hs, 0, 20, 1, &ri), 0);
    assert_true(ri.longest == 0 && ri.latest_end == -INFINITY);
    fbf_bf_runs_destroy(t);
    fbf_profile_destroy(p);
}

/* Which instants the pass released: [a, b) of each range added, clipped
 * to now, touching ranges merged; nothing after a reset. */
static void test_released_at(void **state)
{
    (void)state;
    fbf_bf_runs *t = fbf_bf_runs_create();
    assert_non_null(t);
    fbf_bf_runs_reset(t, 100, 1, 0);
    fbf_bf_runs_add(t, 20, 10, 30); /* clipped: [20, 30) */
    fbf_bf_runs_add(t, 20, 40, 50);
    fbf_bf_runs_add(t, 20, 50, 55); /* touches [40, 50): one range */
    fbf_bf_runs_add(t, 20, 70, 80);
    assert_false(fbf_bf_runs_released_at(t, 19.5));
    assert_true(fbf_bf_runs_released_at(t, 20));
    assert_true(fbf_bf_runs_released_at(t, nextafter(30, 0)));
    assert_false(fbf_bf_runs_released_at(t, 30));
    assert_false(fbf_bf_runs_released_at(t, 39));
    assert_true(fbf_bf_runs_released_at(t, 40));
    assert_true(fbf_bf_runs_released_at(t, 50));
    assert_true(fbf_bf_runs_released_at(t, 54.9));
    assert_false(fbf_bf_runs_released_at(t, 55));
    assert_false(fbf_bf_runs_released_at(t, 60));
    assert_true(fbf_bf_runs_released_at(t, 75));
    assert_false(fbf_bf_runs_released_at(t, 80));
    assert_false(fbf_bf_runs_released_at(t, 1e9));
    fbf_bf_runs_reset(t, 100, 1, 0);
    assert_false(fbf_bf_runs_released_at(t, 75));
    fbf_bf_runs_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_released_at),
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_random_tables),
        cmocka_unit_test(test_wide_region_not_built),
        cmocka_unit_test(test_members_leave_gaps_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
