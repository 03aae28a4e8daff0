/*
 * test_jsc: job status and control (io/jsc.h, io/jsc_server.h,
 * io/jsc_client.h) on sessions driven in process, with the control
 * endpoint on its own thread as in fastbf:
 *  - Batsim v4: each job's states (schedreq, running, complete, failed)
 *    as notifications and queries, the JCB's keys (rdesc, R_lite with
 *    machines as ranks, sched's t_estimate), list in flux jobs' order;
 *  - updates: a waiting job's walltime (EASY then backfills it), a
 *    cancel that rejects a waiting job and one that kills a running job,
 *    each answered once the next decision point applied it; refusals
 *    (unknown job, key, state; rdl);
 *  - Flux: integer job ids, R_lite by rank, states allocated and
 *    complete, a cancel answered by DENY with its note, a running job's
 *    cancel refused;
 *  - the endpoint: only ipc:// and the loopback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/bv4_session.h"
#include "io/flux_codec.h"
#include "io/jsc.h"
#include "io/jsc_client.h"
#include "io/jsc_server.h"
#include "policies/orders/registry.h"
#include "policies/registry.h"
#include "support/bv4_kit.h"
#include "support/flux_kit.h"
#include "support/testkit.h"

#define M fbf_test_msg
#define SUB fbf_test_sub
#define DONE fbf_test_done

typedef struct ctl {
    fbf_jsc *j;
    fbf_jsc_server *srv;
    fbf_jsc_client *c;
    char url[128];
} ctl;

static void ctl_open(ctl *c, fbf_jsc_life life, uint32_t cpr)
{
    fbf_error err;
    c->j = fbf_jsc_create(life, cpr, &err);
    assert_non_null(c->j);
    snprintf(c->url, sizeof c->url, "ipc://%s", fbf_test_tmp_path("ctl-%d", (int)life));
    c->srv = fbf_jsc_server_start(c->j, c->url, &err);
    if (!c->srv)
        fail_msg("server: %s", err.text);
    c->c = fbf_jsc_client_open(c->url, 10000, &err);
    assert_non_null(c->c);
}

static void ctl_close(ctl *c)
{
    fbf_jsc_client_close(c->c);
    fbf_jsc_server_stop(c->srv);
    fbf_jsc_destroy(c->j);
}

/* A query that must succeed; its JSON (static buffer). */
static const char *query(ctl *c, const char *id, const char *key)
{
    static char out[4096];
    char *jcb = NULL;
    fbf_error err;
    /* The control thread may still be applying the last decision point:
     * the records are published before the reply goes out, and a query
     * comes after, so one retry covers the thread's wake-up. */
    if (fbf_jsc_query_jcb(c->c, id, key, &jcb, &err) < 0)
        fail_msg("query %s %s: %s", id, key, err.text);
    snprintf(out, sizeof out, "%s", jcb);
    free(jcb);
    return out;
}

static const char *query_error(ctl *c, const char *id, const char *key)
{
    static char out[512];
    char *jcb = NULL;
    fbf_error err;
    assert_true(fbf_jsc_query_jcb(c->c, id, key, &jcb, &err) < 0);
    snprintf(out, sizeof out, "%s", err.text);
    return out;
}

typedef struct seen {
    char lines[8192];
} seen;

static int collect(const char *jcb, void *arg, int errnum)
{
    seen *s = arg;
    strncat(s->lines, jcb, sizeof s->lines - strlen(s->lines) - 2);
    strcat(s->lines, "\n");
    return 0;
}

/* Waits until the notifications received end with want's last line. */
static void await_notices(ctl *c, seen *s, const char *last)
{
    for (int i = 0; i < 100 && !strstr(s->lines, last); i++)
        fbf_jsc_dispatch(c->c, 50);
}

/* ---- Batsim v4 ---- */

static fbf_bv4_session *v4_ordered(const char *policy, const char *order, fbf_jsc *j)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_bv4_options o = {.engine = {.policy = pe->ops,
                                    .reservation_depth = pe->default_depth,
                                    .workers = 1,
                                    .order = order ? fbf_order_lookup(order) : NULL},
                         .jsc = j};
    fbf_error err;
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    assert_non_null(s);
    return s;
}

