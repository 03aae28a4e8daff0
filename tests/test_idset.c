/*
 * test_idset: contract tests for engine/idset, plus a randomized comparison
 * of every operation against a plain bitmap over ids < 300.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/idset.h"

/* Parses str, which must be valid, into s (which must be initialised). */
static void parse_into(fbf_idset *s, const char *str)
{
    fbf_error err = {{0}};
    int rc = fbf_idset_parse(s, str, &err);
    if (rc != 0)
        fail_msg("parse(\"%s\") = %d: %s", str, rc, err.text);
}

static void assert_fmt(const fbf_idset *s, const char *want)
{
    char buf[512];
    size_t len = fbf_idset_format(s, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
}

static void check_parse(const char *in, const char *want)
{
    fbf_idset s;
    fbf_idset_init(&s);
    parse_into(&s, in);
    assert_fmt(&s, want);
    fbf_idset_fini(&s);
}

/* Parse must fail with -EINVAL, name `needle` in the message, and leave a
 * previously parsed set untouched. */
static void check_bad(const char *in, const char *needle)
{
    fbf_idset s;
    fbf_error err = {{0}};
    fbf_idset_init(&s);
    parse_into(&s, "4-6 9");
    int rc = fbf_idset_parse(&s, in, &err);
    if (rc != -EINVAL)
        fail_msg("parse(\"%s\") = %d, want -EINVAL", in, rc);
    if (!strstr(err.text, needle))
        fail_msg("parse(\"%s\"): message \"%s\" lacks \"%s\"", in, err.text,
                 needle);
    assert_fmt(&s, "4-6 9");
    fbf_idset_fini(&s);
}

static void test_parse_canonical(void **state)
{
    (void)state;
    check_parse("0", "0");
    check_parse("0-3 8 10-11", "0-3 8 10-11");
    check_parse("2147483647", "2147483647");
    check_parse("0-2147483647", "0-2147483647");
    check_parse("1 2 4-8", "1-2 4-8");
}

static void test_parse_noncanonical(void **state)
{
    (void)state;
    check_parse("3 0-2", "0-3");
    check_parse("5-5", "5");
    check_parse("0-4 2-6", "0-6");
    check_parse("0-2 3-5", "0-5");
    check_parse("7 1 4", "1 4 7");
    check_parse("10-20 0-30 5", "0-30");
    check_parse("9 8 7 6", "6-9");
    check_parse("1 1 1", "1");
    check_parse("20-25 1-3 5 4 10-19", "1-5 10-25");
    check_parse("2147483647 0", "0 2147483647");
}

static void test_parse_empty_and_reuse(void **state)
{
    (void)state;
    fbf_idset s;
    fbf_idset_init(&s);
    parse_into(&s, "");
    assert_int_equal(s.n, 0);
    assert_int_equal(fbf_idset_count(&s), 0);
    assert_fmt(&s, "");
    /* Parse replaces, it does not accumulate. */
    parse_into(&s, "1-3 9");
    parse_into(&s, "5 0");
    assert_fmt(&s, "0 5");
    parse_into(&s, "");
    assert_int_equal(s.n, 0);
    fbf_idset_fini(&s);
}

static void test_parse_malformed(void **state)
{
    (void)state;
    check_bad(" 1", "empty token at offset 0");
    check_bad("1 ", "empty token at offset 2");
    check_bad("1  2", "empty token at offset 2");
    check_bad(" ", "empty token");
    check_bad("3-1", "\"3-1\"");
    check_bad("0 3-1", "at offset 2");
    check_bad("-1", "\"-1\"");
    check_bad("+2", "\"+2\"");
    check_bad("01", "\"01\"");
    check_bad("1-01", "\"1-01\"");
    check_bad("00", "\"00\"");
    check_bad("a", "\"a\"");
    check_bad("1 a", "\"a\"");
    check_bad("1a", "\"1a\"");
    check_bad("1-", "\"1-\"");
    check_bad("1--2", "\"1--2\"");
    check_bad("1-2-3", "\"1-2-3\"");
    check_bad("1\t2", "\"1\t2\"");
    check_bad("\t1", "\"\t1\"");
    check_bad("1,2", "\"1,2\"");
    check_bad("2147483648", "\"2147483648\"");
    check_bad("0-2147483648", "\"0-2147483648\"");
    check_bad("4294967296", "\"4294967296\"");
    check_bad("99999999999999999999999999999999", "\"9999999999");
    check_bad("1 18446744073709551617", "\"18446744073709551617\"");
    check_bad("1 2 18446744073709551617-3", "at offset 4");
}

static void test_format_truncation(void **state)
{
    (void)state;
    fbf_idset s;
    fbf_idset_init(&s);
    parse_into(&s, "0-3 8 10-11"); /* 11 chars */
    char buf[32];

    assert_int_equal(fbf_idset_format(&s, NULL, 0), 11);

    memset(buf, 'x', sizeof buf);
    assert_int_equal(fbf_idset_format(&s, buf, 0), 11);
    assert_int_equal(buf[0], 'x');

    memset(buf, 'x', sizeof buf);
    assert_int_equal(fbf_idset_format(&s, buf, 1), 11);
    assert_string_equal(buf, "");

    for (size_t cap = 2; cap <= 13; cap++) {
        memset(buf, 'x', sizeof buf);
        assert_int_equal(fbf_idset_format(&s, buf, cap), 11);
        size_t keep = cap - 1 < 11 ? cap - 1 : 11;
        assert_int_equal(strlen(buf), keep);
        assert_memory_equal(buf, "0-3 8 10-11", keep);
        assert_int_equal(buf[keep + 1], 'x'); /* nothing past the NUL */
    }

    fbf_idset_clear(&s);
    memset(buf, 'x', sizeof buf);
    assert_int_equal(fbf_idset_format(&s, buf, sizeof buf), 0);
    assert_string_equal(buf, "");

    /* Longest tokens (" N-M" with 10-digit bounds is 22 bytes), truncated at
     * every position into exact-size heap buffers so a one-byte overrun is
     * caught by the sentinel or by ASan. */
    parse_into(&s, "2147483645 1000000000-1000000001 2000000000-2147483643");
    const char *want = "1000000000-1000000001 2000000000-2147483643 2147483645";
    size_t wl = strlen(want);
    for (size_t cap = 1; cap <= wl + 1; cap++) {
        char *b2 = malloc(cap + 1);
        assert_non_null(b2);
        b2[cap] = 'Z';
        assert_int_equal(fbf_idset_format(&s, b2, cap), wl);
        assert_int_equal(strlen(b2), cap - 1);
        assert_memory_equal(b2, want, cap - 1);
        assert_int_equal(b2[cap], 'Z');
        free(b2);
    }

    char *str = fbf_idset_to_string(&s);
    assert_non_null(str);
    assert_string_equal(str, want);
    free(str);
    fbf_idset_fini(&s);
}

static void test_format_round_trip(void **state)
{
    (void)state;
    const char *cases[] = {"", "0", "0-1", "1 3 5 7", "0-3 8 10-11",
                           "100-199 1000000 2000000000-2147483647"};
    fbf_idset a, b;
    fbf_idset_init(&a);
    fbf_idset_init(&b);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        parse_into(&a, cases[i]);
        char *str = fbf_idset_to_string(&a);
        assert_non_null(str);
        assert_string_equal(str, cases[i]);
        parse_into(&b, str);
        assert_true(fbf_idset_equal(&a, &b));
        free(str);
    }
    fbf_idset_fini(&a);
    fbf_idset_fini(&b);
}

