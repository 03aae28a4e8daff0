/*
 * test_replay_limits: fastbf-replay --max-exchanges K, run as the real
 * binary, mostly against the real fastbf over ZeroMQ.
 *
 * A truncated run sends SIMULATION_ENDS after K exchanges past
 * SIMULATION_BEGINS, the scheduler answers it and exits 0, the replayer
 * exits 0 and says TRUNCATED with the jobs done, waiting and running; every
 * figure, summary.json and out_jobs.csv cover the done jobs only. A K the
 * run never reaches, or reaches just as it ends, changes nothing. fastbf's
 * --verbose exchange lines carry a "+T s" time that never goes backwards,
 * and its last line tells the memory held with the queue as it was.
 */
#include <math.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 120000
#define START 8 /* out_jobs.csv columns */
#define FINISH 10

/* 8 resources, ten jobs of 4 at t = 0 running 10, 20, ..., 100 s, and one
 * more at t = 1000. Under any of fastbf's policies two run at a time, in
 * order: exchange 1 (t = 0) starts 1 and 2, exchange 2 (t = 10) ends 1 and
 * starts 3, exchange 3 (t = 20) ends 2 and starts 4. */
static const char queue_swf[] = "; MaxProcs: 8\n"
                                "1 0 -1 10 4 -1 -1 4 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 0 -1 20 4 -1 -1 4 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 0 -1 30 4 -1 -1 4 30 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "4 0 -1 40 4 -1 -1 4 40 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "5 0 -1 50 4 -1 -1 4 50 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "6 0 -1 60 4 -1 -1 4 60 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "7 0 -1 70 4 -1 -1 4 70 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "8 0 -1 80 4 -1 -1 4 80 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "9 0 -1 90 4 -1 -1 4 90 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "10 0 -1 100 4 -1 -1 4 100 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "11 1000 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

/* Exactly four exchanges after SIMULATION_BEGINS: t = 0, 10, 100, 105. */
static const char two_swf[] = "; MaxProcs: 4\n"
                              "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                              "2 100 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fail_msg("expected '%s' in:\n%s", needle, hay ? hay : "(null)");
}

static void assert_summary(const char *dir, const char *key, double want)
{
    double got = fbf_test_replay_summary(dir, key);
    if (got != want)
        fail_msg("summary.json %s = %g, expected %g", key, got, want);
}

/* summary.json's top-level "truncated": 1 true, 0 false, -1 absent or
 * not a boolean. */
static int summary_truncated(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    char *text = fbf_test_replay_read(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    free(text);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, "truncated");
    int b = cJSON_IsBool(v) ? cJSON_IsTrue(v) : -1;
    cJSON_Delete(root);
    return b;
}

static int csv_rows(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/out_jobs.csv", dir);
    char *text = fbf_test_replay_read(path);
    assert_non_null(text);
    int n = -1; /* the header */
    for (const char *p = text; *p; p++)
        n += *p == '\n';
    free(text);
    return n;
}

static bool have_fastbf(void)
{
    return access(fbf_test_replay_fastbf_path(), X_OK) == 0;
}

/* Runs the replayer on wl with --max-exchanges k against fastbf --policy
 * policy --verbose (its stderr into log); stdout into *so. */
static int run_fastbf(const char *wl, const char *k, const char *policy, const char *out,
                      const char *log, char **so)
{
    char cmd[8400], *err = NULL;
    snprintf(cmd, sizeof cmd, "exec %s --policy %s --verbose --endpoint {endpoint} 2>%s",
             fbf_test_replay_fastbf_path(), policy, log);
    int rc = fbf_test_replay_run((const char *const[]){"--scheduler", cmd, "--max-exchanges", k,
                                                       "--out", out, "--timeout", "20", wl, NULL},
                                 TIMEOUT_MS, so, &err);
    if (rc != 0)
        fail_msg("%s, --max-exchanges %s: exit %d: %s", policy, k, rc, err);
    free(err);
    return rc;
}

