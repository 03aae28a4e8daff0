/*
 * test_bv5_binary_errors: broken batprotocol binary messages given to
 * fastbf's EDC (io/bv5_edc.h in the binary format), each refused with its
 * line and a ForceSimulationStopEvent ready: truncated buffers, offsets
 * out of the buffer or misaligned, strings without their end, members the
 * schema requires left out, an event labelled with a type its table is
 * not, no type, a type beyond the schema, events of the EDC's side,
 * SimulationBeginsEvent missing or twice, events after SimulationEndsEvent,
 * times going back or after now, values out of range, unknown jobs. Where
 * the JSON reader can say the very same thing (every check of order and
 * state), the message is also turned into JSON by flatbuffers' text
 * generator and must be refused by the JSON format with the same line.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_edc.h"
#include "io/bv5_fb.h"
#include "policies/registry.h"
#include "support/bv5_fb_kit.h"
#include "support/testkit.h"

static fbf_test_fbmsg *msg;

/* ---------- broken messages ---------- */

static fbf_bv5_edc *edc_new(bool binary)
{
    static fbf_power_config power;
    power = fbf_power_config_default();
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    fbf_bv5_options o = {.session = {.engine = {.workers = 1, .policy = pe->ops,
                                                .reservation_depth = pe->default_depth},
                                     .power = &power,
                                     .call_margin = 1e-3,
                                     .call_per_event = 2e-5},
                         .format = binary ? FBF_BV5_FORMAT_BINARY : FBF_BV5_FORMAT_JSON};
    fbf_error err;
    fbf_bv5_edc *e = fbf_bv5_edc_create(&o, &err);
    if (!e)
        fail_msg("%s", err.text);
    return e;
}

/* What a case breaks: patches of the bytes of a good submission, or the
 * kit's events. */
enum patch { NONE, EMPTY, SHORT, HALF, LAST, ROOT_FAR, ROOT_ODD, VTABLE, STRLEN, NO_NUL, JSON, FF };

typedef struct bad_case {
    int id;
    bool begun;     /* SimulationBeginsEvent was received before */
    enum patch patch;
    bool same_json; /* JSON's reader says the very same */
    const char *want;
} bad_case;

#define NOVERIFY "flatbuffers: the message does not verify"

