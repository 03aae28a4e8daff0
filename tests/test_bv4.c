/*
 * test_bv4: the Batsim v4 session API (io/bv4_session.h), in process.
 *
 * Every message Batsim 4.2.1 was observed to send is fed verbatim in a
 * sequence that makes it valid; every reply is parsed back with cJSON and
 * checked against D0 (reply now == request now, every event stamped now,
 * REJECT < EXECUTE < CALL_ME_LATER, allocations canonical and disjoint).
 * Then every kind of malformed message must fail with its documented,
 * one-line error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/idset.h"
#include "io/bv4_session.h"
#include "policies/registry.h"

/* ---- the observed messages, verbatim ---------------------------------- */

static const char OBS_BEGINS[] =
    "{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,\"type\":\"SIMULATION_BEGINS\","
    "\"data\":{\"nb_resources\":4,\"nb_compute_resources\":4,\"nb_storage_resources\":0,"
    "\"allow_compute_sharing\":false,\"allow_storage_sharing\":true,\"config\":{\"redis-"
    "enabled\":false,\"redis-hostname\":\"127.0.0.1\",\"redis-port\":6379,\"redis-prefix\":"
    "\"default\",\"profiles-forwarded-on-submission\":false,\"dynamic-jobs-enabled\":false,"
    "\"dynamic-jobs-acknowledged\":false,\"profile-reuse-enabled\":false,\"sched-config\":"
    "\"\",\"forward-unknown-events\":false},\"compute_resources\":[{\"id\":0,\"name\":"
    "\"Bourassa\",\"state\":\"idle\",\"properties\":{\"role\":\"\"},\"zone_properties\":{}},"
    "{\"id\":1,\"name\":\"Fafard\",\"state\":\"idle\",\"properties\":{\"role\":\"\"},"
    "\"zone_properties\":{}},{\"id\":2,\"name\":\"Ginette\",\"state\":\"idle\","
    "\"properties\":{\"role\":\"\"},\"zone_properties\":{}},{\"id\":3,\"name\":\"Jupiter\","
    "\"state\":\"idle\",\"properties\":{\"role\":\"\"},\"zone_properties\":{}}],"
    "\"storage_resources\":[],\"workloads\":{\"w0\":\"/path/to/batsim/workloads/"
    "test_delays.json\"},\"profiles\":{\"w0\":{\"delay10\":{\"type\":\"delay\",\"delay\":10}}}}"
    "}]}";

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

/* ---- helpers ---------------------------------------------------------- */

/* printf into a rotating static buffer, turning ' into " so JSON reads
 * without escapes: M("{'now':%g,'events':[]}", 1.0). */
static const char *M(const char *fmt, ...)
{
    static char bufs[8][16384];
    static int next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    for (char *c = b; *c; c++)
        if (*c == '\'')
            *c = '"';
    return b;
}

/* A JOB_SUBMITTED event (no trailing comma). */
static const char *SUB(double ts, const char *id, int res, double wall)
{
    return M("{'timestamp':%.6f,'type':'JOB_SUBMITTED','data':{'job_id':'%s','job':{'id':'%s',"
             "'subtime':%.6f,'walltime':%g,'res':%d,'profile':'p'}}}",
             ts, id, id, ts, wall, res);
}

static const char *DONE(double ts, const char *id, const char *alloc)
{
    return M("{'timestamp':%.6f,'type':'JOB_COMPLETED','data':{'job_id':'%s','job_state':"
             "'COMPLETED_SUCCESSFULLY','return_code':0,'alloc':'%s'}}",
             ts, id, alloc);
}

/* A flat SIMULATION_BEGINS message of n resources with the given config
 * members (a JSON fragment, may be empty). */
static const char *BEGINS(int n, const char *config)
{
    char res[4096] = "";
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(res + off, sizeof res - off,
                                "%s{'id':%d,'name':'h%d','state':'idle','properties':{}}",
                                i ? "," : "", i, i);
    return M("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
             "'nb_resources':%d,'nb_compute_resources':%d,'nb_storage_resources':0,"
             "'config':{%s},'compute_resources':[%s],'storage_resources':[],"
             "'workloads':{},'profiles':{}}}]}",
             n, n, config, res);
}

