/*
 * test_flux_replay: fastbf --protocol flux against fastbf-fluxsim (Flux's
 * job manager) with job data in a real Redis, end to end:
 *  - start times and allocations under fcfs, easy and conservative equal
 *    those of the Batsim v4 replay (fastbf-replay --inproc) of the same
 *    jobs, on both bundled traces (their first 1000 jobs; 200 under the
 *    sanitizers; all of them with FBF_TEST_FLUX_FULL=1), and in single
 *    mode under fcfs; the job manager finds no ANNOTATE that changes
 *    nothing, and no job that starts after its last t_estimate;
 *  - recovery: fastbf killed (SIGKILL) at three points of a run and
 *    started again: every job completes once, no core is ever held by two
 *    jobs at a time, the restarted fastbf read the running jobs' R; under
 *    fcfs and easy, whose reservations live within a pass, every start
 *    is the unbroken run's;
 *  - seeded cancels and priority changes, in both modes: every job ends
 *    (completed, or canceled), the job manager finds nothing to refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"
#include "tools/lib/workload.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define CTC FBF_SOURCE_DIR "/data/CTC-SP2-1996-3.1-cln.swf.gz"
#define TIMEOUT_MS 600000

#if defined(FBF_TEST_UNDER_SAN) || defined(FBF_TEST_UNDER_TSAN)
#define PREFIX "200"
#else
#define PREFIX "1000"
#endif

static const char *fluxsim_path(void)
{
    static char p[512];
    const char *b = getenv("FBF_BUILD_DIR");
    snprintf(p, sizeof p, "%s/fastbf-fluxsim", b ? b : FBF_BUILD_DIR);
    return p;
}

static const char *prefix(void)
{
    return getenv("FBF_TEST_FLUX_FULL") ? NULL : PREFIX;
}

/* ---- out_jobs.csv ---- */

typedef struct row {
    char id[48];
    double start, end;
    char alloc[512];
    char state[48];
} row;

typedef struct table {
    row *v;
    size_t n;
} table;

/* Reads the named columns of a CSV whose fields hold no comma before
 * the last of them (Batsim's metadata comes last). */
static table read_csv(const char *path, const char *idcol)
{
    table t = {0};
    char *text = fbf_test_replay_read(path);
    if (!text)
        fail_msg("no %s", path);
    char *save = NULL, *line = strtok_r(text, "\n", &save);
    int col[5] = {-1, -1, -1, -1, -1};
    static const char *names[] = {NULL, "starting_time", "finish_time", "allocated_resources",
                                  "final_state"};
    int c = 0;
    for (char *f = line, *e; f; f = e ? e + 1 : NULL, c++) {
        e = strchr(f, ',');
        size_t len = e ? (size_t)(e - f) : strlen(f);
        for (int k = 0; k < 5; k++)
            if (strlen(k ? names[k] : idcol) == len && strncmp(f, k ? names[k] : idcol, len) == 0)
                col[k] = c;
    }
    for (int k = 0; k < 5; k++)
        assert_true(col[k] >= 0);
    while ((line = strtok_r(NULL, "\n", &save))) {
        t.v = realloc(t.v, (t.n + 1) * sizeof *t.v);
        row *r = &t.v[t.n++];
        memset(r, 0, sizeof *r);
        r->start = r->end = NAN;
        c = 0;
        for (char *f = line, *e; f && c <= 16; f = e ? e + 1 : NULL, c++) {
            e = strchr(f, ',');
            size_t len = e ? (size_t)(e - f) : strlen(f);
            char v[512];
            snprintf(v, sizeof v, "%.*s", (int)(len < 500 ? len : 500), f);
            if (c == col[0])
                snprintf(r->id, sizeof r->id, "%s%.40s", strchr(v, '!') ? "" : "w0!", v);
            if (c == col[1] && *v)
                r->start = atof(v);
            if (c == col[2] && *v)
                r->end = atof(v);
            if (c == col[3])
                snprintf(r->alloc, sizeof r->alloc, "%s", v);
            if (c == col[4])
                snprintf(r->state, sizeof r->state, "%.40s", v);
        }
    }
    free(text);
    return t;
}

static int by_id(const void *a, const void *b)
{
    return strcmp(((const row *)a)->id, ((const row *)b)->id);
}

/* Every job of want has got's start and allocation (a job Batsim
 * rejected: denied). */
static void same_starts(table want, table got, const char *what)
{
    assert_int_equal(want.n, got.n);
    qsort(got.v, got.n, sizeof *got.v, by_id);
    for (size_t i = 0; i < want.n; i++) {
        const row *w = &want.v[i];
        row key;
        snprintf(key.id, sizeof key.id, "%s", w->id);
        const row *g = bsearch(&key, got.v, got.n, sizeof *got.v, by_id);
        if (!g)
            fail_msg("%s: job %s missing", what, w->id);
        bool rejected = strcmp(w->state, "REJECTED") == 0;
        if (rejected ? strcmp(g->state, "DENIED") != 0
                     : !(w->start == g->start) || strcmp(w->alloc, g->alloc) != 0)
            fail_msg("%s: job %s: v4 starts it at %f on \"%s\" (%s), the Flux run at %f on "
                     "\"%s\" (%s)",
                     what, w->id, w->start, w->alloc, w->state, g->start, g->alloc, g->state);
    }
}

