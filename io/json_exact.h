/*
 * json_exact: integers as their JSON text writes them, beyond what a
 * double holds exactly (cJSON keeps a number as a double only).
 *
 * Flux job ids are 64-bit (RFC 19's FLUIDs): above 2^53 a double rounds
 * them, and two jobs would read as one. fbf_json_exact_index() scans the
 * text once for its number tokens, in order, and pairs them with the
 * number nodes of the tree cJSON parsed from the same text (a pre-order
 * walk meets values in document order), storing each node's token index
 * in its valueint: cJSON's own integer is no use beyond 2^31 anyway.
 * fbf_json_exact_u64() then reads a node's integer from its text.
 *
 * Ownership: an index lives in the caller's fbf_json_exact (zero is
 * empty), pointing into the text, which must outlive it;
 * fbf_json_exact_fini() frees it. The tree's valueints are overwritten.
 *
 * Errors: -EPROTO when the text's numbers and the tree's disagree (a
 * text that is not the tree's), -ENOMEM. fbf_json_exact_u64(): -EDOM for
 * a number that is not a plain integer (a sign, a fraction, an exponent,
 * a leading zero), -ERANGE for one above max.
 */
#ifndef FBF_JSON_EXACT_H
#define FBF_JSON_EXACT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/error.h"

typedef struct fbf_json_exact {
    const char **at; /* each number token's first byte */
    uint32_t *len;   /* and its length */
    size_t n, cap;
} fbf_json_exact;

int fbf_json_exact_index(fbf_json_exact *x, const char *text, size_t len, cJSON *root,
                         fbf_error *err);
int fbf_json_exact_u64(const fbf_json_exact *x, const cJSON *num, uint64_t max, uint64_t *out);
void fbf_json_exact_fini(fbf_json_exact *x);

#endif
