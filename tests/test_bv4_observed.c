/*
 * test_bv4_observed: what a real Batsim 4.2.1 was observed to send
 * (../shared/protocols/batsim-v4.2.1-observed-features.md), fed verbatim
 * to the session, and the replies Batsim 4.2.1 accepts:
 *
 *  - kills: JOB_COMPLETED (COMPLETED_KILLED, return_code -1) then
 *    JOB_KILLED whose progress is keyed by profile_name, down nested
 *    composed profiles, and current_task_index -1 without progress;
 *  - --max-wait: a waiting job is given up with REJECT_JOB (Batsim aborts
 *    on a CHANGE_JOB_STATE that ends a job), its reason in the metadata
 *    set just before;
 *  - energy: the sleep pstate (13) read from the machines' sleep_pstates,
 *    RESOURCE_STATE_CHANGED to "13" and back to "0", the ANSWER in the
 *    next request; a --sleep-pstate the platform contradicts refused;
 *  - CALL_ME_LATER never at or just after the request's now;
 *  - a registration acknowledged with Batsim's re-serialised job.
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

#include "io/bv4_session.h"
#include "policies/registry.h"
#include "support/bv4_kit.h"
#include "support/testkit.h"

#define ok fbf_test_bv4_ok

static fbf_bv4_session *session(const char *policy, double kill_after, double max_wait,
                                const fbf_power_config *power, bool sleep_given)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth, .workers = 1,
                   .kill_after = kill_after, .max_wait = max_wait},
        .power = power,
        .query_energy = power && power->saving,
        .sleep_pstate_given = sleep_given,
    };
    fbf_error err = {{0}};
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("session_create: %s", err.text);
    return s;
}

/* The SIMULATION_BEGINS of small_platform with the config of a plain run
 * (batsim-v4.2.1-observed-messages.md), 4 machines. */
static const char *begins4(void) { return fbf_test_obs_begins4; }

static const char *submit(const char *id, int res, double walltime)
{
    return fbf_test_msg("{'now':0.000045,'events':[{'timestamp':0.000045,'type':"
                        "'JOB_SUBMITTED','data':{'job_id':'%s','job':{'id':'%s','subtime':0,"
                        "'walltime':%g,'res':%d,'profile':'p'}}}]}",
                        id, id, walltime, res);
}

/* §1: job 3 is killed at once; 1, 2 and 4 at 25. Batsim reports each
 * really-killed job with a JOB_COMPLETED first, then one JOB_KILLED. */
