/*
 * test_replay_protocol: the Batsim v4 features beyond submissions and
 * completions, end to end: fastbf-replay plays Batsim and the real fastbf
 * process decides, over ZeroMQ, and the outcome is read back from the
 * replayer's out_jobs.csv and summary.json.
 *
 *  - kills: fastbf --kill-after sends KILL_JOB, the replayer kills the job
 *    and reports JOB_KILLED with its progress, fastbf frees the resources;
 *  - metadata: fastbf --tag-starts sends SET_JOB_METADATA for every start,
 *    which lands in the metadata column;
 *  - CHANGE_JOB_STATE, sent by the scripted scheduler of support/: Batsim
 *    4.2.1's aborts for a waiting job told COMPLETED_KILLED and for a
 *    running one told to end.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"

#define TIMEOUT_MS 120000
/* out_jobs.csv columns */
#define START 8
#define EXEC_TIME 9
#define FINISH 10
#define FINAL_STATE 7
#define METADATA 16

/* 8 resources; runtimes around the kill delay of 100 s. */
static const char kill_swf[] =
    "; MaxProcs: 8\n"
    "1 0 -1 50 4 -1 -1 4 200 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"   /* ends on its own at 50 */
    "2 0 -1 300 4 -1 -1 4 400 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"  /* killed at 100 */
    "3 10 -1 150 8 -1 -1 8 200 -1 -1 -1 -1 -1 -1 -1 -1 -1\n" /* waits for 1 and 2 */
    "4 20 -1 100 2 -1 -1 2 100 -1 -1 -1 -1 -1 -1 -1 -1 -1\n" /* behind 3, or backfilled */
    "5 20 -1 20 2 -1 -1 2 30 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

static void run_fastbf(const char *fastbf_opts, const char *wl, const char *out)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "%s %s", fbf_test_replay_fastbf_path(), fastbf_opts);
    char *err = NULL, *so = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--scheduler", cmd, "--out", out,
                                                       "--timeout", "20", wl, NULL},
                                 TIMEOUT_MS, &so, &err);
    if (rc != 0)
        fail_msg("%s: exit %d: %s", cmd, rc, err);
    free(err);
    free(so);
}

static void expect_text(const char *dir, const char *job, int col, const char *want)
{
    char *got = fbf_test_replay_csv_text(dir, job, col);
    if (!got || strcmp(got, want) != 0)
        fail_msg("job %s column %d: \"%s\", expected \"%s\"", job, col, got ? got : "(none)",
                 want);
    free(got);
}

static void expect_num(const char *dir, const char *job, int col, double want)
{
    double got = fbf_test_replay_csv(dir, job, col);
    if (got != want)
        fail_msg("job %s column %d: %g, expected %g", job, col, got, want);
}

/* Every job runs at most 100 s: jobs 2 and 3 are killed at start + 100,
 * the others end on their own. The kill of 2 at 100 frees its resources
 * at once: under FCFS job 3 starts then; the backfilling policies started
 * 4 and 5 beside 2 at 50 (their walltimes end before 2's estimate of
 * 400), so 3 waits for 4 until 150, and the conservative reservation of 3
 * moves from 400 to 150 with the kill. */
static void test_kill_after_over_the_socket(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("kill.swf", kill_swf);
    const char *const policies[] = {"fcfs", "easy", "conservative"};
    const double start3[] = {100, 150, 150};
    for (int p = 0; p < 3; p++) {
        char opts[64];
        snprintf(opts, sizeof opts, "--policy %s --kill-after 100", policies[p]);
        const char *out = fbf_test_tmp_path("kill-%s", policies[p]);
        run_fastbf(opts, wl, out);
        expect_text(out, "1", FINAL_STATE, "COMPLETED_SUCCESSFULLY");
        expect_num(out, "1", FINISH, 50);
        expect_text(out, "2", FINAL_STATE, "COMPLETED_KILLED");
        expect_num(out, "2", FINISH, 100);
        expect_num(out, "2", EXEC_TIME, 100);
        expect_num(out, "3", START, start3[p]);
        expect_text(out, "3", FINAL_STATE, "COMPLETED_KILLED");
        expect_num(out, "3", FINISH, start3[p] + 100);
        expect_text(out, "4", FINAL_STATE, "COMPLETED_SUCCESSFULLY");
        expect_text(out, "5", FINAL_STATE, "COMPLETED_SUCCESSFULLY");
        assert_true(fbf_test_replay_summary(out, "jobs.killed") == 2);
    }
}

