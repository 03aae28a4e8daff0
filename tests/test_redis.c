/*
 * test_redis: Batsim's Redis mode in process, against a real redis-server
 * started for this suite (support/redis_server):
 *
 *  - the session (io/bv4_session.h) in Redis mode, with both config
 *    forms: job_id-only JOB_SUBMITTED events are decided exactly as the
 *    same jobs described in the messages, and every fault of the store
 *    (missing key, malformed JSON, a missing or wrong field, a server that
 *    cannot be reached, a bad config member) is refused with its message;
 *  - fastbf's submitter mode in Redis mode (io/submitter.h): each due
 *    job's description and each new profile are in the store under
 *    Batsim's keys before the reply, whose REGISTER_JOB events carry
 *    job_id only, with no REGISTER_PROFILE; with acknowledgements, the
 *    job_id-only JOB_SUBMITTED reads those very keys back; a store lost
 *    midway is an error naming the key.
 * The store itself is tested in test_store.c, the end-to-end runs over
 * ZeroMQ in test_replay_redis.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/store.h"
#include "io/submitter.h"
#include "io/bv4_session.h"
#include "policies/registry.h"
#include "support/bv4_kit.h"
#include "support/redis_server.h"
#include "support/testkit.h"

#define M fbf_test_msg
#define SUB fbf_test_sub
#define BEGINS fbf_test_bv4_begins
#define ok fbf_test_bv4_ok

static int port(void) { return fbf_test_redis_shared()->port; }

/* ---- the session in Redis mode ------------------------------------------ */

/* The flat config of Batsim 4.2.1 and the nested one of the protocol
 * text, pointing at the test's server with the given prefix. */
static const char *config(int nested, const char *prefix, int p)
{
    static char buf[2][256];
    char *b = buf[nested];
    if (nested)
        snprintf(b, 256, "'redis':{'enabled':true,'hostname':'127.0.0.1','port':%d,"
                         "'prefix':'%s'}", p, prefix);
    else
        snprintf(b, 256, "'redis-enabled':true,'redis-hostname':'127.0.0.1','redis-port':%d,"
                         "'redis-prefix':'%s'", p, prefix);
    return b;
}

/* JOB_SUBMITTED in Redis form: job_id only. */
static const char *rsub(double ts, const char *id)
{
    return M("{'timestamp':%.6f,'type':'JOB_SUBMITTED','data':{'job_id':'%s'}}", ts, id);
}

/* Stores what fbf_test_sub() would have sent in the message. */
static void store_job(const char *prefix, const char *id, double subtime, int res, double wall)
{
    char key[64], val[160];
    snprintf(key, sizeof key, "%s:job_%s", prefix, id);
    snprintf(val, sizeof val,
             "{\"id\":\"%s\",\"subtime\":%.6f,\"walltime\":%.6f,\"res\":%d,\"profile\":\"p\"}",
             id, subtime, wall, res);
    fbf_test_redis_set(fbf_test_redis_shared(), key, val);
}

/* Message i of a short run (scheduling-semantics.md's worked example,
 * then arrivals and the completion of A), with the jobs described in the
 * messages or, with Redis, stored under prefix and named only. Built on
 * demand: fbf_test_msg()'s buffers rotate. */
static const char *run_msg(int i, bool redis, int nested, const char *prefix)
{
    switch (i) {
    case 0: return BEGINS(4, redis ? config(nested, prefix, port()) : "");
    case 1:
        if (redis)
            return M("{'now':0,'events':[%s,%s,%s,%s]}", rsub(0, "w0!A"), rsub(0, "w0!B"),
                     rsub(0, "w0!C"), rsub(0, "w0!D"));
        return M("{'now':0,'events':[%s,%s,%s,%s]}", SUB(0, "w0!A", 2, 10),
                 SUB(0, "w0!B", 4, 5), SUB(0, "w0!C", 2, 5), SUB(0, "w0!D", 1, 20));
    case 2: /* a described job beside one in Redis form */
        return M("{'now':3,'events':[%s,%s]}", redis ? rsub(3, "w0!E") : SUB(3, "w0!E", 1, 2),
                 SUB(3, "w0!F", 1, 4));
    default: return M("{'now':10,'events':[%s]}", fbf_test_done(10, "w0!A", "0-1"));
    }
}

