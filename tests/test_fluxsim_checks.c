/*
 * test_fluxsim_checks: fastbf-fluxsim, Flux's job manager, refuses what a
 * scheduler must not do under RFC 27, as flux-core's job manager refuses
 * it or more strictly (tools/fluxsim/check.c's list), each with exit
 * status 1 and the rule broken in its one line. The scheduler is a
 * script of this test: a ROUTER socket on a thread that does the
 * handshake, reads the first instant's requests, writes the R it is told
 * to in Redis, then sends the case's messages; a good script first shows
 * that the job manager accepts a well-behaved scheduler.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "io/flux_msg.h"
#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define J1 "16777216" /* the job manager's ids: (ms of the submit time + 1) << 24, + 1 */
#define J2 "16777217"
#define ROK(core, start, exp)                                                                   \
    "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"0\",\"children\":{\"core\":\"" core   \
    "\"}}],\"starttime\":" start ",\"expiration\":" exp "}}"

typedef struct smsg {
    uint8_t type;
    uint32_t aux1, matchtag;
    const char *topic, *payload;
} smsg;

typedef struct scase {
    const char *name;
    const char *hello;       /* the hello request's payload (NULL: none, as RFC 27) */
    const char *ready;       /* the ready request's payload (NULL: unlimited) */
    const char *R1, *R2;     /* R written for jobs 1 and 2 before the messages */
    smsg msgs[4];
    const char *instant;     /* the answer to sim.instant (NULL: {"now":0}; "" none) */
    const char *want;        /* in the job manager's stderr; NULL: it must succeed */
} scase;

#define SUCC(id) {FBF_FLUX_RESPONSE, 0, 0, FBF_FLUX_ALLOC, "{\"id\":" id ",\"type\":0}"}
#define ALLOC_RESP(p) {FBF_FLUX_RESPONSE, 0, 0, FBF_FLUX_ALLOC, p}