static void test_count(void **state)
{
    (void)state;
    fbf_idset s;
    fbf_idset_init(&s);
    assert_int_equal(fbf_idset_count(&s), 0);
    parse_into(&s, "0-3 8 10-11");
    assert_int_equal(fbf_idset_count(&s), 7);
    parse_into(&s, "0-2147483647");
    assert_int_equal(fbf_idset_count(&s), 2147483648u);
    fbf_idset_fini(&s);
}

static void check_union(const char *a, const char *b, const char *want)
{
    fbf_idset x, y;
    fbf_idset_init(&x);
    fbf_idset_init(&y);
    parse_into(&x, a);
    parse_into(&y, b);
    assert_int_equal(fbf_idset_union(&x, &y), 0);
    assert_fmt(&x, want);
    fbf_idset_fini(&x);
    fbf_idset_fini(&y);
}

static void test_union(void **state)
{
    (void)state;
    check_union("", "", "");
    check_union("", "1-3", "1-3");
    check_union("1-3", "", "1-3");
    check_union("0-3", "4-6", "0-6");
    check_union("0-3", "5-6", "0-3 5-6");
    check_union("5-6", "0-3", "0-3 5-6");
    check_union("0 2 4 6", "1 3 5", "0-6");
    check_union("0 2 4 6", "1 5", "0-2 4-6");
    check_union("10-20 30-40", "0-1 15-35 50", "0-1 10-40 50");
    check_union("0-100", "5 7 9", "0-100");
    check_union("5 7 9", "0-100", "0-100");
    check_union("0-1 100-101 200", "50 52 150", "0-1 50 52 100-101 150 200");
    check_union("0-1 100-101", "102 104", "0-1 100-102 104");

    fbf_idset s;
    fbf_idset_init(&s);
    parse_into(&s, "1 3");
    assert_int_equal(fbf_idset_union(&s, &s), 0);
    assert_fmt(&s, "1 3");
    fbf_idset_fini(&s);
}

