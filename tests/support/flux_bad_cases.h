/*
 * flux_bad_cases: malformed and out-of-order messages to fastbf's RFC 27
 * service, each with the one answer it must get, shared by the suite that
 * drives the session in process (test_flux_rfc27) and the one that sends
 * them over the socket to a real fastbf (test_flux_hostile).
 *
 * The state they are sent in (fbf_test_flux_bad_script, then the cases):
 * a platform of 1 rank of 4 cores under EASY; job 3 (1 core) ran from 0
 * and was freed at 1; job 1 (4 cores, 100 s) runs since 1; job 2 (2
 * cores) waits, its alloc pending since 2; job 4 has a jobspec and no
 * alloc. The last instant was at 2.
 *
 * A case wants either an error response (errnum, the request's topic and
 * matchtag, the text as payload) or, for a message that wants none (no
 * request, or the noresponse flag), nothing on the wire; either way one
 * line on stderr with the same text, which names the topic (or the frame)
 * and the field.
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_FLUX_BAD_CASES_H
#define FBF_TEST_FLUX_BAD_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "support/flux_kit.h"

enum {
    FBF_TEST_RAW_NONE,      /* the message below, as its frames */
    FBF_TEST_RAW_PROTO19,   /* topic, then a PROTO frame of 19 bytes */
    FBF_TEST_RAW_MAGIC,     /* a PROTO frame with magic 0x8f */
    FBF_TEST_RAW_VERSION,   /* version 2 */
    FBF_TEST_RAW_TYPE,      /* type 0x10 */
    FBF_TEST_RAW_ROUTE,     /* the route flag */
    FBF_TEST_RAW_NOPAYLOAD, /* flags: topic and payload, frames: topic and PROTO */
    FBF_TEST_RAW_TOPIC,     /* a topic with a space */
    FBF_TEST_RAW_NUL,       /* a NUL inside the payload */
    FBF_TEST_RAW_4FRAMES,   /* topic, payload, payload, PROTO */
    FBF_TEST_RAW_EMPTYTOPIC,
};

typedef struct fbf_test_flux_bad {
    const char *name;
    int raw;
    uint8_t type, flags;
    uint32_t aux1, matchtag;
    const char *topic, *payload;
    uint32_t errnum; /* 0: no answer wanted */
    const char *text; /* the refusal's text, whole */
} fbf_test_flux_bad;

/* The messages that make the state above (their answers unchecked), then
 * the cases. */
const fbf_test_flux_bad *fbf_test_flux_bad_script(size_t *n);
const fbf_test_flux_bad *fbf_test_flux_bad_cases(size_t *n);

/* A message's frames into the caller's arrays (data[i] may point into
 * scratch, 64 bytes, or the case's strings); their count. */
size_t fbf_test_flux_bad_frames(const fbf_test_flux_bad *c, const void **data, size_t *len,
                                unsigned char scratch[4][64]);

/* In process (test_flux_rfc27): the script's jobspecs and messages. */
void fbf_test_flux_bad_setup(fbf_test_flux *t);
void fbf_test_flux_bad_send(fbf_test_flux *t, const fbf_test_flux_bad *c);
/* Fails unless answer (the session's, as flux_kit renders it) and the
 * refusal's text are what c wants. */
void fbf_test_flux_bad_expect(fbf_test_flux *t, const fbf_test_flux_bad *c, const char *answer,
                              const char *refusal);
/* After the cases: free job 1 at 3: job 2 starts as if nothing had come. */
void fbf_test_flux_bad_after(fbf_test_flux *t);
/* That instant's answer, as flux_kit renders it. */
extern const char fbf_test_flux_bad_after_answer[];

#endif
