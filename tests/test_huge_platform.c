/*
 * test_huge_platform: a platform of 2^31 - 1 machines and a handful of
 * jobs, one of them as large as the platform, costs memory in proportion
 * to the jobs and the machines they use, not to the sizes a peer may
 * claim: under fcfs, easy and conservative the whole run through the v4
 * session stays under 100 MB more than the process held before it, and
 * every job starts where D3 and D6/D7 put it. The same with energy saving,
 * which switches idle machines off and wakes them for the jobs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_session.h"
#include "policies/registry.h"
#include "tools/lib/memstat.h"

#define HUGE "2147483647"
#define HUGE_LAST "2147483646"

static fbf_bv4_session *session(const char *policy, fbf_power_config *power)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    assert_non_null(pe);
    fbf_bv4_options o = {.engine = {.policy = pe->ops,
                                    .reservation_depth = pe->default_depth,
                                    .workers = 1},
                         .power = power,
                         .query_energy = power && power->saving};
    fbf_error err;
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("%s", err.text);
    return s;
}

/* The reply to msg, or the test fails with the session's error. */
static const char *exchange(fbf_bv4_session *s, const char *msg)
{
    const char *reply;
    size_t len;
    fbf_error err;
    if (fbf_bv4_session_handle(s, msg, strlen(msg), &reply, &len, &err) < 0)
        fail_msg("%s\n(on %s)", err.text, msg);
    return reply;
}

#define SUB(t, id, res, wall)                                                                  \
    "{\"timestamp\":" #t ",\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!" #id "\","   \
    "\"job\":{\"id\":\"w0!" #id "\",\"subtime\":" #t ",\"walltime\":" #wall ",\"res\":" res     \
    ",\"profile\":\"p\"}}}"
#define DONE(t, id, alloc)                                                                     \
    "{\"timestamp\":" #t ",\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!" #id "\","   \
    "\"job_state\":\"COMPLETED_SUCCESSFULLY\",\"return_code\":0,\"alloc\":\"" alloc "\"}}"

static void run(const char *policy)
{
    long before = fbf_memstat_settled_rss_kib();
    fbf_bv4_session *s = session(policy, NULL);
    exchange(s, "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"SIMULATION_BEGINS\","
                "\"data\":{\"nb_resources\":" HUGE ",\"nb_compute_resources\":" HUGE ","
                "\"config\":{},\"storage_resources\":[],"
                "\"workloads\":{},\"profiles\":{}}}]}");
    /* The whole platform for 100 s; behind it a job of 1e9 machines and
     * two small ones, which fit nowhere before 100. */
    const char *r = exchange(s, "{\"now\":0,\"events\":[" SUB(0, 1, HUGE, 100) "]}");
    if (!strstr(r, "\"alloc\":\"0-2147483646\""))
        fail_msg("%s: job 1 does not get the whole platform: %s", policy, r);
    r = exchange(s, "{\"now\":1,\"events\":[" SUB(1, 2, "1000000000", 50) "," SUB(1, 3, "5", 10)
                    "," SUB(1, 4, "1", 10) "]}");
    if (strstr(r, "EXECUTE_JOB"))
        fail_msg("%s: a job starts on a full platform: %s", policy, r);
    r = exchange(s, "{\"now\":100,\"events\":[" DONE(100, 1, "0-" HUGE_LAST) "]}");
    if (!strstr(r, "\"job_id\":\"w0!2\",\"alloc\":\"0-999999999\"") ||
        !strstr(r, "\"job_id\":\"w0!3\",\"alloc\":\"1000000000-1000000004\"") ||
        !strstr(r, "\"job_id\":\"w0!4\",\"alloc\":\"1000000005\""))
        fail_msg("%s: not the three jobs on the lowest machines at 100: %s", policy, r);
    long peak = fbf_memstat_rss_kib();
    fbf_bv4_session_destroy(s);
    if (before < 0 || peak < 0)
        skip();
    if (peak - before > 100 * 1024)
        fail_msg("%s: %ld KiB more resident than before the run (at most 100 MiB)", policy,
                 peak - before);
}

