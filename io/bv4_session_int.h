/*
 * bv4_session_int: the Batsim v4 codec's state, shared by its two halves:
 * bv4_session.c (requests: decoding, streaming, errors in v4 terms) and
 * bv4_reply.c (the session's decisions as v4 text). Not part of the
 * public API.
 */
#ifndef FBF_BV4_SESSION_INT_H
#define FBF_BV4_SESSION_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "io/bv4_decode.h"
#include "io/bv4_session.h"
#include "io/jbuf.h"
#include "io/json_arena.h"
#include "io/session.h"

struct fbf_bv4_session {
    fbf_bv4_options opt;
    fbf_session *core;
    fbf_json_arena *arena; /* holds the request being handled */
    fbf_bv4_decoder dec;
    fbf_jbuf out; /* the reply's text, reused across messages */
};

/* A CALL_ME_LATER must be later than Batsim's clock when Batsim applies
 * it, or Batsim aborts ("You asked to be awaken in the past!"). Batsim
 * prints `now` with six decimals but keeps full precision, and on a
 * platform with network latency it applies each event of a reply some
 * microseconds after the one before (15 us on its small_platform). So no
 * call is asked for before now + FBF_BV4_CALL_MARGIN +
 * FBF_BV4_CALL_PER_EVENT x (the events before it in the reply); one due
 * sooner is asked for then. */
#define FBF_BV4_CALL_MARGIN 1e-3
#define FBF_BV4_CALL_PER_EVENT 2e-5

/* Writes the reply of the decision point just decided into s->out: every
 * decision as one v4 event (the kills in one KILL_JOB), stamped now.
 * 0 or -ENOMEM. */
int fbf_bv4_reply_build(fbf_bv4_session *s, double now, const fbf_out *outs, size_t n);

#endif
