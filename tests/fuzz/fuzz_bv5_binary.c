/*
 * fuzz_bv5_binary: Batsim 5 messages in batprotocol's flatbuffers binary
 * format to a fresh fastbf EDC (fbf_bv5_edc_take()), as the library and
 * the process drive it.
 *
 * Feeds: byte 0 picks the policy (bits 0-1), whether a valid
 * SimulationBeginsEvent on 8 hosts goes first (bit 2), and whether the
 * messages are given as they are (bit 4 clear: raw bytes, mostly refused
 * by the verifier) or as batprotocol JSON that flatbuffers' parser turns
 * into binary first (bit 4 set: the fuzzer reaches the reader behind the
 * verifier; a text the parser refuses is skipped). The rest is the
 * messages, each a 16-bit little-endian size then its bytes, given at an
 * odd address when bit 3 is set (Batsim's buffers need not be aligned).
 * Asserts: an error comes with a non-empty message and an errno the
 * headers promise, then the refusal is a Message that verifies; a reply
 * is a Message that verifies. The sanitizers catch the rest.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_edc.h"
#include "io/bv5_fb.h"
#include "policies/registry.h"

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_bv5_binary: %s\n", what);
        abort();
    }
}

static fbf_bv5_fb *conv; /* the JSON <-> binary converter, kept between inputs */

/* A message of fastbf's verifies (to_json verifies before anything). */
static void check_message(const uint8_t *p, size_t n, const char *what)
{
    const char *json;
    size_t len;
    fbf_error err;
    check(fbf_bv5_fb_to_json(conv, p, n, &json, &len, &err) == 0, what);
}

static const char begins[] =
    "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\","
    "\"event\":{\"computation_host_number\":8,\"batsim_execution_context_json\":\"{}\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (!conv)
        check((conv = fbf_bv5_fb_create()) != NULL, "no converter");
    static const char *const policies[] = {"fcfs", "easy", "conservative", "easy"};
    const fbf_policy_entry *pe = fbf_policy_lookup(policies[data[0] & 3]);
    fbf_power_config power = fbf_power_config_default();
    fbf_bv5_options o = {.session = {.engine = {.policy = pe->ops,
                                                .reservation_depth = pe->default_depth,
                                                .workers = 1},
                                     .power = &power,
                                     .call_margin = 1e-3},
                         .format = FBF_BV5_FORMAT_BINARY};
    fbf_error err = {{0}};
    fbf_bv5_edc *e = fbf_bv5_edc_create(&o, &err);
    check(e != NULL, "create failed");
    const uint8_t *reply, *bin;
    size_t len, blen;
    int rc = 0;
    uint8_t *buf = NULL;
    if (data[0] & 4) {
        check(fbf_bv5_fb_from_json(conv, begins, sizeof begins - 1, &bin, &blen, &err) == 0,
              "the SimulationBeginsEvent seed does not convert");
        buf = malloc(blen);
        memcpy(buf, bin, blen);
        rc = fbf_bv5_edc_take(e, buf, blen, &reply, &len, &err);
        check(rc == 0, "a valid SimulationBeginsEvent refused");
    }
    bool odd = data[0] & 8, json = data[0] & 16;
    for (size_t at = 1; at + 2 <= size && rc >= 0 && rc != FBF_BV5_ENDED;) {
        size_t n = data[at] | (size_t)data[at + 1] << 8;
        at += 2;
        if (n > size - at)
            n = size - at;
        const uint8_t *m = data + at;
        at += n;
        if (json) {
            if (fbf_bv5_fb_from_json(conv, (const char *)m, n, &bin, &blen, &err) < 0)
                continue;
            m = bin;
            n = blen;
        }
        buf = realloc(buf, n + 1);
        memcpy(buf + odd, m, n);
        rc = fbf_bv5_edc_take(e, buf + odd, n, &reply, &len, &err);
        if (rc < 0) {
            check(err.text[0] != '\0', "an error without a message");
            check(rc == -EPROTO || rc == -ENOENT || rc == -EEXIST || rc == -EINVAL ||
                      rc == -ENOMEM || rc == -ENOTSUP,
                  "an undocumented error code");
            const uint8_t *stop = fbf_bv5_edc_refusal(e, &len);
            check(stop != NULL, "no refusal");
            check_message(stop, len, "a refusal that is not a message");
        } else {
            check_message(reply, len, "a reply that is not a message");
        }
    }
    free(buf);
    fbf_bv5_edc_destroy(e);
    return 0;
}