/* EASY starts 1 and 2 in order, then backfills 5 ahead of 3 at 50 (job
 * 3's shadow is 400, job 2's estimated end, and 50 + 30 <= 400);
 * conservative starts 3 when its reservation comes due, at 300 when job
 * 2 ends early. */
static void test_tag_starts_over_the_socket(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("tag.swf", kill_swf);
    const char *out = fbf_test_tmp_path("tag-easy");
    run_fastbf("--policy easy --tag-starts", wl, out);
    expect_text(out, "1", METADATA, "reason=head");
    expect_text(out, "2", METADATA, "reason=head");
    expect_text(out, "3", METADATA, "reason=head");
    expect_num(out, "5", START, 50);
    expect_text(out, "5", METADATA, "reason=backfilled");
    out = fbf_test_tmp_path("tag-cons");
    run_fastbf("--policy conservative --tag-starts", wl, out);
    expect_text(out, "3", METADATA, "reason=reservation rsv=300");
}

/* The scripted FCFS asks to end whatever it cannot start at once with
 * CHANGE_JOB_STATE COMPLETED_KILLED: jobs 2 and 3 wait behind job 1, and
 * Batsim 4.2.1 aborts on the first (a waiting job can only go to RUNNING
 * or REJECTED). */
static void test_change_job_state_of_waiting_refused(void **state)
{
    (void)state;
    const char *wl =
        fbf_test_tmp_write("cancel.swf", "; MaxProcs: 4\n"
                                         "1 0 -1 10 4 -1 -1 4 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                         "2 0 -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                         "3 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    char *err = NULL;
    int rc = fbf_test_replay_against(FBF_TRF_CANCEL_WAITING,
                                     (const char *const[]){"--quiet", wl, NULL}, TIMEOUT_MS,
                                     NULL, &err);
    assert_int_equal(rc, 2);
    if (!err || !strstr(err, "reply event 1 (CHANGE_JOB_STATE, job w0!2): Invalid requested "
                             "job state modification to 'COMPLETED_KILLED': can only be "
                             "running or rejected."))
        fail_msg("unexpected error: %s", err ? err : "(none)");
    free(err);
}

/* A running job told COMPLETED_KILLED: accepted by Batsim 4.2.1's server,
 * which then aborts writing its row before it stores the state. */
static void test_change_job_state_of_running_refused(void **state)
{
    (void)state;
    const char *wl =
        fbf_test_tmp_write("change-run.swf", "; MaxProcs: 4\n"
                                             "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    char *err = NULL;
    int rc = fbf_test_replay_against(FBF_TRF_CHANGE_RUNNING,
                                     (const char *const[]){"--quiet", wl, NULL}, TIMEOUT_MS,
                                     NULL, &err);
    assert_int_equal(rc, 2);
    if (!err || !strstr(err, "(CHANGE_JOB_STATE, job w0!1): Job 1 did not complete"))
        fail_msg("unexpected error: %s", err ? err : "(none)");
    free(err);
}

/* What the replayer does not simulate yet is refused by name, never
 * ignored: a scheduler relying on it would otherwise be judged wrongly. */
static void test_unsimulated_events_refused(void **state)
{
    (void)state;
    const char *wl =
        fbf_test_tmp_write("unsim.swf", "; MaxProcs: 4\n"
                                        "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    /* REGISTER_JOB is simulated under --dynamic-jobs: test_replay_dynamic. */
    const fbf_test_rfault faults[] = {FBF_TRF_SET_STATE};
    const char *const names[] = {"SET_RESOURCE_STATE"};
    for (int i = 0; i < 1; i++) {
        char *err = NULL;
        int rc = fbf_test_replay_against(faults[i], (const char *const[]){"--quiet", wl, NULL},
                                         TIMEOUT_MS, NULL, &err);
        assert_int_equal(rc, 2);
        char want[128];
        snprintf(want, sizeof want, "(%s): event type not supported by fastbf-replay", names[i]);
        if (!err || !strstr(err, want))
            fail_msg("expected '%s' in: %s", want, err ? err : "(none)");
        free(err);
    }
}

int main(void)
{
    fbf_test_filter_from_env();
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_after_over_the_socket),
        cmocka_unit_test(test_tag_starts_over_the_socket),
        cmocka_unit_test(test_change_job_state_of_waiting_refused),
        cmocka_unit_test(test_change_job_state_of_running_refused),
        cmocka_unit_test(test_unsimulated_events_refused),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
