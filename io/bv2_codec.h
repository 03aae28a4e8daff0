/*
 * bv2_codec: the Batsim v2 text protocol's syntax (a message's content,
 * without its size prefix: io/bv2_frame.h), read into the session's typed
 * events (io/session.h) and written from its decisions.
 *
 * A message is VERSION:TIME|TIME:STAMP[:CONTENT]|... in printable ASCII.
 * From Batsim: A (begins; the platform's size is the store's nb_res), S
 * and C (WLOAD!JOB submitted, completed), N (nothing, or the call fastbf
 * asked for), F and f (machines out of service and back), p (MACHINES=
 * PSTATE reached), e (JOULES, the answer to E), Z (ends). To Batsim, all
 * stamped at the request's time: R (a rejection, or a job given up after
 * --max-wait), J (the starts of the reply in one event: W!J=MACHINES;...),
 * P (MACHINES=PSTATE), n (TIME: call me then), E (energy), or N alone
 * when there is nothing to say. MACHINES are comma-separated ids and
 * closed intervals a-b. Replies say version 3. The v2 protocol carries no
 * kill, metadata, registration or waiting-time answer: a decision of those
 * kinds is -ENOTSUP (fastbf's options exclude them with batsim2).
 *
 * Each message is checked whole before anything is applied: its version
 * against every stamp's (S C 2, N 0, p e 1, A Z F f 3; above 3 is not
 * this protocol), its time against the previous message's (never back),
 * each event's time (not after the message's, not before the event
 * before it), the stamps' direction, A first and once, nothing after Z,
 * each content's syntax. Errors are -EPROTO with one line naming the
 * message (its number, from 1), the event (index, stamp) and what was
 * wrong, e.g.
 *   message 3: event 1 (J): this stamp goes from the scheduler to Batsim
 *   message 1: byte 7 is not printable ASCII (0xc3)
 *
 * Ownership: fbf_bv2_decode() cuts the content in place (it must be
 * writable and stay alive while the events are used); the events and the
 * sets they point to are the decoder's until the next decode.
 */
#ifndef FBF_BV2_CODEC_H
#define FBF_BV2_CODEC_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/jbuf.h"
#include "io/session.h"

typedef struct fbf_bv2_decoder {
    double now, last_now;
    bool begun, ended;
    unsigned long nb_messages;
    fbf_event *ev;
    char *stamps; /* each event's stamp, for messages */
    size_t n, cap;
    fbf_idset *sets;
    size_t nsets, sets_cap;
    fbf_begins begins;
} fbf_bv2_decoder;

/* store: where Batsim keeps job data (host, port, and the prefix: the
 * socket's absolute path); copied by pointer, the strings must outlive
 * the decoder. */
void fbf_bv2_decoder_init(fbf_bv2_decoder *d, const char *host, int port, const char *prefix);
void fbf_bv2_decoder_fini(fbf_bv2_decoder *d);

int fbf_bv2_decode(fbf_bv2_decoder *d, char *content, size_t len, fbf_error *err);

/* The stamp of the event of that origin, '?' when unknown. */
char fbf_bv2_decoded_stamp(const fbf_bv2_decoder *d, long origin);

/* The reply at now: the decisions, or N when there are none. -ENOTSUP
 * for a decision v2 cannot carry, -ENOMEM. */
int fbf_bv2_encode(fbf_jbuf *b, double now, const fbf_engine *e, const fbf_out *outs, size_t n,
                   fbf_error *err);

#endif