static void test_kills_as_observed(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("fcfs", 0, 0, NULL, false);
    ok(s, begins4(), "");
    ok(s, fbf_test_msg("{'now':0.000045,'events':[%s,%s,%s,%s]}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!1',"
                       "'job':{'id':'w0!1','subtime':0,'walltime':500,'res':1,'profile':'d100'}}}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!2',"
                       "'job':{'id':'w0!2','subtime':0,'walltime':500,'res':1,'profile':'seq'}}}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!3',"
                       "'job':{'id':'w0!3','subtime':0,'walltime':500,'res':1,'profile':'seq'}}}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!4',"
                       "'job':{'id':'w0!4','subtime':0,'walltime':500,'res':1,"
                       "'profile':'seqseq'}}}"),
       "EXECUTE_JOB w0!1 0|EXECUTE_JOB w0!2 1|EXECUTE_JOB w0!3 2|EXECUTE_JOB w0!4 3");
    ok(s,
       "{\"now\":0.000180,\"events\":[{\"timestamp\":0.000060,\"type\":\"NOTIFY\",\"data\":{"
       "\"type\":\"no_more_static_job_to_submit\"}},{\"timestamp\":0.000165,\"type\":"
       "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!3\",\"job_state\":\"COMPLETED_KILLED\","
       "\"return_code\":-1,\"alloc\":\"2\"}},{\"timestamp\":0.000165,\"type\":\"JOB_KILLED\","
       "\"data\":{\"job_ids\":[\"w0!3\"],\"job_progress\":{\"w0!3\":{\"profile_name\":\"seq\","
       "\"current_task_index\":0,\"current_task\":{\"profile_name\":\"d10\",\"progress\":"
       "0.000002}}}}}]}",
       "");
    assert_int_equal(fbf_engine_nb_free(fbf_bv4_session_engine(s)), 1);
    ok(s,
       "{\"now\":25.000060,\"events\":[{\"timestamp\":25.000060,\"type\":\"JOB_COMPLETED\","
       "\"data\":{\"job_id\":\"w0!1\",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,"
       "\"alloc\":\"0\"}},{\"timestamp\":25.000060,\"type\":\"JOB_COMPLETED\",\"data\":{"
       "\"job_id\":\"w0!2\",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":"
       "\"1\"}},{\"timestamp\":25.000060,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":"
       "\"w0!4\",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":\"3\"}},"
       "{\"timestamp\":25.000060,\"type\":\"JOB_KILLED\",\"data\":{\"job_ids\":[\"w0!1\","
       "\"w0!2\",\"w0!4\"],\"job_progress\":{\"w0!1\":{\"profile_name\":\"d100\",\"progress\":"
       "0.250000},\"w0!2\":{\"profile_name\":\"seq\",\"current_task_index\":1,"
       "\"current_task\":{\"profile_name\":\"d20\",\"progress\":0.749997}},\"w0!4\":{"
       "\"profile_name\":\"seqseq\",\"current_task_index\":0,\"current_task\":{"
       "\"profile_name\":\"seq\",\"current_task_index\":1,\"current_task\":{\"profile_name\":"
       "\"d20\",\"progress\":0.749996}}}}}}]}",
       "");
    assert_int_equal(fbf_engine_nb_free(fbf_bv4_session_engine(s)), 4);
    assert_int_equal(fbf_engine_nb_running(fbf_bv4_session_engine(s)), 0);
    fbf_bv4_session_destroy(s);

    /* A leaf Batsim cannot measure: current_task_index -1, no progress. */
    s = session("fcfs", 0, 0, NULL, false);
    ok(s, begins4(), "");
    ok(s, fbf_test_msg("{'now':0.000045,'events':[%s,%s]}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!5',"
                       "'job':{'id':'w0!5','subtime':0,'walltime':500,'res':1,"
                       "'profile':'seqrecv'}}}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!6',"
                       "'job':{'id':'w0!6','subtime':0,'walltime':500,'res':1,'profile':'rcv'}}}"),
       "EXECUTE_JOB w0!5 0|EXECUTE_JOB w0!6 1");
    ok(s,
       "{\"now\":12.000060,\"events\":[{\"timestamp\":12.000060,\"type\":\"JOB_COMPLETED\","
       "\"data\":{\"job_id\":\"w0!5\",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,"
       "\"alloc\":\"0\"}},{\"timestamp\":12.000060,\"type\":\"JOB_COMPLETED\",\"data\":{"
       "\"job_id\":\"w0!6\",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":"
       "\"1\"}},{\"timestamp\":12.000060,\"type\":\"JOB_KILLED\",\"data\":{\"job_ids\":["
       "\"w0!5\",\"w0!6\"],\"job_progress\":{\"w0!5\":{\"profile_name\":\"seqrecv\","
       "\"current_task_index\":0,\"current_task\":{\"profile_name\":\"rcv\","
       "\"current_task_index\":-1}},\"w0!6\":{\"profile_name\":\"rcv\","
       "\"current_task_index\":-1}}}}]}",
       "");
    assert_int_equal(fbf_engine_nb_free(fbf_bv4_session_engine(s)), 4);
    fbf_bv4_session_destroy(s);
}

/* --max-wait 10: job 2 (all 4 machines, behind job 1) is given up at 10
 * with a REJECT_JOB, the metadata saying why just before it, which
 * Batsim keeps for the rejected job's row (§3). */
