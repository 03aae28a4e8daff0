/*
 * test_bv2_traces: fastbf as a Batsim v2 text-protocol scheduler on the
 * bundled real traces. fastbf-replay --protocol batsim2 plays Batsim (a
 * Unix socket, job data in a real redis-server started for this suite)
 * and the fastbf process decides; under fcfs, easy and conservative every
 * job completes and out_jobs.csv is the very file of the v4 replay of the
 * same trace in process, so every start time and allocation is the same
 * whichever protocol carried the decisions. KTH-SP2 runs in every build;
 * CTC-SP2 (77,222 jobs) in the plain build only. With machine states
 * (--energy, fastbf --energy-saving), the P and p of v2 give the schedule
 * and the switches of v4's SET_RESOURCE_STATE, and E is answered by e.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 600000

static int setup(void **state)
{
    if (fbf_test_redis_group_setup(state) != 0)
        return -1;
    return fbf_test_tmpdir_setup(state);
}

static int teardown(void **state)
{
    fbf_test_tmpdir_teardown(state);
    return fbf_test_redis_group_teardown(state);
}

static void replay_ok(const char *const *args, const char *what)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("%s: fastbf-replay exit %d: %s", what, rc, err);
    free(out);
    free(err);
}

static void same_as_v4(const char *trace, const char *policy)
{
    char wl[512], cmd[700], what[128];
    snprintf(wl, sizeof wl, "%s/data/%s.swf.gz", FBF_SOURCE_DIR, trace);
    const fbf_test_redis *srv = fbf_test_redis_shared();
    snprintf(cmd, sizeof cmd, "%s --protocol batsim2 --policy %s --redis-port %d --socket {socket}",
             fbf_test_replay_fastbf_path(), policy, srv->port);
    const char *v2 = fbf_test_tmp_path("v2-%s-%s", trace, policy);
    const char *v4 = fbf_test_tmp_path("v4-%s-%s", trace, policy);
    snprintf(what, sizeof what, "%s under %s", trace, policy);
    replay_ok((const char *const[]){"--quiet", "--protocol", "batsim2", "--redis",
                                    fbf_test_redis_addr(srv), "--scheduler", cmd, "--out", v2,
                                    wl, NULL},
              what);
    replay_ok((const char *const[]){"--quiet", "--inproc", "--policy", policy, "--out", v4, wl,
                                    NULL},
              what);
    fbf_test_replay_same_jobs(v2, v4, what, 20000);
    /* Every job completed: the summary's counts agree. */
    double done = fbf_test_replay_summary(v2, "jobs.completed");
    double all = fbf_test_replay_summary(v4, "jobs.completed");
    assert_true(done == all && done > 20000);
}

static void test_energy_saving(void **state)
{
    const char *wl = FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz";
    const fbf_test_redis *srv = fbf_test_redis_shared();
    char v2cmd[700], v4cmd[600];
    snprintf(v2cmd, sizeof v2cmd,
             "%s --protocol batsim2 --policy easy --redis-port %d --socket {socket} "
             "--energy-saving 60 --switch-delays 6:150 --query-energy --verbose",
             fbf_test_replay_fastbf_path(), srv->port);
    snprintf(v4cmd, sizeof v4cmd, "%s --policy easy --energy-saving 60 --switch-delays 6:150",
             fbf_test_replay_fastbf_path());
    const char *v2 = fbf_test_tmp_path("v2-energy"), *v4 = fbf_test_tmp_path("v4-energy");
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--quiet", "--protocol", "batsim2",
                                                       "--redis", fbf_test_redis_addr(srv),
                                                       "--energy", "--switch-delays", "6:150",
                                                       "--max-jobs", "3000", "--scheduler",
                                                       v2cmd, "--out", v2, wl, NULL},
                                 TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("v2 with energy: exit %d: %s", rc, err);
    /* fastbf's log (its stderr, on the replayer's): E answered by e. */
    assert_non_null(strstr(err, "fastbf: consumed energy "));
    free(out);
    free(err);
    replay_ok((const char *const[]){"--quiet", "--energy", "--switch-delays", "6:150",
                                    "--max-jobs", "3000", "--scheduler", v4cmd, "--out", v4, wl,
                                    NULL},
              "v4 with energy");
    char *a = fbf_test_replay_read(fbf_test_tmp_path("v2-energy/out_jobs.csv"));
    char *b = fbf_test_replay_read(fbf_test_tmp_path("v4-energy/out_jobs.csv"));
    assert_non_null(a);
    assert_non_null(b);
    assert_string_equal(a, b);
    /* Machines were switched off and on: the energy saved shows. */
    double asleep = fbf_test_replay_summary(v2, "energy.asleep_s");
    if (!(asleep > 0))
        fail_msg("no machine slept through v2 (%g machine-seconds)", asleep);
    free(a);
    free(b);
}

static void test_kth(void **state)
{
    same_as_v4("KTH-SP2-1996-2.1-cln", "fcfs");
    same_as_v4("KTH-SP2-1996-2.1-cln", "easy");
    same_as_v4("KTH-SP2-1996-2.1-cln", "conservative");
}

static void test_ctc(void **state)
{
#ifdef FBF_TEST_UNDER_SAN
    skip();
#endif
    same_as_v4("CTC-SP2-1996-3.1-cln", "fcfs");
    same_as_v4("CTC-SP2-1996-3.1-cln", "easy");
    same_as_v4("CTC-SP2-1996-3.1-cln", "conservative");
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth),
        cmocka_unit_test(test_energy_saving),
        cmocka_unit_test(test_ctc),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
