/*
 * test_bv5_binary: fastbf as a Batsim 5 External Decision Component in
 * batprotocol's flatbuffers binary format, as Batsim drives it.
 *
 *  - the library (libfastbf-edc.so, dlopen'ed) with "format": "binary"
 *    answers flags 0x1 and a binary EDCHelloEvent, runs a short exchange
 *    and refuses an unknown job with a binary ForceSimulationStopEvent;
 *  - the first 400 jobs of KTH-SP2 under fcfs, easy and conservative,
 *    simulated here the way Batsim would: every message built in binary
 *    (tests/support/bv5_fb_kit.h), and given to the library once as it is
 *    and once turned into JSON by flatbuffers' own text generator
 *    (io/bv5_fb.h); both runs must decide the same thing at every step
 *    (a call's time compared in whole milliseconds, the binary format's
 *    unit);
 *  - (broken messages: test_bv5_binary_errors.c);
 *  - binary -> JSON -> binary gives back the same JSON, and the same
 *    bytes after any number of texts the converter refused;
 *  - the process EDC (fastbf --protocol batsim5) with "format": "binary":
 *    flags 0x1, a binary hello, binary exchanges, exit 0 at the end.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "io/bv5_fb.h"
#include "support/bv5_fb_kit.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"
#include "tools/lib/workload.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "build"
#endif
#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

typedef uint8_t (*init_fn)(const uint8_t *, uint32_t, uint32_t *, uint8_t **, uint32_t *);
typedef uint8_t (*take_fn)(const uint8_t *, uint32_t, uint8_t **, uint32_t *);
typedef uint8_t (*deinit_fn)(void);

typedef struct lib {
    void *h;
    init_fn init;
    take_fn take;
    deinit_fn deinit;
} lib;

static lib load(void)
{
    char p[512];
    const char *dir = getenv("FBF_BUILD_DIR");
    snprintf(p, sizeof p, "%s/libfastbf-edc.so", dir ? dir : FBF_BUILD_DIR);
    lib l = {.h = dlopen(p, RTLD_NOW | RTLD_LOCAL)};
    if (!l.h)
        fail_msg("cannot load %s: %s", p, dlerror());
    l.init = (init_fn)dlsym(l.h, "batsim_edc_init");
    l.take = (take_fn)dlsym(l.h, "batsim_edc_take_decisions");
    l.deinit = (deinit_fn)dlsym(l.h, "batsim_edc_deinit");
    assert_true(l.init && l.take && l.deinit);
    return l;
}

static fbf_test_fbmsg *msg;

static int setup(void **state)
{
    msg = fbf_test_fbmsg_new();
    return 0;
}

static int teardown(void **state)
{
    fbf_test_fbmsg_free(msg);
    return 0;
}

/* The decision lines of a JSON reply, in the kit's form (C in ms). */
static void json_lines(const char *text, size_t n, char *out, size_t cap)
{
    cJSON *m = cJSON_ParseWithLength(text, n);
    assert_non_null(m);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(m, "events"))
    {
        const char *t = cJSON_GetObjectItem(ev, "event_type")->valuestring;
        const cJSON *e = cJSON_GetObjectItem(ev, "event");
        size_t at = strlen(out);
        if (strcmp(t, "ExecuteJobEvent") == 0)
            snprintf(out + at, cap - at, "E %s %s\n",
                     cJSON_GetObjectItem(e, "job_id")->valuestring,
                     cJSON_GetObjectItem(cJSON_GetObjectItem(e, "allocation"),
                                         "host_allocation")->valuestring);
        else if (strcmp(t, "RejectJobEvent") == 0)
            snprintf(out + at, cap - at, "R %s\n", cJSON_GetObjectItem(e, "job_id")->valuestring);
        else if (strcmp(t, "CallMeLaterEvent") == 0)
            snprintf(out + at, cap - at, "C %.0f\n",
                     ceil(cJSON_GetObjectItem(cJSON_GetObjectItem(e, "when"), "time")->valuedouble *
                              1000.0 - 1e-6));
        else if (strcmp(t, "ForceSimulationStopEvent") == 0)
            snprintf(out + at, cap - at, "F\n");
        else
            snprintf(out + at, cap - at, "? %s\n", t);
    }
    cJSON_Delete(m);
}

/* ---------- the library, in binary ---------- */

