/*
 * test_bv4: the Batsim v4 session API (io/bv4_session.h), in process: the
 * messages it must accept.
 *
 * Every message Batsim 4.2.1 was observed to send is fed verbatim in a
 * sequence that makes it valid; every reply is parsed back with cJSON and
 * checked against D0 (reply now == request now, every event stamped now,
 * REJECT < EXECUTE < CALL_ME_LATER, allocations canonical and disjoint) by
 * support/bv4_kit. Then the decisions of each policy, queries and the
 * config flags. The malformed messages and their documented errors are in
 * test_bv4_errors.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_session.h"
#include "support/bv4_kit.h"
#include "support/testkit.h"

/* The helpers of support/testkit.h and support/bv4_kit.h under short
 * names: they nest inside each other's arguments on nearly every line. */
#define M fbf_test_msg
#define SUB fbf_test_sub
#define DONE fbf_test_done
#define BEGINS fbf_test_bv4_begins
#define new_session fbf_test_bv4_session
#define ok fbf_test_bv4_ok
#define exchange fbf_test_bv4_exchange

/* ---- the observed messages, verbatim ---------------------------------- */

/* SIMULATION_BEGINS is fbf_test_obs_begins4 (support/testkit.h), shared
 * with test_e2e. */

static const char OBS_SUBMITTED[] =
    "{\"now\":0.000045,\"events\":[{\"timestamp\":0.000045,\"type\":\"JOB_SUBMITTED\",\"data\":"
    "{\"job_id\":\"w0!0\",\"job\":{\"id\":\"w0!0\",\"subtime\":0,\"walltime\":100,\"res\":1,"
    "\"profile\":\"delay10\"}}}]}";

static const char OBS_EXECUTE_REPLY[] =
    "{\"now\":4.5e-05,\"events\":[{\"timestamp\":4.5e-05,\"type\":\"EXECUTE_JOB\",\"data\":"
    "{\"job_id\":\"w0!0\",\"alloc\":\"0\"}}]}";

static const char OBS_SEVERAL[] =
    "{\"now\":10.000015,\"events\":[{\"timestamp\":10.000015,\"type\":\"JOB_SUBMITTED\","
    "\"data\":{\"job_id\":\"w0!10\",\"job\":{\"id\":\"w0!10\",\"subtime\":10,\"walltime\":15,"
    "\"res\":1,\"profile\":\"10s\"}}},{\"timestamp\":10.000015,\"type\":\"JOB_SUBMITTED\","
    "\"data\":{\"job_id\":\"w0!11\",\"job\":{\"id\":\"w0!11\",\"subtime\":10,\"walltime\":15,"
    "\"res\":1,\"profile\":\"10s\"}}},{\"timestamp\":10.000015,\"type\":\"JOB_SUBMITTED\","
    "\"data\":{\"job_id\":\"w0!12\",\"job\":{\"id\":\"w0!12\",\"subtime\":10,\"walltime\":15,"
    "\"res\":1,\"profile\":\"10s\"}}}]}";

static const char OBS_COMPLETIONS[] =
    "{\"now\":1.005600,\"events\":[{\"timestamp\":1.004000,\"type\":\"JOB_COMPLETED\",\"data\":"
    "{\"job_id\":\"w0!1\",\"job_state\":\"COMPLETED_WALLTIME_REACHED\",\"return_code\":-1,"
    "\"alloc\":\"0\"}},{\"timestamp\":1.005600,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":"
    "\"w0!1001\",\"job_state\":\"COMPLETED_WALLTIME_REACHED\",\"return_code\":-1,\"alloc\":"
    "\"2\"}}]}";

static const char OBS_NOTIFY[] =
    "{\"now\":60.002030,\"events\":[{\"timestamp\":60.000045,\"type\":\"NOTIFY\",\"data\":"
    "{\"type\":\"no_more_static_job_to_submit\"}},{\"timestamp\":60.002015,\"type\":"
    "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!50\",\"job_state\":\"COMPLETED_SUCCESSFULLY\","
    "\"return_code\":0,\"alloc\":\"0\"}}]}";

static const char OBS_REQUESTED_CALL[] =
    "{\"now\":100.500600,\"events\":[{\"timestamp\":100.500600,\"type\":\"REQUESTED_CALL\","
    "\"data\":{}}]}";