static fbf_bv4_session *new_session(const char *policy, unsigned workers)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    assert_non_null(pe);
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                   .workers = workers},
        .log = NULL,
    };
    fbf_error err = {{0}};
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("session_create: %s", err.text);
    return s;
}

static int rank_of(const char *type)
{
    if (strcmp(type, "REJECT_JOB") == 0)
        return 0;
    if (strcmp(type, "EXECUTE_JOB") == 0)
        return 1;
    if (strcmp(type, "CALL_ME_LATER") == 0)
        return 2;
    return -1; /* NOTIFY, ANSWER: not ordered by D0 */
}

/* Checks the D0 invariants of reply against req; returns the parsed reply. */
static cJSON *check_reply(const char *req, const char *reply, size_t reply_len)
{
    assert_int_equal(strlen(reply), reply_len);
    cJSON *rq = cJSON_Parse(req);
    cJSON *rp = cJSON_Parse(reply);
    if (!rp)
        fail_msg("reply is not JSON: %s", reply);
    assert_non_null(rq);
    const cJSON *rq_now = cJSON_GetObjectItemCaseSensitive(rq, "now");
    const cJSON *rp_now = cJSON_GetObjectItemCaseSensitive(rp, "now");
    assert_true(cJSON_IsNumber(rp_now));
    if (rp_now->valuedouble != rq_now->valuedouble)
        fail_msg("reply now %.17g != request now %.17g", rp_now->valuedouble,
                 rq_now->valuedouble);
    double now = rq_now->valuedouble;
    cJSON_Delete(rq);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(rp, "events");
    assert_true(cJSON_IsArray(events));
    int last_rank = 0;
    fbf_idset used;
    fbf_idset_init(&used);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "timestamp");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
        assert_true(cJSON_IsNumber(ts));
        assert_true(cJSON_IsString(type));
        assert_true(cJSON_IsObject(data));
        if (ts->valuedouble != now)
            fail_msg("%s stamped %.17g, not now %.17g", type->valuestring, ts->valuedouble,
                     now);
        int r = rank_of(type->valuestring);
        if (r >= 0) {
            if (r < last_rank)
                fail_msg("D0 order broken: %s after a later kind in %s", type->valuestring,
                         reply);
            last_rank = r;
        }
        if (strcmp(type->valuestring, "EXECUTE_JOB") == 0) {
            const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(data, "alloc");
            assert_true(cJSON_IsString(alloc));
            assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(data, "job_id")));
            fbf_idset a;
            fbf_idset_init(&a);
            fbf_error e = {{0}};
            if (fbf_idset_parse(&a, alloc->valuestring, &e) != 0)
                fail_msg("alloc \"%s\": %s", alloc->valuestring, e.text);
            char canon[256];
            fbf_idset_format(&a, canon, sizeof canon);
            assert_string_equal(canon, alloc->valuestring);
            assert_true(fbf_idset_count(&a) >= 1);
            if (fbf_idset_intersects(&a, &used))
                fail_msg("allocations overlap in %s", reply);
            assert_int_equal(fbf_idset_union(&used, &a), 0);
            fbf_idset_fini(&a);
        }
    }
    fbf_idset_fini(&used);
    return rp;
}

/* The events of a reply, compactly: "EXECUTE_JOB w0!1 0-1|REJECT_JOB w0!2". */
static const char *summary(const cJSON *reply)
{
    static char buf[4096];
    size_t off = 0;
    buf[0] = '\0';
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, "events"))
    {
        const char *type = cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(d, "alloc");
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", off ? "|" : "", type);
        if (cJSON_IsString(id))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", id->valuestring);
        if (cJSON_IsString(alloc))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", alloc->valuestring);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "type");
        if (cJSON_IsString(t))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", t->valuestring);
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(d, "timestamp");
        if (cJSON_IsNumber(at))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %g", at->valuedouble);
        const cJSON *est = cJSON_GetObjectItemCaseSensitive(d, "estimate_waiting_time");
        if (est) {
            const cJSON *eid = cJSON_GetObjectItemCaseSensitive(est, "job_id");
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(est, "estimated_waiting_time");
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s %g",
                                    cJSON_IsString(eid) ? eid->valuestring : "?",
                                    cJSON_IsNumber(w) ? w->valuedouble : NAN);
        }
    }
    return buf;
}