static void test_library_binary(void **state)
{
    lib l = load();
    uint32_t flags = 0;
    uint8_t *out = NULL;
    uint32_t n = 0;
    const char *init = "{\"policy\":\"easy\",\"format\":\"binary\"}";
    assert_int_equal(l.init((const uint8_t *)init, (uint32_t)strlen(init), &flags, &out, &n), 0);
    assert_int_equal(flags, 0x1);
    char lines[4096] = "";
    assert_true(fbf_test_fb_lines(out, n, lines, sizeof lines) == 0);
    assert_string_equal(lines, "H fastbf\n");

    size_t len;
    const uint8_t *m;
    fbf_test_fbmsg_start(msg, 0);
    fbf_test_fbmsg_begins(msg, 0, 4, 4, NULL, NULL);
    m = fbf_test_fbmsg_finish(msg, false, &len);
    assert_int_equal(l.take(m, (uint32_t)len, &out, &n), 0);
    lines[0] = '\0';
    assert_true(fbf_test_fb_lines(out, n, lines, sizeof lines) == 0);
    assert_string_equal(lines, "");

    fbf_test_fbmsg_start(msg, 1);
    fbf_test_fbmsg_submitted(msg, 1, "w0!1", 3, 100, 1);
    fbf_test_fbmsg_submitted(msg, 1, "w0!2", 2, 100, 1);
    fbf_test_fbmsg_submitted(msg, 1, "w0!3", 1, NAN, 1); /* EASY needs a walltime */
    m = fbf_test_fbmsg_finish(msg, false, &len);
    assert_int_equal(l.take(m, (uint32_t)len, &out, &n), 0);
    lines[0] = '\0';
    assert_true(fbf_test_fb_lines(out, n, lines, sizeof lines) == 1);
    assert_string_equal(lines, "R w0!3\nE w0!1 0-2\n");

    fbf_test_fbmsg_start(msg, 50);
    fbf_test_fbmsg_completed(msg, 50, "w0!1", 0);
    m = fbf_test_fbmsg_finish(msg, false, &len);
    assert_int_equal(l.take(m, (uint32_t)len, &out, &n), 0);
    lines[0] = '\0';
    fbf_test_fb_lines(out, n, lines, sizeof lines);
    assert_string_equal(lines, "E w0!2 0-1\n");

    fbf_test_fbmsg_start(msg, 60);
    fbf_test_fbmsg_completed(msg, 60, "w0!9", 0);
    m = fbf_test_fbmsg_finish(msg, false, &len);
    assert_int_equal(l.take(m, (uint32_t)len, &out, &n), 1);
    lines[0] = '\0';
    assert_true(fbf_test_fb_lines(out, n, lines, sizeof lines) == 60);
    assert_string_equal(lines, "F\n");
    assert_int_equal(l.deinit(), 0);
    dlclose(l.h);
}

/* ---------- KTH-SP2, binary against JSON ---------- */

#define KTH_JOBS 400

typedef struct sim {
    const fbf_workload *wl;
    size_t next;             /* the next job to submit, by subtime */
    double end[KTH_JOBS];    /* when a started job ends; -1 not started */
    bool done[KTH_JOBS];
    double calls[256];
    size_t ncalls;
} sim;

static size_t job_index(const sim *s, const char *id)
{
    for (size_t i = 0; i < s->wl->nb_jobs && i < KTH_JOBS; i++)
        if (strcmp(s->wl->jobs[i].id, id) == 0)
            return i;
    fail_msg("unknown job %s in a decision", id);
    return 0;
}

/* What a decision does to the simulation. */
static void apply(sim *s, double now, const char *lines)
{
    char line[256];
    for (const char *p = lines; *p;) {
        size_t k = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)k, p);
        p += k + (p[k] == '\n');
        if (line[0] == 'E') {
            char id[64];
            assert_int_equal(sscanf(line, "E %63s", id), 1);
            const fbf_wl_job *j = &s->wl->jobs[job_index(s, id)];
            double run = j->walltime > 0 && j->walltime < j->runtime ? j->walltime : j->runtime;
            s->end[job_index(s, id)] = now + run;
        } else if (line[0] == 'C') {
            unsigned long long ms;
            assert_int_equal(sscanf(line, "C %llu", &ms), 1);
            assert_true(ms / 1000.0 > now && s->ncalls < 256);
            s->calls[s->ncalls++] = ms / 1000.0;
        } else if (line[0] == 'R') {
            char id[64];
            assert_int_equal(sscanf(line, "R %63s", id), 1);
            s->done[job_index(s, id)] = true;
        } else {
            fail_msg("unexpected decision %s", line);
        }
    }
}

/* The next Batsim message, in the kit; false when the simulation is over
 * (then the kit holds SimulationEndsEvent). */
