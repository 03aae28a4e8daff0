/*
 * test_replay_redis: Batsim's Redis mode end to end, against a real
 * redis-server started for this suite (support/redis_server).
 *
 *  - fastbf-replay --redis plays Batsim (descriptions in Redis, JOB_SUBMITTED
 *    with job_id only) and the real fastbf process decides over ZeroMQ:
 *    under fcfs, easy and conservative, out_jobs.csv is the very file of
 *    the same replay without Redis (so every start time is the same), on
 *    the first 3000 jobs of the KTH trace, and under fcfs and easy on a
 *    burst of 2000 jobs submitted in one message; the keys Batsim sets are
 *    in the store.
 *  - dynamic registration in Redis mode: fastbf --register-workload
 *    against fastbf-replay --redis --dynamic-jobs (acknowledgements off
 *    and on) gives the out_jobs.csv of the same registrations without
 *    Redis, and the job and profile keys fastbf wrote are in the store;
 *  - fastbf as a process refuses, with its one-line message and exit 1,
 *    a job whose key is missing and a server it cannot reach;
 *  - fastbf-replay refuses a server it cannot reach, a bad --redis,
 *    --forward-profiles with --redis, and, from a scripted scheduler (a
 *    REP socket of this test), a REGISTER_JOB whose key is missing,
 *    malformed, wrong, or names a profile missing from the store, and any
 *    REGISTER_PROFILE in Redis mode; exit 2, the key named.
 * In-process coverage of the session and the store: test_redis.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>
#include <zmq.h>

#include "support/redis_server.h"
#include "support/replay_sched.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 120000
#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"

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

/* fastbf-replay with args, which must succeed. */
static void replay_ok(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("fastbf-replay exit %d: %s", rc, err);
    free(out);
    free(err);
}

/* Replays wl (extra: "--max-jobs" "N" or NULL NULL) with fastbf under
 * policy, without Redis and with it, and requires the same out_jobs.csv. */
static void same_as_plain(const char *wl, const char *max_jobs, const char *policy,
                          const char *prefix)
{
    char cmd[600], redis[64];
    snprintf(cmd, sizeof cmd, "%s --policy %s", fbf_test_replay_fastbf_path(), policy);
    snprintf(redis, sizeof redis, "%s:%s", fbf_test_redis_addr(fbf_test_redis_shared()),
             prefix);
    const char *plain_dir = fbf_test_tmp_path("plain-%s-%s", prefix, policy);
    const char *redis_dir = fbf_test_tmp_path("redis-%s-%s", prefix, policy);
    const char *mj = max_jobs ? "--max-jobs" : NULL;
    replay_ok((const char *const[]){"--quiet", "--scheduler", cmd, "--out", plain_dir, wl, mj,
                                    max_jobs, NULL});
    replay_ok((const char *const[]){"--quiet", "--redis", redis, "--scheduler", cmd, "--out",
                                    redis_dir, wl, mj, max_jobs, NULL});
    char *a = fbf_test_replay_read(fbf_test_tmp_path("plain-%s-%s/out_jobs.csv", prefix, policy));
    char *b = fbf_test_replay_read(fbf_test_tmp_path("redis-%s-%s/out_jobs.csv", prefix, policy));
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0) {
        size_t line = 1, i = 0;
        for (; a[i] && a[i] == b[i]; i++)
            line += a[i] == '\n';
        fail_msg("%s under %s: out_jobs.csv differs with Redis from line %zu", wl, policy,
                 line);
    }
    assert_true(fbf_test_count_lines(a) > 1);
    free(a);
    free(b);
}

