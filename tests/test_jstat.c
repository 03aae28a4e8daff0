/*
 * test_jstat: fastbf-jstat against a real fastbf --control, and attaching
 * to running simulations:
 *  - the tool's four commands on a fastbf (Batsim v4) brought to a known
 *    state by hand: list's table, query's JSON, an update that waits for
 *    the next decision point and makes EASY backfill the job, notify's
 *    lines, and its refusals (exit 1 with fastbf's reason, 2 for a bad
 *    command line);
 *  - attaching changes nothing: a replay (Batsim v4) and a Flux run
 *    (fastbf-fluxsim), each with a watcher that takes every notification
 *    and lists and queries all along, give the out_jobs.csv of the same
 *    run without a control endpoint; the notifications it got are each a
 *    job's next state.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "io/jsc.h"
#include "io/jsc_client.h"
#include "support/bv4_kit.h"
#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define MS 30000
#define M fbf_test_msg
#define SUB fbf_test_sub
#define DONE fbf_test_done

#if defined(FBF_TEST_UNDER_SAN) || defined(FBF_TEST_UNDER_TSAN)
#define JOBS "300"
#else
#define JOBS "1500"
#endif

/* Set once by main, before any thread: the commands run on threads too. */
static char jstat_bin[512];

static const char *jstat_path(void) { return jstat_bin; }

static int jstat(const char *const *args, char **out, char **err)
{
    return fbf_test_run_program(jstat_path(), args, MS, out, err);
}

static void exchange(fbf_test_peer *p, const char *req)
{
    char *reply = NULL;
    if (fbf_test_peer_request(p, req, &reply, MS) < 0)
        fail_msg("no reply from fastbf");
    free(reply);
}

/* A command run on a thread, for those that wait for fastbf. */
typedef struct bg {
    const char *args[12];
    int rc;
    char *out, *err;
} bg;
#define BG(...) {{__VA_ARGS__}, 0, NULL, NULL}

static void *run_bg(void *arg)
{
    bg *b = arg;
    b->rc = jstat(b->args, &b->out, &b->err);
    return NULL;
}

