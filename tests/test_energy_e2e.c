/*
 * test_energy_e2e: resource states and energy end to end, the real fastbf
 * process driven over ZeroMQ by fastbf-replay --energy.
 *
 * A hand-computed scenario checks the states, the switch delays, the
 * energy the replayer integrates and the ANSWER fastbf logs; a trace
 * replay (the bundled KTH trace, truncated) under EASY and conservative
 * checks that energy saving completes every job and uses less energy than
 * the same replay without it, at a bounded waiting-time cost that it
 * reports (the figures of the README).
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

#include "support/replay_sched.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 240000
#define CONSUMED_ENERGY 15 /* out_jobs.csv column */
#define WAITING_TIME 11

static int replay(const char *fastbf_opts, const char *const *extra, const char *wl,
                  const char *out, char **so, char **se)
{
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "%s %s", fbf_test_replay_fastbf_path(), fastbf_opts);
    const char *args[32];
    int n = 0;
    args[n++] = "--scheduler";
    args[n++] = cmd;
    args[n++] = "--out";
    args[n++] = out;
    args[n++] = "--timeout";
    args[n++] = "60";
    for (; extra && *extra; extra++)
        args[n++] = *extra;
    args[n++] = wl;
    args[n] = NULL;
    return fbf_test_replay_run(args, TIMEOUT_MS, so, se);
}

static void expect_close(const char *what, double got, double want)
{
    if (!(fabs(got - want) <= 1e-6 * fmax(1, fabs(want))))
        fail_msg("%s: %.17g, expected %.17g", what, got, want);
}

/* 4 machines, power 100 W idle, 200 W busy, 10 W asleep, 50 W switching;
 * switch-off 10 s, switch-on 20 s; fastbf switches off after 30 s idle.
 *   0-100   job 1 on 0-1; 2-3 idle to 30, switching off to 40, asleep
 *   100     0-1 idle to 130, switching off to 140, asleep
 *   200     job 2 (4 machines) arrives: all woken on demand, ON at 220
 *   220-270 job 2 on 0-3; idle to 300, switching off to 310: the end.
 * Machine-seconds: busy 200 + 200, switching 20 + 20 + 80 + 40, asleep
 * 320 + 120, idle 4 x 310 - the rest = 240, so the energy is
 * 100 x 240 + 200 x 400 + 10 x 440 + 50 x 160 = 116400 J. fastbf queries
 * it after the last submission (at 200: idle 120, busy 200, asleep 440,
 * switching 40, 58400 J) and when nothing is left to run (at 270). */
static void test_hand_computed_scenario(void **state)
{
    (void)state;
    const char *wl =
        fbf_test_tmp_write("energy.swf", "; MaxProcs: 4\n"
                                         "1 0 -1 100 2 -1 -1 2 100 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                         "2 200 -1 50 4 -1 -1 4 50 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("energy-hand");
    const char *extra[] = {"--energy", "--power", "100:200:10:50", "--switch-delays", "10:20",
                           NULL};
    char *so = NULL, *se = NULL;
    int rc = replay("--policy easy --energy-saving 30 --switch-delays 10:20 --verbose", extra, wl,
                    out, &so, &se);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, se);
    expect_close("energy.joules", fbf_test_replay_summary(out, "energy.joules"), 116400);
    expect_close("energy.until", fbf_test_replay_summary(out, "energy.until"), 310);
    expect_close("energy.asleep_s", fbf_test_replay_summary(out, "energy.asleep_s"), 440);
    expect_close("energy.switching_s", fbf_test_replay_summary(out, "energy.switching_s"), 160);
    expect_close("mean_wait", fbf_test_replay_summary(out, "mean_wait"), 10);
    expect_close("job 2 wait", fbf_test_replay_csv(out, "2", WAITING_TIME), 20);
    expect_close("job 1 energy", fbf_test_replay_csv(out, "1", CONSUMED_ENERGY), 40000);
    expect_close("job 2 energy", fbf_test_replay_csv(out, "2", CONSUMED_ENERGY), 40000);
    if (!strstr(se, "fastbf: consumed energy 58400.000000 J") ||
        !strstr(se, "fastbf: consumed energy 102400.000000 J"))
        fail_msg("fastbf did not log both answers:\n%s", se);
    if (!strstr(so, "energy       116400 J up to 310 s"))
        fail_msg("summary lacks the energy line:\n%s", so);
    free(so);
    free(se);
}

/* Without --energy the replayer refuses the query, as Batsim does outside
 * its energy mode; a SET_RESOURCE_STATE on a machine that runs a job is a
 * violation (exit 2) with the machine and job named. */
static void test_refusals(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "q.swf", "; MaxProcs: 4\n1 0 -1 100 2 -1 -1 2 100 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("energy-refused");
    char *se = NULL;
    int rc = replay("--policy easy --query-energy", NULL, wl, out, NULL, &se);
    assert_int_equal(rc, 2);
    if (!strstr(se, "(QUERY): event type not supported by fastbf-replay without --energy"))
        fail_msg("unexpected error: %s", se);
    free(se);
}

/* With --energy, a scheduler that puts machines to sleep and then runs a
 * job on them is refused: the job's machines must be ON. */
static void test_execute_on_sleeping_machine_refused(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "s.swf", "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    char *err = NULL;
    int rc = fbf_test_replay_against(
        FBF_TRF_SET_STATE,
        (const char *const[]){"--quiet", "--energy", "--switch-delays", "5:5", wl, NULL},
        TIMEOUT_MS, NULL, &err);
    assert_int_equal(rc, 2);
    if (!err || !strstr(err, "(EXECUTE_JOB, job w0!1): data.alloc: machine 0 is SWITCHING_OFF, "
                             "not ON"))
        fail_msg("unexpected error: %s", err ? err : "(none)");
    free(err);
}