static void test_kth_same_starts(void **state)
{
    const char *policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++)
        same_as_plain(KTH, "3000", policies[p], "kth");

    /* What Batsim would have set: the platform size, and the first job's
     * description and profile under their keys. */
    const fbf_test_redis *srv = fbf_test_redis_shared();
    char *nb = fbf_test_redis_get(srv, "kth:nb_res");
    assert_non_null(nb);
    assert_string_equal(nb, "100");
    free(nb);
    char *job = fbf_test_redis_get(srv, "kth:job_w0!15");
    assert_non_null(job);
    cJSON *j = cJSON_Parse(job);
    assert_non_null(j);
    assert_string_equal(cJSON_GetObjectItem(j, "id")->valuestring, "w0!15");
    assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "res")));
    const char *profile = cJSON_GetObjectItem(j, "profile")->valuestring;
    char key[128];
    snprintf(key, sizeof key, "kth:profile_w0!%s", profile);
    char *prof = fbf_test_redis_get(srv, key);
    if (!prof || !strstr(prof, "\"type\":\"delay\""))
        fail_msg("%s: %s", key, prof ? prof : "missing");
    free(prof);
    cJSON_Delete(j);
    free(job);
}

/* 2000 jobs at time 0 on 64 resources: one message names them all, so
 * fastbf reads 2000 keys in one pipelined batch. */
static void test_burst_same_starts(void **state)
{
    char *text = malloc(2000 * 80 + 32);
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "; MaxProcs: 64\n");
    for (int i = 1; i <= 2000; i++)
        len += (size_t)sprintf(text + len, "%d 0 -1 %d %d -1 -1 %d %d -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
                               i, 10 + i % 97, 1 + i % 13, 1 + i % 13, 20 + i % 131);
    char wl[256]; /* fbf_test_tmp_write()'s buffer is reused later */
    snprintf(wl, sizeof wl, "%s", fbf_test_tmp_write("burst.swf", text));
    free(text);
    /* Conservative backfilling of 2000 waiting jobs costs tens of seconds
     * with or without Redis; the KTH replays cover it. */
    same_as_plain(wl, NULL, "fcfs", "burst");
    same_as_plain(wl, NULL, "easy", "burst");
}

