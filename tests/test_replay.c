/*
 * test_replay: fastbf-replay end to end, run as the real binary.
 *
 *   - against a scripted scheduler in a test thread (support/replay_sched):
 *     exact messages, the worked example of scheduling-semantics.md under
 *     FCFS, kills, requested calls, and one deliberately wrong scheduler per
 *     check the replayer makes (exit 2 and the precise message), a silent
 *     one (timeout), an idle one (deadlock, 3);
 *   - against fastbf itself, in process and as a spawned process: the worked
 *     example under FCFS, EASY and conservative, rejection of oversized jobs.
 * Full replays of the real traces live in test_replay_traces.c; schedulers
 * the replayer starts and how they end, in test_replay_spawn.c.
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
#include <unistd.h>

#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 120000
#define START 8 /* out_jobs.csv columns */
#define FINISH 10
#define FINAL_STATE 7
#define ALLOC 14

/* scheduling-semantics.md, "Worked example": 4 resources, all at 0. */
static const char example_json[] =
    "{\"nb_res\": 4, \"jobs\": ["
    "{\"id\": \"A\", \"subtime\": 0, \"res\": 2, \"walltime\": 10, \"profile\": \"d10\"},"
    "{\"id\": \"B\", \"subtime\": 0, \"res\": 4, \"walltime\": 5, \"profile\": \"d5\"},"
    "{\"id\": \"C\", \"subtime\": 0, \"res\": 2, \"walltime\": 5, \"profile\": \"d5\"},"
    "{\"id\": \"D\", \"subtime\": 0, \"res\": 1, \"walltime\": 20, \"profile\": \"d20\"}],"
    "\"profiles\": {\"d10\": {\"type\": \"delay\", \"delay\": 10},"
    "\"d5\": {\"type\": \"delay\", \"delay\": 5}, \"d20\": {\"type\": \"delay\", \"delay\": 20}}}";

static const char example_swf[] = "; MaxProcs: 4\n"
                                  "1 0 -1 10 2 -1 -1 2 10 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                  "2 0 -1 5 4 -1 -1 4 5 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                  "3 0 -1 5 2 -1 -1 2 5 -1 1 1 1 -1 -1 -1 -1 -1\n"
                                  "4 0 -1 20 1 -1 -1 1 20 -1 1 1 1 -1 -1 -1 -1 -1\n";

/* Two jobs, the second arriving after the first ends. */
static const char two_swf[] = "; MaxProcs: 4\n"
                              "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                              "2 100 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

/* Two jobs at once: room for both. */
static const char pair_swf[] = "; MaxProcs: 4\n"
                               "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                               "2 0 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

typedef struct result {
    int rc;
    char *out, *err, *log;
} result;

static void result_free(result *r)
{
    free(r->out);
    free(r->err);
    free(r->log);
}

/* Runs the replayer against the scripted scheduler with fault. */
static result with_sched(fbf_test_rfault fault, const char *wl, const char *outdir,
                         const char *extra)
{
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_start(fault, ep, sizeof ep);
    assert_non_null(s);
    const char *args[12] = {"--endpoint", ep, "--timeout", "20"};
    int n = 4;
    if (outdir) {
        args[n++] = "--out";
        args[n++] = outdir;
    }
    if (extra) {
        args[2] = "--timeout";
        args[3] = extra;
    }
    args[n++] = wl;
    result r = {0};
    r.rc = fbf_test_replay_run(args, TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_rsched_stop(s);
    return r;
}

/* Line k (0-based) of text, malloc'ed ("" past the end). */
static char *line_of(const char *text, int k)
{
    const char *p = text;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return strdup("");
    return strndup(p, strcspn(p, "\n"));
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!hay || !strstr(hay, needle))
        fail_msg("expected '%s' in:\n%s", needle, hay ? hay : "(null)");
}

static void assert_line(const char *log, int k, const char *expected)
{
    char *l = line_of(log, k);
    if (strcmp(l, expected) != 0)
        fail_msg("message %d:\n  got      %s\n  expected %s", k, l, expected);
    free(l);
}

