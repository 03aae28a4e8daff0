/*
 * test_easy_index: the indexed scan of EASY and finite-depth backfilling
 * (the queue-order index that finds the next job able to start, see
 * policies/backfilling/may_backfill.c) against the plain scan (the tuning's plain),
 * on random workloads with deep queues, ties in res and walltime,
 * walltime-0 jobs, jobs without a walltime (rejected), early completions
 * and out-of-order submissions, some on wide platforms where more
 * resources are free than any job needs, at depths 1, 2 and 5 under 1 and 3
 * workers: every start time, allocation, rejection, decision trace entry
 * and reservation after every decision point must be the same. Two built
 * queues also agree: narrow-but-long jobs next to wide-but-short ones,
 * which the per-res trees search without spending the pass's budget (no
 * fallback to the plain scan), and long jobs of 250 sizes, which spend it
 * (the rest of the pass falls back to the plain scan). The plain scan is
 * itself checked against the brute-force reference in test_policies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "policies/backfilling/tuning.h"
#include "support/engine_sim.h"
#include "support/ref_sched.h"

#ifdef FBF_TEST_UNDER_TSAN
#define NB_WORKLOADS 72 /* see CMakeLists.txt */
#else
#define NB_WORKLOADS 360
#endif
#define MAX_JOBS 1200

static uint64_t rnd(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Deep queues from a few bursts; res and walltime drawn from small sets
 * half of the time (ties), else spread; some walltimes fractional. */
static size_t workload(uint64_t seed, ref_job *jobs, uint32_t *nb)
{
    uint64_t x = seed * 0x2545f4914f6cdd1dull + 101;
    size_t n = 100 + rnd(&x) % 500;
    *nb = 4 + (uint32_t)(rnd(&x) % 61);
    uint32_t big = *nb; /* the largest res drawn */
    if (seed % 7 == 0) { /* wide platforms, narrow jobs: free exceeds every res */
        *nb = 65 + (uint32_t)(rnd(&x) % 180);
        big = 40;
    }
    unsigned bursts = 1 + (unsigned)(rnd(&x) % 4);
    unsigned wall_max = 5 + (unsigned)(rnd(&x) % 300);
    unsigned early_pct = (unsigned)(rnd(&x) % 90);
    bool ties = rnd(&x) % 2;
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        ref_job *J = &jobs[i];
        if (rnd(&x) % (n / bursts + 1) == 0)
            t += (double)(rnd(&x) % 80);
        else if (rnd(&x) % 8 == 0)
            t += (double)(rnd(&x) % 3) + (rnd(&x) % 2 ? 0.5 : 0);
        J->arrival = t;
        J->subtime = rnd(&x) % 12 == 0 ? fmax(0, t - (double)(rnd(&x) % 20)) : t;
        uint32_t quarter = big / 4 ? big / 4 : 1;
        if (ties)
            J->res = (int64_t[]){1, 2, quarter, big / 2 ? big / 2 : 1, big}[rnd(&x) % 5];
        else
            J->res = rnd(&x) % 4 ? 1 + (int64_t)(rnd(&x) % quarter)
                                 : 1 + (int64_t)(rnd(&x) % big);
        unsigned w = (unsigned)(rnd(&x) % 100);
        if (w < 4)
            J->walltime = 0;
        else if (w < 6)
            J->walltime = -1; /* no walltime: rejected (D2) */
        else if (ties)
            J->walltime = 10.0 * (double)(1 + rnd(&x) % 4);
        else
            J->walltime = 1 + (double)(rnd(&x) % wall_max) + (rnd(&x) % 4 == 0 ? 0.25 : 0);
        if (J->walltime > 0 && rnd(&x) % 100 < early_pct)
            J->runtime = floor(J->walltime * (double)(rnd(&x) % 1000)) / 1000;
        else
            J->runtime = J->walltime > 0 ? J->walltime : 0;
    }
    return n;
}

/* Narrow jobs too long to end before the shadow next to short jobs too
 * wide for the free resources, 60 of 64 resources busy behind a wide
 * head: pruning one tree on min res and min walltime together would visit
 * most of this queue at every search; the per-res trees do not. A few jobs
 * that do fit are spread in the queue. */
static size_t narrow_long_wide_short(ref_job *jobs, uint32_t *nb)
{
    *nb = 64;
    size_t n = 0;
    jobs[n++] = (ref_job)REF_JOB(0, 0, 60, 100, 100);
    jobs[n++] = (ref_job)REF_JOB(0, 0, 64, 10, 10);
    for (size_t i = 0; n < MAX_JOBS; i++) {
        if (i % 300 == 299)
            jobs[n++] = (ref_job)REF_JOB(1, 1, 2, 50, 30);
        else if (i % 2)
            jobs[n++] = (ref_job)REF_JOB(1, 1, 1, 1000, 500);
        else
            jobs[n++] = (ref_job)REF_JOB(1, 1, 5, 10, 10);
    }
    return n;
}

/* 250 of 256 resources free behind a head that needs them all, and a
 * queue of long jobs of every size from 1 to 250 (none fits), with a
 * short narrow job now and then: each search tries some 250 res values,
 * which spends a pass's budget on this short queue. */
static size_t many_sizes(ref_job *jobs, uint32_t *nb)
{
    *nb = 256;
    size_t n = 0;
    jobs[n++] = (ref_job)REF_JOB(0, 0, 6, 100, 100);
    jobs[n++] = (ref_job)REF_JOB(0, 0, 256, 10, 10);
    for (size_t i = 0; n < MAX_JOBS; i++) {
        if (i % 50 == 49)
            jobs[n++] = (ref_job)REF_JOB(1, 1, 1, 20, 20);
        else
            jobs[n++] = (ref_job)REF_JOB(1, 1, 1 + (int64_t)(i % 250), 1000, 400);
    }
    return n;
}

