/*
 * bv5_fb: batprotocol's flatbuffers binary format (io/batprotocol.fbs),
 * behind a C interface; the one C++ module of io/.
 *
 * Reading: fbf_bv5_fb_decode() verifies the buffer with flatbuffers'
 * Verifier before reading anything (a buffer that does not verify is
 * -EPROTO "flatbuffers: the message does not verify"), then reads Batsim's
 * events into the decoder's typed events exactly as the JSON reader
 * (io/bv5_decode.h) does: the same events, checks, order rules and error
 * lines, the field named as in JSON. Where JSON would name the kind of a
 * wrong value ("got a string"), a binary value can only be out of range,
 * and the line gives the value ("got 0"); a missing member is "got
 * nothing" in both. The event types are the schema's names; one beyond
 * the schema is "#N".
 *
 * Writing: the hello, the decisions (the set io/bv5_edc.h writes in JSON)
 * and the ForceSimulationStopEvent, as one Message each. A CallMeLaterEvent
 * is a OneShot in milliseconds, rounded up, since the schema's time is an
 * integer.
 *
 * Conversions (tests, replayers): a binary message to batprotocol's JSON
 * and back, with flatbuffers' own parser and text generator over the
 * schema built in, so that both shapes come from one definition. The
 * schema is loaded at a writer's first conversion and kept, also after a
 * text its parser refused.
 *
 * Ownership: a writer (fbf_bv5_fb) owns the bytes it returns, valid until
 * its next call. Decoded events are the decoder's, as with JSON; strings
 * point into the caller's buffer, or into the decoder's copy when the
 * buffer was not 8-byte aligned, until the next decode.
 * Errors: 0 / -errno with one line in err: -EPROTO for a message that
 * breaks the protocol, -ENOMEM, -ENOTSUP for a decision batprotocol cannot
 * carry.
 */
#ifndef FBF_BV5_FB_H
#define FBF_BV5_FB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* fastbf's headers are C: the C++ side sees them with C linkage. */
#ifdef __cplusplus
extern "C" {
#endif

#include "engine/engine.h"
#include "engine/error.h"
#include "io/bv5_decode.h"
#include "io/decisions.h"

typedef struct fbf_bv5_fb fbf_bv5_fb;

fbf_bv5_fb *fbf_bv5_fb_create(void);
void fbf_bv5_fb_destroy(fbf_bv5_fb *f);

/* Batsim's message into d's events (d->now, d->events), as
 * fbf_bv5_decode() does for JSON. f keeps the aligned copy, if any. */
int fbf_bv5_fb_decode(fbf_bv5_fb *f, fbf_bv5_decoder *d, const uint8_t *buf, size_t len,
                      bool begun, fbf_error *err);

/* The EDCHelloEvent at time 0; dynamic: request dynamic registration
 * (without acknowledgements or profile reuse). */
int fbf_bv5_fb_hello(fbf_bv5_fb *f, const char *protocol_version, const char *version,
                     bool dynamic, const uint8_t **msg, size_t *len, fbf_error *err);

/* The reply at now: the n decisions in order (every kill of the reply in
 * one KillJobsEvent, at the first), job ids through engine when a
 * decision has none, calls named fastbf-N with *nb_calls counting. */
int fbf_bv5_fb_reply(fbf_bv5_fb *f, double now, const fbf_out *outs, size_t n,
                     fbf_engine *engine, unsigned long *nb_calls, const uint8_t **msg,
                     size_t *len, fbf_error *err);

/* A ForceSimulationStopEvent at now; NULL when out of memory. */
const uint8_t *fbf_bv5_fb_refusal(fbf_bv5_fb *f, double now, size_t *len);

/* A verified binary message as JSON text (NUL-terminated, len without it). */
int fbf_bv5_fb_to_json(fbf_bv5_fb *f, const uint8_t *buf, size_t len, const char **json,
                       size_t *json_len, fbf_error *err);

/* JSON text (a trailing NUL allowed) as a binary message. */
int fbf_bv5_fb_from_json(fbf_bv5_fb *f, const char *json, size_t len, const uint8_t **buf,
                         size_t *buf_len, fbf_error *err);

#ifdef __cplusplus
}
#endif

#endif