static const char OBS_ENDS[] =
    "{\"now\":37.002051,\"events\":[{\"timestamp\":37.002051,\"type\":\"SIMULATION_ENDS\","
    "\"data\":{}}]}";

/* The SIMULATION_BEGINS of the protocol text: nested config. */
static const char TEXT_BEGINS[] =
    "{\"now\": 0, \"events\": [{\"timestamp\": 0, \"type\": \"SIMULATION_BEGINS\", \"data\": {"
    "\"nb_resources\": 4, \"nb_compute_resources\": 4, \"nb_storage_resources\": 0,"
    "\"allow_time_sharng\": false,"
    "\"config\": {\"redis\": {\"enabled\": false, \"hostname\": \"127.0.0.1\", \"port\": 6379,"
    "  \"prefix\": \"default\"},"
    "  \"job_submission\": {\"forward_profiles\": false,"
    "    \"from_scheduler\": {\"enabled\": false, \"acknowledge\": true}}},"
    "\"compute_resources\": ["
    "  {\"id\": 0, \"name\": \"Bourassa\", \"state\": \"idle\", \"properties\": {}},"
    "  {\"id\": 1, \"name\": \"Fafard\", \"state\": \"idle\", \"properties\": {}},"
    "  {\"id\": 2, \"name\": \"Ginette\", \"state\": \"idle\", \"properties\": {}},"
    "  {\"id\": 3, \"name\": \"Jupiter\", \"state\": \"idle\", \"properties\": {}}],"
    "\"storage_resources\": [],"
    "\"workloads\": {\"26dceb\": \"/home/mmercier/Projects/batsim/workloads/"
    "test_various_profile_types.json\"},"
    "\"profiles\": {\"26dceb\": {"
    "  \"simple\": {\"type\": \"parallel\", \"cpu\": [5e6,  0,  0,  0],"
    "    \"com\": [5e6,  0,  0,  0, 5e6,5e6,  0,  0, 5e6,5e6,  0,  0, 5e6,5e6,5e6,  0]},"
    "  \"homogeneous\": {\"type\": \"parallel_homogeneous\", \"cpu\": 10e6, \"com\": 1e6},"
    "  \"sequence\": {\"type\": \"composed\", \"repeat\" : 4,"
    "    \"seq\": [\"simple\",\"homogeneous\",\"simple\"]},"
    "  \"delay\": {\"type\": \"delay\", \"delay\": 20.20}}}}}]}";


/* ---- the observed messages, verbatim, in a sensible sequence ---------- */

/* One exchange of the sequence; the raw reply is appended to out. */
static char *seq_step(fbf_bv4_session *s, const char *req, const char *want, char *out,
                      size_t cap)
{
    char *r = exchange(s, req, 0, want, true);
    size_t off = strlen(out);
    snprintf(out + off, cap - off, "%s\n", r);
    return r;
}

/* Runs the sequence; the replies are written to out. */
static void observed_sequence(unsigned workers, char *out, size_t cap)
{
    fbf_bv4_session *s = new_session("easy", workers);
    out[0] = '\0';
    free(seq_step(s, fbf_test_obs_begins4, "", out, cap));
    char *r = seq_step(s, OBS_SUBMITTED, "EXECUTE_JOB w0!0 0", out, cap);
    /* Byte for byte what the real scheduler answered. */
    assert_string_equal(r, OBS_EXECUTE_REPLY);
    free(r);
    /* w0!0 ends; three more start on 0, 1 and 2. */
    free(seq_step(s,
                  M("{'now':0.004,'events':[%s,%s,%s,%s]}", DONE(0.004, "w0!0", "0"),
                    SUB(0.004, "w0!1", 1, 1), SUB(0.004, "w0!1000", 1, 100),
                    SUB(0.004, "w0!1001", 1, 1)),
                  "EXECUTE_JOB w0!1 0|EXECUTE_JOB w0!1000 1|EXECUTE_JOB w0!1001 2", out, cap));
    free(seq_step(s, OBS_COMPLETIONS, "", out, cap));
    /* 0, 2 and 3 are free; w0!1000 still holds 1. */
    free(seq_step(s, OBS_SEVERAL, "EXECUTE_JOB w0!10 0|EXECUTE_JOB w0!11 2|EXECUTE_JOB w0!12 3",
                  out, cap));
    free(seq_step(s,
                  M("{'now':20.000015,'events':[%s,%s,%s]}", DONE(20.000015, "w0!10", "0"),
                    DONE(20.000015, "w0!11", "2"), DONE(20.000015, "w0!12", "3")),
                  "", out, cap));
    free(seq_step(s,
                  M("{'now':50,'events':[%s,%s]}", DONE(41, "w0!1000", "1"),
                    SUB(50, "w0!50", 1, 20)),
                  "EXECUTE_JOB w0!50 0", out, cap));
    free(seq_step(s, OBS_NOTIFY, "", out, cap));
    free(seq_step(s, OBS_REQUESTED_CALL, "", out, cap));
    const char *end = "{\"now\":100.500600,\"events\":[{\"timestamp\":100.500600,\"type\":"
                      "\"SIMULATION_ENDS\",\"data\":{}}]}";
    r = exchange(s, end, FBF_BV4_ENDED, "", true);
    assert_string_equal(r, "{\"now\":100.5006,\"events\":[]}");
    free(r);
    assert_int_equal(fbf_engine_nb_running(fbf_bv4_session_engine(s)), 0);
    assert_int_equal(fbf_engine_nb_waiting(fbf_bv4_session_engine(s)), 0);
    fbf_bv4_session_destroy(s);
}

