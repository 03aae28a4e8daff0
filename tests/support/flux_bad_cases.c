/*
 * flux_bad_cases: the table of malformed and out-of-order messages (see
 * flux_bad_cases.h).
 */
#include "support/flux_bad_cases.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "io/flux_codec.h"

#define REQ FBF_FLUX_REQUEST
#define RESP FBF_FLUX_RESPONSE
#define NR FBF_FLUX_F_NORESPONSE
#define ANY FBF_FLUX_NODEID_ANY
#define EPROTO_ 71
#define ALLOC(p) REQ, 0, ANY, 0, FBF_FLUX_ALLOC, p
#define FREE(p) REQ, 0, ANY, 0, FBF_FLUX_FREE, p
#define INSTANT(p) REQ, 0, ANY, 9, FBF_FLUX_INSTANT, p
#define ID_RANGE "[0, 2^64 - 1]"
#define U32_RANGE "[0, 4294967295]"
#define P1 ",\"priority\":16,\"userid\":5588}"

static const fbf_test_flux_bad script[] = {
    {"alloc 3", 0, ALLOC("{\"id\":3" P1), 0, NULL},
    {"instant 0", 0, REQ, 0, ANY, 7, FBF_FLUX_INSTANT, "{\"now\":0}", 0, NULL},
    {"free 3", 0, FREE("{\"id\":3}"), 0, NULL},
    {"alloc 1", 0, ALLOC("{\"id\":1" P1), 0, NULL},
    {"instant 1", 0, REQ, 0, ANY, 7, FBF_FLUX_INSTANT, "{\"now\":1}", 0, NULL},
    {"alloc 2", 0, ALLOC("{\"id\":2" P1), 0, NULL},
    {"instant 2", 0, REQ, 0, ANY, 7, FBF_FLUX_INSTANT, "{\"now\":2}", 0, NULL},
};