static void tool_commands(void **state)
{
    const char *url = fbf_test_tmp_path("ctl");
    char control[256];
    snprintf(control, sizeof control, "ipc://%s", url);
    const char *args[] = {"--policy", "easy", "--control", control, NULL};
    fbf_test_peer p;
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    exchange(&p, fbf_test_bv4_begins(4, ""));
    exchange(&p, M("{'now':0,'events':[%s,%s,%s]}", SUB(0, "w0!1", 3, 100),
                   SUB(0, "w0!2", 4, 50), SUB(0, "w0!3", 1, 500)));
    char *out = NULL, *err = NULL;
    const char *list[] = {"--control", control, "list", NULL};
    assert_int_equal(jstat(list, &out, &err), 0);
    assert_string_equal(out,
        "               JOBID STATE        NCORES     WALLTIME     T_ESTIMATE REASON\n"
        "                w0!2 schedreq          4         50.0          100.0 insufficient "
        "resources: reserved at its t_estimate\n"
        "                w0!3 schedreq          1        500.0              - insufficient "
        "resources: no reservation\n"
        "                w0!1 running           3        100.0              - \n");
    free(out);
    free(err);
    const char *q[] = {"--control", control, "query", "w0!1", "state-pair", NULL};
    assert_int_equal(jstat(q, &out, &err), 0);
    assert_string_equal(out, "{\"state-pair\":{\"ostate\":4,\"nstate\":9}}\n");
    free(out);
    free(err);
    /* An update waits for the next decision point; notify sees it. */
    const char *ready = fbf_test_tmp_path("notify-ready");
    unlink(ready);
    bg up = BG("--control", control, "update", "w0!3", "rdesc", "{\"rdesc\":{\"walltime\":50}}",
               NULL);
    bg no = BG("--control", control, "notify", "--count", "2", "--ready", ready, NULL);
    pthread_t t1, t2;
    pthread_create(&t2, NULL, run_bg, &no);
    for (int i = 0; i < 3000 && access(ready, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(access(ready, F_OK), 0);
    pthread_create(&t1, NULL, run_bg, &up);
    /* Decision points until the update, applied at one of them, makes
     * EASY backfill job 3 (1 core for 50 s before 1's end at 100). They
     * stay at now = 1, so that a slow start of fastbf-jstat on a busy
     * machine cannot push the backfill window past its end. */
    bool backfilled = false;
    for (int i = 0; i < 600 && !backfilled; i++) {
        char *reply = NULL;
        assert_true(fbf_test_peer_request(&p, M("{'now':1,'events':[]}"), &reply, MS) > 0);
        backfilled = strstr(reply, "\"EXECUTE_JOB\",\"data\":{\"job_id\":\"w0!3\",\"alloc\":\"3\"");
        free(reply);
        if (!backfilled)
            usleep(50000);
    }
    assert_true(backfilled);
    pthread_join(t1, NULL);
    if (up.rc != 0)
        fail_msg("update: exit %d: %s", up.rc, up.err);
    exchange(&p, M("{'now':60,'events':[%s]}", DONE(60, "w0!1", "0-2")));
    pthread_join(t2, NULL);
    assert_int_equal(no.rc, 0);
    assert_string_equal(no.out, "w0!3 schedreq->running\nw0!1 running->complete\n");
    free(up.out);
    free(up.err);
    free(no.out);
    free(no.err);
    /* Refusals: fastbf's reason, exit 1; a bad command line, exit 2. */
    const char *bad[] = {"--control", control, "query", "w0!9", "rdesc", NULL};
    assert_int_equal(jstat(bad, &out, &err), 1);
    assert_string_equal(err, "fastbf-jstat: query w0!9 rdesc: unknown job w0!9\n");
    free(out);
    free(err);
    const char *bad2[] = {"--control", control, "update", "w0!1", "rdesc",
                          "{\"rdesc\":{\"walltime\":5}}", NULL};
    assert_int_equal(jstat(bad2, &out, &err), 1);
    assert_string_equal(err, "fastbf-jstat: update w0!1 rdesc: job w0!1 is complete: only a "
                             "waiting job's walltime can change\n");
    free(out);
    free(err);
    const char *bad3[] = {"--control", "tcp://0.0.0.0:4000", "list", NULL};
    assert_int_equal(jstat(bad3, &out, &err), 2);
    assert_non_null(strstr(err, "this machine's only"));
    free(out);
    free(err);
    const char *bad4[] = {"--control", control, "query", "w0!1", NULL};
    assert_int_equal(jstat(bad4, &out, &err), 2);
    free(out);
    free(err);
    fbf_test_peer_stop(&p);
}

/* ---- attaching to a running simulation ---- */

typedef struct watcher {
    char control[300];
    atomic_bool done, subscribed;
    long notices, lists, queries;
    char fault[256];
    int last[200000]; /* the last state seen per job number */
} watcher;

static int on_change(const char *jcb, void *arg, int errnum)
{
    watcher *w = arg;
    cJSON *o = cJSON_Parse(jcb);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "jobid");
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "state-pair");
    int os = (int)cJSON_GetObjectItemCaseSensitive(sp, "ostate")->valuedouble;
    int ns = (int)cJSON_GetObjectItemCaseSensitive(sp, "nstate")->valuedouble;
    const char *bang = cJSON_IsString(id) ? strchr(id->valuestring, '!') : NULL;
    long k = bang ? atol(bang + 1) : (long)(w->notices % 200000);
    if (bang && k >= 0 && k < 200000) {
        /* A job's changes come in order: each starts where the last left it. */
        if (w->last[k] && w->last[k] != os + 100 && !w->fault[0])
            snprintf(w->fault, sizeof w->fault, "job %s: %d->%d after %d", id->valuestring, os,
                     ns, w->last[k] - 100);
        w->last[k] = ns + 100;
    }
    w->notices++;
    cJSON_Delete(o);
    return 0;
}