static void test_observed_sequence(void **state)
{
    static char one[16384], four[16384];
    observed_sequence(1, one, sizeof one);
    observed_sequence(4, four, sizeof four);
    assert_string_equal(one, four);
}

static void test_observed_begins_then_ends(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    char *r = exchange(s, fbf_test_obs_begins4, 0, "", true);
    assert_string_equal(r, "{\"now\":0,\"events\":[]}");
    free(r);
    r = exchange(s, OBS_ENDS, FBF_BV4_ENDED, "", true);
    assert_string_equal(r, "{\"now\":37.002051,\"events\":[]}");
    free(r);

    /* Anything after SIMULATION_ENDS is an error. */
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, OBS_REQUESTED_CALL, strlen(OBS_REQUESTED_CALL), &reply,
                                    &len, &err);
    assert_int_equal(rc, -EPROTO);
    assert_string_equal(err.text, "message received after SIMULATION_ENDS");
    fbf_bv4_session_destroy(s);
}

static void test_nested_config_accepted(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s, TEXT_BEGINS, "");
    assert_int_equal(fbf_engine_nb_compute(fbf_bv4_session_engine(s)), 4);
    /* The protocol text's JOB_SUBMITTED example: no subtime, float walltime. */
    ok(s,
       M("{'now':10.0,'events':[{'timestamp':10.0,'type':'JOB_SUBMITTED','data':{'job_id':"
         "'dyn!my_new_job','job':{'profile':'delay_10s','res':1,'id':'dyn!my_new_job',"
         "'walltime':12.0}}}]}"),
       "EXECUTE_JOB dyn!my_new_job 0");
    ok(s,
       M("{'now':80.087881,'events':[{'timestamp':80.087881,'type':'JOB_COMPLETED','data':{"
         "'job_id':'dyn!my_new_job','job_state':'COMPLETED_SUCCESSFULLY','return_code':0,"
         "'alloc':'0'}}]}"),
       "");
    exchange(s, M("{'now':100.0,'events':[{'timestamp':100.0,'type':'SIMULATION_ENDS','data':{}}]}"),
             FBF_BV4_ENDED, "", false);
    fbf_bv4_session_destroy(s);
}

/* ---- decisions: the worked example under each policy ------------------ */

static void worked_example(const char *policy, const char *const want[5])
{
    fbf_bv4_session *s = new_session(policy, 1);
    ok(s, BEGINS(4, ""), "");
    ok(s,
       M("{'now':0,'events':[%s,%s,%s,%s]}", SUB(0, "w0!A", 2, 10), SUB(0, "w0!B", 4, 5),
         SUB(0, "w0!C", 2, 5), SUB(0, "w0!D", 1, 20)),
       want[0]);
    if (strcmp(policy, "fcfs") == 0) {
        ok(s, M("{'now':10,'events':[%s]}", DONE(10, "w0!A", "0-1")), want[1]);
        ok(s, M("{'now':15,'events':[%s]}", DONE(15, "w0!B", "0-3")), want[2]);
        ok(s, M("{'now':20,'events':[%s]}", DONE(20, "w0!C", "0-1")), want[3]);
        ok(s, M("{'now':35,'events':[%s]}", DONE(35, "w0!D", "2")), want[4]);
    } else {
        ok(s, M("{'now':5,'events':[%s]}", DONE(5, "w0!C", "2-3")), want[1]);
        ok(s, M("{'now':10,'events':[%s]}", DONE(10, "w0!A", "0-1")), want[2]);
        ok(s, M("{'now':15,'events':[%s]}", DONE(15, "w0!B", "0-3")), want[3]);
        ok(s, M("{'now':35,'events':[%s]}", DONE(35, "w0!D", "0")), want[4]);
    }
    exchange(s, M("{'now':35,'events':[{'timestamp':35,'type':'SIMULATION_ENDS','data':{}}]}"),
             FBF_BV4_ENDED, "", false);
    fbf_bv4_session_destroy(s);
}

