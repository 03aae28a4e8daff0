/*
 * test_replay_v5_errors: fastbf-replay --protocol batsim5 against EDCs
 * that break the protocol, one way each (support/v5_edc's scripts): bad
 * hellos, malformed and truncated messages, missing members, unknown event
 * types and union members, unknown and deleted jobs, busy and missing
 * hosts, decisions in the past or out of order, calls the way Batsim
 * refuses them. Each is refused with exit status 2 and its reason (Batsim
 * 5.0.0-rc2's own words where it has some). The same EDC without its
 * fault ends the run well (also with --energy and --timeout), so each
 * refusal is the fault's doing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/replay_run.h"
#include "support/v5_edc.h"
#include "support/v5_run.h"

#define TIMEOUT_MS 60000

#define HELLO(feat, commit)                                                                      \
    "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{"                   \
    "'batprotocol_version':'1.0.0','decision_component_name':'bad',"                             \
    "'decision_component_version':'1'" commit feat "}}]}"
#define FEAT ",'requested_simulation_features':{}"
#define COMMIT ",'decision_component_commit':''"
#define EV(type, body) "{'timestamp':$now,'event_type':'" type "','event':" body "}"
#define MSG(...) "{'now':$now,'events':[" __VA_ARGS__ "]}"
#define PLACE "'executor_placement_type':'PredefinedExecutorPlacementStrategyWrapper'," \
              "'executor_placement':{}"
#define EXEC(id, hosts) EV("ExecuteJobEvent", "{'job_id':'" id "','allocation':{"         \
                                              "'host_allocation':'" hosts "'," PLACE "}}")
#define EXEC1 EXEC("w0!1", "0-1")

#define DYN HELLO(",'requested_simulation_features':{'dynamic_registration':true}", COMMIT)
#define REGPROF(id, delay) EV("RegisterProfileEvent", "{'profile':{'id':'" id "','profile_type':" \
                                                      "'DelayProfile','profile':{'delay':" #delay "}}}")
#define REGJOB(id, job) EV("RegisterJobEvent", "{'job_id':'" id "','job':{'resource_request':1," job \
                                               "}}")

typedef struct bad {
    const char *name;
    const char *hello;  /* "" the usual one */
    const char *reply;  /* the reply to the message with the first submissions; NULL none */
    const char *needle; /* on stderr */
    const char *extra;  /* one more option, or NULL */
} bad;