static void test_add_range(void **state)
{
    (void)state;
    fbf_idset s;
    fbf_idset_init(&s);
    assert_int_equal(fbf_idset_add_range(&s, 5, 4), -EINVAL);
    assert_int_equal(fbf_idset_add_range(&s, 10, 12), 0);
    assert_int_equal(fbf_idset_add_range(&s, 0, 0), 0);
    assert_int_equal(fbf_idset_add_range(&s, 20, 20), 0);
    assert_fmt(&s, "0 10-12 20");
    assert_int_equal(fbf_idset_add_range(&s, 13, 19), 0);
    assert_fmt(&s, "0 10-20");
    assert_int_equal(fbf_idset_add_range(&s, 1, 9), 0);
    assert_fmt(&s, "0-20");
    assert_int_equal(fbf_idset_add_range(&s, 0, UINT32_MAX), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(fbf_idset_count(&s), 4294967296ull);
    fbf_idset_fini(&s);
}

static void check_subtract(const char *a, const char *b, const char *want)
{
    fbf_idset x, y;
    fbf_idset_init(&x);
    fbf_idset_init(&y);
    parse_into(&x, a);
    parse_into(&y, b);
    assert_int_equal(fbf_idset_subtract(&x, &y), 0);
    assert_fmt(&x, want);
    fbf_idset_fini(&x);
    fbf_idset_fini(&y);
}

static void test_subtract(void **state)
{
    (void)state;
    check_subtract("", "1", "");
    check_subtract("0-9", "", "0-9");
    check_subtract("0-9", "0-9", "");
    check_subtract("0-9", "0-20", "");
    check_subtract("0-9", "3", "0-2 4-9");
    check_subtract("0-9", "0", "1-9");
    check_subtract("0-9", "9", "0-8");
    check_subtract("0-9", "1 3 5 7", "0 2 4 6 8-9");
    check_subtract("0-3 8 10-11", "2-10", "0-1 11");
    check_subtract("0-3 8 10-11", "20-30", "0-3 8 10-11");
    check_subtract("10-20", "0-5 25", "10-20");
    check_subtract("0-4 6-9 11-14", "3-12", "0-2 13-14");
    check_subtract("0 2 4 6 8", "1 3 5 7", "0 2 4 6 8");

    fbf_idset s;
    fbf_idset_init(&s);
    parse_into(&s, "1 3");
    assert_int_equal(fbf_idset_subtract(&s, &s), 0);
    assert_fmt(&s, "");
    fbf_idset_fini(&s);
}

static void test_queries(void **state)
{
    (void)state;
    fbf_idset s, t, e;
    fbf_idset_init(&s);
    fbf_idset_init(&t);
    fbf_idset_init(&e);
    parse_into(&s, "0-3 8 10-11");

    const uint32_t in[] = {0, 1, 3, 8, 10, 11};
    const uint32_t out[] = {4, 7, 9, 12, 1000, FBF_IDSET_MAX_ID};
    for (size_t i = 0; i < 6; i++) {
        assert_true(fbf_idset_contains(&s, in[i]));
        assert_false(fbf_idset_contains(&s, out[i]));
    }
    assert_false(fbf_idset_contains(&e, 0));

    parse_into(&t, "1-2 10");
    assert_true(fbf_idset_contains_all(&s, &t));
    assert_true(fbf_idset_intersects(&s, &t));
    parse_into(&t, "3-4");
    assert_false(fbf_idset_contains_all(&s, &t));
    assert_true(fbf_idset_intersects(&s, &t));
    parse_into(&t, "4-7 9 12-20");
    assert_false(fbf_idset_contains_all(&s, &t));
    assert_false(fbf_idset_intersects(&s, &t));
    assert_false(fbf_idset_intersects(&t, &s));
    parse_into(&t, "0-11");
    assert_false(fbf_idset_contains_all(&s, &t));
    assert_true(fbf_idset_contains_all(&t, &s));
    assert_true(fbf_idset_intersects(&t, &s));

    assert_true(fbf_idset_contains_all(&s, &e));
    assert_true(fbf_idset_contains_all(&e, &e));
    assert_false(fbf_idset_contains_all(&e, &s));
    assert_false(fbf_idset_intersects(&s, &e));
    assert_false(fbf_idset_intersects(&e, &s));
    assert_true(fbf_idset_contains_all(&s, &s));
    assert_true(fbf_idset_intersects(&s, &s));

    fbf_idset_fini(&s);
    fbf_idset_fini(&t);
    fbf_idset_fini(&e);
}

static void test_equal_copy(void **state)
{
    (void)state;
    fbf_idset a, b;
    fbf_idset_init(&a);
    fbf_idset_init(&b);
    assert_true(fbf_idset_equal(&a, &b));
    parse_into(&a, "3 0-2 7");
    parse_into(&b, "0-3 7");
    assert_true(fbf_idset_equal(&a, &b));
    parse_into(&b, "0-3 8");
    assert_false(fbf_idset_equal(&a, &b));
    parse_into(&b, "0-3");
    assert_false(fbf_idset_equal(&a, &b));

    assert_int_equal(fbf_idset_copy(&b, &a), 0);
    assert_true(fbf_idset_equal(&a, &b));
    assert_fmt(&b, "0-3 7");
    /* A deep copy: changing the copy leaves the original alone. */
    assert_int_equal(fbf_idset_add_range(&b, 4, 6), 0);
    assert_fmt(&b, "0-7");
    assert_fmt(&a, "0-3 7");

    fbf_idset_clear(&a);
    assert_int_equal(fbf_idset_copy(&b, &a), 0);
    assert_fmt(&b, "");
    assert_int_equal(fbf_idset_copy(&b, &b), 0);
    fbf_idset_fini(&a);
    fbf_idset_fini(&b);
}

static void check_take(const char *from, uint32_t n, const char *want_out,
                       const char *want_left)
{
    fbf_idset f, o;
    fbf_idset_init(&f);
    fbf_idset_init(&o);
    parse_into(&f, from);
    parse_into(&o, "500-600"); /* replaced, not merged */
    assert_int_equal(fbf_idset_take_lowest(&f, n, &o), 0);
    assert_fmt(&o, want_out);
    assert_fmt(&f, want_left);
    fbf_idset_fini(&f);
    fbf_idset_fini(&o);
}

static void test_take_lowest(void **state)
{
    (void)state;
    check_take("0-9", 0, "", "0-9");
    check_take("0-9", 3, "0-2", "3-9");
    check_take("0-9", 10, "0-9", "");
    check_take("0-3 8 10-11", 4, "0-3", "8 10-11");
    check_take("0-3 8 10-11", 5, "0-3 8", "10-11");
    check_take("0-3 8 10-11", 6, "0-3 8 10", "11");
    check_take("0-3 8 10-11", 7, "0-3 8 10-11", "");
    check_take("1 3 5 7 9", 3, "1 3 5", "7 9");
    check_take("2147483640-2147483647", 8, "2147483640-2147483647", "");

    fbf_idset f, o;
    fbf_idset_init(&f);
    fbf_idset_init(&o);
    parse_into(&f, "0-3 8 10-11");
    parse_into(&o, "42");
    assert_int_equal(fbf_idset_take_lowest(&f, 8, &o), -ENOSPC);
    assert_fmt(&f, "0-3 8 10-11");
    assert_fmt(&o, "42");
    fbf_idset_clear(&f);
    assert_int_equal(fbf_idset_take_lowest(&f, 1, &o), -ENOSPC);
    assert_fmt(&o, "42");

    /* Repeated takes drain a fragmented set in order. */
    parse_into(&f, "0 2 4 6 8 10 12 14 16 18");
    for (uint32_t i = 0; i < 10; i++) {
        char want[8];
        snprintf(want, sizeof want, "%u", 2 * i);
        assert_int_equal(fbf_idset_take_lowest(&f, 1, &o), 0);
        assert_fmt(&o, want);
        assert_int_equal(f.n, 9 - i);
    }
    fbf_idset_fini(&f);
    fbf_idset_fini(&o);
}

/* ---- randomized comparison against a bitmap --------------------------- */

#define NB 300

typedef struct {
    unsigned char b[NB];
} bitmap;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % bound);
}

