/*
 * test_replay_v2: fastbf-replay --protocol batsim2, Batsim's side of the
 * Batsim v2 text protocol over a Unix socket, against a real redis-server
 * (support/redis_server) and a v2 scheduler written from the protocol's
 * text (support/v2_sched):
 *
 *  - an FCFS v2 scheduler, in a thread (--socket) on a small workload and
 *    as a process the replayer starts (--scheduler, this binary) on 400
 *    KTH-SP2 jobs, gets the out_jobs.csv of the v4 replay under fastbf's
 *    in-process fcfs, byte for byte, and the same figures;
 *  - the messages themselves (A, S, C, the N of an n, p, e, Z with the last
 *    C) and --record;
 *  - the keys in Redis under the socket's absolute path: nb_res, job_<id>
 *    (id a number, or a string when the name is not), profile_<id>;
 *  - the default socket's directory is gone after the run;
 *  - a table of bad replies, each refused with exit 2 and its reason (most
 *    of them Batsim v2's own words), a deadlock (exit 3), and the options
 *    batsim2 refuses.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"
#include "support/v2_sched.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define TIMEOUT_MS 120000
#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define SELF FBF_BUILD_DIR "/test_replay_v2"

/* Jobs 1 and 2 at 0 (2 and 1 machines), job 3 at 100, on 4 machines. */
static const char three_swf[] = "; MaxProcs: 4\n"
                                "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 0 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 100 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

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

static const char *redis_addr(void)
{
    return fbf_test_redis_addr(fbf_test_redis_shared());
}

typedef struct run_result {
    int rc;
    char *out, *err, *log;
} run_result;

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
    free(r->log);
}

/* fastbf-replay --protocol batsim2 --socket SOCK with args, against a v2
 * scheduler in a thread: FCFS (script NULL) or scripted. */
static run_result run_v2(const char *sock, const char *const *script, const char *const *args)
{
    fbf_test_v2s *s = script ? fbf_test_v2s_script(sock, script)
                             : fbf_test_v2s_fcfs(sock, fbf_test_redis_shared()->port);
    const char *all[32] = {"--protocol", "batsim2", "--redis", redis_addr(), "--socket", sock,
                           "--timeout", "20"};
    size_t n = 8;
    for (size_t i = 0; args[i] && n < 31; i++)
        all[n++] = args[i];
    all[n] = NULL;
    run_result r = {0};
    r.rc = fbf_test_replay_run(all, TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_v2s_stop(s);
    return r;
}

static void expect_same_file(const char *a_path, const char *b_path)
{
    char *a = fbf_test_replay_read(a_path), *b = fbf_test_replay_read(b_path);
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0) {
        size_t line = 1, i = 0;
        for (; a[i] && a[i] == b[i]; i++)
            line += a[i] == '\n';
        fail_msg("%s and %s differ from line %zu", a_path, b_path, line);
    }
    free(a);
    free(b);
}

/* The v4 replay of wl under fastbf's in-process fcfs, into dir. */
static void v4_fcfs(const char *wl, const char *dir, const char *max_jobs)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--quiet", "--inproc", "--policy", "fcfs",
                                                       "--out", dir, wl, max_jobs ? "--max-jobs"
                                                                                  : NULL,
                                                       max_jobs, NULL},
                                 TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("v4 replay: exit %d: %s", rc, err);
    free(out);
    free(err);
}

