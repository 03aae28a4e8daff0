/*
 * test_flux_hello: RFC 27's handshake for fastbf's scheduler side, message
 * by message, on the session in process (support/flux_kit, job data in
 * memory): hello, then ready in the mode asked (unlimited or single), an
 * error answer to either ending the session, and the jobs hello names
 * holding their cores as their R says (missing, malformed or clashing R
 * ending it). The rules after the handshake: test_flux_rfc27.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "io/flux_codec.h"
#include "support/flux_kit.h"
#include "support/testkit.h"

#define REQ FBF_FLUX_REQUEST
#define RESP FBF_FLUX_RESPONSE

/* The session of the cases run with S() (support/flux_kit). */
static fbf_test_flux T;

static const char *alloc_req(uint64_t id) { return fbf_test_flux_alloc(&T, id); }
static const char *free_req(uint64_t id) { return fbf_test_flux_free(&T, id); }

/* RFC 27, Hello: "Before any other RPCs are sent to the job manager, the
 * scheduler SHALL send an empty request to job-manager.sched-hello"; and
 * Ready: then a request to job-manager.sched-ready with the mode. */
static void hello_then_ready(void **state)
{
    /* Nothing is sent before the job manager attaches. */
    assert_string_equal(fbf_test_flux_send(&T, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                                           FBF_FLUX_ATTACH, NULL),
                        "req job-manager.sched-hello e=4294967295 m=1 -\n");
    assert_false(fbf_flux_session_ready(T.s));
    /* An alloc before the handshake is done is refused, not applied. */
    fbf_test_flux_jobspec(&T, 1, 1, 10);
    assert_string_equal(alloc_req(1), "resp sched.alloc e=11 m=0 sched.alloc: before the "
                                      "handshake is done (sim.attach, then fastbf's "
                                      "job-manager.sched-hello and job-manager.sched-ready "
                                      "answered)\n");
    assert_string_equal(fbf_test_flux_send(&T, RESP, 0, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}"),
                        "req job-manager.sched-ready e=4294967295 m=2 {\"mode\":\"unlimited\"}\n");
    assert_string_equal(fbf_test_flux_send(&T, RESP, 0, 0, 2, FBF_FLUX_READY, NULL), "");
    assert_true(fbf_flux_session_ready(T.s));
    /* The refused alloc was not kept: the first instant has nothing. */
    assert_string_equal(fbf_test_flux_instant(&T, 0), "resp sim.instant e=0 m=7 {\"now\":0}\n");
}

/* Ready's "single" mode, and an object in ready's response (flux-core
 * sends {"count": N}). */
static void ready_single(void **state)
{
    fbf_test_flux t;
    fbf_test_flux_open(&t, "fcfs", FBF_FLUX_MODE_SINGLE, 1, 1);
    fbf_test_flux_send(&t, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ATTACH,
                       NULL);
    assert_string_equal(fbf_test_flux_send(&t, RESP, 0, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}"),
                        "req job-manager.sched-ready e=4294967295 m=2 {\"mode\":\"single\"}\n");
    assert_string_equal(fbf_test_flux_send(&t, RESP, 0, 0, 2, FBF_FLUX_READY, "{\"count\":0}"), "");
    assert_true(fbf_flux_session_ready(t.s));
    /* "The job manager SHALL send a sched.alloc request only when there are
     * no outstanding sched.alloc requests." */
    fbf_test_flux_jobspec(&t, 1, 1, 10);
    fbf_test_flux_jobspec(&t, 2, 1, 10);
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":1,\"priority\":1,\"userid\":1}");
    assert_string_equal(
        fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":2,\"priority\":1,\"userid\":1}"),
        "resp sched.alloc e=71 m=0 sched.alloc: id: job 2: an alloc is pending "
        "already, and fastbf asked for single mode (one alloc at a time)\n");
    fbf_test_flux_instant(&t, 0);
    /* Job 1's SUCCESS retired it: the next may come. */
    assert_string_equal(
        fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":2,\"priority\":1,\"userid\":1}"), "");
    fbf_test_flux_close(&t);
}

/* "If an error response is returned to the job-manager.sched-hello [or
 * -ready] request, the scheduler SHALL log the error and exit." */
static void hello_or_ready_error_ends(void **state)
{
    for (int which = 0; which < 2; which++) {
        fbf_test_flux t;
        fbf_test_flux_open(&t, "easy", FBF_FLUX_MODE_UNLIMITED, 1, 1);
        fbf_test_flux_send(&t, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ATTACH,
                           NULL);
        if (which)
            fbf_test_flux_send(&t, RESP, 0, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}");
        t.may_fail = true;
        fbf_test_flux_send(&t, RESP, 0, 71, which ? 2 : 1, which ? FBF_FLUX_READY : FBF_FLUX_HELLO,
                           "no scheduling today");
        assert_true(t.rc < 0);
        assert_string_equal(t.err, which ? "job-manager.sched-ready: the job manager answered "
                                           "error 71 (Protocol error): no scheduling today"
                                         : "job-manager.sched-hello: the job manager answered "
                                           "error 71 (Protocol error): no scheduling today");
        fbf_test_flux_close(&t);
    }
}