/* Sends req, which must succeed with want_rc (0 or FBF_BV4_ENDED), checks
 * the reply's invariants and its summary. Returns a copy of the raw reply
 * if keep (caller frees), else NULL. */
static char *exchange(fbf_bv4_session *s, const char *req, int want_rc, const char *want,
                      bool keep)
{
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
    if (rc != want_rc)
        fail_msg("handle() = %d (%s), want %d, on %s", rc, err.text, want_rc, req);
    assert_non_null(reply);
    cJSON *r = check_reply(req, reply, len);
    const char *got = summary(r);
    if (strcmp(got, want) != 0)
        fail_msg("reply to %s\n  is   \"%s\"\n  want \"%s\"\n  raw  %s", req, got, want, reply);
    cJSON_Delete(r);
    return keep ? strdup(reply) : NULL;
}

static void ok(fbf_bv4_session *s, const char *req, const char *want)
{
    exchange(s, req, 0, want, false);
}

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
    free(seq_step(s, OBS_BEGINS, "", out, cap));
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
    char *r = exchange(s, OBS_BEGINS, 0, "", true);
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
 * skipped; RESOURCE_STATE_CHANGED and ANSWER are accepted and ignored. */
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
       M("{'now':6,'events':[{'timestamp':6,'type':'RESOURCE_STATE_CHANGED','data':{"
         "'resources':'1 2 3','state':'42'}},{'timestamp':6,'type':'ANSWER','data':{"
         "'consumed_energy':12500.0}},{'timestamp':6,'type':'NOTIFY','data':{'type':"
         "'no_more_external_event_to_occur'}}]}"),
       "");
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
    cJSON *r = check_reply(req, reply, len);
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

/* ---- config: dynamic jobs, Redis -------------------------------------- */

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
    ok(s, OBS_BEGINS, "");
    fbf_bv4_session_destroy(s);
}

static void test_redis_not_supported(void **state)
{
    const char *configs[] = {
        "'redis-enabled':true,'redis-hostname':'127.0.0.1','redis-port':6379",
        "'redis':{'enabled':true,'hostname':'127.0.0.1','port':6379,'prefix':'default'}",
    };
    for (int i = 0; i < 2; i++) {
        fbf_bv4_session *s = new_session("easy", 1);
        const char *req = BEGINS(4, configs[i]);
        const char *reply = NULL;
        size_t len = 0;
        fbf_error err = {{0}};
        int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
        assert_int_equal(rc, -ENOTSUP);
        assert_string_equal(err.text,
                            "event 0 (SIMULATION_BEGINS): data.config: Redis is enabled, which "
                            "this fastbf does not support; run Batsim without --enable-redis");
        fbf_bv4_session_destroy(s);
    }
}

/* ---- malformed messages ------------------------------------------------ */

enum { L_FRESH, L_BEGUN, L_JOBS };

/* Brings a fresh session to a level: L_BEGUN = after a 4-resource
 * SIMULATION_BEGINS; L_JOBS = then at now 10, w0!1 (res 2) runs on 0-1
 * and w0!2 (res 4) waits. */
static fbf_bv4_session *session_at(int level)
{
    fbf_bv4_session *s = new_session("easy", 1);
    if (level >= L_BEGUN)
        ok(s, BEGINS(4, ""), "");
    if (level >= L_JOBS)
        ok(s, M("{'now':10,'events':[%s,%s]}", SUB(10, "w0!1", 2, 100), SUB(10, "w0!2", 4, 50)),
           "EXECUTE_JOB w0!1 0-1");
    return s;
}

typedef struct bad_case {
    int level;
    const char *msg;    /* ' stands for " */
    const char *want;   /* the exact message, or with a trailing '*', a prefix */
} bad_case;

#define EV(ts, type, data) "{'timestamp':" #ts ",'type':'" type "','data':" data "}"
#define MSG(now, evs) "{'now':" #now ",'events':[" evs "]}"
#define JOB(id, extra) "{'job_id':'" id "','job':{'id':'" id "','subtime':11" extra "}}"