static const bad_case cases[] = {
    {0, true, EMPTY, false, NOVERIFY},
    {1, true, SHORT, false, NOVERIFY},
    {2, true, HALF, false, NOVERIFY},
    {3, true, LAST, false, NOVERIFY},
    {4, true, ROOT_FAR, false, NOVERIFY},
    {5, true, ROOT_ODD, false, NOVERIFY},
    {6, true, VTABLE, false, NOVERIFY},
    {7, true, STRLEN, false, NOVERIFY},
    {8, true, NO_NUL, false, NOVERIFY},
    {9, true, JSON, false, NOVERIFY},
    {10, true, FF, false, NOVERIFY},
    {11, true, NONE, false, NOVERIFY},  /* JobSubmittedEvent without job_id */
    {12, true, NONE, false, NOVERIFY},  /* without job */
    {13, true, NONE, false, NOVERIFY},  /* JobCompletedEvent without job_id */
    {14, false, NONE, false, NOVERIFY}, /* begins without its execution context */
    {15, false, NONE, false, NOVERIFY}, /* a host without a name */
    {16, true, NONE, false, NOVERIFY},  /* an empty table labelled JobSubmittedEvent */
    {17, true, NONE, false, "event 0: event_type: expected an event type, got NONE"},
    {18, true, NONE, false, "event 0 (#99): event_type: unknown event type"},
    {19, true, NONE, true, "event 0 (CreateProbeEvent): event_type: unknown event type"},
    {20, true, NONE, true, "event 0 (ProbeDataEmittedEvent): event_type: unknown event type"},
#define WAY ": event_type: this event goes from the decision component to Batsim, not the other way"
    {21, true, NONE, true, "event 0 (FinishRegistrationEvent)" WAY},
    {22, true, NONE, true, "event 0 (ForceSimulationStopEvent)" WAY},
    {23, true, NONE, true, "event 0 (ChangeHostsPStateEvent)" WAY},
    {24, true, NONE, true, "event 0 (TurnOnOffHostsEvent)" WAY},
    {25, true, NONE, true, "event 0 (RegisterProfileEvent)" WAY},
    {26, true, NONE, true, "event 0 (RejectJobEvent)" WAY},      /* a call relabelled */
    {27, true, NONE, true, "event 0 (StopCallMeLaterEvent)" WAY},
    {28, false, NONE, true, "event 0 (JobSubmittedEvent): received before SimulationBeginsEvent"},
    {29, false, NONE, true, "message: the first message must hold SimulationBeginsEvent"},
    {30, true, NONE, true, "event 1 (SimulationBeginsEvent): the simulation already began"},
    {31, true, NONE, true, "event 1 (JobSubmittedEvent): comes after SimulationEndsEvent"},
    {32, true, NONE, true, "event 0 (JobSubmittedEvent): timestamp: 6.000000 is after now 5.000000"},
    {33, true, NONE, true, "event 1 (RequestedCallEvent): timestamp: 1.000000 is before the "
                           "previous event's 2.000000"},
    {34, true, NONE, false, "message: now: expected a finite number, got nan"},
    {35, true, NONE, false, "message: now: expected a finite number, got inf"},
    {36, true, NONE, false, "event 0 (JobSubmittedEvent): timestamp: expected a finite number, "
                            "got -inf"},
    {37, true, NONE, false, "message: events: expected an array, got nothing"},
    {38, true, NONE, false, "event 0 (JobSubmittedEvent): event: expected an object, got nothing"},
    {39, true, NONE, false, "event 0 (JobSubmittedEvent): event.job.resource_request: expected "
                            "an integer >= 1, got 0"},
    {40, true, NONE, false, "event 0 (JobSubmittedEvent): event.job.resource_request: expected "
                            "an integer >= 1, got 2147483648"},
    {41, true, NONE, false, "event 0 (JobSubmittedEvent): event.job.walltime: expected a number "
                            "of seconds > 0, or -1, got 0"},
    {42, true, NONE, false, "event 0 (JobSubmittedEvent): event.job.walltime: expected a number "
                            "of seconds > 0, or -1, got -5"},
    {43, true, NONE, false, "event 0 (JobSubmittedEvent): event.submission_time: expected a "
                            "number, got inf"},
    {44, true, NONE, false, "event 0 (JobCompletedEvent): event.state: expected a final job "
                            "state (COMPLETED_SUCCESSFULLY...), got 7"},
    {45, false, NONE, false, "event 0 (SimulationBeginsEvent): event.computation_hosts[].state: "
                             "host 0: unknown state 9 (IDLE, COMPUTING, SLEEPING, SWITCHING_ON, "
                             "SWITCHING_OFF)"},
    {46, false, NONE, false, "event 0 (SimulationBeginsEvent): event.computation_host_number: "
                             "expected an integer in [1, 2^31], got 0"},
    {47, true, NONE, false, "event 0 (HostsPStateChangedEvent): event.host_ids: expected an "
                            "interval set string, got nothing"},
    {48, true, NONE, false, "event 0 (HostsTurnedOnOffEvent): event.state: expected 0 (on) or 1 "
                           "(off), got 2"},
    {49, true, NONE, true, "event 0 (JobSubmittedEvent): event.job_id: job w0!1 submitted twice"},
    {50, true, NONE, true, "event 0 (JobCompletedEvent): event.job_id: unknown job w0!7"},
    {51, true, NONE, true, "event 0 (JobsKilledEvent): event.job_ids: unknown job w0!8"},
};

