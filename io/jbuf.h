/*
 * jbuf: a growable text buffer that JSON messages are written into, token
 * by token: fastbf's replies (io/bv4_reply.c) and fastbf-replay's
 * messages (tools/replay).
 *
 * Why not a cJSON tree on these paths: building one costs a malloc per
 * node and printing walks it again, on the hottest path of every
 * exchange; the messages are flat and their shape is fixed, so appending
 * text is both simpler and faster. Batsim also prints every time with
 * "%f" (6 decimals) and workload integers as integers, which cJSON's
 * number printer cannot do. cJSON still parses every message, and prints
 * the rare events built as trees (fbf_jbuf_json).
 *
 * Invariants: p[0..len) is the text written so far; p is NUL-terminated
 * whenever cap > 0. An allocation failure sets oom and turns every later
 * append into a no-op, so callers check oom once per message.
 * Every number written reads back (strtod) as the very double given.
 */
#ifndef FBF_IO_JBUF_H
#define FBF_IO_JBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "engine/idset.h"

typedef struct fbf_jbuf {
    char *p;
    size_t len, cap;
    bool oom;
} fbf_jbuf;

void fbf_jbuf_fini(fbf_jbuf *b);
/* Ensures room for n more bytes (plus the NUL); false on ENOMEM. */
bool fbf_jbuf_reserve(fbf_jbuf *b, size_t n);

static inline void fbf_jbuf_reset(fbf_jbuf *b)
{
    b->len = 0;
    b->oom = false;
    if (b->cap)
        b->p[0] = '\0';
}

static inline void fbf_jbuf_raw(fbf_jbuf *b, const char *s, size_t n)
{
    if (b->cap - b->len <= n && !fbf_jbuf_reserve(b, n))
        return;
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

/* A string literal, without strlen. */
#define fbf_jbuf_lit(b, s) fbf_jbuf_raw((b), "" s, sizeof(s) - 1)

/* s as a JSON string (quotes added, escaped as needed). */
void fbf_jbuf_str(fbf_jbuf *b, const char *s);
/* A time as Batsim prints it ("%f"), with more digits only when six
 * decimals would not read back as the same double. */
void fbf_jbuf_time(fbf_jbuf *b, double v);
/* A workload number: integers as integers, others in the fewest digits
 * that read back exactly. */
void fbf_jbuf_num(fbf_jbuf *b, double v);
void fbf_jbuf_int(fbf_jbuf *b, int64_t v);
/* The decimal digits of v into out (no sign, no NUL; out has room for 20):
 * their count. Several times cheaper than snprintf("%llu"). */
size_t fbf_jbuf_digits(char *out, uint64_t v);
/* v in the fewest digits that read back exactly, into buf (for messages). */
void fbf_jbuf_fmt(char *buf, size_t cap, double v);
/* v as cJSON prints a number (integers below 1e15 as integers, else
 * "%.15g", or "%.17g" when that would not read back exactly), into buf
 * (cap >= 32): what every number of a reply looks like. */
void fbf_jbuf_fmt_json(char *buf, size_t cap, double v);
/* An interval set "0-3 8 10-11" from n normalised ranges (no quotes). */
void fbf_jbuf_ranges(fbf_jbuf *b, const fbf_range *r, uint32_t n);
/* item printed unformatted, as cJSON prints it. */
void fbf_jbuf_json(fbf_jbuf *b, const cJSON *item);

#endif
