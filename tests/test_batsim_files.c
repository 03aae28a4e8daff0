/*
 * test_batsim_files: fastbf-replay's out_jobs.csv and out_schedule.csv are
 * the files Batsim 4.2.1 writes for the same simulation, compared with the
 * hand-written fixtures of tests/fixtures/batsim-outputs/ (its README says
 * how each number comes from Batsim's src/export.cpp):
 *
 *  - without energy: a rejected, a killed, a walltime-reached and
 *    successful jobs, rows in the order Batsim ends them, its means over
 *    every row, its machine-state times;
 *  - with --energy and a scheduler that switches machines off and on:
 *    per-job energy, consumed_joules, switch counts and the time spent
 *    asleep and switching;
 *  - a job that runs 0 s is written with Batsim's 1e-5 s run time;
 *  - a run with no row (--max-exchanges before any job ends) writes
 *    Batsim's -nan means;
 *  - --verbose logs each rejection with its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#define TIMEOUT_MS 60000
#define FIX FBF_SOURCE_DIR "/tests/fixtures/batsim-outputs/"

static void expect_same_file(const char *got_path, const char *want_path)
{
    char *got = fbf_test_replay_read(got_path), *want = fbf_test_replay_read(want_path);
    if (!got || !want)
        fail_msg("cannot read %s", got ? want_path : got_path);
    if (strcmp(got, want) != 0)
        fail_msg("%s differs from %s:\n%s", got_path, want_path, got);
    free(got);
    free(want);
}

static void run_ok(const char *const *args)
{
    char *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, NULL, &err);
    if (rc != 0)
        fail_msg("fastbf-replay exit %d: %s", rc, err ? err : "");
    free(err);
}

static void test_plain_run(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("plain");
    run_ok((const char *const[]){"--inproc", "--policy", "fcfs", "--kill-after", "30", "--quiet", "--out", out,
                                 FIX "workload.json", NULL});
    expect_same_file(fbf_test_tmp_path("plain/out_jobs.csv"), FIX "plain/out_jobs.csv");
    fbf_test_replay_expect_schedule(fbf_test_tmp_path("plain/out_schedule.csv"),
                                    FIX "plain/out_schedule.csv", "plain");
}

static void test_energy_saving_run(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("energy");
    char sched[4200];
    snprintf(sched, sizeof sched, "%s --kill-after 30 --energy-saving 5 --switch-delays 2:3",
             fbf_test_replay_fastbf_path());
    run_ok((const char *const[]){"--scheduler", sched, "--energy", "--switch-delays", "2:3",
                                 "--quiet", "--out", out, FIX "workload.json", NULL});
    expect_same_file(fbf_test_tmp_path("energy/out_jobs.csv"),
                     FIX "energy-saving/out_jobs.csv");
    fbf_test_replay_expect_schedule(fbf_test_tmp_path("energy/out_schedule.csv"),
                                    FIX "energy-saving/out_schedule.csv", "energy saving");
}

static const char *schedule_line(const char *dir)
{
    static char buf[4096];
    char path[4200];
    snprintf(path, sizeof path, "%s/out_schedule.csv", dir);
    char *text = fbf_test_replay_read(path);
    assert_non_null(text);
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    snprintf(buf, sizeof buf, "%s", nl + 1);
    free(text);
    return buf;
}

/* Batsim puts 1e-5 s instead of a null run time: execution_time,
 * finish_time and stretch follow, and the means with them. */
static void test_null_run_time(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "zero.swf", "; MaxProcs: 2\n"
                    "1 4 -1 0 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("zero");
    run_ok((const char *const[]){"--inproc", "--quiet", "--out", out, wl, NULL});
    expect_same_file(fbf_test_tmp_path("zero/out_jobs.csv"),
                     fbf_test_tmp_write(
                         "zero-want.csv",
                         "job_id,workload_name,profile,submission_time,"
                         "requested_number_of_resources,requested_time,success,final_state,"
                         "starting_time,execution_time,finish_time,waiting_time,"
                         "turnaround_time,stretch,allocated_resources,consumed_energy,"
                         "metadata\n"
                         "1,w0,delay_0,4.000000,1,10.000000,1,COMPLETED_SUCCESSFULLY,4.000000,"
                         "0.000010,4.000010,0.000000,0.000010,1.000000,0,-1.000000,\"\"\n"));
    /* makespan 4.00001, every mean over the one row; machine time is the
     * clock's: 0 s computing, 4 s idle on machine 0 before the job. */
    const char *v = schedule_line(out);
    assert_non_null(strstr(v, ",0.000000,4.000010,1.000000,0.000010,0.000000,1.000000,0.000010,"
                              "0.000000,2,0,1,1,0,0,1,0,"));
    assert_non_null(strstr(v, ",1.000000,0.000000,4.000000,0.000000,0.000000,0.000000,"
                              "0.000000\n"));
}

/* No row at all: Batsim's means are 0.0 / 0. */
static void test_no_row(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "late.swf", "; MaxProcs: 2\n"
                    "1 0 -1 100 1 -1 -1 1 200 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("late");
    run_ok((const char *const[]){"--inproc", "--quiet", "--max-exchanges", "1", "--out", out, wl,
                                 NULL});
    const char *v = schedule_line(out);
    assert_non_null(strstr(v, ",0.000000,0.000000,0.000000,0.000000,0.000000,-nan,-nan,-nan,2,0,"
                              "0,0,0,0,0,0,"));
    assert_non_null(strstr(v, ",-nan,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"));
}

static void test_verbose_rejections(void **state)
{
    (void)state;
    char *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--verbose", "--quiet",
                                                       FIX "workload.json", NULL},
                                 TIMEOUT_MS, NULL, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "fastbf-replay: t=0 s: job w0!2 rejected: it asks for 8 "
                                "resources, the platform has 4\n"));
    free(err);
    /* Another scheduler: the replayer still says why when it can tell,
     * and says so when it cannot. */
    char sched[4200];
    snprintf(sched, sizeof sched, "%s --energy-saving 5", fbf_test_replay_fastbf_path());
    rc = fbf_test_replay_run((const char *const[]){"--scheduler", sched, "--energy", "--verbose",
                                                   "--quiet", FIX "workload.json", NULL},
                             TIMEOUT_MS, NULL, &err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(err, "job w0!2 rejected: it asks for 8 resources, the platform "
                                "has 4\n"));
    assert_non_null(strstr(err, "fastbf-replay: t=7 s: job w0!5 rejected: no reason known to the "
                                "replayer (it asks for 3 of 4 resources, no walltime)\n"));
    free(err);
    /* Without --verbose, nothing. */
    rc = fbf_test_replay_run((const char *const[]){"--inproc", "--quiet", FIX "workload.json",
                                                   NULL},
                             TIMEOUT_MS, NULL, &err);
    assert_int_equal(rc, 0);
    assert_null(strstr(err, "rejected"));
    free(err);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_run),
        cmocka_unit_test(test_energy_saving_run),
        cmocka_unit_test(test_null_run_time),
        cmocka_unit_test(test_no_row),
        cmocka_unit_test(test_verbose_rejections),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
