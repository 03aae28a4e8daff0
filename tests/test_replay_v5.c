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
 *    ForceSimulationStopEvent, forwarded profiles;
 *  - library failures and the options batsim5 refuses.
 * The bad replies are test_replay_v5_errors, energy and fastbf's own EDC
 * test_replay_v5_energy.
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
#include "support/v5_run.h"
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

/* The v4 replay of wl under fastbf's in-process fcfs, into dir. */
static void v4_fcfs(const char *wl, const char *dir, const char *max_jobs)
{
    fbf_test_v5_run_ok((const char *const[]){"--quiet", "--inproc", "--policy", "fcfs", "--out", dir, wl,
                                 max_jobs ? "--max-jobs" : NULL, max_jobs, NULL});
}

static void test_small_process_as_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700];
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    snprintf(d4, sizeof d4, "%s/v4", dir);
    snprintf(d5, sizeof d5, "%s/v5", dir);
    v4_fcfs(wl, d4, NULL);
    fbf_test_v5_result r = fbf_test_v5_against(NULL, (const char *const[]){"--out", d5, "--edc-init", "hello world",
                                                       wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    fbf_test_v5_same_file(a, b);
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
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_small_library_as_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700];
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    snprintf(d4, sizeof d4, "%s/v4", dir);
    v4_fcfs(wl, d4, NULL);
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    /* Decisions with and without a NUL counted in their size. */
    const char *inits[] = {"fcfs", "no-nul"};
    for (int k = 0; k < 2; k++) {
        snprintf(d5, sizeof d5, "%s/v5-%d", dir, k);
        fbf_test_v5_run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", LIB,
                                     "--edc-init", inits[k], "--out", d5, wl, NULL});
        snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
        fbf_test_v5_same_file(a, b);
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
    fbf_test_v5_run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", LIB,
                                 "--out", d5, "--max-jobs", "400", KTH, NULL});
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    fbf_test_v5_same_file(a, b);
    snprintf(d5, sizeof d5, "%s/spawn", dir);
    fbf_test_v5_run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--scheduler",
                                 SELF " --v5-edc {endpoint}", "--out", d5, "--max-jobs", "400",
                                 KTH, NULL});
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    fbf_test_v5_same_file(a, b);
    snprintf(d5, sizeof d5, "%s/thread", dir);
    fbf_test_v5_result r = fbf_test_v5_against(NULL, (const char *const[]){"--quiet", "--out", d5, "--max-jobs",
                                                       "400", KTH, NULL});
    assert_int_equal(r.rc, 0);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    fbf_test_v5_same_file(a, b);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_message_shapes(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), rec[600];
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    snprintf(rec, sizeof rec, "%s/rec.txt", dir);
    /* A hello that asks for every profile forward. */
    const char *script[] = {
        "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{"
        "'batprotocol_version':'1.0.0','decision_component_name':'t',"
        "'decision_component_version':'1','decision_component_commit':'',"
        "'requested_simulation_features':{'forward_profiles_on_job_submission':true,"
        "'forward_profiles_on_simulation_begins':true}}}]}",
        NULL};
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--quiet", "--record", rec, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    cJSON *m = fbf_test_v5_message_with(r.log, "SimulationBeginsEvent");
    const cJSON *e = fbf_test_v5_event_of(m, "SimulationBeginsEvent");
    assert_non_null(e);
    assert_true(fbf_test_v5_num(e, "host_number", NULL) == 4);
    assert_true(fbf_test_v5_num(e, "computation_host_number", NULL) == 4);
    assert_true(fbf_test_v5_num(e, "storage_host_number", NULL) == 0);
    const cJSON *h = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "computation_hosts"), 3);
    assert_true(fbf_test_v5_num(h, "id", NULL) == 3);
    assert_string_equal(fbf_test_v5_str(h, "name", NULL), "r3");
    assert_string_equal(fbf_test_v5_str(h, "state", NULL), "IDLE");
    assert_true(fbf_test_v5_num(h, "pstate", NULL) == 0 && fbf_test_v5_num(h, "pstate_count", NULL) == 1);
    cJSON *ctx = cJSON_Parse(fbf_test_v5_str(e, "batsim_execution_context_json", NULL));
    assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(ctx, "socket_endpoint")));
    assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(ctx, "socket_endpoint")->valuestring,
                           "tcp://127.0.0.1:"));
    cJSON_Delete(ctx);
    const cJSON *w = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "workloads"), 0);
    assert_string_equal(fbf_test_v5_str(w, "name", NULL), "w0");
    const cJSON *p = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(e, "profiles"), 0);
    assert_string_equal(fbf_test_v5_str(p, "id", NULL), "w0!delay_10");
    assert_string_equal(fbf_test_v5_str(p, "profile_type", NULL), "DelayProfile");
    assert_true(fbf_test_v5_num(p, "profile", "delay") == 10);
    cJSON_Delete(m);

    m = fbf_test_v5_message_with(r.log, "\"job_id\":\"w0!1\",\"job\"");
    e = fbf_test_v5_event_of(m, "JobSubmittedEvent");
    assert_non_null(e);
    assert_true(fbf_test_v5_num(e, "job", "resource_request") == 2);
    assert_true(fbf_test_v5_num(e, "job", "walltime") == 10);
    assert_string_equal(fbf_test_v5_str(e, "job", "profile_id"), "w0!delay_10");
    assert_string_equal(fbf_test_v5_str(e, "job", "extra_data"), "");
    assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(e, "job"), "rigid")));
    assert_true(fbf_test_v5_num(e, "submission_time", NULL) == 0);
    assert_string_equal(fbf_test_v5_str(e, "profile", "id"), "w0!delay_10");
    assert_true(fbf_test_v5_num(cJSON_GetObjectItemCaseSensitive(e, "profile"), "profile", "delay") == 10);
    cJSON_Delete(m);

    m = fbf_test_v5_message_with(r.log, "\"job_id\":\"w0!2\",\"state\"");
    e = fbf_test_v5_event_of(m, "JobCompletedEvent");
    assert_string_equal(fbf_test_v5_str(e, "state", NULL), "COMPLETED_SUCCESSFULLY");
    assert_true(fbf_test_v5_num(e, "return_code", NULL) == 0);
    assert_true(fbf_test_v5_num(m, "now", NULL) == 5);
    cJSON_Delete(m);
    m = fbf_test_v5_message_with(r.log, "AllStaticJobsHaveBeenSubmittedEvent");
    assert_true(fbf_test_v5_num(m, "now", NULL) == 100);
    cJSON_Delete(m);

    /* --record: the init data, the hello, then each message and reply. */
    char *text = fbf_test_replay_read(rec);
    assert_non_null(text);
    assert_true(strncmp(text, "> \n< {\"now\":0,", 14) == 0);
    assert_int_equal(fbf_test_count_lines(text), 2 + 2 * 7);
    free(text);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}