static fbf_bv4_session *v4(const char *policy, fbf_jsc *j) { return v4_ordered(policy, NULL, j); }

static void batsim_states_and_keys(void **state)
{
    ctl c;
    ctl_open(&c, FBF_JSC_BATSIM, 1);
    seen n = {0};
    fbf_error err;
    assert_int_equal(fbf_jsc_notify_status(c.c, collect, &n, &err), 0);
    assert_int_equal(fbf_jsc_subscribed(c.c, 30000), 0); /* from now on, every change */
    fbf_bv4_session *s = v4("easy", c.j);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(4, ""), "");
    fbf_test_bv4_ok(s, M("{'now':0,'events':[%s,%s,%s]}", SUB(0, "w0!1", 3, 100),
                         SUB(0, "w0!2", 4, 50), SUB(0, "w0!3", 9, 10)),
                    "REJECT_JOB w0!3|EXECUTE_JOB w0!1 0-2");
    await_notices(&c, &n, "{\"jobid\":\"w0!1\",\"state-pair\":{\"ostate\":4,\"nstate\":9}}");
    assert_string_equal(n.lines,
                        "{\"jobid\":\"w0!1\",\"state-pair\":{\"ostate\":0,\"nstate\":4}}\n"
                        "{\"jobid\":\"w0!2\",\"state-pair\":{\"ostate\":0,\"nstate\":4}}\n"
                        "{\"jobid\":\"w0!3\",\"state-pair\":{\"ostate\":0,\"nstate\":4}}\n"
                        "{\"jobid\":\"w0!3\",\"state-pair\":{\"ostate\":4,\"nstate\":13}}\n"
                        "{\"jobid\":\"w0!1\",\"state-pair\":{\"ostate\":4,\"nstate\":9}}\n");
    assert_string_equal(query(&c, "w0!1", "state-pair"),
                        "{\"state-pair\":{\"ostate\":4,\"nstate\":9}}");
    assert_string_equal(query(&c, "w0!1", "rdesc"),
                        "{\"rdesc\":{\"nnodes\":3,\"ntasks\":3,\"ncores\":3,\"ngpus\":0,"
                        "\"walltime\":100}}");
    assert_string_equal(query(&c, "w0!1", "R_lite"),
                        "{\"R_lite\":\"[{\\\"rank\\\":\\\"0-2\\\",\\\"children\\\":"
                        "{\\\"core\\\":\\\"0\\\"}}]\"}");
    assert_string_equal(query(&c, "w0!2", "sched"),
                        "{\"sched\":{\"t_estimate\":100,\"reason_pending\":\"insufficient "
                        "resources: reserved at its t_estimate\"}}");
    assert_string_equal(query(&c, "w0!2", "jcb"),
                        "{\"jobid\":\"w0!2\",\"state-pair\":{\"ostate\":0,\"nstate\":4},"
                        "\"rdesc\":{\"nnodes\":4,\"ntasks\":4,\"ncores\":4,\"ngpus\":0,"
                        "\"walltime\":50},\"R_lite\":null,\"sched\":{\"t_estimate\":100,"
                        "\"reason_pending\":\"insufficient resources: reserved at its "
                        "t_estimate\"}}");
    char *list = NULL;
    assert_int_equal(fbf_jsc_list(c.c, &list, &err), 0);
    assert_string_equal(list, "{\"jobs\":[{\"jobid\":\"w0!2\",\"state\":\"schedreq\","
                              "\"ncores\":4,\"walltime\":50,\"sched\":{\"t_estimate\":100,"
                              "\"reason_pending\":\"insufficient resources: reserved at its "
                              "t_estimate\"}},{\"jobid\":\"w0!1\",\"state\":\"running\","
                              "\"ncores\":3,\"walltime\":100,\"sched\":{\"t_estimate\":null,"
                              "\"reason_pending\":null}}]}");
    free(list);
    n.lines[0] = '\0';
    fbf_test_bv4_ok(s, M("{'now':80,'events':[%s]}", DONE(80, "w0!1", "0-2")),
                    "EXECUTE_JOB w0!2 0-3");
    await_notices(&c, &n, "{\"jobid\":\"w0!2\",\"state-pair\":{\"ostate\":4,\"nstate\":9}}");
    assert_string_equal(n.lines,
                        "{\"jobid\":\"w0!1\",\"state-pair\":{\"ostate\":9,\"nstate\":11}}\n"
                        "{\"jobid\":\"w0!2\",\"state-pair\":{\"ostate\":4,\"nstate\":9}}\n");
    assert_string_equal(query(&c, "w0!2", "sched"),
                        "{\"sched\":{\"t_estimate\":null,\"reason_pending\":null}}");
    /* Refusals, each naming what. */
    assert_string_equal(query_error(&c, "w0!9", "rdesc"), "unknown job w0!9");
    assert_string_equal(query_error(&c, "w0!1", "rdl"), "key \"rdl\": a scheduler knows no RDL");
    assert_string_equal(query_error(&c, "w0!1", "nope"),
                        "unknown key \"nope\": the JCB's keys are jobid, state-pair, rdesc, "
                        "R_lite, sched (and jcb for all)");
    fbf_bv4_session_destroy(s);
    ctl_close(&c);
}