static void test_small_fcfs_as_v4(void **state)
{
    const char *wl = fbf_test_tmp_write("three.swf", three_swf);
    const char *sock = fbf_test_tmp_path("small.sock");
    const char *dir2 = fbf_test_tmp_path("small-v2"), *dir4 = fbf_test_tmp_path("small-v4");
    char rec[PATH_MAX];
    snprintf(rec, sizeof rec, "%s", fbf_test_tmp_path("small.rec"));
    run_result r = run_v2(sock, NULL,
                          (const char *const[]){"--out", dir2, "--record", rec, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    v4_fcfs(wl, dir4, NULL);
    expect_same_file(fbf_test_tmp_path("small-v2/out_jobs.csv"),
                     fbf_test_tmp_path("small-v4/out_jobs.csv"));
    /* What Batsim v2 sends: A alone, submissions, completions, Z with the
     * last C. */
    assert_string_equal(r.log, "3:0.000000|0.000000:A\n"
                               "3:0.000000|0.000000:S:w0!1|0.000000:S:w0!2\n"
                               "3:5.000000|5.000000:C:w0!2\n"
                               "3:10.000000|10.000000:C:w0!1\n"
                               "3:100.000000|100.000000:S:w0!3\n"
                               "3:105.000000|105.000000:C:w0!3|105.000000:Z\n");
    char *recorded = fbf_test_replay_read(rec);
    assert_non_null(recorded);
    assert_non_null(strstr(recorded, "> 3:0.000000|0.000000:A\n< 2:0.000000|0.000000:N\n"
                                     "> 3:0.000000|0.000000:S:w0!1|0.000000:S:w0!2\n"
                                     "< 2:0.000000|0.000000:J:w0!1=0,1;w0!2=2\n"));
    free(recorded);
    assert_non_null(strstr(r.out, "3 submitted, 3 completed"));
    run_free(&r);
    /* The socket's file goes with the run. */
    assert_int_equal(access(sock, F_OK), -1);
}

static void test_kth_spawned_as_v4(void **state)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "%s --v2-sched %d --socket {socket}", SELF,
             fbf_test_redis_shared()->port);
    const char *dir2 = fbf_test_tmp_path("kth-v2"), *dir4 = fbf_test_tmp_path("kth-v4");
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--protocol", "batsim2", "--redis",
                                                       redis_addr(), "--scheduler", cmd, "--out",
                                                       dir2, "--max-jobs", "400", KTH, NULL},
                                 TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    v4_fcfs(KTH, dir4, "400");
    expect_same_file(fbf_test_tmp_path("kth-v2/out_jobs.csv"),
                     fbf_test_tmp_path("kth-v4/out_jobs.csv"));
    const char *keys[] = {"makespan", "mean_wait", "max_wait", "mean_bounded_slowdown",
                          "utilization", "jobs.completed", "jobs.walltime_reached"};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++)
        assert_true(fbf_test_replay_summary(dir2, keys[k]) ==
                    fbf_test_replay_summary(dir4, keys[k]));
    /* Batsim v2 sends Z with the last C: one exchange fewer than v4. */
    assert_true(fbf_test_replay_summary(dir2, "exchanges") + 1 ==
                fbf_test_replay_summary(dir4, "exchanges"));
    /* The scheduler was told the default socket (its line on stderr), in
     * a directory the replayer removed. */
    const char *at = strstr(err, "v2-sched socket: ");
    assert_non_null(at);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%.*s", (int)strcspn(at + 17, "\n"), at + 17);
    assert_true(strstr(path, "/fastbf-replay-") != NULL);
    *strrchr(path, '/') = '\0';
    struct stat st;
    assert_int_equal(stat(path, &st), -1);
    free(out);
    free(err);
}

