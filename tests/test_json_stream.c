/*
 * test_json_stream: io/json_stream reads the members of a message and the
 * elements of its array one at a time, and gives exactly what a whole
 * parse gives, in any member order; malformed texts are refused with the
 * byte where reading stopped.
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

#include "io/json_stream.h"

typedef struct seen {
    char keys[8][80];
    char values[8][80];
    int n;
    int fail_on; /* member index that returns an error, -1: none */
} seen;

static int on_member(void *ctx, const char *key, const cJSON *v, fbf_error *err)
{
    seen *s = ctx;
    if (s->n == s->fail_on)
        return fbf_errorf(err, -EINVAL, "member %s refused", key);
    snprintf(s->keys[s->n], sizeof s->keys[0], "%s", key);
    char *p = cJSON_PrintUnformatted(v);
    snprintf(s->values[s->n], sizeof s->values[0], "%s", p ? p : "?");
    free(p);
    s->n++;
    return 0;
}

/* Reads text through the stream: every element printed, joined by '|'. */
static int read_all(const char *text, seen *s, char *elems, size_t cap, fbf_error *err)
{
    fbf_json_arena *a = fbf_json_arena_create();
    fbf_json_stream st;
    elems[0] = '\0';
    int rc = fbf_json_stream_open(&st, a, text, strlen(text), "events", on_member, s, err);
    while (rc == 1) {
        cJSON *e;
        rc = fbf_json_stream_next(&st, &e, err);
        if (rc == 1) {
            char *p = cJSON_PrintUnformatted(e);
            size_t used = strlen(elems);
            snprintf(elems + used, cap - used, "%s%s", used ? "|" : "", p);
            free(p);
        }
    }
    fbf_json_arena_destroy(a);
    return rc;
}

static void reads_members_and_elements_in_order(void **state)
{
    (void)state;
    seen s = {.fail_on = -1};
    char el[512];
    fbf_error err;
    const char *msg = " { \"now\" : 12.5 ,\"events\":[ {\"a\":[1,2,{\"b\":\"]\"}]} , 3 ,\"x\"] ,"
                      "\"tail\":{\"k\":null} } \n";
    assert_int_equal(read_all(msg, &s, el, sizeof el, &err), 0);
    assert_string_equal(el, "{\"a\":[1,2,{\"b\":\"]\"}]}|3|\"x\"");
    assert_int_equal(s.n, 2);
    assert_string_equal(s.keys[0], "now");
    assert_string_equal(s.values[0], "12.5");
    assert_string_equal(s.keys[1], "tail");
    assert_string_equal(s.values[1], "{\"k\":null}");
}

static void member_order_and_empty_cases(void **state)
{
    (void)state;
    char el[256];
    fbf_error err;
    seen s = {.fail_on = -1};
    /* The array first: the member after it is read when the array ends. */
    assert_int_equal(read_all("{\"events\":[1],\"now\":3}", &s, el, sizeof el, &err), 0);
    assert_string_equal(el, "1");
    assert_int_equal(s.n, 1);
    assert_string_equal(s.keys[0], "now");

    seen e = {.fail_on = -1};
    assert_int_equal(read_all("{\"now\":1,\"events\":[ ]}", &e, el, sizeof el, &err), 0);
    assert_string_equal(el, "");

    /* No array member at all: open says 0 after giving every member. */
    seen n = {.fail_on = -1};
    fbf_json_arena *a = fbf_json_arena_create();
    fbf_json_stream st;
    const char *t = "{\"now\":1,\"other\":[1]}";
    assert_int_equal(fbf_json_stream_open(&st, a, t, strlen(t), "events", on_member, &n, &err),
                     0);
    assert_int_equal(n.n, 2);
    cJSON *x;
    assert_int_equal(fbf_json_stream_next(&st, &x, &err), 0);
    t = "{}";
    assert_int_equal(fbf_json_stream_open(&st, a, t, strlen(t), "events", NULL, NULL, &err), 0);
    fbf_json_arena_destroy(a);

    /* An escaped member name is the same name; a long one is kept whole. */
    seen l = {.fail_on = -1};
    char msg[512];
    char longkey[200];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    snprintf(msg, sizeof msg, "{\"%s\":true,\"ev\\u0065nts\":[7]}", longkey);
    assert_int_equal(read_all(msg, &l, el, sizeof el, &err), 0);
    assert_string_equal(el, "7");
    assert_int_equal(l.n, 1);
    assert_int_equal(strncmp(l.keys[0], longkey, 79), 0);
}