static const bad_case bad_cases[] = {
    /* envelope */
    {L_FRESH, "{'now':0,", "malformed JSON message near byte *"},
    {L_BEGUN, "", "malformed JSON message near byte *"},
    {L_BEGUN, "{'now':1,'events':[}", "malformed JSON message near byte *"},
    {L_BEGUN, "[1,2]", "message: expected a JSON object, got an array"},
    {L_BEGUN, "'now'", "message: expected a JSON object, got a string"},
    {L_BEGUN, "{'events':[]}", "message: now: expected a finite number, got nothing"},
    {L_BEGUN, "{'now':'1','events':[]}", "message: now: expected a finite number, got a string"},
    {L_BEGUN, "{'now':null,'events':[]}", "message: now: expected a finite number, got null"},
    {L_BEGUN, "{'now':1}", "message: events: expected an array, got nothing"},
    {L_BEGUN, "{'now':1,'events':{}}", "message: events: expected an array, got an object"},
    /* events */
    {L_BEGUN, MSG(1, "42"), "event 0: expected an object, got a number"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "{}") ",[]"),
     "event 1: expected an object, got an array"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'data':{}}"), "event 0: type: expected a string, got nothing"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'type':7,'data':{}}"),
     "event 0: type: expected a string, got a number"},
    {L_BEGUN, MSG(1, EV(1, "JOB_EXPLODED", "{}")),
     "event 0 (JOB_EXPLODED): type: unknown event type"},
    {L_BEGUN, MSG(1, EV(1, "EXECUTE_JOB", "{'job_id':'w0!1','alloc':'0'}")),
     "event 0 (EXECUTE_JOB): type: this event goes from the scheduler to Batsim, not the other "
     "way"},
    {L_BEGUN, MSG(1, EV(1, "CALL_ME_LATER", "{'timestamp':5}")),
     "event 0 (CALL_ME_LATER): type: this event goes from the scheduler to Batsim, not the "
     "other way"},
    {L_BEGUN, MSG(1, "{'type':'REQUESTED_CALL','data':{}}"),
     "event 0 (REQUESTED_CALL): timestamp: expected a finite number, got nothing"},
    {L_BEGUN, MSG(1, "{'timestamp':'1','type':'REQUESTED_CALL','data':{}}"),
     "event 0 (REQUESTED_CALL): timestamp: expected a finite number, got a string"},
    {L_BEGUN, MSG(1, EV(2, "REQUESTED_CALL", "{}")),
     "event 0 (REQUESTED_CALL): timestamp: 2.000000 is after now 1.000000"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "{}") "," EV(0.5, "REQUESTED_CALL", "{}")),
     "event 1 (REQUESTED_CALL): timestamp: 0.500000 is before the previous event's 1.000000"},
    {L_BEGUN, MSG(1, EV(1, "REQUESTED_CALL", "[]")),
     "event 0 (REQUESTED_CALL): data: expected an object, got an array"},
    {L_BEGUN, MSG(1, "{'timestamp':1,'type':'REQUESTED_CALL'}"),
     "event 0 (REQUESTED_CALL): data: expected an object, got nothing"},
    {L_BEGUN, MSG(1, EV(1, "SIMULATION_ENDS", "null")),
     "event 0 (SIMULATION_ENDS): data: expected an object, got null"},
    /* SIMULATION_BEGINS */
    {L_FRESH, MSG(0, ""), "message: the first message must hold SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "JOB_SUBMITTED", JOB("w0!1", ",'res':1"))),
     "event 0 (JOB_SUBMITTED): received before SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "REQUESTED_CALL", "{}") "," EV(0, "SIMULATION_BEGINS",
                                                          "{'nb_resources':4}")),
     "event 0 (REQUESTED_CALL): received before SIMULATION_BEGINS"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_compute_resources':4}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got nothing"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':0}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a number"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':'4'}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a string"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':2.5}")),
     "event 0 (SIMULATION_BEGINS): data.nb_resources: expected an integer in [1, 2^31], got a number"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'nb_compute_resources':5}")),
     "event 0 (SIMULATION_BEGINS): data.nb_compute_resources: expected an integer in [1, "
     "nb_resources], got a number"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'nb_compute_resources':4,"
                                       "'compute_resources':[{'id':0},{'id':1},{'id':2}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: 3 entries for nb_compute_resources 4"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'compute_resources':[{'id':0},"
                                       "{'name':'x'}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources[].id: expected a resource number below nb_resources, got "
     "nothing"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'compute_resources':{}}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: expected an array, got an object"},
    {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4,'config':[]}")),
     "event 0 (SIMULATION_BEGINS): data.config: expected an object, got an array"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':2,'compute_resources':[{'id':0},"
                                       "{'id':0}]}")),
     "event 0 (SIMULATION_BEGINS): data.compute_resources: id 0 listed twice"},
    {L_FRESH,
     MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':4}") "," EV(
                0, "SIMULATION_BEGINS", "{'nb_resources':4}")),
     "event 1 (SIMULATION_BEGINS): the simulation already began"},
    {L_BEGUN, MSG(1, EV(1, "SIMULATION_BEGINS", "{'nb_resources':4}")),
     "event 0 (SIMULATION_BEGINS): the simulation already began"},
    /* JOB_SUBMITTED */
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job':{'id':'w0!1','res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job_id: expected a string, got nothing"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':5,'job':{'res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job_id: expected a string, got a number"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1'}")),
     "event 0 (JOB_SUBMITTED): data.job: expected an object (fastbf needs job descriptions), "
     "got nothing"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'walltime':5"))),
     "event 0 (JOB_SUBMITTED): data.job.res: expected an integer, got nothing"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!0", ",'res':1")) "," EV(
                 11, "JOB_SUBMITTED", JOB("w0!1", ",'res':'1'"))),
     "event 1 (JOB_SUBMITTED): data.job.res: expected an integer, got *"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1.5"))),
     "event 0 (JOB_SUBMITTED): data.job.res: expected an integer, got a number"},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1,'walltime':'100'"))),
     "event 0 (JOB_SUBMITTED): data.job.walltime: expected a number, got a string"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':'w0!1','res':1,'subtime':"
                                     "'0'}}")),
     "event 0 (JOB_SUBMITTED): data.job.subtime: expected a number, got a string"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':'w0!2','res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job.id: \"w0!2\" differs from job_id \"w0!1\""},
    {L_BEGUN, MSG(11, EV(11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'id':7,'res':1}}")),
     "event 0 (JOB_SUBMITTED): data.job.id: expected a string, got a number"},
    {L_BEGUN,
     MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1")) "," EV(
                 11, "JOB_SUBMITTED", "{'job_id':'w0!1','job':{'res':2}}")),
     "event 1 (JOB_SUBMITTED): data.job_id: job w0!1 submitted twice"},
    {L_JOBS, MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!2", ",'res':1,'walltime':5"))),
     "event 0 (JOB_SUBMITTED): data.job_id: job w0!2 submitted twice"},
    /* JOB_COMPLETED */
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!9','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0'}")),
     "event 0 (JOB_COMPLETED): data.job_id: unknown job w0!9"},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_state':'COMPLETED_SUCCESSFULLY'}")),
     "event 0 (JOB_COMPLETED): data.job_id: expected a string, got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'DONE'}")),
     "event 0 (JOB_COMPLETED): data.job_state: unknown state \"DONE\""},
    {L_JOBS, MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1'}")),
     "event 0 (JOB_COMPLETED): data.job_state: expected a string, got nothing"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_FAILED',"
                                     "'return_code':'1'}")),
     "event 0 (JOB_COMPLETED): data.return_code: expected an integer, got a string"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_FAILED',"
                                     "'alloc':[0,1]}")),
     "event 0 (JOB_COMPLETED): data.alloc: expected an interval set string, got an array"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!2','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0}")),
     "event 0 (JOB_COMPLETED): data.job_id: job w0!2 ended but it is waiting, not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!2','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0-3'}")),
     "event 0 (JOB_COMPLETED): data.job_id: job w0!2 ended but it is waiting, not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'alloc':'0-1'}") "," EV(11, "JOB_COMPLETED",
                                                               "{'job_id':'w0!1','job_state':"
                                                               "'COMPLETED_SUCCESSFULLY'}")),
     "event 1 (JOB_COMPLETED): data.job_id: job w0!1 ended but it is already finished, "
     "not running"},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'2-3'}")),
     "event 0 (JOB_COMPLETED): data.alloc: job w0!1 ran on \"0-1\", not \"2-3\""},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0'}")),
     "event 0 (JOB_COMPLETED): data.alloc: job w0!1 ran on \"0-1\", not \"0\""},
    {L_JOBS,
     MSG(11, EV(11, "JOB_COMPLETED", "{'job_id':'w0!1','job_state':'COMPLETED_SUCCESSFULLY',"
                                     "'return_code':0,'alloc':'0-'}")),
     "event 0 (JOB_COMPLETED): data.alloc: *"},
    /* JOB_KILLED */
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':'w0!1'}")),
     "event 0 (JOB_KILLED): data.job_ids: expected an array, got a string"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{}")),
     "event 0 (JOB_KILLED): data.job_ids: expected an array, got nothing"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1',3]}")),
     "event 0 (JOB_KILLED): data.job_ids[]: expected a string, got a number"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!1','w0!9']}")),
     "event 0 (JOB_KILLED): data.job_ids: unknown job w0!9"},
    {L_JOBS, MSG(11, EV(11, "JOB_KILLED", "{'job_ids':['w0!2']}")),
     "event 0 (JOB_KILLED): data.job_ids: job w0!2 ended but it is waiting, not running"},
    /* RESOURCE_STATE_CHANGED */
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1-','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: bad token \"1-\" at offset 0: "
     "expected a decimal digit"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'3-1','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: bad token \"3-1\" at offset 0: "
     "range end below its start"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1  2','state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: idset: empty token at offset 2 "
     "(leading, trailing or double space)"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'state':'0'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.resources: expected an interval set string, got "
     "nothing"},
    {L_BEGUN, MSG(1, EV(1, "RESOURCE_STATE_CHANGED", "{'resources':'1'}")),
     "event 0 (RESOURCE_STATE_CHANGED): data.state: expected a string, got nothing"},
    /* NOTIFY */
    {L_BEGUN, MSG(1, EV(1, "NOTIFY", "{'type':'bogus'}")),
     "event 0 (NOTIFY): data.type: unknown notification \"bogus\""},
    {L_BEGUN, MSG(1, EV(1, "NOTIFY", "{}")),
     "event 0 (NOTIFY): data.type: expected a string, got nothing"},
    /* QUERY */
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'consumed_energy':{}}}")),
     "event 0 (QUERY): data.requests: unknown request \"consumed_energy\" (fastbf answers "
     "estimate_waiting_time)"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{}")),
     "event 0 (QUERY): data.requests: expected an object, got nothing"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job':{'res':1}}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job_id: expected a string, got "
     "nothing"},
    {L_BEGUN, MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job_id':'q'}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job: expected an object, got nothing"},
    {L_BEGUN,
     MSG(1, EV(1, "QUERY", "{'requests':{'estimate_waiting_time':{'job_id':'q','job':{"
                           "'res':'1'}}}}")),
     "event 0 (QUERY): data.requests.estimate_waiting_time.job.res: expected an integer, got *"},
    /* time going backwards between messages */
    {L_JOBS, MSG(5, EV(5, "REQUESTED_CALL", "{}")), "now: time goes backwards: now 5 after 10"},
};

