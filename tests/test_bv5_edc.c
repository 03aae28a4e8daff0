/*
 * test_bv5_edc: fastbf as a Batsim 5 External Decision Component, in
 * batprotocol's JSON format, as Batsim drives it.
 *
 *  - the library (libfastbf-edc.so, dlopen'ed as Batsim does) exports
 *    Batsim's three EDC functions and nothing of fastbf's own;
 *  - its init string chooses the options (an unknown key, a bad value or
 *    a string that is not JSON fails init, non-zero, with the key named);
 *    the hello carries every member Batsim 5.0.0-rc2 needs;
 *  - a short run: SimulationBeginsEvent (hosts and their states), job
 *    submissions (with a NUL after the JSON, as Batsim sends it),
 *    ExecuteJobEvent on the lowest free hosts with a predefined executor
 *    placement, completions, and a ForceSimulationStopEvent with a non-zero
 *    return for an unknown job;
 *  - two library copies loaded apart (dlmopen, as Batsim's
 *    --edc-library-load-method dlmopen) keep apart states;
 *  - the process EDC (fastbf --protocol batsim5): the binary handshake
 *    ([u32 size][init] in, [u32 flags][hello] out), the same exchanges over
 *    ZeroMQ, exit 0 after SimulationEndsEvent, and a handshake whose size
 *    disagrees refused with exit 1.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "support/testkit.h"
#include "support/zmq_peer.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "build"
#endif

typedef uint8_t (*init_fn)(const uint8_t *, uint32_t, uint32_t *, uint8_t **, uint32_t *);
typedef uint8_t (*take_fn)(const uint8_t *, uint32_t, uint8_t **, uint32_t *);
typedef uint8_t (*deinit_fn)(void);

typedef struct edc {
    void *lib;
    init_fn init;
    take_fn take;
    deinit_fn deinit;
} edc;

static const char *lib_path(void)
{
    static char p[512];
    const char *dir = getenv("FBF_BUILD_DIR");
    snprintf(p, sizeof p, "%s/libfastbf-edc.so", dir ? dir : FBF_BUILD_DIR);
    return p;
}

static edc load(bool apart)
{
    edc e;
    e.lib = apart ? dlmopen(LM_ID_NEWLM, lib_path(), RTLD_NOW | RTLD_LOCAL)
                  : dlopen(lib_path(), RTLD_NOW | RTLD_LOCAL);
    if (!e.lib)
        fail_msg("cannot load %s: %s", lib_path(), dlerror());
    e.init = (init_fn)dlsym(e.lib, "batsim_edc_init");
    e.take = (take_fn)dlsym(e.lib, "batsim_edc_take_decisions");
    e.deinit = (deinit_fn)dlsym(e.lib, "batsim_edc_deinit");
    assert_non_null(e.init);
    assert_non_null(e.take);
    assert_non_null(e.deinit);
    return e;
}

/* The message Batsim sends: the JSON and a NUL counted in the size. */
static const char *take(edc *e, const char *json, int want_rc)
{
    uint8_t *out = NULL;
    uint32_t n = 0;
    uint8_t rc = e->take((const uint8_t *)json, (uint32_t)strlen(json) + 1, &out, &n);
    if (rc != want_rc)
        fail_msg("take_decisions returned %d, not %d, on %s", rc, want_rc, json);
    static char copy[8192];
    snprintf(copy, sizeof copy, "%.*s", (int)n, out ? (const char *)out : "");
    return copy;
}

#define BEGINS4                                                                                \
    "{\"now\":0,\"events\":[{\"timestamp\":0,\"event_type\":\"SimulationBeginsEvent\","       \
    "\"event\":{\"host_number\":4,\"computation_host_number\":4,\"computation_hosts\":["      \
    "{\"id\":0,\"name\":\"h0\",\"state\":\"IDLE\"},{\"id\":1,\"name\":\"h1\",\"state\":"     \
    "\"IDLE\"},{\"id\":2,\"name\":\"h2\",\"state\":\"IDLE\"},{\"id\":3,\"name\":\"h3\","     \
    "\"state\":\"IDLE\"}],\"storage_host_number\":0,\"batsim_execution_context_json\":"      \
    "\"{}\"}}]}"

static const char *submit(double t, const char *id, int res, double wall)
{
    static char m[512];
    snprintf(m, sizeof m,
             "{\"now\":%g,\"events\":[{\"timestamp\":%g,\"event_type\":\"JobSubmittedEvent\","
             "\"event\":{\"job_id\":\"%s\",\"job\":{\"resource_request\":%d,\"walltime\":%g,"
             "\"extra_data\":\"\",\"rigid\":true,\"profile_id\":\"w0!delay10\"},"
             "\"submission_time\":%g}}]}",
             t, t, id, res, wall, t);
    return m;
}