/* Returns the passes of the run that fell back to the plain scan. */
static uint64_t run(bool plain, int64_t depth, unsigned workers, const uint32_t *ids,
                    uint32_t nb, const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
                    fbf_test_rsv_log *l)
{
    char err[512] = "";
    static fbf_job_h handles[MAX_JOBS];
    fbf_test_rsv_log_init(l, handles, n);
    fbf_backfill_tuning tune = fbf_backfill_tuning_defaults();
    tune.plain = plain;
    fbf_test_sim_config c = {.policy = "easy", .depth = depth, .workers = workers,
                             .policy_options = &tune};
    fbf_engine *e = NULL;
    int rc = fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, out, tr, fbf_test_rsv_log_hook, l, &e,
                                  err, sizeof err);
    fbf_backfill_stats st;
    assert_int_equal(fbf_backfill_stats_of(e, &st), 0);
    fbf_engine_destroy(e);
    if (rc < 0)
        fail_msg("%s, depth %lld: %s", plain ? "plain" : "indexed", (long long)depth, err);
    return st.plain_fallbacks;
}

/* Runs both scans; returns the number of jobs started, and in *fallbacks
 * the indexed run's passes that fell back to the plain scan. */
static size_t compare(const char *what, int64_t depth, unsigned workers, uint32_t nb,
                      const ref_job *jobs, size_t n, uint64_t *fallbacks)
{
    static ref_result want[MAX_JOBS], got[MAX_JOBS];
    uint32_t ids[REF_MAX_RES];
    for (uint32_t k = 0; k < nb; k++)
        ids[k] = k;
    ref_trace pt = {0}, ft = {0};
    fbf_test_rsv_log pl, fl;
    uint64_t none = run(true, depth, workers, ids, nb, jobs, n, want, &pt, &pl);
    assert_int_equal(none, 0); /* the plain scan has no index to give up */
    *fallbacks = run(false, depth, workers, ids, nb, jobs, n, got, &ft, &fl);
    size_t started = 0;
    for (size_t i = 0; i < n; i++) {
        bool same = want[i].rejected == got[i].rejected &&
                    (want[i].start == got[i].start ||
                     (isnan(want[i].start) && isnan(got[i].start))) &&
                    strcmp(want[i].alloc, got[i].alloc) == 0;
        if (!same)
            fail_msg("%s (depth %lld, %u workers): job %zu: plain %.17g \"%s\", indexed "
                     "%.17g \"%s\"",
                     what, (long long)depth, workers, i, want[i].start, want[i].alloc,
                     got[i].start, got[i].alloc);
        started += !isnan(got[i].start);
    }
    size_t at = ref_trace_diff(&pt, &ft);
    if (at != SIZE_MAX) {
        ref_trace_print(stderr, &pt, at > 4 ? at - 4 : 0, at + 4);
        ref_trace_print(stderr, &ft, at > 4 ? at - 4 : 0, at + 4);
        fail_msg("%s (depth %lld, %u workers): traces differ at entry %zu", what,
                 (long long)depth, workers, at);
    }
    if (pl.hash != fl.hash)
        fail_msg("%s (depth %lld, %u workers): reservations differ after some decision point",
                 what, (long long)depth, workers);
    ref_trace_fini(&pt);
    ref_trace_fini(&ft);
    return started;
}

static void test_indexed_equals_plain(void **state)
{
    (void)state;
    static ref_job jobs[MAX_JOBS];
    static const int64_t depths[] = {1, 2, 5};
    size_t total = 0, started = 0, rejected = 0;
    uint64_t fallbacks = 0, f;
    for (uint64_t seed = 1; seed <= NB_WORKLOADS; seed++) {
        uint32_t nb;
        size_t n = workload(seed, jobs, &nb);
        char what[32];
        snprintf(what, sizeof what, "seed %llu", (unsigned long long)seed);
        started += compare(what, depths[seed % 3], seed % 2 ? 1 : 3, nb, jobs, n, &f);
        fallbacks += f;
        total += n;
        for (size_t i = 0; i < n; i++)
            rejected += jobs[i].walltime < 0;
    }
    /* The workloads must exercise what they claim to. */
    assert_true(rejected > 0 && started + rejected == total);
    fprintf(stderr,
            "indexed vs plain: %d workloads, %zu jobs, %zu rejected, %llu passes fell back\n",
            NB_WORKLOADS, total, rejected, (unsigned long long)fallbacks);
}

static void test_mixed_queue_needs_no_fallback(void **state)
{
    (void)state;
    static ref_job jobs[MAX_JOBS];
    uint32_t nb;
    size_t n = narrow_long_wide_short(jobs, &nb);
    for (int64_t depth = 1; depth <= 2; depth++) {
        uint64_t fallbacks;
        assert_int_equal(compare("narrow-long/wide-short", depth, depth, nb, jobs, n, &fallbacks),
                         n);
        assert_int_equal(fallbacks, 0);
    }
}

static void test_many_sizes_fall_back(void **state)
{
    (void)state;
    static ref_job jobs[MAX_JOBS];
    uint32_t nb;
    size_t n = many_sizes(jobs, &nb);
    for (int64_t depth = 1; depth <= 5; depth += 4) {
        uint64_t fallbacks;
        assert_int_equal(compare("many sizes", depth, depth == 1 ? 1 : 3, nb, jobs, n, &fallbacks),
                         n);
        assert_true(fallbacks > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexed_equals_plain),
        cmocka_unit_test(test_mixed_queue_needs_no_fallback),
        cmocka_unit_test(test_many_sizes_fall_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