/* Whether err matches want (exact, or a prefix when want ends with '*'). */
static bool matches(const char *got, const char *want)
{
    size_t n = strlen(want);
    return n && want[n - 1] == '*' ? strncmp(got, want, n - 1) == 0 : strcmp(got, want) == 0;
}

/* Runs a bad case on a fresh session. Returns the code; the error text
 * goes to text. The session is gone before anything is checked, so that
 * a failing case leaks nothing. */
static int run_bad(const bad_case *c, char *text, size_t cap)
{
    fbf_bv4_session *s = session_at(c->level);
    const char *msg = M("%s", c->msg);
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, msg, strlen(msg), &reply, &len, &err);
    if (rc >= 0)
        snprintf(text, cap, "(accepted, rc %d, reply %s)", rc, reply);
    else
        snprintf(text, cap, "%s", err.text);
    fbf_bv4_session_destroy(s);
    return rc;
}

/* Runs the cases; every mismatch is reported, then the test fails. */
static void check_bad_cases(const bad_case *cases, size_t n)
{
    static char failures[16384];
    size_t off = 0;
    failures[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char text[512];
        int rc = run_bad(&cases[i], text, sizeof text);
        const char *msg = M("%s", cases[i].msg);
        if (rc >= 0 || !matches(text, cases[i].want) || strchr(text, '\n'))
            off += (size_t)snprintf(failures + off, sizeof failures - off,
                                    "\n  on    %s\n  error \"%s\"\n  want  \"%s\"", msg, text,
                                    cases[i].want);
        if (off >= sizeof failures)
            break;
    }
    if (off)
        fail_msg("malformed messages not refused as documented:%s", failures);
}

