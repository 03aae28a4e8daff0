/*
 * test_fits: the fit facts of a batch of conservative arrivals
 * (policies/backfilling/no_fit_before.c) against a plain list of every fact learnt.
 *
 * What placement relies on: a bound is never later than what the facts
 * learnt say (else a search would start past a job's earliest fit), and
 * while a res has fewer facts than the cap it is exactly the latest fact
 * of a walltime no longer than the one asked (else the facts would save
 * no walk). After a reset nothing is known.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "policies/backfilling/no_fit_before.h"
#include "support/testkit.h"

#define MAX_FACTS 3000

typedef struct ref_fact {
    uint32_t res;
    double w, t;
} ref_fact;

static ref_fact facts[MAX_FACTS];
static size_t nfacts;
static uint64_t rng = 0x1d8e4e27c47d124full;

static uint32_t rnd(uint32_t bound)
{
    return fbf_test_rnd(&rng, bound);
}

static double ref_bound(uint32_t res, double w)
{
    double x = -INFINITY;
    for (size_t i = 0; i < nfacts; i++)
        if (facts[i].res == res && facts[i].w <= w && facts[i].t > x)
            x = facts[i].t;
    return x;
}

/* Walltimes and starts on small grids, so that ties and facts that know
 * less than one already held are common. */
static void check_round(fbf_bf_fits *f, uint32_t nres, size_t n)
{
    nfacts = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t res = 1 + rnd(nres);
        double w = 1 + rnd(40) + (rnd(4) == 0 ? 0.5 : 0);
        double t = (double)rnd(1000);
        facts[nfacts++] = (ref_fact){res, w, t};
        assert_int_equal(fbf_bf_fits_learn(f, res, w, t), 0);
        for (int q = 0; q < 4; q++) {
            uint32_t qr = 1 + rnd(nres + 1); /* sometimes a res never seen */
            double qw = rnd(45) + (rnd(3) == 0 ? 0.25 : 0);
            assert_true(fbf_bf_fits_bound(f, qr, qw) == ref_bound(qr, qw));
        }
    }
}

static void test_bound_is_latest_fact_of_shorter_walltime(void **state)
{
    (void)state;
    fbf_bf_fits *f = fbf_bf_fits_create();
    assert_non_null(f);
    for (int round = 0; round < 40; round++) {
        /* Many classes: the table of classes grows and is rehashed. */
        uint32_t nres = round % 2 ? 3 : 200;
        check_round(f, nres, 200 + (size_t)rnd(MAX_FACTS - 200));
        fbf_bf_fits_reset(f);
        for (uint32_t r = 1; r <= nres + 1; r++)
            assert_true(fbf_bf_fits_bound(f, r, 1e9) == -INFINITY);
    }
    assert_true(fbf_bf_fits_bytes(f) > 0);
    fbf_bf_fits_destroy(f);
}

/* Past the cap a class stops learning: bounds stay true, only looser. */
static void test_cap_only_loosens(void **state)
{
    (void)state;
    fbf_bf_fits *f = fbf_bf_fits_create();
    assert_non_null(f);
    size_t n = FBF_BF_FITS_PER_RES + 100;
    for (size_t i = 0; i < n; i++) /* every fact knows more than the last */
        assert_int_equal(fbf_bf_fits_learn(f, 7, (double)(i + 1), (double)(2 * i + 1)), 0);
    for (size_t i = 0; i < n; i++) {
        double b = fbf_bf_fits_bound(f, 7, (double)(i + 1));
        if (i < FBF_BF_FITS_PER_RES)
            assert_true(b == (double)(2 * i + 1));
        else
            assert_true(b <= (double)(2 * i + 1) && b == (double)(2 * FBF_BF_FITS_PER_RES - 1));
    }
    /* A fact that makes longer ones useless frees room for it. */
    assert_int_equal(fbf_bf_fits_learn(f, 7, 0.5, 1e6), 0);
    assert_true(fbf_bf_fits_bound(f, 7, 1e9) == 1e6);
    assert_true(fbf_bf_fits_bound(f, 7, 0.25) == -INFINITY);
    fbf_bf_fits_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_is_latest_fact_of_shorter_walltime),
        cmocka_unit_test(test_cap_only_loosens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