/* The in-process session reads the same store (--inproc --redis). */
static void test_inproc_same_starts(void **state)
{
    char redis[64];
    snprintf(redis, sizeof redis, "%s:inp", fbf_test_redis_addr(fbf_test_redis_shared()));
    const char *a = fbf_test_tmp_path("inp-plain"), *b = fbf_test_tmp_path("inp-redis");
    replay_ok((const char *const[]){"--quiet", "--inproc", "--policy", "easy", "--out", a,
                                    "--max-jobs", "1000", KTH, NULL});
    replay_ok((const char *const[]){"--quiet", "--inproc", "--policy", "easy", "--redis", redis,
                                    "--out", b, "--max-jobs", "1000", KTH, NULL});
    char *x = fbf_test_replay_read(fbf_test_tmp_path("inp-plain/out_jobs.csv"));
    char *y = fbf_test_replay_read(fbf_test_tmp_path("inp-redis/out_jobs.csv"));
    assert_non_null(x);
    assert_non_null(y);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

/* ---- refusals ----------------------------------------------------------- */

static const char *redis_begins(int port, const char *prefix)
{
    return fbf_test_msg(
        "{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
        "'nb_resources':4,'nb_compute_resources':4,'config':{'redis-enabled':true,"
        "'redis-hostname':'127.0.0.1','redis-port':%d,'redis-prefix':'%s'}}}]}",
        port, prefix);
}

/* Runs fastbf, sends good (answered) then bad (if not NULL), and expects
 * exit 1 with exactly the line want on stderr. */
static void fastbf_refuses_with(const char *const *args, const char *good, const char *bad,
                                const char *want)
{
    fbf_test_peer p;
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    if (bad) {
        char *reply = NULL;
        long len = fbf_test_peer_request(&p, good, &reply, 20000);
        if (len < 0)
            fail_msg("no reply to %s (%ld)", good, len);
        free(reply);
    } else {
        bad = good;
    }
    assert_int_equal(fbf_test_peer_send(&p, bad), 0);
    int rc = fbf_test_peer_wait(&p, 20000);
    char *err = fbf_test_peer_stderr(&p);
    char line[400];
    snprintf(line, sizeof line, "%s\n", want);
    if (rc != 1 || !err || strcmp(err, line) != 0)
        fail_msg("exit %d, stderr \"%s\"; want exit 1 and \"%s\"", rc, err ? err : "", want);
    free(err);
    fbf_test_peer_stop(&p);
}

static void fastbf_refuses(const char *good, const char *bad, const char *want)
{
    fastbf_refuses_with((const char *const[]){NULL}, good, bad, want);
}

static void test_fastbf_missing_key(void **state)
{
    int port = fbf_test_redis_shared()->port;
    fastbf_refuses(redis_begins(port, "miss"),
                   "{\"now\":1,\"events\":[{\"timestamp\":1,\"type\":\"JOB_SUBMITTED\","
                   "\"data\":{\"job_id\":\"w0!1\"}}]}",
                   "fastbf: event 0 (JOB_SUBMITTED): Redis key \"miss:job_w0!1\" does not "
                   "exist (job w0!1 has no description)");
}

static void test_fastbf_unreachable(void **state)
{
    int dead = fbf_test_redis_dead_port();
    char want[256];
    snprintf(want, sizeof want,
             "fastbf: event 0 (SIMULATION_BEGINS): cannot connect to Redis at 127.0.0.1:%d "
             "(host 127.0.0.1, port %d): Connection refused",
             dead, dead);
    fastbf_refuses(redis_begins(dead, "x"), NULL, want);
}

static void test_replayer_refusals(void **state)
{
    int dead = fbf_test_redis_dead_port();
    char addr[64], want[256];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", dead);
    snprintf(want, sizeof want,
             "fastbf-replay: --redis: cannot connect to Redis at 127.0.0.1:%d (host 127.0.0.1, "
             "port %d): Connection refused\n",
             dead, dead);
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--redis", addr, "--inproc", "--max-jobs",
                                                       "10", KTH, NULL},
                                 TIMEOUT_MS, &out, &err);
    assert_int_equal(rc, 2);
    assert_string_equal(err, want);
    free(out);
    free(err);
    /* In Redis mode JOB_SUBMITTED has no profile to forward. */
    rc = fbf_test_replay_run(
        (const char *const[]){"--redis", addr, "--forward-profiles", "--inproc", KTH, NULL},
        TIMEOUT_MS, &out, &err);
    assert_int_equal(rc, 2);
    if (!strstr(err, "--redis does not go with --forward-profiles"))
        fail_msg("--forward-profiles: %s", err);
    free(out);
    free(err);
    const char *bad[] = {"localhost", "localhost:", ":6379", "h:0", "h:65536", "h:12x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        rc = fbf_test_replay_run((const char *const[]){"--redis", bad[i], "--inproc", KTH, NULL},
                                 TIMEOUT_MS, &out, &err);
        assert_int_equal(rc, 2);
        if (!strstr(err, "expected HOST:PORT or HOST:PORT:PREFIX"))
            fail_msg("--redis %s: %s", bad[i], err);
        free(out);
        free(err);
    }
}


/* ---- dynamic registration in Redis mode --------------------------------- */

/* fastbf registers a workload (SWF, registered under workload "dyn")
 * through Redis; the schedule is the one without Redis. */
