/*
 * test_replay_v5: fastbf-replay --protocol batsim5, Batsim 5's side of
 * the batprotocol in JSON, against the tests' EDC (support/v5_edc, written
 * from the protocol's text):
 *
 *  - the FCFS EDC as a process (a thread behind a REP socket, --endpoint;
 *    and this binary started by the replayer, --scheduler) and as a shared
 *    library (--edc-library), on a small workload and 400 KTH-SP2 jobs,
 *    gets the out_jobs.csv of the v4 replay under fastbf's in-process fcfs,
 *    byte for byte;
 *  - what the replayer sends: the init data, the NUL that ends every
 *    message, the shapes of SimulationBeginsEvent, JobSubmittedEvent,
 *    JobCompletedEvent, AllStaticJobsHaveBeenSubmittedEvent,
 *    SimulationEndsEvent, and --record;
 *  - requested calls (one-shot, in seconds and milliseconds; periodic,
 *    finite and stopped), kills and their JobsKilledEvent,
 *    ForceSimulationStopEvent, host switches and pstate changes under
 *    --energy, forwarded profiles;
 *  - fastbf's own EDC library (libfastbf-edc) gets the out_jobs.csv of
 *    the v4 replay of its policy, and with energy saving the jobs and the
 *    joules of the fastbf process over v4;
 *  - library failures and the options batsim5 refuses.
 * The bad replies are test_replay_v5_errors.
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

#include "support/replay_run.h"
#include "support/v5_edc.h"
#include "support/zmq_peer.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define TIMEOUT_MS 120000
#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define SELF FBF_BUILD_DIR "/test_replay_v5"
#define LIB FBF_BUILD_DIR "/libfbf_test_edc_fcfs.so"

/* Jobs 1 and 2 at 0 (2 and 1 hosts), job 3 at 100, on 4 hosts. */
static const char three_swf[] = "; MaxProcs: 4\n"
                                "1 0 -1 10 2 -1 -1 2 10\n"
                                "2 0 -1 5 1 -1 -1 1 5\n"
                                "3 100 -1 5 1 -1 -1 1 5\n";

typedef struct run_result {
    int rc;
    char *out, *err, *log;
} run_result;

static void result_free(run_result *r)
{
    free(r->out);
    free(r->err);
    free(r->log);
}

/* fastbf-replay --protocol batsim5 --endpoint <a thread EDC with script>
 * args... */
static run_result against(const char *const *script, const char *const *args)
{
    char ep[128];
    fbf_test_v5edc_thread *t = fbf_test_v5edc_thread_start(script, ep, sizeof ep);
    assert_non_null(t);
    const char *all[40] = {"--protocol", "batsim5", "--endpoint", ep};
    size_t n = 4;
    for (size_t k = 0; args[k] && n < 39; k++)
        all[n++] = args[k];
    all[n] = NULL;
    run_result r = {0};
    r.rc = fbf_test_replay_run(all, TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_v5edc_thread_stop(t);
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

static void run_ok(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("fastbf-replay exit %d: %s", rc, err);
    free(out);
    free(err);
}

/* The v4 replay of wl under fastbf's in-process fcfs, into dir. */
static void v4_fcfs(const char *wl, const char *dir, const char *max_jobs)
{
    run_ok((const char *const[]){"--quiet", "--inproc", "--policy", "fcfs", "--out", dir, wl,
                                 max_jobs ? "--max-jobs" : NULL, max_jobs, NULL});
}

static char *write_three(const char *dir)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/three.swf", dir);
    assert_int_equal(fbf_test_replay_write(path, three_swf, 0), 0);
    return path;
}

/* The first line of log holding needle, malloc'ed, as JSON; NULL if none. */
static cJSON *message_with(const char *log, const char *needle)
{
    const char *p = strstr(log, needle);
    if (!p)
        return NULL;
    while (p > log && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    if (n >= 5 && strncmp(p + n - 5, "<NUL>", 5) == 0)
        n -= 5;
    return cJSON_ParseWithLength(p, n);
}

/* events[k].event of message m whose event_type is type, or NULL. */
static const cJSON *event_of(const cJSON *m, const char *type)
{
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(m, "events");
    for (const cJSON *e = evs ? evs->child : NULL; e; e = e->next) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "event_type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
            return cJSON_GetObjectItemCaseSensitive(e, "event");
    }
    return NULL;
}

static double num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

static const char *str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "(none)";
}