/* Hello's jobs hold their cores ("the scheduler SHALL mark its assigned
 * resources allocated"), read from R: a job wanting them waits until the
 * held job's free; R's expiration is the end the policy plans with. */
static void hello_jobs_hold_their_cores(void **state)
{
    fbf_test_flux_put(&T, 9, "R",
                      "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\","
                      "\"children\":{\"core\":\"1-2\"}}],\"starttime\":0,"
                      "\"expiration\":40}}");
    fbf_test_flux_handshake(&T, "[{\"id\":9,\"priority\":16,\"userid\":1}]");
    fbf_test_flux_jobspec(&T, 1, 3, 100);
    fbf_test_flux_jobspec(&T, 2, 2, 30);
    alloc_req(1);
    alloc_req(2);
    /* 1 waits for 9's cores (reserved at 40), 2 fits beside on 0 and 3
     * and ends by 40: it backfills. */
    assert_string_equal(
        fbf_test_flux_instant(&T, 10),
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core[0,3]\"}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":1,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":40,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":10}\n");
    /* A job that hello named cannot get another alloc. */
    assert_string_equal(alloc_req(9), "resp sched.alloc e=22 m=0 sched.alloc: id: job 9: it holds "
                                      "cores: an alloc is for a job in SCHED state\n");
    free_req(9);
    free_req(2);
    assert_string_equal(fbf_test_flux_instant(&T, 20),
                        "resp sched.free e=0 m=0 {\"id\":9}\n"
                        "resp sched.free e=0 m=0 {\"id\":2}\n"
                        "resp sched.alloc e=0 m=0 {\"id\":1,\"type\":0,\"annotations\":{\"sched\":"
                        "{\"resource_summary\":\"rank0/core[0-2]\",\"t_estimate\":null,"
                        "\"reason_pending\":null}}}\n"
                        "resp sim.instant e=0 m=7 {\"now\":20}\n");
}

/* Hello names a job whose R is missing, malformed, or on cores another
 * held job has: fastbf cannot know what is taken, and stops. */
static void hello_bad_R_ends(void **state)
{
    static const struct {
        const char *R9, *R8, *want;
    } cases[] = {
        {NULL, NULL,
         "job-manager.sched-hello: job 9 holds cores but Redis key "
         "\"job.0000.0000.0000.0009.R\" does not exist (its R)"},
        {"{\"version\":1}", NULL,
         "job-manager.sched-hello: job 9: Redis key "
         "\"job.0000.0000.0000.0009.R\": execution: expected an object, "
         "got nothing"},
        {"{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"1\",\"children\":{\"core\":\"0\"}}]"
         "}}",
         NULL,
         "job-manager.sched-hello: job 9: Redis key \"job.0000.0000.0000.0009.R\": "
         "execution.R_lite[0].rank: rank 1, the platform has 1 ranks"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fbf_test_flux t;
        fbf_test_flux_open(&t, "easy", FBF_FLUX_MODE_UNLIMITED, 1, 4);
        if (cases[i].R9)
            fbf_test_flux_put(&t, 9, "R", cases[i].R9);
        fbf_test_flux_send(&t, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ATTACH,
                           NULL);
        t.may_fail = true;
        fbf_test_flux_send(&t, RESP, 0, 0, 1, FBF_FLUX_HELLO,
                           "{\"alloc\":[{\"id\":9,\"priority\":1,\"userid\":1}]}");
        assert_true(t.rc < 0);
        assert_string_equal(t.err, cases[i].want);
        fbf_test_flux_close(&t);
    }
    /* Two held jobs on one core: the engine refuses the second. */
    fbf_test_flux t;
    fbf_test_flux_open(&t, "easy", FBF_FLUX_MODE_UNLIMITED, 1, 4);
    const char *R = "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":"
                    "{\"core\":\"2\"}}]}}";
    fbf_test_flux_put(&t, 8, "R", R);
    fbf_test_flux_put(&t, 9, "R", R);
    fbf_test_flux_handshake(&t, "[{\"id\":8,\"priority\":1,\"userid\":1},"
                                "{\"id\":9,\"priority\":1,\"userid\":1}]");
    t.may_fail = true;
    fbf_test_flux_instant(&t, 0);
    assert_true(t.rc < 0);
    assert_string_equal(t.err, "sim.instant at 0: job 9: job 9: resource 2 is not free (another "
                               "job's, or not a compute resource)");
    fbf_test_flux_close(&t);
}

int main(void)
{
    fbf_test_filter_from_env();
#define S(t)                                                                                       \
    cmocka_unit_test_prestate_setup_teardown(t, fbf_test_flux_setup, fbf_test_flux_teardown, &T)
    const struct CMUnitTest tests[] = {
        S(hello_then_ready),
        cmocka_unit_test(ready_single),
        cmocka_unit_test(hello_or_ready_error_ends),
        S(hello_jobs_hold_their_cores),
        cmocka_unit_test(hello_bad_R_ends),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