static const fbf_test_flux_bad cases[] = {
    /* sched.alloc's payload */
    {"alloc id a string", 0, ALLOC("{\"id\":\"4\"" P1), EPROTO_,
     "sched.alloc: id: expected an integer in " ID_RANGE ", got a string"},
    {"alloc id negative", 0, ALLOC("{\"id\":-4" P1), EPROTO_,
     "sched.alloc: id: expected an integer in " ID_RANGE ", got -4"},
    {"alloc id a fraction", 0, ALLOC("{\"id\":4.5" P1), EPROTO_,
     "sched.alloc: id: expected an integer in " ID_RANGE ", got 4.5"},
    {"alloc id an exponent", 0, ALLOC("{\"id\":4e0" P1), EPROTO_,
     "sched.alloc: id: expected an integer in " ID_RANGE ", got 4e0"},
    {"alloc id 2^64", 0, ALLOC("{\"id\":18446744073709551616" P1), EPROTO_,
     "sched.alloc: id: 18446744073709551616 is out of range " ID_RANGE},
    {"alloc id missing", 0, ALLOC("{\"priority\":16,\"userid\":5588}"), EPROTO_,
     "sched.alloc: id: missing"},
    {"alloc priority missing", 0, ALLOC("{\"id\":4,\"userid\":5588}"), EPROTO_,
     "sched.alloc: priority: missing"},
    {"alloc priority 2^32", 0, ALLOC("{\"id\":4,\"priority\":4294967296,\"userid\":5588}"),
     EPROTO_, "sched.alloc: priority: 4294967296 is out of range " U32_RANGE},
    {"alloc priority a boolean", 0, ALLOC("{\"id\":4,\"priority\":true,\"userid\":5588}"),
     EPROTO_, "sched.alloc: priority: expected an integer in " U32_RANGE ", got a boolean"},
    {"alloc userid null", 0, ALLOC("{\"id\":4,\"priority\":16,\"userid\":null}"), EPROTO_,
     "sched.alloc: userid: expected an integer in " U32_RANGE ", got null"},
    {"alloc t_submit a string", 0, ALLOC("{\"id\":4,\"priority\":16,\"userid\":1,\"t_submit\":"
                                         "\"now\"}"),
     EPROTO_, "sched.alloc: t_submit: expected a number of seconds >= 0, got a string"},
    {"alloc t_submit negative", 0, ALLOC("{\"id\":4,\"priority\":16,\"userid\":1,\"t_submit\":"
                                         "-5}"),
     EPROTO_, "sched.alloc: t_submit: expected a number of seconds >= 0, got a negative number"},
    {"alloc malformed JSON", 0, ALLOC("{\"id\":4,"), EPROTO_,
     "sched.alloc: payload: malformed JSON near byte 7"},
    {"alloc an array", 0, ALLOC("[4,16,5588]"), EPROTO_,
     "sched.alloc: payload: expected a JSON object, got an array"},
    {"alloc bytes after", 0, ALLOC("{\"id\":4" P1 " x"), EPROTO_,
     "sched.alloc: payload: unexpected bytes after the JSON value at byte 37"},
    {"alloc id twice", 0, ALLOC("{\"id\":4,\"id\":5" P1), EPROTO_,
     "sched.alloc: payload: duplicate key \"id\" (one member named twice)"},
    {"alloc a NUL escape", 0, ALLOC("{\"id\":4,\"priority\":16,\"x\":\"a\\u0000b\"}"), EPROTO_,
     "sched.alloc: payload: a string holds \\u0000 (a NUL byte) near byte 28"},
    {"alloc no payload", 0, ALLOC(NULL), EPROTO_,
     "sched.alloc: expected a JSON object as payload, got none"},
    {"alloc matchtag 5", 0, REQ, 0, ANY, 5, FBF_FLUX_ALLOC, "{\"id\":4" P1, EPROTO_,
     "sched.alloc: matchtag 5: RFC 27 matches its requests and responses by job id, with "
     "matchtag 0"},
    /* sched.alloc out of order */
    {"alloc in flight twice", 0, ALLOC("{\"id\":2" P1), 17,
     "sched.alloc: id: job 2: its alloc is pending: RFC 27 allows one alloc in flight per job"},
    {"alloc of a running job", 0, ALLOC("{\"id\":1" P1), 22,
     "sched.alloc: id: job 1: it holds cores: an alloc is for a job in SCHED state"},
    {"alloc of a freed job", 0, ALLOC("{\"id\":3" P1), 22,
     "sched.alloc: id: job 3: it was freed: an alloc is for a job in SCHED state"},
    /* sched.free */
    {"free of an unknown job", 0, FREE("{\"id\":77}"), 2,
     "sched.free: id: unknown job 77: it holds nothing"},
    {"free of a waiting job", 0, FREE("{\"id\":2}"), 22,
     "sched.free: id: job 2 holds nothing: its alloc is pending"},
    {"free of a freed job", 0, FREE("{\"id\":3}"), 22,
     "sched.free: id: job 3 holds nothing: it was freed"},
    {"free id a string", 0, FREE("{\"id\":\"1\"}"), EPROTO_,
     "sched.free: id: expected an integer in " ID_RANGE ", got a string"},
    {"free matchtag 3", 0, REQ, 0, ANY, 3, FBF_FLUX_FREE, "{\"id\":1}", EPROTO_,
     "sched.free: matchtag 3: RFC 27 matches its requests and responses by job id, with "
     "matchtag 0"},
    {"free no payload", 0, FREE(NULL), EPROTO_,
     "sched.free: expected a JSON object as payload, got none"},
    /* sched.cancel, sched.prioritize: never answered, said on stderr */
    {"cancel id a string", 0, REQ, NR, ANY, 0, FBF_FLUX_CANCEL, "{\"id\":\"2\"}", 0,
     "sched.cancel: id: expected an integer in " ID_RANGE ", got a string"},
    {"cancel no payload", 0, REQ, NR, ANY, 0, FBF_FLUX_CANCEL, NULL, 0,
     "sched.cancel: expected a JSON object as payload, got none"},
    {"prioritize jobs an object", 0, REQ, NR, ANY, 0, FBF_FLUX_PRIORITIZE, "{\"jobs\":{}}", 0,
     "sched.prioritize: jobs: expected an array, got an object"},
    {"prioritize a single", 0, REQ, NR, ANY, 0, FBF_FLUX_PRIORITIZE, "{\"jobs\":[[2]]}", 0,
     "sched.prioritize: jobs[0]: expected an [id, priority] pair, got an array of another size"},
    {"prioritize priority -1", 0, REQ, NR, ANY, 0, FBF_FLUX_PRIORITIZE,
     "{\"jobs\":[[2,5],[2,-1]]}", 0,
     "sched.prioritize: jobs[1][1]: expected an integer in " U32_RANGE ", got -1"},
    {"prioritize jobs missing", 0, REQ, NR, ANY, 0, FBF_FLUX_PRIORITIZE, "{}", 0,
     "sched.prioritize: jobs: missing"},
    /* sim.instant */
    {"instant now missing", 0, INSTANT("{}"), EPROTO_, "sim.instant: now: missing"},
    {"instant now a string", 0, INSTANT("{\"now\":\"3\"}"), EPROTO_,
     "sim.instant: now: expected a number of seconds >= 0, got a string"},
    {"instant now negative", 0, INSTANT("{\"now\":-1}"), EPROTO_,
     "sim.instant: now: expected a number of seconds >= 0, got a negative number"},
    {"instant going back", 0, INSTANT("{\"now\":1}"), 22,
     "sim.instant: now: 1 is before the last instant's 2"},
    /* topics and types */
    {"unknown topic", 0, REQ, 0, ANY, 4, "sched.foo", "{}", EPROTO_,
     "unknown request topic \"sched.foo\": fastbf serves sched.alloc, sched.free, sched.cancel, "
     "sched.prioritize and sim.attach, sim.instant, sim.end, and asks job-manager.sched-hello "
     "and job-manager.sched-ready"},
    {"hello as a request", 0, REQ, 0, ANY, 4, FBF_FLUX_HELLO, NULL, EPROTO_,
     "unknown request topic \"job-manager.sched-hello\": fastbf serves sched.alloc, sched.free, "
     "sched.cancel, sched.prioritize and sim.attach, sim.instant, sim.end, and asks "
     "job-manager.sched-hello and job-manager.sched-ready"},
    {"an alloc response to fastbf", 0, RESP, 0, 0, 0, FBF_FLUX_ALLOC, "{\"id\":2,\"type\":0}", 0,
     "unknown response topic \"sched.alloc\": fastbf serves sched.alloc, sched.free, "
     "sched.cancel, sched.prioritize and sim.attach, sim.instant, sim.end, and asks "
     "job-manager.sched-hello and job-manager.sched-ready"},
    {"an event", 0, FBF_FLUX_EVENT, 0, 0, 0, FBF_FLUX_ALLOC, "{}", 0,
     "an event message: fastbf takes requests and responses only"},
    {"a control message", 0, FBF_FLUX_CONTROL, 0, 0, 0, NULL, NULL, 0,
     "a control message: fastbf takes requests and responses only"},
    {"hello answered twice", 0, RESP, 0, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}", 0,
     "job-manager.sched-hello: a response fastbf did not ask for (matchtag 1, none pending)"},
    {"attach twice", 0, REQ, 0, ANY, 6, FBF_FLUX_ATTACH, NULL, 22,
     "sim.attach: the job manager is attached already"},
    {"attach with a payload", 0, REQ, 0, ANY, 6, FBF_FLUX_ATTACH, "{}", EPROTO_,
     "sim.attach: a payload of 2 bytes where none belongs"},
    {"end with a payload", 0, REQ, 0, ANY, 6, FBF_FLUX_END, "{}", EPROTO_,
     "sim.end: a payload of 2 bytes where none belongs"},
    /* RFC 3's frames */
    {"PROTO of 19 bytes", FBF_TEST_RAW_PROTO19, 0, 0, 0, 0, NULL, NULL, 0,
     "PROTO frame (the last): 19 bytes, RFC 3's is 20"},
    {"bad magic", FBF_TEST_RAW_MAGIC, 0, 0, 0, 0, NULL, NULL, 0,
     "PROTO frame: magic 0x8f, RFC 3's is 0x8e"},
    {"bad version", FBF_TEST_RAW_VERSION, 0, 0, 0, 0, NULL, NULL, 0,
     "PROTO frame: version 2, fastbf reads version 1"},
    {"bad type", FBF_TEST_RAW_TYPE, 0, 0, 0, 0, NULL, NULL, 0,
     "PROTO frame: type 0x10 is none of request (0x01), response (0x02), event (0x04), "
     "control (0x08)"},
    {"route flag", FBF_TEST_RAW_ROUTE, 0, 0, 0, 0, NULL, NULL, 0,
     "PROTO frame: flag route (0x08): route frames are not used on this socket"},
    {"flags and frames disagree", FBF_TEST_RAW_NOPAYLOAD, REQ, 0, ANY, 8, FBF_FLUX_ALLOC, NULL,
     EPROTO_, "PROTO frame: flags 0x03 say a topic, a payload, then PROTO (3 frames), the "
              "message has 2"},
    {"a space in the topic", FBF_TEST_RAW_TOPIC, 0, 0, 0, 0, NULL, NULL, 0,
     "topic frame: byte 5 (0x20) is not a topic character ([A-Za-z0-9._-])"},
    {"a NUL inside the payload", FBF_TEST_RAW_NUL, REQ, 0, ANY, 8, FBF_FLUX_ALLOC, NULL, EPROTO_,
     "payload frame: a NUL byte at byte 5 (only a last one is allowed)"},
    {"four frames", FBF_TEST_RAW_4FRAMES, REQ, 0, ANY, 8, FBF_FLUX_ALLOC, NULL, EPROTO_,
     "a message of more than 3 frames: at most a topic, a payload and the PROTO frame (route "
     "frames are not used here)"},
    {"an empty topic", FBF_TEST_RAW_EMPTYTOPIC, 0, 0, 0, 0, NULL, NULL, 0,
     "topic frame: 0 bytes, a topic has 1 to 255"},
};