static void test_small_process_as_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700];
    const char *wl = write_three(dir);
    snprintf(d4, sizeof d4, "%s/v4", dir);
    snprintf(d5, sizeof d5, "%s/v5", dir);
    v4_fcfs(wl, d4, NULL);
    run_result r = against(NULL, (const char *const[]){"--out", d5, "--edc-init", "hello world",
                                                       wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    expect_same_file(a, b);
    /* The init data comes first, unchanged; every later message ends with
     * a NUL; the last one is SimulationEndsEvent alone. */
    assert_true(strncmp(r.log, "init:hello world\n", 17) == 0);
    int lines = 0;
    for (const char *p = strchr(r.log, '\n') + 1; *p; p = strchr(p, '\n') + 1, lines++)
        assert_true(strncmp(p + strcspn(p, "\n") - 5, "<NUL>", 5) == 0);
    assert_int_equal(lines, 7);
    assert_non_null(strstr(r.log, "{\"now\":105.0,\"events\":[{\"timestamp\":105.0,\"event_type\":"
                                  "\"SimulationEndsEvent\",\"event\":{}}]}<NUL>\n"));
    assert_non_null(strstr(r.out, "3 submitted, 3 completed"));
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_small_library_as_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700];
    const char *wl = write_three(dir);
    snprintf(d4, sizeof d4, "%s/v4", dir);
    v4_fcfs(wl, d4, NULL);
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    /* Decisions with and without a NUL counted in their size. */
    const char *inits[] = {"fcfs", "no-nul"};
    for (int k = 0; k < 2; k++) {
        snprintf(d5, sizeof d5, "%s/v5-%d", dir, k);
        run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", LIB,
                                     "--edc-init", inits[k], "--out", d5, wl, NULL});
        snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
        expect_same_file(a, b);
    }
    fbf_test_replay_rmdir(dir);
}