/* SET_RESOURCE_STATE of a machine that runs a job is a violation. */
static void test_set_state_of_busy_machine_refused(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "b.swf", "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    char *err = NULL;
    int rc = fbf_test_replay_against(FBF_TRF_SET_BUSY,
                                     (const char *const[]){"--quiet", "--energy", wl, NULL},
                                     TIMEOUT_MS, NULL, &err);
    assert_int_equal(rc, 2);
    if (!err || !strstr(err, "(SET_RESOURCE_STATE): data.resources: machine 0 is running job "
                             "w0!1"))
        fail_msg("unexpected error: %s", err ? err : "(none)");
    free(err);
}

/* A scheduler injects the SET_RESOURCE_STATE events into its first reply
 * with a submission (machines 2-3 are idle then): the replayer refuses
 * the run (exit 2) naming the event, field and machine or pstate. */
static void expect_set_refused(const char *events, const char *want)
{
    const char *wl = fbf_test_tmp_write(
        "r.swf", "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_inject(events, ep, sizeof ep);
    assert_non_null(s);
    char *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--endpoint", ep, "--quiet", "--energy",
                                                       wl, NULL},
                                 TIMEOUT_MS, NULL, &err);
    free(fbf_test_rsched_stop(s));
    if (rc != 2 || !err || !strstr(err, want))
        fail_msg("%s: exit %d, stderr: %s (want '%s')", events, rc, err ? err : "(none)", want);
    free(err);
}

#define SET(res, st) "{'type':'SET_RESOURCE_STATE','data':{'resources':'" res "','state':'" st "'}}"

static void test_set_state_refusals(void **state)
{
    (void)state;
    expect_set_refused("[" SET("2-7", "1") "]",
                       "(SET_RESOURCE_STATE): data.resources: machine 7 is out of range (the "
                       "platform has 4: 0-3)");
    expect_set_refused("[" SET("2", "5") "]", "(SET_RESOURCE_STATE): data.state '5' is not a "
                                              "known pstate (0: compute, 1: sleep)");
    expect_set_refused("[" SET("2-3", "1") "," SET("3", "0") "]",
                       "(SET_RESOURCE_STATE): data.resources: machine 3 is already switching "
                       "(SWITCHING_OFF)");
    expect_set_refused("[" SET("2", "0") "]",
                       "(SET_RESOURCE_STATE): data.resources: machine 2 is already ON");
}

typedef struct figures {
    double joules, wait, completed;
} figures;

/* timeout < 0: without energy saving. */
static figures trace_run(const char *policy, int timeout, int max_jobs)
{
    char opts[256], jobs[32];
    if (timeout < 0)
        snprintf(opts, sizeof opts, "--policy %s", policy);
    else
        snprintf(opts, sizeof opts, "--policy %s --energy-saving %d --switch-delays 30:60",
                 policy, timeout);
    snprintf(jobs, sizeof jobs, "%d", max_jobs);
    const char *out = fbf_test_tmp_path("energy-%s-%d", policy, timeout);
    const char *extra[] = {"--energy", "--switch-delays", "30:60", "--max-jobs", jobs, NULL};
    char *se = NULL;
    int rc = replay(opts, extra, FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", out, NULL,
                    &se);
    if (rc != 0)
        fail_msg("%s: exit %d: %s", opts, rc, se);
    free(se);
    figures f = {fbf_test_replay_summary(out, "energy.joules"),
                 fbf_test_replay_summary(out, "mean_wait"),
                 fbf_test_replay_summary(out, "jobs.completed")};
    return f;
}

/* Energy saving on a real trace: every job completes, the energy drops,
 * and the mean wait grows by less than a fifth (waking only what waiting
 * jobs can use keeps it near the original: x1.03 EASY, x0.96
 * conservative at timeout 600, see the README); the figures are printed. */
static void test_trace_saves_energy(void **state)
{
    (void)state;
    const int n = 1500;
    static const char *const pol[] = {"easy", "conservative"};
    static const int timeouts[] = {600, 1800};
    for (int p = 0; p < 2; p++) {
        figures off = trace_run(pol[p], -1, n);
        assert_true(off.completed == n);
        for (int t = 0; t < 2; t++) {
            figures on = trace_run(pol[p], timeouts[t], n);
            assert_true(on.completed == n);
            if (!(on.joules < off.joules))
                fail_msg("%s: %g J with saving, %g J without", pol[p], on.joules, off.joules);
            if (!(on.wait < 1.2 * off.wait))
                fail_msg("%s, timeout %d: mean wait %g s with saving, %g s without", pol[p],
                         timeouts[t], on.wait, off.wait);
            printf("%s, %d KTH jobs, timeout %d s: energy %.4g J -> %.4g J (x%.3f), mean wait "
                   "%.0f s -> %.0f s (x%.3f)\n",
                   pol[p], n, timeouts[t], off.joules, on.joules, on.joules / off.joules,
                   off.wait, on.wait, off.wait > 0 ? on.wait / off.wait : NAN);
        }
    }
}

int main(void)
{
    fbf_test_filter_from_env();
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_computed_scenario),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_execute_on_sleeping_machine_refused),
        cmocka_unit_test(test_set_state_of_busy_machine_refused),
        cmocka_unit_test(test_set_state_refusals),
        cmocka_unit_test(test_trace_saves_energy),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