static void test_redis_keys(void **state)
{
    const char *wl = fbf_test_tmp_write(
        "named.json", "{\"nb_res\": 3, \"jobs\": ["
                      "{\"id\": \"7\", \"subtime\": 1.5, \"res\": 2, \"walltime\": 30, "
                      "\"profile\": \"d10\"},"
                      "{\"id\": \"big\", \"subtime\": 2, \"res\": 1, \"walltime\": -1, "
                      "\"profile\": \"d10\"}],"
                      "\"profiles\": {\"d10\": {\"type\": \"delay\", \"delay\": 10}}}");
    const char *sock = fbf_test_tmp_path("keys.sock");
    char abs[PATH_MAX];
    snprintf(abs, sizeof abs, "%s", sock);
    run_result r = run_v2(sock, NULL, (const char *const[]){"--quiet", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    const fbf_test_redis *srv = fbf_test_redis_shared();
    char key[PATH_MAX + 64];
    const char *want[][2] = {
        {"nb_res", "3"},
        {"job_w0!7", "{\"id\":7,\"subtime\":1.5,\"walltime\":30,\"res\":2,\"profile\":\"d10\"}"},
        {"profile_w0!7", "{\"type\":\"delay\",\"delay\":10}"},
        {"job_w0!big",
         "{\"id\":\"big\",\"subtime\":2,\"walltime\":-1,\"res\":1,\"profile\":\"d10\"}"},
        {"profile_w0!big", "{\"type\":\"delay\",\"delay\":10}"},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        snprintf(key, sizeof key, "%s:%s", abs, want[k][0]);
        char *v = fbf_test_redis_get(srv, key);
        if (!v || strcmp(v, want[k][1]) != 0)
            fail_msg("%s: '%s', expected '%s'", key, v ? v : "(missing)", want[k][1]);
        free(v);
    }
    assert_non_null(strstr(r.log, "3:1.500000|1.500000:S:w0!7\n"));
    run_free(&r);
}

/* n (its N), P and E under --energy (p after the switch, e in joules). */
static void test_call_and_energy(void **state)
{
    const char *wl = fbf_test_tmp_write(
        "one.swf", "; MaxProcs: 2\n1 100 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *script[] = {
        "1:0.000000|0.000000:n:2.5|0.000000:P:1=1|0.000000:E", /* A */
        "2:$now|$now:N",                                        /* e at 0 */
        "2:$now|$now:N",                                        /* N at 2.5 */
        "2:$now|$now:N",                                        /* p at 5 */
        "2:$now|$now:J:w0!1=0|$now:P:1=0|$now:E",              /* S at 100 */
        NULL,
    };
    run_result r = run_v2(fbf_test_tmp_path("energy.sock"), script,
                          (const char *const[]){"--quiet", "--energy", "--switch-delays", "5:10",
                                                wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    /* At 100: machine 0 idle 100 s (95 W), machine 1 switching 5 s (95 W)
     * then asleep 95 s (9.75 W). */
    assert_string_equal(r.log, "3:0.000000|0.000000:A\n"
                               "3:0.000000|0.000000:e:0.000000\n"
                               "3:2.500000|2.500000:N\n"
                               "3:5.000000|5.000000:p:1=1\n"
                               "3:100.000000|100.000000:S:w0!1\n"
                               "3:100.000000|100.000000:e:10901.250000\n"
                               "3:110.000000|110.000000:C:w0!1|110.000000:p:1=0|"
                               "110.000000:Z\n");
    run_free(&r);
}

typedef struct bad_case {
    const char *reply; /* to message #1 (S:w0!1 and S:w0!2 at 0) */
    const char *needle;
} bad_case;

static const bad_case bad_cases[] = {
    {"2:$now|$now:J:w0!9=0-1", "The job identifier 'w0!9' is not valid"},
    {"2:$now|$now:J:w0!1=0-2", "the job w0!1 size is 2 but at least 3 machines were allocated"},
    {"2:$now|$now:J:w0!1=0", "the job w0!1 size is 2 but 1 machines were allocated"},
    {"2:$now|$now:J:w0!1=3-4", "the machine 4 does not exist (the platform has 4: 0-3)"},
    {"2:$now|$now:J:w0!1=0-1;w0!2=1", "machine 1 is currently computing jobs (these ones: "
                                      "{w0!1}) whereas space sharing is forbidden"},
    {"2:$now|$now:J:w0!1=0-1|$now:J:w0!1=2-3", "the job w0!1 state indicates it cannot be "
                                               "executed now (it is running)"},
    {"2:$now|$now:J:w0!3=0", "the job w0!3 state indicates it cannot be executed now (it has "
                             "not been submitted yet)"},
    {"2:$now|$now:J:w0!1=1-0", "the first value must be lesser than or equal to the second"},
    {"2:$now|$now:J:w0!1=1,1", "machine 1 is listed twice"},
    {"2:$now|$now:J:w0!1=a,b", "the MIDk 'a' should either be a single machine ID"},
    {"2:$now|$now:J:w0!1", "it must be composed of two parts separated by a '='"},
    {"2:$now|$now:J:w0!1=0-1|$now:R:w0!1", "job w0!1 cannot be rejected now (it is running). "
                                           "For being rejected, a job must be submitted"},
    {"2:$now|$now:R:w0!7", "Invalid job rejection received: The job identifier 'w0!7'"},
    {"2:-1|-1:N", "reply: the message time -1 is before the request's time 0"},
    {"2:$now|5:N", "its date (5.000000) is after the time of the message (0.000000)"},
    {"2:5|4:N|3:N", "its date (3.000000) cannot be before the previous event date (4.000000)"},
    {"2:5|-1:N", "its date (-1.000000) cannot be before the previous event date (0.000000)"},
    {"2:$now", "it should be composed of at least 2 parts separated by a '|'"},
    {"2:3:$now|$now:N", "the header '2:3:0.000000' is not VERSION:TIME"},
    {"2:$now|$now:X", "unhandled network stamp received ('X')"},
    {"2:$now|$now:S:w0!1", "stamp 'S' is one Batsim sends to the scheduler"},
    {"2:$now|$now:JJ:w0!1=0-1", "network stamp ('JJ') should be of length 1"},
    {"1:$now|$now:J:w0!1=0-1", "stamp 'J' needs protocol version 2 or later, the message says 1"},
    {"0:$now|$now:n:5", "stamp 'n' needs protocol version 1 or later, the message says 0"},
    {"4:$now|$now:N", "protocol version 4 is newer than this Batsim's (3)"},
    {"2:$now|$now:N:x", "'N' events must be composed of 2 parts separated by ':'"},
    {"2:$now|$now:N|", "an empty event ('|' at the end or twice in a row)"},
    {"2:$now|$now:n:0", "You asked to be awaken in the past! (you ask: 0.000000, it is: "
                        "0.000000)"},
    {"2:$now|$now:n:soon", "the time to be awaken ('soon') is not a number"},
    {"2:$now|$now:P:0=1", "A pstate modification message has been received whereas energy is "
                          "not currently used by Batsim"},
    {"2:$now|$now:E", "A consumed energy message has been received whereas energy"},
    {"2:$now|$now:N\xc3\xa9", "byte 0xc3 at offset 21 of 23 is not printable ASCII"},
    {"", "Invalid message received (size=0)"},
    {"@HUGE", "the reply's size prefix says 4294967280 bytes, above the bound of 67108864"},
};

static void test_bad_replies(void **state)
{
    char wl[PATH_MAX]; /* tmp paths rotate through 8 buffers */
    snprintf(wl, sizeof wl, "%s", fbf_test_tmp_write("bad.swf", three_swf));
    for (size_t k = 0; k < sizeof bad_cases / sizeof *bad_cases; k++) {
        const char *script[] = {"2:$now|$now:N", bad_cases[k].reply, NULL};
        run_result r = run_v2(fbf_test_tmp_path("bad%zu.sock", k), script,
                              (const char *const[]){"--quiet", wl, NULL});
        if (r.rc != 2 || !strstr(r.err, bad_cases[k].needle))
            fail_msg("case %zu ('%s'): exit %d, expected 2 with '%s'; stderr:\n%s", k,
                     bad_cases[k].reply, r.rc, bad_cases[k].needle, r.err);
        /* One line, naming the message. */
        assert_non_null(strstr(r.err, "fastbf-replay: error: "));
        assert_non_null(strstr(r.err, "message #1 (S, now=0"));
        run_free(&r);
    }
    assert_true(sizeof bad_cases / sizeof *bad_cases >= 15);
    /* Its whole line for one of them. */
    const char *script[] = {"2:$now|$now:N", "2:$now|$now:J:w0!1=0-2", NULL};
    run_result r = run_v2(fbf_test_tmp_path("line.sock"), script,
                          (const char *const[]){"--quiet", wl, NULL});
    assert_string_equal(r.err, "fastbf-replay: error: invalid reply to message #1 (S, "
                               "now=0): reply event 0 (J): Invalid event received "
                               "('0.000000:J:w0!1=0-2'): Invalid job allocation received "
                               "('w0!1=0-2'): the job w0!1 size is 2 but at least 3 machines "
                               "were allocated\n");
    run_free(&r);
}

/* After Z only N; a scheduler that never starts anything deadlocks. */
static void test_end_and_deadlock(void **state)
{
    char wl[PATH_MAX];
    snprintf(
        wl, sizeof wl, "%s",
        fbf_test_tmp_write("single.swf",
                           "; MaxProcs: 1\n1 0 -1 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"));
    const char *after_z[] = {"2:$now|$now:N", "2:$now|$now:J:w0!1=0", "2:$now|$now:n:500",
                             NULL};
    run_result r = run_v2(fbf_test_tmp_path("z.sock"), after_z,
                          (const char *const[]){"--quiet", wl, NULL});
    assert_int_equal(r.rc, 2);
    assert_non_null(strstr(r.err, "message #2 (C, now=10)"));
    assert_non_null(strstr(r.err, "the simulation is over (Z was sent): its reply may hold N "
                                  "events only"));
    run_free(&r);
    const char *idle[] = {NULL};
    r = run_v2(fbf_test_tmp_path("idle.sock"), idle, (const char *const[]){"--quiet", wl, NULL});
    assert_int_equal(r.rc, 3);
    assert_non_null(strstr(r.err, "deadlock at now=0: 1 jobs wait, none runs"));
    run_free(&r);
    /* The last job rejected: Z alone, at the rejection's time. */
    const char *reject[] = {"2:$now|$now:N", "2:$now|$now:R:w0!1", NULL};
    r = run_v2(fbf_test_tmp_path("rej.sock"), reject, (const char *const[]){"--quiet", wl, NULL});
    assert_int_equal(r.rc, 0);
    assert_non_null(strstr(r.log, "\n3:0.000000|0.000000:Z\n"));
    run_free(&r);
}

static void test_options(void **state)
{
    const char *wl = fbf_test_tmp_write("opt.swf", three_swf);
    char redis_prefix[128];
    snprintf(redis_prefix, sizeof redis_prefix, "%s:pre", redis_addr());
    struct {
        const char *args[8];
        const char *needle;
    } cases[] = {
        {{"--protocol", "batsim2", "--scheduler", "true", wl}, "needs --redis HOST:PORT"},
        {{"--protocol", "batsim2", "--redis", redis_prefix, "--scheduler", "true", wl},
         "--redis takes HOST:PORT only: the key prefix is the socket's absolute path"},
        {{"--protocol", "batsim2", "--redis", redis_addr(), "--inproc", wl},
         "--endpoint and --inproc are batsim4's"},
        {{"--protocol", "batsim2", "--redis", redis_addr(), wl}, "give --scheduler CMD"},
        {{"--protocol", "batsim2", "--redis", redis_addr(), "--dynamic-jobs", "--scheduler",
          "true", wl},
         "--dynamic-jobs/--ack-dynamic-jobs is a Batsim v4 feature"},
        {{"--protocol", "batsim2", "--redis", redis_addr(), "--query-wait", "--scheduler",
          "true", wl},
         "--query-wait is a Batsim v4 feature"},
        {{"--protocol", "batsim3", "--inproc", wl}, "--protocol 'batsim3': expected batsim4"},
        {{"--socket", "/tmp/x.sock", "--inproc", wl}, "--socket goes with --protocol batsim2"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        fbf_test_replay_expect(cases[k].args, TIMEOUT_MS, 2, cases[k].needle, false);
    /* A job id the text protocol cannot carry. */
    const char *colon = fbf_test_tmp_write(
        "colon.json", "{\"nb_res\": 2, \"jobs\": [{\"id\": \"a:b\", \"subtime\": 0, "
                      "\"res\": 1, \"walltime\": 5, \"profile\": \"d\"}], \"profiles\": "
                      "{\"d\": {\"type\": \"delay\", \"delay\": 1}}}");
    fbf_test_replay_expect((const char *const[]){"--protocol", "batsim2", "--redis",
                                                 redis_addr(), "--scheduler", "true", colon,
                                                 NULL},
                           TIMEOUT_MS, 2, "job id 'w0!a:b' cannot be sent in the v2 text "
                           "protocol: it holds ':'", false);
    /* A file that is not a socket is left alone. */
    const char *plain = fbf_test_tmp_write("plain.txt", "keep me\n");
    fbf_test_replay_expect((const char *const[]){"--protocol", "batsim2", "--redis",
                                                 redis_addr(), "--socket", plain, wl, NULL},
                           TIMEOUT_MS, 2, "the file exists and is not a socket", false);
    char *kept = fbf_test_replay_read(plain);
    assert_string_equal(kept, "keep me\n");
    free(kept);
    /* A scheduler that exits at once is reported with its status. */
    fbf_test_replay_expect((const char *const[]){"--protocol", "batsim2", "--redis",
                                                 redis_addr(), "--scheduler", "exit 7", wl,
                                                 NULL},
                           TIMEOUT_MS, 2, "the scheduler exited with status 7 before connection",
                           false);
}

int main(int argc, char **argv)
{
    /* --v2-sched PORT --socket PATH: this binary as the scheduler a
     * replay starts (test_kth_spawned_as_v4). */
    if (argc == 5 && strcmp(argv[1], "--v2-sched") == 0 && strcmp(argv[3], "--socket") == 0) {
        printf("v2-sched socket: %s\n", argv[4]);
        fflush(stdout);
        return fbf_test_v2s_main(argv[4], atoi(argv[2]));
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_fcfs_as_v4),
        cmocka_unit_test(test_kth_spawned_as_v4),
        cmocka_unit_test(test_redis_keys),
        cmocka_unit_test(test_call_and_energy),
        cmocka_unit_test(test_bad_replies),
        cmocka_unit_test(test_end_and_deadlock),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