static void test_kth_three_ways_as_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700];
    snprintf(d4, sizeof d4, "%s/v4", dir);
    v4_fcfs(KTH, d4, "400");
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    /* The EDC as a library, as this binary started by the replayer
     * ({endpoint} replaced), and as a thread. */
    snprintf(d5, sizeof d5, "%s/lib", dir);
    run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", LIB,
                                 "--out", d5, "--max-jobs", "400", KTH, NULL});
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    expect_same_file(a, b);
    snprintf(d5, sizeof d5, "%s/spawn", dir);
    run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--scheduler",
                                 SELF " --v5-edc {endpoint}", "--out", d5, "--max-jobs", "400",
                                 KTH, NULL});
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    expect_same_file(a, b);
    snprintf(d5, sizeof d5, "%s/thread", dir);
    run_result r = against(NULL, (const char *const[]){"--quiet", "--out", d5, "--max-jobs",
                                                       "400", KTH, NULL});
    assert_int_equal(r.rc, 0);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    expect_same_file(a, b);
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_message_shapes(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), rec[600];
    const char *wl = write_three(dir);
    snprintf(rec, sizeof rec, "%s/rec.txt", dir);
    /* A hello that asks for every profile forward. */
    const char *script[] = {
        "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{"
        "'batprotocol_version':'1.0.0','decision_component_name':'t',"
        "'decision_component_version':'1','decision_component_commit':'',"
        "'requested_simulation_features':{'forward_profiles_on_job_submission':true,"
        "'forward_profiles_on_simulation_begins':true}}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--quiet", "--record", rec, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    cJSON *m = message_with(r.log, "SimulationBeginsEvent");
    const cJSON *e = event_of(m, "SimulationBeginsEvent");
    assert_non_null(e);
    assert_true(num(e, "host_number", NULL) == 4);
    assert_true(num(e, "computation_host_number", NULL) == 4);
    assert_true(num(e, "storage_host_number", NULL) == 0);
    const cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "computation_hosts"), 3);
    assert_true(num(h, "id", NULL) == 3);
    assert_string_equal(str(h, "name", NULL), "r3");
    assert_string_equal(str(h, "state", NULL), "IDLE");
    assert_true(num(h, "pstate", NULL) == 0 && num(h, "pstate_count", NULL) == 1);
    cJSON *ctx = cJSON_Parse(str(e, "batsim_execution_context_json", NULL));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ctx, "socket_endpoint")));
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(ctx, "socket_endpoint")->valuestring,
                           "tcp://127.0.0.1:"));
    cJSON_Delete(ctx);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "workloads"), 0);
    assert_string_equal(str(w, "name", NULL), "w0");
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "profiles"), 0);
    assert_string_equal(str(p, "id", NULL), "w0!delay_10");
    assert_string_equal(str(p, "profile_type", NULL), "DelayProfile");
    assert_true(num(p, "profile", "delay") == 10);
    cJSON_Delete(m);

    m = message_with(r.log, "\"job_id\":\"w0!1\",\"job\"");
    e = event_of(m, "JobSubmittedEvent");
    assert_non_null(e);
    assert_true(num(e, "job", "resource_request") == 2);
    assert_true(num(e, "job", "walltime") == 10);
    assert_string_equal(str(e, "job", "profile_id"), "w0!delay_10");
    assert_string_equal(str(e, "job", "extra_data"), "");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(e, "job"), "rigid")));
    assert_true(num(e, "submission_time", NULL) == 0);
    assert_string_equal(str(e, "profile", "id"), "w0!delay_10");
    assert_true(num(cJSON_GetObjectItemCaseSensitive(e, "profile"), "profile", "delay") == 10);
    cJSON_Delete(m);

    m = message_with(r.log, "\"job_id\":\"w0!2\",\"state\"");
    e = event_of(m, "JobCompletedEvent");
    assert_string_equal(str(e, "state", NULL), "COMPLETED_SUCCESSFULLY");
    assert_true(num(e, "return_code", NULL) == 0);
    assert_true(num(m, "now", NULL) == 5);
    cJSON_Delete(m);
    m = message_with(r.log, "AllStaticJobsHaveBeenSubmittedEvent");
    assert_true(num(m, "now", NULL) == 100);
    cJSON_Delete(m);

    /* --record: the init data, the hello, then each message and reply. */
    char *text = fbf_test_replay_read(rec);
    assert_non_null(text);
    assert_true(strncmp(text, "> \n< {\"now\":0,", 14) == 0);
    assert_int_equal(fbf_test_count_lines(text), 2 + 2 * 7);
    free(text);
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}


