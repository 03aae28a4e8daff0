/*
 * test_bv4_stream: requests of FBF_BV4_STREAM_MIN bytes or more are read
 * one event at a time. The same request with "events" written before
 * "now" cannot be streamed and is parsed whole, so the two forms of one
 * message must give byte-identical replies under every policy, and the
 * same refusal, word for word, when an event is bad; with more than one
 * worker, the streamed events are parsed on a helper thread
 * (io/json_pipe.h), with the same results.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/bv4_kit.h"

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int k = vsnprintf(t->p ? t->p + t->n : NULL, t->cap - t->n, fmt, ap);
        va_end(ap);
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        t->cap = t->cap ? 2 * t->cap + (size_t)k : 4096;
        t->p = realloc(t->p, t->cap);
        assert_non_null(t->p);
    }
}

/* One message holding the events, in either member order. */
static char *message(double now, const char *events, bool now_first)
{
    text t = {0};
    if (now_first)
        put(&t, "{\"now\":%.6f,\"events\":[%s]}", now, events);
    else
        put(&t, "{\"events\":[%s],\"now\":%.6f}", events, now);
    return t.p;
}

/* njobs submissions with varied sizes and walltimes, then one estimate
 * query; bad >= 0 spoils that submission's res. (SIMULATION_BEGINS goes in
 * a message of its own, as Batsim sends it: a session streams a large
 * request only once it has begun, since the first one may turn Redis
 * mode on.) */
static char *first_events(int njobs, int bad)
{
    text t = {0};
    put(&t, "");
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < njobs; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int res = 1 + (int)(x % 64) / (1 + (int)((x >> 20) % 8));
        int wall = 1 + (int)((x >> 32) % 5000);
        if (i == bad)
            put(&t, "%s{\"timestamp\":0,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!%d\","
                    "\"job\":{\"id\":\"w0!%d\",\"subtime\":0,\"walltime\":%d,\"res\":\"%d\","
                    "\"profile\":\"p\"}}}",
                i ? "," : "", i, i, wall, res);
        else
            put(&t, "%s{\"timestamp\":0,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!%d\","
                    "\"job\":{\"id\":\"w0!%d\",\"subtime\":0,\"walltime\":%d,\"res\":%d,"
                    "\"profile\":\"p\"}}}",
                i ? "," : "", i, i, wall, res);
    }
    put(&t, ",{\"timestamp\":0,\"type\":\"QUERY\",\"data\":{\"requests\":{"
            "\"estimate_waiting_time\":{\"job_id\":\"w0!q\",\"job\":{\"id\":\"w0!q\","
            "\"res\":3,\"walltime\":50}}}}}");
    return t.p;
}

/* Completions of every job the reply started, as one message's events. */
static char *completions(const char *reply)
{
    text t = {0};
    put(&t, "");
    cJSON *r = cJSON_Parse(reply);
    assert_non_null(r);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(r, "events"))
    {
        if (strcmp(cJSON_GetObjectItemCaseSensitive(e, "type")->valuestring, "EXECUTE_JOB"))
            continue;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(e, "data");
        put(&t, "%s{\"timestamp\":7,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"%s\","
                "\"job_state\":\"COMPLETED_SUCCESSFULLY\",\"return_code\":0,\"alloc\":\"%s\"}}",
            t.n ? "," : "", cJSON_GetObjectItemCaseSensitive(d, "job_id")->valuestring,
            cJSON_GetObjectItemCaseSensitive(d, "alloc")->valuestring);
    }
    cJSON_Delete(r);
    return t.p;
}

static char *handle(fbf_bv4_session *s, const char *req, int want_rc, fbf_error *err)
{
    const char *reply = NULL;
    size_t len = 0;
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, err);
    if (rc != want_rc)
        fail_msg("rc %d, expected %d: %s", rc, want_rc, rc < 0 ? err->text : "");
    if (rc < 0)
        return NULL;
    cJSON_Delete(fbf_test_bv4_check_reply(req, reply, len));
    return strndup(reply, len);
}