static const char *completed(double t, const char *id)
{
    static char m[512];
    snprintf(m, sizeof m,
             "{\"now\":%g,\"events\":[{\"timestamp\":%g,\"event_type\":\"JobCompletedEvent\","
             "\"event\":{\"job_id\":\"%s\",\"state\":\"COMPLETED_SUCCESSFULLY\","
             "\"return_code\":0}}]}",
             t, t, id);
    return m;
}

#define EXEC(t, id, hosts)                                                                     \
    "{\"now\":" t ",\"events\":[{\"timestamp\":" t ",\"event_type\":\"ExecuteJobEvent\","     \
    "\"event\":{\"job_id\":\"" id "\",\"allocation\":{\"host_allocation\":\"" hosts "\","    \
    "\"executor_placement_type\":\"PredefinedExecutorPlacementStrategyWrapper\","            \
    "\"executor_placement\":{\"strategy\":\"SpreadOverHostsFirst\"}}}}]}"

static void check_hello(const char *hello, size_t n)
{
    cJSON *m = cJSON_ParseWithLength(hello, n);
    assert_non_null(m);
    cJSON *ev = cJSON_GetArrayItem(cJSON_GetObjectItem(m, "events"), 0);
    assert_string_equal(cJSON_GetObjectItem(ev, "event_type")->valuestring, "EDCHelloEvent");
    cJSON *h = cJSON_GetObjectItem(ev, "event");
    const char *need[] = {"batprotocol_version", "decision_component_name",
                          "decision_component_version", "decision_component_commit"};
    for (size_t i = 0; i < 4; i++)
        assert_true(cJSON_IsString(cJSON_GetObjectItem(h, need[i])));
    assert_string_equal(cJSON_GetObjectItem(h, "decision_component_name")->valuestring,
                        "fastbf");
    assert_true(cJSON_IsObject(cJSON_GetObjectItem(h, "requested_simulation_features")));
    cJSON_Delete(m);
}

static uint8_t init(edc *e, const char *s, uint32_t *flags)
{
    uint8_t *hello = NULL;
    uint32_t n = 0;
    uint8_t rc = e->init((const uint8_t *)s, (uint32_t)strlen(s), flags, &hello, &n);
    if (rc == 0)
        check_hello((const char *)hello, n);
    return rc;
}

static void test_library_exports_and_init(void **state)
{
    edc e = load(false);
    assert_null(dlsym(e.lib, "fbf_session_create"));
    assert_null(dlsym(e.lib, "fbf_engine_create"));
    uint32_t flags = 0;
    assert_int_equal(init(&e, "{\"policy\":\"fcfs\",\"unknown\":1}", &flags), 1);
    assert_int_equal(init(&e, "{\"policy\":\"lifo\"}", &flags), 1);
    assert_int_equal(init(&e, "{\"workers\":0}", &flags), 1);
    assert_int_equal(init(&e, "{\"policy\":\"fcfs\",\"reservation_depth\":2}", &flags), 1);
    assert_int_equal(init(&e, "not json", &flags), 1);
    assert_int_equal(init(&e, "{\"order\":\"fifo\"}", &flags), 1);
    assert_int_equal(init(&e, "{\"backfill_order\":1}", &flags), 1);
    assert_int_equal(init(&e, "{\"estimate\":\"oracle\"}", &flags), 1);
    assert_int_equal(init(&e, "{\"policy\":\"easy\",\"order\":\"priority\","
                              "\"backfill_order\":\"sjf\",\"estimate\":\"predict\"}", &flags), 0);
    assert_int_equal(e.deinit(), 0);
    assert_int_equal(init(&e, "{\"policy\":\"conservative\",\"reservation_depth\":4,"
                              "\"workers\":2,\"format\":\"json\"}", &flags), 0);
    assert_int_equal(flags, 0x2);
    assert_int_equal(e.deinit(), 0);
    assert_int_equal(init(&e, "", &flags), 0);
    assert_int_equal(e.deinit(), 0);
    dlclose(e.lib);
}

static void test_library_run(void **state)
{
    edc e = load(false);
    uint32_t flags;
    assert_int_equal(init(&e, "{\"policy\":\"easy\"}", &flags), 0);
    assert_string_equal(take(&e, BEGINS4, 0), "{\"now\":0,\"events\":[]}");
    assert_string_equal(take(&e, submit(1, "w0!1", 3, 100), 0), EXEC("1", "w0!1", "0-2"));
    /* Waits for w0!1: 2 hosts are needed, 1 is free. */
    assert_string_equal(take(&e, submit(2, "w0!2", 2, 100), 0), "{\"now\":2,\"events\":[]}");
    assert_string_equal(take(&e, completed(50, "w0!1"), 0), EXEC("50", "w0!2", "0-1"));
    const char *r = take(&e, completed(60, "w0!9"), 1);
    assert_non_null(strstr(r, "\"event_type\":\"ForceSimulationStopEvent\""));
    assert_int_equal(e.deinit(), 0);
    dlclose(e.lib);
}

