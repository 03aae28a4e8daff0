/*
 * idset: sets of resource ids as sorted arrays of closed ranges; see idset.h.
 *
 * Invariants kept by every public function on return:
 *   - r[0..n) is sorted, r[i].lo <= r[i].hi, r[i].hi + 1 < r[i+1].lo, so the
 *     representation (and hence the formatted string) is unique;
 *   - n <= cap, and r is NULL exactly when cap == 0;
 *   - on any error the observable set r[0..n) is unchanged (cap may grow).
 *
 * Parse and format run on every protocol message: parse writes tokens into
 * the spare capacity after r[n) (no scratch allocation, and a bad token late
 * in the string has clobbered nothing) and format writes digits by hand.
 * union/subtract merge backwards into the tail of an n + m buffer so they
 * work in place in one pass; only the window [p, q) of dst that src can
 * touch is merged range by range, the untouched suffix moves by memmove.
 * Arithmetic that can reach 2^32 is done in uint64_t because add_range
 * accepts the full uint32_t domain.
 */
#include "engine/idset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fbf_idset_init(fbf_idset *s)
{
    *s = (fbf_idset){0};
}

void fbf_idset_fini(fbf_idset *s)
{
    free(s->r);
    fbf_idset_init(s);
}

void fbf_idset_clear(fbf_idset *s)
{
    s->n = 0;
}

/* Geometric growth keeps repeated appends amortised O(1). */
static int fbf_idset_reserve(fbf_idset *s, uint64_t need)
{
    if (need <= s->cap)
        return 0;
    if (need > UINT32_MAX || need > SIZE_MAX / sizeof(fbf_range))
        return -ENOMEM;
    uint64_t cap = s->cap ? s->cap : 4;
    while (cap < need)
        cap *= 2;
    if (cap > UINT32_MAX)
        cap = UINT32_MAX;
    fbf_range *r = realloc(s->r, (size_t)cap * sizeof(fbf_range));
    if (!r)
        return -ENOMEM;
    s->r = r;
    s->cap = (uint32_t)cap;
    return 0;
}