/* A session that has handled SIMULATION_BEGINS on 64 machines. */
static fbf_bv4_session *begun(const char *policy, unsigned workers)
{
    fbf_bv4_session *s = fbf_test_bv4_session(policy, workers);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(64, ""), "");
    return s;
}

static void same_replies(const char *policy, unsigned workers)
{
    fbf_bv4_session *streamed = begun(policy, workers);
    fbf_bv4_session *whole = begun(policy, workers);
    char *events = first_events(9000, -1);
    char *a = message(0, events, true), *b = message(0, events, false);
    assert_true(strlen(a) >= FBF_BV4_STREAM_MIN);
    fbf_error err;
    char *ra = handle(streamed, a, 0, &err), *rb = handle(whole, b, 0, &err);
    assert_string_equal(ra, rb);
    assert_non_null(strstr(ra, "EXECUTE_JOB"));
    assert_non_null(strstr(ra, "estimate_waiting_time"));
    assert_int_equal(fbf_engine_nb_waiting(fbf_bv4_session_engine(streamed)),
                     fbf_engine_nb_waiting(fbf_bv4_session_engine(whole)));
    assert_true(fbf_engine_nb_waiting(fbf_bv4_session_engine(streamed)) > 8000);
    /* The next (small) message finds both sessions in the same state. */
    char *done = completions(ra);
    char *c = message(7, done, true);
    char *rc1 = handle(streamed, c, 0, &err), *rc2 = handle(whole, c, 0, &err);
    assert_string_equal(rc1, rc2);
    assert_non_null(strstr(rc1, "EXECUTE_JOB"));
    free(events), free(a), free(b), free(ra), free(rb), free(done), free(c), free(rc1), free(rc2);
    fbf_bv4_session_destroy(streamed);
    fbf_bv4_session_destroy(whole);
}

static void test_fcfs(void **state) { (void)state, same_replies("fcfs", 1); }
static void test_easy(void **state) { (void)state, same_replies("easy", 2); }
static void test_conservative(void **state)
{
    (void)state;
    same_replies("conservative", 1);
    same_replies("conservative", 3);
}

/* Members after the events reach the stream's callback, on the parse
 * thread with 2 workers: a second "now" there changes nothing. */
static void test_member_after_the_events(void **state)
{
    (void)state;
    char *events = first_events(9000, -1);
    text t = {0};
    put(&t, "{\"now\":0.000000,\"events\":[%s],\"note\":\"after\"}", events);
    assert_true(t.n >= FBF_BV4_STREAM_MIN);
    fbf_error err;
    fbf_bv4_session *one = begun("easy", 1), *two = begun("easy", 2);
    char *r1 = handle(one, t.p, 0, &err), *r2 = handle(two, t.p, 0, &err);
    assert_string_equal(r1, r2);
    assert_non_null(strstr(r1, "EXECUTE_JOB"));
    free(r1), free(r2), free(t.p), free(events);
    fbf_bv4_session_destroy(one);
    fbf_bv4_session_destroy(two);
}

/* a streamed (on this thread with 1 worker, through the parse thread of
 * io/json_pipe.h with 2), b parsed whole: the same refusal. */
static void same_refusal(const char *a, const char *b, const char *want)
{
    fbf_error ea = {0}, ep = {0}, eb = {0};
    fbf_bv4_session *s1 = begun("easy", 1), *s2 = begun("easy", 1), *s3 = begun("easy", 2);
    handle(s1, a, -EPROTO, &ea);
    handle(s2, b, -EPROTO, &eb);
    handle(s3, a, -EPROTO, &ep);
    if (!strstr(ea.text, want))
        fail_msg("streamed: '%s', expected '%s'", ea.text, want);
    assert_string_equal(ea.text, eb.text);
    assert_string_equal(ep.text, eb.text);
    fbf_bv4_session_destroy(s1);
    fbf_bv4_session_destroy(s2);
    fbf_bv4_session_destroy(s3);
}

