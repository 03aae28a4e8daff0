/*
 * test_power: machine states, holds and energy saving in the engine
 * (engine/power.h), and their protocol errors (io/bv4_power.h).
 *
 * The contract: a machine that is not ON is, to every policy, a running
 * job of one resource until the hold's end. test_holds_are_running_jobs
 * checks it literally: the same random workload runs on an engine whose
 * lowest machines start SWITCHING_ON and on one where they are taken by
 * real jobs of the same estimate, ending when the switch-on really ends
 * (before or after the estimate); both must decide exactly the same.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/engine.h"
#include "io/bv4_session.h"
#include "policies/registry.h"
#include "support/ref_sched.h"
#include "support/testkit.h"

#define MAX_JOBS 60

static fbf_engine *new_engine(const char *policy, const fbf_power_config *pc,
                              const uint32_t *ids, uint32_t nb)
{
    fbf_engine *e = fbf_test_engine(policy, 1, NULL);
    fbf_error err;
    if (pc && fbf_engine_set_power(e, pc, &err) < 0)
        fail_msg("set_power: %s", err.text);
    fbf_idset set;
    fbf_idset_init(&set);
    for (uint32_t k = 0; k < nb; k++)
        assert_int_equal(fbf_idset_add_range(&set, ids[k], ids[k]), 0);
    assert_int_equal(fbf_engine_set_platform(e, &set, &err), 0);
    fbf_idset_fini(&set);
    return e;
}

static fbf_engine *engine4(const char *policy, const fbf_power_config *pc)
{
    static const uint32_t ids[] = {0, 1, 2, 3};
    return new_engine(policy, pc, ids, 4);
}

static void changed(fbf_engine *e, const char *set, uint32_t pstate)
{
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, set);
    fbf_error err;
    if (fbf_engine_state_changed(e, &s, pstate, &err) < 0)
        fail_msg("state_changed(%s, %u): %s", set, pstate, err.text);
    fbf_idset_fini(&s);
}

/* ---- the contract ---- */

typedef struct hold_run {
    uint32_t h;          /* machines ids[0..h) held from time 0 */
    double est, actual;  /* the hold's expected end, when it really ends */
    bool as_jobs;        /* model them as real jobs instead */
} hold_run;

