/*
 * test_idset: contract tests for engine/idset, one operation at a time on
 * hand-written sets. The randomized comparison of every operation against
 * a plain bitmap is in test_idset_random.c.
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
#include "support/testkit.h"

static void check_parse(const char *in, const char *want)
{
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, in);
    fbf_test_idset_expect(&s, want);
    fbf_idset_fini(&s);
}

/* Parse must fail with -EINVAL, name `needle` in the message, and leave a
 * previously parsed set untouched. */
static void check_bad(const char *in, const char *needle)
{
    fbf_idset s;
    fbf_error err = {{0}};
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, "4-6 9");
    int rc = fbf_idset_parse(&s, in, &err);
    if (rc != -EINVAL)
        fail_msg("parse(\"%s\") = %d, want -EINVAL", in, rc);
    if (!strstr(err.text, needle))
        fail_msg("parse(\"%s\"): message \"%s\" lacks \"%s\"", in, err.text,
                 needle);
    fbf_test_idset_expect(&s, "4-6 9");
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
    fbf_test_idset_parse(&s, "");
    assert_int_equal(s.n, 0);
    assert_int_equal(fbf_idset_count(&s), 0);
    fbf_test_idset_expect(&s, "");
    /* Parse replaces, it does not accumulate. */
    fbf_test_idset_parse(&s, "1-3 9");
    fbf_test_idset_parse(&s, "5 0");
    fbf_test_idset_expect(&s, "0 5");
    fbf_test_idset_parse(&s, "");
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
    fbf_test_idset_parse(&s, "0-3 8 10-11"); /* 11 chars */
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
    fbf_test_idset_parse(&s, "2147483645 1000000000-1000000001 2000000000-2147483643");
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
        fbf_test_idset_parse(&a, cases[i]);
        char *str = fbf_idset_to_string(&a);
        assert_non_null(str);
        assert_string_equal(str, cases[i]);
        fbf_test_idset_parse(&b, str);
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
    fbf_test_idset_parse(&s, "0-3 8 10-11");
    assert_int_equal(fbf_idset_count(&s), 7);
    fbf_test_idset_parse(&s, "0-2147483647");
    assert_int_equal(fbf_idset_count(&s), 2147483648u);
    fbf_idset_fini(&s);
}

/* a op b (fbf_idset_union or fbf_idset_subtract, into a) must succeed and
 * leave exactly want. */
static void check_op(int (*op)(fbf_idset *, const fbf_idset *), const char *a, const char *b,
                     const char *want)
{
    fbf_idset x, y;
    fbf_idset_init(&x);
    fbf_idset_init(&y);
    fbf_test_idset_parse(&x, a);
    fbf_test_idset_parse(&y, b);
    assert_int_equal(op(&x, &y), 0);
    fbf_test_idset_expect(&x, want);
    fbf_idset_fini(&x);
    fbf_idset_fini(&y);
}

static void test_union(void **state)
{
    (void)state;
    check_op(fbf_idset_union, "", "", "");
    check_op(fbf_idset_union, "", "1-3", "1-3");
    check_op(fbf_idset_union, "1-3", "", "1-3");
    check_op(fbf_idset_union, "0-3", "4-6", "0-6");
    check_op(fbf_idset_union, "0-3", "5-6", "0-3 5-6");
    check_op(fbf_idset_union, "5-6", "0-3", "0-3 5-6");
    check_op(fbf_idset_union, "0 2 4 6", "1 3 5", "0-6");
    check_op(fbf_idset_union, "0 2 4 6", "1 5", "0-2 4-6");
    check_op(fbf_idset_union, "10-20 30-40", "0-1 15-35 50", "0-1 10-40 50");
    check_op(fbf_idset_union, "0-100", "5 7 9", "0-100");
    check_op(fbf_idset_union, "5 7 9", "0-100", "0-100");
    check_op(fbf_idset_union, "0-1 100-101 200", "50 52 150", "0-1 50 52 100-101 150 200");
    check_op(fbf_idset_union, "0-1 100-101", "102 104", "0-1 100-102 104");

    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, "1 3");
    assert_int_equal(fbf_idset_union(&s, &s), 0);
    fbf_test_idset_expect(&s, "1 3");
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
    fbf_test_idset_expect(&s, "0 10-12 20");
    assert_int_equal(fbf_idset_add_range(&s, 13, 19), 0);
    fbf_test_idset_expect(&s, "0 10-20");
    assert_int_equal(fbf_idset_add_range(&s, 1, 9), 0);
    fbf_test_idset_expect(&s, "0-20");
    assert_int_equal(fbf_idset_add_range(&s, 0, UINT32_MAX), 0);
    assert_int_equal(s.n, 1);
    assert_int_equal(fbf_idset_count(&s), 4294967296ull);
    fbf_idset_fini(&s);
}