static void test_truncated_against_fastbf(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    const char *wl = fbf_test_tmp_write("queue.swf", queue_swf);
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int i = 0; i < 3; i++) {
        const char *out = fbf_test_tmp_path("trunc-%s", policies[i]);
        const char *log = fbf_test_tmp_path("trunc-%s.log", policies[i]);
        char *so = NULL;
        run_fastbf(wl, "3", policies[i], out, log, &so);
        assert_contains(so, "TRUNCATED    stopped after 3 exchanges: 2 jobs done, 6 waiting, "
                            "2 running, 1 not submitted yet; the figures below are over the 2 "
                            "done jobs only\n");
        assert_contains(so, "jobs         10 submitted, 2 completed (2 successfully");
        /* Over jobs 1 and 2 only: 0 to 20 s, both started at 0. */
        assert_contains(so, "makespan     20 s (first submission 0 s, last end 20 s)\n");
        assert_contains(so, "wait         mean 0.0 s, max 0 s\n");
        /* BEGINS, three exchanges, ENDS. */
        assert_contains(so, "exchanges    5, latency");
        free(so);
        assert_int_equal(summary_truncated(out), 1);
        assert_summary(out, "stopped_after_exchanges", 3);
        assert_summary(out, "exchanges", 5);
        assert_summary(out, "jobs.done", 2);
        assert_summary(out, "jobs.completed", 2);
        assert_summary(out, "jobs.waiting", 6);
        assert_summary(out, "jobs.running", 2);
        assert_summary(out, "jobs.not_submitted", 1);
        assert_summary(out, "makespan", 20);
        assert_summary(out, "utilization", (4.0 * 10 + 4.0 * 20) / (8 * 20));
        /* out_jobs.csv: the done jobs, nothing for the running or waiting. */
        assert_int_equal(csv_rows(out), 2);
        assert_true(fbf_test_replay_csv(out, "1", FINISH) == 10);
        assert_true(fbf_test_replay_csv(out, "2", FINISH) == 20);
        assert_true(isnan(fbf_test_replay_csv(out, "3", START)));
        assert_true(isnan(fbf_test_replay_csv(out, "5", START)));
        /* fastbf saw SIMULATION_ENDS at t = 20 with the queue as it was. */
        char *text = fbf_test_replay_read(log);
        assert_non_null(text);
        const char *last = text, *p;
        for (p = text; (p = strstr(p, "fastbf: +")) != NULL; p++)
            last = p;
        static const char want[] = " s now 20.000000: 0 decisions, 6 waiting, 2 running\n";
        assert_int_equal(strncmp(strstr(last, " s now "), want, sizeof want - 1), 0);
        /* Then the memory it still holds, with that queue (the benchmarks'
         * memory figure): resident sizes of a live process, the end's at
         * least the start's less what the allocator may have returned. */
        long end_kib = 0, start_kib = 0;
        const char *mem = strstr(last, "fastbf: memory at the end: ");
        assert_non_null(mem);
        assert_int_equal(sscanf(mem, "fastbf: memory at the end: %ld KiB resident with 6 jobs "
                                     "waiting and 2 running, %ld KiB at the start",
                                &end_kib, &start_kib),
                         2);
        assert_true(start_kib > 1000 && end_kib > 1000);
        /* Conservative reports its work: every job placed at t = 0, a pass
         * per completion, nothing moved (jobs run exactly their walltime). */
        const char *work = strstr(last, "fastbf: policy work: ");
        if (i == 2) {
            assert_non_null(work);
            assert_int_equal(strncmp(work, "fastbf: policy work: reservations_placed 10, "
                                           "compression_passes 2, reservations_revisited ", 66),
                             0);
            assert_contains(work, ", reservations_moved 0\n");
        } else {
            assert_null(work);
        }
        free(text);
    }
}