static void run_with_holds(const char *policy, const uint32_t *ids, uint32_t nb,
                           const ref_job *jobs, size_t n, const hold_run *hr, ref_trace *tr,
                           ref_result *out)
{
    fbf_power_config pc = fbf_power_config_default();
    pc.on_delay = hr->est;
    fbf_engine *e = new_engine(policy, hr->as_jobs ? NULL : &pc, ids, nb);
    fbf_error err;
    char id[32];
    fbf_test_begin(e, 0);
    for (uint32_t k = 0; k < hr->h; k++) {
        if (hr->as_jobs) {
            snprintf(id, sizeof id, "h!%u", k);
            assert_int_equal(fbf_engine_submit(e, id, 0, 1, hr->est, &err), 0);
        } else {
            assert_int_equal(fbf_engine_set_machine_state(e, ids[k], FBF_MACHINE_SWITCHING_ON,
                                                          &err), 0);
        }
    }
    assert_int_equal(fbf_engine_decide(e, &err), 0);
    size_t nd;
    fbf_engine_decisions(e, &nd);
    assert_int_equal(nd, hr->as_jobs ? hr->h : 0);
    double *end = calloc(n + 1, sizeof *end), wake = INFINITY;
    bool *running = calloc(n + 1, sizeof *running), released = hr->h == 0;
    size_t next = 0;
    for (size_t i = 0; i < n; i++)
        out[i] = (ref_result){.start = NAN};
    for (size_t steps = 0;; steps++) {
        assert_true(steps < 100 * (n + 10));
        double t = next < n ? jobs[next].arrival : INFINITY;
        for (size_t i = 0; i < n; i++)
            if (running[i] && end[i] < t)
                t = end[i];
        t = fmin(t, wake);
        if (!released)
            t = fmin(t, hr->actual);
        if (isinf(t))
            break;
        if (wake <= t)
            wake = INFINITY;
        fbf_test_begin(e, t);
        for (size_t i = 0; i < n; i++)
            if (running[i] && end[i] <= t) {
                snprintf(id, sizeof id, "w0!%zu", i);
                running[i] = false;
                fbf_test_complete(e, id);
            }
        if (!released && hr->actual <= t) {
            released = true;
            for (uint32_t k = 0; k < hr->h; k++) {
                snprintf(id, sizeof id, "h!%u", k);
                if (hr->as_jobs) {
                    fbf_test_complete(e, id);
                } else {
                    char one[16];
                    snprintf(one, sizeof one, "%u", ids[k]);
                    changed(e, one, pc.compute_pstate);
                }
            }
        }
        for (; next < n && jobs[next].arrival <= t; next++) {
            snprintf(id, sizeof id, "w0!%zu", next);
            assert_int_equal(fbf_engine_submit(e, id, jobs[next].subtime, jobs[next].res,
                                               jobs[next].walltime, &err), 0);
        }
        if (fbf_engine_decide(e, &err) < 0)
            fail_msg("decide at %g: %s", t, err.text);
        ref_trace_push(tr, REF_DP, t, -1, NAN);
        const fbf_decision *d = fbf_engine_decisions(e, &nd);
        for (size_t k = 0; k < nd; k++) {
            if (d[k].kind == FBF_DEC_CALL_ME_LATER) {
                ref_trace_push(tr, REF_CALL_ME_LATER, t, -1, d[k].at);
                if (d[k].at > t)
                    wake = fmin(wake, d[k].at);
                continue;
            }
            assert_int_not_equal(d[k].kind, FBF_DEC_SET_STATE); /* no saving here */
            long i = strtol(fbf_engine_job_id(e, d[k].job) + 3, NULL, 10);
            ref_trace_push(tr, (ref_kind)d[k].kind, t, i, NAN);
            if (d[k].kind == FBF_DEC_REJECT)
                continue;
            const fbf_idset *a = fbf_engine_job_alloc(e, d[k].job);
            for (uint32_t m = 0; m < hr->h && !released; m++)
                assert_false(fbf_idset_contains(a, ids[m])); /* never a machine not ON */
            fbf_idset_format(a, out[i].alloc, sizeof out[i].alloc);
            out[i].start = t;
            running[i] = true;
            end[i] = t + jobs[i].runtime;
        }
    }
    free(end);
    free(running);
    fbf_engine_destroy(e);
}

static void test_holds_are_running_jobs(void **state)
{
    (void)state;
    static const char *const pol[] = {"fcfs", "easy", "conservative"};
    ref_job jobs[MAX_JOBS];
    uint32_t ids[REF_MAX_RES], nb;
    ref_result a[MAX_JOBS], b[MAX_JOBS];
    size_t compared = 0;
    for (uint64_t seed = 1; seed <= 60; seed++) {
        size_t n = ref_random_workload(seed, 20, MAX_JOBS, 4, 32, jobs, ids, &nb);
        for (int p = 0; p < 3; p++) {
            hold_run hr = {.h = (uint32_t)(1 + seed % (nb / 2)), .est = 5.0 + (double)(seed % 40),
                           .as_jobs = false};
            hr.actual = hr.est + (seed % 3 == 0 ? -3.0 : seed % 3 == 1 ? 0.0 : 25.0);
            ref_trace ta = {0}, tb = {0};
            run_with_holds(pol[p], ids, nb, jobs, n, &hr, &ta, a);
            hr.as_jobs = true;
            run_with_holds(pol[p], ids, nb, jobs, n, &hr, &tb, b);
            size_t at = ref_trace_diff(&ta, &tb);
            if (at != SIZE_MAX) {
                fprintf(stderr, "seed %llu %s: holds vs jobs differ at entry %zu\n",
                        (unsigned long long)seed, pol[p], at);
                ref_trace_print(stderr, &ta, at > 3 ? at - 3 : 0, at + 3);
                ref_trace_print(stderr, &tb, at > 3 ? at - 3 : 0, at + 3);
                fail();
            }
            for (size_t i = 0; i < n; i++)
                if (strcmp(a[i].alloc, b[i].alloc) != 0)
                    fail_msg("seed %llu %s: job %zu on %s with holds, %s with jobs",
                             (unsigned long long)seed, pol[p], i, a[i].alloc, b[i].alloc);
            compared += ta.n;
            ref_trace_fini(&ta);
            ref_trace_fini(&tb);
        }
    }
    assert_true(compared > 1000);
}