static void test_fcfs(void **state)
{
    (void)state;
    run("fcfs");
}

static void test_easy(void **state)
{
    (void)state;
    run("easy");
}

static void test_conservative(void **state)
{
    (void)state;
    run("conservative");
}

#define STATE(t, set, st)                                                                      \
    "{\"timestamp\":" #t ",\"type\":\"RESOURCE_STATE_CHANGED\",\"data\":{\"resources\":\""   \
    set "\",\"state\":\"" st "\"}}"

/* The reply to msg must contain want. */
static void expect(fbf_bv4_session *s, const char *msg, const char *want)
{
    const char *r = exchange(s, msg);
    if (!strstr(r, want))
        fail_msg("no %s in the reply to\n%s:\n%s", want, msg, r);
}

/* Energy saving keeps machine states by runs of ids and holds machines by
 * groups: switching 2^31 - 6 idle machines off, then waking a billion of
 * them for one job, costs as little as the fcfs run above. */
static void test_energy_saving(void **state)
{
    (void)state;
    long before = fbf_memstat_settled_rss_kib();
    fbf_power_config power = fbf_power_config_default();
    power.saving = true;
    power.timeout = 10;
    fbf_bv4_session *s = session("easy", &power);
    exchange(s, "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"SIMULATION_BEGINS\","
                "\"data\":{\"nb_resources\":" HUGE ",\"nb_compute_resources\":" HUGE ","
                "\"config\":{},\"storage_resources\":[],"
                "\"workloads\":{},\"profiles\":{}}}]}");
    expect(s, "{\"now\":0,\"events\":[" SUB(0, 1, "5", 100) "]}", "\"alloc\":\"0-4\"");
    expect(s, "{\"now\":10,\"events\":[]}",
           "\"type\":\"SET_RESOURCE_STATE\",\"data\":{\"resources\":\"5-2147483646\","
           "\"state\":\"1\"}");
    exchange(s, "{\"now\":11,\"events\":[" STATE(11, "5-2147483646", "1") "]}");
    /* A billion machines are woken for job 2, the lowest ones. */
    expect(s, "{\"now\":20,\"events\":[" SUB(20, 2, "1000000000", 50) "]}",
           "\"type\":\"SET_RESOURCE_STATE\",\"data\":{\"resources\":\"5-1000000004\","
           "\"state\":\"0\"}");
    expect(s, "{\"now\":21,\"events\":[" STATE(21, "5-1000000004", "0") "]}",
           "\"job_id\":\"w0!2\",\"alloc\":\"5-1000000004\"");
    /* Job 1's machines go to sleep after their timeout; then job 2's. */
    exchange(s, "{\"now\":100,\"events\":[" DONE(100, 1, "0-4") "]}");
    expect(s, "{\"now\":110,\"events\":[]}",
           "\"resources\":\"0-4\",\"state\":\"1\"");
    exchange(s, "{\"now\":111,\"events\":[" STATE(111, "0-4", "1") "]}");
    exchange(s, "{\"now\":121,\"events\":[" DONE(121, 2, "5-1000000004") "]}");
    expect(s, "{\"now\":131,\"events\":[]}",
           "\"resources\":\"5-1000000004\",\"state\":\"1\"");
    long peak = fbf_memstat_rss_kib();
    fbf_bv4_session_destroy(s);
    if (before < 0 || peak < 0)
        skip();
    if (peak - before > 100 * 1024)
        fail_msg("energy saving: %ld KiB more resident than before the run (at most 100 MiB)",
                 peak - before);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fcfs),
        cmocka_unit_test(test_easy),
        cmocka_unit_test(test_conservative),
        cmocka_unit_test(test_energy_saving),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