static void test_submitter_same_starts(void **state)
{
    /* 300 jobs over 8 resources, subtimes spread so that registrations
     * happen in many messages, some of them several at once. */
    char *text = malloc(300 * 80 + 32);
    assert_non_null(text);
    size_t len = (size_t)sprintf(text, "; MaxProcs: 8\n");
    for (int i = 1; i <= 300; i++)
        len +=
            (size_t)sprintf(text + len, "%d %d -1 %d %d -1 -1 %d %d -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
                            i, (i / 3) * 7, 5 + i % 41, 1 + i % 8, 1 + i % 8, 10 + i % 53);
    char swf[256], empty[256];
    snprintf(swf, sizeof swf, "%s", fbf_test_tmp_write("reg.swf", text));
    free(text);
    snprintf(empty, sizeof empty, "%s",
             fbf_test_tmp_write("empty.json", "{\"nb_res\": 8, \"jobs\": [], \"profiles\": {}}"));
    char cmd[600], redis[64];
    snprintf(cmd, sizeof cmd, "%s --policy easy --register-workload %s",
             fbf_test_replay_fastbf_path(), swf);
    const fbf_test_redis *srv = fbf_test_redis_shared();
    for (int ack = 0; ack < 2; ack++) {
        const char *mode = ack ? "--ack-dynamic-jobs" : "--dynamic-jobs";
        char plain_dir[256], redis_dir[256];
        snprintf(plain_dir, sizeof plain_dir, "%s", fbf_test_tmp_path("reg-plain-%d", ack));
        snprintf(redis_dir, sizeof redis_dir, "%s", fbf_test_tmp_path("reg-redis-%d", ack));
        snprintf(redis, sizeof redis, "%s:reg%d", fbf_test_redis_addr(srv), ack);
        replay_ok((const char *const[]){"--quiet", mode, "--scheduler", cmd, "--out", plain_dir,
                                        empty, NULL});
        replay_ok((const char *const[]){"--quiet", mode, "--redis", redis, "--scheduler", cmd,
                                        "--out", redis_dir, empty, NULL});
        char *a = fbf_test_replay_read(fbf_test_tmp_path("reg-plain-%d/out_jobs.csv", ack));
        char *b = fbf_test_replay_read(fbf_test_tmp_path("reg-redis-%d/out_jobs.csv", ack));
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(fbf_test_count_lines(a), 301);
        if (strcmp(a, b) != 0)
            fail_msg("%s: out_jobs.csv differs with Redis", mode);
        assert_true(fbf_test_replay_summary(redis_dir, "jobs.registered") == 300);
        free(a);
        free(b);

        /* What fastbf wrote: job 10 (res 3, subtime 21). */
        char key[128];
        snprintf(key, sizeof key, "reg%d:job_dyn!10", ack);
        char *job = fbf_test_redis_get(srv, key);
        if (!job)
            fail_msg("%s is not in the store", key);
        cJSON *j = cJSON_Parse(job);
        assert_non_null(j);
        assert_string_equal(cJSON_GetObjectItem(j, "id")->valuestring, "dyn!10");
        assert_true(cJSON_GetObjectItem(j, "res")->valuedouble == 3);
        assert_true(cJSON_GetObjectItem(j, "subtime")->valuedouble == 21);
        /* Its profile came by REGISTER_PROFILE: Batsim reads none from the
         * store. */
        assert_non_null(cJSON_GetObjectItem(j, "profile"));
        cJSON_Delete(j);
        free(job);
    }
}

/* A scripted scheduler: a REP socket that answers SIMULATION_BEGINS with
 * the given events (stamped 0) and every later message with none. */
typedef struct script {
    void *ctx, *sock;
    const char *events;
    int stop;
    pthread_t th;
    char ep[128];
} script;

static void *script_main(void *arg)
{
    script *s = arg;
    char buf[8192], reply[4096];
    bool first = true;
    while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
        int n = zmq_recv(s->sock, buf, sizeof buf - 1, 0);
        if (n < 0)
            continue; /* the receive timeout: look at stop again */
        buf[n < (int)sizeof buf - 1 ? n : (int)sizeof buf - 1] = '\0';
        cJSON *m = cJSON_Parse(buf);
        double now = m ? cJSON_GetObjectItem(m, "now")->valuedouble : 0;
        cJSON_Delete(m);
        snprintf(reply, sizeof reply, "{\"now\":%.6f,\"events\":[%s]}", now,
                 first ? s->events : "");
        first = false;
        zmq_send(s->sock, reply, strlen(reply), 0);
    }
    return NULL;
}

/* fastbf-replay --redis HOST:PORT:rf --dynamic-jobs against a scheduler
 * whose first reply holds events: exit 2, want in the error. */