/* How many lines of log hold needle. */
static int count(const char *log, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(log, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

static void test_calls(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    const char *wl = write_three(dir);
    /* At SimulationBeginsEvent: a call at 50 s, one at 70000 ms, one in
     * the past (at once), three periodic ones every 20 s, and an infinite
     * one every 40 s, stopped in the reply to the third message. */
    const char *script[] = {
        "",
        "{'now':$now,'events':["
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'c50',"
        "'when_type':'OneShot','when':{'time':50}}},"
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'c70',"
        "'when_type':'OneShot','when':{'time':70000,'time_unit':'Millisecond'}}},"
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'past',"
        "'when_type':'OneShot','when':{'time':0}}},"
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'p20',"
        "'when_type':'Periodic','when':{'period':20,'mode_type':'FinitePeriodNumber',"
        "'mode':{'nb_periods':3}}}},"
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'inf',"
        "'when_type':'Periodic','when':{'period':40000,'time_unit':'Millisecond',"
        "'mode_type':'Infinite','mode':{}}}}]}",
        "{'now':$now,'events':[]}",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'StopCallMeLaterEvent',"
        "'event':{'call_me_later_id':'inf'}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--quiet", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":50.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"c50\",\"last_periodic_call\""
                                  ":false}}"));
    assert_non_null(strstr(r.log, "{\"timestamp\":70.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"c70\""));
    assert_non_null(strstr(r.log, "{\"timestamp\":0.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"past\""));
    assert_int_equal(count(r.log, "\"call_me_later_id\":\"p20\""), 3);
    assert_non_null(strstr(r.log, "{\"timestamp\":60.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"p20\",\"last_periodic_call\""
                                  ":true}}"));
    assert_int_equal(count(r.log, "\"last_periodic_call\":true"), 1);
    /* Stopped in the reply to the message at 5 s, before its first call. */
    assert_int_equal(count(r.log, "\"call_me_later_id\":\"inf\""), 0);
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_kill(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), out[600];
    const char *wl = write_three(dir);
    snprintf(out, sizeof out, "%s/o", dir);
    /* Jobs 1 and 2 start at 0; at 5 s (job 2 done), job 1 is killed, named
     * twice: once in the acknowledgement. */
    const char *script[] = {
        "", "{'now':$now,'events':[]}",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'ExecuteJobEvent','event':{"
        "'job_id':'w0!1','allocation':{'host_allocation':'0-1','executor_placement_type':"
        "'PredefinedExecutorPlacementStrategyWrapper','executor_placement':{}}}},"
        "{'timestamp':$now,'event_type':'ExecuteJobEvent','event':{'job_id':'w0!2','allocation':"
        "{'host_allocation':'2','executor_placement_type':'CustomExecutorToHostMapping',"
        "'executor_placement':{'mapping':[0]}}}}]}",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'KillJobsEvent','event':{"
        "'job_ids':['w0!1','w0!1']}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--quiet", "--out", out, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":5.0,\"event_type\":\"JobCompletedEvent\","
                                  "\"event\":{\"job_id\":\"w0!1\",\"state\":\"COMPLETED_KILLED\","
                                  "\"return_code\":-1}},{\"timestamp\":5.0,\"event_type\":"
                                  "\"JobsKilledEvent\",\"event\":{\"job_ids\":[\"w0!1\"],"
                                  "\"progresses\":[{\"job_id\":\"w0!1\",\"wrapper\":{"
                                  "\"kill_progress_type\":\"KillProgressAtomicProfile\","
                                  "\"kill_progress\":{\"profile_id\":\"w0!delay_10\","
                                  "\"progress\":0.5}}}]}}"));
    char *st = fbf_test_replay_csv_text(out, "1", 7);
    assert_non_null(st);
    assert_string_equal(st, "COMPLETED_KILLED");
    free(st);
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_force_stop(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), out[600];
    const char *wl = write_three(dir);
    snprintf(out, sizeof out, "%s/o", dir);
    /* Job 1 starts, then the EDC stops everything in the same reply: the
     * call after the stop is dropped, and SimulationEndsEvent comes next. */
    const char *script[] = {
        "", "{'now':$now,'events':[]}",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'ExecuteJobEvent','event':{"
        "'job_id':'w0!1','allocation':{'host_allocation':'0-1','executor_placement_type':"
        "'PredefinedExecutorPlacementStrategyWrapper','executor_placement':{'strategy':"
        "'FillOneHostCoresFirst'}}}},"
        "{'timestamp':$now,'event_type':'ForceSimulationStopEvent','event':{}},"
        "{'timestamp':$now,'event_type':'CallMeLaterEvent','event':{'call_me_later_id':'x',"
        "'when_type':'OneShot','when':{'time':1}}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--out", out, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    int lines = fbf_test_count_lines(r.log);
    assert_int_equal(lines, 4); /* init, begins, submissions, ends */
    assert_non_null(strstr(r.log, "{\"now\":0.0,\"events\":[{\"timestamp\":0.0,\"event_type\":"
                                  "\"SimulationEndsEvent\",\"event\":{}}]}<NUL>\n"));
    assert_non_null(strstr(r.out, "TRUNCATED"));
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_energy_switch(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    const char *wl = write_three(dir);
    /* Host 3 goes to sleep at the start (2 s), and back at 100 s (3 s). */
    const char *script[] = {
        "",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'TurnOnOffHostsEvent','event':{"
        "'host_ids':'3','state':1}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--quiet", "--energy",
                                                          "--switch-delays", "2:3", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":2.0,\"event_type\":\"HostsTurnedOnOffEvent\","
                                  "\"event\":{\"host_ids\":\"3\",\"state\":1}}"));
    cJSON *m = message_with(r.log, "SimulationBeginsEvent");
    const cJSON *h = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(event_of(m, "SimulationBeginsEvent"), "computation_hosts"),
        0);
    assert_true(num(h, "pstate_count", NULL) == 4);
    const cJSON *prop = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "properties"), 2);
    assert_string_equal(str(prop, "key", NULL), "sleep_pstates");
    assert_string_equal(str(prop, "value", NULL), "1:2:3");
    cJSON_Delete(m);
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_energy_pstate_change(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    const char *wl = write_three(dir);
    /* Host 3 to the sleep pstate at once, whatever the switch delays. */
    const char *script[] = {
        "",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'ChangeHostsPStateEvent','event':{"
        "'host_ids':'3','pstate':1}}]}",
        NULL};
    run_result r = against(script, (const char *const[]){"--quiet", "--energy",
                                                          "--switch-delays", "2:3", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":0.0,\"event_type\":\"HostsPStateChangedEvent\","
                                  "\"event\":{\"host_ids\":\"3\",\"pstate\":1}}"));
    result_free(&r);
    fbf_test_replay_rmdir(dir);
}

/* fastbf's own EDC library (libfastbf-edc, when built), against the v4
 * replay of the same policy: in process, and with energy saving against
 * the fastbf process over v4. */
static void test_fastbf_edc_as_v4(void **state)
{
    (void)state;
    const char *edc = FBF_BUILD_DIR "/libfastbf-edc.so";
    char *probe = fbf_test_replay_read(edc);
    if (!probe)
        skip();
    free(probe);
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700], init[64];
    static const char *const pols[] = {"easy", "conservative"};
    for (int k = 0; k < 2; k++) {
        snprintf(d4, sizeof d4, "%s/v4-%s", dir, pols[k]);
        snprintf(d5, sizeof d5, "%s/v5-%s", dir, pols[k]);
        snprintf(init, sizeof init, "{\"policy\":\"%s\"}", pols[k]);
        run_ok((const char *const[]){"--quiet", "--inproc", "--policy", pols[k], "--out", d4,
                                     "--max-jobs", "2000", KTH, NULL});
        run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", edc,
                                     "--edc-init", init, "--out", d5, "--max-jobs", "2000", KTH,
                                     NULL});
        snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
        snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
        expect_same_file(a, b);
    }
    snprintf(d4, sizeof d4, "%s/v4-energy", dir);
    snprintf(d5, sizeof d5, "%s/v5-energy", dir);
    char sched[600];
    snprintf(sched, sizeof sched, "%s --policy easy --energy-saving 600",
             fbf_test_replay_fastbf_path());
    run_ok((const char *const[]){"--quiet", "--energy", "--scheduler", sched, "--out", d4,
                                 "--max-jobs", "2000", KTH, NULL});
    run_ok((const char *const[]){"--quiet", "--energy", "--protocol", "batsim5", "--edc-library",
                                 edc, "--edc-init", "{\"policy\":\"easy\",\"energy_saving\":600}",
                                 "--out", d5, "--max-jobs", "2000", KTH, NULL});
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    expect_same_file(a, b);
    assert_true(fbf_test_replay_summary(d4, "energy.joules") ==
                fbf_test_replay_summary(d5, "energy.joules"));
    assert_true(fbf_test_replay_summary(d5, "energy.asleep_s") > 0);
    fbf_test_replay_rmdir(dir);
}

static void expect_fail(const char *const *args, const char *needle)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 2 || !strstr(err, needle))
        fail_msg("expected exit 2 and '%s', got exit %d: %s", needle, rc, err);
    free(out);
    free(err);
}