static char *exchange(fbf_bv4_session *s, const char *req)
{
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
    if (rc != 0)
        fail_msg("handle() = %d (%s) on %s", rc, err.text, req);
    cJSON_Delete(fbf_test_bv4_check_reply(req, reply, len));
    return strdup(reply);
}

/* Every reply of a session in Redis mode equals the reply of a session
 * that got the same jobs in its messages, under each policy and both
 * config forms. */
static void test_session_same_decisions(void **state)
{
    const char *policies[] = {"fcfs", "easy", "conservative"};
    for (int nested = 0; nested < 2; nested++) {
        const char *prefix = nested ? "nest" : "flat";
        store_job(prefix, "w0!A", 0, 2, 10);
        store_job(prefix, "w0!B", 0, 4, 5);
        store_job(prefix, "w0!C", 0, 2, 5);
        store_job(prefix, "w0!D", 0, 1, 20);
        store_job(prefix, "w0!E", 3, 1, 2);
        for (int p = 0; p < 3; p++) {
            fbf_bv4_session *plain = fbf_test_bv4_session(policies[p], 2);
            fbf_bv4_session *redis = fbf_test_bv4_session(policies[p], 2);
            for (int i = 0; i < 4; i++) {
                char *want = exchange(plain, run_msg(i, false, nested, prefix));
                char *got = exchange(redis, run_msg(i, true, nested, prefix));
                if (strcmp(got, want) != 0)
                    fail_msg("%s, %s config, message %d: reply %s, without Redis %s",
                             policies[p], nested ? "nested" : "flat", i, got, want);
                free(got);
                free(want);
            }
            fbf_bv4_session_destroy(plain);
            fbf_bv4_session_destroy(redis);
        }
    }
}

/* The first reply, in which D (res 1) is backfilled beside A: the jobs'
 * res really came from Redis. */
static void test_session_reads_descriptions(void **state)
{
    store_job("rd", "w0!1", 0, 3, 50);
    store_job("rd", "w0!2", 0, 2, 10);
    store_job("rd", "w0!3", 0, 1, 10);
    fbf_bv4_session *s = fbf_test_bv4_session("easy", 1);
    ok(s, BEGINS(4, config(0, "rd", port())), "");
    ok(s, M("{'now':0,'events':[%s,%s,%s]}", rsub(0, "w0!1"), rsub(0, "w0!2"), rsub(0, "w0!3")),
       "EXECUTE_JOB w0!1 0-2|EXECUTE_JOB w0!3 3");
    fbf_bv4_session_destroy(s);
}

/* A fresh session in Redis mode (prefix "bad"), then req, which must fail
 * with code and exactly want. */
static void expect_refused(const char *req, int code, const char *want)
{
    fbf_bv4_session *s = fbf_test_bv4_session("fcfs", 1);
    ok(s, BEGINS(4, config(1, "bad", port())), "");
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
    if (rc != code || strcmp(err.text, want) != 0)
        fail_msg("got %d \"%s\"\nwant %d \"%s\"", rc, err.text, code, want);
    fbf_bv4_session_destroy(s);
}