static void test_calls(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
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
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--quiet", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":50.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"c50\",\"last_periodic_call\""
                                  ":false}}"));
    assert_non_null(strstr(r.log, "{\"timestamp\":70.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"c70\""));
    assert_non_null(strstr(r.log, "{\"timestamp\":0.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"past\""));
    assert_int_equal(fbf_test_v5_count(r.log, "\"call_me_later_id\":\"p20\""), 3);
    assert_non_null(strstr(r.log, "{\"timestamp\":60.0,\"event_type\":\"RequestedCallEvent\","
                                  "\"event\":{\"call_me_later_id\":\"p20\",\"last_periodic_call\""
                                  ":true}}"));
    assert_int_equal(fbf_test_v5_count(r.log, "\"last_periodic_call\":true"), 1);
    /* Stopped in the reply to the message at 5 s, before its first call. */
    assert_int_equal(fbf_test_v5_count(r.log, "\"call_me_later_id\":\"inf\""), 0);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_kill(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), out[600];
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
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
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--quiet", "--out", out, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":5.0,\"event_type\":\"JobCompletedEvent\","
                                  "\"event\":{\"job_id\":\"w0!1\",\"state\":\"COMPLETED_KILLED\","
                                  "\"return_code\":4294967295}},{\"timestamp\":5.0,\"event_type\":"
                                  "\"JobsKilledEvent\",\"event\":{\"job_ids\":[\"w0!1\"],"
                                  "\"progresses\":[{\"job_id\":\"w0!1\",\"wrapper\":{"
                                  "\"kill_progress_type\":\"KillProgressAtomicProfile\","
                                  "\"kill_progress\":{\"profile_id\":\"w0!delay_10\","
                                  "\"progress\":0.5}}}]}}"));
    char *st = fbf_test_replay_csv_text(out, "1", 7);
    assert_non_null(st);
    assert_string_equal(st, "COMPLETED_KILLED");
    free(st);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_force_stop(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), out[600];
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
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
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--out", out, wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    int lines = fbf_test_count_lines(r.log);
    assert_int_equal(lines, 4); /* init, begins, submissions, ends */
    assert_non_null(strstr(r.log, "{\"now\":0.0,\"events\":[{\"timestamp\":0.0,\"event_type\":"
                                  "\"SimulationEndsEvent\",\"event\":{}}]}<NUL>\n"));
    assert_non_null(strstr(r.out, "TRUNCATED"));
    fbf_test_v5_result_free(&r);
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
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
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
        cmocka_unit_test(test_library_failures),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