static const bad cases[] = {
    /* the handshake */
    {"short init reply", "!raw:ab", NULL, "should contain at least 4 bytes for the serialization "
                                          "flags", NULL},
    {"binary flags", "!flags=1:" HELLO(FEAT, COMMIT), NULL,
     "flags 0x1: the EDC chose flatbuffers binary, and this run expects JSON (--format json)",
     NULL},
    {"unknown flags", "!flags=6:" HELLO(FEAT, COMMIT), NULL, "flags 0x6: expected 0x2", NULL},
    {"hello malformed", "{'now':0,'events':[", NULL, "malformed JSON at byte", NULL},
    {"no hello", "{'now':0,'events':[]}", NULL,
     "Batsim did not receive an answer to its Hello message", NULL},
    {"two events", "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{}},"
                   "{'timestamp':0,'event_type':'EDCHelloEvent','event':{}}]}",
     NULL, "Batsim did not receive an answer to its Hello message", NULL},
    {"no name", "{'now':0,'events':[{'timestamp':0,'event_type':'EDCHelloEvent','event':{"
                "'batprotocol_version':'1'}}]}",
     NULL, "EDCHelloEvent.decision_component_name is missing or not a string", NULL},
    {"no commit", HELLO(FEAT, ""), NULL, "decision_component_commit is missing (it may be \"\"): "
                                         "Batsim 5.0.0-rc2 dies of a segmentation fault", NULL},
    {"no features", HELLO("", COMMIT), NULL, "requested_simulation_features is missing (it may "
                                             "be {})", NULL},
    {"feature not bool", HELLO(",'requested_simulation_features':{'profile_reuse':1}", COMMIT),
     NULL, "requested_simulation_features.profile_reuse is not a boolean", NULL},
    /* the message */
    {"malformed", "", "{'now':$now,'events':[{'timestamp'", "malformed JSON at byte", NULL},
    {"truncated", "", "{'now':$now,'ev", "malformed JSON at byte", NULL},
    {"not an object", "", "[1]", "the reply is not a JSON object", NULL},
    {"no now", "", "{'events':[]}", "field now is missing or not a number", NULL},
    {"time travel", "", "{'now':-1,'events':[]}", "now -1 is before the request's now 0 (the EDC "
                                                   "cannot decide in the past)", NULL},
    {"no events", "", "{'now':$now}", "field events is missing or not an array", NULL},
    {"event after now", "", "{'now':$now,'events':[{'timestamp':1,'event_type':"
                            "'RejectJobEvent','event':{'job_id':'w0!1'}}]}",
     "invalid event 0 (type='RejectJobEvent') in message: event timestamp (1) is after message's "
     "now (0)", NULL},
    {"descending", "", "{'now':2,'events':[{'timestamp':2,'event_type':'RejectJobEvent','event':"
                       "{'job_id':'w0!1'}},{'timestamp':1,'event_type':'RejectJobEvent','event':"
                       "{'job_id':'w0!2'}}]}",
     "is before preceding event's timestamp (2) while events should be in chronological order",
     NULL},
    {"no event_type", "", MSG("{'timestamp':$now,'event':{}}"),
     "field event_type is missing or not a string", NULL},
    {"no event", "", MSG("{'timestamp':$now,'event_type':'RejectJobEvent'}"),
     "field event is missing or not an object", NULL},
    {"unknown type", "", MSG(EV("LaunchRocketEvent", "{}")),
     "unknown event type 'LaunchRocketEvent' (not a batprotocol event)", NULL},
    {"Batsim's type", "", MSG(EV("JobSubmittedEvent", "{'job_id':'w0!1'}")),
     "Unhandled event type received (JobSubmittedEvent)", NULL},
    {"hello twice", "", MSG(EV("EDCHelloEvent", "{}")),
     "External decision component said hello twice!", NULL},
    /* dynamic registration */
    {"registration not requested", "", MSG(REGJOB("w1!a", "'profile_id':'w1!p'")),
     "the EDC did not request dynamic_registration in its EDCHelloEvent", NULL},
    {"registration finished", DYN, MSG(EV("FinishRegistrationEvent", "{}") "," REGPROF("w1!p", 5)),
     "registration after the EDC's FinishRegistrationEvent", NULL},
    {"profile without member", DYN, MSG(EV("RegisterProfileEvent", "{}")),
     "event.profile is missing (Batsim 5.0.0-rc2 reads it unchecked)", NULL},
    {"profile id without workload", DYN, MSG(REGPROF("p", 5)),
     "event.profile.id 'p' is not \"workload!name\"", NULL},
    {"profile twice", DYN, MSG(REGPROF("w1!p", 5) "," REGPROF("w1!p", 6)),
     "Invalid new profile registration: 'w1!p' already exists in the workload.", NULL},
    {"profile not delay", DYN, MSG(EV("RegisterProfileEvent", "{'profile':{'id':'w1!p',"
                                   "'profile_type':'ParallelTaskProfile','profile':{}}}")),
     "profile w1!p: event.profile.profile_type is not DelayProfile", NULL},
    {"profile delay 0", DYN, MSG(REGPROF("w1!p", 0)),
     "Invalid registration of profile 'w1!p': non-strictly-positive 'delay' field (0)", NULL},
    {"job id", DYN, MSG(REGPROF("w1!p", 5) "," REGJOB("a", "'profile_id':'w1!p'")),
     "Invalid string job identifier 'a': should be formatted as two '!'-separated parts", NULL},
    {"job exists", DYN, MSG(REGPROF("w1!p", 5) "," REGJOB("w0!1", "'profile_id':'w1!p'")),
     "Invalid new job registration: 'w0!1' already exists in the workload.", NULL},
    {"job without profile_id", DYN, MSG(REGPROF("w1!p", 5) "," REGJOB("w1!a", "'rigid':true")),
     "event.job.profile_id is missing (Batsim 5.0.0-rc2 reads it unchecked)", NULL},
    {"job profile unknown", DYN, MSG(REGPROF("w1!p", 5) "," REGJOB("w1!a", "'profile_id':'q'")),
     "Invalid new job registration for 'w1!a': the associated profile 'w1!q' does not exist",
     NULL},
    {"job profile workload", DYN, MSG(REGJOB("w1!a", "'profile_id':'w9!p'")),
     "Invalid new job resgistration for 'w1!a': the profile's workload does not exist (w9)", NULL},
    {"job profile unknown in workload", DYN, MSG(REGPROF("w1!p", 5) ","
                                                 REGJOB("w1!a", "'profile_id':'w1!q'")),
     "Invalid new job registration for 'w1!a': the profile does not exist (w1!q).", NULL},
    {"job of 0 hosts", DYN, MSG(REGPROF("w1!p", 5) "," EV("RegisterJobEvent", "{'job_id':'w1!a',"
                                "'job':{'resource_request':0,'profile_id':'w1!p'}}")),
     "event.job.resource_request is 0: fastbf-replay runs jobs of 1 resource or more", NULL},
    {"job walltime", DYN, MSG(REGPROF("w1!p", 5) "," REGJOB("w1!a", "'profile_id':'w1!p',"
                                                          "'walltime':-5")),
     "event.job.walltime is not a number > 0 (absent: no walltime)", NULL},
    /* jobs */
    {"unknown job", "", MSG(EXEC("w0!nope", "0")), "Cannot get job 'w0!nope': it does not exist",
     NULL},
    {"bad job id", "", MSG(EXEC("nope", "0")),
     "Invalid string job identifier 'nope': should be formatted as two '!'-separated parts", NULL},
    {"not submitted", "", MSG(EXEC("w0!3", "3")),
     "Cannot execute job 'w0!3': its state (NOT_SUBMITTED) is not JOB_STATE_SUBMITTED.", NULL},
    {"twice", "", MSG(EXEC1 "," EXEC1),
     "Cannot execute job 'w0!1': its state (RUNNING) is not JOB_STATE_SUBMITTED.", NULL},
    {"busy hosts", "", MSG(EXEC1 "," EXEC("w0!2", "1")),
     "host 1 is busy (job w0!1 runs there): fastbf-replay does not share hosts", NULL},
    {"missing host", "", MSG(EXEC("w0!1", "0 9")),
     "Cannot get machine 9: it does not exist (the platform has 4 hosts: 0-3)", NULL},
    {"wrong size", "", MSG(EXEC("w0!1", "0-2")),
     "the allocation has 3 hosts, the job's resource_request is 2", NULL},
    {"bad interval set", "", MSG(EXEC("w0!1", "0,1")),
     "event.allocation.host_allocation '0,1' is not an interval set", NULL},
    {"no host_allocation", "", MSG(EV("ExecuteJobEvent", "{'job_id':'w0!1','allocation':{" PLACE
                                                         "}}")),
     "event.allocation.host_allocation is missing or not a string", NULL},
    {"no placement type", "", MSG(EV("ExecuteJobEvent", "{'job_id':'w0!1','allocation':{"
                                                        "'host_allocation':'0-1'}}")),
     "invalid ExecuteJob received: executor placement type of job's main allocation is NONE", NULL},
    {"wrong union type", "", MSG(EV("ExecuteJobEvent", "{'job_id':'w0!1','allocation':{"
                                                       "'host_allocation':'0-1',"
                                                       "'executor_placement_type':'OneShot',"
                                                       "'executor_placement':{}}}")),
     "executor_placement_type 'OneShot' is not an ExecutorPlacement", NULL},
    {"bad mapping", "", MSG(EV("ExecuteJobEvent", "{'job_id':'w0!1','allocation':{"
                                                  "'host_allocation':'0-1','executor_placement_"
                                                  "type':'CustomExecutorToHostMapping',"
                                                  "'executor_placement':{'mapping':[0,2]}}}")),
     "executor_placement.mapping[1]: expected an index of host_allocation, in [0, 2)", NULL},
    {"reject running", "", MSG(EXEC1 "," EV("RejectJobEvent", "{'job_id':'w0!1'}")),
     "Invalid job rejection received: job 'w0!1' has state='RUNNING' which is not SUBMITTED.",
     NULL},
    {"kill waiting", "", MSG(EV("KillJobsEvent", "{'job_ids':['w0!2']}")),
     "Invalid KILL_JOB: job_id 'w0!2' is neither being executed nor completed, it has "
     "state='SUBMITTED'", NULL},
    {"kill rejected", "", MSG(EV("RejectJobEvent", "{'job_id':'w0!2'}") ","
                              EV("KillJobsEvent", "{'job_ids':['w0!2']}")),
     "Invalid kill: job w0!2 has not been started yet (state='REJECTED')", NULL},
    /* calls and hosts */
    {"call without when", "", MSG(EV("CallMeLaterEvent", "{'call_me_later_id':'x'}")),
     "invalid CallMeLater received: temporal trigger is NONE", NULL},
    {"call wrong union", "", MSG(EV("CallMeLaterEvent", "{'call_me_later_id':'x','when_type':"
                                                        "'Sometimes','when':{}}")),
     "event.when_type: expected OneShot or Periodic", NULL},
    {"periodic offset", "", MSG(EV("CallMeLaterEvent", "{'call_me_later_id':'x','when_type':"
                                                       "'Periodic','when':{'period':5,'offset':2,"
                                                       "'mode_type':'Infinite','mode':{}}}")),
     "CallMeLater (id='x') has non-zero offset", NULL},
    {"periodic none", "", MSG(EV("CallMeLaterEvent", "{'call_me_later_id':'x','when_type':"
                                                     "'Periodic','when':{'period':5,"
                                                     "'mode_type':'FinitePeriodNumber','mode':"
                                                     "{'nb_periods':0}}}")),
     "invalid CallMeLater (call_id='x'): finite but nb_periods=0 should be greater than 0", NULL},
    {"periods", "", MSG(EV("CallMeLaterEvent", "{'call_me_later_id':'a','when_type':'Periodic',"
                                               "'when':{'period':4,'mode_type':'Infinite',"
                                               "'mode':{}}}") ","
                        EV("CallMeLaterEvent", "{'call_me_later_id':'b','when_type':'Periodic',"
                                               "'when':{'period':6,'mode_type':'Infinite',"
                                               "'mode':{}}}")),
     "Period 6000 is incompatible with period 4000, as the remainder of 6000/4000 is non-zero",
     NULL},
    {"switch without --energy", "", MSG(EV("TurnOnOffHostsEvent", "{'host_ids':'3','state':1}")),
     "simulates host power states only with --energy", NULL},
    {"switch on an ON host", "", MSG(EV("TurnOnOffHostsEvent", "{'host_ids':'3','state':0}")),
     "Invalid turning ON/OFF of host 3 ('r3'): Asked to turn ON a host already in a computing "
     "pstate (current: 0 target: 0)", "--energy"},
    {"silent", "", "!silent", "no reply from the scheduler", "--timeout"},
};

