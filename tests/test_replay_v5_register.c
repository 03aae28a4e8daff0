/*
 * test_replay_v5_register: dynamic registration over Batsim 5's
 * batprotocol, both sides.
 *   - fastbf registering a workload itself (--register-workload, the init
 *     string's register_workload) through the library in JSON and binary
 *     and as a process: every registered job starts when and where it
 *     starts over Batsim v4's REGISTER_JOB with the same plan.
 *   - fastbf-replay as Batsim 5: acknowledgements (JobSubmittedEvent for a
 *     registered job when the hello asks for them), profiles dropped once
 *     their job is done unless profile_reuse was requested (Batsim's text),
 *     and a run that does not end before FinishRegistrationEvent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/replay_run.h"
#include "support/v5_run.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define FASTBF FBF_BUILD_DIR "/fastbf"
#define EDC FBF_BUILD_DIR "/libfastbf-edc.so"
#define TIMEOUT_MS 120000

/* out_jobs.csv's columns. */
enum { COL_START = 8, COL_ALLOC = 14 };

/* 40 jobs to register (ids 101 to 140: out_jobs.csv's job_id column has
 * no workload), some waiting for others, on 8 hosts. */
static void write_plan(const char *dir, char *plan, size_t cap, char *statics, size_t scap)
{
    char text[4096];
    size_t n = (size_t)snprintf(text, sizeof text, "; MaxProcs: 8\n");
    for (int i = 1; i <= 40; i++)
        n += (size_t)snprintf(text + n, sizeof text - n,
                              "%d %d -1 %d %d -1 -1 %d %d -1 -1 -1 -1 -1 -1 -1 -1 -1\n", 100 + i,
                              i * 7, 20 + (i * 37) % 90, 1 + (i * 5) % 8, 1 + (i * 5) % 8,
                              130 + (i * 11) % 50);
    snprintf(plan, cap, "%s/plan.swf", dir);
    assert_int_equal(fbf_test_replay_write(plan, text, 0), 0);
    /* What Batsim submits itself: one job at 0 on 8 hosts. */
    snprintf(statics, scap, "%s/static.swf", dir);
    assert_int_equal(fbf_test_replay_write(statics, "; MaxProcs: 8\n1 0 -1 30 2 -1 -1 2 40 -1 -1 -1 -1 -1 -1 -1 -1 -1\n",
                                           0), 0);
}

static void run_ok(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(out);
    free(err);
}

static void same_starts(const char *v4, const char *v5, const char *what)
{
    char id[32];
    for (int i = 1; i <= 40; i++) {
        snprintf(id, sizeof id, "%d", 100 + i);
        double a = fbf_test_replay_csv(v4, id, COL_START), b = fbf_test_replay_csv(v5, id, COL_START);
        if (isnan(a) || a != b)
            fail_msg("%s: job %s starts at %g over v4, %g over batsim5", what, id, a, b);
        char *x = fbf_test_replay_csv_text(v4, id, COL_ALLOC);
        char *y = fbf_test_replay_csv_text(v5, id, COL_ALLOC);
        if (!x || !y || strcmp(x, y) != 0)
            fail_msg("%s: job %s runs on %s over v4, %s over batsim5", what, id, x, y);
        free(x);
        free(y);
    }
}

static void test_fastbf_registers_as_over_v4(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), plan[600], wl[600], d4[600], d5[600], cmd[1400];
    char init[800];
    write_plan(dir, plan, sizeof plan, wl, sizeof wl);
    snprintf(d4, sizeof d4, "%s/v4", dir);
    snprintf(cmd, sizeof cmd, FASTBF " --policy easy --register-workload %s", plan);
    run_ok((const char *const[]){"--quiet", "--dynamic-jobs", "--scheduler", cmd, "--out", d4, wl,
                                 NULL});
    assert_false(isnan(fbf_test_replay_csv(d4, "140", COL_START)));

    static const char *const formats[] = {"json", "binary"};
    for (int f = 0; f < 2; f++) {
        snprintf(init, sizeof init, "{\"policy\":\"easy\",\"format\":\"%s\","
                 "\"register_workload\":\"%s\"}", formats[f], plan);
        snprintf(d5, sizeof d5, "%s/lib-%s", dir, formats[f]);
        run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--format", formats[f],
                                     "--edc-library", EDC, "--edc-init", init, "--out", d5, wl,
                                     NULL});
        same_starts(d4, d5, formats[f]);
    }
    snprintf(d5, sizeof d5, "%s/process", dir);
    snprintf(cmd, sizeof cmd, FASTBF " --protocol batsim5 --register-workload %s", plan);
    run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--scheduler", cmd,
                                 "--edc-init", "{\"policy\":\"easy\"}", "--out", d5, wl, NULL});
    same_starts(d4, d5, "process");
    /* A registered job keeps its profile's full batprotocol id. */
    char *p = fbf_test_replay_csv_text(d5, "103", 2);
    assert_non_null(p);
    assert_non_null(strstr(p, "dyn!"));
    free(p);
    fbf_test_replay_rmdir(dir);
}

static void test_fastbf_register_refusals(void **state)
{
    (void)state;
    /* batprotocol cannot re-open registration: no pauses. */
    FILE *p = popen(FASTBF " --protocol batsim5 --register-workload x.swf --register-pause 5 "
                    "2>&1", "r");
    assert_non_null(p);
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, p);
    text[n] = '\0';
    int st = pclose(p);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 2);
    if (!strstr(text, "--register-pause needs Batsim v4's continue_registration"))
        fail_msg("%s", text);
}