static void *watch(void *arg)
{
    watcher *w = arg;
    fbf_error err;
    /* A generous timeout: on a busy machine an answer can take a while. */
    fbf_jsc_client *c = fbf_jsc_client_open(w->control, 3000, &err);
    int rc = !c ? -1 : fbf_jsc_notify_status(c, on_change, w, &err);
    if (rc == 0 && fbf_jsc_subscribed(c, MS) < 0)
        rc = fbf_errorf(&err, -ETIMEDOUT, "no welcome from fastbf within %d ms", MS);
    if (rc < 0) {
        snprintf(w->fault, sizeof w->fault, "attach: %.200s", err.text);
        fbf_jsc_client_close(c);
        atomic_store(&w->subscribed, true); /* nothing to wait for */
        return NULL;
    }
    atomic_store(&w->subscribed, true);
    while (!atomic_load(&w->done)) {
        fbf_jsc_dispatch(c, 20);
        char *json = NULL;
        if (fbf_jsc_list(c, &json, &err) == 0)
            w->lists++;
        free(json);
        json = NULL;
        if (fbf_jsc_query_jcb(c, "w0!3", "jcb", &json, &err) == 0 ||
            fbf_jsc_query_jcb(c, "16777216", "jcb", &json, &err) == 0)
            w->queries++;
        free(json);
    }
    fbf_jsc_client_close(c);
    return NULL;
}

/* fastbf, run on a thread until the simulation ends. */
typedef struct sched_run {
    const char *const *args;
    int rc;
    char *err;
} sched_run;

static void *run_sched(void *arg)
{
    sched_run *r = arg;
    r->rc = fbf_test_run_program(fbf_test_replay_fastbf_path(), r->args, 300000, NULL, &r->err);
    return NULL;
}

/* Starts fastbf with sched_args (which carry --control and --endpoint),
 * attaches a watcher and waits until it hears every change, then runs
 * program with args (a peer of that endpoint), the watcher listing and
 * querying meanwhile: so the watcher surely sees the whole run. */
static void run_watched(const char *const *sched_args, const char *program,
                        const char *const *args, const char *control, watcher *w)
{
    memset(w, 0, sizeof *w);
    snprintf(w->control, sizeof w->control, "%.250s", control);
    atomic_init(&w->done, false);
    atomic_init(&w->subscribed, false);
    sched_run sr = {sched_args, 0, NULL};
    pthread_t ts, tw;
    pthread_create(&ts, NULL, run_sched, &sr);
    pthread_create(&tw, NULL, watch, w);
    while (!atomic_load(&w->subscribed))
        usleep(1000);
    char *err = NULL;
    int rc = w->fault[0] ? 0 : fbf_test_run_program(program, args, 300000, NULL, &err);
    atomic_store(&w->done, true);
    pthread_join(tw, NULL);
    pthread_join(ts, NULL);
    if (w->fault[0])
        fail_msg("watcher: %s", w->fault);
    if (rc != 0)
        fail_msg("%s: exit %d: %s", program, rc, err);
    if (sr.rc != 0)
        fail_msg("fastbf: exit %d: %s", sr.rc, sr.err);
    free(err);
    free(sr.err);
    assert_true(w->notices > 0);
    assert_true(w->lists > 0);
}

static void same_csv(const char *a, const char *b)
{
    char pa[600], pb[600];
    snprintf(pa, sizeof pa, "%s/out_jobs.csv", a);
    snprintf(pb, sizeof pb, "%s/out_jobs.csv", b);
    char *x = fbf_test_replay_read(pa), *y = fbf_test_replay_read(pb);
    assert_non_null(x);
    assert_non_null(y);
    assert_true(strlen(x) > 1000);
    assert_string_equal(x, y);
    free(x);
    free(y);
}