static void test_session_store_faults(void **state)
{
    const fbf_test_redis *srv = fbf_test_redis_shared();
    store_job("bad", "w0!1", 1, 1, 10);
    /* Missing key, named with the job, after a good one. */
    expect_refused(M("{'now':1,'events':[%s,%s]}", rsub(1, "w0!1"), rsub(1, "w0!2")), -EPROTO,
                   "event 1 (JOB_SUBMITTED): Redis key \"bad:job_w0!2\" does not exist (job "
                   "w0!2 has no description)");
    fbf_test_redis_set(srv, "bad:job_w0!3", "{\"id\":\"w0!3\",\"res\":");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!3")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!3\": malformed JSON near "
                   "byte 18");
    fbf_test_redis_set(srv, "bad:job_w0!4", "{\"id\":\"w0!4\",\"walltime\":5}");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!4")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!4\": res: expected an "
                   "integer, got nothing");
    fbf_test_redis_set(srv, "bad:job_w0!5", "{\"id\":\"w0!5\",\"res\":\"2\"}");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!5")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!5\": res: expected an "
                   "integer, got a string");
    fbf_test_redis_set(srv, "bad:job_w0!6", "{\"id\":\"w0!9\",\"res\":1}");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!6")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!6\": id: \"w0!9\" differs "
                   "from job_id \"w0!6\"");
    fbf_test_redis_set(srv, "bad:job_w0!7", "[1,2]");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!7")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!7\": expected a JSON object "
                   "(the job's description), got an array");
    /* One reading of each value, as on the socket. */
    fbf_test_redis_set(srv, "bad:job_w0!8", "{\"id\":\"w0!8\",\"res\":1} {\"res\":9}");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!8")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!8\": unexpected bytes after "
                   "the JSON value at byte 22");
    fbf_test_redis_set(srv, "bad:job_w0!10", "{\"id\":\"w0!10\",\"res\":1,\"res\":9}");
    expect_refused(M("{'now':1,'events':[%s]}", rsub(1, "w0!10")), -EPROTO,
                   "event 0 (JOB_SUBMITTED): Redis key \"bad:job_w0!10\": duplicate key \"res\" "
                   "(one member named twice)");
}

/* SIMULATION_BEGINS itself: the server it names must answer, and the
 * config members must have their types. Redis off: job_id alone is
 * refused as before. */
static void test_session_begins_faults(void **state)
{
    int dead = fbf_test_redis_dead_port();
    for (int nested = 0; nested < 2; nested++) {
        fbf_bv4_session *s = fbf_test_bv4_session("easy", 1);
        const char *req = BEGINS(4, config(nested, "x", dead));
        const char *reply;
        size_t len;
        fbf_error err = {{0}};
        assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err),
                         -ECONNREFUSED);
        char want[200];
        snprintf(want, sizeof want,
                 "event 0 (SIMULATION_BEGINS): cannot connect to Redis at 127.0.0.1:%d (host "
                 "127.0.0.1, port %d): Connection refused",
                 dead, dead);
        assert_string_equal(err.text, want);
        fbf_bv4_session_destroy(s);
    }
    const char *bad[][2] = {
        {"'redis-enabled':true,'redis-port':'6379'",
         "event 0 (SIMULATION_BEGINS): data.config.redis-port: expected an integer in [1, "
         "65535], got a string"},
        {"'redis':{'enabled':true,'port':70000}",
         "event 0 (SIMULATION_BEGINS): data.config.redis.port: expected an integer in [1, "
         "65535], got a number"},
        {"'redis-enabled':true,'redis-hostname':''",
         "event 0 (SIMULATION_BEGINS): data.config.redis-hostname: expected a host name, got "
         "an empty string"},
        {"'redis':{'enabled':true,'prefix':5}",
         "event 0 (SIMULATION_BEGINS): data.config.redis.prefix: expected a string, got a "
         "number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        fbf_bv4_session *s = fbf_test_bv4_session("easy", 1);
        const char *req = BEGINS(4, bad[i][0]);
        const char *reply;
        size_t len;
        fbf_error err = {{0}};
        assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err),
                         -EPROTO);
        assert_string_equal(err.text, bad[i][1]);
        fbf_bv4_session_destroy(s);
    }
    /* Disabled explicitly: descriptions are needed in the messages. */
    fbf_bv4_session *s = fbf_test_bv4_session("easy", 1);
    ok(s, BEGINS(4, "'redis-enabled':false"), "");
    const char *req = M("{'now':1,'events':[%s]}", rsub(1, "w0!1"));
    const char *reply;
    size_t len;
    fbf_error err = {{0}};
    assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err), -EPROTO);
    assert_string_equal(err.text, "event 0 (JOB_SUBMITTED): data.job: expected an object "
                                  "(fastbf needs job descriptions), got nothing");
    fbf_bv4_session_destroy(s);
}


/* ---- submitter mode in Redis mode --------------------------------------- */

/* dyn!1 and dyn!2 at 0 share profile p10; dyn!3 at 5 needs all 4. */
static const fbf_submitter_job reg_plan[] = {
    {"dyn!1", 0, 2, 10, "p10", 10},
    {"dyn!2", 0, 1, -1, "p10", 10},
    {"dyn!3", 5, 4, 20, "p20", 20.5},
};

