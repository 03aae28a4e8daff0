/*
 * test_json_pipe: io/json_pipe hands over exactly the elements, member
 * calls and errors that the plain stream gives, in the same order, across
 * batch boundaries; check runs once per element, in order; destroying a
 * pipe halfway through stops its thread.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/json_pipe.h"

/* Text printed in order, '|'-joined. */
typedef struct textlog {
    char *text;
    size_t len, cap;
} textlog;

/* What a reader saw. The member callback and check run on the helper
 * thread, so they write only members and checked (read after the join). */
typedef struct seen {
    textlog elems, members;
    long checked;   /* check calls */
    long refuse_at; /* check refuses this element (-1: none) */
} seen;

static void put(textlog *s, const char *what, const cJSON *v)
{
    char *p = cJSON_PrintUnformatted(v);
    assert_non_null(p);
    size_t need = s->len + strlen(what) + strlen(p) + 3;
    if (need > s->cap) {
        s->cap = need * 2;
        s->text = realloc(s->text, s->cap);
        assert_non_null(s->text);
    }
    s->len += (size_t)sprintf(s->text + s->len, "%s%s%s", s->len ? "|" : "", what, p);
    free(p);
}

static int on_member(void *ctx, const char *key, const cJSON *v, fbf_error *err)
{
    (void)err;
    put(&((seen *)ctx)->members, key, v);
    return 0;
}

static int check(void *ctx, const cJSON *e, fbf_error *err)
{
    seen *s = ctx;
    if (s->checked++ == s->refuse_at)
        return fbf_errorf(err, -EINVAL, "element %ld refused", s->refuse_at);
    /* Checks run ahead of the consumer, in order: each element says its index. */
    const cJSON *i = cJSON_GetObjectItemCaseSensitive(e, "i");
    if (cJSON_IsNumber(i) && i->valuedouble != (double)(s->checked - 1))
        return fbf_errorf(err, -EPROTO, "checked out of order");
    return 0;
}

/* n elements; element `bad` (if < n) is malformed JSON; members before and
 * after the array; `tail` goes after the closing brace. */
static char *message(long n, long bad, const char *tail)
{
    size_t cap = 128 + (size_t)n * 96 + strlen(tail);
    char *t = malloc(cap);
    assert_non_null(t);
    size_t len = (size_t)sprintf(t, "{\"now\":12.5,\"events\":[");
    for (long i = 0; i < n; i++) {
        if (i == bad)
            len += (size_t)sprintf(t + len, "%s{\"i\":%ld,\"x\":}", i ? "," : "", i);
        else
            len += (size_t)sprintf(t + len,
                                   "%s{\"i\":%ld,\"id\":\"w0!%ld\",\"res\":%ld,\"f\":%.3f,"
                                   "\"nest\":[true,null,{\"k\":\"v\\\"q\"}]}",
                                   i ? "," : "", i, i, i % 7 + 1, (double)i / 8);
    }
    len += (size_t)sprintf(t + len, "],\"after\":{\"z\":[1,2]}}%s", tail);
    assert_true(len < cap);
    return t;
}

/* Reads text with the plain stream (pipe false) or the pipe; stops after
 * `stop_after` elements when >= 0. Returns the final code. */
static int read_text(const char *text, bool pipe, long refuse_at, long stop_after, seen *s,
                     fbf_error *err)
{
    *s = (seen){.refuse_at = refuse_at};
    fbf_json_arena *a = fbf_json_arena_create();
    assert_non_null(a);
    fbf_json_stream st;
    int rc = fbf_json_stream_open(&st, a, text, strlen(text), "events", on_member, s, err);
    assert_int_equal(rc, 1);
    fbf_json_pipe *p = NULL;
    if (pipe)
        assert_int_equal(fbf_json_pipe_start(&p, &st, check, s, err), 0);
    long got = 0;
    for (;;) {
        if (stop_after >= 0 && got == stop_after) {
            rc = 2;
            break;
        }
        const cJSON *e;
        if (pipe)
            rc = fbf_json_pipe_next(p, &e, err);
        else {
            cJSON *m;
            rc = fbf_json_stream_next(&st, &m, err);
            e = m;
            int c;
            if (rc == 1 && (c = check(s, e, err)) < 0)
                rc = c;
        }
        if (rc != 1)
            break;
        put(&s->elems, "", e);
        got++;
    }
    fbf_json_pipe_destroy(p); /* joins: the members the helper saw are ours again */
    fbf_json_arena_destroy(a);
    return rc;
}

static void release(seen *s)
{
    free(s->elems.text);
    free(s->members.text);
}

