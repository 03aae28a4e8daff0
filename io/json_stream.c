/*
 * json_stream: see json_stream.h. Invariant: between calls, cur points
 * just past the last thing consumed, and state says what may come next
 * (an element or ']' / a ',' or ']' / nothing).
 */
#include "io/json_stream.h"
#include "io/json_strict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { ST_FIRST = 1, ST_AFTER, ST_DONE, ST_DEAD };

static void skip_ws(fbf_json_stream *s)
{
    while (s->cur < s->end &&
           (*s->cur == ' ' || *s->cur == '\n' || *s->cur == '\r' || *s->cur == '\t'))
        s->cur++;
}

static int fail(fbf_json_stream *s, int rc, fbf_error *err, const char *what)
{
    s->state = ST_DEAD;
    if (rc == -ENOMEM)
        return fbf_errorf(err, rc, "out of memory parsing a message of %zu bytes",
                          (size_t)(s->end - s->text));
    return fbf_errorf(err, rc, "malformed JSON message near byte %ld: %s",
                      (long)(s->cur - s->text), what);
}

/* Parses one value at cur into the arena. */
static int value(fbf_json_stream *s, cJSON **out, fbf_error *err)
{
    const char *stop = NULL;
    size_t n = (size_t)(s->end - s->cur);
    cJSON *v = s->keep ? fbf_json_arena_parse_more(s->arena, s->cur, n, &stop)
                       : fbf_json_arena_parse(s->arena, s->cur, n, &stop);
    if (!v) {
        if (errno == ENOMEM)
            return fail(s, -ENOMEM, err, "");
        const char *at = cJSON_GetErrorPtr();
        if (at && at >= s->cur && at <= s->end)
            s->cur = at;
        return fail(s, -EPROTO, err, "not a JSON value");
    }
    int rc = fbf_json_strict_tree(v, err);
    if (rc < 0) {
        s->state = ST_DEAD;
        return rc;
    }
    s->cur = stop;
    *out = v;
    return 0;
}

/* The object's member names so far, NUL-separated: a name seen twice is
 * refused, as the whole parse refuses it (json_strict.h). */
static int new_name(fbf_json_stream *s, const char *key, size_t klen, fbf_error *err)
{
    for (size_t i = 0; i < s->names_len; i += strlen(s->names + i) + 1)
        if (strcmp(s->names + i, key) == 0) {
            s->state = ST_DEAD; /* worded as a whole parse words it */
            return fbf_errorf(err, -EPROTO, "duplicate key \"%.60s\" (one member named twice)",
                              key);
        }
    if (s->names_len + klen + 1 > sizeof s->names)
        return fail(s, -EPROTO, err, "more member names than a Batsim message has");
    memcpy(s->names + s->names_len, key, klen + 1);
    s->names_len += klen + 1;
    return 0;
}

static bool take(fbf_json_stream *s, char c)
{
    skip_ws(s);
    if (s->cur < s->end && *s->cur == c) {
        s->cur++;
        return true;
    }
    return false;
}

/* After the object's closing brace: only whitespace (or a NUL) may follow. */
static int finish(fbf_json_stream *s, fbf_error *err)
{
    skip_ws(s);
    if (s->cur < s->end && *s->cur)
        return fail(s, -EPROTO, err, "unexpected bytes after the message");
    s->state = ST_DONE;
    return 0;
}

/* Reads "key": value pairs until the array member (1) or the end of the
 * object (0). first: no member read yet, so '}' may come at once. */
static int members(fbf_json_stream *s, bool first, fbf_error *err)
{
    if (first && take(s, '}'))
        return finish(s, err);
    for (;;) {
        skip_ws(s);
        const char *at = s->cur;
        cJSON *k;
        int rc = value(s, &k, err);
        if (rc < 0)
            return rc;
        if (!cJSON_IsString(k)) {
            s->cur = at;
            return fail(s, -EPROTO, err, "expected a member name");
        }
        /* The key dies with the next parse: keep a copy. */
        char small[64], *key = small;
        size_t klen = strlen(k->valuestring);
        if (klen >= sizeof small && !(key = malloc(klen + 1)))
            return fail(s, -ENOMEM, err, "");
        memcpy(key, k->valuestring, klen + 1);
        bool is_array = strcmp(key, s->array_key) == 0;
        if ((rc = new_name(s, key, klen, err)) < 0)
            ;
        else if (!take(s, ':'))
            rc = fail(s, -EPROTO, err, "expected ':'");
        else if (is_array && !take(s, '['))
            rc = fail(s, -EPROTO, err, "expected an array");
        else if (is_array) {
            s->state = ST_FIRST;
            rc = 1;
        } else {
            skip_ws(s);
            cJSON *v;
            if ((rc = value(s, &v, err)) == 0 && s->member &&
                (rc = s->member(s->ctx, key, v, err)) < 0)
                s->state = ST_DEAD;
        }
        if (key != small)
            free(key);
        if (rc != 0)
            return rc;
        if (take(s, ','))
            continue;
        if (take(s, '}'))
            return finish(s, err);
        return fail(s, -EPROTO, err, "expected ',' or '}'");
    }
}

int fbf_json_stream_open(fbf_json_stream *s, fbf_json_arena *arena, const char *text,
                         size_t len, const char *array_key, fbf_json_member_fn fn, void *ctx,
                         fbf_error *err)
{
    *s = (fbf_json_stream){.arena = arena, .text = text, .cur = text, .end = text + len,
                           .array_key = array_key, .member = fn, .ctx = ctx};
    int rc = fbf_json_strict_text(text, len, err);
    if (rc < 0) {
        s->state = ST_DEAD;
        return rc;
    }
    if (!take(s, '{'))
        return fail(s, -EPROTO, err, "expected a JSON object");
    return members(s, true, err);
}

/* After ']': the members that follow, then the end. */
static int close_array(fbf_json_stream *s, fbf_error *err)
{
    if (take(s, '}'))
        return finish(s, err);
    if (!take(s, ','))
        return fail(s, -EPROTO, err, "expected ',' or '}'");
    return members(s, false, err);
}

int fbf_json_stream_next(fbf_json_stream *s, cJSON **elem, fbf_error *err)
{
    *elem = NULL;
    switch (s->state) {
    case ST_FIRST:
        if (take(s, ']'))
            return close_array(s, err);
        break;
    case ST_AFTER:
        if (take(s, ']'))
            return close_array(s, err);
        if (!take(s, ','))
            return fail(s, -EPROTO, err, "expected ',' or ']'");
        break;
    case ST_DONE:
        return 0;
    default:
        return fbf_errorf(err, -EPROTO, "read past an error or the end of the array");
    }
    skip_ws(s);
    int rc = value(s, elem, err);
    if (rc < 0)
        return rc;
    s->state = ST_AFTER;
    return 1;
}