static void test_subtract(void **state)
{
    (void)state;
    check_op(fbf_idset_subtract, "", "1", "");
    check_op(fbf_idset_subtract, "0-9", "", "0-9");
    check_op(fbf_idset_subtract, "0-9", "0-9", "");
    check_op(fbf_idset_subtract, "0-9", "0-20", "");
    check_op(fbf_idset_subtract, "0-9", "3", "0-2 4-9");
    check_op(fbf_idset_subtract, "0-9", "0", "1-9");
    check_op(fbf_idset_subtract, "0-9", "9", "0-8");
    check_op(fbf_idset_subtract, "0-9", "1 3 5 7", "0 2 4 6 8-9");
    check_op(fbf_idset_subtract, "0-3 8 10-11", "2-10", "0-1 11");
    check_op(fbf_idset_subtract, "0-3 8 10-11", "20-30", "0-3 8 10-11");
    check_op(fbf_idset_subtract, "10-20", "0-5 25", "10-20");
    check_op(fbf_idset_subtract, "0-4 6-9 11-14", "3-12", "0-2 13-14");
    check_op(fbf_idset_subtract, "0 2 4 6 8", "1 3 5 7", "0 2 4 6 8");

    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, "1 3");
    assert_int_equal(fbf_idset_subtract(&s, &s), 0);
    fbf_test_idset_expect(&s, "");
    fbf_idset_fini(&s);
}

static void test_queries(void **state)
{
    (void)state;
    fbf_idset s, t, e;
    fbf_idset_init(&s);
    fbf_idset_init(&t);
    fbf_idset_init(&e);
    fbf_test_idset_parse(&s, "0-3 8 10-11");

    const uint32_t in[] = {0, 1, 3, 8, 10, 11};
    const uint32_t out[] = {4, 7, 9, 12, 1000, FBF_IDSET_MAX_ID};
    for (size_t i = 0; i < 6; i++) {
        assert_true(fbf_idset_contains(&s, in[i]));
        assert_false(fbf_idset_contains(&s, out[i]));
    }
    assert_false(fbf_idset_contains(&e, 0));

    fbf_test_idset_parse(&t, "1-2 10");
    assert_true(fbf_idset_contains_all(&s, &t));
    assert_true(fbf_idset_intersects(&s, &t));
    fbf_test_idset_parse(&t, "3-4");
    assert_false(fbf_idset_contains_all(&s, &t));
    assert_true(fbf_idset_intersects(&s, &t));
    fbf_test_idset_parse(&t, "4-7 9 12-20");
    assert_false(fbf_idset_contains_all(&s, &t));
    assert_false(fbf_idset_intersects(&s, &t));
    assert_false(fbf_idset_intersects(&t, &s));
    fbf_test_idset_parse(&t, "0-11");
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
    fbf_test_idset_parse(&a, "3 0-2 7");
    fbf_test_idset_parse(&b, "0-3 7");
    assert_true(fbf_idset_equal(&a, &b));
    fbf_test_idset_parse(&b, "0-3 8");
    assert_false(fbf_idset_equal(&a, &b));
    fbf_test_idset_parse(&b, "0-3");
    assert_false(fbf_idset_equal(&a, &b));

    assert_int_equal(fbf_idset_copy(&b, &a), 0);
    assert_true(fbf_idset_equal(&a, &b));
    fbf_test_idset_expect(&b, "0-3 7");
    /* A deep copy: changing the copy leaves the original alone. */
    assert_int_equal(fbf_idset_add_range(&b, 4, 6), 0);
    fbf_test_idset_expect(&b, "0-7");
    fbf_test_idset_expect(&a, "0-3 7");

    fbf_idset_clear(&a);
    assert_int_equal(fbf_idset_copy(&b, &a), 0);
    fbf_test_idset_expect(&b, "");
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
    fbf_test_idset_parse(&f, from);
    fbf_test_idset_parse(&o, "500-600"); /* replaced, not merged */
    assert_int_equal(fbf_idset_take_lowest(&f, n, &o), 0);
    fbf_test_idset_expect(&o, want_out);
    fbf_test_idset_expect(&f, want_left);
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
    fbf_test_idset_parse(&f, "0-3 8 10-11");
    fbf_test_idset_parse(&o, "42");
    assert_int_equal(fbf_idset_take_lowest(&f, 8, &o), -ENOSPC);
    fbf_test_idset_expect(&f, "0-3 8 10-11");
    fbf_test_idset_expect(&o, "42");
    fbf_idset_clear(&f);
    assert_int_equal(fbf_idset_take_lowest(&f, 1, &o), -ENOSPC);
    fbf_test_idset_expect(&o, "42");

    /* Repeated takes drain a fragmented set in order. */
    fbf_test_idset_parse(&f, "0 2 4 6 8 10 12 14 16 18");
    for (uint32_t i = 0; i < 10; i++) {
        char want[8];
        snprintf(want, sizeof want, "%u", 2 * i);
        assert_int_equal(fbf_idset_take_lowest(&f, 1, &o), 0);
        fbf_test_idset_expect(&o, want);
        assert_int_equal(f.n, 9 - i);
    }
    fbf_idset_fini(&f);
    fbf_idset_fini(&o);
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