static void test_bad_event_refused_alike(void **state)
{
    (void)state;
    char *events = first_events(9000, 6000);
    char *a = message(0, events, true), *b = message(0, events, false);
    same_refusal(a, b, "event 6000 (JOB_SUBMITTED): data.job.res: expected an integer");
    free(a), free(b);

    free(events);
    events = first_events(9000, -1);

    /* A timestamp after now, at the very end. */
    text late = {0};
    put(&late, "%s,{\"timestamp\":3,\"type\":\"REQUESTED_CALL\",\"data\":{}}", events);
    a = message(0, late.p, true), b = message(0, late.p, false);
    same_refusal(a, b, "event 9001 (REQUESTED_CALL): timestamp: 3.000000 is after now 0.000000");
    free(a), free(b), free(late.p);

    /* A submission without its description (Redis is off). */
    text bare = {0};
    put(&bare, "%s,{\"timestamp\":0,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!x\"}}",
        events);
    a = message(0, bare.p, true), b = message(0, bare.p, false);
    same_refusal(a, b, "event 9001 (JOB_SUBMITTED): data.job: expected an object (fastbf needs "
                       "job descriptions), got nothing");
    free(a), free(b), free(bare.p);
    fbf_error err;
    fbf_bv4_session *s;

    /* Malformed JSON deep inside: the byte is named (and the words after
     * it say the request was read as a stream). */
    a = message(0, events, true);
    char *cut = strstr(a + strlen(a) / 2, "\"res\":");
    cut[5] = '{';
    char want[96];
    snprintf(want, sizeof want, "malformed JSON message near byte %ld: not a JSON value",
             (long)(cut - a) + 5);
    for (unsigned w = 1; w <= 2; w++) {
        s = begun("fcfs", w);
        handle(s, a, -EPROTO, &err);
        if (!strstr(err.text, want))
            fail_msg("%u workers: '%s', expected '%s'", w, err.text, want);
        fbf_bv4_session_destroy(s);
    }
    free(a);

    /* One reading of each message: a member named twice, at the top or in
     * an event, is refused alike; so is a \u0000 in a string. */
    text twice = {0};
    put(&twice, "%s,{\"timestamp\":0,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!y\","
                "\"job_id\":\"w0!z\"}}", events);
    a = message(0, twice.p, true), b = message(0, twice.p, false);
    same_refusal(a, b, "duplicate key \"job_id\" in \"data\" (one member named twice)");
    free(a), free(b), free(twice.p);
    text nows = {0}, nowsb = {0};
    put(&nows, "{\"now\":0.000000,\"events\":[%s],\"now\":1.000000}", events);
    put(&nowsb, "{\"events\":[%s],\"now\":0.000000,\"now\":1.000000}", events);
    same_refusal(nows.p, nowsb.p, "duplicate key \"now\" (one member named twice)");
    free(nows.p), free(nowsb.p);
    text nul = {0};
    put(&nul, "%s,{\"timestamp\":0,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":"
              "\"w0!1\\u0000garbage\",\"job_state\":\"COMPLETED_SUCCESSFULLY\"}}", events);
    for (int first = 0; first < 2; first++) {
        a = message(0, nul.p, first);
        s = begun("fcfs", 1);
        handle(s, a, -EPROTO, &err);
        if (!strstr(err.text, "a string holds \\u0000 (a NUL byte) near byte"))
            fail_msg("'%s'", err.text);
        fbf_bv4_session_destroy(s);
        free(a);
    }
    free(nul.p);

    /* A now that is not a number, and no begin. */
    text t = {0};
    put(&t, "{\"now\":\"0\",\"events\":[%s]}", events);
    s = fbf_test_bv4_session("fcfs", 1);
    handle(s, t.p, -EPROTO, &err);
    assert_string_equal(err.text, "message: now: expected a finite number, got a string");
    fbf_bv4_session_destroy(s);
    free(t.p);
    free(events);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fcfs),
        cmocka_unit_test(test_easy),
        cmocka_unit_test(test_conservative),
        cmocka_unit_test(test_bad_event_refused_alike),
        cmocka_unit_test(test_member_after_the_events),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
