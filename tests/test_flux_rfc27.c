/*
 * test_flux_rfc27: RFC 27's conformance suite for fastbf's scheduler
 * side, message by message, on the session in process (support/flux_kit,
 * job data in memory): every rule the RFC states for a scheduler once the
 * handshake is done (hello and ready: test_flux_hello), each with the
 * answer it makes (whole messages: type, topic, errnum, matchtag,
 * payload), and the malformed or out-of-order requests of
 * test_flux_hostile's table (support/flux_bad_cases), each answered with
 * one error naming the topic and the field, or, for a request that wants
 * no answer, one line on stderr; the session goes on unharmed after all
 * of them.
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

#include "io/flux_codec.h"
#include "support/flux_bad_cases.h"
#include "support/flux_kit.h"
#include "support/testkit.h"

#define REQ FBF_FLUX_REQUEST
#define RESP FBF_FLUX_RESPONSE

/* The session of the cases run with S() (support/flux_kit). */
static fbf_test_flux T;

static const char *alloc_req(uint64_t id) { return fbf_test_flux_alloc(&T, id); }
static const char *free_req(uint64_t id) { return fbf_test_flux_free(&T, id); }

static const char *cancel_req(uint64_t id)
{
    char p[64];
    snprintf(p, sizeof p, "{\"id\":%llu}", (unsigned long long)id);
    return fbf_test_flux_send(&T, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                              FBF_FLUX_CANCEL, p);
}

#define SUCC_0_3 "resp sched.alloc e=0 m=0 {\"id\":%d,\"type\":0,\"annotations\":{\"sched\":" \
                 "{\"resource_summary\":\"rank0/core[0-3]\"}}}\n"

/* Alloc: the jobspec is looked up in the KVS; SUCCESS only once R "has
 * been successfully committed to the KVS"; the job id in the response;
 * errnum 0 and matchtag 0; the answer to sim.instant last. */
static void alloc_success_commits_R_first(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    assert_string_equal(alloc_req(1), ""); /* answered at the instant's end */
    assert_null(fbf_test_flux_get(&T, 1, "R"));
    char want[512];
    snprintf(want, sizeof want, SUCC_0_3 "resp sim.instant e=0 m=7 {\"now\":5}\n", 1);
    assert_string_equal(fbf_test_flux_instant(&T, 5), want);
    /* The session's answers are only handed over after the receive that
     * wrote R returned: R is in the store now. */
    assert_string_equal(fbf_test_flux_get(&T, 1, "R"),
                        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":"
                        "{\"core\":\"0-3\"}}],\"starttime\":5,\"expiration\":105}}");
}

/* R_lite by rank: cores across ranks, ranks that share cores grouped. */
static void R_lite_by_rank(void **state)
{
    fbf_test_flux t;
    fbf_test_flux_open(&t, "fcfs", FBF_FLUX_MODE_UNLIMITED, 3, 2);
    fbf_test_flux_handshake(&t, NULL);
    fbf_test_flux_jobspec(&t, 1, 1, 0);
    fbf_test_flux_jobspec(&t, 2, 5, 0);
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":1,\"priority\":1,\"userid\":1}");
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":2,\"priority\":1,\"userid\":1}");
    assert_string_equal(
        fbf_test_flux_instant(&t, 0),
        "resp sched.alloc e=0 m=0 {\"id\":1,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core0\"}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core1 rank[1-2]/core[0-1]\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":0}\n");
    /* No duration: expiration 0. */
    assert_string_equal(fbf_test_flux_get(&t, 2, "R"),
                        "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":"
                        "{\"core\":\"1\"}},{\"rank\":\"1-2\",\"children\":{\"core\":\"0-1\"}}],"
                        "\"starttime\":0,\"expiration\":0}}");
    fbf_test_flux_close(&t);
}

/* DENY: "If the resource request can never be fulfilled", with a note;
 * errnum 0 "even if the response indicates an error". A job that only
 * has to wait is not denied. */