static void assert_starts(const char *dir, const char *const *ids, const double *starts, int n)
{
    for (int i = 0; i < n; i++) {
        double s = fbf_test_replay_csv(dir, ids[i], START);
        if (s != starts[i])
            fail_msg("job %s started at %g, expected %g", ids[i], s, starts[i]);
    }
}

static const char *const ABCD[] = {"A", "B", "C", "D"};
static const char *const N1234[] = {"1", "2", "3", "4"};

/* ---------- against the scripted scheduler ---------- */

static void test_fcfs_example_exact_messages(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("fcfs-example");
    const char *wl = fbf_test_tmp_write("example.json", example_json);
    result r = with_sched(FBF_TRF_NONE, wl, out, NULL);
    if (r.rc != 0)
        fail_msg("rc %d: %s", r.rc, r.err);
    static const double fcfs[] = {0, 10, 15, 15};
    assert_starts(out, ABCD, fcfs, 4);
    char *first = line_of(r.log, 0);
    assert_contains(first, "{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,\"type\":"
                           "\"SIMULATION_BEGINS\",\"data\":{\"nb_resources\":4,"
                           "\"nb_compute_resources\":4,\"nb_storage_resources\":0,"
                           "\"allow_compute_sharing\":false,\"allow_storage_sharing\":true,"
                           "\"config\":{\"redis-enabled\":false,");
    assert_contains(first, "\"compute_resources\":[{\"id\":0,\"name\":\"r0\",\"state\":\"idle\","
                           "\"properties\":{\"role\":\"\"},\"zone_properties\":{}},");
    assert_contains(first, "\"storage_resources\":[],\"workloads\":{\"w0\":\"");
    assert_contains(first, "\"profiles\":{\"w0\":{\"d10\":{\"type\":\"delay\",\"delay\":10},"
                           "\"d5\":{\"type\":\"delay\",\"delay\":5},"
                           "\"d20\":{\"type\":\"delay\",\"delay\":20}}}}}]}");
    free(first);
    assert_line(r.log, 1,
                "{\"now\":0.000000,\"events\":["
                "{\"timestamp\":0.000000,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!A\","
                "\"job\":{\"id\":\"w0!A\",\"subtime\":0,\"walltime\":10,\"res\":2,\"profile\":\"d10\"}}},"
                "{\"timestamp\":0.000000,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!B\","
                "\"job\":{\"id\":\"w0!B\",\"subtime\":0,\"walltime\":5,\"res\":4,\"profile\":\"d5\"}}},"
                "{\"timestamp\":0.000000,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!C\","
                "\"job\":{\"id\":\"w0!C\",\"subtime\":0,\"walltime\":5,\"res\":2,\"profile\":\"d5\"}}},"
                "{\"timestamp\":0.000000,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!D\","
                "\"job\":{\"id\":\"w0!D\",\"subtime\":0,\"walltime\":20,\"res\":1,\"profile\":\"d20\"}}},"
                "{\"timestamp\":0.000000,\"type\":\"NOTIFY\",\"data\":"
                "{\"type\":\"no_more_static_job_to_submit\"}}]}");
    /* The scheduler sent "0 1": completions carry the canonical form. */
    assert_line(r.log, 2,
                "{\"now\":10.000000,\"events\":[{\"timestamp\":10.000000,\"type\":\"JOB_COMPLETED\","
                "\"data\":{\"job_id\":\"w0!A\",\"job_state\":\"COMPLETED_SUCCESSFULLY\","
                "\"return_code\":0,\"alloc\":\"0-1\"}}]}");
    assert_line(r.log, 3,
                "{\"now\":15.000000,\"events\":[{\"timestamp\":15.000000,\"type\":\"JOB_COMPLETED\","
                "\"data\":{\"job_id\":\"w0!B\",\"job_state\":\"COMPLETED_SUCCESSFULLY\","
                "\"return_code\":0,\"alloc\":\"0-3\"}}]}");
    assert_line(r.log, 4,
                "{\"now\":20.000000,\"events\":[{\"timestamp\":20.000000,\"type\":\"JOB_COMPLETED\","
                "\"data\":{\"job_id\":\"w0!C\",\"job_state\":\"COMPLETED_SUCCESSFULLY\","
                "\"return_code\":0,\"alloc\":\"0-1\"}}]}");
    assert_line(r.log, 6,
                "{\"now\":35.000000,\"events\":[{\"timestamp\":35.000000,\"type\":"
                "\"SIMULATION_ENDS\",\"data\":{}}]}");
    assert_line(r.log, 7, "");
    /* Figures: waits 0 10 15 15; bounded slowdowns 1, 1.5, 2, 1.75; area 70. */
    assert_true(fbf_test_replay_summary(out, "makespan") == 35);
    assert_true(fbf_test_replay_summary(out, "mean_wait") == 10);
    assert_true(fbf_test_replay_summary(out, "max_wait") == 15);
    assert_true(fbf_test_replay_summary(out, "mean_bounded_slowdown") == 1.5625);
    assert_true(fbf_test_replay_summary(out, "utilization") == 0.5);
    assert_true(fbf_test_replay_summary(out, "exchanges") == 7);
    /* The steady rate leaves out the first exchange (the scheduler's
     * start): 6 exchanges in less than the whole run. */
    double rate = fbf_test_replay_summary(out, "exchanges_per_s_after_first");
    assert_true(rate > 0 && 6 / rate <= fbf_test_replay_summary(out, "wall_s.total"));
    assert_true(fbf_test_replay_summary(out, "jobs.completed") == 4);
    assert_true(fbf_test_replay_summary(out, "jobs.rejected") == 0);
    char *row = fbf_test_replay_csv_text(out, "D", ALLOC);
    assert_string_equal(row, "2");
    free(row);
    assert_contains(r.out, "jobs         4 submitted, 4 completed (4 successfully, 0 at walltime)");
    result_free(&r);
}