static const char *const worked_bf[5] = {"EXECUTE_JOB w0!A 0-1|EXECUTE_JOB w0!C 2-3", "",
                                         "EXECUTE_JOB w0!B 0-3", "EXECUTE_JOB w0!D 0", ""};

static void test_worked_example_fcfs(void **state)
{
    const char *const fcfs[5] = {"EXECUTE_JOB w0!A 0-1", "EXECUTE_JOB w0!B 0-3",
                                 "EXECUTE_JOB w0!C 0-1|EXECUTE_JOB w0!D 2", "", ""};
    worked_example("fcfs", fcfs);
}

static void test_worked_example_easy(void **state) { worked_example("easy", worked_bf); }

static void test_worked_example_conservative(void **state)
{
    worked_example("conservative", worked_bf);
}

/* D0/D2: rejections first, in arrival order; then starts, in start order. */
static void test_reject_before_execute(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s, BEGINS(4, ""), "");
    ok(s,
       M("{'now':1,'events':[%s,%s,%s,%s,%s]}", SUB(1, "w0!ok1", 3, 10), SUB(1, "w0!big", 5, 10),
         SUB(1, "w0!zero", 0, 10), SUB(1, "w0!ok2", 1, 10),
         "{'timestamp':1,'type':'JOB_SUBMITTED','data':{'job_id':'w0!nowall','job':{'res':1}}}"),
       "REJECT_JOB w0!big|REJECT_JOB w0!zero|REJECT_JOB w0!nowall|EXECUTE_JOB w0!ok1 0-2|"
       "EXECUTE_JOB w0!ok2 3");
    fbf_bv4_session_destroy(s);

    /* FCFS accepts a job without walltime (D2). */
    s = new_session("fcfs", 1);
    ok(s, BEGINS(4, ""), "");
    ok(s,
       M("{'now':1,'events':[%s,%s]}", SUB(1, "w0!big", 5, 10),
         "{'timestamp':1,'type':'JOB_SUBMITTED','data':{'job_id':'w0!nowall','job':{'res':1}}}"),
       "REJECT_JOB w0!big|EXECUTE_JOB w0!nowall 0");
    fbf_bv4_session_destroy(s);
}

/* Non-contiguous compute ids: allocations are drawn from them only. */
static void test_sparse_compute_ids(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s,
       M("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
         "'nb_resources':8,'nb_compute_resources':4,'nb_storage_resources':4,"
         "'compute_resources':[{'id':0},{'id':1},{'id':5},{'id':6}]}}]}"),
       "");
    assert_int_equal(fbf_engine_nb_compute(fbf_bv4_session_engine(s)), 4);
    ok(s, M("{'now':1,'events':[%s,%s]}", SUB(1, "w0!1", 3, 10), SUB(1, "w0!2", 1, 10)),
       "EXECUTE_JOB w0!1 0-1 5|EXECUTE_JOB w0!2 6");
    /* A non-canonical alloc that denotes the same set is accepted. */
    ok(s,
       M("{'now':2,'events':[{'timestamp':2,'type':'JOB_COMPLETED','data':{'job_id':'w0!1',"
         "'job_state':'COMPLETED_SUCCESSFULLY','return_code':0,'alloc':'5 0 1'}}]}"),
       "");
    fbf_bv4_session_destroy(s);
}

/* JOB_KILLED frees running jobs; a listed job that already completed is
 * skipped; an ANSWER is accepted and only logged. (RESOURCE_STATE_CHANGED
 * is checked against the machines' states: tests/test_power.c.) */