static void deny_what_can_never_run(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 5, 100);         /* more cores than 4 */
    fbf_test_flux_jobspec(&T, 2, 1, 0);           /* no duration under EASY */
    fbf_test_flux_put(&T, 3, "jobspec", "{\"version\":2}");
    /* job 4: no jobspec at all */
    fbf_test_flux_jobspec(&T, 5, 4, 10);          /* fits: starts */
    for (uint64_t id = 1; id <= 5; id++)
        alloc_req(id);
    assert_string_equal(
        fbf_test_flux_instant(&T, 0),
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":2,\"note\":\"jobspec (Redis key "
        "\\\"job.0000.0000.0000.0003.jobspec\\\"): version: expected 1 (fastbf reads jobspec "
        "version 1), got another number\"}\n"
        "resp sched.alloc e=0 m=0 {\"id\":4,\"type\":2,\"note\":\"no jobspec: Redis key "
        "\\\"job.0000.0000.0000.0004.jobspec\\\" does not exist\"}\n"
        "resp sched.alloc e=0 m=0 {\"id\":1,\"type\":2,\"note\":\"the job asks for more cores "
        "than the platform's 4 (1 ranks of 4 cores)\"}\n"
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":2,\"note\":\"the job has no duration "
        "(attributes.system.duration): backfilling needs one\"}\n"
        "resp sched.alloc e=0 m=0 {\"id\":5,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core[0-3]\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":0}\n");
    /* A denied job's alloc is complete: another for it is refused. */
    assert_string_equal(alloc_req(1), "resp sched.alloc e=22 m=0 sched.alloc: id: job 1: its alloc "
                                      "was denied: an alloc is for a job in SCHED state\n");
}

/* ANNOTATE: sched.t_estimate (the reservation) and sched.reason_pending,
 * sent only when they change; SUCCESS deletes them ("The scheduler MAY
 * delete annotations such as sched.t_estimate"); nothing follows SUCCESS
 * ("the sched.alloc request is complete"). */
static void annotate_on_change_only(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 2, 50);
    fbf_test_flux_jobspec(&T, 3, 1, 500);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    alloc_req(3);
    assert_string_equal(
        fbf_test_flux_instant(&T, 1),
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":100,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":1,\"annotations\":{\"sched\":"
        "{\"reason_pending\":\"insufficient resources: no reservation\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":1}\n");
    /* Nothing changed: nothing is said. */
    assert_string_equal(fbf_test_flux_instant(&T, 2), "resp sim.instant e=0 m=7 {\"now\":2}\n");
    /* Job 1 ends: 2 starts, its SUCCESS deletes both; 3 becomes the head
     * and starts too (1 core left). */
    free_req(1);
    assert_string_equal(
        fbf_test_flux_instant(&T, 3),
        "resp sched.free e=0 m=0 {\"id\":1}\n"
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core[0-1]\",\"t_estimate\":null,\"reason_pending\":"
        "null}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core2\",\"reason_pending\":null}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":3}\n");
}

/* A reservation taken back (EASY: the head changes) is said with null. */
static void annotate_takes_estimate_back(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 3, 100);
    fbf_test_flux_jobspec(&T, 2, 4, 10);
    fbf_test_flux_jobspec(&T, 3, 4, 10);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    alloc_req(3);
    fbf_test_flux_instant(&T, 1); /* 2 is the head, reserved at 100 */
    cancel_req(2);
    assert_string_equal(
        fbf_test_flux_instant(&T, 2),
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":3}\n"
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":100,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":2}\n");
}

/* Cancel: "The scheduler SHALL NOT respond directly to the sched.cancel
 * request"; a pending alloc gets CANCEL, with "only the REQUIRED keys";
 * "If the specified job does not have a pending sched.alloc request, the
 * request SHALL be ignored"; a job whose alloc came at the same instant is
 * canceled too. */
static void cancel_only_a_pending_alloc(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 1, 10);
    fbf_test_flux_jobspec(&T, 3, 1, 10);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    fbf_test_flux_instant(&T, 1);
    assert_string_equal(cancel_req(2), "");  /* not answered directly */
    assert_string_equal(cancel_req(1), "");  /* running: ignored */
    assert_string_equal(cancel_req(99), ""); /* unknown: ignored */
    alloc_req(3);
    assert_string_equal(cancel_req(3), "");
    assert_string_equal(fbf_test_flux_instant(&T, 2),
                        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":3}\n"
                        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":3}\n"
                        "resp sim.instant e=0 m=7 {\"now\":2}\n");
    /* A second cancel of 2 is ignored: nothing pends any more. */
    cancel_req(2);
    assert_string_equal(fbf_test_flux_instant(&T, 3), "resp sim.instant e=0 m=7 {\"now\":3}\n");
    /* A canceled job's alloc may come again (the job manager requeues):
     * it waits again at its place. */
    alloc_req(2);
    assert_string_equal(
        fbf_test_flux_instant(&T, 4),
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":100,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":4}\n");
    assert_null(strstr(fbf_test_flux_warned(&T), "refused"));
}