/* ---- energy saving ---- */

static fbf_power_config saving(double timeout, double off, double on)
{
    fbf_power_config pc = fbf_power_config_default();
    pc.saving = true;
    pc.timeout = timeout;
    pc.off_delay = off;
    pc.on_delay = on;
    return pc;
}

/* Idle machines sleep after the timeout when nothing waits, and are woken
 * on demand when a job arrives; the job waits for them and gets them once
 * they report the compute pstate. */
static void test_sleep_when_idle_and_wake_on_demand(void **state)
{
    (void)state;
    fbf_power_config pc = saving(10, 5, 7);
    fbf_engine *e = engine4("easy", &pc);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 2, 100);
    fbf_test_decide(e, "E:w0!1 C:10"); /* 2-3 idle: called back at their timeout */
    fbf_test_begin(e, 10);
    fbf_test_decide(e, "S1:2-3");
    assert_int_equal(fbf_engine_nb_held(e), 2);
    assert_int_equal(fbf_engine_machine_state(e, 2), FBF_MACHINE_SWITCHING_OFF);
    fbf_test_begin(e, 15);
    changed(e, "2-3", 1);
    fbf_test_decide(e, "");
    assert_int_equal(fbf_engine_machine_state(e, 3), FBF_MACHINE_OFF);
    fbf_test_begin(e, 20);
    fbf_test_submit(e, "w0!2", 2, 50);
    fbf_test_decide(e, "S0:2-3"); /* woken before the pass; held until 27 */
    assert_true(fbf_engine_job_reservation(e, fbf_engine_find(e, "w0!2")) == 27);
    fbf_test_begin(e, 22);
    fbf_test_submit(e, "w0!3", 1, 1);
    fbf_test_decide(e, ""); /* nothing is ON and free: no machine not ON is used */
    fbf_test_begin(e, 26);
    changed(e, "2-3", 0);
    fbf_test_decide(e, "E:w0!2");
    fbf_test_expect_alloc(e, "w0!2", "2-3");
    assert_int_equal(fbf_engine_nb_held(e), 0);
    fbf_engine_destroy(e);
}

/* With jobs waiting, machines sleep only when every waiting job holds a
 * reservation X far enough (X - now >= off + on); the wake is planned at
 * X - on_delay, and the reserved job then gets them. */
static void test_planned_wake(void **state)
{
    (void)state;
    fbf_power_config pc = saving(0, 5, 10);
    fbf_engine *e = engine4("conservative", &pc);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 2, 100);
    fbf_test_submit(e, "w0!2", 4, 10); /* reserved at 100 */
    fbf_test_decide(e, "E:w0!1 S1:2-3 C:90");
    fbf_test_begin(e, 5);
    changed(e, "2-3", 1);
    fbf_test_decide(e, "C:90");
    fbf_test_begin(e, 90);
    fbf_test_decide(e, "S0:2-3");
    assert_int_equal(fbf_engine_machine_state(e, 2), FBF_MACHINE_SWITCHING_ON);
    fbf_test_begin(e, 100);
    fbf_test_complete(e, "w0!1");
    changed(e, "2-3", 0);
    fbf_test_decide(e, "E:w0!2");
    fbf_test_expect_alloc(e, "w0!2", "0-3");
    fbf_engine_destroy(e);
}

/* No switch-off when a waiting job has no reservation (EASY, two jobs
 * waiting, depth 1), nor when the smallest reservation comes too soon. */