static bool next_message(sim *s, double *now)
{
    size_t nj = s->wl->nb_jobs < KTH_JOBS ? s->wl->nb_jobs : KTH_JOBS;
    double t = INFINITY;
    if (s->next < nj)
        t = s->wl->jobs[s->next].subtime;
    for (size_t i = 0; i < nj; i++)
        if (!s->done[i] && s->end[i] >= 0 && s->end[i] < t)
            t = s->end[i];
    for (size_t i = 0; i < s->ncalls; i++)
        if (s->calls[i] < t)
            t = s->calls[i];
    if (t == INFINITY) {
        fbf_test_fbmsg_start(msg, *now);
        fbf_test_fbmsg_empty(msg, *now, "SimulationEndsEvent");
        return false;
    }
    *now = t;
    fbf_test_fbmsg_start(msg, t);
    for (size_t i = 0; i < nj; i++)
        if (!s->done[i] && s->end[i] == t) {
            const fbf_wl_job *j = &s->wl->jobs[i];
            bool killed = j->walltime > 0 && j->walltime < j->runtime;
            fbf_test_fbmsg_completed(msg, t, j->id, killed ? 2 : 0);
            s->done[i] = true;
        }
    for (; s->next < nj && s->wl->jobs[s->next].subtime == t; s->next++) {
        const fbf_wl_job *j = &s->wl->jobs[s->next];
        fbf_test_fbmsg_submitted(msg, t, j->id, (uint32_t)j->res, j->walltime, j->subtime);
        if (s->next + 1 == nj)
            fbf_test_fbmsg_empty(msg, t, "AllStaticJobsHaveBeenSubmittedEvent");
    }
    for (size_t i = 0; i < s->ncalls;)
        if (s->calls[i] == t) {
            fbf_test_fbmsg_called(msg, t, "fastbf");
            s->calls[i] = s->calls[--s->ncalls];
        } else {
            i++;
        }
    return true;
}

/* One whole run; the log of every decision, by message. */
static char *run(lib *l, const fbf_workload *wl, const char *policy, bool binary)
{
    char init[128];
    snprintf(init, sizeof init, "{\"policy\":\"%s\",\"format\":\"%s\"}", policy,
             binary ? "binary" : "json");
    uint32_t flags, n;
    uint8_t *out;
    assert_int_equal(l->init((const uint8_t *)init, (uint32_t)strlen(init), &flags, &out, &n), 0);
    fbf_bv5_fb *conv = fbf_bv5_fb_create();
    sim *s = calloc(1, sizeof *s);
    s->wl = wl;
    for (size_t i = 0; i < KTH_JOBS; i++)
        s->end[i] = -1;
    size_t cap = 1 << 20;
    char *log = calloc(1, cap), *lines = malloc(1 << 16);
    double now = 0;
    bool more = true;
    fbf_test_fbmsg_start(msg, 0);
    fbf_test_fbmsg_begins(msg, 0, wl->nb_res, wl->nb_res, NULL, NULL);
    for (int step = 0;; step++) {
        size_t len;
        const uint8_t *m = fbf_test_fbmsg_finish(msg, false, &len);
        fbf_error err;
        if (!binary) { /* the same message as JSON, NUL included as Batsim sends it */
            const char *json;
            assert_int_equal(fbf_bv5_fb_to_json(conv, m, len, &json, &len, &err), 0);
            m = (const uint8_t *)json;
            len++;
        }
        uint8_t rc = l->take(m, (uint32_t)len, &out, &n);
        assert_int_equal(rc, 0);
        lines[0] = '\0';
        if (binary)
            assert_false(isnan(fbf_test_fb_lines(out, n, lines, 1 << 16)));
        else
            json_lines((const char *)out, n, lines, 1 << 16);
        size_t at = strlen(log);
        assert_true(at + strlen(lines) + 64 < cap);
        snprintf(log + at, cap - at, "@%.6f\n%s", now, lines);
        if (!more)
            break;
        apply(s, now, lines);
        more = next_message(s, &now);
        assert_true(step < 100000);
    }
    assert_int_equal(l->deinit(), 0);
    fbf_bv5_fb_destroy(conv);
    free(lines);
    free(s);
    return log;
}