static void replayer_refuses(const char *events, const char *want)
{
    script s = {.events = fbf_test_msg("%s", events)};
    int timeout = 100;
    s.ctx = zmq_ctx_new();
    s.sock = zmq_socket(s.ctx, ZMQ_REP);
    size_t eplen = sizeof s.ep;
    assert_int_equal(zmq_setsockopt(s.sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout), 0);
    assert_int_equal(zmq_bind(s.sock, "tcp://127.0.0.1:*"), 0);
    assert_int_equal(zmq_getsockopt(s.sock, ZMQ_LAST_ENDPOINT, s.ep, &eplen), 0);
    assert_int_equal(pthread_create(&s.th, NULL, script_main, &s), 0);
    char redis[64];
    snprintf(redis, sizeof redis, "%s:rf", fbf_test_redis_addr(fbf_test_redis_shared()));
    const char *wl =
        fbf_test_tmp_write("rf.json", "{\"nb_res\": 4, \"jobs\": [], \"profiles\": {}}");
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--endpoint", s.ep, "--quiet", "--redis",
                                                       redis, "--dynamic-jobs", "--timeout",
                                                       "20", wl, NULL},
                                 TIMEOUT_MS, &out, &err);
    __atomic_store_n(&s.stop, 1, __ATOMIC_RELEASE);
    pthread_join(s.th, NULL);
    int linger = 0;
    zmq_setsockopt(s.sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_close(s.sock);
    zmq_ctx_term(s.ctx);
    if (rc != 2 || !err || !strstr(err, want))
        fail_msg("%s: exit %d (want 2), stderr: %s (want '%s')", events, rc, err ? err : "",
                 want);
    free(out);
    free(err);
}

#define REG(id) "{'timestamp':0,'type':'REGISTER_JOB','data':{'job_id':'" id "'}}"

#define PROF_P "{'timestamp':0,'type':'REGISTER_PROFILE','data':{'workload_name':'dyn'," \
               "'profile_name':'p','profile':{'type':'delay','delay':5}}},"

/* Batsim 4.2.1 with Redis reads a registered job from the store, but its
 * profile only from REGISTER_PROFILE, and refuses a data.job. */
static void test_replayer_registration_refusals(void **state)
{
    const fbf_test_redis *srv = fbf_test_redis_shared();
    replayer_refuses(PROF_P REG("dyn!nokey"), "(REGISTER_JOB, job dyn!nokey): Redis key "
                                              "\"rf:job_dyn!nokey\" does not exist");
    replayer_refuses("{'timestamp':0,'type':'REGISTER_JOB','data':{'job_id':'dyn!10','job':{"
                     "'id':'dyn!10','subtime':0,'res':1,'walltime':20,'profile':'p'}}}",
                     "(REGISTER_JOB, job dyn!10): Invalid JSON message: in event 0 "
                     "(REGISTER_JOB): 'job' object is given but redis seems enabled...");
    fbf_test_redis_set(srv, "rf:job_dyn!bad", "{\"id\":");
    replayer_refuses(PROF_P REG("dyn!bad"), "Redis key \"rf:job_dyn!bad\": malformed JSON");
    /* A profile the scheduler wrote into the store is not read. */
    fbf_test_redis_set(srv, "rf:profile_dyn!ghost", "{\"type\":\"delay\",\"delay\":3}");
    fbf_test_redis_set(srv, "rf:job_dyn!np",
                       "{\"id\":\"dyn!np\",\"subtime\":0,\"res\":1,\"profile\":\"ghost\"}");
    replayer_refuses(PROF_P REG("dyn!np"), "Invalid JSON job submitted by the scheduler: the "
                                           "profile ghost for job dyn!np does not exist");
    /* No REGISTER_PROFILE made workload dyn. */
    replayer_refuses(REG("dyn!np"), "Internal error: Workload 'dyn' should exist.");
    /* The same field checks as data.job. */
    fbf_test_redis_set(srv, "rf:job_dyn!r0",
                       "{\"id\":\"dyn!r0\",\"subtime\":0,\"res\":1.5,\"profile\":\"p\"}");
    replayer_refuses(PROF_P REG("dyn!r0"), "job dyn!r0 has a non-number 'res' field");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth_same_starts),
        cmocka_unit_test(test_burst_same_starts),
        cmocka_unit_test(test_inproc_same_starts),
        cmocka_unit_test(test_fastbf_missing_key),
        cmocka_unit_test(test_fastbf_unreachable),
        cmocka_unit_test(test_replayer_refusals),
        cmocka_unit_test(test_submitter_same_starts),
        cmocka_unit_test(test_replayer_registration_refusals),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, teardown);
}