static void expect_error(const char *text, const char *needle)
{
    seen s = {.fail_on = -1};
    char el[256];
    fbf_error err = {0};
    int rc = read_all(text, &s, el, sizeof el, &err);
    if (rc != -EPROTO || !strstr(err.text, needle))
        fail_msg("'%s': rc %d, message '%s', expected '%s'", text, rc, err.text, needle);
}

static void malformed_texts_are_refused_with_the_byte(void **state)
{
    (void)state;
    expect_error("[1,2]", "near byte 0: expected a JSON object");
    expect_error("{\"now\" 1}", "near byte 7: expected ':'");
    expect_error("{\"now\":1 \"events\":[]}", "near byte 9: expected ',' or '}'");
    expect_error("{\"events\":{}}", "near byte 10: expected an array");
    expect_error("{\"events\":[1 2]}", "near byte 13: expected ',' or ']'");
    expect_error("{\"events\":[1,]}", "near byte 13: not a JSON value");
    expect_error("{\"events\":[tru]}", "not a JSON value");
    expect_error("{\"events\":[1]", "expected ',' or '}'");
    expect_error("{\"events\":[1]} x", "near byte 15: unexpected bytes after the message");
    expect_error("{1:2}", "near byte 1: expected a member name");
    expect_error("{\"events\":[],\"events\":[]}", "duplicate key \"events\"");
    expect_error("{\"now\":1,\"events\":[],\"now\":2}", "duplicate key \"now\"");
    expect_error("{\"now\":1,\"events\":[{\"a\":1,\"b\":2,\"a\":3}]}",
                 "duplicate key \"a\" (one member named twice)");
    expect_error("{\"now\":1,\"events\":[\"w0!1\\u0000x\"]}",
                 "a string holds \\u0000 (a NUL byte) near byte 24");
    expect_error("", "expected a JSON object");
}

static void member_callback_errors_stop_the_stream(void **state)
{
    (void)state;
    seen s = {.fail_on = 1};
    char el[256];
    fbf_error err;
    assert_int_equal(read_all("{\"now\":1,\"x\":2,\"events\":[1]}", &s, el, sizeof el, &err),
                     -EINVAL);
    assert_string_equal(err.text, "member x refused");
    assert_string_equal(el, "");
}

/* Random messages: the stream's elements equal the whole parse's. */
static void agrees_with_a_whole_parse(void **state)
{
    (void)state;
    uint64_t x = 88172645463325252ull;
    char *msg = malloc(1 << 16);
    for (int round = 0; round < 200; round++) {
        size_t n = 0;
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int nev = (int)(x % 40);
        n += (size_t)sprintf(msg + n, "{\"now\":%d,\"events\":[", round);
        for (int i = 0; i < nev; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            n += (size_t)sprintf(msg + n, "%s%s{\"t\":%llu,\"s\":\"a,]}\\\"%d\",\"l\":[%d,[]]}",
                                 i ? "," : "", (x & 1) ? " \n" : "",
                                 (unsigned long long)(x % 1000), i, i);
        }
        n += (size_t)sprintf(msg + n, "]}");
        cJSON *whole = cJSON_Parse(msg);
        assert_non_null(whole);
        seen s = {.fail_on = -1};
        fbf_json_arena *a = fbf_json_arena_create();
        fbf_json_stream st;
        fbf_error err;
        assert_int_equal(fbf_json_stream_open(&st, a, msg, n, "events", on_member, &s, &err), 1);
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(whole, "events")->child;
        cJSON *e;
        int got = 0, rc;
        while ((rc = fbf_json_stream_next(&st, &e, &err)) == 1) {
            assert_non_null(w);
            assert_true(cJSON_Compare(w, e, true));
            w = w->next;
            got++;
        }
        assert_int_equal(rc, 0);
        assert_null(w);
        assert_int_equal(got, nev);
        fbf_json_arena_destroy(a);
        cJSON_Delete(whole);
    }
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_members_and_elements_in_order),
        cmocka_unit_test(member_order_and_empty_cases),
        cmocka_unit_test(malformed_texts_are_refused_with_the_byte),
        cmocka_unit_test(member_callback_errors_stop_the_stream),
        cmocka_unit_test(agrees_with_a_whole_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
