/*
 * bv4_decode: a Batsim v4 request, read into the session's typed events
 * (io/session.h), each field read and checked once.
 *
 * fbf_bv4_decode() parses the text and reads the envelope (`now` a finite
 * number, `events` an array) and every event: `timestamp` a number <= now
 * and not below the previous one, `type` a Batsim-to-scheduler event,
 * `data` an object with the event's fields of the right types. Nothing is
 * applied until the whole message is read, so a bad message never reaches
 * the engine half-applied. JOB_SUBMITTED without `job` (Batsim's Redis
 * form) is an undescribed submission: whether the store is on is the
 * session's business. Every failure is -EPROTO (-EINVAL for pstates the
 * machines contradict) with one line naming the event (index and type)
 * and the field, e.g.
 *   event 2 (JOB_SUBMITTED): data.job.res: expected an integer, got a string
 *
 * A message read as a stream (io/json_stream.h) is decoded one event at a
 * time: fbf_bv4_decoder_start() with its now, fbf_bv4_decode_event() for
 * each, fbf_bv4_decoder_end().
 *
 * Ownership: the events, and the sets and texts they point to, are the
 * decoder's until the next start or decode; their strings point into the
 * parsed tree (the arena's), valid until the arena's next parse.
 */
#ifndef FBF_BV4_DECODE_H
#define FBF_BV4_DECODE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/event_list.h"
#include "io/json_arena.h"
#include "io/session.h"

typedef struct fbf_bv4_decoder {
    double now, prev;
    bool begun, ended;
    int index;          /* of the event being read */
    bool progress_text; /* describe killed jobs' progress (for a log) */
    fbf_event_list events; /* read since the start or the drop */
    fbf_begins begins;
    fbf_idset compute;
    uint32_t *state_machines;
    fbf_machine_state *states;
    size_t states_cap;
    fbf_idset *sets; /* machines of state changes */
    size_t nsets, sets_cap;
    char **texts; /* progress descriptions */
    size_t ntexts, texts_cap;
} fbf_bv4_decoder;

void fbf_bv4_decoder_init(fbf_bv4_decoder *d, bool progress_text);
void fbf_bv4_decoder_fini(fbf_bv4_decoder *d);

/* begun: whether SIMULATION_BEGINS was already received (it must come
 * first, and only once). On success *root is the parsed message. */
int fbf_bv4_decode(fbf_bv4_decoder *d, fbf_json_arena *arena, const char *text, size_t len,
                   bool begun, cJSON **root, fbf_error *err);

void fbf_bv4_decoder_start(fbf_bv4_decoder *d, double now, bool begun);
int fbf_bv4_decode_event(fbf_bv4_decoder *d, const cJSON *ev, fbf_error *err);
int fbf_bv4_decoder_end(const fbf_bv4_decoder *d, fbf_error *err);
/* Forgets the events read so far (applied already), so that a streamed
 * message costs no more than one event at a time. */
void fbf_bv4_decoder_drop(fbf_bv4_decoder *d);
/* The message's now: a finite number. */
int fbf_bv4_check_now(const cJSON *now, fbf_error *err);

/* The type of the event of that origin among those not dropped, for
 * messages ("message" when unknown). */
const char *fbf_bv4_decoded_type(const fbf_bv4_decoder *d, long origin);

#endif