static void test_kth_binary_equals_json(void **state)
{
    fbf_error err;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.max_jobs = KTH_JOBS;
    fbf_workload *wl =
        fbf_workload_read(FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", &o, &err);
    if (!wl)
        fail_msg("%s", err.text);
    lib l = load();
    const char *policies[] = {"fcfs", "easy", "conservative"};
    for (size_t p = 0; p < 3; p++) {
        char *json = run(&l, wl, policies[p], false);
        char *bin = run(&l, wl, policies[p], true);
        assert_true(strlen(json) > 4000); /* every job started once, and more */
        if (strcmp(json, bin) != 0)
            fail_msg("%s: binary and JSON runs differ", policies[p]);
        free(json);
        free(bin);
    }
    dlclose(l.h);
    fbf_workload_destroy(wl);
}

/* ---------- conversions ---------- */

static void test_round_trip(void **state)
{
    fbf_bv5_fb *f = fbf_bv5_fb_create();
    fbf_test_fbmsg_start(msg, 7.25);
    fbf_test_fbmsg_begins(msg, 0, 3, 3, (const int[]){1, 0, 3}, "13:14:15");
    fbf_test_fbmsg_submitted(msg, 1, "w0!1", 2, NAN, 0.5);
    fbf_test_fbmsg_submitted(msg, 1, "w0!2", 1, 30, 1);
    fbf_test_fbmsg_completed(msg, 2, "w0!1", 3);
    fbf_test_fbmsg_killed(msg, 3, (const char *const[]){"w0!2", "w0!3"}, 2);
    fbf_test_fbmsg_called(msg, 4, "fastbf-1");
    fbf_test_fbmsg_pstate(msg, 5, "0-1 4", 13);
    fbf_test_fbmsg_onoff(msg, 6, "2", 1);
    fbf_test_fbmsg_empty(msg, 7, "AllStaticJobsHaveBeenSubmittedEvent");
    fbf_test_fbmsg_empty(msg, 7.25, "SimulationEndsEvent");
    size_t len, jlen, blen;
    const uint8_t *m = fbf_test_fbmsg_finish(msg, false, &len);
    const char *json;
    const uint8_t *back;
    fbf_error err;
    assert_int_equal(fbf_bv5_fb_to_json(f, m, len, &json, &jlen, &err), 0);
    char *first = strdup(json);
    assert_non_null(strstr(first, "\"event_type\": \"HostsTurnedOnOffEvent\""));
    assert_int_equal(fbf_bv5_fb_from_json(f, first, jlen + 1, &back, &blen, &err), 0);
    assert_int_equal(fbf_bv5_fb_to_json(f, back, blen, &json, &jlen, &err), 0);
    assert_string_equal(json, first);
    free(first);
    /* the schema's call time is an integer: a fractional one is not JSON it reads */
    const char *frac = "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":"
                       "\"CallMeLaterEvent\",\"event\":{\"call_me_later_id\":\"c\","
                       "\"when_type\":\"OneShot\",\"when\":{\"time\":2.5}}}]}";
    assert_int_equal(fbf_bv5_fb_from_json(f, frac, strlen(frac), &back, &blen, &err), -EPROTO);
    assert_non_null(strstr(err.text, "JSON: "));
    fbf_bv5_fb_destroy(f);
}

/* A converter keeps its parser after a text it refuses (io/bv5_fb_write.cc):
 * refusals of every kind, mid-table at any depth, past the 256 after
 * which it starts afresh, never change what a valid text converts to. */
static void test_refusals_keep_conversions_exact(void **state)
{
    (void)state;
    fbf_test_fbmsg_start(msg, 3);
    fbf_test_fbmsg_begins(msg, 0, 3, 3, (const int[]){1, 0, 3}, "13:14:15");
    fbf_test_fbmsg_submitted(msg, 1, "w0!1", 2, NAN, 0.5);
    fbf_test_fbmsg_killed(msg, 2, (const char *const[]){"w0!2", "w0!3"}, 2);
    fbf_test_fbmsg_called(msg, 3, "fastbf-1");
    size_t len, jlen, blen, rlen;
    const uint8_t *m = fbf_test_fbmsg_finish(msg, false, &len), *bin;
    const char *json;
    fbf_error err;
    fbf_bv5_fb *fresh = fbf_bv5_fb_create(), *f = fbf_bv5_fb_create();
    assert_int_equal(fbf_bv5_fb_to_json(fresh, m, len, &json, &jlen, &err), 0);
    char *valid = strdup(json);
    assert_int_equal(fbf_bv5_fb_from_json(fresh, valid, jlen, &bin, &rlen, &err), 0);
    uint8_t *want = malloc(rlen);
    memcpy(want, bin, rlen);
    char half[4096], deep[512];
    snprintf(half, sizeof half, "%.*s", (int)(jlen / 2), valid);
    size_t d = (size_t)snprintf(deep, sizeof deep, "{\"now\":1,\"events\":");
    for (int i = 0; i < 100; i++)
        deep[d++] = '[';
    deep[d] = '\0';
    const char *const bad[] = {
        half,                                                  /* ends mid-event */
        deep,                                                  /* past the depth limit */
        "{\"now\":1,\"now\":2,\"events\":[]}",                   /* a field twice */
        "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":\"CallMeLaterEvent\","
        "\"event\":{\"call_me_later_id\":\"c\",\"when_type\":\"OneShot\","
        "\"when\":{\"time\":2.5}}}]}",                                /* a wrong value, 3 deep */
        "{\"now\":1,\"events\":[{\"timestamp\":1,\"event\":{\"job_id\":\"w0!1\"},"
        "\"event_type\":\"JobCompletedEvent\",\"bogus\":1}]}",          /* union first, unknown */
    };
    size_t nbad = sizeof bad / sizeof bad[0];
    for (size_t i = 0; i < 600; i++) {
        assert_int_equal(fbf_bv5_fb_from_json(f, bad[i % nbad], strlen(bad[i % nbad]), &bin,
                                              &blen, &err),
                         -EPROTO);
        assert_int_equal(fbf_bv5_fb_from_json(f, valid, jlen, &bin, &blen, &err), 0);
        assert_int_equal(blen, rlen);
        assert_memory_equal(bin, want, rlen);
    }
    free(want);
    free(valid);
    fbf_bv5_fb_destroy(f);
    fbf_bv5_fb_destroy(fresh);
}

/* ---------- the process ---------- */

static size_t exchange(fbf_test_peer *p, const void *req, size_t len, uint64_t *reply,
                       size_t cap)
{
    assert_true(zmq_send(p->sock, req, len, 0) >= 0);
    int timeout = 10000;
    zmq_setsockopt(p->sock, ZMQ_RCVTIMEO, &timeout, sizeof timeout);
    int n = zmq_recv(p->sock, reply, cap, 0);
    assert_true(n >= 0);
    return (size_t)n;
}

static void test_process_binary(void **state)
{
    fbf_test_peer p;
    assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){"--protocol", "batsim5",
                                                                   "--policy", "fcfs", NULL},
                                         true),
                     0);
    const char *init = "{\"format\":\"binary\"}";
    uint8_t hs[64];
    uint32_t size = (uint32_t)strlen(init), flags;
    memcpy(hs, &size, 4);
    memcpy(hs + 4, init, size);
    static uint64_t reply[4096], hello[4096];
    size_t n = exchange(&p, hs, 4 + size, reply, sizeof reply);
    memcpy(&flags, reply, 4);
    assert_int_equal(flags, 0x1);
    memcpy(hello, (uint8_t *)reply + 4, n - 4); /* aligned again */
    char lines[1024] = "";
    fbf_test_fb_lines((uint8_t *)hello, n - 4, lines, sizeof lines);
    assert_string_equal(lines, "H fastbf\n");
    size_t len;
    const uint8_t *m;
    fbf_test_fbmsg_start(msg, 0);
    fbf_test_fbmsg_begins(msg, 0, 4, 0, NULL, NULL);
    m = fbf_test_fbmsg_finish(msg, false, &len);
    n = exchange(&p, m, len, reply, sizeof reply);
    lines[0] = '\0';
    fbf_test_fb_lines((uint8_t *)reply, n, lines, sizeof lines);
    assert_string_equal(lines, "");
    fbf_test_fbmsg_start(msg, 1);
    fbf_test_fbmsg_submitted(msg, 1, "w0!1", 2, 100, 1);
    m = fbf_test_fbmsg_finish(msg, false, &len);
    n = exchange(&p, m, len, reply, sizeof reply);
    fbf_test_fb_lines((uint8_t *)reply, n, lines, sizeof lines);
    assert_string_equal(lines, "E w0!1 0-1\n");
    fbf_test_fbmsg_start(msg, 9);
    fbf_test_fbmsg_empty(msg, 9, "SimulationEndsEvent");
    m = fbf_test_fbmsg_finish(msg, false, &len);
    n = exchange(&p, m, len, reply, sizeof reply);
    assert_true(fbf_test_fb_lines((uint8_t *)reply, n, lines, sizeof lines) == 9);
    assert_int_equal(fbf_test_peer_wait(&p, 10000), 0);
    fbf_test_peer_stop(&p);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_binary),
        cmocka_unit_test(test_kth_binary_equals_json),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refusals_keep_conversions_exact),
        cmocka_unit_test(test_process_binary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