/* First index i in [from, s->n) with r[i].lo > id, or s->n. */
static uint32_t fbf_idset_upper_lo(const fbf_idset *s, uint32_t from,
                                   uint64_t id)
{
    uint32_t lo = from, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->r[mid].lo <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* First index i in [from, s->n) with r[i].hi >= id, or s->n. Ranges are
 * disjoint, so only the range just before the first lo > id can qualify. */
static uint32_t fbf_idset_lower_hi(const fbf_idset *s, uint32_t from,
                                   uint32_t id)
{
    uint32_t i = fbf_idset_upper_lo(s, from, id);
    return i > from && s->r[i - 1].hi >= id ? i - 1 : i;
}

static int fbf_idset_bad_token(fbf_error *err, const char *str,
                               const char *tok, const char *why)
{
    size_t len = strcspn(tok, " ");
    /* Cap the echo so a megabyte of garbage still fits a one-line error. */
    int shown = len > 40 ? 40 : (int)len;
    return fbf_errorf(err, -EINVAL,
                      "idset: bad token \"%.*s%s\" at offset %zu: %s", shown,
                      tok, len > 40 ? "..." : "", (size_t)(tok - str), why);
}

/* Reads one strict decimal id at *pp. Returns NULL on success, else why. */
static const char *fbf_idset_parse_id(const char **pp, uint32_t *out)
{
    const char *p = *pp;
    if (*p < '0' || *p > '9')
        return "expected a decimal digit";
    if (*p == '0' && p[1] >= '0' && p[1] <= '9')
        return "leading zero";
    uint64_t v = 0;
    do {
        v = v * 10 + (uint64_t)(*p++ - '0');
        /* Bail out at once so v can never overflow however long the run. */
        if (v > FBF_IDSET_MAX_ID)
            return "id exceeds 2147483647";
    } while (*p >= '0' && *p <= '9');
    *out = (uint32_t)v;
    *pp = p;
    return NULL;
}

static int fbf_idset_cmp_lo(const void *a, const void *b)
{
    uint32_t x = ((const fbf_range *)a)->lo, y = ((const fbf_range *)b)->lo;
    return (x > y) - (x < y);
}

int fbf_idset_parse(fbf_idset *s, const char *str, fbf_error *err)
{
    const uint32_t base = s->n; /* new ranges go after the live ones */
    uint32_t k = 0;             /* ranges written so far at r[base..) */
    bool sorted = true;
    const char *p = str;

    if (*p == '\0') {
        s->n = 0;
        return 0;
    }
    for (;;) {
        const char *tok = p;
        if (*p == ' ' || *p == '\0')
            return fbf_errorf(err, -EINVAL,
                              "idset: empty token at offset %zu "
                              "(leading, trailing or double space)",
                              (size_t)(p - str));
        uint32_t lo, hi;
        const char *why = fbf_idset_parse_id(&p, &lo);
        if (why)
            return fbf_idset_bad_token(err, str, tok, why);
        hi = lo;
        if (*p == '-') {
            p++;
            if ((why = fbf_idset_parse_id(&p, &hi)))
                return fbf_idset_bad_token(err, str, tok, why);
            if (hi < lo)
                return fbf_idset_bad_token(err, str, tok,
                                           "range end below its start");
        }
        if (*p != ' ' && *p != '\0')
            return fbf_idset_bad_token(err, str, tok, "unexpected character");

        /* Merge with the previous token when it touches: canonical input
         * then never needs the sort below. */
        fbf_range *last = k ? &s->r[base + k - 1] : NULL;
        if (last && lo >= last->lo && (uint64_t)lo <= (uint64_t)last->hi + 1) {
            if (hi > last->hi)
                last->hi = hi;
        } else {
            if (last && lo < last->lo)
                sorted = false;
            int rc = fbf_idset_reserve(s, (uint64_t)base + k + 1);
            if (rc < 0)
                return fbf_errorf(err, rc, "idset: out of memory parsing");
            s->r[base + k++] = (fbf_range){lo, hi};
        }
        if (*p == '\0')
            break;
        p++;
    }

    if (base)
        memmove(s->r, s->r + base, (size_t)k * sizeof(fbf_range));
    if (!sorted) {
        qsort(s->r, k, sizeof(fbf_range), fbf_idset_cmp_lo);
        uint32_t w = 0;
        for (uint32_t i = 1; i < k; i++) {
            if ((uint64_t)s->r[i].lo <= (uint64_t)s->r[w].hi + 1) {
                if (s->r[i].hi > s->r[w].hi)
                    s->r[w].hi = s->r[i].hi;
            } else {
                s->r[++w] = s->r[i];
            }
        }
        k = w + 1;
    }
    s->n = k;
    return 0;
}

/* Writes v in decimal at dst (no NUL); returns the digit count. */
static size_t fbf_idset_put_u32(char *dst, uint32_t v)
{
    size_t len = 1;
    for (uint32_t t = v; t >= 10; t /= 10)
        len++;
    for (size_t i = len; i-- > 0; v /= 10)
        dst[i] = (char)('0' + v % 10);
    return len;
}

/* Longest token: ' ' + 10 digits + '-' + 10 digits. */
#define FBF_IDSET_TOKEN_MAX 22

size_t fbf_idset_format(const fbf_idset *s, char *buf, size_t cap)
{
    size_t pos = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        char tmp[FBF_IDSET_TOKEN_MAX];
        /* Write straight into buf while a whole token plus NUL fits; only
         * the final, possibly truncated, tokens go through tmp. */
        bool direct = cap > pos && cap - pos > FBF_IDSET_TOKEN_MAX;
        char *d = direct ? buf + pos : tmp;
        size_t len = 0;
        if (i)
            d[len++] = ' ';
        len += fbf_idset_put_u32(d + len, s->r[i].lo);
        if (s->r[i].hi != s->r[i].lo) {
            d[len++] = '-';
            len += fbf_idset_put_u32(d + len, s->r[i].hi);
        }
        if (!direct && pos + 1 < cap) {
            size_t room = cap - 1 - pos;
            memcpy(buf + pos, tmp, len < room ? len : room);
        }
        pos += len;
    }
    if (cap)
        buf[pos < cap ? pos : cap - 1] = '\0';
    return pos;
}

char *fbf_idset_to_string(const fbf_idset *s)
{
    size_t len = fbf_idset_format(s, NULL, 0);
    char *str = malloc(len + 1);
    if (str)
        fbf_idset_format(s, str, len + 1);
    return str;
}