static void test_no_sleep_when_not_allowed(void **state)
{
    (void)state;
    fbf_power_config pc = saving(0, 5, 10);
    fbf_engine *e = engine4("easy", &pc);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 2, 100);
    fbf_test_submit(e, "w0!2", 4, 10);
    fbf_test_submit(e, "w0!3", 3, 10);
    fbf_test_decide(e, "E:w0!1");
    fbf_engine_destroy(e);

    pc = saving(0, 60, 60);
    e = engine4("conservative", &pc);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 2, 100);
    fbf_test_submit(e, "w0!2", 4, 10); /* reserved at 100 < 0 + 60 + 60 */
    fbf_test_decide(e, "E:w0!1");
    assert_int_equal(fbf_engine_nb_held(e), 0);
    fbf_engine_destroy(e);

    /* Without saving, fastbf never switches anything. */
    e = engine4("easy", NULL);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 1, 100);
    fbf_test_decide(e, "E:w0!1");
    fbf_test_begin(e, 1000);
    fbf_test_decide(e, "");
    fbf_engine_destroy(e);
}

/* A machine that is switching off when jobs arrive gets a planned wake at
 * its expected off time + on_delay, and is woken as soon as it is OFF. */
static void test_wake_after_switch_off(void **state)
{
    (void)state;
    fbf_power_config pc = saving(0, 5, 10);
    fbf_engine *e = engine4("conservative", &pc);
    fbf_test_begin(e, 0);
    fbf_test_decide(e, "S1:0-3");
    fbf_test_begin(e, 2);
    fbf_test_submit(e, "w0!1", 4, 10);
    fbf_test_decide(e, "C:5"); /* back at 15 at the earliest */
    assert_true(fbf_engine_job_reservation(e, fbf_engine_find(e, "w0!1")) == 15);
    fbf_test_begin(e, 5);
    changed(e, "0-3", 1);
    fbf_test_decide(e, "S0:0-3");
    fbf_test_begin(e, 15);
    changed(e, "0-3", 0);
    fbf_test_decide(e, "E:w0!1");
    fbf_engine_destroy(e);
}

/* ---- waking (power.h, "Waking"): on_delay 10, so t0 = now + 10 ---- */

static double rsv(fbf_engine *e, const char *id)
{
    return fbf_engine_job_reservation(e, fbf_engine_find(e, id));
}

/* 0 runs w0!1 (1 machine, walltime wall); 1-3 asleep until woken. */
static fbf_engine *asleep_but_0(const char *policy, double wall)
{
    static fbf_power_config pc;
    pc = saving(0, 5, 10);
    fbf_engine *e = engine4(policy, &pc);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w0!1", 1, wall);
    fbf_test_decide(e, "E:w0!1 S1:1-3");
    fbf_test_begin(e, 5);
    changed(e, "1-3", 1);
    fbf_test_decide(e, "");
    return e;
}

/* On demand, only as many sleepers as the waiting jobs could start on by
 * t0: one for a job of one machine, then two more for a job of two (the
 * first woken one is already the first job's). */
static void test_wake_only_what_is_needed(void **state)
{
    (void)state;
    fbf_engine *e = asleep_but_0("easy", 1000);
    fbf_test_begin(e, 20);
    fbf_test_submit(e, "w0!2", 1, 100);
    fbf_test_decide(e, "S0:1"); /* Tn 1000 (w0!1's end), Tw 30 */
    assert_true(rsv(e, "w0!2") == 30);
    assert_int_equal(fbf_engine_machine_state(e, 2), FBF_MACHINE_OFF);
    fbf_test_begin(e, 22);
    fbf_test_submit(e, "w0!3", 2, 100);
    fbf_test_decide(e, "S0:2-3"); /* A = {1} goes to w0!2; Tn INFINITY, Tw 32 */
    fbf_test_begin(e, 30);
    changed(e, "1", 0);
    fbf_test_decide(e, "E:w0!2");
    fbf_test_expect_alloc(e, "w0!2", "1");
    fbf_engine_destroy(e);
}

/* No wake when a running job frees a machine less than on_delay after a
 * woken one would be back (Tn 40 - Tw 35 <= 10), nor for a job that needs
 * more than the sleepers (it needs running jobs to end too); once they
 * have, its sleepers are woken, and no machine sleeps at that point. */