#define HELLO(feat)                                                                            \
    "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{"                 \
    "'batprotocol_version':'1.0.0','decision_component_name':'reg',"                           \
    "'decision_component_version':'1','decision_component_commit':'',"                        \
    "'requested_simulation_features':{'dynamic_registration':true" feat "}}}]}"
#define EV(type, body) "{'timestamp':$now,'event_type':'" type "','event':" body "}"
#define REGPROF(id, delay) EV("RegisterProfileEvent", "{'profile':{'id':'" id "','profile_type':" \
                                                      "'DelayProfile','profile':{'delay':" #delay "}}}")
#define REGJOB(id, prof) EV("RegisterJobEvent", "{'job_id':'" id "','job':{'resource_request':1," \
                                                "'walltime':50,'profile_id':'" prof "'}}")
#define EXEC(id, host) EV("ExecuteJobEvent", "{'job_id':'" id "','allocation':{'host_allocation':'" \
                        host "','executor_placement_type':'PredefinedExecutorPlacementStrategy" \
                        "Wrapper','executor_placement':{}}}")
#define FINISH EV("FinishRegistrationEvent", "{}")
/* The reply to SimulationBeginsEvent's message; the next holds the jobs
 * submitted at 0. */
#define NOTHING "{'now':$now,'events':[]}"

static void test_acknowledged(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), wl[600], d[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    snprintf(d, sizeof d, "%s/out", dir);
    /* Registered at 0, acknowledged in the next message, then run by the
     * EDC's FCFS like any submitted job. */
    const char *script[] = {HELLO(",'acknowledge_dynamic_jobs':true"), NOTHING,
                            "{'now':$now,'events':[" REGPROF("w1!p", 7) "," REGJOB("w1!a", "p")
                            "," FINISH "]}", NULL};
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--out", d, wl,
                                                                             NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    cJSON *m = fbf_test_v5_message_with(r.log, "\"job_id\":\"w1!a\"");
    assert_non_null(m);
    const cJSON *sub = NULL, *evs = cJSON_GetObjectItemCaseSensitive(m, "events");
    for (const cJSON *e = evs ? evs->child : NULL; e && !sub; e = e->next) {
        const cJSON *ev = cJSON_GetObjectItemCaseSensitive(e, "event");
        if (strcmp(fbf_test_v5_str(ev, "job_id", NULL), "w1!a") == 0)
            sub = ev;
    }
    if (!sub) {
        char *t = cJSON_PrintUnformatted(m);
        fail_msg("no event about w1!a in %s", t);
    }
    assert_string_equal(fbf_test_v5_str(sub, "job_id", NULL), "w1!a");
    assert_true(fbf_test_v5_num(sub, "job", "walltime") == 50);
    assert_string_equal(fbf_test_v5_str(sub, "job", "profile_id"), "w1!p");
    cJSON_Delete(m);
    assert_true(fbf_test_replay_csv(d, "a", 9) == 7); /* execution_time: the delay */
    assert_non_null(strstr(r.out, "4 submitted, 4 completed"));
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_profile_dropped_unless_reused(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    /* w1!a runs 1 s on host 3 from 0 (the static jobs wait: the script
     * answers for the EDC); the message at 1 holds its
     * completion, and Batsim has dropped w1!p by then. */
    const char *first = "{'now':$now,'events':[" REGPROF("w1!p", 1) "," REGJOB("w1!a", "w1!p")
                        "," EXEC("w1!a", "3") "]}";
    const char *dropped[] = {HELLO(""), NOTHING, first, "{'now':$now,'events':[" REGJOB("w1!b", "p") "]}",
                             NULL};
    fbf_test_v5_result r = fbf_test_v5_against(dropped, (const char *const[]){wl, NULL});
    assert_int_equal(r.rc, 2);
    if (!strstr(r.err, "Cannot get profile 'w1!p': it existed some time ago but is no longer "
                       "accessible"))
        fail_msg("%s", r.err);
    fbf_test_v5_result_free(&r);
    /* With reuse, the same registration is taken. */
    const char *reused[] = {HELLO(",'profile_reuse':true"), NOTHING, first,
                            "{'now':$now,'events':[" REGJOB("w1!b", "p") "," EXEC("w1!b", "3") ","
                            FINISH "]}", NULL};
    r = fbf_test_v5_against(reused, (const char *const[]){wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    assert_non_null(strstr(r.out, "5 submitted, 5 completed"));
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_no_end_before_finish(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    /* Registration requested and never finished: once every job is done,
     * nothing can happen any more, and Batsim would wait forever. */
    const char *script[] = {HELLO(""), NULL};
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){wl, NULL});
    assert_int_equal(r.rc, 3);
    if (!strstr(r.err, "dynamic registration is still open (no FinishRegistrationEvent)"))
        fail_msg("%s", r.err);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fastbf_registers_as_over_v4),
        cmocka_unit_test(test_fastbf_register_refusals),
        cmocka_unit_test(test_acknowledged),
        cmocka_unit_test(test_profile_dropped_unless_reused),
        cmocka_unit_test(test_no_end_before_finish),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