static void test_library_failures(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    const char *wl = write_three(dir);
    expect_fail((const char *const[]){"--protocol", "batsim5", "--edc-library", LIB,
                                      "--edc-init", "fail-init", wl, NULL},
                "Error while calling init on the EDC library: returned 3");
    expect_fail((const char *const[]){"--protocol", "batsim5", "--edc-library", LIB,
                                      "--edc-init", "fail-take", wl, NULL},
                "Error while calling take_decisions on the EDC library: returned 4");
    expect_fail((const char *const[]){"--protocol", "batsim5", "--edc-library",
                                      "/nonexistent/libedc.so", wl, NULL},
                "dynamic loader failed while loading external decision component library");
    expect_fail((const char *const[]){"--protocol", "batsim5", "--edc-library", "libcjson.so.1",
                                      wl, NULL},
                "Could not load symbol 'batsim_edc_init'");
    fbf_test_replay_rmdir(dir);
}

static void test_options(void **state)
{
    (void)state;
    static const struct {
        const char *args[12];
        const char *needle;
    } cases[] = {
        {{"--protocol", "batsim5", "--inproc", "w.swf"}, "--inproc runs fastbf's own"},
        {{"--protocol", "batsim5", "w.swf"}, "give exactly one of --scheduler, --endpoint and "
                                             "--edc-library"},
        {{"--protocol", "batsim5", "--endpoint", "tcp://x:1", "--edc-library", "l.so", "w.swf"},
         "give exactly one of"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--policy", "easy", "w.swf"},
         "go with --inproc"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--dynamic-jobs", "w.swf"},
         "asks for it in its EDCHelloEvent"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--forward-profiles", "w.swf"},
         "--forward-profiles: a Batsim 5 EDC asks for it"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--query-wait", "w.swf"},
         "no estimate_waiting_time query"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--redis", "h:1", "w.swf"},
         "Batsim 5 has no Redis mode"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--socket", "/tmp/s", "w.swf"},
         "--socket goes with --protocol batsim2"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--format", "binary", "w.swf"},
         "flatbuffers binary is not supported by fastbf-replay yet"},
        {{"--protocol", "batsim5", "--edc-library", "l.so", "--format", "xml", "w.swf"},
         "--format 'xml': expected json or binary"},
        {{"--edc-library", "l.so", "w.swf"}, "go with --protocol batsim5"},
        {{"--inproc", "--edc-init", "x", "w.swf"}, "go with --protocol batsim5"},
        {{"--protocol", "batsim6", "--inproc", "w.swf"}, "expected batsim4, batsim2 or batsim5"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        expect_fail(cases[k].args, cases[k].needle);
}

int main(int argc, char **argv)
{
    /* Run as an EDC process by the replayer: SELF --v5-edc --endpoint EP,
     * or SELF --v5-edc EP. */
    if (argc >= 3 && strcmp(argv[1], "--v5-edc") == 0)
        return fbf_test_v5edc_serve(argv[argc - 1]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_process_as_v4),
        cmocka_unit_test(test_small_library_as_v4),
        cmocka_unit_test(test_kth_three_ways_as_v4),
        cmocka_unit_test(test_message_shapes),
        cmocka_unit_test(test_calls),
        cmocka_unit_test(test_kill),
        cmocka_unit_test(test_force_stop),
        cmocka_unit_test(test_energy_switch),
        cmocka_unit_test(test_energy_pstate_change),
        cmocka_unit_test(test_fastbf_edc_as_v4),
        cmocka_unit_test(test_library_failures),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
