/*
 * jbuf: see jbuf.h. The integer paths avoid snprintf because every event
 * carries times and ids, and snprintf("%f") is several times slower than
 * writing digits; the general double path keeps snprintf + strtod so a
 * printed value is always the exact double.
 */
#include "io/jbuf.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void fbf_jbuf_fini(fbf_jbuf *b)
{
    free(b->p);
    *b = (fbf_jbuf){0};
}

bool fbf_jbuf_reserve(fbf_jbuf *b, size_t n)
{
    if (b->oom)
        return false;
    if (b->cap - b->len > n)
        return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= n)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void fbf_jbuf_str(fbf_jbuf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = 0;
    while (u[n] && u[n] != '"' && u[n] != '\\' && u[n] >= 0x20)
        n++;
    if (!u[n]) { /* the common case: nothing to escape */
        if (!fbf_jbuf_reserve(b, n + 2))
            return;
        b->p[b->len++] = '"';
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len++] = '"';
        b->p[b->len] = '\0';
        return;
    }
    fbf_jbuf_lit(b, "\"");
    for (; *u; u++) {
        char esc[8];
        if (*u == '"' || *u == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*u;
            fbf_jbuf_raw(b, esc, 2);
        } else if (*u < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *u);
            fbf_jbuf_raw(b, esc, 6);
        } else {
            fbf_jbuf_raw(b, (const char *)u, 1);
        }
    }
    fbf_jbuf_lit(b, "\"");
}

/* "00".."99": two digits per division, which halves the divisions of the
 * times and ids that every event carries. */
static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233"
                               "34353637383940414243444546474849505152535455565758596061626364656667"
                               "6869707172737475767778798081828384858687888990919293949596979899";

size_t fbf_jbuf_digits(char *out, uint64_t v)
{
    char tmp[24];
    size_t i = sizeof tmp;
    while (v >= 100) {
        size_t k = (size_t)(v % 100) * 2;
        v /= 100;
        tmp[--i] = pairs[k + 1];
        tmp[--i] = pairs[k];
    }
    if (v >= 10) {
        tmp[--i] = pairs[v * 2 + 1];
        tmp[--i] = pairs[v * 2];
    } else {
        tmp[--i] = (char)('0' + v);
    }
    size_t n = sizeof tmp - i;
    memcpy(out, tmp + i, n);
    return n;
}

void fbf_jbuf_int(fbf_jbuf *b, int64_t v)
{
    if (!fbf_jbuf_reserve(b, 24))
        return;
    char *o = b->p + b->len;
    size_t n = 0;
    uint64_t u = (uint64_t)v;
    if (v < 0) {
        o[n++] = '-';
        u = 0 - u;
    }
    n += fbf_jbuf_digits(o + n, u);
    b->len += n;
    b->p[b->len] = '\0';
}

/* 2^53: beyond it not every integer is a double, so no fast path. */
#define EXACT_INT 9007199254740992.0

void fbf_jbuf_fmt(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < EXACT_INT) {
        snprintf(buf, cap, "%lld", (long long)v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
}

void fbf_jbuf_fmt_json(char *buf, size_t cap, double v)
{
    /* Whole seconds, the common case of trace-driven runs, skip printf,
     * whose floating-point path costs more than the rest of a small reply. */
    if (v == floor(v) && fabs(v) < 1e15 && cap >= 20) {
        long long i = (long long)v;
        size_t o = 0;
        if (i < 0)
            buf[o++] = '-';
        o += fbf_jbuf_digits(buf + o, i < 0 ? 0ULL - (unsigned long long)i : (unsigned long long)i);
        buf[o] = '\0';
        return;
    }
    snprintf(buf, cap, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, cap, "%.17g", v);
}

static void shortest(fbf_jbuf *b, double v)
{
    char buf[40];
    fbf_jbuf_fmt(buf, sizeof buf, v);
    fbf_jbuf_raw(b, buf, strlen(buf));
}

void fbf_jbuf_time(fbf_jbuf *b, double v)
{
    if (v == floor(v) && fabs(v) < EXACT_INT) {
        fbf_jbuf_int(b, (int64_t)v);
        fbf_jbuf_lit(b, ".000000");
        return;
    }
    if (!isfinite(v)) { /* never sent by the simulator; keep JSON valid */
        fbf_jbuf_lit(b, "null"); /* "%f" would print inf, which reads back */
        return;
    }
    char buf[64];
    int n = snprintf(buf, sizeof buf, "%f", v);
    if (n > 0 && (size_t)n < sizeof buf && strtod(buf, NULL) == v) {
        fbf_jbuf_raw(b, buf, (size_t)n);
        return;
    }
    shortest(b, v);
}

void fbf_jbuf_num(fbf_jbuf *b, double v)
{
    if (v == floor(v) && fabs(v) < EXACT_INT) {
        fbf_jbuf_int(b, (int64_t)v);
        return;
    }
    if (!isfinite(v)) {
        fbf_jbuf_lit(b, "null");
        return;
    }
    shortest(b, v);
}

void fbf_jbuf_ranges(fbf_jbuf *b, const fbf_range *r, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (!fbf_jbuf_reserve(b, 48))
            return;
        char *o = b->p + b->len;
        size_t k = 0;
        if (i)
            o[k++] = ' ';
        k += fbf_jbuf_digits(o + k, r[i].lo);
        if (r[i].hi != r[i].lo) {
            o[k++] = '-';
            k += fbf_jbuf_digits(o + k, r[i].hi);
        }
        b->len += k;
        b->p[b->len] = '\0';
    }
}

void fbf_jbuf_json(fbf_jbuf *b, const cJSON *item)
{
    /* cJSON wants 5 spare bytes beyond the text in a caller's buffer. */
    size_t room = 256;
    for (;;) {
        if (!fbf_jbuf_reserve(b, room))
            return;
        size_t avail = b->cap - b->len;
        if (avail > INT_MAX) {
            b->oom = true;
            return;
        }
        if (cJSON_PrintPreallocated((cJSON *)item, b->p + b->len, (int)avail, 0)) {
            b->len += strlen(b->p + b->len);
            return;
        }
        b->p[b->len] = '\0';
        room = avail * 2;
    }
}