static void test_malformed_messages(void **state)
{
    check_bad_cases(bad_cases, sizeof bad_cases / sizeof *bad_cases);
}

/* bv4_session.h: a request that breaks the protocol returns one of the
 * documented codes (-EPROTO, -ENOENT, -EEXIST, -EINVAL, -ENOTSUP). */
static void test_error_codes_as_documented(void **state)
{
    char text[512];
    static char failures[4096];
    size_t off = 0;
    failures[0] = '\0';
    for (size_t i = 0; i < sizeof bad_cases / sizeof *bad_cases; i++) {
        int rc = run_bad(&bad_cases[i], text, sizeof text);
        if (rc < 0 && rc != -EPROTO && rc != -EINVAL && rc != -ENOENT && rc != -EEXIST &&
            rc != -ENOTSUP && off < sizeof failures)
            off += (size_t)snprintf(failures + off, sizeof failures - off,
                                    "\n  rc %d (%s) for \"%s\"", rc, strerror(-rc), text);
    }
    if (off)
        fail_msg("errors outside the documented codes:%s", failures);
}

/* bv4_check.h documents this exact message for a res given as a string. */
static void test_documented_res_message(void **state)
{
    fbf_bv4_session *s = session_at(L_BEGUN);
    const char *msg =
        M(MSG(11, EV(11, "JOB_SUBMITTED", JOB("w0!0", ",'res':1")) "," EV(
                      11, "JOB_SUBMITTED", JOB("w0!1", ",'res':1")) "," EV(11, "JOB_SUBMITTED",
                                                                        JOB("w0!2",
                                                                            ",'res':'4'"))));
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, msg, strlen(msg), &reply, &len, &err);
    fbf_bv4_session_destroy(s);
    assert_int_equal(rc, -EPROTO);
    assert_string_equal(err.text,
                        "event 2 (JOB_SUBMITTED): data.job.res: expected an integer, got a string");
}

