/*
 * test_batsim421_runs: the five features a real Batsim 4.2.1 broke, run
 * through fastbf-replay (which judges every reply as Batsim 4.2.1 does,
 * test_replay_batsim421) the way they were run against Batsim: the first
 * 400 jobs of the bundled KTH-SP2 trace, the real fastbf over ZeroMQ, and
 * every job must end.
 *
 *  - --kill-after 5: every job killed 5 s after it starts (Batsim reports
 *    the kill progress under profile_name);
 *  - --max-wait 600: jobs waiting longer are rejected, with the reason in
 *    their metadata (Batsim refuses a CHANGE_JOB_STATE that ends a job);
 *  - --register-workload, with and without profile reuse and
 *    acknowledgements (Batsim drops a profile once its first job is done);
 *  - --register-pause 300 (Batsim checks a REGISTER_JOB against the
 *    registration state before the reply that carries it);
 *  - --energy-saving 60 --switch-delays 6.1:151.52 on 128 machines of
 *    Batsim's energy platform (sleep pstate 13; a CALL_ME_LATER at the
 *    rounded now is in Batsim's past).
 *
 * Each of these runs stopped on the fastbf before them, with the reason
 * Batsim gives (the closing notes of the issue give the commands).
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

#include "support/replay_run.h"
#include "support/testkit.h"

#define TIMEOUT_MS 180000
#define JOBS 400
#define FINAL_STATE 7 /* out_jobs.csv columns */
#define METADATA 16

/* The first JOBS jobs of the bundled trace, for fastbf to register. */
static const char *plan_path(void)
{
    static char path[4096];
    if (!path[0]) {
        char *all = NULL;
        size_t len = 0;
        FILE *in = popen("zcat " FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", "r");
        assert_non_null(in);
        FILE *text = open_memstream(&all, &len);
        char line[512];
        int n = 0;
        while (fgets(line, sizeof line, in) && n < JOBS) {
            n += line[0] != ';';
            fputs(line, text);
        }
        pclose(in);
        fclose(text);
        snprintf(path, sizeof path, "%s", fbf_test_tmp_write("kth400.swf", all));
        free(all);
    }
    return path;
}

/* Runs fastbf-replay with args, then --scheduler "fastbf OPTS", into a
 * fresh directory, which it returns; the run must succeed. */
static const char *run(const char *name, const char *fastbf_opts, const char *const *args)
{
    static char out[4096];
    snprintf(out, sizeof out, "%s", fbf_test_tmp_path("b421-%s", name));
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "%s %s", fbf_test_replay_fastbf_path(), fastbf_opts);
    const char *argv[32];
    int n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    const char *tail[] = {"--scheduler", cmd, "--out", out, "--quiet", "--timeout", "30", NULL};
    for (int k = 0; tail[k]; k++)
        argv[n++] = tail[k];
    argv[n] = NULL;
    char *so = NULL, *err = NULL;
    int rc = fbf_test_replay_run(argv, TIMEOUT_MS, &so, &err);
    if (rc != 0)
        fail_msg("%s: fastbf %s: exit %d: %s", name, fastbf_opts, rc, err ? err : "");
    free(so);
    free(err);
    return out;
}

static void expect(const char *out, const char *key, double want)
{
    double got = fbf_test_replay_summary(out, key);
    if (got != want)
        fail_msg("%s: %s is %g, want %g", out, key, got, want);
}

#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"

static void test_kill_after(void **state)
{
    (void)state;
    const char *out = run("kill", "--policy easy --kill-after 5",
                          (const char *const[]){"--max-jobs", "400", KTH, NULL});
    expect(out, "jobs.done", JOBS);
    double killed = fbf_test_replay_summary(out, "jobs.killed");
    if (!(killed > 100))
        fail_msg("only %g jobs killed: the kills did not happen", killed);
}

static void test_max_wait(void **state)
{
    (void)state;
    const char *out = run("maxwait", "--policy easy --max-wait 600",
                          (const char *const[]){"--max-jobs", "400", KTH, NULL});
    double rejected = fbf_test_replay_summary(out, "jobs.rejected");
    if (!(rejected > 0))
        fail_msg("no job was given up");
    expect(out, "jobs.done", JOBS - rejected);
    /* The first one given up: Batsim's REJECTED row, the reason kept. */
    char *st = fbf_test_replay_csv_text(out, "150", FINAL_STATE);
    char *meta = fbf_test_replay_csv_text(out, "150", METADATA);
    assert_non_null(st);
    assert_string_equal(st, "REJECTED");
    assert_non_null(meta);
    assert_string_equal(meta, "gave up after waiting 600 s (fastbf --max-wait)");
    free(st);
    free(meta);
}

static void test_register_workload(void **state)
{
    (void)state;
    const char *empty = fbf_test_tmp_write("empty100.json",
                                           "{\"nb_res\": 100, \"jobs\": [], \"profiles\": {}}");
    char opts[8192];
    snprintf(opts, sizeof opts, "--policy easy --register-workload %s", plan_path());
    const char *const modes[][3] = {{"--dynamic-jobs", NULL},
                                    {"--ack-dynamic-jobs", NULL},
                                    {"--dynamic-jobs", "--profile-reuse", NULL},
                                    {"--ack-dynamic-jobs", "--profile-reuse", NULL}};
    for (int m = 0; m < 4; m++) {
        const char *args[4] = {modes[m][0], modes[m][1] ? modes[m][1] : empty,
                               modes[m][1] ? empty : NULL, NULL};
        char name[32];
        snprintf(name, sizeof name, "reg%d", m);
        const char *out = run(name, opts, args);
        expect(out, "jobs.registered", JOBS);
        expect(out, "jobs.done", JOBS);
    }
}

static void test_register_pause(void **state)
{
    (void)state;
    const char *empty = fbf_test_tmp_write("empty100p.json",
                                           "{\"nb_res\": 100, \"jobs\": [], \"profiles\": {}}");
    char opts[8192];
    snprintf(opts, sizeof opts, "--policy easy --register-workload %s --register-pause 300",
             plan_path());
    for (int ack = 0; ack < 2; ack++) {
        const char *out = run(ack ? "pause-ack" : "pause", opts,
                              (const char *const[]){ack ? "--ack-dynamic-jobs" : "--dynamic-jobs",
                                                    empty, NULL});
        expect(out, "jobs.registered", JOBS);
        expect(out, "jobs.done", JOBS);
        double reopened = fbf_test_replay_summary(out, "jobs.registration_reopenings");
        if (!(reopened > 10))
            fail_msg("registration re-opened %g times: the pauses did not happen", reopened);
    }
}

/* 128 machines that sleep in pstate 13, as SIMULATION_BEGINS says in
 * their sleep_pstates: fastbf must take its sleep pstate from there (a
 * request for its default, 1, is refused) and finish every job. */
static void test_energy_saving(void **state)
{
    (void)state;
    const char *out = run("energy", "--policy easy --energy-saving 60 --switch-delays 6.1:151.52",
                          (const char *const[]){"--max-jobs", "400", "--nb-res", "128",
                                                "--energy", "--sleep-pstate", "13",
                                                "--switch-delays", "6.1:151.52", KTH, NULL});
    expect(out, "jobs.done", JOBS);
    double asleep = fbf_test_replay_summary(out, "energy.asleep_s");
    if (!(asleep > 0))
        fail_msg("no machine ever slept (%g machine-seconds)", asleep);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_after),
        cmocka_unit_test(test_max_wait),
        cmocka_unit_test(test_register_workload),
        cmocka_unit_test(test_register_pause),
        cmocka_unit_test(test_energy_saving),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