static void test_killed_and_ignored_events(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s, BEGINS(4, ""), "");
    ok(s, M("{'now':1,'events':[%s,%s,%s]}", SUB(1, "w0!1", 2, 100), SUB(1, "w0!2", 2, 100),
            SUB(1, "w0!3", 4, 10)),
       "EXECUTE_JOB w0!1 0-1|EXECUTE_JOB w0!2 2-3");
    ok(s,
       M("{'now':5,'events':[%s,{'timestamp':5,'type':'JOB_KILLED','data':{'job_ids':['w0!1',"
         "'w0!2'],'job_progress':{'w0!2':{'profile':'p','progress':0.5}}}}]}",
         DONE(4, "w0!1", "0-1")),
       "EXECUTE_JOB w0!3 0-3");
    ok(s,
       M("{'now':6,'events':[{'timestamp':6,'type':'ANSWER','data':{"
         "'consumed_energy':12500.0}},{'timestamp':6,'type':'NOTIFY','data':{'type':"
         "'no_more_external_event_to_occur'}}]}"),
       "");
    fbf_bv4_session_destroy(s);
}

/* --kill-after: one KILL_JOB per reply listing every job due, between the
 * rejections and the starts; the killed job's resources come back with
 * JOB_KILLED (nested sequence progress accepted), and a job that ended on
 * its own before its kill is never killed. */
static void test_kill_after(void **state)
{
    fbf_bv4_session *s = fbf_test_bv4_session_opts("easy", 1, 10, false);
    ok(s, BEGINS(4, ""), "");
    ok(s, M("{'now':0,'events':[%s,%s,%s]}", SUB(0, "w0!1", 2, 100), SUB(0, "w0!2", 2, 100),
            SUB(0, "w0!3", 4, 5)),
       "EXECUTE_JOB w0!1 0-1|EXECUTE_JOB w0!2 2-3|CALL_ME_LATER 10");
    /* The call at 10 is already asked for: not asked again. */
    ok(s, M("{'now':5,'events':[%s]}", SUB(5, "w0!9", 0, 5)), "REJECT_JOB w0!9");
    ok(s, M("{'now':10,'events':[%s,{'timestamp':10,'type':'REQUESTED_CALL','data':{}}]}",
            SUB(10, "w0!4", 0, 5)),
       "REJECT_JOB w0!4|KILL_JOB w0!1 w0!2");
    ok(s,
       M("{'now':10,'events':[{'timestamp':10,'type':'JOB_KILLED','data':{'job_ids':['w0!1',"
         "'w0!2'],'job_progress':{'w0!1':{'profile':'p','progress':0.1},'w0!2':{'profile':"
         "'seq','current_task_index':2,'current_task':{'profile':'inner',"
         "'current_task_index':0,'current_task':{'profile':'p','progress':0.75}}}}}}]}"),
       "EXECUTE_JOB w0!3 0-3|CALL_ME_LATER 20");
    ok(s, M("{'now':15,'events':[%s]}", DONE(15, "w0!3", "0-3")), "");
    ok(s, M("{'now':20,'events':[{'timestamp':20,'type':'REQUESTED_CALL','data':{}}]}"), "");
    fbf_bv4_session_destroy(s);
}

/* --tag-starts: every EXECUTE_JOB is followed by its SET_JOB_METADATA. */
static void test_tag_starts(void **state)
{
    fbf_bv4_session *s = fbf_test_bv4_session_opts("conservative", 1, 0, true);
    ok(s, BEGINS(4, ""), "");
    ok(s, M("{'now':0,'events':[%s,%s,%s]}", SUB(0, "w0!1", 2, 10), SUB(0, "w0!2", 4, 5),
            SUB(0, "w0!3", 2, 5)),
       "EXECUTE_JOB w0!1 0-1|SET_JOB_METADATA w0!1 reason=head|"
       "EXECUTE_JOB w0!3 2-3|SET_JOB_METADATA w0!3 reason=backfilled");
    ok(s, M("{'now':10,'events':[%s,%s]}", DONE(5, "w0!3", "2-3"), DONE(10, "w0!1", "0-1")),
       "EXECUTE_JOB w0!2 0-3|SET_JOB_METADATA w0!2 reason=reservation rsv=10");
    fbf_bv4_session_destroy(s);
}

/* ---- QUERY estimate_waiting_time --------------------------------------- */