/* In process, the same counters reach summary.json. */
static void test_policy_work_inproc(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("queue-inproc.swf", queue_swf);
    const char *out = fbf_test_tmp_path("work-inproc");
    char *so = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--policy", "conservative",
                                                       "--max-exchanges", "3", "--out", out, wl,
                                                       NULL},
                                 TIMEOUT_MS, &so, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    assert_contains(so, "policy work  reservations_placed 10, compression_passes 2, ");
    free(so);
    free(err);
    assert_summary(out, "scheduler_work.reservations_placed", 10);
    assert_summary(out, "scheduler_work.compression_passes", 2);
    assert_summary(out, "scheduler_work.reservations_moved", 0);
}

static void test_limit_not_reached(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    const char *wl = fbf_test_tmp_write("two.swf", two_swf);
    /* 4 is where the run ends anyway: not truncated; 1000 is never reached. */
    static const char *const ks[] = {"4", "1000"};
    for (int i = 0; i < 2; i++) {
        const char *out = fbf_test_tmp_path("full-%d", i);
        char *so = NULL;
        run_fastbf(wl, ks[i], "easy", out, fbf_test_tmp_path("full-%d.log", i), &so);
        assert_null(strstr(so, "TRUNCATED"));
        free(so);
        assert_int_equal(summary_truncated(out), 0);
        assert_true(isnan(fbf_test_replay_summary(out, "stopped_after_exchanges")));
        assert_summary(out, "exchanges", 6);
        assert_summary(out, "jobs.completed", 2);
        assert_summary(out, "jobs.waiting", 0);
        assert_summary(out, "jobs.running", 0);
        assert_int_equal(csv_rows(out), 2);
    }
    /* One fewer: job 2 is still running when SIMULATION_ENDS comes. */
    const char *out = fbf_test_tmp_path("three");
    char *so = NULL;
    run_fastbf(wl, "3", "easy", out, fbf_test_tmp_path("three.log"), &so);
    assert_contains(so, "TRUNCATED    stopped after 3 exchanges: 1 jobs done, 0 waiting, "
                        "1 running; the figures");
    free(so);
    assert_summary(out, "jobs.running", 1);
    assert_int_equal(csv_rows(out), 1);
}

/* What the replayer sends: SIMULATION_ENDS right after the K-th reply, at
 * that reply's now. */
static void test_ends_message(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("queue-sched.swf", queue_swf);
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_start(FBF_TRF_NONE, ep, sizeof ep);
    assert_non_null(s);
    char *so = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--endpoint", ep, "--max-exchanges", "2",
                                                       "--timeout", "20", wl, NULL},
                                 TIMEOUT_MS, &so, &err);
    char *log = fbf_test_rsched_stop(s);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    assert_contains(so, "stopped after 2 exchanges: 1 jobs done, 7 waiting, 2 running");
    int lines = 0;
    for (const char *p = log; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 4); /* BEGINS, t = 0, t = 10, ENDS */
    assert_contains(log, "{\"now\":10.000000,\"events\":[{\"timestamp\":10.000000,"
                         "\"type\":\"SIMULATION_ENDS\",\"data\":{}}]}\n");
    free(log);
    free(so);
    free(err);
}

static void test_bad_values(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("bad.swf", two_swf);
    static const char *const bad[] = {"0", "-1", "abc", "1.5", "", "3x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *so = NULL, *err = NULL, want[64];
        int rc = fbf_test_replay_run(
            (const char *const[]){"--inproc", "--max-exchanges", bad[i], wl, NULL}, TIMEOUT_MS,
            &so, &err);
        snprintf(want, sizeof want, "--max-exchanges '%s': not an integer >= 1", bad[i]);
        if (rc != 2)
            fail_msg("--max-exchanges '%s': exit %d, expected 2", bad[i], rc);
        assert_contains(err, want);
        free(so);
        free(err);
    }
}

/* A platform size in the file above what --nb-res accepts is refused
 * before anything is allocated for it (17 GB of per-resource state for
 * MaxProcs 4294967295); in JSON, Batsim refuses an nb_res beyond 32 bits
 * itself. */