/* A random set with a random density inside a random window, so sparse
 * and dense shapes, ranges touching at their ends, and operands covering
 * only a prefix, middle or suffix of the other all occur. */
static void random_set(fbf_idset *s, bitmap *m)
{
    uint32_t density = rnd(101);
    uint32_t from = rnd(2) ? 0 : rnd(NB);
    uint32_t to = rnd(2) ? NB : from + rnd(NB - from + 1);
    memset(m, 0, sizeof *m);
    fbf_idset_clear(s);
    for (uint32_t i = from; i < to; i++) {
        if (rnd(100) < density) {
            m->b[i] = 1;
            assert_int_equal(fbf_idset_add_range(s, i, i), 0);
        }
    }
}

/* Checks the invariants and that s holds exactly the ids of m, then that the
 * formatted string matches one built independently from m. */
static void check_same(const fbf_idset *s, const bitmap *m)
{
    for (uint32_t i = 0; i < s->n; i++) {
        assert_true(s->r[i].lo <= s->r[i].hi);
        assert_true(s->r[i].hi < NB);
        if (i)
            assert_true(s->r[i - 1].hi + 1 < s->r[i].lo);
    }
    bitmap got = {{0}};
    for (uint32_t i = 0; i < s->n; i++)
        for (uint32_t id = s->r[i].lo; id <= s->r[i].hi; id++)
            got.b[id] = 1;
    assert_memory_equal(got.b, m->b, NB);

    char want[4 * NB], *w = want;
    uint64_t count = 0;
    for (uint32_t i = 0; i < NB;) {
        if (!m->b[i]) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j + 1 < NB && m->b[j + 1])
            j++;
        if (w != want)
            *w++ = ' ';
        w += j == i ? sprintf(w, "%u", i) : sprintf(w, "%u-%u", i, j);
        count += j - i + 1;
        i = j + 1;
    }
    *w = '\0';
    assert_fmt(s, want);
    assert_int_equal(fbf_idset_count(s), count);
}

