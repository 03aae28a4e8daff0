/*
 * test_bv5_errors: malformed or impossible Batsim 5 messages (JSON
 * batprotocol) to fastbf's EDC, each refused with its one-line error
 * naming the event (index and event_type) and the field, then the
 * ForceSimulationStopEvent that makes Batsim stop. Driven in process
 * through io/bv5_edc.h, as the library and the process drive it.
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

#include "io/bv5_edc.h"
#include "policies/registry.h"

#define BEGINS                                                                                 \
    "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\","       \
    "\"event\":{\"computation_host_number\":4,\"batsim_execution_context_json\":\"{}\"}}]}"
#define SUB1                                                                                   \
    "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":\"JobSubmittedEvent\",\"event\":" \
    "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1,\"walltime\":10},"                  \
    "\"submission_time\":1}}]}"
/* One event at time 2 after the simulation began. */
#define EV(type, body)                                                                         \
    "{\"now\":2,\"events\":[{\"timestamp\":2,\"event_type\":\"" type "\",\"event\":" body "}]}"

typedef struct bad_case {
    const char *name;
    const char *before; /* sent first and accepted: NULL none, "B" begins, "BS" and w0!1 */
    const char *msg;
    int rc;
    const char *want;
} bad_case;

static const bad_case cases[] = {
    {"not json", NULL, "{\"now\":", -EPROTO, "malformed JSON message near byte"},
    {"trailing bytes", "B", "{\"now\":1,\"events\":[]} x", -EPROTO,
     "unexpected bytes after the message at byte 22"},
    {"not an object", NULL, "[1,2]", -EPROTO, "message: expected a JSON object, got an array"},
    {"now twice", "B", "{\"now\":1,\"events\":[],\"now\":2}", -EPROTO,
     "duplicate key \"now\" (one member named twice)"},
    {"job_id twice", "BS", EV("JobCompletedEvent", "{\"job_id\":\"w0!1\",\"job_id\":\"w0!1\"}"),
     -EPROTO, "duplicate key \"job_id\" in \"event\" (one member named twice)"},
    {"NUL in a string", "BS", EV("JobCompletedEvent", "{\"job_id\":\"w0!1\\u0000x\"}"), -EPROTO,
     "a string holds \\u0000 (a NUL byte) near byte"},
    {"now missing", NULL, "{\"events\":[]}", -EPROTO, "message: now: expected a finite number, got nothing"},
    {"now a string", NULL, "{\"now\":\"0\",\"events\":[]}", -EPROTO,
     "message: now: expected a finite number, got a string"},
    {"events missing", NULL, "{\"now\":0}", -EPROTO, "message: events: expected an array, got nothing"},
    {"events an object", NULL, "{\"now\":0,\"events\":{}}", -EPROTO,
     "message: events: expected an array, got an object"},
    {"first without begins", NULL, "{\"now\":0,\"events\":[]}", -EPROTO,
     "the first message must hold SimulationBeginsEvent"},
    {"event before begins", NULL, SUB1, -EPROTO,
     "event 0 (JobSubmittedEvent): received before SimulationBeginsEvent"},
    {"begins twice", "B", BEGINS, -EPROTO, "event 0 (SimulationBeginsEvent): the simulation already began"},
    {"event not an object", "B", "{\"now\":1,\"events\":[3]}", -EPROTO, "event 0: expected an object, got a number"},
    {"event_type missing", "B", "{\"now\":1,\"events\":[{\"timestamp\":1,\"event\":{}}]}", -EPROTO,
     "event 0: event_type: expected a string, got nothing"},
    {"timestamp missing", "B", "{\"now\":1,\"events\":[{\"event_type\":\"RequestedCallEvent\",\"event\":{}}]}",
     -EPROTO, "event 0 (RequestedCallEvent): timestamp: expected a finite number, got nothing"},
    {"timestamp after now", "B",
     "{\"now\":1,\"events\":[{\"timestamp\":5,\"event_type\":\"RequestedCallEvent\",\"event\":{}}]}",
     -EPROTO, "event 0 (RequestedCallEvent): timestamp: 5.000000 is after now 1.000000"},
    {"timestamps back", "B",
     "{\"now\":3,\"events\":[{\"timestamp\":2,\"event_type\":\"RequestedCallEvent\",\"event\":{}},"
     "{\"timestamp\":1,\"event_type\":\"RequestedCallEvent\",\"event\":{}}]}",
     -EPROTO, "event 1 (RequestedCallEvent): timestamp: 1.000000 is before the previous event's 2.000000"},
    {"event body missing", "B", "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":\"RequestedCallEvent\"}]}",
     -EPROTO, "event 0 (RequestedCallEvent): event: expected an object, got nothing"},
    {"unknown type", "B", EV("JobExplodedEvent", "{}"), -EPROTO,
     "event 0 (JobExplodedEvent): event_type: unknown event type"},
    {"EDC's ExecuteJobEvent", "B", EV("ExecuteJobEvent", "{}"), -EPROTO,
     "event 0 (ExecuteJobEvent): event_type: this event goes from the decision component to Batsim"},
    {"EDC's hello", "B", EV("EDCHelloEvent", "{}"), -EPROTO,
     "event 0 (EDCHelloEvent): event_type: this event goes from the decision component"},
    {"EDC's CallMeLater", "B", EV("CallMeLaterEvent", "{}"), -EPROTO, "from the decision component"},
    {"EDC's RejectJob", "B", EV("RejectJobEvent", "{}"), -EPROTO, "from the decision component"},
    {"EDC's KillJobs", "B", EV("KillJobsEvent", "{}"), -EPROTO, "from the decision component"},
    {"EDC's ChangeHostsPState", "B", EV("ChangeHostsPStateEvent", "{}"), -EPROTO, "from the decision component"},
    {"EDC's ForceSimulationStop", "B", EV("ForceSimulationStopEvent", "{}"), -EPROTO, "from the decision component"},
    {"after ends", "B",
     "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":\"SimulationEndsEvent\",\"event\":{}},"
     "{\"timestamp\":1,\"event_type\":\"RequestedCallEvent\",\"event\":{}}]}",
     -EPROTO, "event 1 (RequestedCallEvent): comes after SimulationEndsEvent"},
    {"no hosts", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{}}]}",
     -EPROTO, "event 0 (SimulationBeginsEvent): event.computation_host_number: expected an integer in [1, 2^31], got nothing"},
    {"zero hosts", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_host_number\":0}}]}",
     -EPROTO, "event.computation_host_number: expected an integer in [1, 2^31], got a number"},
    {"hosts not an array", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":{}}}]}",
     -EPROTO, "event.computation_hosts: expected an array, got an object"},
    {"host id missing", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":[{\"name\":\"a\"}]}}]}",
     -EPROTO, "event.computation_hosts[].id: expected a host number, got nothing"},
    {"host twice", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":[{\"id\":1},{\"id\":1}]}}]}",
     -EPROTO, "event.computation_hosts: host 1 listed twice"},
    {"host state unknown", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":[{\"id\":0,\"state\":\"MELTING\"}]}}]}",
     -EPROTO, "event.computation_hosts[].state: host 0: unknown state \"MELTING\""},
    {"host count disagrees", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_host_number\":3,\"computation_hosts\":[{\"id\":0}]}}]}",
     -EPROTO, "event.computation_host_number: a number for 1 computation_hosts"},
    {"bad sleep_pstates", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":[{\"id\":0,\"properties\":[{\"key\":\"sleep_pstates\",\"value\":\"1:2\"}]}]}}]}",
     -EPROTO, "event.computation_hosts[].properties.sleep_pstates: machine 0: expected sleep:off:on pstate triplets"},
    {"pstates disagree", NULL,
     "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\",\"event\":{\"computation_hosts\":[{\"id\":0,\"properties\":[{\"key\":\"sleep_pstates\",\"value\":\"1:2:3\"}]},{\"id\":1,\"properties\":[{\"key\":\"sleep_pstates\",\"value\":\"4:5:6\"}]}]}}]}",
     -EINVAL, "machines 0 and 1 have different pstates"},
    {"job_id missing", "B", EV("JobSubmittedEvent", "{\"job\":{\"resource_request\":1}}"), -EPROTO,
     "event 0 (JobSubmittedEvent): event.job_id: expected a string, got nothing"},
    {"job missing", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\"}"), -EPROTO,
     "event.job: expected an object, got nothing"},
    {"resource_request string", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":\"2\"}}"),
     -EPROTO, "event.job.resource_request: expected an integer >= 1, got a string"},
    {"resource_request zero", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":0}}"),
     -EPROTO, "event.job.resource_request: expected an integer >= 1, got a number"},
    {"resource_request fraction", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1.5}}"),
     -EPROTO, "event.job.resource_request: expected an integer >= 1"},
    {"walltime zero", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1,\"walltime\":0}}"),
     -EPROTO, "event.job.walltime: expected a number of seconds > 0, or -1, got a number"},
    {"walltime string", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1,\"walltime\":\"10\"}}"),
     -EPROTO, "event.job.walltime: expected a number of seconds > 0, or -1, got a string"},
    {"submission_time string", "B", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1},\"submission_time\":\"x\"}"),
     -EPROTO, "event.submission_time: expected a number, got a string"},
    {"job submitted twice", "BS", EV("JobSubmittedEvent", "{\"job_id\":\"w0!1\",\"job\":{\"resource_request\":1}}"),
     -EEXIST, "event 0 (JobSubmittedEvent): event.job_id:"},
    {"completed job_id missing", "BS", EV("JobCompletedEvent", "{}"), -EPROTO,
     "event 0 (JobCompletedEvent): event.job_id: expected a string, got nothing"},
    {"completed unknown job", "BS", EV("JobCompletedEvent", "{\"job_id\":\"w0!7\"}"), -ENOENT,
     "event 0 (JobCompletedEvent): event.job_id: unknown job w0!7"},
    {"completed bad state", "BS", EV("JobCompletedEvent", "{\"job_id\":\"w0!1\",\"state\":\"DONE\"}"), -EPROTO,
     "event.state: expected a final job state"},
    {"killed ids missing", "BS", EV("JobsKilledEvent", "{}"), -EPROTO,
     "event 0 (JobsKilledEvent): event.job_ids: expected an array, got nothing"},
    {"killed id a number", "BS", EV("JobsKilledEvent", "{\"job_ids\":[1]}"), -EPROTO,
     "event.job_ids[]: expected a string, got a number"},
    {"killed unknown job", "BS", EV("JobsKilledEvent", "{\"job_ids\":[\"w0!9\"]}"), -ENOENT,
     "event 0 (JobsKilledEvent): event.job_ids: unknown job w0!9"},
    {"pstate hosts missing", "B", EV("HostsPStateChangedEvent", "{\"pstate\":1}"), -EPROTO,
     "event 0 (HostsPStateChangedEvent): event.host_ids: expected an interval set string, got nothing"},
    {"pstate hosts malformed", "B", EV("HostsPStateChangedEvent", "{\"host_ids\":\"a-b\",\"pstate\":1}"), -EPROTO,
     "event 0 (HostsPStateChangedEvent): event.host_ids:"},
    {"pstate missing", "B", EV("HostsPStateChangedEvent", "{\"host_ids\":\"0\"}"), -EPROTO,
     "event.pstate: expected a pstate number, got nothing"},
    {"pstate not switching", "B", EV("HostsPStateChangedEvent", "{\"host_ids\":\"0\",\"pstate\":1}"), -EINVAL,
     "event 0 (HostsPStateChangedEvent): event.host_ids: machine 0 reached pstate 1 but was not switching off"},
    {"onoff bad state", "B", EV("HostsTurnedOnOffEvent", "{\"host_ids\":\"0\",\"state\":2}"), -EPROTO,
     "event.state: expected 0 (on) or 1 (off), got a number"},
    {"host beyond platform", "B", EV("HostsPStateChangedEvent", "{\"host_ids\":\"9\",\"pstate\":0}"), -EINVAL,
     "machine 9 is not a compute resource"},
};

