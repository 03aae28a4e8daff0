/*
 * test_compression: the indexed conservative backfilling (compression
 * that only visits reservations which can move, searches near released
 * ranges, the placement cache) against the plain D7 loops
 * (the tuning's plain), job by job: on several hundred random
 * workloads with deep queues, early completions (kills are reported the
 * same way) and out-of-order submissions, every start time, allocation,
 * decision and every reservation after every decision point must be the
 * same. Each workload runs the indexed pass two ways (policies/backfilling/tuning.h):
 * as configured by default; and with a run table over every hole, however
 * wide, every batch of arrivals, however small, placed with the corner
 * and fit facts of a burst, and the scratch of every pass freed after it, as after
 * a burst. The plain loops are themselves checked against
 * the brute-force reference in test_policies.
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
#define NB_WORKLOADS 60 /* see CMakeLists.txt */
#else
#define NB_WORKLOADS 300
#endif
#define MAX_JOBS 300

static uint64_t rnd(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Deep queues: most jobs arrive in a few bursts; the rest trickle in.
 * Runtimes are often much shorter than walltimes, so reservations keep
 * moving; some walltimes are equal or fractional so ends coincide or
 * fall between breakpoints. */
static size_t workload(uint64_t seed, ref_job *jobs, uint32_t *ids, uint32_t *nb)
{
    uint64_t x = seed * 0x2545f4914f6cdd1dull + 17;
    size_t n = 100 + rnd(&x) % (MAX_JOBS - 100);
    *nb = 4 + (uint32_t)(rnd(&x) % 61);
    for (uint32_t k = 0; k < *nb; k++)
        ids[k] = k;
    unsigned bursts = 1 + (unsigned)(rnd(&x) % 4);
    unsigned wall_max = 5 + (unsigned)(rnd(&x) % 200);
    unsigned early_pct = 30 + (unsigned)(rnd(&x) % 70);
    bool coarse = rnd(&x) % 2; /* walltimes on a coarse grid: many ties */
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        ref_job *J = &jobs[i];
        if (rnd(&x) % (n / bursts + 1) == 0)
            t += (double)(rnd(&x) % 50);
        else if (rnd(&x) % 8 == 0)
            t += (double)(rnd(&x) % 3);
        J->arrival = t;
        J->subtime = rnd(&x) % 12 == 0 ? fmax(0, t - (double)(rnd(&x) % 20)) : t;
        uint32_t quarter = *nb / 4 ? *nb / 4 : 1;
        J->res = rnd(&x) % 4 ? 1 + (int64_t)(rnd(&x) % quarter) : 1 + (int64_t)(rnd(&x) % *nb);
        unsigned w = (unsigned)(rnd(&x) % 100);
        if (w < 3)
            J->walltime = 0;
        else if (coarse)
            J->walltime = 10.0 * (double)(1 + rnd(&x) % (wall_max / 10 + 1));
        else
            J->walltime = 1 + (double)(rnd(&x) % wall_max) + (rnd(&x) % 4 == 0 ? 0.25 : 0);
        if (rnd(&x) % 100 < early_pct)
            J->runtime = floor(J->walltime * (double)(rnd(&x) % 1000)) / 1000;
        else
            J->runtime = J->walltime;
    }
    return n;
}

/* One run under the tuning; *st gets the engine's statistics. */
static int run(const fbf_backfill_tuning *tune, unsigned workers, const uint32_t *ids,
               uint32_t nb, const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
               fbf_test_rsv_log *l, fbf_backfill_stats *st)
{
    char err[512] = "";
    static fbf_job_h handles[MAX_JOBS];
    fbf_test_rsv_log_init(l, handles, n);
    fbf_test_sim_config c = {.policy = "conservative", .workers = workers,
                             .policy_options = tune};
    fbf_engine *e = NULL;
    int rc = fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, out, tr, fbf_test_rsv_log_hook, l, &e,
                                  err, sizeof err);
    assert_int_equal(fbf_backfill_stats_of(e, st), 0);
    fbf_engine_destroy(e);
    if (rc < 0)
        fail_msg("%s: %s", tune->plain ? "plain" : "indexed", err);
    return rc;
}

