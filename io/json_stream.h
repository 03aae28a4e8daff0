/*
 * json_stream: the elements of one array member of a JSON object, parsed
 * one at a time.
 *
 * A Batsim message that submits a million jobs is one JSON text of about
 * 140 MB. Parsed whole, its tree costs about 900 bytes per job on top of
 * the text: the parse, not the jobs, set the process's peak memory. The
 * stream reads the object's members in order, hands each member before
 * the array to a callback, then yields the array's elements one by one,
 * each parsed into the arena on its own, so that only one element's tree
 * is alive at a time. Every value (keys included) is parsed by cJSON; this
 * module only walks the punctuation between them ({ } [ ] : ,).
 *
 * Contract:
 *  - The text must stay alive and unchanged while the stream is in use.
 *  - A value handed to the member callback, and an element returned by
 *    fbf_json_stream_next(), live in the arena until the next parse into
 *    it (the next callback or element): copy out what must last longer.
 *  - Errors: -EPROTO with a message naming the byte offset (malformed
 *    JSON, not an object, the member not an array, bytes after the end,
 *    a member name repeated in the object or in any value, a \u0000 in
 *    a string: json_strict.h); -ENOMEM. The stream is dead after an
 *    error.
 */
#ifndef FBF_JSON_STREAM_H
#define FBF_JSON_STREAM_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "io/json_arena.h"

/* Called for each member other than the array, in text order; a negative
 * return stops the stream with that code (err already filled). */
typedef int (*fbf_json_member_fn)(void *ctx, const char *key, const cJSON *value,
                                  fbf_error *err);

typedef struct fbf_json_stream {
    fbf_json_arena *arena;
    /* false: each parse drops the previous tree (the contract above);
     * true: trees accumulate in the arena until its owner clears it
     * (fbf_json_arena_clear), so that several elements stay alive at once
     * (io/json_pipe.h). The arena may be switched between calls. */
    bool keep;
    const char *text, *cur, *end;
    const char *array_key;
    fbf_json_member_fn member;
    void *ctx;
    int state; /* internal */
    char names[256]; /* internal: the member names read */
    size_t names_len;
} fbf_json_stream;

/* Reads members of the object in text up to the member named array_key
 * (then 1: elements follow) or to the end of the object (then 0: no such
 * member; every member went to fn). */
int fbf_json_stream_open(fbf_json_stream *s, fbf_json_arena *arena, const char *text,
                         size_t len, const char *array_key, fbf_json_member_fn fn, void *ctx,
                         fbf_error *err);

/* 1 and *elem: the next element; 0: the array and the object ended (the
 * members after the array went to fn, and only whitespace follows). */
int fbf_json_stream_next(fbf_json_stream *s, cJSON **elem, fbf_error *err);

#endif