static void test_platform_too_large(void **state)
{
    (void)state;
    static const char *const files[][3] = {
        {"huge.swf",
         "; MaxProcs: 4294967295\n1 0 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
         "platform size 4294967295 (MaxProcs/MaxNodes header or nb_res) is above 2147483647 "
         "resources: pass --nb-res N"},
        {"huge.json",
         "{\"nb_res\": 2147483648, \"jobs\": [{\"id\": 1, \"subtime\": 0, \"res\": 1, "
         "\"profile\": \"p\"}], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 1}}}",
         "huge.json': the 'nb_res' field is not an integer"},
    };
    for (size_t i = 0; i < 2; i++) {
        char *so = NULL, *err = NULL;
        const char *wl = fbf_test_tmp_write(files[i][0], files[i][1]);
        int rc = fbf_test_replay_run((const char *const[]){"--inproc", wl, NULL}, TIMEOUT_MS,
                                     &so, &err);
        if (rc != 2)
            fail_msg("%s: exit %d, expected 2: %s", files[i][0], rc, err);
        assert_contains(err, files[i][2]);
        free(so);
        free(err);
    }
}

/* A job submitted so late that its end overflows to infinity is refused
 * when it starts, naming it, rather than left running forever until the
 * run stops as a deadlock of no waiting job. */
static void test_end_past_largest_time(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "late.json", "{\"nb_res\": 2, \"jobs\": [{\"id\": 1, \"subtime\": 1e308, \"res\": 1, "
                     "\"profile\": \"p\"}], \"profiles\": {\"p\": {\"type\": \"delay\", "
                     "\"delay\": 1.5e308}}}");
    char *so = NULL, *err = NULL;
    /* fcfs: a backfilling policy rejects a job without walltime (D2). */
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--policy", "fcfs", wl, NULL},
                                 TIMEOUT_MS, &so, &err);
    if (rc != 2)
        fail_msg("exit %d, expected 2: %s", rc, err);
    assert_contains(err, "(EXECUTE_JOB, job w0!1): started at 1e+308, the job would run "
                         "1.5e+308 s and end past the largest time");
    free(so);
    free(err);
}

/* The "+T s" of fastbf --verbose: one per exchange, in order, never
 * decreasing. */
static void test_verbose_times(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    const char *wl = fbf_test_tmp_write("verbose.swf", queue_swf);
    const char *log = fbf_test_tmp_path("verbose.log");
    char *so = NULL;
    run_fastbf(wl, "1000", "conservative", fbf_test_tmp_path("verbose"), log, &so);
    free(so);
    char *text = fbf_test_replay_read(log);
    assert_non_null(text);
    regex_t re;
    assert_int_equal(regcomp(&re, "^fastbf: \\+([0-9]+\\.[0-9]{6}) s now [0-9]+\\.[0-9]{6}: "
                                  "[0-9]+ decisions, [0-9]+ waiting, [0-9]+ running$",
                             REG_EXTENDED | REG_NEWLINE), 0);
    int lines = 0;
    double prev = -1;
    regmatch_t m[2];
    for (const char *p = text; regexec(&re, p, 2, m, 0) == 0; p += m[0].rm_eo) {
        double t = strtod(p + m[1].rm_so, NULL);
        assert_true(t >= prev);
        assert_true(lines > 0 || t == 0);
        prev = t;
        lines++;
    }
    regfree(&re);
    free(text);
    /* BEGINS, t = 0, the ten ends (10, 20, 40, ..., 300), 1000, 1005, ENDS. */
    assert_int_equal(lines, 15);
}

/* --external-events-end T: Batsim's notification that no external event
 * is left reaches fastbf at T, once, mid-run or after the last job. */
