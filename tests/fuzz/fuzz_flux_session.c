/*
 * fuzz_flux_session: RFC 27 messages from a job manager to fastbf's
 * scheduler session (fbf_flux_session), job data in memory.
 *
 * Feeds: byte 0 picks the options: the policy (bits 0-1: fcfs, easy,
 * conservative, conservative), single mode (bit 2), no handshake first
 * (bit 3: otherwise sim.attach, hello answered with no job, ready
 * answered), the platform (bits 4-5: 1x1, 1x4, 3x2, 2x8 ranks x cores).
 * The rest, split on 0x01, is one message each. A message whose first
 * byte has bit 7 set is raw: the rest, split on 0x02, is its frames,
 * every byte of them XORed with 0x80 (so that a PROTO frame's 0x01 and
 * 0x02 fit; frames cannot hold 0x81 or 0x82).
 * Otherwise that byte's bits 0-3 pick the topic (sched.alloc, none,
 * sched.free, sched.cancel, sched.prioritize, sim.attach, sim.instant,
 * sim.end, job-manager.sched-hello, job-manager.sched-ready,
 * job-manager.disconnect, sched.foo, then none: 1 is the separator),
 * bits 4-5 the type (request, response, event, control), bit 6 the
 * noresponse flag; the next byte's bits 0-6 XOR 0x10 are the matchtag
 * (0x10 for 0, 0x11 for 1), its bit 7 makes a response an error (errnum
 * the matchtag), the rest is the payload (none when empty). Job ids 0 to 15 have
 * jobspecs of 1 to 5 cores and 0 (none), 50 or 100 s; ids 100 to 103
 * have R on core 0, 1, 0-1 or rank 1.
 *
 * Asserts: a receive returns 0, FBF_FLUX_ENDED, or a fatal error with a
 * message, after which nothing more is fed; each message refused adds
 * one refusal with a text; every answer is a request or a response with a
 * topic of RFC 27 or the simulation's; an alloc or free response with
 * errnum 0 has matchtag 0 and a JSON object payload with an integer id,
 * an alloc response's type is 0 to 3, and a CANCEL holds id and type
 * only; an error response carries its text; the answer to sim.instant
 * comes last; the engine never holds more cores than the platform has.
 * FBF_FUZZ_VERBOSE=1 prints each answer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "io/flux_kvs.h"
#include "io/flux_session.h"
#include "io/jbuf.h"
#include "policies/registry.h"

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_flux_session: %s\n", what);
        abort();
    }
}

#define NTOPICS 12
static const char *const topics[NTOPICS] = {
    FBF_FLUX_ALLOC, NULL, FBF_FLUX_FREE, FBF_FLUX_CANCEL, FBF_FLUX_PRIORITIZE, FBF_FLUX_ATTACH,
    FBF_FLUX_INSTANT, FBF_FLUX_END, FBF_FLUX_HELLO, FBF_FLUX_READY, FBF_FLUX_DISCONNECT,
    "sched.foo",
};

static bool known_topic(const fbf_flux_msg *m)
{
    for (size_t i = 0; i < NTOPICS - 1; i++)
        if (topics[i] && fbf_flux_msg_is(m, topics[i]))
            return true;
    return false;
}

static void check_answer(const fbf_flux_msg *m, bool last, bool verbose)
{
    if (verbose)
        fprintf(stderr, "  -> %s %.*s e=%u m=%u %.*s\n", m->type == 1 ? "req" : "resp",
                (int)m->topic_len, m->topic, m->aux1, m->matchtag,
                m->payload ? (int)m->payload_len : 1, m->payload ? m->payload : "-");
    check(m->type == FBF_FLUX_REQUEST || m->type == FBF_FLUX_RESPONSE, "an answer's type");
    check(m->topic && m->topic_len > 0, "an answer without a topic");
    if (m->type == FBF_FLUX_RESPONSE && m->aux1) {
        check(m->payload && m->payload_len > 1, "an error response without its text");
        return;
    }
    check(m->type == FBF_FLUX_REQUEST || known_topic(m), "a response's topic");
    if (fbf_flux_msg_is(m, FBF_FLUX_INSTANT))
        check(last, "the answer to sim.instant is not last");
    bool alloc = fbf_flux_msg_is(m, FBF_FLUX_ALLOC), fr = fbf_flux_msg_is(m, FBF_FLUX_FREE);
    if (m->type != FBF_FLUX_RESPONSE || (!alloc && !fr))
        return;
    check(m->matchtag == 0, "an alloc or free response with a matchtag");
    check(m->payload != NULL, "an alloc or free response without payload");
    cJSON *o = cJSON_ParseWithLength(m->payload, m->payload_len);
    check(cJSON_IsObject(o), "an alloc or free response that is not a JSON object");
    check(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(o, "id")), "a response without id");
    if (alloc) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
        check(cJSON_IsNumber(t) && t->valuedouble >= 0 && t->valuedouble <= 3, "a bad type");
        if (t->valuedouble == FBF_FLUX_CANCELED)
            check(cJSON_GetArraySize(o) == 2, "a CANCEL with more than id and type");
        if (t->valuedouble == FBF_FLUX_ANNOTATE)
            check(cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(o, "annotations")),
                  "an ANNOTATE without annotations");
    } else {
        check(cJSON_GetArraySize(o) == 1, "a free response with more than the id");
    }
    cJSON_Delete(o);
}

static void put(fbf_flux_kvs *k, uint64_t id, const char *name, const char *text)
{
    char key[64];
    fbf_flux_key(key, sizeof key, id, name);
    fbf_store_item it = {.name = key, .value = text, .len = strlen(text)};
    check(fbf_flux_kvs_put(k, &it, 1, NULL) == 0, "kvs put");
}

/* One message; false once the session is over. */
static bool feed(fbf_flux_session *s, const void *const *data, const size_t *len, size_t n,
                 uint32_t cores, bool verbose)
{
    fbf_error err = {{0}};
    unsigned long before = fbf_flux_session_refusals(s);
    int rc = fbf_flux_session_receive(s, data, len, n, &err);
    if (verbose)
        fprintf(stderr, "receive: %d %s%s\n", rc, err.text,
                fbf_flux_session_refusals(s) > before ? fbf_flux_session_last_refusal(s) : "");
    check(rc == 0 || rc == FBF_FLUX_ENDED || (rc < 0 && err.text[0]), "a bad return");
    check(fbf_flux_session_refusals(s) - before <= 1, "two refusals for one message");
    if (fbf_flux_session_refusals(s) > before)
        check(fbf_flux_session_last_refusal(s)[0] != '\0', "a refusal without text");
    size_t k;
    const fbf_flux_out *o = fbf_flux_session_outbox(s, &k);
    for (size_t i = 0; i < k; i++)
        check_answer(&o[i].msg, i + 1 == k, verbose);
    fbf_engine *e = fbf_flux_session_engine(s);
    check(fbf_engine_nb_free(e) <= cores, "more cores free than there are");
    return rc == 0;
}

