/*
 * test_json_arena: io/json_arena's contract: trees parsed into an arena
 * stay valid until the next parse (or, parsed with parse_more, until the
 * next clear), memory is reused and bounded, errors
 * are told apart, and every other cJSON use in the process is unaffected
 * by the allocation hooks the arena installs.
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

#include "io/json_arena.h"

static void parses_exactly_len_bytes(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    assert_non_null(a);
    /* Not NUL-terminated: the bytes after len must not be read as JSON. */
    const char text[] = "{\"now\":12.5,\"events\":[1,2,3]}garbage";
    const char *end = NULL;
    cJSON *root = fbf_json_arena_parse(a, text, strlen(text) - strlen("garbage"), &end);
    assert_non_null(root);
    assert_ptr_equal(end, text + strlen(text) - strlen("garbage"));
    assert_true(cJSON_GetObjectItemCaseSensitive(root, "now")->valuedouble == 12.5);
    assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(root, "events")), 3);
    fbf_json_arena_destroy(a);
}

static void tree_lives_until_next_parse_and_memory_is_reused(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    char msg[128];
    cJSON *prev = NULL;
    size_t footprint = 0;
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(msg, sizeof msg, "{\"id\":\"job%d\",\"res\":%d}", i, i % 7);
        cJSON *root = fbf_json_arena_parse(a, msg, (size_t)n, NULL);
        assert_non_null(root);
        char want[32];
        snprintf(want, sizeof want, "job%d", i);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(root, "id")->valuestring, want);
        assert_int_equal(cJSON_GetObjectItemCaseSensitive(root, "res")->valueint, i % 7);
        if (i == 0)
            footprint = fbf_json_arena_footprint(a);
        else /* small messages keep reusing the first block */
            assert_int_equal(fbf_json_arena_footprint(a), footprint);
        prev = root;
    }
    assert_non_null(prev);
    fbf_json_arena_destroy(a);
}

/* A message far bigger than the keep limit must not stay resident once
 * released, and the arena must still parse afterwards. */
static void huge_message_is_given_back(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    size_t n = 200000, cap = n * 16 + 16, len = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    big[len++] = '[';
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(big + len, cap - len, "%s\"s%zu\"", i ? "," : "", i);
    big[len++] = ']';
    cJSON *root = fbf_json_arena_parse(a, big, len, NULL);
    assert_non_null(root);
    assert_int_equal(cJSON_GetArraySize(root), (int)n);
    assert_string_equal(cJSON_GetArrayItem(root, (int)n - 1)->valuestring, "s199999");
    assert_true(fbf_json_arena_footprint(a) > FBF_JSON_ARENA_KEEP);
    fbf_json_arena_release(a);
    assert_true(fbf_json_arena_footprint(a) <= FBF_JSON_ARENA_KEEP);
    root = fbf_json_arena_parse(a, "[true]", 6, NULL);
    assert_non_null(root);
    assert_true(cJSON_IsTrue(root->child));
    free(big);
    fbf_json_arena_destroy(a);
}

static void malformed_is_einval_and_arena_stays_usable(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    const char *bad = "{\"a\":[1,2,{\"b\":}]}";
    errno = 0;
    assert_null(fbf_json_arena_parse(a, bad, strlen(bad), NULL));
    assert_int_equal(errno, EINVAL);
    const char *at = cJSON_GetErrorPtr();
    assert_non_null(at);
    assert_true(at >= bad && at < bad + strlen(bad));
    cJSON *ok = fbf_json_arena_parse(a, "{\"a\":1}", 7, NULL);
    assert_non_null(ok);
    assert_int_equal(cJSON_GetObjectItemCaseSensitive(ok, "a")->valueint, 1);
    fbf_json_arena_destroy(a);
}

/* Outside an arena parse, cJSON trees are ordinary heap trees: built,
 * printed, parsed and deleted as usual (ASan would catch a free of arena
 * memory or a leak here). */
static void other_cjson_use_is_unaffected(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    cJSON *in_arena = fbf_json_arena_parse(a, "{\"x\":[1,2]}", 11, NULL);
    assert_non_null(in_arena);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "job_id", "w0!1");
    cJSON_AddItemToObject(o, "copy", cJSON_Duplicate(in_arena, 1));
    char *text = cJSON_PrintUnformatted(o);
    assert_string_equal(text, "{\"job_id\":\"w0!1\",\"copy\":{\"x\":[1,2]}}");
    cJSON *back = cJSON_Parse(text);
    assert_non_null(back);
    assert_true(cJSON_Compare(back, o, 1));
    cJSON_free(text);
    cJSON_Delete(back);
    cJSON_Delete(o);
    fbf_json_arena_destroy(a);
}

/* parse_more: every tree since the last clear stays valid, across new
 * blocks; clear keeps one block sized for them; a failure leaves the
 * earlier trees alone. */
static void parse_more_keeps_earlier_trees(void **state)
{
    (void)state;
    fbf_json_arena *a = fbf_json_arena_create();
    cJSON *trees[3000];
    char msg[128];
    size_t first = 0;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 3000; i++) {
            int n = snprintf(msg, sizeof msg, "{\"id\":\"job%d\",\"res\":%d}", i, i % 7);
            assert_non_null(trees[i] = fbf_json_arena_parse_more(a, msg, (size_t)n, NULL));
        }
        assert_null(fbf_json_arena_parse_more(a, "{\"id\":", 6, NULL));
        assert_int_equal(errno, EINVAL);
        for (int i = 0; i < 3000; i++) {
            char want[32];
            snprintf(want, sizeof want, "job%d", i);
            assert_string_equal(cJSON_GetObjectItemCaseSensitive(trees[i], "id")->valuestring,
                                want);
            assert_int_equal(cJSON_GetObjectItemCaseSensitive(trees[i], "res")->valueint, i % 7);
        }
        size_t grown = fbf_json_arena_footprint(a);
        assert_true(grown > (size_t)64 << 10); /* more than the first block */
        if (round == 0)
            first = grown;
        else /* the cleared arena's one block held the same trees again */
            assert_int_equal(grown, first);
        fbf_json_arena_clear(a);
        assert_int_equal(fbf_json_arena_footprint(a), grown); /* one block as big */
    }
    fbf_json_arena_destroy(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parses_exactly_len_bytes),
        cmocka_unit_test(tree_lives_until_next_parse_and_memory_is_reused),
        cmocka_unit_test(huge_message_is_given_back),
        cmocka_unit_test(malformed_is_einval_and_arena_stays_usable),
        cmocka_unit_test(other_cjson_use_is_unaffected),
        cmocka_unit_test(parse_more_keeps_earlier_trees),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
