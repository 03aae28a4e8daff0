/*
 * fuzz_bv5_edc: Batsim 5 (batprotocol JSON) messages to a fresh fastbf
 * EDC (fbf_bv5_edc_take()), as the library and the process drive it.
 *
 * Feeds: byte 0 picks the policy (bits 0-1) and whether a valid
 * SimulationBeginsEvent on 8 hosts goes first (bit 2); the rest, split on
 * 0x01, is the messages, each with the NUL Batsim appends when bit 3 is
 * set. Asserts: an error comes with a non-empty message and an errno the
 * headers promise, then the refusal (a ForceSimulationStopEvent) is
 * valid JSON and nothing more is sent; a reply is valid JSON with `now`
 * and `events`. The sanitizers catch the rest.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_edc.h"
#include "policies/registry.h"

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_bv5_edc: %s\n", what);
        abort();
    }
}

static void check_json(const uint8_t *p, size_t n, const char *what)
{
    cJSON *m = cJSON_ParseWithLength((const char *)p, n);
    check(cJSON_IsObject(m) && cJSON_IsNumber(cJSON_GetObjectItem(m, "now")) &&
              cJSON_IsArray(cJSON_GetObjectItem(m, "events")),
          what);
    cJSON_Delete(m);
}

static const char begins[] =
    "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\","
    "\"event\":{\"computation_host_number\":8,\"batsim_execution_context_json\":\"{}\"}}]}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const char *const policies[] = {"fcfs", "easy", "conservative", "easy"};
    const fbf_policy_entry *pe = fbf_policy_lookup(policies[data[0] & 3]);
    fbf_power_config power = fbf_power_config_default();
    fbf_bv5_options o = {.session = {.engine = {.policy = pe->ops,
                                                .reservation_depth = pe->default_depth,
                                                .workers = 1},
                                     .power = &power,
                                     .call_margin = 1e-3},
                         .format = FBF_BV5_FORMAT_JSON};
    fbf_error err = {{0}};
    fbf_bv5_edc *e = fbf_bv5_edc_create(&o, &err);
    check(e != NULL, "create failed");
    const uint8_t *reply;
    size_t len;
    int rc = 0;
    if (data[0] & 4) {
        rc = fbf_bv5_edc_take(e, (const uint8_t *)begins, sizeof begins - 1, &reply, &len, &err);
        check(rc == 0, "a valid SimulationBeginsEvent refused");
    }
    bool nul = data[0] & 8;
    char *buf = NULL;
    for (size_t from = 1; from < size && rc >= 0 && rc != FBF_BV5_ENDED;) {
        const uint8_t *sep = memchr(data + from, 0x01, size - from);
        size_t n = sep ? (size_t)(sep - data) - from : size - from;
        buf = realloc(buf, n + 1);
        memcpy(buf, data + from, n);
        buf[n] = '\0';
        rc = fbf_bv5_edc_take(e, (const uint8_t *)buf, n + nul, &reply, &len, &err);
        if (rc < 0) {
            check(err.text[0] != '\0', "an error without a message");
            check(rc == -EPROTO || rc == -ENOENT || rc == -EEXIST || rc == -EINVAL ||
                      rc == -ENOMEM || rc == -ENOTSUP,
                  "an undocumented error code");
            const uint8_t *stop = fbf_bv5_edc_refusal(e, &len);
            check(stop != NULL, "no refusal");
            check_json(stop, len, "a refusal that is not a message");
        } else {
            check_json(reply, len, "a reply that is not a message");
        }
        from += n + 1;
    }
    free(buf);
    fbf_bv5_edc_destroy(e);
    return 0;
}