static const scase cases[] = {
    {"a good scheduler", NULL, NULL, ROK("0-1", "0", "20"), ROK("2", "0", "30"),
     {SUCC(J1), SUCC(J2)}, NULL, NULL},
    {"errnum in an alloc response", NULL, NULL, NULL, NULL,
     {{FBF_FLUX_RESPONSE, 12, 0, FBF_FLUX_ALLOC, "out of cores"}}, "",
     "sched.alloc: a response with errnum 12 (Cannot allocate memory): out of cores: RFC 27 "
     "makes it a scheduler fatality, after which the job manager suspends scheduling"},
    {"matchtag in an alloc response", NULL, NULL, NULL, NULL,
     {{FBF_FLUX_RESPONSE, 0, 3, FBF_FLUX_ALLOC, "{\"id\":" J1 ",\"type\":2}"}}, "",
     "sched.alloc: matchtag 3: RFC 27's alloc responses carry matchtag 0"},
    {"no id", NULL, NULL, NULL, NULL, {ALLOC_RESP("{\"type\":2}")}, "",
     "sched.alloc: id: missing (RFC 27: the job id in every alloc and free response)"},
    {"no type", NULL, NULL, NULL, NULL, {ALLOC_RESP("{\"id\":" J1 "}")}, "",
     "sched.alloc: type: missing (job " J1 ")"},
    {"type 4", NULL, NULL, NULL, NULL, {ALLOC_RESP("{\"id\":" J1 ",\"type\":4}")}, "",
     "sched.alloc: type: expected 0 (SUCCESS), 1 (ANNOTATE), 2 (DENY) or 3 (CANCEL), got "
     "another number (job " J1 "; flux-core answers EINVAL)"},
    {"a note in a CANCEL", NULL, NULL, NULL, NULL,
     {ALLOC_RESP("{\"id\":" J1 ",\"type\":3,\"note\":\"no\"}")}, "",
     "sched.alloc: job " J1 ": member \"note\" in a CANCEL response (RFC 27: only the required "
     "keys are allowed in a CANCEL response)"},
    {"an ANNOTATE without annotations", NULL, NULL, NULL, NULL,
     {ALLOC_RESP("{\"id\":" J1 ",\"type\":1}")}, "",
     "sched.alloc: job " J1 ": an ANNOTATE without annotations (flux-core answers EPROTO)"},
    {"annotations a string", NULL, NULL, NULL, NULL,
     {ALLOC_RESP("{\"id\":" J1 ",\"type\":1,\"annotations\":\"x\"}")}, "",
     "sched.alloc: job " J1 ": annotations: expected an object, got a string"},
    {"t_estimate a string", NULL, NULL, NULL, NULL,
     {ALLOC_RESP("{\"id\":" J1 ",\"type\":1,\"annotations\":{\"sched\":{\"t_estimate\":\"5\"}}}")},
     "",
     "sched.alloc: job " J1 ": annotations.sched.t_estimate: expected a number (seconds since "
     "the epoch) or null, got a string"},
    {"a note a number", NULL, NULL, NULL, NULL,
     {ALLOC_RESP("{\"id\":" J1 ",\"type\":2,\"note\":5}")}, "",
     "sched.alloc: job " J1 ": note: expected a string, got a number"},
    {"SUCCESS without R", NULL, NULL, NULL, NULL, {SUCC(J1)}, NULL,
     "job " J1 ": SUCCESS but Redis key \"job.0000.0000.0100.0000.R\" does not exist: RFC 27 "
     "wants R committed before the response"},
    {"R of 3 cores for 2", NULL, NULL, ROK("0-2", "0", "20"), NULL, {SUCC(J1)}, NULL,
     "job " J1 ": R holds 3 cores, its jobspec asks for 2"},
    {"R's starttime", NULL, NULL, ROK("0-1", "5", "25"), NULL, {SUCC(J1)}, NULL,
     "job " J1 ": R's starttime 5 is not the instant's 0"},
    {"R's expiration", NULL, NULL, ROK("0-1", "0", "0"), NULL, {SUCC(J1)}, NULL,
     "job " J1 ": R's expiration 0 is not starttime + the jobspec's duration (20)"},
    {"R beyond the platform", NULL, NULL, ROK("3-4", "0", "20"), NULL, {SUCC(J1)}, NULL,
     "job " J1 ": R (Redis key \"job.0000.0000.0100.0000.R\"): execution.R_lite[0].children."
     "core: core 4, a rank has 4 cores"},
    {"two jobs on one core", NULL, NULL, ROK("0-1", "0", "20"), ROK("1", "0", "30"),
     {SUCC(J1), SUCC(J2)}, NULL,
     "job " J2 ": R's cores (resources 1) include cores another job holds"},
    {"SUCCESS twice", NULL, NULL, ROK("0-1", "0", "20"), NULL, {SUCC(J1), SUCC(J1)}, NULL,
     "sched.alloc: a SUCCESS for job " J1 ", whose alloc is not pending (it holds cores already: "
     "flux-core answers EEXIST to a second SUCCESS)"},
    {"an unknown job", NULL, NULL, NULL, NULL, {ALLOC_RESP("{\"id\":5,\"type\":2}")}, "",
     "sched.alloc: a DENY for job 5, whose alloc is not pending (no such job)"},
    {"sim.instant's now", NULL, NULL, NULL, NULL, {{0}}, "{\"now\":1}",
     "sim.instant: now: expected this instant's 0"},
    {"a wake in the past", NULL, NULL, NULL, NULL, {{0}}, "{\"now\":0,\"wake\":0}",
     "sim.instant: wake: expected a time after now (0)"},
    {"ready's mode", NULL, "{\"mode\":\"limited\",\"limit\":3}", NULL, NULL, {{0}}, "",
     "job-manager.sched-ready: member \"limit\": RFC 27's ready payload has one key, mode"},
    {"ready's mode limited", NULL, "{\"mode\":\"limited\"}", NULL, NULL, {{0}}, "",
     "job-manager.sched-ready: mode \"limited\": RFC 27's modes are single and unlimited "
     "(flux-core answers EPROTO)"},
    {"a payload in hello", "{}", NULL, NULL, NULL, {{0}}, "",
     "job-manager.sched-hello: RFC 27 sends an empty request, got a payload of 2 bytes"},
    {"a request of the scheduler's", NULL, NULL, NULL, NULL,
     {{FBF_FLUX_REQUEST, 0, 0, FBF_FLUX_ALLOC, "{}"}}, "",
     "an unexpected request \"sched.alloc\" (matchtag 0): the scheduler sends alloc, free and "
     "sim.instant responses, and disconnect"},
    {"disconnect", NULL, NULL, NULL, NULL,
     {{FBF_FLUX_REQUEST, 0, 0, FBF_FLUX_DISCONNECT, NULL}}, "",
     "the scheduler disconnected (job-manager.disconnect): RFC 27: the job manager suspends "
     "scheduling"},
};