static fbf_bv4_session *submitter(fbf_submitter **reg)
{
    fbf_error err = {{0}};
    fbf_submitter_options ro = {0};
    *reg = fbf_submitter_create(reg_plan, 3, &ro, &err);
    if (!*reg)
        fail_msg("register_create: %s", err.text);
    const fbf_policy_entry *pe = fbf_policy_lookup("fcfs");
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth, .workers = 1},
        .submitter = *reg,
    };
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("session_create: %s", err.text);
    return s;
}

static const char *reg_begins(const char *prefix, int p, bool acks)
{
    return BEGINS(4, M("%s,'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':%s",
                       config(0, prefix, p), acks ? "true" : "false"));
}

/* Every REGISTER_JOB of the reply holds data.job_id alone, right after the
 * REGISTER_PROFILE of its own profile. */
static void job_id_only(const char *raw)
{
    cJSON *reply = cJSON_Parse(raw);
    const cJSON *ev;
    int n = 0;
    const char *profile = NULL; /* the REGISTER_PROFILE just before */
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, "events"))
    {
        const char *t = cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        if (strcmp(t, "REGISTER_PROFILE") == 0)
            profile = cJSON_GetObjectItemCaseSensitive(d, "profile_name")->valuestring;
        if (strcmp(t, "REGISTER_JOB") != 0)
            continue;
        /* Batsim 4.2.1 reads a registered job's profile only from a
         * REGISTER_PROFILE, never from the store. */
        const char *id = cJSON_GetObjectItemCaseSensitive(d, "job_id")->valuestring;
        if (!profile || strcmp(strchr(profile, '@') + 1, strchr(id, '!') + 1) != 0)
            fail_msg("REGISTER_JOB %s without its REGISTER_PROFILE before it: %s", id, raw);
        profile = NULL;
        if (cJSON_GetArraySize(d) != 1 ||
            !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(d, "job_id")))
            fail_msg("REGISTER_JOB is not job_id only: %s", raw);
        n++;
    }
    assert_true(n > 0);
    cJSON_Delete(reply);
}

/* The stored JSON under key, parsed (caller deletes); fails when absent. */
static cJSON *stored(const char *key)
{
    char *v = fbf_test_redis_get(fbf_test_redis_shared(), key);
    if (!v)
        fail_msg("key %s is not in the store", key);
    cJSON *j = cJSON_Parse(v);
    if (!j)
        fail_msg("key %s: not JSON: %s", key, v);
    free(v);
    return j;
}

static double field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    if (!cJSON_IsNumber(v))
        fail_msg("member %s is not a number", name);
    return v->valuedouble;
}

static void test_register_writes_store(void **state)
{
    fbf_submitter *reg;
    fbf_bv4_session *s = submitter(&reg);
    char *raw = fbf_test_bv4_exchange(s, reg_begins("rg", port(), false), 0,
                                      "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_PROFILE|"
                                      "REGISTER_JOB dyn!2|EXECUTE_JOB dyn!1 0-1|"
                                      "EXECUTE_JOB dyn!2 2|CALL_ME_LATER 5",
                                      true);
    job_id_only(raw);
    free(raw);
    cJSON *j = stored("rg:job_dyn!1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "id")->valuestring, "dyn!1");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(j, "profile")->valuestring, "p10@1");
    assert_true(field(j, "subtime") == 0 && field(j, "res") == 2 && field(j, "walltime") == 10);
    cJSON_Delete(j);
    j = stored("rg:job_dyn!2");
    assert_true(field(j, "res") == 1 && field(j, "walltime") == -1);
    cJSON_Delete(j);
    /* Profiles go in REGISTER_PROFILE only: Batsim ignores the store's. */
    assert_null(fbf_test_redis_get(fbf_test_redis_shared(), "rg:profile_dyn!p10@1"));
    assert_null(fbf_test_redis_get(fbf_test_redis_shared(), "rg:profile_dyn!p10"));
    /* Not due yet: not stored yet. */
    assert_null(fbf_test_redis_get(fbf_test_redis_shared(), "rg:job_dyn!3"));

    raw = fbf_test_bv4_exchange(s, "{\"now\":5,\"events\":[{\"timestamp\":5,\"type\":"
                                   "\"REQUESTED_CALL\",\"data\":{}}]}",
                                0, "REGISTER_PROFILE|REGISTER_JOB dyn!3|NOTIFY registration_finished",
                                true);
    job_id_only(raw);
    cJSON *reply = cJSON_Parse(raw);
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(reply, "events"), 0), "data");
    assert_string_equal(cJSON_GetObjectItemCaseSensitive(prof, "profile_name")->valuestring,
                        "p20@3");
    assert_true(field(cJSON_GetObjectItemCaseSensitive(prof, "profile"), "delay") == 20.5);
    cJSON_Delete(reply);
    free(raw);
    j = stored("rg:job_dyn!3");
    assert_true(field(j, "subtime") == 5 && field(j, "res") == 4);
    cJSON_Delete(j);
    assert_int_equal(fbf_submitter_nb_registered(reg), 3);
    fbf_bv4_session_destroy(s);
    fbf_submitter_destroy(reg);
}

