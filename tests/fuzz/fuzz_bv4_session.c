/*
 * fuzz_bv4_session: Batsim v4 requests to a fresh fbf_bv4_session.
 *
 * Feeds: a fixed, valid SIMULATION_BEGINS (4 compute resources), then the
 * input as the next messages. Byte 0 picks the options: the policy (bits
 * 0-1), the streaming path (bit 2: every message padded with spaces to
 * FUZZ_STREAM_MIN bytes, the session's streaming threshold here, so
 * io/json_stream.c reads it; 8 KiB rather than the default 1 MiB, whose
 * padding was most of an input's time; bit 3: the
 * spaces go before the text instead of after; bit 3 without bit 2: no
 * fixed SIMULATION_BEGINS, the input's first message is the first one,
 * skipped when it declares more than 4096 resources, since a platform
 * costs memory in proportion to its size, or turns Redis on, which would
 * connect to a server), start tags (bit 4), energy
 * saving (bit 5), a kill delay (bit 6) and the --verbose log, to
 * /dev/null (bit 7). The rest is split on 0x01 into messages, each copied
 * into a buffer of exactly its length (no NUL), so a read past the end is
 * caught.
 *
 * Asserts: a negative return comes with a non-empty message, and the
 * session is not called again after it (bv4_session.h: the request may
 * have been applied in part); a successful return hands back a reply that
 * is a JSON object with a number "now" and an "events" array; after
 * FBF_BV4_ENDED nothing more is sent. The sanitizers catch the rest.
 * FBF_FUZZ_VERBOSE=1 prints each return, error and reply (to read a case).
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/power.h"
#include "io/bv4_session.h"
#include "policies/registry.h"
#include "tests/fuzz/batsim_envelope.h"

/* Past the 4 KiB within which a stream that cannot open falls back to the
 * whole parse (bv4_session.c), so that both readings are reached. */
#define FUZZ_STREAM_MIN ((size_t)8192)

static const char begins[] =
    "{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,\"type\":\"SIMULATION_BEGINS\","
    "\"data\":{\"nb_resources\":4,\"nb_compute_resources\":4,\"nb_storage_resources\":0,"
    "\"config\":{\"redis-enabled\":false,\"dynamic-jobs-enabled\":false},"
    "\"compute_resources\":[{\"id\":0,\"name\":\"a\",\"state\":\"idle\",\"properties\":{}},"
    "{\"id\":1,\"name\":\"b\",\"state\":\"idle\",\"properties\":{}},"
    "{\"id\":2,\"name\":\"c\",\"state\":\"idle\",\"properties\":{}},"
    "{\"id\":3,\"name\":\"d\",\"state\":\"idle\",\"properties\":{}}],"
    "\"storage_resources\":[],\"workloads\":{\"w0\":\"w.json\"},\"profiles\":{}}}]}";

/* The session's contract on a reply the caller sends back to Batsim. */
static void check_reply(const char *reply, size_t len)
{
    if (!reply || strlen(reply) != len)
        abort();
    fbf_fuzz_check_envelope("reply", reply, len);
}

/* Whether the first message declares a platform of more than 4096
 * resources (nb_resources, nb_compute_resources or a resource id), or
 * turns Redis on as io/bv4_begins.c reads its config (the flat
 * "redis-enabled" first, else "redis": {"enabled"}). */
static bool skipped(const uint8_t *data, size_t size)
{
    const uint8_t *sep = memchr(data, 0x01, size);
    cJSON *m = cJSON_ParseWithLength((const char *)data, sep ? (size_t)(sep - data) : size);
    bool big = false;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(m, "events"))
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "nb_resources");
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(d, "nb_compute_resources");
        const cJSON *config = cJSON_GetObjectItemCaseSensitive(d, "config");
        const cJSON *redis = cJSON_GetObjectItemCaseSensitive(config, "redis-enabled");
        if (!redis)
            redis = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(config, "redis"), "enabled");
        big = big || (cJSON_IsNumber(n) && !(n->valuedouble <= 4096)) ||
              (cJSON_IsNumber(c) && !(c->valuedouble <= 4096)) || cJSON_IsTrue(redis);
        const cJSON *r;
        cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(d, "compute_resources"))
        {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(r, "id");
            big = big || (cJSON_IsNumber(id) && !(id->valuedouble <= 4096));
        }
    }
    cJSON_Delete(m);
    return big;
}

/* 1: go on; 0: the session ended or refused (it must not be used again). */
static int send_msg(fbf_bv4_session *s, const char *msg, size_t len, bool first)
{
    const char *reply = NULL;
    size_t rlen = 0;
    fbf_error err;
    fbf_error_clear(&err);
    int rc = fbf_bv4_session_handle(s, msg, len, &reply, &rlen, &err);
    if (getenv("FBF_FUZZ_VERBOSE"))
        fprintf(stderr, "handle() = %d: %s\n  reply %.*s\n", rc, err.text,
                rc < 0 ? 0 : (int)rlen, rc < 0 ? "" : reply);
    if (rc < 0) {
        if (first || err.text[0] == '\0') {
            fprintf(stderr, "handle() = %d with message \"%s\"\n", rc, err.text);
            abort();
        }
        return 0;
    }
    if (rc != 0 && rc != FBF_BV4_ENDED)
        abort();
    check_reply(reply, rlen);
    return rc == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    static const char *const policies[] = {"fcfs", "easy", "conservative", "easy"};
    const fbf_policy_entry *pe = fbf_policy_lookup(policies[mode & 3]);
    bool stream = mode & 4, pad_front = mode & 8;
    fbf_power_config power = fbf_power_config_default();
    power.saving = true;
    power.timeout = 5;
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth, .workers = 1,
                   .kill_after = (mode & 64) ? 3 : 0},
        .tag_starts = mode & 16,
        .power = (mode & 32) ? &power : NULL,
        .stream_min = FUZZ_STREAM_MIN,
    };
    static FILE *sink;
    if (!sink && !(sink = fopen("/dev/null", "w")))
        abort();
    if (mode & 128)
        o.log = sink;
    fbf_error err;
    fbf_error_clear(&err);
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s) {
        fprintf(stderr, "session_create: %s\n", err.text);
        abort();
    }
    bool own_begins = pad_front && !stream;
    if (own_begins && skipped(data, size)) {
        fbf_bv4_session_destroy(s);
        return 0;
    }
    int go = own_begins ? 1 : send_msg(s, begins, sizeof begins - 1, true);
    for (size_t at = 0; go && at <= size;) {
        const uint8_t *sep = size > at ? memchr(data + at, 0x01, size - at) : NULL;
        size_t n = sep ? (size_t)(sep - (data + at)) : size - at;
        size_t total = n, off = 0;
        if (stream && n < FUZZ_STREAM_MIN) {
            total = FUZZ_STREAM_MIN;
            off = pad_front ? total - n : 0;
        }
        char *msg = malloc(total ? total : 1);
        if (!msg)
            abort();
        memset(msg, ' ', total);
        memcpy(msg + off, data + at, n);
        go = send_msg(s, msg, total, false);
        free(msg);
        at += n + 1;
    }
    fbf_bv4_session_destroy(s);
    return 0;
}