static void test_external_events_end(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    const char *wl = fbf_test_tmp_write("ext.swf", queue_swf);
    static const char *const at[] = {"15", "5000"};
    for (int i = 0; i < 2; i++) {
        const char *log = fbf_test_tmp_path("ext%d.log", i);
        char cmd[8400], *so = NULL, *err = NULL;
        snprintf(cmd, sizeof cmd, "exec %s --policy easy --verbose --endpoint {endpoint} 2>%s",
                 fbf_test_replay_fastbf_path(), log);
        int rc = fbf_test_replay_run((const char *const[]){"--scheduler", cmd,
                                                           "--external-events-end", at[i],
                                                           "--timeout", "20", wl, NULL},
                                     TIMEOUT_MS, &so, &err);
        if (rc != 0)
            fail_msg("--external-events-end %s: exit %d: %s", at[i], rc, err);
        char *text = fbf_test_replay_read(log);
        assert_non_null(text);
        const char *hit = strstr(text, "fastbf: NOTIFY no_more_external_event_to_occur\n");
        assert_non_null(hit);
        assert_null(strstr(hit + 20, "no_more_external_event_to_occur"));
        /* After the last job, the notification is a decision point of its own. */
        if (i == 1)
            assert_contains(text, "now 5000.000000: 0 decisions, 0 waiting, 0 running");
        free(text);
        free(so);
        free(err);
    }
    static const char *const bad[] = {"-1", "abc", "inf", "", "1x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *so = NULL, *err = NULL, want[80];
        int rc = fbf_test_replay_run(
            (const char *const[]){"--inproc", "--external-events-end", bad[i], wl, NULL},
            TIMEOUT_MS, &so, &err);
        snprintf(want, sizeof want, "--external-events-end '%s': not a time >= 0", bad[i]);
        if (rc != 2)
            fail_msg("--external-events-end '%s': exit %d, expected 2", bad[i], rc);
        assert_contains(err, want);
        free(so);
        free(err);
    }
}

/* fastbf --max-wait S against the replayer: every job that waited S
 * seconds is given up with REJECT_JOB (a REJECTED row), no job that ran
 * waited longer, and the replay completes. */
static void test_max_wait_end_to_end(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++) {
        const char *out = fbf_test_tmp_path("maxwait-%s", policies[p]);
        char cmd[8400], *so = NULL, *err = NULL;
        snprintf(cmd, sizeof cmd, "exec %s --policy %s --max-wait 3600 --endpoint {endpoint}",
                 fbf_test_replay_fastbf_path(), policies[p]);
        int rc = fbf_test_replay_run(
            (const char *const[]){"--scheduler", cmd, "--max-jobs", "2000", "--out", out,
                                  FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", NULL},
            TIMEOUT_MS, &so, &err);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", policies[p], rc, err);
        free(so);
        free(err);
        char path[4200];
        snprintf(path, sizeof path, "%s/out_jobs.csv", out);
        char *text = fbf_test_replay_read(path);
        assert_non_null(text);
        int given_up = 0, ran = 0;
        for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
            /* strsep keeps the empty fields of a REJECTED row. */
            char *f[17] = {0}, *row = strndup(line + 1, strcspn(line + 1, "\n")), *rest = row;
            int k = 0;
            for (char *t; k < 17 && (t = strsep(&rest, ",")) != NULL;)
                f[k++] = t;
            assert_int_equal(k, 17);
            if (strcmp(f[7], "REJECTED") == 0) {
                /* Given up with REJECT_JOB: Batsim 4.2.1's row has no times. */
                assert_string_equal(f[6], "0");
                assert_string_equal(f[8], "");
                assert_string_equal(f[14], "");
                given_up++;
            } else {
                assert_true(strtod(f[11], NULL) < 3600);
                ran++;
            }
            free(row);
        }
        free(text);
        if (given_up == 0 || given_up + ran != 2000)
            fail_msg("%s: %d given up, %d ran", policies[p], given_up, ran);
        assert_summary(out, "jobs.rejected", given_up);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncated_against_fastbf),
        cmocka_unit_test(test_limit_not_reached),
        cmocka_unit_test(test_policy_work_inproc),
        cmocka_unit_test(test_ends_message),
        cmocka_unit_test(test_bad_values),
        cmocka_unit_test(test_end_past_largest_time),
        cmocka_unit_test(test_platform_too_large),
        cmocka_unit_test(test_verbose_times),
        cmocka_unit_test(test_external_events_end),
        cmocka_unit_test(test_max_wait_end_to_end),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