/* Acks on: the job_id-only JOB_SUBMITTED is decided from the keys the
 * registration wrote; no profile is written to the store. */
static void test_register_acks_read_back(void **state)
{
    fbf_submitter *reg;
    fbf_bv4_session *s = submitter(&reg);
    const char *begins = reg_begins("ra", port(), true);
    const char *empty = "\"profiles\":{}", *at = strstr(begins, empty);
    assert_non_null(at);
    char b[8192];
    snprintf(b, sizeof b, "%.*s\"profiles\":{\"dyn\":{\"p10\":{\"type\":\"delay\","
             "\"delay\":10}}}%s", (int)(at - begins), begins, at + strlen(empty));
    ok(s, b, "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_PROFILE|REGISTER_JOB dyn!2|"
             "CALL_ME_LATER 5");
    assert_null(fbf_test_redis_get(fbf_test_redis_shared(), "ra:profile_dyn!p10"));
    assert_int_equal(fbf_engine_nb_waiting(fbf_bv4_session_engine(s)), 0);
    ok(s, M("{'now':0,'events':[%s,%s]}", rsub(0, "dyn!1"), rsub(0, "dyn!2")),
       "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2");
    fbf_bv4_session_destroy(s);
    fbf_submitter_destroy(reg);
}

/* A store that goes away: the registration fails, naming the key. */
static void test_register_store_lost(void **state)
{
    fbf_test_redis own;
    assert_int_equal(fbf_test_redis_start(&own), 0);
    fbf_submitter *reg;
    fbf_bv4_session *s = submitter(&reg);
    ok(s, reg_begins("lost", own.port, false),
       "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_PROFILE|REGISTER_JOB dyn!2|"
       "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2|CALL_ME_LATER 5");
    fbf_test_redis_stop(&own);
    const char *req = "{\"now\":5,\"events\":[{\"timestamp\":5,\"type\":\"REQUESTED_CALL\","
                      "\"data\":{}}]}";
    const char *reply;
    size_t len;
    fbf_error err = {{0}};
    assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err), -EIO);
    char want[128];
    snprintf(want, sizeof want, "registering 1 job(s) at 5 through Redis: Redis at "
             "127.0.0.1:%d: SET lost:job_dyn!3: ", own.port);
    if (strncmp(err.text, want, strlen(want)) != 0 || strlen(err.text) == strlen(want))
        fail_msg("got \"%s\", want \"%s<hiredis's message>\"", err.text, want);
    assert_int_equal(fbf_submitter_nb_registered(reg), 2);
    fbf_bv4_session_destroy(s);
    fbf_submitter_destroy(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_session_same_decisions),
        cmocka_unit_test(test_session_reads_descriptions),
        cmocka_unit_test(test_session_store_faults),
        cmocka_unit_test(test_session_begins_faults),
        cmocka_unit_test(test_register_writes_store),
        cmocka_unit_test(test_register_acks_read_back),
        cmocka_unit_test(test_register_store_lost),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, fbf_test_redis_group_setup,
                                  fbf_test_redis_group_teardown);
}