static void test_fcfs_example_swf_gz(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("fcfs-swf");
    const char *wl = fbf_test_tmp_write("example.swf.gz", example_swf);
    result r = with_sched(FBF_TRF_NONE, wl, out, NULL);
    assert_int_equal(r.rc, 0);
    static const double fcfs[] = {0, 10, 15, 15};
    assert_starts(out, N1234, fcfs, 4);
    char *csv = fbf_test_replay_read(fbf_test_tmp_path("fcfs-swf/out_jobs.csv"));
    assert_contains(csv, "job_id,workload_name,profile,submission_time,"
                         "requested_number_of_resources,requested_time,success,final_state,"
                         "starting_time,execution_time,finish_time,waiting_time,turnaround_time,"
                         "stretch,allocated_resources,consumed_energy,metadata\n");
    assert_contains(csv, "\n2,w0,delay_5,0.000000,4,5.000000,1,COMPLETED_SUCCESSFULLY,"
                         "10.000000,5.000000,15.000000,10.000000,15.000000,3.000000,0-3,-1.000000,"
                         "\"\"\n");
    free(csv);
    result_free(&r);
}

/* Workload names and profiles are free text in a Batsim JSON workload:
 * out_jobs.csv quotes a field holding a comma or a quote, so that no
 * column shifts for a CSV reader. */
static void test_csv_quotes_text_fields(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("csv-quotes");
    const char *wl = fbf_test_tmp_write(
        "quotes.json", "{\"nb_res\": 2, \"jobs\": ["
                       "{\"id\": \"a,b!1\", \"subtime\": 0, \"res\": 1, \"walltime\": 10, "
                       "\"profile\": \"p,\\\"q\"}], "
                       "\"profiles\": {\"p,\\\"q\": {\"type\": \"delay\", \"delay\": 5}}}");
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--quiet", "--out", out, wl,
                                                       NULL},
                                 TIMEOUT_MS, NULL, NULL);
    assert_int_equal(rc, 0);
    char *csv = fbf_test_replay_read(fbf_test_tmp_path("csv-quotes/out_jobs.csv"));
    assert_contains(csv, "\n1,\"a,b\",\"p,\"\"q\",0.000000,1,10.000000,1,");
    free(csv);
}