/* ---- runs ---- */

static char redis_addr[64], redis_port[16];

static int setup(void **state)
{
    if (fbf_test_redis_group_setup(state) != 0)
        return -1;
    snprintf(redis_addr, sizeof redis_addr, "%s", fbf_test_redis_addr(fbf_test_redis_shared()));
    snprintf(redis_port, sizeof redis_port, "%d", fbf_test_redis_shared()->port);
    return fbf_test_tmpdir_setup(state);
}

static int teardown(void **state)
{
    fbf_test_tmpdir_teardown(state);
    return fbf_test_redis_group_teardown(state);
}

static uint32_t platform_of(const char *trace)
{
    fbf_error err;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.max_jobs = 1;
    fbf_workload *wl = fbf_workload_read(trace, &o, &err);
    assert_non_null(wl);
    uint32_t n = wl->nb_res;
    fbf_workload_destroy(wl);
    return n;
}

static void v4_run(const char *trace, const char *policy, const char *dir)
{
    const char *n = prefix();
    const char *args[] = {trace, "--inproc", "--policy", policy, "--out", dir,
                          n ? "--max-jobs" : NULL, n, NULL};
    char *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, NULL, &err);
    if (rc != 0)
        fail_msg("fastbf-replay: exit %d: %s", rc, err);
    free(err);
}

/* fastbf-fluxsim with fastbf under policy (extra: fastbf's further
 * options, then the job manager's); its stderr into *err when asked. */
static int flux_run(const char *trace, const char *policy, const char *dir, const char *fastbf_extra,
                    const char *const *sim_extra, char **err_out)
{
    char sched[1024];
    snprintf(sched, sizeof sched, "%s --protocol flux --flux-ranks %u --flux-cores 1 "
             "--redis-port %s --policy %s %s",
             fbf_test_replay_fastbf_path(), platform_of(trace), redis_port, policy,
             fastbf_extra ? fastbf_extra : "");
    const char *n = prefix();
    const char *args[32] = {trace, "--redis", redis_addr, "--scheduler", sched, "--out", dir,
                            "--quiet"};
    size_t k = 8;
    if (n) {
        args[k++] = "--max-jobs";
        args[k++] = n;
    }
    for (size_t i = 0; sim_extra && sim_extra[i]; i++)
        args[k++] = sim_extra[i];
    args[k] = NULL;
    char *err = NULL;
    int rc = fbf_test_run_program(fluxsim_path(), args, TIMEOUT_MS, NULL, &err);
    if (err_out)
        *err_out = err;
    else
        free(err);
    return rc;
}

static double summary(const char *dir, const char *key)
{
    return fbf_test_replay_summary(dir, key);
}

static void equal_to_v4(const char *trace, const char *tag, const char *policy, const char *mode)
{
    const char *v4 = fbf_test_tmp_path("%s-%s-v4", tag, policy);
    const char *fx = fbf_test_tmp_path("%s-%s-%s", tag, policy, mode);
    v4_run(trace, policy, v4);
    char extra[64];
    snprintf(extra, sizeof extra, "--flux-mode %s", mode);
    char *err = NULL;
    int rc = flux_run(trace, policy, fx, extra, NULL, &err);
    if (rc != 0)
        fail_msg("fastbf-fluxsim exit %d: %s", rc, err);
    free(err);
    char p1[600], p2[600];
    snprintf(p1, sizeof p1, "%s/out_jobs.csv", v4);
    snprintf(p2, sizeof p2, "%s/out_jobs.csv", fx);
    table a = read_csv(p1, "job_id"), b = read_csv(p2, "job_id");
    char what[128];
    snprintf(what, sizeof what, "%s %s %s", tag, policy, mode);
    same_starts(a, b, what);
    free(a.v);
    free(b.v);
    assert_true(summary(fx, "annotate_redundant") == 0);
    assert_true(summary(fx, "started_after_t_estimate") == 0);
    assert_true(summary(fx, "t_estimate_past") == 0);
    if (strcmp(policy, "fcfs") != 0 && strcmp(mode, "unlimited") == 0)
        assert_true(summary(fx, "annotate") > 0);
}

static void kth_fcfs(void **s) { equal_to_v4(KTH, "kth", "fcfs", "unlimited"); }
static void kth_easy(void **s) { equal_to_v4(KTH, "kth", "easy", "unlimited"); }
static void kth_conservative(void **s) { equal_to_v4(KTH, "kth", "conservative", "unlimited"); }
static void kth_fcfs_single(void **s) { equal_to_v4(KTH, "kth", "fcfs", "single"); }
static void ctc_fcfs(void **s) { equal_to_v4(CTC, "ctc", "fcfs", "unlimited"); }
static void ctc_easy(void **s) { equal_to_v4(CTC, "ctc", "easy", "unlimited"); }
static void ctc_conservative(void **s) { equal_to_v4(CTC, "ctc", "conservative", "unlimited"); }