static void test_random_vs_bitmap(void **state)
{
    (void)state;
    fbf_idset a, b, c;
    bitmap ma, mb;
    fbf_idset_init(&a);
    fbf_idset_init(&b);
    fbf_idset_init(&c);
    random_set(&a, &ma);

    for (int iter = 0; iter < 4000; iter++) {
        random_set(&b, &mb);
        switch (rnd(8)) {
        case 0: { /* union */
            assert_int_equal(fbf_idset_union(&a, &b), 0);
            for (int i = 0; i < NB; i++)
                ma.b[i] |= mb.b[i];
            break;
        }
        case 1: { /* subtract */
            assert_int_equal(fbf_idset_subtract(&a, &b), 0);
            for (int i = 0; i < NB; i++)
                ma.b[i] &= !mb.b[i];
            break;
        }
        case 2: { /* add_range */
            uint32_t lo = rnd(NB), hi = lo + rnd(NB - lo);
            assert_int_equal(fbf_idset_add_range(&a, lo, hi), 0);
            memset(ma.b + lo, 1, hi - lo + 1);
            break;
        }
        case 3: { /* take_lowest */
            uint32_t have = 0;
            for (int i = 0; i < NB; i++)
                have += ma.b[i];
            uint32_t n = rnd(have + 3);
            int rc = fbf_idset_take_lowest(&a, n, &c);
            if (n > have) {
                assert_int_equal(rc, -ENOSPC);
                break;
            }
            assert_int_equal(rc, 0);
            bitmap mc = {{0}};
            for (int i = 0; i < NB && n; i++) {
                if (ma.b[i]) {
                    ma.b[i] = 0;
                    mc.b[i] = 1;
                    n--;
                }
            }
            check_same(&c, &mc);
            break;
        }
        case 4: { /* parse of a scrambled rendering of b */
            char str[8 * NB], *w = str;
            for (uint32_t i = b.n; i-- > 0;) {
                /* Reverse order and split ranges in overlapping halves. */
                uint32_t lo = b.r[i].lo, hi = b.r[i].hi;
                uint32_t mid = lo + (hi - lo) / 2;
                if (w != str)
                    *w++ = ' ';
                w += sprintf(w, "%u-%u %u-%u", mid, hi, lo, mid);
            }
            *w = '\0';
            parse_into(&a, str);
            ma = mb;
            break;
        }
        case 5: { /* copy */
            assert_int_equal(fbf_idset_copy(&c, &a), 0);
            assert_true(fbf_idset_equal(&c, &a));
            check_same(&c, &ma);
            break;
        }
        default:
            break;
        }
        check_same(&a, &ma);

        /* Queries on every iteration. */
        bool inter = false, all = true;
        for (int i = 0; i < NB; i++) {
            inter |= ma.b[i] && mb.b[i];
            all &= !mb.b[i] || ma.b[i];
        }
        assert_int_equal(fbf_idset_intersects(&a, &b), inter);
        assert_int_equal(fbf_idset_intersects(&b, &a), inter);
        assert_int_equal(fbf_idset_contains_all(&a, &b), all);
        assert_int_equal(fbf_idset_equal(&a, &b),
                         memcmp(ma.b, mb.b, NB) == 0);
        for (int k = 0; k < 8; k++) {
            uint32_t id = rnd(NB + 10);
            assert_int_equal(fbf_idset_contains(&a, id), id < NB && ma.b[id]);
        }
        char *str = fbf_idset_to_string(&a);
        assert_non_null(str);
        parse_into(&c, str);
        assert_true(fbf_idset_equal(&c, &a));
        free(str);

        /* Keep a from draining to empty or filling up for good. */
        if (rnd(50) == 0)
            random_set(&a, &ma);
    }
    fbf_idset_fini(&a);
    fbf_idset_fini(&b);
    fbf_idset_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_canonical),
        cmocka_unit_test(test_parse_noncanonical),
        cmocka_unit_test(test_parse_empty_and_reuse),
        cmocka_unit_test(test_parse_malformed),
        cmocka_unit_test(test_format_truncation),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_count),
        cmocka_unit_test(test_union),
        cmocka_unit_test(test_add_range),
        cmocka_unit_test(test_subtract),
        cmocka_unit_test(test_queries),
        cmocka_unit_test(test_equal_copy),
        cmocka_unit_test(test_take_lowest),
        cmocka_unit_test(test_random_vs_bitmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