const fbf_test_flux_bad *fbf_test_flux_bad_script(size_t *n)
{
    *n = sizeof script / sizeof script[0];
    return script;
}

const fbf_test_flux_bad *fbf_test_flux_bad_cases(size_t *n)
{
    *n = sizeof cases / sizeof cases[0];
    return cases;
}

const char fbf_test_flux_bad_after_answer[] =
    "resp sched.free e=0 m=0 {\"id\":1}\n"
    "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":0,\"annotations\":{\"sched\":"
    "{\"resource_summary\":\"rank0/core[0-1]\",\"t_estimate\":null,\"reason_pending\":null}}}\n"
    "resp sim.instant e=0 m=7 {\"now\":3}\n";

static size_t proto(unsigned char *out, uint8_t type, uint8_t flags, uint32_t tag)
{
    fbf_flux_msg m = {.type = type, .flags = flags, .aux1 = ANY, .matchtag = tag};
    fbf_flux_msg_proto(&m, out);
    return FBF_FLUX_PROTO_SIZE;
}

size_t fbf_test_flux_bad_frames(const fbf_test_flux_bad *c, const void **data, size_t *len,
                                unsigned char scratch[4][64])
{
    static const char topic[] = FBF_FLUX_ALLOC, payload[] = "{\"id\":4" P1;
    static const char nul[] = "{\"id\"\0:4}";
    const uint8_t TP = FBF_FLUX_F_TOPIC | FBF_FLUX_F_PAYLOAD;
    size_t n = 0;
    switch (c->raw) {
    case FBF_TEST_RAW_NONE: {
        fbf_flux_msg m = {.type = c->type, .flags = c->flags, .aux1 = c->aux1,
                          .matchtag = c->matchtag, .topic = c->topic,
                          .topic_len = c->topic ? strlen(c->topic) : 0, .payload = c->payload,
                          .payload_len = c->payload ? strlen(c->payload) + 1 : 0};
        m.flags = fbf_flux_msg_flags(&m);
        if (c->topic) {
            data[n] = c->topic;
            len[n++] = m.topic_len;
        }
        if (c->payload) {
            data[n] = c->payload;
            len[n++] = m.payload_len;
        }
        fbf_flux_msg_proto(&m, scratch[0]);
        data[n] = scratch[0];
        len[n++] = FBF_FLUX_PROTO_SIZE;
        return n;
    }
    case FBF_TEST_RAW_TOPIC:
        data[n] = "sched alloc";
        len[n++] = 11;
        break;
    case FBF_TEST_RAW_EMPTYTOPIC:
        data[n] = "";
        len[n++] = 0;
        break;
    default:
        data[n] = topic;
        len[n++] = sizeof topic - 1;
        break;
    }
    unsigned char *p = scratch[0];
    switch (c->raw) {
    case FBF_TEST_RAW_PROTO19:
        proto(p, REQ, FBF_FLUX_F_TOPIC, 8);
        data[n] = p;
        len[n++] = 19;
        return n;
    case FBF_TEST_RAW_NOPAYLOAD:
        proto(p, REQ, TP, 8);
        break;
    case FBF_TEST_RAW_NUL:
        data[n] = nul;
        len[n++] = sizeof nul; /* the inner NUL and the last one */
        proto(p, REQ, TP, 8);
        break;
    case FBF_TEST_RAW_4FRAMES:
        data[n] = payload;
        len[n++] = sizeof payload;
        data[n] = payload;
        len[n++] = sizeof payload;
        proto(p, REQ, TP, 8);
        break;
    default:
        proto(p, REQ, FBF_FLUX_F_TOPIC, 8);
        if (c->raw == FBF_TEST_RAW_MAGIC)
            p[0] = 0x8f;
        if (c->raw == FBF_TEST_RAW_VERSION)
            p[1] = 2;
        if (c->raw == FBF_TEST_RAW_TYPE)
            p[2] = 0x10;
        if (c->raw == FBF_TEST_RAW_ROUTE)
            p[3] |= FBF_FLUX_F_ROUTE;
        break;
    }
    data[n] = p;
    len[n++] = FBF_FLUX_PROTO_SIZE;
    return n;
}