static const char *QUERY(double now, const char *id, int res, double wall)
{
    return M("{'now':%g,'events':[{'timestamp':%g,'type':'QUERY','data':{'requests':{"
             "'estimate_waiting_time':{'job_id':'%s','job':{'res':%d,'walltime':%g}}}}}]}",
             now, now, id, res, wall);
}

static void test_query_estimate(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s, BEGINS(4, ""), "");
    /* Nothing running: a job would start at once. */
    ok(s, QUERY(0, "w0!q0", 4, 10), "ANSWER w0!q0 0");
    /* A runs on 0-1 until 10; B (res 4) waits, reserved [10,15). */
    ok(s, M("{'now':1,'events':[%s,%s]}", SUB(1, "w0!A", 2, 9), SUB(1, "w0!B", 4, 5)),
       "EXECUTE_JOB w0!A 0-1");
    /* At 3: res 2 for 7 s fits [3,10) beside A: wait 0. */
    ok(s, QUERY(3, "w0!q1", 2, 7), "ANSWER w0!q1 0");
    /* res 2 for 8 s would overlap B's reservation: after B, at 15: 12. */
    ok(s, QUERY(3, "w0!q2", 2, 8), "ANSWER w0!q2 12");
    /* res 3 never fits beside A: also at 15. */
    ok(s, QUERY(3, "w0!q3", 3, 1), "ANSWER w0!q3 12");
    /* More than the platform: never (-1). */
    ok(s, QUERY(3, "w0!q4", 5, 1), "ANSWER w0!q4 -1");

    /* An ANSWER comes after the decisions of the same message. */
    ok(s,
       M("{'now':10,'events':[%s,{'timestamp':10,'type':'QUERY','data':{'requests':{"
         "'estimate_waiting_time':{'job_id':'w0!q5','job':{'res':1,'walltime':1}}}}}]}",
         DONE(10, "w0!A", "0-1")),
       "EXECUTE_JOB w0!B 0-3|ANSWER w0!q5 5");

    /* The exact shape of an ANSWER. */
    const char *req = QUERY(11, "w0!q6", 4, 2);
    const char *reply;
    size_t len;
    fbf_error err = {{0}};
    assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err), 0);
    cJSON *r = fbf_test_bv4_check_reply(req, reply, len);
    const cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "events"), 0);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring, "ANSWER");
    const cJSON *est = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ev, "data"), "estimate_waiting_time");
    assert_true(cJSON_IsObject(est));
    assert_int_equal(cJSON_GetArraySize(est), 2);
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(est, "job_id")->valuestring, "w0!q6");
    assert_true(cJSON_GetObjectItemCaseSensitive(est, "estimated_waiting_time")->valuedouble ==
                4.0);
    cJSON_Delete(r);
    fbf_bv4_session_destroy(s);
}

/* ---- config: dynamic jobs (Redis mode: test_redis.c) ------------------ */

static void test_dynamic_jobs_notify(void **state)
{
    const char *configs[] = {
        "'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':false",
        "'job_submission':{'forward_profiles':false,'from_scheduler':{'enabled':true,"
        "'acknowledge':true}}",
    };
    for (int i = 0; i < 2; i++) {
        fbf_bv4_session *s = new_session("easy", 1);
        ok(s, BEGINS(4, configs[i]), "NOTIFY registration_finished");
        /* Once only. */
        ok(s, M("{'now':1,'events':[%s]}", SUB(1, "w0!1", 1, 5)), "EXECUTE_JOB w0!1 0");
        ok(s, OBS_REQUESTED_CALL, "");
        fbf_bv4_session_destroy(s);
    }
    /* Disabled (observed config): no NOTIFY. */
    fbf_bv4_session *s = new_session("easy", 1);
    ok(s, fbf_test_obs_begins4, "");
    fbf_bv4_session_destroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_observed_sequence),
        cmocka_unit_test(test_observed_begins_then_ends),
        cmocka_unit_test(test_kill_after),
        cmocka_unit_test(test_tag_starts),
        cmocka_unit_test(test_nested_config_accepted),
        cmocka_unit_test(test_worked_example_fcfs),
        cmocka_unit_test(test_worked_example_easy),
        cmocka_unit_test(test_worked_example_conservative),
        cmocka_unit_test(test_reject_before_execute),
        cmocka_unit_test(test_sparse_compute_ids),
        cmocka_unit_test(test_killed_and_ignored_events),
        cmocka_unit_test(test_query_estimate),
        cmocka_unit_test(test_dynamic_jobs_notify),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