/* An update's caller waits for the next decision point: on a thread. */
typedef struct upd {
    ctl *c;
    const char *id, *key, *jcb;
    int rc;
    char why[256];
} upd;
#define UPD(c, id, key, jcb) {c, id, key, jcb, 0, ""}

static void *run_update(void *arg)
{
    upd *u = arg;
    fbf_error err = {{0}};
    u->rc = fbf_jsc_update_jcb(u->c->c, u->id, u->key, u->jcb, &err);
    snprintf(u->why, sizeof u->why, "%s", err.text);
    return NULL;
}

/* Starts the update and waits until the I/O side can take it. */
static pthread_t update_async(upd *u)
{
    pthread_t t;
    pthread_create(&t, NULL, run_update, u);
    for (int i = 0; i < 3000 && !fbf_jsc_updates_waiting(u->c->j); i++)
        usleep(10000);
    assert_true(fbf_jsc_updates_waiting(u->c->j));
    return t;
}

static void batsim_updates(void **state)
{
    ctl c;
    ctl_open(&c, FBF_JSC_BATSIM, 1);
    fbf_bv4_session *s = v4("easy", c.j);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(4, ""), "");
    fbf_test_bv4_ok(s, M("{'now':0,'events':[%s,%s,%s,%s]}", SUB(0, "w0!1", 3, 100),
                         SUB(0, "w0!2", 4, 50), SUB(0, "w0!3", 1, 500), SUB(0, "w0!4", 2, 50)),
                    "EXECUTE_JOB w0!1 0-2");
    /* 3 cannot backfill for 500 s; at 50 s it can. */
    upd u = UPD(&c, "w0!3", "rdesc", "{\"rdesc\":{\"walltime\":50}}");
    pthread_t t = update_async(&u);
    fbf_test_bv4_ok(s, M("{'now':1,'events':[]}"), "EXECUTE_JOB w0!3 3");
    pthread_join(t, NULL);
    if (u.rc != 0)
        fail_msg("update: %s", u.why);
    assert_string_equal(query(&c, "w0!3", "rdesc"),
                        "{\"rdesc\":{\"nnodes\":1,\"ntasks\":1,\"ncores\":1,\"ngpus\":0,"
                        "\"walltime\":50}}");
    /* A cancel rejects a waiting job, and kills a running one. */
    upd u2 = UPD(&c, "w0!2", "state-pair", "{\"state-pair\":{\"nstate\":10}}");
    t = update_async(&u2);
    fbf_test_bv4_ok(s, M("{'now':2,'events':[]}"), "REJECT_JOB w0!2");
    pthread_join(t, NULL);
    assert_int_equal(u2.rc, 0);
    assert_string_equal(query(&c, "w0!2", "state-pair"),
                        "{\"state-pair\":{\"ostate\":4,\"nstate\":10}}");
    upd u3 = UPD(&c, "w0!1", "state-pair", "{\"state-pair\":{\"nstate\":10}}");
    t = update_async(&u3);
    fbf_test_bv4_ok(s, M("{'now':3,'events':[]}"), "KILL_JOB w0!1");
    pthread_join(t, NULL);
    assert_int_equal(u3.rc, 0);
    fbf_test_bv4_ok(s, M("{'now':3,'events':[{'timestamp':3,'type':'JOB_KILLED','data':"
                         "{'job_ids':['w0!1'],'job_progress':{}}}]}"),
                    "EXECUTE_JOB w0!4 0-1");
    assert_string_equal(query(&c, "w0!1", "state-pair"),
                        "{\"state-pair\":{\"ostate\":9,\"nstate\":10}}");
    /* Refused at once, without a decision point. */
    static const struct {
        const char *id, *key, *jcb, *why;
    } bad[] = {
        {"w0!1", "state-pair", "{\"state-pair\":{\"nstate\":10}}",
         "job w0!1 is cancelled: only a waiting or running job can be cancelled"},
        {"w0!4", "rdesc", "{\"rdesc\":{\"walltime\":5}}",
         "job w0!4 is running: only a waiting job's walltime can change"},
        {"w0!4", "state-pair", "{\"state-pair\":{\"nstate\":11}}",
         "value.state-pair.nstate: fastbf takes J_CANCELLED (10) only"},
        {"w0!4", "rdesc", "{\"rdesc\":{\"ncores\":5}}",
         "value.rdesc: expected {\"walltime\": W}, W a number of seconds >= 0: only the "
         "walltime of rdesc can change"},
        {"w0!4", "rdesc", "{\"walltime\":5}",
         "value: expected {\"rdesc\": ...}: JSC's update names its key at the top"},
        {"w0!4", "jobid", "{\"jobid\":5}",
         "key \"jobid\" cannot be updated: rdesc (its walltime), priority and state-pair (a "
         "cancel) can"},
        {"w0!4", "priority", "{\"priority\":5}",
         "job w0!4 is running: only a waiting job's priority can change"},
        {"w0!4", "priority", "{\"priority\":\"high\"}", "value.priority: expected a finite number"},
        {"w0!7", "rdesc", "{\"rdesc\":{\"walltime\":5}}", "unknown job w0!7"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        upd b = UPD(&c, bad[i].id, bad[i].key, bad[i].jcb);
        run_update(&b);
        assert_true(b.rc < 0);
        assert_string_equal(b.why, bad[i].why);
    }
    fbf_bv4_session_destroy(s);
    ctl_close(&c);
}