/* One indexed run of the workload under the tuning against the plain
 * one; *st gets its statistics. */
static void check_indexed(uint64_t seed, const char *how, const fbf_backfill_tuning *tune,
                          unsigned workers, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                          size_t n, const ref_result *want, ref_trace *pt,
                          const fbf_test_rsv_log *pl, fbf_backfill_stats *st)
{
    static ref_result got[MAX_JOBS];
    ref_trace ft = {0};
    fbf_test_rsv_log fl;
    run(tune, workers, ids, nb, jobs, n, got, &ft, &fl, st);
    size_t at = ref_trace_diff(pt, &ft);
    for (size_t i = 0; i < n; i++) {
        bool same = want[i].rejected == got[i].rejected &&
                    (want[i].start == got[i].start ||
                     (isnan(want[i].start) && isnan(got[i].start))) &&
                    strcmp(want[i].alloc, got[i].alloc) == 0;
        if (!same)
            fail_msg("seed %llu (%s): job %zu: plain %.17g \"%s\", indexed %.17g \"%s\"",
                     (unsigned long long)seed, how, i, want[i].start, want[i].alloc,
                     got[i].start, got[i].alloc);
    }
    if (at != SIZE_MAX) {
        ref_trace_print(stderr, pt, at > 4 ? at - 4 : 0, at + 4);
        ref_trace_print(stderr, &ft, at > 4 ? at - 4 : 0, at + 4);
        fail_msg("seed %llu (%s): traces differ at entry %zu", (unsigned long long)seed, how, at);
    }
    if (pl->hash != fl.hash)
        fail_msg("seed %llu (%s): reservations differ after some decision point",
                 (unsigned long long)seed, how);
    ref_trace_fini(&ft);
}

static void test_indexed_equals_plain(void **state)
{
    (void)state;
    static ref_job jobs[MAX_JOBS];
    static ref_result want[MAX_JOBS];
    uint32_t ids[REF_MAX_RES], nb;
    size_t total = 0, checks = 0;
    unsigned long corner_batches = 0, scratch_frees = 0, fit_starts = 0;
    const fbf_backfill_tuning dflt = fbf_backfill_tuning_defaults();
    fbf_backfill_tuning plain = dflt, every = dflt;
    plain.plain = true;
    /* Short schedules make wide holes, which the default leaves to
     * searches of the profile. */
    every.corner_min_batch = 1;
    every.scratch_keep = 0;
    every.runs_share = 0;
    every.runs_cells_from = 1;
    fbf_backfill_stats st;
    for (uint64_t seed = 1; seed <= NB_WORKLOADS; seed++) {
        size_t n = workload(seed, jobs, ids, &nb);
        total += n;
        unsigned workers = seed % 3 == 0 ? 3 : 1;
        ref_trace pt = {0};
        fbf_test_rsv_log pl;
        run(&plain, workers, ids, nb, jobs, n, want, &pt, &pl, &st);
        checks += pl.checks;

        check_indexed(seed, "default", &dflt, workers, ids, nb, jobs, n, want, &pt, &pl, &st);
        fit_starts += st.fit_starts;

        check_indexed(seed, "every run table, released ranges indexed from the first, corner "
                      "facts for every batch, scratch freed after every pass",
                      &every, workers, ids, nb, jobs, n, want, &pt, &pl, &st);
        corner_batches += st.corner_batches;
        scratch_frees += st.scratch_frees;
        fit_starts += st.fit_starts;
        ref_trace_fini(&pt);
    }
    fprintf(stderr,
            "indexed vs plain: %d workloads, %zu jobs, %zu reservations compared; %lu batches "
            "of arrivals placed with corner facts, %lu searches started from a fit fact, %lu "
            "scratch buffers freed\n",
            NB_WORKLOADS, total, checks, corner_batches, fit_starts, scratch_frees);
    /* The variant must have run what it is meant to test. */
    assert_true(corner_batches > 1000);
    assert_true(fit_starts > NB_WORKLOADS); /* TSan runs fewer workloads */
    assert_true(scratch_frees > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_indexed_equals_plain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