static void run_case(const bad *c, char *dir, const char *wl, bool with_fault)
{
    const char *script[4] = {with_fault ? c->hello : "", "{'now':$now,'events':[]}",
                             with_fault ? c->reply : NULL, NULL};
    if (!script[2])
        script[1] = NULL;
    char ep[128];
    fbf_test_v5edc_thread *t = fbf_test_v5edc_thread_start(script, ep, sizeof ep);
    assert_non_null(t);
    const char *args[12] = {"--quiet", "--protocol", "batsim5", "--endpoint", ep, wl};
    size_t n = 6;
    if (c->extra && strcmp(c->extra, "--timeout") == 0) {
        args[n++] = "--timeout";
        args[n++] = "1";
    } else if (c->extra) {
        args[n++] = c->extra;
    }
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    free(fbf_test_v5edc_thread_stop(t));
    if (with_fault && (rc != 2 || !strstr(err, c->needle)))
        fail_msg("%s: expected exit 2 and '%s', got exit %d: %s", c->name, c->needle, rc, err);
    if (!with_fault && rc != 0)
        fail_msg("%s without its fault: exit %d: %s", c->name, rc, err);
    free(out);
    free(err);
    (void)dir;
}

static void test_bad_replies(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    size_t n = sizeof cases / sizeof *cases;
    assert_true(n >= 20);
    for (size_t k = 0; k < n; k++) {
        run_case(&cases[k], dir, wl, true);
        if (k == 0 || cases[k].extra)
            run_case(&cases[k], dir, wl, false);
    }
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_replies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