/* ---- the scripted scheduler ---- */

typedef struct script {
    const scase *c;
    char endpoint[128];
    void *ctx, *sock;
    unsigned char peer[256];
    size_t peer_len;
    char fault[256];
} script;

static int send_to(script *s, const smsg *m, uint8_t flags)
{
    fbf_flux_msg f = {.type = m->type, .flags = flags, .aux1 = m->aux1, .matchtag = m->matchtag,
                      .topic = m->topic, .topic_len = strlen(m->topic), .payload = m->payload,
                      .payload_len = m->payload ? strlen(m->payload) + 1 : 0};
    f.flags = fbf_flux_msg_flags(&f);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&f, proto);
    zmq_send(s->sock, s->peer, s->peer_len, ZMQ_SNDMORE);
    zmq_send(s->sock, m->topic, f.topic_len, ZMQ_SNDMORE);
    if (m->payload)
        zmq_send(s->sock, m->payload, f.payload_len, ZMQ_SNDMORE);
    return zmq_send(s->sock, proto, sizeof proto, 0);
}

/* The next message's topic and matchtag; false on a timeout. */
static bool recv_from(script *s, char *topic, size_t cap, uint32_t *tag)
{
    zmq_msg_t f[5];
    size_t n = 0;
    for (;;) {
        zmq_msg_init(&f[n < 4 ? n : 4]);
        if (zmq_msg_recv(&f[n < 4 ? n : 4], s->sock, 0) < 0) {
            for (size_t i = 0; i <= (n < 4 ? n : 4); i++)
                zmq_msg_close(&f[i]);
            return false;
        }
        bool more = zmq_msg_more(&f[n < 4 ? n : 4]);
        n++;
        if (!more)
            break;
    }
    size_t kept = n < 5 ? n : 5;
    s->peer_len = zmq_msg_size(&f[0]);
    memcpy(s->peer, zmq_msg_data(&f[0]), s->peer_len);
    snprintf(topic, cap, "%.*s", (int)zmq_msg_size(&f[1]), (char *)zmq_msg_data(&f[1]));
    const unsigned char *p = zmq_msg_data(&f[kept - 1]);
    *tag = (uint32_t)p[16] << 24 | (uint32_t)p[17] << 16 | (uint32_t)p[18] << 8 | p[19];
    for (size_t i = 0; i < kept; i++)
        zmq_msg_close(&f[i]);
    return true;
}

static void put_R(const char *id, const char *R)
{
    char key[64];
    fbf_flux_key(key, sizeof key, strtoull(id, NULL, 10), "R");
    fbf_test_redis_set(fbf_test_redis_shared(), key, R);
}