/* No core held by two jobs at once: each core's intervals do not overlap. */
static void no_core_twice(const table *t, uint32_t cores)
{
    for (uint32_t c = 0; c < cores; c++) {
        double *iv = NULL;
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++) {
            fbf_idset s;
            fbf_idset_init(&s);
            fbf_test_idset_parse(&s, t->v[i].alloc);
            if (fbf_idset_contains(&s, c)) {
                iv = realloc(iv, (n + 1) * 2 * sizeof *iv);
                iv[2 * n] = t->v[i].start;
                iv[2 * n + 1] = t->v[i].end;
                n++;
            }
            fbf_idset_fini(&s);
        }
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                if (iv[2 * a] < iv[2 * b + 1] && iv[2 * b] < iv[2 * a + 1])
                    fail_msg("core %u held by two jobs at once: [%f, %f) and [%f, %f)", c,
                             iv[2 * a], iv[2 * a + 1], iv[2 * b], iv[2 * b + 1]);
        free(iv);
    }
}

static void recovery(const char *policy, bool same)
{
    const char *base = fbf_test_tmp_path("rec-%s-base", policy);
    char *err = NULL;
    assert_int_equal(flux_run(KTH, policy, base, NULL, NULL, NULL), 0);
    char basecsv[600];
    snprintf(basecsv, sizeof basecsv, "%s/out_jobs.csv", base);
    table want = read_csv(basecsv, "job_id");
    static const char *const at[] = {"1", "57", "240"};
    for (size_t k = 0; k < sizeof at / sizeof at[0]; k++) {
        const char *dir = fbf_test_tmp_path("rec-%s-%s", policy, at[k]);
        const char *extra[] = {"--kill-at", at[k], NULL};
        int rc = flux_run(KTH, policy, dir, "--verbose", extra, &err);
        if (rc != 0)
            fail_msg("kill at %s: fastbf-fluxsim exit %d: %s", at[k], rc, err);
        assert_true(summary(dir, "restarts") == 1);
        /* The second fastbf found running jobs in hello, but at the start. */
        const char *hello = strstr(err, "fastbf: hello: ");
        hello = hello ? strstr(hello + 1, "fastbf: hello: ") : NULL;
        assert_non_null(hello);
        if (strcmp(at[k], "1") != 0 && strncmp(hello, "fastbf: hello: 0 jobs", 21) == 0)
            fail_msg("kill at %s: no running job to recover (%.60s)", at[k], hello);
        free(err);
        err = NULL;
        char csv[600];
        snprintf(csv, sizeof csv, "%s/out_jobs.csv", dir);
        table got = read_csv(csv, "job_id");
        assert_int_equal(got.n, want.n);
        for (size_t i = 0; i < got.n; i++) {
            assert_true(strncmp(got.v[i].state, "COMPLETED_", 10) == 0);
            for (size_t j = i + 1; j < got.n && j < i + 50; j++)
                assert_string_not_equal(got.v[i].id, got.v[j].id);
        }
        no_core_twice(&got, platform_of(KTH));
        if (same)
            same_starts(want, got, "recovery");
        free(got.v);
    }
    free(want.v);
}

static void recovery_fcfs(void **s) { recovery("fcfs", true); }
static void recovery_easy(void **s) { recovery("easy", true); }
static void recovery_conservative(void **s) { recovery("conservative", false); }

static void cancels_and_priorities(void **s)
{
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    static const char *const modes[] = {"unlimited", "single"};
    for (size_t p = 0; p < 3; p++) {
        for (size_t m = 0; m < 2; m++) {
            const char *dir = fbf_test_tmp_path("rand-%s-%s", policies[p], modes[m]);
            char extra[64];
            snprintf(extra, sizeof extra, "--flux-mode %s", modes[m]);
            const char *sim[] = {"--cancel", "0.1", "--reprioritize", "0.1", "--seed", "11", NULL};
            char *err = NULL;
            int rc = flux_run(KTH, policies[p], dir, extra, sim, &err);
            if (rc != 0)
                fail_msg("%s %s: exit %d: %s", policies[p], modes[m], rc, err);
            free(err);
            assert_true(summary(dir, "canceled") > 0);
            assert_true(summary(dir, "done") + summary(dir, "canceled") ==
                        summary(dir, "jobs"));
            assert_true(summary(dir, "annotate_redundant") == 0);
            /* A job raised above it may push a job past its t_estimate. */
        }
    }
}

int main(void)
{
    fbf_test_filter_from_env();
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kth_fcfs),
        cmocka_unit_test(kth_easy),
        cmocka_unit_test(kth_conservative),
        cmocka_unit_test(kth_fcfs_single),
        cmocka_unit_test(ctc_fcfs),
        cmocka_unit_test(ctc_easy),
        cmocka_unit_test(ctc_conservative),
        cmocka_unit_test(recovery_fcfs),
        cmocka_unit_test(recovery_easy),
        cmocka_unit_test(recovery_conservative),
        cmocka_unit_test(cancels_and_priorities),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