static void test_no_wake_when_useless(void **state)
{
    (void)state;
    fbf_engine *e = asleep_but_0("easy", 40);
    fbf_test_begin(e, 25);
    fbf_test_submit(e, "w0!2", 1, 100);
    fbf_test_decide(e, "");
    fbf_test_begin(e, 26);
    fbf_test_submit(e, "w0!3", 4, 10);
    fbf_test_decide(e, "");
    assert_int_equal(fbf_engine_nb_held(e), 3);
    fbf_test_begin(e, 40);
    fbf_test_complete(e, "w0!1");
    fbf_test_decide(e, "E:w0!2");
    fbf_test_begin(e, 140);
    fbf_test_complete(e, "w0!2");
    fbf_test_decide(e, "S0:1-3"); /* machine 0, idle, is not switched off */
    assert_true(rsv(e, "w0!3") == 150);
    assert_int_equal(fbf_engine_machine_state(e, 0), FBF_MACHINE_ON);
    fbf_engine_destroy(e);
}

/* Conservative: 2-3 sleep until w0!2's reservation at 100. A job arriving
 * at 20 would start at 100 without them, at 30 with them: the planned wake
 * is cut short (holds end at 30, the job is reserved there and gets them).
 * At 80 the gain is 100 - 90 = on_delay only: the wake stays at 90. */
static void test_planned_wake_cut_short(void **state)
{
    (void)state;
    fbf_power_config pc = saving(0, 5, 10);
    for (int late = 0; late < 2; late++) {
        fbf_engine *e = engine4("conservative", &pc);
        fbf_test_begin(e, 0);
        fbf_test_submit(e, "w0!1", 2, 100);
        fbf_test_submit(e, "w0!2", 4, 10);
        fbf_test_decide(e, "E:w0!1 S1:2-3 C:90");
        fbf_test_begin(e, 5);
        changed(e, "2-3", 1);
        fbf_test_decide(e, "C:90");
        fbf_test_begin(e, late ? 80 : 20);
        fbf_test_submit(e, "w0!3", 2, 10);
        fbf_test_decide(e, late ? "C:90" : "S0:2-3");
        assert_true(rsv(e, "w0!2") == 100);
        assert_true(rsv(e, "w0!3") == (late ? 110 : 30));
        if (!late) {
            fbf_test_begin(e, 30);
            changed(e, "2-3", 0);
            fbf_test_decide(e, "E:w0!3");
            fbf_test_expect_alloc(e, "w0!3", "2-3");
        }
        fbf_engine_destroy(e);
    }
}

/* ---- protocol: initial states and errors ---- */

static char *handle(fbf_bv4_session *s, const char *req, int want_rc, const char *want_err)
{
    const char *reply;
    size_t len;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
    if (rc != want_rc)
        fail_msg("handle() = %d (%s), want %d, on %s", rc, err.text, want_rc, req);
    if (want_err && !strstr(err.text, want_err))
        fail_msg("error \"%s\" lacks \"%s\"", err.text, want_err);
    return rc >= 0 ? strdup(reply) : NULL;
}

#define BEGINS(states)                                                                          \
    fbf_test_msg("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"      \
                 "'nb_resources':4,'nb_compute_resources':4,'config':{},'compute_resources':[" \
                 "{'id':0,'state':'%s'},{'id':1,'state':'%s'},{'id':2,'state':'%s'},"          \
                 "{'id':3,'state':'%s'}]}}]}",                                                 \
                 states[0], states[1], states[2], states[3])

static fbf_bv4_session *session(const fbf_power_config *pc, bool query)
{
    fbf_bv4_options o = {
        .engine = {.policy = fbf_policy_lookup("easy")->ops, .reservation_depth = 1,
                   .workers = 1},
        .power = pc,
        .query_energy = query,
    };
    fbf_error err;
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("session: %s", err.text);
    return s;
}

