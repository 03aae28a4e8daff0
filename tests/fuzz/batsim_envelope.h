/*
 * batsim_envelope: the check the fuzz targets make on every message that
 * crosses the protocol (fastbf's replies, fastbf-replay's requests): a
 * JSON object with a number `now` and an array `events`. Anything else
 * aborts, so that libFuzzer keeps the input that produced it.
 */
#ifndef FBF_FUZZ_BATSIM_ENVELOPE_H
#define FBF_FUZZ_BATSIM_ENVELOPE_H

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

/* what: "reply" or "request", for the message printed before aborting. */
static inline void fbf_fuzz_check_envelope(const char *what, const char *text, size_t len)
{
    cJSON *m = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(m) || !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "now")) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(m, "events"))) {
        fprintf(stderr, "%s is not a Batsim message: %.*s\n", what, (int)len, text);
        abort();
    }
    cJSON_Delete(m);
}

#endif
