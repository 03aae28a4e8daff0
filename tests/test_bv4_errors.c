/*
 * test_bv4_errors: the Batsim v4 session API (io/bv4_session.h), in
 * process: the messages it must refuse.
 *
 * Every kind of malformed message (support/bv4_bad_cases), each sent to a
 * fresh session brought to the state it needs, must fail with its documented,
 * one-line error and one of the documented codes. The accepted messages
 * are in test_bv4.c.
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

#include "io/bv4_session.h"
#include "support/bv4_bad_cases.h"
#include "support/bv4_kit.h"
#include "support/testkit.h"

/* The helpers of support/testkit.h and support/bv4_kit.h under short
 * names: they nest inside each other's arguments on nearly every line. */
#define M fbf_test_msg
#define SUB fbf_test_sub
#define BEGINS fbf_test_bv4_begins
#define new_session fbf_test_bv4_session
#define ok fbf_test_bv4_ok

/* ---- malformed messages ------------------------------------------------ */

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

typedef fbf_test_bad_case bad_case;
#define bad_cases fbf_test_bv4_bad_cases
#define NB_BAD_CASES fbf_test_bv4_nb_bad_cases


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
    check_bad_cases(bad_cases, NB_BAD_CASES);
}

/* bv4_session.h: a request that breaks the protocol returns one of the
 * documented codes (-EPROTO, -ENOENT, -EEXIST, -EINVAL, -ENOTSUP). */
static void test_error_codes_as_documented(void **state)
{
    char text[512];
    static char failures[4096];
    size_t off = 0;
    failures[0] = '\0';
    for (size_t i = 0; i < NB_BAD_CASES; i++) {
        int rc = run_bad(&bad_cases[i], text, sizeof text);
        if (rc < 0 && rc != -EPROTO && rc != -EINVAL && rc != -ENOENT && rc != -EEXIST &&
            rc != -ENOTSUP && off < sizeof failures)
            off += (size_t)snprintf(failures + off, sizeof failures - off,
                                    "\n  rc %d (%s) for \"%s\"", rc, strerror(-rc), text);
    }
    if (off)
        fail_msg("errors outside the documented codes:%s", failures);
}

/* bv4_decode.h documents this exact message for a res given as a string. */
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
        cmocka_unit_test(test_malformed_messages),
        cmocka_unit_test(test_error_codes_as_documented),
        cmocka_unit_test(test_documented_res_message),
        cmocka_unit_test(test_missing_checks),
        cmocka_unit_test(test_huge_platform_roundtrip),
        cmocka_unit_test(test_infinite_numbers),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
