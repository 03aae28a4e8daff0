/*
 * test_jbuf: io/jbuf's writers against the reference they replace:
 * integers and digits as snprintf prints them, times as Batsim prints
 * them ("%f"), every number read back by strtod as the very double
 * written, strings escaped so that cJSON reads back the same bytes, and
 * interval sets in Batsim's "0-3 8" form.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/jbuf.h"

static void digits_match_snprintf(void **state)
{
    (void)state;
    char want[32], got[32];
    uint64_t v = 0;
    /* Every count of digits, each side of every power of ten, and a walk
     * through the small values that odd and even digit counts take. */
    for (int i = 0; i < 100000; i++) {
        if (i < 2000)
            v = (uint64_t)i;
        else if (i < 2000 + 20 * 3) {
            int k = (i - 2000) / 3, d = (i - 2000) % 3;
            uint64_t p = 1;
            for (int j = 0; j < k; j++)
                p *= 10;
            v = p - 1 + (uint64_t)d; /* 9..9, 10..0, 10..01 */
        } else {
            v = v * 6364136223846793005ull + 1442695040888963407ull;
        }
        snprintf(want, sizeof want, "%llu", (unsigned long long)v);
        memset(got, 'x', sizeof got);
        size_t n = fbf_jbuf_digits(got, v);
        assert_int_equal(n, strlen(want));
        assert_memory_equal(got, want, n);
        assert_int_equal(got[n], 'x'); /* no NUL, nothing past the digits */
    }
    assert_int_equal(fbf_jbuf_digits(got, UINT64_MAX), 20);
    assert_memory_equal(got, "18446744073709551615", 20);
}

static void integers_with_their_sign(void **state)
{
    (void)state;
    const int64_t vs[] = {0, 1, -1, 9, -10, 99, 100, -12345678, INT64_MAX, INT64_MIN};
    fbf_jbuf b = {0};
    char want[512] = "";
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        if (i)
            fbf_jbuf_lit(&b, ",");
        fbf_jbuf_int(&b, vs[i]);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%lld", i ? "," : "",
                 (long long)vs[i]);
    }
    assert_false(b.oom);
    assert_string_equal(b.p, want);
    assert_int_equal(b.len, strlen(want));
    fbf_jbuf_fini(&b);
}

static void times_as_batsim_prints_them(void **state)
{
    (void)state;
    fbf_jbuf b = {0};
    const struct {
        double v;
        const char *text;
    } cases[] = {
        {0, "0.000000"},          {599850, "599850.000000"}, {10.000015, "10.000015"},
        {-3, "-3.000000"},        {1.5, "1.500000"},         {4.5e-05, "0.000045"},
        {INFINITY, "null"},       {NAN, "null"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_jbuf_reset(&b);
        fbf_jbuf_time(&b, cases[i].v);
        assert_string_equal(b.p, cases[i].text);
    }
    /* Six decimals that would not read back get more digits. */
    const double fine[] = {1e-7, 0.1 + 0.2, 1234567.0000001, 2.5e-300, DBL_MAX};
    for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
        fbf_jbuf_reset(&b);
        fbf_jbuf_time(&b, fine[i]);
        assert_true(strtod(b.p, NULL) == fine[i]);
    }
    fbf_jbuf_fini(&b);
}

static void numbers_read_back_exactly(void **state)
{
    (void)state;
    fbf_jbuf b = {0};
    const double vs[] = {0, 7, -7, 53940, 0.1, 1.0 / 3, 1e300, -2.5e-12, 9007199254740993.0};
    const char *ints[] = {"0", "7", "-7", "53940"};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        fbf_jbuf_reset(&b);
        fbf_jbuf_num(&b, vs[i]);
        assert_true(strtod(b.p, NULL) == vs[i]);
        if (i < sizeof ints / sizeof *ints)
            assert_string_equal(b.p, ints[i]);
        char buf[40];
        fbf_jbuf_fmt(buf, sizeof buf, vs[i]);
        assert_true(strtod(buf, NULL) == vs[i]);
    }
    fbf_jbuf_fini(&b);
}

static void strings_read_back_through_cjson(void **state)
{
    (void)state;
    const char *vs[] = {"w0!15", "", "a\"b", "back\\slash", "tab\there", "nl\n\x01\x1f end",
                        "caf\xc3\xa9"};
    for (size_t i = 0; i < sizeof vs / sizeof *vs; i++) {
        fbf_jbuf b = {0};
        fbf_jbuf_lit(&b, "[");
        fbf_jbuf_str(&b, vs[i]);
        fbf_jbuf_lit(&b, "]");
        cJSON *a = cJSON_Parse(b.p);
        assert_non_null(a);
        assert_true(cJSON_IsString(a->child));
        assert_string_equal(a->child->valuestring, vs[i]);
        cJSON_Delete(a);
        fbf_jbuf_fini(&b);
    }
}

static void ranges_in_batsim_form(void **state)
{
    (void)state;
    fbf_jbuf b = {0};
    const fbf_range r[] = {{0, 3}, {8, 8}, {10, 11}, {4294967294u, 4294967295u}};
    fbf_jbuf_ranges(&b, r, 4);
    assert_string_equal(b.p, "0-3 8 10-11 4294967294-4294967295");
    fbf_jbuf_reset(&b);
    fbf_jbuf_ranges(&b, r, 0);
    assert_string_equal(b.p, "");
    fbf_jbuf_fini(&b);
}

static void grows_and_stays_terminated(void **state)
{
    (void)state;
    fbf_jbuf b = {0};
    size_t want = 0;
    for (int i = 0; i < 100000; i++) {
        fbf_jbuf_int(&b, i);
        fbf_jbuf_lit(&b, " ");
        want += (size_t)snprintf(NULL, 0, "%d ", i);
        assert_int_equal(b.len, want);
        assert_int_equal(b.p[b.len], '\0');
    }
    assert_false(b.oom);
    assert_memory_equal(b.p + b.len - 6, "99999 ", 6);
    fbf_jbuf_fini(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(digits_match_snprintf),
        cmocka_unit_test(integers_with_their_sign),
        cmocka_unit_test(times_as_batsim_prints_them),
        cmocka_unit_test(numbers_read_back_exactly),
        cmocka_unit_test(strings_read_back_through_cjson),
        cmocka_unit_test(ranges_in_batsim_form),
        cmocka_unit_test(grows_and_stays_terminated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