/* Machines Batsim reports sleeping are never given a job. */
static void test_initial_states(void **state)
{
    (void)state;
    const char *st[] = {"sleeping", "idle", "switching_on", "computing"};
    fbf_bv4_session *s = session(NULL, false);
    free(handle(s, BEGINS(st), 0, NULL));
    char *r = handle(s, fbf_test_msg("{'now':1,'events':[%s]}", fbf_test_sub(1, "w0!1", 2, 10)),
                     0, NULL);
    assert_non_null(strstr(r, "\"alloc\":\"1 3\""));
    free(r);
    r = handle(s, fbf_test_msg("{'now':2,'events':[{'timestamp':2,'type':'RESOURCE_STATE_"
                               "CHANGED','data':{'resources':'2','state':'0'}},%s]}",
                               fbf_test_sub(2, "w0!2", 1, 10)),
               0, NULL);
    assert_non_null(strstr(r, "\"alloc\":\"2\""));
    assert_null(strstr(r, "SET_RESOURCE_STATE")); /* no saving: machine 0 sleeps on */
    free(r);
    fbf_bv4_session_destroy(s);

    const char *bad[] = {"idle", "idle", "asleep", "idle"};
    s = session(NULL, false);
    handle(s, BEGINS(bad), -EPROTO, "data.compute_resources[].state: machine 2: unknown state "
                                    "\"asleep\"");
    fbf_bv4_session_destroy(s);
}

static void state_changed_error(const char *resources, const char *pstate, const char *want)
{
    const char *st[] = {"idle", "idle", "switching_on", "idle"};
    fbf_bv4_session *s = session(NULL, false);
    free(handle(s, BEGINS(st), 0, NULL));
    handle(s,
           fbf_test_msg("{'now':1,'events':[{'timestamp':1,'type':'RESOURCE_STATE_CHANGED',"
                        "'data':{'resources':'%s','state':'%s'}}]}",
                        resources, pstate),
           -EINVAL, want);
    fbf_bv4_session_destroy(s);
}

static void test_state_changed_errors(void **state)
{
    (void)state;
    state_changed_error("1", "0",
                        "event 0 (RESOURCE_STATE_CHANGED): data.resources: machine 1 reached "
                        "pstate 0 but was not switching on (it is ON)");
    state_changed_error("2", "1", "data.resources: machine 2 reached pstate 1 but was not "
                                  "switching off (it is SWITCHING_ON)");
    state_changed_error("2 7", "0", "data.resources: machine 7 is not a compute resource");
    state_changed_error("2", "42", "event 0 (RESOURCE_STATE_CHANGED): data.state: state 42 is "
                                   "not a known pstate (compute 0, sleep 1)");
}

/* QUERY consumed_energy goes with the reply to no_more_static_job_to_submit;
 * a malformed ANSWER is refused. */
static void test_energy_query_and_answer(void **state)
{
    (void)state;
    const char *st[] = {"idle", "idle", "idle", "idle"};
    fbf_bv4_session *s = session(NULL, true);
    free(handle(s, BEGINS(st), 0, NULL));
    char *r = handle(s, fbf_test_msg("{'now':1,'events':[%s,{'timestamp':1,'type':'NOTIFY',"
                                     "'data':{'type':'no_more_static_job_to_submit'}}]}",
                                     fbf_test_sub(1, "w0!1", 1, 10)),
                     0, NULL);
    const char *q = strstr(r, "\"type\":\"QUERY\",\"data\":{\"requests\":{\"consumed_energy\":{}}}");
    assert_non_null(q);
    assert_true(strstr(r, "EXECUTE_JOB") < q);
    free(r);
    free(handle(s, "{\"now\":2,\"events\":[{\"timestamp\":2,\"type\":\"ANSWER\",\"data\":{"
                   "\"consumed_energy\":1234.5}}]}", 0, NULL));
    handle(s, "{\"now\":3,\"events\":[{\"timestamp\":3,\"type\":\"ANSWER\",\"data\":{"
              "\"consumed_energy\":\"lots\"}}]}",
           -EPROTO, "event 0 (ANSWER): data.consumed_energy: expected a number of joules >= 0");
    fbf_bv4_session_destroy(s);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holds_are_running_jobs),
        cmocka_unit_test(test_sleep_when_idle_and_wake_on_demand),
        cmocka_unit_test(test_planned_wake),
        cmocka_unit_test(test_no_sleep_when_not_allowed),
        cmocka_unit_test(test_wake_after_switch_off),
        cmocka_unit_test(test_wake_only_what_is_needed),
        cmocka_unit_test(test_no_wake_when_useless),
        cmocka_unit_test(test_planned_wake_cut_short),
        cmocka_unit_test(test_initial_states),
        cmocka_unit_test(test_state_changed_errors),
        cmocka_unit_test(test_energy_query_and_answer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
