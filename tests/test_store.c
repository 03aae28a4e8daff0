/*
 * test_store: Batsim's Redis store (io/store.h) against a real
 * redis-server started for this suite (support/redis_server): Batsim's
 * key names, round trips, a pipelined batch of more keys than one chunk,
 * missing keys, a server that goes away between writes (the error names
 * the key, later calls are refused) and one that cannot be reached. The
 * session and the submitter in Redis mode are in test_redis.c.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/store.h"
#include "support/redis_server.h"
#include "support/testkit.h"

static int port(void) { return fbf_test_redis_shared()->port; }

static fbf_store *connect_store(const char *prefix)
{
    fbf_error err = {{0}};
    fbf_store *r = fbf_store_connect("127.0.0.1", port(), prefix, 10, &err);
    if (!r)
        fail_msg("%s", err.text);
    return r;
}

/* Keys are Batsim's: <prefix>:job_<id>, <prefix>:profile_<wl>!<name>. */
static void test_store_keys_are_batsims(void **state)
{
    fbf_store *r = connect_store("k1");
    fbf_error err;
    const char *job = "{\"id\":\"w0!1\",\"subtime\":0,\"walltime\":100,\"res\":2,"
                      "\"profile\":\"delay10\"}";
    assert_int_equal(fbf_store_set_job(r, "w0!1", job, &err), 0);
    assert_int_equal(
        fbf_store_set_profile(r, "w0", "delay10", "{\"type\":\"delay\",\"delay\":10}", &err), 0);
    char *raw = fbf_test_redis_get(fbf_test_redis_shared(), "k1:job_w0!1");
    assert_non_null(raw);
    assert_string_equal(raw, job);
    free(raw);
    raw = fbf_test_redis_get(fbf_test_redis_shared(), "k1:profile_w0!delay10");
    assert_non_null(raw);
    assert_string_equal(raw, "{\"type\":\"delay\",\"delay\":10}");
    free(raw);

    const char *got;
    size_t len;
    assert_int_equal(fbf_store_get_job(r, "w0!1", &got, &len, &err), 0);
    assert_int_equal(len, strlen(job));
    assert_memory_equal(got, job, len);
    assert_int_equal(fbf_store_get_profile(r, "w0", "delay10", &got, &len, &err), 0);
    assert_int_equal(len, strlen("{\"type\":\"delay\",\"delay\":10}"));
    /* Absent: no error, no value. */
    assert_int_equal(fbf_store_get_job(r, "w0!2", &got, &len, &err), 0);
    assert_null(got);

    char key[64];
    assert_int_equal(fbf_store_key(r, FBF_STORE_PLAIN, "nb_res", key, sizeof key), 9);
    assert_string_equal(key, "k1:nb_res");
    assert_string_equal(fbf_store_prefix(r), "k1");
    fbf_store_destroy(r);

    /* No prefix given: Batsim's "default". */
    r = connect_store(NULL);
    fbf_store_key(r, FBF_STORE_JOB, "w0!7", key, sizeof key);
    assert_string_equal(key, "default:job_w0!7");
    fbf_store_destroy(r);
}

/* More keys than one pipeline chunk, written and read back in one call
 * each, with absent keys in the middle. */
static void test_store_batches(void **state)
{
    enum { N = 10000 };
    fbf_store *r = connect_store("k2");
    static char names[N][16], values[N][64];
    static fbf_store_item items[N];
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "w0!%d", i);
        int len =
            snprintf(values[i], sizeof values[i], "{\"id\":\"w0!%d\",\"res\":%d}", i, i % 7 + 1);
        items[i] = (fbf_store_item){.name = names[i], .value = values[i], .len = (size_t)len};
    }
    fbf_error err;
    /* Every third key is left out. */
    static fbf_store_item some[N];
    size_t n = 0;
    for (int i = 0; i < N; i++)
        if (i % 3)
            some[n++] = items[i];
    assert_int_equal(fbf_store_set(r, FBF_STORE_JOB, some, n, &err), 0);
    for (int i = 0; i < N; i++)
        items[i].value = NULL, items[i].len = 0;
    assert_int_equal(fbf_store_get(r, FBF_STORE_JOB, items, N, &err), 0);
    for (int i = 0; i < N; i++) {
        if (i % 3 == 0) {
            if (items[i].value)
                fail_msg("key %s: a value, though never set", names[i]);
            continue;
        }
        if (!items[i].value || items[i].len != strlen(values[i]) ||
            memcmp(items[i].value, values[i], items[i].len) != 0)
            fail_msg("key %s: wrong value read back", names[i]);
    }
    fbf_store_destroy(r);
}

/* A store that goes away between writes: SET and DEL each name the key
 * whose reply never came, and every later call is refused. */
static void test_store_lost_names_key(void **state)
{
    fbf_test_redis own;
    assert_int_equal(fbf_test_redis_start(&own), 0);
    fbf_error err = {{0}};
    fbf_store *r = fbf_store_connect("127.0.0.1", own.port, "gone", 5, &err);
    assert_non_null(r);
    fbf_store_item it = {.name = "w0!7", .value = "{}", .len = 2};
    assert_int_equal(fbf_store_del(r, FBF_STORE_JOB, &it, 1, &err), 0);
    fbf_test_redis_stop(&own);
    char want[128];
    int n = snprintf(want, sizeof want, "Redis at 127.0.0.1:%d: DEL gone:job_w0!7: ", own.port);
    assert_int_equal(fbf_store_del(r, FBF_STORE_JOB, &it, 1, &err), -EIO);
    if (strncmp(err.text, want, (size_t)n) != 0)
        fail_msg("got \"%s\", want \"%s<hiredis's message>\"", err.text, want);
    snprintf(want, sizeof want, "Redis at 127.0.0.1:%d: the connection failed earlier", own.port);
    assert_int_equal(fbf_store_set(r, FBF_STORE_PROFILE, &it, 1, &err), -EIO);
    assert_string_equal(err.text, want);
    fbf_store_destroy(r);

    assert_int_equal(fbf_test_redis_start(&own), 0);
    assert_non_null(r = fbf_store_connect("127.0.0.1", own.port, "gone", 5, &err));
    fbf_test_redis_stop(&own);
    n = snprintf(want, sizeof want, "Redis at 127.0.0.1:%d: SET gone:profile_w0!7: ", own.port);
    assert_int_equal(fbf_store_set(r, FBF_STORE_PROFILE, &it, 1, &err), -EIO);
    if (strncmp(err.text, want, (size_t)n) != 0)
        fail_msg("got \"%s\", want \"%s<hiredis's message>\"", err.text, want);
    fbf_store_destroy(r);
}

static void test_store_unreachable(void **state)
{
    int dead = fbf_test_redis_dead_port();
    fbf_error err = {{0}};
    fbf_store *r = fbf_store_connect("127.0.0.1", dead, NULL, 5, &err);
    assert_null(r);
    char want[200];
    snprintf(want, sizeof want,
             "cannot connect to Redis at 127.0.0.1:%d (host 127.0.0.1, port %d): "
             "Connection refused",
             dead, dead);
    assert_string_equal(err.text, want);
    assert_null(fbf_store_connect("127.0.0.1", 0, NULL, 5, &err));
    assert_string_equal(err.text, "Redis at 127.0.0.1: port 0 is not in 1..65535");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_store_keys_are_batsims),
        cmocka_unit_test(test_store_batches),
        cmocka_unit_test(test_store_lost_names_key),
        cmocka_unit_test(test_store_unreachable),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, fbf_test_redis_group_setup, fbf_test_redis_group_teardown);
}