static void *run_script(void *arg)
{
    script *s = arg;
    const scase *c = s->c;
    char topic[200];
    uint32_t tag;
#define EXPECT(t)                                                                                 \
    do {                                                                                          \
        if (!recv_from(s, topic, sizeof topic, &tag) || strcmp(topic, t) != 0) {                  \
            snprintf(s->fault, sizeof s->fault, "script: wanted %s, got \"%s\"", t, topic);       \
            return NULL;                                                                          \
        }                                                                                         \
    } while (0)
    EXPECT(FBF_FLUX_ATTACH);
    send_to(s, &(smsg){FBF_FLUX_REQUEST, FBF_FLUX_NODEID_ANY, 1, FBF_FLUX_HELLO, c->hello}, 0);
    if (c->hello)
        return NULL;
    EXPECT(FBF_FLUX_HELLO);
    send_to(s, &(smsg){FBF_FLUX_REQUEST, FBF_FLUX_NODEID_ANY, 2, FBF_FLUX_READY,
                       c->ready ? c->ready : "{\"mode\":\"unlimited\"}"},
            0);
    if (c->ready)
        return NULL;
    EXPECT(FBF_FLUX_READY);
    do {
        if (!recv_from(s, topic, sizeof topic, &tag)) {
            snprintf(s->fault, sizeof s->fault, "script: no sim.instant");
            return NULL;
        }
    } while (strcmp(topic, FBF_FLUX_INSTANT) != 0);
    if (c->R1)
        put_R(J1, c->R1);
    if (c->R2)
        put_R(J2, c->R2);
    for (size_t i = 0; i < 4 && c->msgs[i].topic; i++)
        send_to(s, &c->msgs[i], 0);
    if (!c->instant || *c->instant)
        send_to(s,
                &(smsg){FBF_FLUX_RESPONSE, 0, tag, FBF_FLUX_INSTANT,
                        c->instant ? c->instant : "{\"now\":0}"},
                0);
    if (!c->want) { /* a good run goes on: its ends (in start order), then sim.end */
        for (int frees = 0;;) {
            if (!recv_from(s, topic, sizeof topic, &tag))
                return NULL;
            if (strcmp(topic, FBF_FLUX_FREE) == 0) {
                send_to(s, &(smsg){FBF_FLUX_RESPONSE, 0, 0, FBF_FLUX_FREE,
                                   frees++ ? "{\"id\":" J2 "}" : "{\"id\":" J1 "}"},
                        0);
            } else if (strcmp(topic, FBF_FLUX_INSTANT) == 0) {
                char now[64];
                snprintf(now, sizeof now, "{\"now\":%s}", "10");
                send_to(s, &(smsg){FBF_FLUX_RESPONSE, 0, tag, FBF_FLUX_INSTANT, now}, 0);
            } else if (strcmp(topic, FBF_FLUX_END) == 0) {
                send_to(s, &(smsg){FBF_FLUX_RESPONSE, 0, tag, FBF_FLUX_END, NULL}, 0);
                return NULL;
            }
        }
    }
    return NULL;
}

static const char *workload(void)
{
    /* Two jobs at 0: 2 cores for 10 s (walltime 20), 1 core for 10 s (30). */
    return fbf_test_tmp_write("w.swf", "1 0 0 10 2 -1 -1 2 20 -1 1 1 1 1 1 -1 -1 -1\n"
                                       "2 0 0 10 1 -1 -1 1 30 -1 1 1 1 1 1 -1 -1 -1\n");
}

static void run_case(const scase *c)
{
    script s = {.c = c};
    snprintf(s.endpoint, sizeof s.endpoint, "ipc://%s", fbf_test_tmp_path("sched"));
    s.ctx = zmq_ctx_new();
    s.sock = zmq_socket(s.ctx, ZMQ_ROUTER);
    int linger = 0, timeout = 15000;
    zmq_setsockopt(s.sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s.sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    assert_int_equal(zmq_bind(s.sock, s.endpoint), 0);
    pthread_t th;
    pthread_create(&th, NULL, run_script, &s);
    char path[256];
    snprintf(path, sizeof path, "%s/fastbf-fluxsim",
             getenv("FBF_BUILD_DIR") ? getenv("FBF_BUILD_DIR") : FBF_BUILD_DIR);
    const char *args[] = {workload(), "--endpoint", s.endpoint, "--redis",
                          fbf_test_redis_addr(fbf_test_redis_shared()), "--ranks", "1",
                          "--cores", "4", "--timeout", "10", "--quiet", NULL};
    char *err = NULL;
    int rc = fbf_test_run_program(path, args, 60000, NULL, &err);
    pthread_join(th, NULL);
    zmq_close(s.sock);
    zmq_ctx_term(s.ctx);
    unlink(fbf_test_tmp_path("sched"));
    if (s.fault[0])
        fail_msg("case \"%s\": %s (job manager: %s)", c->name, s.fault, err);
    if (!c->want) {
        if (rc != 0)
            fail_msg("case \"%s\": exit %d: %s", c->name, rc, err);
    } else if (rc != 1 || !strstr(err, c->want)) {
        fail_msg("case \"%s\": exit %d, stderr\n  %s\nwant exit 1 and\n  %s", c->name, rc, err,
                 c->want);
    }
    free(err);
}

static void each_case(void **state)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fbf_test_redis_flush(fbf_test_redis_shared());
        run_case(&cases[i]);
    }
}

static int setup(void **state)
{
    if (fbf_test_redis_group_setup(state) != 0)
        return -1;
    return fbf_test_tmpdir_setup(state);
}

static int teardown(void **state)
{
    fbf_test_tmpdir_teardown(state);
    return fbf_test_redis_group_teardown(state);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {cmocka_unit_test(each_case)};
    return cmocka_run_group_tests(tests, setup, teardown);
}