/* Inputs the checker lets through although they break the protocol. */
static void test_missing_checks(void **state)
{
    static const bad_case cases[] = {
        /* Bytes after the JSON object: not a JSON text. */
        {L_BEGUN, "{'now':1,'events':[]} trailing",
         "malformed JSON message: unexpected bytes after the message at byte *"},
        {L_BEGUN, "{'now':1,'events':[]}{'now':2,'events':[]}",
         "malformed JSON message: unexpected bytes after the message at byte *"},
        /* More compute resources than resources. */
        {L_FRESH,
         MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':2,'compute_resources':[{'id':0},"
                                           "{'id':1},{'id':2}]}")),
         "event 0 (SIMULATION_BEGINS): data.compute_resources*"},
        /* Resource ids are below 2^31 (idset.h): fastbf cannot read back the
         * allocations of a larger platform; from 2^32 the count does not
         * even fit its uint32_t. */
        {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':3000000000}")),
         "event 0 (SIMULATION_BEGINS): data.nb_resources: *"},
        {L_FRESH, MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':5000000000}")),
         "event 0 (SIMULATION_BEGINS): data.nb_resources: *"},
    };
    check_bad_cases(cases, sizeof cases / sizeof *cases);
}

/* What happens today on a platform of 3e9 resources: fastbf allocates ids
 * it then refuses to read back, with a self-contradictory message. */