/* Under the priority order, a waiting job raised above the others starts
 * first when machines come free. */
static void batsim_priority_update(void **state)
{
    (void)state;
    ctl c;
    ctl_open(&c, FBF_JSC_BATSIM, 1);
    fbf_bv4_session *s = v4_ordered("fcfs", "priority", c.j);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(4, ""), "");
    fbf_test_bv4_ok(s, M("{'now':0,'events':[%s,%s,%s]}", SUB(0, "w0!1", 4, 100),
                         SUB(0, "w0!2", 4, 50), SUB(0, "w0!3", 4, 50)),
                    "EXECUTE_JOB w0!1 0-3");
    upd u = UPD(&c, "w0!3", "priority", "{\"priority\":7}");
    pthread_t t = update_async(&u);
    fbf_test_bv4_ok(s, M("{'now':1,'events':[]}"), "");
    pthread_join(t, NULL);
    if (u.rc != 0)
        fail_msg("update: %s", u.why);
    fbf_test_bv4_ok(s, M("{'now':100,'events':[%s]}", fbf_test_done(100, "w0!1", "0-3")),
                    "EXECUTE_JOB w0!3 0-3");
    fbf_bv4_session_destroy(s);
    ctl_close(&c);
}

/* ---- Flux ---- */

static void flux_jobs(void **state)
{
    ctl c;
    ctl_open(&c, FBF_JSC_FLUX, 2);
    fbf_test_flux t;
    /* flux_kit's session, with the JSC: its options are its own. */
    fbf_test_flux_open(&t, "easy", FBF_FLUX_MODE_UNLIMITED, 2, 2);
    fbf_flux_session_destroy(t.s);
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    fbf_flux_options o = {.session = {.engine = {.policy = pe->ops, .reservation_depth = 1,
                                                 .workers = 1},
                                      .jsc = c.j},
                          .nranks = 2,
                          .cores_per_rank = 2,
                          .kvs = t.kvs,
                          .warn = t.warn,
                          .annotate = true};
    fbf_error err;
    t.s = fbf_flux_session_create(&o, &err);
    assert_non_null(t.s);
    fbf_test_flux_handshake(&t, NULL);
    fbf_test_flux_jobspec(&t, 18446744073709551557ULL, 3, 100);
    fbf_test_flux_jobspec(&t, 2, 4, 10);
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":18446744073709551557,\"priority\":1,\"userid\":1}");
    fbf_test_flux_req(&t, FBF_FLUX_ALLOC, "{\"id\":2,\"priority\":1,\"userid\":1}");
    fbf_test_flux_instant(&t, 0);
    assert_string_equal(query(&c, "18446744073709551557", "jobid"),
                        "{\"jobid\":18446744073709551557}");
    assert_string_equal(query(&c, "18446744073709551557", "state-pair"),
                        "{\"state-pair\":{\"ostate\":4,\"nstate\":5}}");
    assert_string_equal(query(&c, "18446744073709551557", "R_lite"),
                        "{\"R_lite\":\"[{\\\"rank\\\":\\\"0\\\",\\\"children\\\":{\\\"core\\\":"
                        "\\\"0-1\\\"}},{\\\"rank\\\":\\\"1\\\",\\\"children\\\":{\\\"core\\\":"
                        "\\\"0\\\"}}]\"}");
    assert_string_equal(query(&c, "18446744073709551557", "rdesc"),
                        "{\"rdesc\":{\"nnodes\":2,\"ntasks\":3,\"ncores\":3,\"ngpus\":0,"
                        "\"walltime\":100}}");
    /* A running Flux job is the job manager's to cancel. */
    upd r = UPD(&c, "18446744073709551557", "state-pair", "{\"state-pair\":{\"nstate\":10}}");
    run_update(&r);
    assert_string_equal(r.why, "job 18446744073709551557 runs: a Flux job that runs is the job "
                               "manager's to cancel (RFC 27 gives the scheduler no kill)");
    /* A waiting one is denied, with the note. */
    upd u = UPD(&c, "2", "state-pair", "{\"state-pair\":{\"nstate\":10}}");
    pthread_t th = update_async(&u);
    assert_string_equal(fbf_test_flux_instant(&t, 1),
                        "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":2,\"note\":\"canceled "
                        "through fastbf's control endpoint\"}\n"
                        "resp sim.instant e=0 m=7 {\"now\":1}\n");
    pthread_join(th, NULL);
    assert_int_equal(u.rc, 0);
    assert_string_equal(query(&c, "2", "state-pair"),
                        "{\"state-pair\":{\"ostate\":4,\"nstate\":10}}");
    fbf_test_flux_req(&t, FBF_FLUX_FREE, "{\"id\":18446744073709551557}");
    fbf_test_flux_instant(&t, 50);
    assert_string_equal(query(&c, "18446744073709551557", "state-pair"),
                        "{\"state-pair\":{\"ostate\":5,\"nstate\":11}}");
    fbf_test_flux_close(&t);
    ctl_close(&c);
}

static void endpoints(void **state)
{
    static const char *const refused[] = {"tcp://0.0.0.0:5000", "tcp://*:5000",
                                          "tcp://10.0.0.1:5000", "tcp://127.0.0.1:65535",
                                          "tcp://127.0.0.1:x", "inproc://x", "ipc://"};
    char a[512], b[512];
    fbf_error err;
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        assert_true(fbf_jsc_endpoints(refused[i], a, sizeof a, b, sizeof b, &err) < 0);
    assert_int_equal(fbf_jsc_endpoints("tcp://127.0.0.1:5000", a, sizeof a, b, sizeof b, &err), 0);
    assert_string_equal(b, "tcp://127.0.0.1:5001");
    assert_int_equal(fbf_jsc_endpoints("ipc:///tmp/x", a, sizeof a, b, sizeof b, &err), 0);
    assert_string_equal(b, "ipc:///tmp/x.pub");
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(batsim_states_and_keys),
        cmocka_unit_test(batsim_updates),
        cmocka_unit_test(batsim_priority_update),
        cmocka_unit_test(flux_jobs),
        cmocka_unit_test(endpoints),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