static void test_walltime_reached(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("walltime");
    const char *wl = fbf_test_tmp_write(
        "wt.swf", "; MaxProcs: 2\n1 3 -1 100 1 -1 -1 1 60 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    result r = with_sched(FBF_TRF_NONE, wl, out, NULL);
    assert_int_equal(r.rc, 0);
    assert_line(r.log, 2,
                "{\"now\":63.000000,\"events\":[{\"timestamp\":63.000000,\"type\":\"JOB_COMPLETED\","
                "\"data\":{\"job_id\":\"w0!1\",\"job_state\":\"COMPLETED_WALLTIME_REACHED\","
                "\"return_code\":-1,\"alloc\":\"0\"}}]}");
    char *st = fbf_test_replay_csv_text(out, "1", FINAL_STATE);
    assert_string_equal(st, "COMPLETED_WALLTIME_REACHED");
    free(st);
    assert_true(fbf_test_replay_csv(out, "1", 6) == 0); /* success */
    assert_true(fbf_test_replay_csv(out, "1", FINISH) == 63);
    assert_true(fbf_test_replay_summary(out, "jobs.walltime_reached") == 1);
    result_free(&r);
}

static void test_requested_calls(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "call.swf", "; MaxProcs: 1\n1 0 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    result r = with_sched(FBF_TRF_CALL_LATER, wl, NULL, NULL);
    assert_int_equal(r.rc, 0);
    /* CALL_ME_LATER(now + 1e-6) comes 1e-5 s after the request (Batsim's
     * waiter never sleeps less), printed with 6 decimals; CALL_ME_LATER(5)
     * at 5, before the completion. */
    assert_line(r.log, 2,
                "{\"now\":0.000010,\"events\":[{\"timestamp\":0.000010,\"type\":\"REQUESTED_CALL\","
                "\"data\":{}}]}");
    assert_line(r.log, 3,
                "{\"now\":5.000000,\"events\":[{\"timestamp\":5.000000,\"type\":\"REQUESTED_CALL\","
                "\"data\":{}}]}");
    char *l = line_of(r.log, 4);
    assert_contains(l, "\"now\":10.000000,\"events\":[{\"timestamp\":10.000000,\"type\":\"JOB_COMPLETED\"");
    free(l);
    result_free(&r);
}

static void test_reply_now_moves_the_clock(void **state)
{
    (void)state;
    /* Job 1 (subtime 0) ends at 10: the scheduler's empty answer to
     * SIMULATION_BEGINS says 3, so job 1 is submitted and starts at 3, and
     * its completion at 13 is answered "now 16", so job 2 (subtime 14)
     * arrives and starts at 16. An empty reply's now is read, not assumed
     * to be the request's. */
    const char *wl = fbf_test_tmp_write(
        "slow.swf", "; MaxProcs: 1\n1 0 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                    "2 14 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("slow");
    result r = with_sched(FBF_TRF_SLOW, wl, out, NULL);
    if (r.rc != 0)
        fail_msg("rc %d: %s", r.rc, r.err);
    assert_true(fbf_test_replay_csv(out, "1", START) == 3);
    assert_true(fbf_test_replay_csv(out, "1", FINISH) == 13);
    assert_true(fbf_test_replay_csv(out, "2", START) == 16);
    assert_line(r.log, 3,
                "{\"now\":16.000000,\"events\":[{\"timestamp\":14.000000,\"type\":"
                "\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!2\",\"job\":{\"id\":\"w0!2\","
                "\"subtime\":14,\"walltime\":20,\"res\":1,\"profile\":\"delay_10\"}}},{\"timestamp\":"
                "14.000000,\"type\":\"NOTIFY\",\"data\":{\"type\":\"no_more_static_job_to_submit\"}}]}");
    result_free(&r);
}

typedef struct bad_case {
    fbf_test_rfault fault;
    const char *workload;
    const char *needles[3];
} bad_case;

static void test_bad_schedulers(void **state)
{
    (void)state;
    const char *two = fbf_test_tmp_write("two.swf", two_swf);
    const char *pair = fbf_test_tmp_write("pair.swf", pair_swf);
    const bad_case cases[] = {
        {FBF_TRF_UNKNOWN_JOB, two,
         {"invalid reply to message #1 (JOB_SUBMITTED, now=0): reply event 0 (EXECUTE_JOB, "
          "job w0!nope): unknown job id"}},
        {FBF_TRF_NOT_SUBMITTED, two,
         {"reply event 0 (EXECUTE_JOB, job w0!2): the job has not been submitted yet"}},
        {FBF_TRF_WRONG_RES, two,
         {"reply event 0 (EXECUTE_JOB, job w0!1): data.alloc '0 1 2' has 3 resources, the job "
          "requests 2"}},
        {FBF_TRF_OUT_OF_RANGE, two,
         {"(EXECUTE_JOB, job w0!1): data.alloc: resource 4 is out of range (the platform has "
          "4: 0-3)"}},
        {FBF_TRF_BUSY, pair,
         {"reply event 1 (EXECUTE_JOB, job w0!2): data.alloc: resource 0 is busy (held by "
          "w0!1)"}},
        {FBF_TRF_TWICE, two,
         {"reply event 1 (EXECUTE_JOB, job w0!1): the job is already running (started at 0)"}},
        {FBF_TRF_BAD_ALLOC, two,
         {"reply event 0 (EXECUTE_JOB, job w0!1): data.alloc '0-' is not an interval set"}},
        {FBF_TRF_NOW_BEFORE, two,
         {"invalid reply to message #1 (JOB_SUBMITTED, now=0): reply: now -1 is before the "
          "request's now 0"}},
        {FBF_TRF_NO_NOW, two, {"reply: field now is missing or not a number"}},
        {FBF_TRF_MALFORMED, two,
         {"invalid reply to message #1 (JOB_SUBMITTED, now=0): reply: malformed JSON at byte"}},
        {FBF_TRF_DESCENDING, two,
         {"reply event 1 (CALL_ME_LATER): timestamp -0.5 is before the previous event's 0 "
          "(timestamps must not decrease)"}},
        {FBF_TRF_REJECT_RUNNING, two,
         {"reply event 1 (REJECT_JOB, job w0!1): Invalid rejection received: job 'w0!1' cannot "
          "be rejected at the present time. To be rejected, a job must be submitted and not "
          "allocated yet."}},
        {FBF_TRF_CALL_PAST, two,
         {"reply event 0 (CALL_ME_LATER): You asked to be awaken in the past! (you ask: "
          "-1.000000, it is: 0.000000)"}},
        {FBF_TRF_UNKNOWN_TYPE, two,
         {"reply event 0 (LAUNCH_ROCKET): unknown event type 'LAUNCH_ROCKET'"}},
        {FBF_TRF_ENDS_EVENTS, two,
         {"(SIMULATION_ENDS, now=105): reply: the reply to SIMULATION_ENDS must have no events "
          "(it has 1)"}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        result r = with_sched(cases[i].fault, cases[i].workload, NULL, NULL);
        if (r.rc != 2)
            fail_msg("fault %d: exit code %d, expected 2; stderr:\n%s", cases[i].fault, r.rc,
                     r.err);
        for (int k = 0; k < 3 && cases[i].needles[k]; k++)
            assert_contains(r.err, cases[i].needles[k]);
        assert_contains(r.err, "fastbf-replay: error: ");
        result_free(&r);
    }
}

static void test_silent_scheduler_times_out(void **state)
{
    (void)state;
    result r = with_sched(FBF_TRF_SILENT, fbf_test_tmp_write("silent.swf", two_swf), NULL, "0.5");
    assert_int_equal(r.rc, 2);
    assert_contains(r.err, "message #1 (JOB_SUBMITTED, now=0): no reply from the scheduler at "
                           "tcp://127.0.0.1:");
    assert_contains(r.err, "within 0.5 s (--timeout)");
    result_free(&r);
}

static void test_deadlock(void **state)
{
    (void)state;
    result r = with_sched(FBF_TRF_IDLE, fbf_test_tmp_write("idle.swf", two_swf), NULL, NULL);
    assert_int_equal(r.rc, 3);
    assert_contains(r.err, "stuck jobs (2): w0!1 (res 2, walltime 10), w0!2 (res 1, walltime 5)\n");
    assert_contains(r.err, "error: deadlock at now=100: 2 jobs wait, none runs");
    result_free(&r);

    char text[4096] = "; MaxProcs: 4\n";
    for (int i = 1; i <= 25; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%d %d -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n", i, i);
    r = with_sched(FBF_TRF_IDLE, fbf_test_tmp_write("idle25.swf", text), NULL, NULL);
    assert_int_equal(r.rc, 3);
    assert_contains(r.err, "stuck jobs (25): w0!1 (res 1, walltime 10),");
    assert_contains(r.err, ", w0!20 (res 1, walltime 10) and 5 more\n");
    result_free(&r);
}

static void run_expect(const char *const *args, int rc, const char *needle, bool on_stdout)
{
    fbf_test_replay_expect(args, TIMEOUT_MS, rc, needle, on_stdout);
}

static void test_bad_options(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("opt.swf", two_swf);
    const char *nohead =
        fbf_test_tmp_write("nohead.swf", "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    run_expect((const char *const[]){NULL}, 2, "no WORKLOAD given", false);
    run_expect((const char *const[]){"--bogus", wl, NULL}, 2, "Try 'fastbf-replay --help'", false);
    run_expect((const char *const[]){wl, NULL}, 2, "exactly one of", false);
    run_expect((const char *const[]){"--inproc", "--endpoint", "tcp://127.0.0.1:1", wl, NULL}, 2,
               "exactly one of", false);
    run_expect((const char *const[]){"--endpoint", "tcp://127.0.0.1:1", "--policy", "easy", wl, NULL},
               2, "go with --inproc", false);
    run_expect((const char *const[]){"--inproc", "--walltime", "factor:0", wl, NULL}, 2,
               "--walltime 'factor:0'", false);
    run_expect((const char *const[]){"--inproc", "--timeout", "soon", wl, NULL}, 2,
               "--timeout 'soon'", false);
    run_expect((const char *const[]){"--inproc", "--max-jobs", "-3", wl, NULL}, 2,
               "--max-jobs '-3'", false);
    run_expect((const char *const[]){"--inproc", fbf_test_tmp_path("missing.swf"), NULL}, 2,
               "cannot open", false);
    run_expect((const char *const[]){"--inproc", "--policy", "nope", wl, NULL}, 2,
               "unknown policy 'nope'", false);
    run_expect((const char *const[]){"--inproc", nohead, NULL}, 2, "pass --nb-res N", false);
    run_expect((const char *const[]){"--endpoint", "nonsense", wl, NULL}, 2,
               "cannot connect to 'nonsense'", false);
    run_expect((const char *const[]){"--help", NULL}, 0, "Usage: fastbf-replay", true);
    run_expect((const char *const[]){"--inproc", "--quiet", "--nb-res", "4", nohead, NULL}, 0,
               NULL, true);
}

/* ---------- against fastbf ---------- */

static bool have_fastbf(void)
{
    return access(fbf_test_replay_fastbf_path(), X_OK) == 0;
}

static void test_inproc_example_policies(void **state)
{
    (void)state;
    static const struct {
        const char *policy;
        double starts[4];
    } want[] = {
        {"fcfs", {0, 10, 15, 15}},
        {"easy", {0, 10, 0, 15}},
        {"conservative", {0, 10, 0, 15}},
    };
    const char *wl = fbf_test_tmp_write("ex-inproc.json", example_json);
    for (int i = 0; i < 3; i++) {
        const char *out = fbf_test_tmp_path("inproc-%s", want[i].policy);
        char *err = NULL;
        int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--policy", want[i].policy,
                                                           "--quiet", "--out", out, wl, NULL},
                                     TIMEOUT_MS, NULL, &err);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", want[i].policy, rc, err);
        free(err);
        assert_starts(out, ABCD, want[i].starts, 4);
    }
}

static void test_spawned_fastbf_example(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    char cmd[2][4200];
    snprintf(cmd[0], sizeof cmd[0], "%s --policy easy", fbf_test_replay_fastbf_path());
    snprintf(cmd[1], sizeof cmd[1], "exec %s --endpoint {endpoint} --policy conservative",
             fbf_test_replay_fastbf_path());
    const char *wl = fbf_test_tmp_write("ex-spawn.swf", example_swf);
    static const double easy[] = {0, 10, 0, 15};
    for (int i = 0; i < 2; i++) {
        const char *out = fbf_test_tmp_path("spawn-%d", i);
        char *err = NULL, *so = NULL;
        int rc = fbf_test_replay_run((const char *const[]){"--scheduler", cmd[i], "--out", out,
                                                           "--timeout", "20", wl, NULL},
                                     TIMEOUT_MS, &so, &err);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", cmd[i], rc, err);
        assert_contains(so, "exchanges    ");
        free(err);
        free(so);
        assert_starts(out, N1234, easy, 4);
    }
}

static void test_workload_prefixes(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "prefix.json", "{\"nb_res\": 2, \"jobs\": ["
                       "{\"id\": \"a\", \"subtime\": 0, \"res\": 1, \"profile\": \"p\"},"
                       "{\"id\": \"other!x\", \"subtime\": 1, \"res\": 1, \"profile\": \"p\"}],"
                       "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 2.5}}}");
    const char *out = fbf_test_tmp_path("prefix");
    result r = with_sched(FBF_TRF_NONE, wl, out, NULL);
    assert_int_equal(r.rc, 0);
    char *first = line_of(r.log, 0), q[4200];
    snprintf(q, sizeof q, "\"workloads\":{\"w0\":\"%s\",\"other\":\"%s\"},", wl, wl);
    assert_contains(first, q);
    assert_contains(first, "\"profiles\":{\"w0\":{\"p\":{\"type\":\"delay\",\"delay\":2.5}},"
                           "\"other\":{\"p\":{\"type\":\"delay\",\"delay\":2.5}}}");
    free(first);
    /* No walltime in the workload: -1, as Batsim sends it. */
    assert_contains(r.log, "\"job\":{\"id\":\"other!x\",\"subtime\":1,\"walltime\":-1,"
                           "\"res\":1,\"profile\":\"p\"}");
    assert_contains(r.log, "{\"now\":3.500000,\"events\":[{\"timestamp\":3.500000,"
                           "\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"other!x\"");
    char *name = fbf_test_replay_csv_text(out, "x", 1);
    assert_string_equal(name, "other");
    free(name);
    result_free(&r);
}

static void test_oversized_job_rejected(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "big.swf", "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                   "2 0 -1 10 5 -1 -1 5 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                   "3 5 -1 10 4 -1 -1 4 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("big");
    char *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--policy", "easy", "--quiet",
                                                       "--out", out, wl, NULL},
                                 TIMEOUT_MS, NULL, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(err);
    assert_true(fbf_test_replay_summary(out, "jobs.rejected") == 1);
    assert_true(fbf_test_replay_summary(out, "jobs.completed") == 2);
    assert_true(fbf_test_replay_csv(out, "3", START) == 10);
    /* Batsim 4.2.1's row for a rejected job: no times, no allocation. */
    char *st = fbf_test_replay_csv_text(out, "2", FINAL_STATE);
    assert_string_equal(st, "REJECTED");
    free(st);
    st = fbf_test_replay_csv_text(out, "2", START);
    assert_string_equal(st, "");
    free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fcfs_example_exact_messages),
        cmocka_unit_test(test_fcfs_example_swf_gz),
        cmocka_unit_test(test_csv_quotes_text_fields),
        cmocka_unit_test(test_walltime_reached),
        cmocka_unit_test(test_requested_calls),
        cmocka_unit_test(test_reply_now_moves_the_clock),
        cmocka_unit_test(test_bad_schedulers),
        cmocka_unit_test(test_silent_scheduler_times_out),
        cmocka_unit_test(test_deadlock),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_inproc_example_policies),
        cmocka_unit_test(test_spawned_fastbf_example),
        cmocka_unit_test(test_workload_prefixes),
        cmocka_unit_test(test_oversized_job_rejected),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