static void attach_v4(void **state)
{
    const char *plain = fbf_test_tmp_path("v4-plain"), *seen = fbf_test_tmp_path("v4-seen");
    char control[256], endpoint[256], sched[600];
    snprintf(control, sizeof control, "ipc://%s", fbf_test_tmp_path("v4-ctl"));
    snprintf(endpoint, sizeof endpoint, "ipc://%s", fbf_test_tmp_path("v4-ep"));
    snprintf(sched, sizeof sched, "%s --policy conservative", fbf_test_replay_fastbf_path());
    const char *a1[] = {KTH, "--max-jobs", JOBS, "--scheduler", sched, "--out", plain, NULL};
    char *err = NULL;
    assert_int_equal(fbf_test_replay_run(a1, 300000, NULL, &err), 0);
    free(err);
    const char *s2[] = {"--policy", "conservative", "--control", control,
                        "--endpoint", endpoint, NULL};
    const char *a2[] = {KTH, "--max-jobs", JOBS, "--endpoint", endpoint, "--out", seen, NULL};
    watcher *w = calloc(1, sizeof *w);
    run_watched(s2, fbf_test_replay_path(), a2, control, w);
    free(w);
    same_csv(plain, seen);
}

static void attach_flux(void **state)
{
    char sim[512], port[16], control[256], endpoint[256], sched[800];
    snprintf(sim, sizeof sim, "%s/fastbf-fluxsim",
             getenv("FBF_BUILD_DIR") ? getenv("FBF_BUILD_DIR") : FBF_BUILD_DIR);
    snprintf(port, sizeof port, "%d", fbf_test_redis_shared()->port);
    snprintf(control, sizeof control, "ipc://%s", fbf_test_tmp_path("fx-ctl"));
    snprintf(endpoint, sizeof endpoint, "ipc://%s", fbf_test_tmp_path("fx-ep"));
    const char *plain = fbf_test_tmp_path("fx-plain"), *seen = fbf_test_tmp_path("fx-seen");
    const char *redis = fbf_test_redis_addr(fbf_test_redis_shared());
    snprintf(sched, sizeof sched, "%s --protocol flux --flux-ranks 100 --redis-port %s --policy "
             "easy", fbf_test_replay_fastbf_path(), port);
    const char *a1[] = {KTH, "--max-jobs", JOBS, "--redis", redis, "--scheduler", sched,
                        "--out", plain, "--quiet", NULL};
    char *err = NULL;
    assert_int_equal(fbf_test_run_program(sim, a1, 300000, NULL, &err), 0);
    free(err);
    const char *s2[] = {"--protocol", "flux", "--flux-ranks", "100", "--redis-port", port,
                        "--policy", "easy", "--control", control, "--endpoint", endpoint, NULL};
    const char *a2[] = {KTH, "--max-jobs", JOBS, "--redis", redis, "--endpoint", endpoint,
                        "--out", seen, "--quiet", NULL};
    watcher *w = calloc(1, sizeof *w);
    run_watched(s2, sim, a2, control, w);
    free(w);
    same_csv(plain, seen);
}

static int setup(void **state)
{
    if (fbf_test_redis_group_setup(state) != 0)
        return -1;
    return fbf_test_tmpdir_setup(state);
}

static int teardown(void **state)
{
    fbf_test_tmpdir_teardown(state);
    return fbf_test_redis_group_teardown(state);
}

int main(void)
{
    fbf_test_filter_from_env();
    const char *b = getenv("FBF_BUILD_DIR");
    snprintf(jstat_bin, sizeof jstat_bin, "%s/fastbf-jstat", b ? b : FBF_BUILD_DIR);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tool_commands),
        cmocka_unit_test(attach_v4),
        cmocka_unit_test(attach_flux),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