static void test_max_wait_rejects(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("easy", 0, 10, NULL, false);
    ok(s, begins4(), "");
    ok(s, fbf_test_msg("{'now':0.000045,'events':[%s,%s]}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!1',"
                       "'job':{'id':'w0!1','subtime':0,'walltime':50,'res':1,'profile':'d10'}}}",
                       "{'timestamp':0.000045,'type':'JOB_SUBMITTED','data':{'job_id':'w0!2',"
                       "'job':{'id':'w0!2','subtime':0,'walltime':50,'res':4,'profile':'d10'}}}"),
       "EXECUTE_JOB w0!1 0|CALL_ME_LATER 10");
    ok(s, "{\"now\":10.000015,\"events\":[{\"timestamp\":10.000015,\"type\":\"REQUESTED_CALL\","
          "\"data\":{}}]}",
       "SET_JOB_METADATA w0!2 gave up after waiting 10 s (fastbf --max-wait)|REJECT_JOB w0!2");
    assert_int_equal(fbf_engine_job_state(fbf_bv4_session_engine(s),
                                          fbf_engine_find(fbf_bv4_session_engine(s), "w0!2")),
                     FBF_JOB_REJECTED);
    fbf_bv4_session_destroy(s);
}

/* Three machines of energy_platform_homogeneous_no_net_128 (§5): their
 * properties as Batsim forwards them from the platform file. */
static const char *energy_begins(void)
{
    static const char host[] =
        "{'id':%d,'name':'host%d','state':'idle','properties':{'role':'',"
        "'wattage_per_state':'95.0:95.0:190.738, 95.0:95.0:171.02, 95.0:95.0:165.62, "
        "95.0:95.0:160.47, 95.0:95.0:155.729, 95.0:95.0:151.3, 95.0:95.0:146.92, "
        "95.0:95.0:142.95, 95.0:95.0:138.928, 95.0:95.0:135.368, 95.0:95.0:132.519, "
        "95.0:95.0:128.87, 95.0:95.0:125.88, 9.75:9.75:9.75, 100.99672131147543:"
        "100.99672131147543:100.99672131147543, 125.1743848996832:125.1743848996832:"
        "125.1743848996832','wattage_off':'10','sleep_pstates':'13:14:15'},"
        "'zone_properties':{}}";
    char hosts[3][1024];
    for (int i = 0; i < 3; i++)
        snprintf(hosts[i], sizeof hosts[i], host, i, i == 2 ? 10 : i);
    return fbf_test_msg("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
                        "'nb_resources':3,'nb_compute_resources':3,'nb_storage_resources':0,"
                        "'config':{'redis-enabled':false},'compute_resources':[%s,%s,%s],"
                        "'storage_resources':[],'workloads':{},'profiles':{}}}]}",
                        hosts[0], hosts[1], hosts[2]);
}

static void expect_raw(fbf_bv4_session *s, const char *req, const char *want)
{
    char *raw = fbf_test_bv4_exchange(s, req, 0, NULL, true);
    if (strcmp(raw, want) != 0)
        fail_msg("reply to %s\n  is   %s\n  want %s", req, raw, want);
    free(raw);
}

/* --energy-saving 0 --switch-delays 6.1:151.52 with the default pstates:
 * idle machines go to sleep in pstate 13, the platform's, and wake to 0. */