static void build(const bad_case *c)
{
    fbf_test_fbmsg *m = msg;
    double now = c->id == 34 ? NAN : c->id == 35 ? INFINITY : 5;
    fbf_test_fbmsg_start(m, now);
    int rel = -1;
    switch (c->id) {
    case 11: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_JOB_ID); break;
    case 12: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_JOB); break;
    case 13: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_JOB_ID); fbf_test_fbmsg_completed(m, 5, "w0!1", 0); return;
    case 14: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_CONTEXT); fbf_test_fbmsg_begins(m, 0, 4, 4, NULL, NULL); return;
    case 15: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_NAME); fbf_test_fbmsg_begins(m, 0, 4, 4, NULL, NULL); return;
    case 16: rel = fbf_test_fb_event_type("JobSubmittedEvent"); break;
    case 17: rel = 0; break;
    case 18: rel = 99; break;
    case 19: fbf_test_fbmsg_empty(m, 5, "CreateProbeEvent"); return;
    case 20: fbf_test_fbmsg_empty(m, 5, "ProbeDataEmittedEvent"); return;
    case 21: fbf_test_fbmsg_empty(m, 5, "FinishRegistrationEvent"); return;
    case 22: fbf_test_fbmsg_empty(m, 5, "ForceSimulationStopEvent"); return;
    case 23: fbf_test_fbmsg_empty(m, 5, "ChangeHostsPStateEvent"); return;
    case 24: fbf_test_fbmsg_empty(m, 5, "TurnOnOffHostsEvent"); return;
    case 25: fbf_test_fbmsg_empty(m, 5, "RegisterProfileEvent"); return;
    case 26: case 27:
        fbf_test_fbmsg_relabel(m, fbf_test_fb_event_type(c->id == 26 ? "RejectJobEvent" : "StopCallMeLaterEvent"));
        fbf_test_fbmsg_called(m, 5, "x");
        return;
    case 29: return;
    case 30: fbf_test_fbmsg_called(m, 5, "x"); fbf_test_fbmsg_begins(m, 5, 4, 4, NULL, NULL); return;
    case 31: fbf_test_fbmsg_empty(m, 5, "SimulationEndsEvent"); break;
    case 32: fbf_test_fbmsg_submitted(m, 6, "w0!1", 1, 10, 6); return;
    case 33: fbf_test_fbmsg_called(m, 2, "x"); fbf_test_fbmsg_called(m, 1, "x"); return;
    case 36: fbf_test_fbmsg_submitted(m, -INFINITY, "w0!1", 1, 10, 5); return;
    case 37: fbf_test_fbmsg_finish(m, true, &(size_t){0}); return;
    case 38: fbf_test_fbmsg_omit(m, FBF_TEST_FB_NO_TABLE); break;
    case 39: case 40: fbf_test_fbmsg_submitted(m, 5, "w0!1", c->id == 39 ? 0 : 2147483648u, 10, 5); return;
    case 41: case 42: fbf_test_fbmsg_submitted(m, 5, "w0!1", 1, c->id == 41 ? 0 : -5, 5); return;
    case 43: fbf_test_fbmsg_submitted(m, 5, "w0!1", 1, 10, INFINITY); return;
    case 44: fbf_test_fbmsg_completed(m, 5, "w0!1", 7); return;
    case 45: fbf_test_fbmsg_begins(m, 0, 4, 4, (const int[]){9, 1, 1, 1}, NULL); return;
    case 46: fbf_test_fbmsg_begins(m, 0, 0, 0, NULL, NULL); return;
    case 47: fbf_test_fbmsg_pstate(m, 5, NULL, 1); return;
    case 48: fbf_test_fbmsg_onoff(m, 5, "0-1", 2); return;
    case 49: fbf_test_fbmsg_submitted(m, 5, "w0!1", 1, 10, 5); return;
    case 50: fbf_test_fbmsg_completed(m, 5, "w0!7", 0); return;
    case 51: fbf_test_fbmsg_killed(m, 5, (const char *const[]){"w0!8"}, 1); return;
    default: break;
    }
    if (rel >= 0 || c->id == 16)
        fbf_test_fbmsg_relabel(m, rel);
    if (c->id == 16)
        fbf_test_fbmsg_empty(m, 5, "SimulationEndsEvent");
    else
        fbf_test_fbmsg_submitted(m, 5, "w0!1", 1, 10, 5);
}