/* Prioritize: "No response is sent"; unknown ids "may be safely ignored". */
static void prioritize_never_answered(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 1, 10);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    fbf_test_flux_instant(&T, 1);
    assert_string_equal(fbf_test_flux_send(&T, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                                           FBF_FLUX_PRIORITIZE,
                                           "{\"jobs\":[[2,444],[77,298],[1,1]]}"),
                        "");
    assert_string_equal(fbf_test_flux_instant(&T, 2), "resp sim.instant e=0 m=7 {\"now\":2}\n");
    assert_null(strstr(fbf_test_flux_warned(&T), "refused"));
}

/* RFC 27's queue order is priority, then submit time, and prioritize
 * reorders the waiting jobs: on a full platform, job 3, submitted last
 * with the lowest priority, then raised above the others, starts first
 * when the cores come free. */
static void prioritize_reorders(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 4, 10);
    fbf_test_flux_jobspec(&T, 3, 4, 10);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    fbf_test_flux_req(&T, FBF_FLUX_ALLOC, "{\"id\":3,\"priority\":1,\"userid\":5588}");
    fbf_test_flux_instant(&T, 1);
    fbf_test_flux_send(&T, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                       FBF_FLUX_PRIORITIZE, "{\"jobs\":[[3,30]]}");
    fbf_test_flux_instant(&T, 2);
    free_req(1);
    const char *got = fbf_test_flux_instant(&T, 50);
    if (!strstr(got, "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":0") ||
        strstr(got, "{\"id\":2,\"type\":0"))
        fail_msg("job 3, raised to priority 30, does not start before job 2 (16):\n%s", got);
}

/* Free: answered {"id": J} once processed; the cores are free again
 * at that instant. */
static void free_answered_and_cores_reused(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 4, 100);
    alloc_req(1);
    fbf_test_flux_instant(&T, 0);
    alloc_req(2);
    fbf_test_flux_instant(&T, 1);
    assert_string_equal(free_req(1), "");
    char want[512];
    snprintf(want, sizeof want,
             "resp sched.free e=0 m=0 {\"id\":1}\n" SUCC_0_3
             "resp sim.instant e=0 m=7 {\"now\":50}\n",
             2);
    /* 2's annotations were sent at 1: SUCCESS deletes them. */
    snprintf(want, sizeof want,
             "resp sched.free e=0 m=0 {\"id\":1}\n"
             "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
             "{\"resource_summary\":\"rank0/core[0-3]\",\"t_estimate\":null,"
             "\"reason_pending\":null}}}\n"
             "resp sim.instant e=0 m=7 {\"now\":50}\n");
    assert_string_equal(fbf_test_flux_instant(&T, 50), want);
}

/* "There SHALL NOT be more than one sched.alloc or sched.free request in
 * flight for each job": a second is refused, the first stands. */
static void one_request_in_flight_per_job(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, 1, 4, 100);
    fbf_test_flux_jobspec(&T, 2, 1, 10);
    alloc_req(1);
    assert_string_equal(alloc_req(1), "resp sched.alloc e=17 m=0 sched.alloc: id: job 1: its "
                                      "alloc is pending: RFC 27 allows one alloc in flight per "
                                      "job\n");
    char want[512];
    snprintf(want, sizeof want, SUCC_0_3 "resp sim.instant e=0 m=7 {\"now\":0}\n", 1);
    assert_string_equal(fbf_test_flux_instant(&T, 0), want);
    free_req(1);
    assert_string_equal(free_req(1), "resp sched.free e=22 m=0 sched.free: id: job 1 holds "
                                     "nothing: its free is pending (RFC 27 allows one free in "
                                     "flight per job)\n");
    assert_string_equal(fbf_test_flux_instant(&T, 1), "resp sched.free e=0 m=0 {\"id\":1}\n"
                                                      "resp sim.instant e=0 m=7 {\"now\":1}\n");
}