void fbf_test_flux_bad_setup(fbf_test_flux *t)
{
    fbf_test_flux_jobspec(t, 1, 4, 100);
    fbf_test_flux_jobspec(t, 2, 2, 10);
    fbf_test_flux_jobspec(t, 3, 1, 10);
    fbf_test_flux_jobspec(t, 4, 1, 10);
    for (size_t i = 0; i < sizeof script / sizeof script[0]; i++)
        fbf_test_flux_bad_send(t, &script[i]);
    assert_string_equal(t->out,
                        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":1,\"annotations\":{\"sched\":"
                        "{\"t_estimate\":101,\"reason_pending\":\"insufficient resources: "
                        "reserved at its t_estimate\"}}}\n"
                        "resp sim.instant e=0 m=7 {\"now\":2}\n");
}

void fbf_test_flux_bad_send(fbf_test_flux *t, const fbf_test_flux_bad *c)
{
    const void *data[4];
    size_t len[4];
    unsigned char scratch[4][64];
    size_t n = fbf_test_flux_bad_frames(c, data, len, scratch);
    fbf_test_flux_frames(t, data, len, n);
}

void fbf_test_flux_bad_expect(fbf_test_flux *t, const fbf_test_flux_bad *c, const char *answer,
                              const char *refusal)
{
    if (strcmp(refusal, c->text) != 0)
        fail_msg("case \"%s\": refused with\n  \"%s\", want\n  \"%s\"", c->name, refusal,
                 c->text);
    char want[1024] = "";
    if (c->errnum) {
        const char *topic = c->raw == FBF_TEST_RAW_NONE ? c->topic : FBF_FLUX_ALLOC;
        snprintf(want, sizeof want, "resp %s e=%u m=%u %s\n", topic, c->errnum,
                 c->raw == FBF_TEST_RAW_NONE ? c->matchtag : 8, c->text);
    }
    if (strcmp(answer, want) != 0)
        fail_msg("case \"%s\": answered\n  \"%s\", want\n  \"%s\"", c->name, answer, want);
    if (t && !strstr(fbf_test_flux_warned(t), c->text))
        fail_msg("case \"%s\": no line on stderr says \"%s\"", c->name, c->text);
}

void fbf_test_flux_bad_after(fbf_test_flux *t)
{
    fbf_test_flux_req(t, FBF_FLUX_FREE, "{\"id\":1}");
    assert_string_equal(fbf_test_flux_instant(t, 3), fbf_test_flux_bad_after_answer);
}