/* The kit's message, its bytes broken as the case says, in buf. */
static size_t broken(const bad_case *c, uint64_t *buf, size_t cap)
{
    build(c);
    size_t len;
    const uint8_t *m = fbf_test_fbmsg_finish(msg, c->id == 37, &len);
    assert_true(len <= cap);
    uint8_t *b = (uint8_t *)buf;
    memcpy(b, m, len);
    uint32_t root;
    memcpy(&root, b, 4);
    uint8_t *name = memmem(b, len, "w0!1", 4);
    switch (c->patch) {
    case EMPTY: return 0;
    case SHORT: return 3;
    case HALF: return len / 2;
    case LAST: return (size_t)(name - b) + 2; /* inside the job id */
    case ROOT_FAR: memcpy(b, &(uint32_t){0xffffff00u}, 4); break;
    case ROOT_ODD: memcpy(b, &(uint32_t){root + 1}, 4); break;
    case VTABLE: memcpy(b + root, &(int32_t){0x7ffffff0}, 4); break;
    case STRLEN: memcpy(name - 4, &(uint32_t){0x7fffffffu}, 4); break;
    case NO_NUL: name[4] = 'x'; break;
    case JSON: strcpy((char *)b, "{\"now\":5,\"events\":[]}"); return strlen((char *)b);
    case FF: memset(b, 0xff, 64); return 64;
    case NONE: break;
    }
    return len;
}

static int take_in(fbf_bv5_edc *e, const uint8_t *m, size_t len, fbf_error *err)
{
    const uint8_t *reply;
    size_t n;
    return fbf_bv5_edc_take(e, m, len, &reply, &n, err);
}

static void test_malformed(void **state)
{
    static uint64_t buf[8192], begins[256];
    fbf_bv5_fb *conv = fbf_bv5_fb_create();
    fbf_test_fbmsg_start(msg, 0);
    fbf_test_fbmsg_begins(msg, 0, 4, 4, NULL, NULL);
    size_t blen;
    const uint8_t *bm = fbf_test_fbmsg_finish(msg, false, &blen);
    memcpy(begins, bm, blen);
    const char *bjson;
    size_t bjlen;
    fbf_error err;
    if (fbf_bv5_fb_to_json(conv, (uint8_t *)begins, blen, &bjson, &bjlen, &err) < 0)
        fail_msg("%s", err.text);
    char *begins_json = strdup(bjson);
    assert_true(sizeof cases / sizeof *cases >= 40);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const bad_case *c = &cases[i];
        size_t len = broken(c, buf, sizeof buf);
        for (int json = 0; json <= (int)c->same_json; json++) {
            fbf_bv5_edc *e = edc_new(!json);
            const uint8_t *m = (const uint8_t *)buf;
            if (c->begun)
                assert_int_equal(json ? take_in(e, (const uint8_t *)begins_json,
                                                strlen(begins_json), &err)
                                      : take_in(e, (const uint8_t *)begins, blen, &err),
                                 0);
            if (c->id == 49) {
                /* the job exists already */
                fbf_test_fbmsg_start(msg, 4);
                fbf_test_fbmsg_submitted(msg, 4, "w0!1", 1, 10, 4);
                size_t n;
                const uint8_t *s = fbf_test_fbmsg_finish(msg, false, &n);
                const char *sj;
                assert_int_equal(fbf_bv5_fb_to_json(conv, s, n, &sj, &n, &err), 0);
                char *copy = strdup(sj);
                fbf_test_fbmsg_start(msg, 4);
                fbf_test_fbmsg_submitted(msg, 4, "w0!1", 1, 10, 4);
                s = fbf_test_fbmsg_finish(msg, false, &n);
                assert_int_equal(json ? take_in(e, (uint8_t *)copy, strlen(copy), &err)
                                      : take_in(e, s, n, &err),
                                 0);
                free(copy);
            }
            const char *text;
            if (json) { /* converted last: the converter keeps one text */
                assert_int_equal(fbf_bv5_fb_to_json(conv, m, len, &text, &len, &err), 0);
                m = (const uint8_t *)text;
            }
            int rc = take_in(e, m, len, &err);
            if (rc >= 0 || strcmp(err.text, c->want) != 0)
                fail_msg("case %d (%s): rc %d, \"%s\"", c->id, json ? "json" : "binary", rc,
                         rc < 0 ? err.text : "");
            size_t n;
            assert_non_null(fbf_bv5_edc_refusal(e, &n));
            fbf_bv5_edc_destroy(e);
            if (json)
                len = broken(c, buf, sizeof buf);
        }
    }
    free(begins_json);
    fbf_bv5_fb_destroy(conv);
}

int main(void)
{
    fbf_test_filter_from_env();
    msg = fbf_test_fbmsg_new();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_malformed),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    fbf_test_fbmsg_free(msg);
    return rc;
}