static void same(const char *text, long refuse_at)
{
    seen plain, piped;
    fbf_error e1, e2;
    fbf_error_clear(&e1);
    fbf_error_clear(&e2);
    int r1 = read_text(text, false, refuse_at, -1, &plain, &e1);
    int r2 = read_text(text, true, refuse_at, -1, &piped, &e2);
    assert_int_equal(r2, r1);
    assert_int_equal(piped.checked, plain.checked);
    const textlog *a[2] = {&plain.elems, &plain.members}, *b[2] = {&piped.elems, &piped.members};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(b[k]->len, a[k]->len);
        if (a[k]->len)
            assert_memory_equal(b[k]->text, a[k]->text, a[k]->len);
    }
    if (r1 < 0)
        assert_string_equal(e2.text, e1.text);
    release(&plain);
    release(&piped);
}

static void test_same_elements_across_batches(void **state)
{
    (void)state;
    long sizes[] = {0, 1, FBF_JSON_PIPE_BATCH - 1, FBF_JSON_PIPE_BATCH,
                    FBF_JSON_PIPE_BATCH + 1, FBF_JSON_PIPE_BATCH * FBF_JSON_PIPE_BATCHES * 3 + 17};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *t = message(sizes[i], -1, "\n");
        seen s;
        fbf_error err;
        fbf_error_clear(&err);
        assert_int_equal(read_text(t, true, -1, -1, &s, &err), 0);
        assert_int_equal(s.checked, sizes[i]);
        /* The members after the array reached the callback too. */
        assert_non_null(s.members.text);
        assert_non_null(strstr(s.members.text, "after{\"z\":[1,2]}"));
        release(&s);
        same(t, -1);
        free(t);
    }
}

static void test_malformed_element_after_the_ones_before(void **state)
{
    (void)state;
    long n = FBF_JSON_PIPE_BATCH * 3;
    long bad[] = {0, 1, FBF_JSON_PIPE_BATCH - 1, FBF_JSON_PIPE_BATCH, n - 1};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *t = message(n, bad[i], "");
        seen s;
        fbf_error err;
        fbf_error_clear(&err);
        assert_int_equal(read_text(t, true, -1, -1, &s, &err), -EPROTO);
        assert_non_null(strstr(err.text, "malformed JSON message near byte"));
        assert_int_equal(s.checked, bad[i]); /* nothing checked past the bad one */
        release(&s);
        same(t, -1);
        free(t);
    }
}

static void test_refused_element_ends_the_elements(void **state)
{
    (void)state;
    char *t = message(FBF_JSON_PIPE_BATCH * 2 + 5, -1, "");
    long at[] = {0, FBF_JSON_PIPE_BATCH, FBF_JSON_PIPE_BATCH * 2 + 4};
    for (size_t i = 0; i < sizeof at / sizeof *at; i++) {
        seen s;
        fbf_error err;
        fbf_error_clear(&err);
        assert_int_equal(read_text(t, true, at[i], -1, &s, &err), -EINVAL);
        char want[64];
        snprintf(want, sizeof want, "element %ld refused", at[i]);
        assert_string_equal(err.text, want);
        /* Exactly the elements before it were handed over. */
        long elems = 0;
        for (const char *q = s.elems.text; q && (q = strstr(q, "{\"i\":")); q++)
            elems++;
        assert_int_equal(elems, at[i]);
        release(&s);
        same(t, at[i]);
    }
    free(t);
}

static void test_bytes_after_the_message(void **state)
{
    (void)state;
    char *t = message(FBF_JSON_PIPE_BATCH + 3, -1, " x");
    seen s;
    fbf_error err;
    fbf_error_clear(&err);
    assert_int_equal(read_text(t, true, -1, -1, &s, &err), -EPROTO);
    assert_non_null(strstr(err.text, "unexpected bytes after the message"));
    assert_int_equal(s.checked, FBF_JSON_PIPE_BATCH + 3);
    release(&s);
    same(t, -1);
    free(t);
}

/* The consumer gives up early (an event it cannot apply): destroy must
 * stop a helper that is blocked on a full ring or still parsing. */
static void test_destroy_halfway(void **state)
{
    (void)state;
    char *t = message(FBF_JSON_PIPE_BATCH * FBF_JSON_PIPE_BATCHES * 4, -1, "");
    long stops[] = {0, 1, 10, FBF_JSON_PIPE_BATCH * 2 + 1};
    for (size_t i = 0; i < sizeof stops / sizeof *stops; i++) {
        seen s;
        fbf_error err;
        fbf_error_clear(&err);
        assert_int_equal(read_text(t, true, -1, stops[i], &s, &err), 2);
        /* It parsed ahead, but never more than its batches can hold. */
        assert_true(s.checked >= stops[i]);
        assert_true(s.checked <= stops[i] + FBF_JSON_PIPE_BATCH * (FBF_JSON_PIPE_BATCHES + 1));
        release(&s);
    }
    free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_elements_across_batches),
        cmocka_unit_test(test_malformed_element_after_the_ones_before),
        cmocka_unit_test(test_refused_element_ends_the_elements),
        cmocka_unit_test(test_bytes_after_the_message),
        cmocka_unit_test(test_destroy_halfway),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
