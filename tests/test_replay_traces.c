/*
 * test_replay_traces: full replays of the bundled real traces (KTH-SP2 and
 * CTC-SP2, data/) under each policy, in process: every job must complete,
 * none rejected or killed, and the skipped jobs counted as the workload
 * says.
 *
 * The replays are also checked job by job against the brute-force
 * reference of tests/support/ref_sched.c (scheduling-semantics.md read
 * literally): the start time and the allocation of every job in
 * out_jobs.csv must be the reference's. That is the check an outsider
 * makes, on a real trace rather than on random workloads. KTH-SP2's are
 * checked on every run; CTC-SP2's, on 512 resources, take about 5
 * minutes, so they run only with FBF_TEST_CTC_REFERENCE=1 in the
 * environment. Under the sanitizers the comparisons are left out (the
 * replays, which they check, still run in full).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/ref_sched.h"
#include "support/replay_run.h"
#include "support/replay_sched.h"
#include "support/testkit.h"
#include "tools/lib/workload.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 120000

typedef struct by_arrival {
    double subtime;
    size_t index; /* in the file */
} by_arrival;

static int arrival_cmp(const void *a, const void *b)
{
    const by_arrival *x = a, *y = b;
    if (x->subtime != y->subtime)
        return x->subtime < y->subtime ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/* The next comma-separated field of *p (no quotes in the columns read
 * here: ids, times, interval sets), NUL-terminated in place. */
static char *field(char **p)
{
    char *f = *p, *c = strpbrk(f, ",\n");
    if (c) {
        *p = c + (*c != '\0');
        *c = '\0';
    } else
        *p = f + strlen(f);
    return f;
}

/* Compares dir/out_jobs.csv with the reference's schedule of the same
 * workload: the replayer submits jobs in subtime order, ties in file order
 * (D1), and a job runs min(runtime, walltime) (Batsim kills it then). */
static void check_reference(const char *path, uint32_t nb_res, ref_policy pol,
                            const char *pol_name, const char *dir)
{
    fbf_error err = {0};
    fbf_workload *wl = fbf_workload_read(path, NULL, &err);
    if (!wl)
        fail_msg("%s: %s", path, err.text);
    size_t n = wl->nb_jobs;
    if (!nb_res)
        nb_res = wl->nb_res;
    assert_true(nb_res > 0 && nb_res <= REF_MAX_RES);
    by_arrival *order = malloc(n * sizeof *order);
    ref_job *jobs = calloc(n, sizeof *jobs);
    ref_result *want = calloc(n, sizeof *want);
    uint32_t *ids = malloc(nb_res * sizeof *ids);
    size_t *rank = malloc(n * sizeof *rank); /* file index -> reference index */
    assert_true(order && jobs && want && ids && rank);
    for (size_t i = 0; i < n; i++)
        order[i] = (by_arrival){wl->jobs[i].subtime, i};
    qsort(order, n, sizeof *order, arrival_cmp);
    for (size_t k = 0; k < n; k++) {
        const fbf_wl_job *w = &wl->jobs[order[k].index];
        rank[order[k].index] = k;
        jobs[k] = (ref_job){.arrival = w->subtime,
                            .subtime = w->subtime,
                            .res = w->res,
                            .walltime = w->walltime,
                            .runtime = w->walltime > 0 && w->runtime > w->walltime ? w->walltime
                                                                                 : w->runtime};
    }
    for (uint32_t r = 0; r < nb_res; r++)
        ids[r] = r;
    ref_trace tr = {0};
    char why[512] = "";
    if (ref_simulate(pol, ids, nb_res, jobs, n, want, &tr, why, sizeof why) < 0)
        fail_msg("reference, %s under %s: %s", path, pol_name, why);
    ref_trace_fini(&tr);

    char csv_path[4096];
    snprintf(csv_path, sizeof csv_path, "%s/out_jobs.csv", dir);
    char *csv = fbf_test_replay_read(csv_path);
    assert_non_null(csv);
    char *p = strchr(csv, '\n');
    assert_non_null(p);
    p++;
    size_t rows = 0;
    while (*p) {
        char *col[15];
        for (int c = 0; c < 15; c++)
            col[c] = field(&p);
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : p + strlen(p); /* the rest of the row */
        char id[64];
        snprintf(id, sizeof id, "%s!%s", col[1], col[0]);
        int64_t i = fbf_workload_find(wl, id);
        if (i < 0)
            fail_msg("%s under %s: out_jobs.csv names job %s, not in the workload", path,
                     pol_name, id);
        const ref_result *r = &want[rank[i]];
        double start = strtod(col[8], NULL);
        if (!(fabs(start - r->start) < 5e-7) || strcmp(col[14], r->alloc) != 0)
            fail_msg("%s under %s: job %s started at %s on \"%s\"; the reference starts it at "
                     "%.6f on \"%s\"",
                     path, pol_name, id, col[8], col[14], r->start, r->alloc);
        rows++;
    }
    assert_int_equal(rows, n);
    free(csv);
    free(rank);
    free(ids);
    free(want);
    free(jobs);
    free(order);
    fbf_workload_destroy(wl);
}

/* nb_res: "" for the workload's own platform size. */
static void replay_trace(const char *path, const char *nb_res, double jobs, double skipped,
                         bool reference)
{
#ifdef FBF_TEST_UNDER_TSAN
    /* One thread in process: nothing for TSan to see, minutes to spend. */
    skip();
#endif
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int i = 0; i < 3; i++) {
        const char *out = fbf_test_tmp_path("trace-%s", policies[i]);
        char *err = NULL, *so = NULL;
        const char *args[] = {"--inproc", "--policy", policies[i], "--out", out, path,
                              *nb_res ? "--nb-res" : NULL, nb_res, NULL};
        int rc = fbf_test_replay_run(args, TIMEOUT_MS * 2, &so, &err);
        if (rc != 0)
            fail_msg("%s under %s: exit %d: %s", path, policies[i], rc, err);
        print_message("%s, %s%s%s:\n%s", path, policies[i], *nb_res ? ", resources " : "",
                      nb_res, so);
        free(err);
        free(so);
        assert_true(fbf_test_replay_summary(out, "jobs.in_workload") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.submitted") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.completed") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.rejected") == 0);
        assert_true(fbf_test_replay_summary(out, "jobs.killed") == 0);
        assert_true(fbf_test_replay_summary(out, "jobs.skipped") == skipped);
#ifdef FBF_TEST_UNDER_SAN
        reference = false;
#endif
        if (reference)
            check_reference(path, (uint32_t)atoi(nb_res), (ref_policy)i, policies[i], out);
    }
}

static void test_kth_trace_all_policies(void **state)
{
    (void)state;
    replay_trace(FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", "", 28475, 1, true);
}

static void test_ctc_trace_all_policies(void **state)
{
    (void)state;
    const char *ctc = FBF_SOURCE_DIR "/data/CTC-SP2-1996-3.1-cln.swf.gz";
    replay_trace(ctc, "", 77222, 0, false);
    /* The reference against the whole machine, as published studies use
     * it: on the 338 resources of the header its conservative run is
     * hours long (queues of thousands, each pass re-placing all of them
     * by brute force). */
    const char *want = getenv("FBF_TEST_CTC_REFERENCE");
    if (want && strcmp(want, "1") == 0)
        replay_trace(ctc, "512", 77222, 0, true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth_trace_all_policies),
        cmocka_unit_test(test_ctc_trace_all_policies),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