static void test_two_copies_apart(void **state)
{
#ifdef FBF_TEST_UNDER_SAN
    skip(); /* the sanitizers' runtimes do not follow dlmopen's namespaces */
#endif
    edc a = load(true), b = load(true);
    uint32_t flags;
    assert_int_equal(init(&a, "{\"policy\":\"fcfs\"}", &flags), 0);
    assert_int_equal(init(&b, "{\"policy\":\"fcfs\"}", &flags), 0);
    take(&a, BEGINS4, 0);
    take(&b, BEGINS4, 0);
    assert_string_equal(take(&a, submit(1, "w0!1", 4, 100), 0), EXEC("1", "w0!1", "0-3"));
    /* b never saw w0!1: its hosts are all free. */
    assert_string_equal(take(&b, submit(1, "w0!5", 2, 100), 0), EXEC("1", "w0!5", "0-1"));
    assert_int_equal(a.deinit(), 0);
    assert_int_equal(b.deinit(), 0);
    dlclose(a.lib);
    dlclose(b.lib);
}

/* One raw request and its reply over the peer's REQ socket. */
static size_t exchange(fbf_test_peer *p, const void *req, size_t len, char *reply, size_t cap)
{
    assert_true(zmq_send(p->sock, req, len, 0) >= 0);
    int timeout = 10000;
    zmq_setsockopt(p->sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    int n = zmq_recv(p->sock, reply, cap - 1, 0);
    assert_true(n >= 0);
    reply[n] = '\0';
    return (size_t)n;
}

static void test_process(void **state)
{
    fbf_test_peer p;
    assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){"--protocol", "batsim5",
                                                                   "--policy", "fcfs", NULL},
                                         true),
                     0);
    const char *init_s = "{\"format\":\"json\"}";
    uint8_t hs[64];
    uint32_t size = (uint32_t)strlen(init_s);
    memcpy(hs, &size, 4);
    memcpy(hs + 4, init_s, size);
    char reply[8192];
    size_t n = exchange(&p, hs, 4 + size, reply, sizeof reply);
    uint32_t flags;
    memcpy(&flags, reply, 4);
    assert_int_equal(flags, 0x2);
    check_hello(reply + 4, n - 4);
    exchange(&p, BEGINS4, strlen(BEGINS4) + 1, reply, sizeof reply);
    assert_string_equal(reply, "{\"now\":0,\"events\":[]}");
    const char *s1 = submit(1, "w0!1", 2, 100);
    exchange(&p, s1, strlen(s1) + 1, reply, sizeof reply);
    assert_string_equal(reply, EXEC("1", "w0!1", "0-1"));
    const char *ends = "{\"now\":9,\"events\":[{\"timestamp\":9,\"event_type\":"
                       "\"SimulationEndsEvent\",\"event\":{}}]}";
    exchange(&p, ends, strlen(ends), reply, sizeof reply);
    assert_string_equal(reply, "{\"now\":9,\"events\":[]}");
    assert_int_equal(fbf_test_peer_wait(&p, 10000), 0);
    fbf_test_peer_stop(&p);

    /* A handshake whose size says more than came. */
    assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){"--protocol", "batsim5",
                                                                   NULL},
                                         true),
                     0);
    size = 99;
    memcpy(hs, &size, 4);
    assert_true(zmq_send(p.sock, hs, 6, 0) >= 0);
    /* Answered all the same, so that the peer does not wait forever. */
    int ms = 10000;
    zmq_setsockopt(p.sock, ZMQ_RCVTIMEO, &ms, sizeof ms);
    int got = zmq_recv(p.sock, reply, sizeof reply - 1, 0);
    assert_true(got >= 0);
    reply[got] = '\0';
    assert_string_equal(reply, "fastbf stopped: handshake: the init string's size says 99 "
                               "bytes, 2 came");
    assert_int_equal(fbf_test_peer_wait(&p, 10000), 1);
    char *err = fbf_test_peer_stderr(&p);
    if (!strstr(err, "handshake: the init string's size says 99 bytes, 2 came"))
        fail_msg("stderr: %s", err);
    free(err);
    fbf_test_peer_stop(&p);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_exports_and_init),
        cmocka_unit_test(test_library_run),
        cmocka_unit_test(test_two_copies_apart),
        cmocka_unit_test(test_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