/* Job ids are 64-bit: read, answered and keyed exactly beyond 2^53. */
static void ids_beyond_2_53(void **state)
{
    const uint64_t id = 18446744073709551557ULL, id2 = 9007199254740993ULL;
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_jobspec(&T, id, 4, 10);
    fbf_test_flux_jobspec(&T, id2, 4, 10);
    alloc_req(id);
    alloc_req(id2);
    assert_string_equal(
        fbf_test_flux_instant(&T, 0),
        "resp sched.alloc e=0 m=0 {\"id\":18446744073709551557,\"type\":0,\"annotations\":"
        "{\"sched\":{\"resource_summary\":\"rank0/core[0-3]\"}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":9007199254740993,\"type\":1,\"annotations\":"
        "{\"sched\":{\"t_estimate\":10,\"reason_pending\":\"insufficient resources: reserved "
        "at its t_estimate\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":0}\n");
    assert_non_null(fbf_test_flux_get(&T, id, "R"));
    assert_null(fbf_test_flux_get(&T, id2, "R"));
    /* 2^53 + 1 and 2^53 are two jobs, not one. */
    fbf_test_flux_jobspec(&T, id2 - 1, 1, 10);
    assert_string_equal(alloc_req(id2 - 1), "");
}

/* The reservation of conservative, kept across instants, announced once;
 * a wake for when it comes due and nothing else would call. */
static void conservative_wake_and_estimates(void **state)
{
    fbf_test_flux t;
    fbf_test_flux_open(&t, "conservative", FBF_FLUX_MODE_UNLIMITED, 1, 4);
    fbf_test_flux_handshake(&t, NULL);
    fbf_test_flux_jobspec(&t, 1, 3, 100);
    fbf_test_flux_jobspec(&t, 2, 4, 10);
    fbf_test_flux_jobspec(&t, 3, 1, 200);
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":1,\"priority\":1,\"userid\":1}");
    fbf_test_flux_instant(&t, 0);
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":2,\"priority\":1,\"userid\":1}");
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":3,\"priority\":1,\"userid\":1}");
    /* 2 reserved at 100; 3 (1 core for 200 s) cannot end by 100: reserved
     * at 110. Nothing running ends before 2's start... 1 does, at 100:
     * no wake needed. */
    assert_string_equal(
        fbf_test_flux_instant(&t, 1),
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":100,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":110,\"reason_pending\":\"insufficient resources: reserved at its "
        "t_estimate\"}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":1}\n");
    /* 1 ends early at 50: compression moves 2 to 50 (it starts) and 3 to 60. */
    fbf_test_flux_req(&t, FBF_FLUX_FREE, "{\"id\":1}");
    assert_string_equal(
        fbf_test_flux_instant(&t, 50),
        "resp sched.free e=0 m=0 {\"id\":1}\n"
        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
        "{\"resource_summary\":\"rank0/core[0-3]\",\"t_estimate\":null,\"reason_pending\":"
        "null}}}\n"
        "resp sched.alloc e=0 m=0 {\"id\":3,\"type\":1,\"annotations\":{\"sched\":"
        "{\"t_estimate\":60}}}\n"
        "resp sim.instant e=0 m=7 {\"now\":50}\n");
    fbf_test_flux_close(&t);
}

/* The malformed and out-of-order requests (support/flux_bad_cases): each
 * gets its one error, naming the topic and the field, and nothing of it
 * is applied; afterwards the session answers as if none had come. */
static void bad_requests_each_refused(void **state)
{
    fbf_test_flux_handshake(&T, NULL);
    fbf_test_flux_bad_setup(&T);
    size_t n;
    const fbf_test_flux_bad *bad = fbf_test_flux_bad_cases(&n);
    assert_true(n >= 30);
    for (size_t i = 0; i < n; i++) {
        unsigned long before = fbf_flux_session_refusals(T.s);
        fbf_test_flux_bad_send(&T, &bad[i]);
        if (fbf_flux_session_refusals(T.s) != before + 1)
            fail_msg("case %zu (%s): %lu refusals, want 1", i, bad[i].name,
                     fbf_flux_session_refusals(T.s) - before);
        fbf_test_flux_bad_expect(&T, &bad[i], T.out, fbf_flux_session_last_refusal(T.s));
    }
    fbf_test_flux_bad_after(&T);
}

int main(void)
{
    fbf_test_filter_from_env();
#define S(t)                                                                                       \
    cmocka_unit_test_prestate_setup_teardown(t, fbf_test_flux_setup, fbf_test_flux_teardown, &T)
    const struct CMUnitTest tests[] = {
        S(alloc_success_commits_R_first),
        cmocka_unit_test(R_lite_by_rank),
        S(deny_what_can_never_run),
        S(annotate_on_change_only),
        S(annotate_takes_estimate_back),
        S(cancel_only_a_pending_alloc),
        S(prioritize_never_answered),
        S(prioritize_reorders),
        S(free_answered_and_cores_reused),
        S(one_request_in_flight_per_job),
        S(ids_beyond_2_53),
        cmocka_unit_test(conservative_wake_and_estimates),
        S(bad_requests_each_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
