/*
 * json_pipe: the elements of a json_stream's array, parsed and checked
 * ahead on a helper thread and handed to the consumer in order.
 *
 * Why: handling a message that submits a million jobs is about two thirds
 * cJSON's parse of its events (and their checks), one third applying them
 * to the engine. Parsing an element needs nothing from applying the ones
 * before it, so a helper thread parses while the consumer applies, and a
 * burst ends sooner wherever a second core is free.
 *
 * The helper fills batches of elements (each batch its own arena) a few
 * batches ahead of the consumer; a batch goes back to the helper once the
 * consumer has moved past it, so at most FBF_JSON_PIPE_BATCHES batches of
 * trees exist at once, whatever the array's length. Batches change hands
 * under one mutex (a batch is a few hundred elements, so the hand-off is
 * rare), which orders the trees' memory between the two threads.
 *
 * Contract:
 *  - fbf_json_pipe_start() takes an open stream (fbf_json_stream_open()
 *    returned 1); from then until fbf_json_pipe_destroy() the helper owns
 *    the stream, its member callback's context and check's context: the
 *    caller touches none of them. The stream's own arena is not used.
 *  - check runs on the helper thread, once per element, in order; a
 *    negative return ends the elements with that error.
 *  - An element returned by fbf_json_pipe_next() is valid until the next
 *    call. Errors come exactly where the plain stream would give them:
 *    every element before a malformed one (or one that check refused) is
 *    returned first, then the error (-EPROTO, -ENOMEM, or check's code,
 *    with its message); 0 once the array and the object ended.
 *  - fbf_json_pipe_destroy() stops the helper, even halfway through the
 *    array, joins it and frees every batch. NULL accepted.
 */
#ifndef FBF_JSON_PIPE_H
#define FBF_JSON_PIPE_H

#include <cjson/cJSON.h>

#include "engine/error.h"
#include "io/json_stream.h"

/* 4 batches of 256 Batsim events: about 150 KB of trees each. Batches of
 * 1,024 were as fast on 1e5 and 1e6 submissions, but their arenas' first
 * touch (a thousand more page faults) made a burst of 1e4 submissions
 * slower with 2 workers than with 1. */
#define FBF_JSON_PIPE_BATCHES 4
#define FBF_JSON_PIPE_BATCH 256 /* elements per batch */

typedef struct fbf_json_pipe fbf_json_pipe;

typedef int (*fbf_json_pipe_check_fn)(void *ctx, const cJSON *elem, fbf_error *err);

/* 0, or -ENOMEM / -EAGAIN (no thread) with err filled; then the stream
 * is untouched and may be read directly instead. */
int fbf_json_pipe_start(fbf_json_pipe **out, fbf_json_stream *s, fbf_json_pipe_check_fn check,
                        void *ctx, fbf_error *err);

/* 1 and *elem, 0 at the end, or the error that ended the elements. */
int fbf_json_pipe_next(fbf_json_pipe *p, const cJSON **elem, fbf_error *err);

void fbf_json_pipe_destroy(fbf_json_pipe *p);

#endif