static bool feed_msg(fbf_flux_session *s, uint8_t type, uint8_t flags, uint32_t aux1,
                     uint32_t tag, const char *topic, const uint8_t *payload, size_t plen,
                     bool has_payload, uint32_t cores, bool verbose)
{
    fbf_flux_msg m = {.type = type, .flags = flags, .aux1 = aux1, .matchtag = tag,
                      .topic = topic, .topic_len = topic ? strlen(topic) : 0,
                      .payload = (const char *)payload, .payload_len = plen};
    if (!has_payload)
        m.payload = NULL;
    m.flags = fbf_flux_msg_flags(&m);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&m, proto);
    const void *data[3];
    size_t len[3], n = 0;
    if (topic) {
        data[n] = topic;
        len[n++] = m.topic_len;
    }
    if (has_payload) {
        data[n] = payload ? (const void *)payload : "";
        len[n++] = plen;
    }
    data[n] = proto;
    len[n++] = sizeof proto;
    return feed(s, data, len, n, cores, verbose);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t n)
{
    if (n < 1)
        return 0;
    bool verbose = getenv("FBF_FUZZ_VERBOSE") != NULL;
    static const char *const policies[] = {"fcfs", "easy", "conservative", "conservative"};
    static const uint32_t plat[4][2] = {{1, 1}, {1, 4}, {3, 2}, {2, 8}};
    uint8_t opt = in[0];
    const fbf_policy_entry *pe = fbf_policy_lookup(policies[opt & 3]);
    fbf_flux_kvs *kvs = fbf_flux_kvs_memory();
    static FILE *devnull; /* the session's warnings, opened once */
    if (!devnull)
        devnull = fopen("/dev/null", "w");
    check(kvs && devnull && pe, "setup");
    fbf_jbuf b = {0};
    for (uint64_t id = 0; id < 16; id++) {
        fbf_jbuf_reset(&b);
        fbf_flux_jobspec_put(&b, (int64_t)(id % 5) + 1, (double)(id % 3) * 50, "x");
        put(kvs, id, "jobspec", b.p);
    }
    fbf_jbuf_fini(&b);
    static const char *const R[] = {"0", "1", "0-1", NULL};
    for (uint64_t i = 0; i < 4; i++) {
        char r[256];
        snprintf(r, sizeof r, "{\"version\":1,\"execution\":{\"R_lite\":[{\"rank\":\"%s\","
                 "\"children\":{\"core\":\"%s\"}}],\"starttime\":0,\"expiration\":%d}}",
                 R[i] ? "0" : "1", R[i] ? R[i] : "0", (int)i * 10);
        put(kvs, 100 + i, "R", r);
    }
    uint32_t ranks = plat[(opt >> 4) & 3][0], cpr = plat[(opt >> 4) & 3][1];
    fbf_flux_options o = {
        .session = {.engine = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                               .workers = 1}},
        .mode = (opt & 4) ? FBF_FLUX_MODE_SINGLE : FBF_FLUX_MODE_UNLIMITED,
        .nranks = ranks,
        .cores_per_rank = cpr,
        .kvs = kvs,
        .warn = devnull,
        .annotate = pe->ops == fbf_policy_lookup("easy")->ops,
    };
    fbf_flux_session *s = fbf_flux_session_create(&o, NULL);
    check(s != NULL, "create");
    uint32_t cores = ranks * cpr;
    bool alive = true;
    if (!(opt & 8)) {
        static const uint8_t hello[] = "{\"alloc\":[]}";
        alive = feed_msg(s, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE, 0, 0, FBF_FLUX_ATTACH, NULL,
                         0, false, cores, verbose) &&
                feed_msg(s, FBF_FLUX_RESPONSE, 0, 0, 1, FBF_FLUX_HELLO, hello, sizeof hello,
                         true, cores, verbose) &&
                feed_msg(s, FBF_FLUX_RESPONSE, 0, 0, 2, FBF_FLUX_READY, NULL, 0, false, cores,
                         verbose);
        check(!alive || fbf_flux_session_ready(s), "not ready after the handshake");
    }
    const uint8_t *p = in + 1, *end = in + n;
    while (alive && p < end) {
        const uint8_t *q = memchr(p, 0x01, (size_t)(end - p));
        if (!q)
            q = end;
        size_t len = (size_t)(q - p);
        if (len >= 1 && (p[0] & 0x80)) { /* raw frames */
            uint8_t *raw = malloc(len);
            check(raw != NULL, "out of memory");
            const void *data[8];
            size_t lens[8], k = 0;
            const uint8_t *f = p + 1;
            while (k < 8) {
                const uint8_t *g = memchr(f, 0x02, (size_t)(q - f));
                if (!g)
                    g = q;
                uint8_t *dst = raw + (f - p);
                for (const uint8_t *x = f; x < g; x++)
                    dst[x - f] = *x ^ 0x80;
                data[k] = dst;
                lens[k++] = (size_t)(g - f);
                if (g == q)
                    break;
                f = g + 1;
            }
            alive = feed(s, data, lens, k, cores, verbose);
            free(raw);
        } else if (len >= 2) {
            uint8_t r0 = p[0];
            uint32_t tag = (p[1] & 0x7fu) ^ 0x10u;
            const char *topic = (r0 & 15) < NTOPICS ? topics[r0 & 15] : NULL;
            uint8_t type = (uint8_t)(1u << ((r0 >> 4) & 3));
            uint32_t aux1 = type == FBF_FLUX_RESPONSE && (p[1] & 0x80) ? tag : 0;
            alive = feed_msg(s, type, (r0 & 0x40) ? FBF_FLUX_F_NORESPONSE : 0, aux1, tag, topic,
                             p + 2, len - 2, len > 2, cores, verbose);
        }
        p = q + 1;
    }
    fbf_flux_session_destroy(s);
    fbf_flux_kvs_destroy(kvs);
    return 0;
}