uint64_t fbf_idset_count(const fbf_idset *s)
{
    uint64_t c = 0;
    for (uint32_t i = 0; i < s->n; i++)
        c += (uint64_t)s->r[i].hi - s->r[i].lo + 1;
    return c;
}

int fbf_idset_copy(fbf_idset *dst, const fbf_idset *src)
{
    if (dst == src)
        return 0;
    int rc = fbf_idset_reserve(dst, src->n);
    if (rc < 0)
        return rc;
    if (src->n)
        memcpy(dst->r, src->r, (size_t)src->n * sizeof(fbf_range));
    dst->n = src->n;
    return 0;
}

bool fbf_idset_equal(const fbf_idset *a, const fbf_idset *b)
{
    /* Canonical form makes set equality plain array equality. */
    return a->n == b->n &&
           (a->n == 0 ||
            memcmp(a->r, b->r, (size_t)a->n * sizeof(fbf_range)) == 0);
}

bool fbf_idset_contains(const fbf_idset *s, uint32_t id)
{
    uint32_t i = fbf_idset_lower_hi(s, 0, id);
    return i < s->n && s->r[i].lo <= id;
}

bool fbf_idset_contains_all(const fbf_idset *s, const fbf_idset *sub)
{
    /* Maximal ranges mean each range of sub must sit inside one range of s. */
    uint32_t j = 0;
    for (uint32_t i = 0; i < sub->n; i++) {
        j = fbf_idset_lower_hi(s, j, sub->r[i].lo);
        if (j == s->n || s->r[j].lo > sub->r[i].lo ||
            s->r[j].hi < sub->r[i].hi)
            return false;
    }
    return true;
}

bool fbf_idset_intersects(const fbf_idset *a, const fbf_idset *b)
{
    /* Walk the smaller set and search the larger: O(min log max). */
    if (a->n > b->n)
        return fbf_idset_intersects(b, a);
    uint32_t j = 0;
    for (uint32_t i = 0; i < a->n; i++) {
        j = fbf_idset_lower_hi(b, j, a->r[i].lo);
        if (j == b->n)
            return false;
        if (b->r[j].lo <= a->r[i].hi)
            return true;
    }
    return false;
}

int fbf_idset_add_range(fbf_idset *s, uint32_t lo, uint32_t hi)
{
    if (lo > hi)
        return -EINVAL;
    /* [i, j) are the ranges that overlap or touch [lo, hi]. */
    uint32_t i = fbf_idset_lower_hi(s, 0, lo ? lo - 1 : 0);
    uint32_t j = fbf_idset_upper_lo(s, i, (uint64_t)hi + 1);
    if (i == j) {
        int rc = fbf_idset_reserve(s, (uint64_t)s->n + 1);
        if (rc < 0)
            return rc;
        memmove(s->r + i + 1, s->r + i, (size_t)(s->n - i) * sizeof(fbf_range));
        s->r[i] = (fbf_range){lo, hi};
        s->n++;
        return 0;
    }
    if (s->r[i].lo > lo)
        s->r[i].lo = lo;
    s->r[i].hi = s->r[j - 1].hi > hi ? s->r[j - 1].hi : hi;
    memmove(s->r + i + 1, s->r + j, (size_t)(s->n - j) * sizeof(fbf_range));
    s->n -= j - i - 1;
    return 0;
}

