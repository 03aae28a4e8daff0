/*
 * test_replay_traces: full replays of the real traces (the bundled KTH-SP2
 * one, and CTC-SP2 where ../shared/workloads holds it) under each policy,
 * in process: every job must complete, none rejected or killed, and the
 * skipped jobs counted as the workload says.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 120000

static void replay_trace(const char *path, double jobs, double skipped)
{
#ifdef FBF_TEST_UNDER_TSAN
    /* One thread in process: nothing for TSan to see, minutes to spend. */
    skip();
#endif
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int i = 0; i < 3; i++) {
        const char *out = fbf_test_tmp_path("trace-%s", policies[i]);
        char *err = NULL, *so = NULL;
        int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--policy", policies[i],
                                                           "--out", out, path, NULL},
                                     TIMEOUT_MS * 2, &so, &err);
        if (rc != 0)
            fail_msg("%s under %s: exit %d: %s", path, policies[i], rc, err);
        print_message("%s, %s:\n%s", path, policies[i], so);
        free(err);
        free(so);
        assert_true(fbf_test_replay_summary(out, "jobs.in_workload") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.submitted") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.completed") == jobs);
        assert_true(fbf_test_replay_summary(out, "jobs.rejected") == 0);
        assert_true(fbf_test_replay_summary(out, "jobs.killed") == 0);
        assert_true(fbf_test_replay_summary(out, "jobs.skipped") == skipped);
    }
}

static void test_kth_trace_all_policies(void **state)
{
    (void)state;
    replay_trace(FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", 28475, 1);
}

static void test_ctc_trace_all_policies(void **state)
{
    (void)state;
    const char *ctc = FBF_SOURCE_DIR "/../shared/workloads/CTC-SP2-1996-3.1-cln.swf.gz";
    if (access(ctc, R_OK) != 0)
        skip();
    replay_trace(ctc, 77222, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth_trace_all_policies),
        cmocka_unit_test(test_ctc_trace_all_policies),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