static fbf_bv5_edc *make(void)
{
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    static fbf_power_config power;
    power = fbf_power_config_default();
    fbf_bv5_options o = {.session = {.engine = {.policy = pe->ops,
                                                .reservation_depth = pe->default_depth,
                                                .workers = 1},
                                     .power = &power,
                                     .call_margin = 1e-3},
                         .format = FBF_BV5_FORMAT_JSON};
    fbf_error err = {{0}};
    fbf_bv5_edc *e = fbf_bv5_edc_create(&o, &err);
    if (!e)
        fail_msg("create: %s", err.text);
    return e;
}

static int take(fbf_bv5_edc *e, const char *m, fbf_error *err)
{
    const uint8_t *r;
    size_t n;
    return fbf_bv5_edc_take(e, (const uint8_t *)m, strlen(m), &r, &n, err);
}

static void test_refusals(void **state)
{
    size_t n = sizeof cases / sizeof *cases;
    assert_true(n >= 40);
    int failures = 0;
    for (size_t i = 0; i < n; i++) {
        const bad_case *c = &cases[i];
        fbf_bv5_edc *e = make();
        fbf_error err = {{0}};
        if (c->before && (take(e, BEGINS, &err) != 0 ||
                          (strcmp(c->before, "BS") == 0 && take(e, SUB1, &err) != 0)))
            fail_msg("%s: setup refused: %s", c->name, err.text);
        memset(&err, 0, sizeof err);
        int rc = take(e, c->msg, &err);
        size_t len = 0;
        const uint8_t *stop = fbf_bv5_edc_refusal(e, &len);
        bool ok = rc == c->rc && strstr(err.text, c->want) && !strchr(err.text, '\n') && stop &&
                  strstr((const char *)stop, "ForceSimulationStopEvent");
        if (!ok) {
            fprintf(stderr, "case \"%s\": rc %d (want %d), error \"%s\"\n  want \"%s\"\n",
                    c->name, rc, c->rc, err.text, c->want);
            failures++;
        }
        fbf_bv5_edc_destroy(e);
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_refusals)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