static void test_energy_pstates_from_platform(void **state)
{
    (void)state;
    fbf_power_config pc = fbf_power_config_default();
    pc.saving = true;
    pc.off_delay = 6.1;
    pc.on_delay = 151.52;
    fbf_bv4_session *s = session("easy", 0, 0, &pc, false);
    expect_raw(s, energy_begins(),
               "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"SET_RESOURCE_STATE\","
               "\"data\":{\"resources\":\"0-2\",\"state\":\"13\"}}]}");
    ok(s, "{\"now\":6.100000,\"events\":[{\"timestamp\":6.100000,\"type\":"
          "\"RESOURCE_STATE_CHANGED\",\"data\":{\"resources\":\"0-2\",\"state\":\"13\"}}]}",
       "");
    expect_raw(s, "{\"now\":10.000000,\"events\":[{\"timestamp\":10.000000,\"type\":"
                  "\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!2\",\"job\":{\"id\":\"w0!2\","
                  "\"subtime\":10,\"walltime\":100,\"res\":1,\"profile\":\"d10\"}}}]}",
               "{\"now\":10,\"events\":[{\"timestamp\":10,\"type\":\"SET_RESOURCE_STATE\","
               "\"data\":{\"resources\":\"0\",\"state\":\"0\"}}]}");
    ok(s, "{\"now\":161.520000,\"events\":[{\"timestamp\":161.520000,\"type\":"
          "\"RESOURCE_STATE_CHANGED\",\"data\":{\"resources\":\"0\",\"state\":\"0\"}}]}",
       "EXECUTE_JOB w0!2 0");
    ok(s, "{\"now\":161.520000,\"events\":[{\"timestamp\":161.520000,\"type\":\"ANSWER\","
          "\"data\":{\"consumed_energy\":1775.080000}}]}",
       "");
    fbf_bv4_session_destroy(s);

    /* A pstate the command line named that the platform contradicts. */
    pc.sleep_pstate = 1;
    s = session("easy", 0, 0, &pc, true);
    const char *req = energy_begins(), *reply;
    size_t len;
    fbf_error err = {{0}};
    assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err), -EINVAL);
    assert_string_equal(err.text,
                        "event 0 (SIMULATION_BEGINS): data.compute_resources[].properties."
                        "sleep_pstates: machine 0 sleeps in pstate 13, not 1: drop --sleep-pstate "
                        "or set it to one of the platform's sleep pstates");
    fbf_bv4_session_destroy(s);
    pc.sleep_pstate = 13;
    pc.compute_pstate = 15;
    s = session("easy", 0, 0, &pc, true);
    assert_int_equal(fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err), -EINVAL);
    assert_non_null(strstr(err.text, "pstate 15 of machine 0 is a virtual pstate of a switch"));
    fbf_bv4_session_destroy(s);
}

/* A call due at the request's now, or within Batsim's rounding and event
 * delays of it, is asked for no sooner than now + 1 ms + 20 us per event
 * before it: Batsim aborts on a call it sees as past (§6). */
static void test_call_never_at_now(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("fcfs", 1e-4, 0, NULL, false);
    ok(s, begins4(), "");
    char *raw = fbf_test_bv4_exchange(s, submit("w0!1", 1, 100), 0,
                                      "EXECUTE_JOB w0!1 0|CALL_ME_LATER 0.001065", true);
    assert_non_null(strstr(raw, "\"CALL_ME_LATER\",\"data\":{\"timestamp\":0.001065}"));
    free(raw);
    fbf_bv4_session_destroy(s);
}

/* §4: an acknowledgement carries Batsim's re-serialised job
 * (walltime 12.500000): it enters the queue like any submission. */
static void test_registration_acknowledged(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("fcfs", 0, 0, NULL, false);
    ok(s, fbf_test_bv4_begins(4, "'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':true"),
       "NOTIFY registration_finished");
    ok(s, "{\"now\":0.000090,\"events\":[{\"timestamp\":0.000030,\"type\":\"JOB_SUBMITTED\","
          "\"data\":{\"job_id\":\"dyn!a\",\"job\":{\"id\":\"dyn!a\",\"subtime\":0,\"res\":1,"
          "\"walltime\":12.500000,\"profile\":\"d5\"}}},{\"timestamp\":0.000060,\"type\":"
          "\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"dyn!b\",\"job\":{\"id\":\"dyn!b\",\"subtime\":0,"
          "\"res\":1,\"walltime\":20,\"profile\":\"d5\"}}}]}",
       "EXECUTE_JOB dyn!a 0|EXECUTE_JOB dyn!b 1");
    fbf_bv4_session_destroy(s);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kills_as_observed),
        cmocka_unit_test(test_max_wait_rejects),
        cmocka_unit_test(test_energy_pstates_from_platform),
        cmocka_unit_test(test_call_never_at_now),
        cmocka_unit_test(test_registration_acknowledged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