static void test_huge_platform_roundtrip(void **state)
{
    fbf_bv4_session *s = new_session("easy", 1);
    const char *msgs[] = {
        MSG(0, EV(0, "SIMULATION_BEGINS", "{'nb_resources':3000000000}")),
        MSG(1, EV(1, "JOB_SUBMITTED", "{'job_id':'a','job':{'res':3000000000,'walltime':5}}")),
        MSG(2, EV(2, "JOB_COMPLETED", "{'job_id':'a','job_state':'COMPLETED_SUCCESSFULLY',"
                                      "'alloc':'0-2999999999'}")),
    };
    int rc = 0;
    char text[512] = "";
    for (int i = 0; i < 3 && rc >= 0; i++) {
        const char *msg = M("%s", msgs[i]);
        const char *reply = NULL;
        size_t len = 0;
        fbf_error err = {{0}};
        rc = fbf_bv4_session_handle(s, msg, strlen(msg), &reply, &len, &err);
        snprintf(text, sizeof text, "message %d: rc %d: %s", i, rc, rc < 0 ? err.text : reply);
    }
    fbf_bv4_session_destroy(s);
    /* Either the platform is refused at once, or the run goes through. */
    if (!(rc >= 0 || strstr(text, "message 0:")))
        fail_msg("%s", text);
}

/* A number that is not finite (1e999 parses as infinity) must not be
 * reported as "expected a number, got a number". */
static void test_infinite_numbers(void **state)
{
    const char *msgs[] = {
        "{'now':1e999,'events':[]}",
        MSG(1, "{'timestamp':-1e999,'type':'REQUESTED_CALL','data':{}}"),
    };
    static char failures[2048];
    size_t off = 0;
    failures[0] = '\0';
    for (int i = 0; i < 2; i++) {
        fbf_bv4_session *s = session_at(L_BEGUN);
        const char *msg = M("%s", msgs[i]);
        const char *reply = NULL;
        size_t len = 0;
        fbf_error err = {{0}};
        int rc = fbf_bv4_session_handle(s, msg, strlen(msg), &reply, &len, &err);
        fbf_bv4_session_destroy(s);
        if (rc != -EPROTO || !strstr(err.text, i == 0 ? "now" : "timestamp") ||
            strstr(err.text, "expected a number, got a number"))
            off += (size_t)snprintf(failures + off, sizeof failures - off,
                                    "\n  on %s: rc %d, \"%s\"", msg, rc, err.text);
    }
    if (off)
        fail_msg("non-finite numbers not reported clearly:%s", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_observed_sequence),
        cmocka_unit_test(test_observed_begins_then_ends),
        cmocka_unit_test(test_nested_config_accepted),
        cmocka_unit_test(test_worked_example_fcfs),
        cmocka_unit_test(test_worked_example_easy),
        cmocka_unit_test(test_worked_example_conservative),
        cmocka_unit_test(test_reject_before_execute),
        cmocka_unit_test(test_sparse_compute_ids),
        cmocka_unit_test(test_killed_and_ignored_events),
        cmocka_unit_test(test_query_estimate),
        cmocka_unit_test(test_dynamic_jobs_notify),
        cmocka_unit_test(test_redis_not_supported),
        cmocka_unit_test(test_malformed_messages),
        cmocka_unit_test(test_error_codes_as_documented),
        cmocka_unit_test(test_documented_res_message),
        cmocka_unit_test(test_missing_checks),
        cmocka_unit_test(test_huge_platform_roundtrip),
        cmocka_unit_test(test_infinite_numbers),
    };
    /* FBF_TEST_FILTER / FBF_TEST_SKIP: run or skip tests by name pattern. */
    if (getenv("FBF_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FBF_TEST_FILTER"));
    if (getenv("FBF_TEST_SKIP"))
        cmocka_set_skip_filter(getenv("FBF_TEST_SKIP"));
    return cmocka_run_group_tests(tests, NULL, NULL);
}