int fbf_idset_union(fbf_idset *dst, const fbf_idset *src)
{
    if (dst == src || src->n == 0)
        return 0;
    if (dst->n == 0)
        return fbf_idset_copy(dst, src);
    if (src->n == 1)
        return fbf_idset_add_range(dst, src->r[0].lo, src->r[0].hi);

    const uint32_t n = dst->n, m = src->n;
    int rc = fbf_idset_reserve(dst, (uint64_t)n + m);
    if (rc < 0)
        return rc;
    /* Only dst[p, q) can meet src: the rest ends before src's first id - 1
     * or starts after its last id + 1. */
    uint32_t first = src->r[0].lo;
    uint32_t p = fbf_idset_lower_hi(dst, 0, first ? first - 1 : 0);
    uint32_t q = fbf_idset_upper_lo(dst, p, (uint64_t)src->r[m - 1].hi + 1);
    fbf_range *r = dst->r;
    memmove(r + q + m, r + q, (size_t)(n - q) * sizeof(fbf_range));
    const uint32_t end = q + m;
    uint32_t ia = q, ib = m, f = end;
    /* Emit by descending hi into r[f, end). Each step consumes one input
     * and writes at most one slot, so f >= ia + ib and no unread dst range
     * is ever overwritten. */
    while (ia > p || ib > 0) {
        fbf_range x;
        if (ia > p && (ib == 0 || r[ia - 1].hi >= src->r[ib - 1].hi))
            x = r[--ia];
        else
            x = src->r[--ib];
        if (f < end && (uint64_t)x.hi + 1 >= r[f].lo) {
            if (x.lo < r[f].lo)
                r[f].lo = x.lo;
        } else {
            r[--f] = x;
        }
    }
    memmove(r + p, r + f, (size_t)(n + m - f) * sizeof(fbf_range));
    dst->n = p + (n + m - f);
    return 0;
}

int fbf_idset_subtract(fbf_idset *dst, const fbf_idset *src)
{
    if (dst == src) {
        dst->n = 0;
        return 0;
    }
    if (src->n == 0 || dst->n == 0)
        return 0;

    const uint32_t n = dst->n, m = src->n;
    /* Only dst[p, q) overlaps the span of src. */
    uint32_t p = fbf_idset_lower_hi(dst, 0, src->r[0].lo);
    uint32_t q = fbf_idset_upper_lo(dst, p, src->r[m - 1].hi);
    if (p == q)
        return 0;
    int rc = fbf_idset_reserve(dst, (uint64_t)n + m);
    if (rc < 0)
        return rc;
    fbf_range *r = dst->r;
    const fbf_range *b = src->r;
    memmove(r + q + m, r + q, (size_t)(n - q) * sizeof(fbf_range));
    uint32_t ia = q, ib = m, f = q + m;
    /* Backwards again: a dst range yields at most 1 + (src ranges it
     * consumes) pieces, so f >= ia + ib holds and the pass is in place. */
    while (ia > p) {
        fbf_range cur = r[--ia];
        bool left = true; /* part [cur.lo, cur.hi] still to emit */
        while (ib > 0 && b[ib - 1].lo > cur.hi)
            ib--;
        while (ib > 0 && b[ib - 1].hi >= cur.lo) {
            fbf_range cut = b[ib - 1];
            if (cut.hi < cur.hi)
                r[--f] = (fbf_range){cut.hi + 1, cur.hi};
            if (cut.lo > cur.lo) {
                /* cut lies inside cur, so no lower dst range can meet it. */
                cur.hi = cut.lo - 1;
                ib--;
            } else {
                /* cut may reach into lower dst ranges: keep it. */
                left = false;
                break;
            }
        }
        if (left)
            r[--f] = cur;
    }
    memmove(r + p, r + f, (size_t)(n + m - f) * sizeof(fbf_range));
    dst->n = p + (n + m - f);
    return 0;
}

int fbf_idset_take_lowest(fbf_idset *from, uint32_t n, fbf_idset *out)
{
    if (from == out)
        return -EINVAL;
    if (n == 0) {
        out->n = 0;
        return 0;
    }
    /* Ranges [0, k) go whole; range k gives its first `need` ids. */
    uint64_t need = n;
    uint32_t k = 0;
    for (; k < from->n; k++) {
        uint64_t len = (uint64_t)from->r[k].hi - from->r[k].lo + 1;
        if (len >= need)
            break;
        need -= len;
    }
    if (k == from->n)
        return -ENOSPC;
    int rc = fbf_idset_reserve(out, (uint64_t)k + 1);
    if (rc < 0)
        return rc;
    fbf_range *r = from->r;
    memcpy(out->r, r, ((size_t)k + 1) * sizeof(fbf_range));
    out->r[k].hi = (uint32_t)(r[k].lo + need - 1);
    out->n = k + 1;
    /* The one memmove of the tail is the only O(n) part of a job start. */
    uint32_t gone = k;
    if (out->r[k].hi == r[k].hi)
        gone++;
    else
        r[k].lo = out->r[k].hi + 1;
    memmove(r, r + gone, (size_t)(from->n - gone) * sizeof(fbf_range));
    from->n -= gone;
    return 0;
}
