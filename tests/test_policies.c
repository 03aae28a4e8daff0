/*
 * test_policies: FCFS, EASY and conservative backfilling (and the depth
 * family between them) against scheduling-semantics.md, driven through the
 * engine's event API by a tiny simulation (tests/support/engine_sim.c):
 *   - jobs run exactly `runtime` (the walltime unless a case says less);
 *   - all events at one time form one message (completions, then
 *     submissions), hence one decision point;
 *   - a CALL_ME_LATER(t) makes a decision point at t.
 * First the spec's own examples and hand-computed cases, then random
 * workloads checked decision by decision against tests/support/ref_sched.c
 * (a brute-force reading of D0-D7), under 1 and 4 workers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "policies/registry.h"
#include "support/engine_sim.h"
#include "support/ref_sched.h"
#include "support/testkit.h"

/* ---- the simulation around the engine ---------------------------------- */

static const uint32_t ids16[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

/* Runs jobs on resources 0..nb-1 and checks every job's start and alloc
 * (alloc NULL: never starts), for the engine under 1 and 4 workers and,
 * for the spec's own policies, for the reference too. */
static void check_run(const char *policy, int64_t depth, uint32_t nb, const ref_job *jobs,
                      size_t n, const double *starts, const char *const *allocs,
                      fbf_test_dp_hook hook, void *ctx)
{
    if (depth == 0) {
        ref_result out[16];
        ref_trace tr = {0};
        char err[256];
        ref_policy rp = policy[0] == 'f' ? REF_FCFS : policy[0] == 'e' ? REF_EASY
                                                                       : REF_CONSERVATIVE;
        assert_int_equal(ref_simulate(rp, ids16, nb, jobs, n, out, &tr, err, sizeof err), 0);
        ref_trace_fini(&tr);
        for (size_t i = 0; i < n; i++)
            if (!allocs[i] ? !isnan(out[i].start)
                           : out[i].start != starts[i] || strcmp(out[i].alloc, allocs[i]))
                fail_msg("reference %s: job %zu at %g on \"%s\"", policy, i, out[i].start,
                         out[i].alloc);
    }
    for (unsigned workers = 1; workers <= 4; workers += 3) {
        ref_result out[16];
        ref_trace tr = {0};
        char err[512] = "";
        int rc = fbf_test_sim_run(policy, depth, workers, ids16, nb, jobs, n, out, &tr, hook, ctx,
                                  NULL, err, sizeof err);
        if (rc < 0)
            fail_msg("%s: %s", policy, err);
        for (size_t i = 0; i < n; i++) {
            if (!allocs[i] ? !isnan(out[i].start)
                           : out[i].start != starts[i] || strcmp(out[i].alloc, allocs[i])) {
                ref_trace_print(stderr, &tr, 0, tr.n);
                ref_trace_fini(&tr);
                fail_msg("%s (depth %lld, %u workers): job %zu started at %g on \"%s\", "
                         "expected %g on \"%s\"",
                         policy, (long long)depth, workers, i, out[i].start, out[i].alloc,
                         allocs[i] ? starts[i] : NAN, allocs[i] ? allocs[i] : "");
            }
        }
        for (size_t k = 0; k < tr.n; k++)
            if (tr.v[k].kind == REF_CALL_ME_LATER) {
                double at = tr.v[k].at, now = tr.v[k].now;
                ref_trace_fini(&tr);
                fail_msg("%s: unexpected CALL_ME_LATER(%g) at %g", policy, at, now);
            }
        ref_trace_fini(&tr);
    }
}

/* Expected reservations: after the decision point at `at`, job `job` holds
 * `rsv` (NAN: none). */
typedef struct rsv_check {
    double at;
    long job;
    double rsv;
} rsv_check;

typedef struct rsv_checks {
    const rsv_check *v;
    size_t n, done;
} rsv_checks;

static void check_rsv_hook(void *arg, fbf_engine *e, double now)
{
    rsv_checks *c = arg;
    char id[32];
    for (size_t k = 0; k < c->n; k++) {
        if (c->v[k].at != now)
            continue;
        snprintf(id, sizeof id, "w0!%ld", c->v[k].job);
        fbf_job_h h = fbf_engine_find(e, id);
        assert_int_not_equal(h, FBF_JOB_NONE);
        double got = fbf_engine_job_reservation(e, h);
        if (!(got == c->v[k].rsv || (isnan(got) && isnan(c->v[k].rsv))))
            fail_msg("job %ld after the decision point at %g: reservation %g, expected %g",
                     c->v[k].job, now, got, c->v[k].rsv);
        c->done++;
    }
}

/* ---- the worked example (4 resources) ---------------------------------- */

/* A res 2 wall 10; B res 4 wall 5; C res 2 wall 5; D res 1 wall 20. */
static const ref_job worked[] = {
    REF_JOB(0, 0, 2, 10, 10), REF_JOB(0, 0, 4, 5, 5), REF_JOB(0, 0, 2, 5, 5), REF_JOB(0, 0, 1, 20, 20)};

/* Start times and allocations exactly as the spec writes them, and the
 * reservations after the decision points at 0, 5 and 10. */
static void test_worked_example(void **state)
{
    (void)state;
    static const double fst[] = {0, 10, 15, 15}, bst[] = {0, 10, 0, 15};
    static const char *const fal[] = {"0-1", "0-3", "0-1", "2"};
    static const char *const bal[] = {"0-1", "0-3", "2-3", "0"};
    /* FCFS holds none; EASY: head B at shadow = 10, D never; conservative:
     * B at 10, D at 15 (free is 0 on [10,15)), compression at 5 moves nothing. */
    static const rsv_check frc[] = {{0, 1, NAN}, {10, 2, NAN}};
    static const rsv_check erc[] = {{0, 1, 10}, {0, 3, NAN}, {5, 1, 10}, {5, 3, NAN}};
    static const rsv_check crc[] = {{0, 1, 10}, {0, 3, 15}, {5, 1, 10}, {5, 3, 15}, {10, 3, 15}};
    rsv_checks c[3] = {{frc, 2, 0}, {erc, 4, 0}, {crc, 5, 0}};
    check_run("fcfs", 0, 4, worked, 4, fst, fal, check_rsv_hook, &c[0]);
    check_run("easy", 0, 4, worked, 4, bst, bal, check_rsv_hook, &c[1]);
    check_run("conservative", 0, 4, worked, 4, bst, bal, check_rsv_hook, &c[2]);
    for (int p = 0; p < 3; p++)
        assert_int_equal(c[p].done, 2 * c[p].n); /* 1 and 4 workers */
}

/* The decision points, their starts and the start reasons, exactly. */
static void test_worked_trace_and_reasons(void **state)
{
    (void)state;
    static const char *const pol[] = {"fcfs", "easy", "conservative"};
    static const char *const want[] = {
        "0:A 10:B 15:CD 20: 35:", "0:AC 5: 10:B 15:D 35:", "0:AC 5: 10:B 15:D 35:"};
    static const fbf_start_reason why[][4] = {
        {FBF_START_HEAD, FBF_START_HEAD, FBF_START_HEAD, FBF_START_HEAD},
        {FBF_START_HEAD, FBF_START_HEAD, FBF_START_BACKFILLED, FBF_START_HEAD},
        /* conservative: A and C are both "head/backfilled" and "reserved now": not checked */
        {FBF_START_NONE, FBF_START_RESERVATION, FBF_START_NONE, FBF_START_RESERVATION}};
    for (int p = 0; p < 3; p++) {
        ref_result out[4];
        ref_trace tr = {0};
        fbf_engine *e;
        char err[256], got[256] = "";
        assert_int_equal(fbf_test_sim_run(pol[p], 0, 2, ids16, 4, worked, 4, out, &tr, NULL, NULL,
                                          &e, err, sizeof err),
                         0);
        for (size_t k = 0; k < tr.n; k++) {
            size_t len = strlen(got);
            if (tr.v[k].kind == REF_DP)
                snprintf(got + len, sizeof got - len, "%s%g:", len ? " " : "", tr.v[k].now);
            else if (tr.v[k].kind == REF_EXECUTE)
                snprintf(got + len, sizeof got - len, "%c", (char)('A' + tr.v[k].job));
            else
                fail_msg("%s: unexpected decision kind %d", pol[p], tr.v[k].kind);
        }
        assert_string_equal(got, want[p]);
        for (long j = 0; j < 4; j++) {
            char id[16];
            snprintf(id, sizeof id, "w0!%ld", j);
            fbf_job_h h = fbf_engine_find(e, id);
            assert_int_equal(fbf_engine_job_state(e, h), FBF_JOB_DONE);
            if (why[p][j] != FBF_START_NONE && fbf_engine_job_start_reason(e, h) != why[p][j])
                fail_msg("%s: job %c start reason %d, expected %d", pol[p], (char)('A' + j),
                         fbf_engine_job_start_reason(e, h), why[p][j]);
        }
        fbf_engine_destroy(e);
        ref_trace_fini(&tr);
    }
}

/* ---- step-by-step helpers ----------------------------------------------- */

/* One protocol step a call: fbf_test_begin, _submit, _complete, _decide
 * and _expect_alloc of support/testkit.h, shared with test_engine. */

static fbf_engine *mk_n(const char *policy, int64_t depth, uint32_t nb)
{
    return fbf_test_sim_engine(policy, depth, 3, ids16, nb);
}

static double rsv_of(fbf_engine *e, const char *id)
{
    return fbf_engine_job_reservation(e, fbf_engine_find(e, id));
}

/* ---- the compression example (2 resources) ------------------------------ */

static uint64_t counter(const fbf_engine *e, const char *name)
{
    fbf_policy_counter c[8];
    size_t n = fbf_engine_policy_counters(e, c, 8);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(c[i].name, name))
            return c[i].value;
    fail_msg("no policy counter '%s'", name);
    return 0;
}

static void test_compression_example(void **state)
{
    (void)state;
    fbf_engine *e = mk_n("conservative", 0, 2);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "R1", 1, 10);
    fbf_test_submit(e, "R2", 1, 4);
    fbf_test_decide(e, "E:R1 E:R2");
    fbf_test_expect_alloc(e, "R1", "0");
    fbf_test_expect_alloc(e, "R2", "1");
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "J1", 2, 5);
    fbf_test_submit(e, "J2", 1, 4);
    fbf_test_decide(e, ""); /* J1 at 10; J2 at 4 on [4,8); R2 ends by 4: no call */
    assert_true(rsv_of(e, "J1") == 10);
    assert_true(rsv_of(e, "J2") == 4);
    fbf_test_begin(e, 2);
    fbf_test_complete(e, "R1");
    fbf_test_decide(e, "E:J2"); /* J1 re-placed with J2 still at [4,8): 8; J2 then moves to 2 */
    fbf_test_expect_alloc(e, "J2", "0");
    assert_true(rsv_of(e, "J1") == 8);
    assert_true(isnan(rsv_of(e, "J2")));
    assert_true(fbf_engine_job_start(e, fbf_engine_find(e, "J2")) == 2);
    fbf_test_begin(e, 4);
    fbf_test_complete(e, "R2");
    fbf_test_decide(e, ""); /* J2 holds one resource until 6: J1 moves to 6 */
    assert_true(rsv_of(e, "J1") == 6);
    fbf_test_begin(e, 6);
    fbf_test_complete(e, "J2");
    fbf_test_decide(e, "E:J1");
    fbf_test_expect_alloc(e, "J1", "0-1");
    assert_int_equal(fbf_engine_nb_free(e), 0);
    /* The work reported: four placements (R1 and R2 started from theirs),
     * a pass per completion, J1 moved twice and J2 once. */
    assert_int_equal(counter(e, "reservations_placed"), 4);
    assert_int_equal(counter(e, "compression_passes"), 3);
    assert_int_equal(counter(e, "reservations_moved"), 3);
    assert_true(counter(e, "reservations_revisited") >= 3);
    fbf_engine_destroy(e);

    /* The same as a simulated workload: R1 runs 2 of its 10. */
    static const ref_job wl[] = {REF_JOB(0, 0, 1, 10, 2), REF_JOB(0, 0, 1, 4, 4), REF_JOB(0, 0, 2, 5, 5), REF_JOB(0, 0, 1, 4, 4)};
    static const double cs[] = {0, 0, 6, 2};
    static const char *const ca[] = {"0", "1", "0-1", "0"};
    static const rsv_check rc[] = {{0, 2, 10}, {0, 3, 4}, {2, 2, 8}, {4, 2, 6}};
    rsv_checks c = {rc, 4, 0};
    check_run("conservative", 0, 2, wl, 4, cs, ca, check_rsv_hook, &c);
    assert_int_equal(c.done, 8);
}

/* ---- walltime 0 (D7 c) and EASY's shadow ------------------------------- */

/* A res 1 wall 10; Z3 res 2 wall 0; B res 2 wall 5; Z res 1 wall 0 (2 res). */
static const ref_job zero_wl[] = {
    REF_JOB(0, 0, 1, 10, 10), REF_JOB(0, 0, 2, 0, 0), REF_JOB(0, 0, 2, 5, 5), REF_JOB(0, 0, 1, 0, 0)};

static void test_zero_walltime(void **state)
{
    (void)state;
    /* conservative: (c) starts due reservations first, then walltime-0 jobs
     * that fit, in queue order: Z now beside A; Z3 waits behind B. */
    static const double cs[] = {0, 15, 10, 0};
    static const char *const ca[] = {"0", "0-1", "0-1", "1"};
    static const rsv_check rc[] = {{0, 1, NAN}, {0, 2, 10}, {0, 3, NAN}, {10, 1, NAN}};
    rsv_checks c = {rc, 4, 0};
    check_run("conservative", 0, 2, zero_wl, 4, cs, ca, check_rsv_hook, &c);
    assert_true(c.done > 0);
    /* easy: Z backfills (0 + 0 <= shadow 10); Z3 is the head. */
    static const double es[] = {0, 10, 10, 0};
    static const char *const ea[] = {"0", "0-1", "0-1", "1"};
    check_run("easy", 0, 2, zero_wl, 4, es, ea, NULL, NULL);
    /* fcfs: Z waits behind B. */
    static const double fs[] = {0, 10, 10, 15};
    static const char *const fa[] = {"0", "0-1", "0-1", "0"};
    check_run("fcfs", 0, 2, zero_wl, 4, fs, fa, NULL, NULL);
}

/* D6 when shadow == now: Z (res 1, wall 0) starts; head H (res 2) then
 * finds shadow = Z's est_end = 0 and extra = 1 + 1 - 2 = 0; J (res 1,
 * wall 0) has J.res <= free (1) and now + 0 <= shadow: it starts. */
static void test_easy_shadow_now(void **state)
{
    (void)state;
    static const ref_job wl[] = {REF_JOB(0, 0, 1, 0, 0), REF_JOB(0, 0, 2, 5, 5), REF_JOB(0, 0, 1, 0, 0)};
    static const double es[] = {0, 0, 0};
    static const char *const ea[] = {"0", "0-1", "1"};
    check_run("easy", 0, 2, wl, 3, es, ea, NULL, NULL);
    /* conservative: H is reserved at 0 in (b) and starts before them. */
    static const double cs[] = {5, 0, 5};
    static const char *const ca[] = {"0", "0-1", "1"};
    check_run("conservative", 0, 2, wl, 3, cs, ca, NULL, NULL);
}

/* ---- D7 (d) --------------------------------------------------------------- */

/* CALL_ME_LATER(X) is due only when no running job ends by X. A
 * reservation sits at now or where something that blocked it ends; with
 * every job ending by its estimate that is a running job, or a reservation
 * that has started (and ends by X), so in a consistent run the call never
 * fires and the engine must stay silent (a call would add a decision
 * point). The random comparison below checks the same on every pass. Here:
 * J (res 2) waits at 10 behind R (ends 10); R ends early at 3: J starts,
 * K (res 1, wall 4) at 8 and L (res 2, wall 1) at 12 wait behind it; J ends
 * early at 5: K starts, L moves to 9 (K's end); each time a running job
 * ends by the earliest reservation. */
static void test_call_me_later_not_needed(void **state)
{
    (void)state;
    fbf_engine *e = mk_n("conservative", 0, 2);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "R", 2, 10);
    fbf_test_submit(e, "J", 2, 5);
    fbf_test_decide(e, "E:R");
    assert_true(rsv_of(e, "J") == 10);
    fbf_test_begin(e, 3);
    fbf_test_complete(e, "R");
    fbf_test_submit(e, "K", 1, 4);
    fbf_test_submit(e, "L", 2, 1);
    fbf_test_decide(e, "E:J");
    assert_true(rsv_of(e, "K") == 8);
    assert_true(rsv_of(e, "L") == 12);
    fbf_test_begin(e, 5);
    fbf_test_complete(e, "J");
    fbf_test_decide(e, "E:K");
    fbf_test_expect_alloc(e, "K", "0");
    assert_true(rsv_of(e, "L") == 9);
    fbf_test_begin(e, 9);
    fbf_test_complete(e, "K");
    fbf_test_decide(e, "E:L");
    fbf_test_begin(e, 10);
    fbf_test_complete(e, "L");
    fbf_test_decide(e, "");
    assert_int_equal(fbf_engine_nb_waiting(e), 0);
    assert_int_equal(fbf_engine_nb_running(e), 0);
    fbf_engine_destroy(e);
}

/* ---- estimates ------------------------------------------------------------ */

static void test_estimate_start(void **state)
{
    (void)state;
    static const char *const pol[] = {"fcfs", "easy", "conservative"};
    /* The worked example after the pass at 0: A [0,10) 2, C [0,5) 2 (not FCFS). */
    static const double want[3][4] = {
        /* (1,1) (1,10) (4,1) (2,5) */
        {15, 15, 35, 20}, /* FCFS: B [10,15) 4, C [15,20) 2, D [15,35) 1, no overtaking */
        {5, 15, 15, 5},   /* EASY: only B's reservation [10,15) */
        {5, 15, 35, 5},   /* conservative: B [10,15) and D [15,35) */
    };
    static const int64_t res[] = {1, 1, 4, 2};
    static const double wall[] = {1, 10, 1, 5};
    for (int p = 0; p < 3; p++) {
        fbf_engine *e = mk_n(pol[p], 0, 4);
        fbf_test_begin(e, 0);
        fbf_test_submit(e, "A", 2, 10);
        fbf_test_submit(e, "B", 4, 5);
        fbf_test_submit(e, "C", 2, 5);
        fbf_test_submit(e, "D", 1, 20);
        fbf_test_decide(e, p ? "E:A E:C" : "E:A");
        for (int k = 0; k < 4; k++) {
            double got = fbf_engine_estimate_start(e, res[k], wall[k]);
            if (got != want[p][k])
                fail_msg("%s: estimate(%lld, %g) = %g, expected %g", pol[p],
                         (long long)res[k], wall[k], got, want[p][k]);
        }
        assert_true(isinf(fbf_engine_estimate_start(e, 0, 1)));
        assert_true(isinf(fbf_engine_estimate_start(e, 5, 1)));
        if (p == 0)
            assert_true(isnan(fbf_engine_estimate_start(e, 1, -1)));
        else
            assert_true(isinf(fbf_engine_estimate_start(e, 1, -1)));
        /* Estimating changes nothing. */
        fbf_test_begin(e, 0);
        fbf_test_decide(e, "");
        if (p > 0)
            assert_true(rsv_of(e, "B") == 10);
        if (p == 2)
            assert_true(rsv_of(e, "D") == 15);
        fbf_engine_destroy(e);
    }
    /* FCFS cannot tell behind a job without walltime. */
    fbf_engine *e = mk_n("fcfs", 0, 1);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "X", 1, 10);
    fbf_test_submit(e, "Y", 1, -1);
    fbf_test_decide(e, "E:X");
    assert_true(isnan(fbf_engine_estimate_start(e, 1, 1)));
    fbf_engine_destroy(e);
}

/* ---- reservation depth k = 2 (D8) ------------------------------------------ */

/* 7 resources: A res 5 wall 10; B res 3 wall 10; C res 3 wall 10; X res 2
 * wall 12. EASY: shadow 10, extra 2 + 5 - 3 = 4, X backfills (it delays C
 * but not B). k = 2 and conservative reserve B and C at 10 ([10,12) has 1
 * free): X waits until 20. */
static void test_depth2_vs_easy(void **state)
{
    (void)state;
    static const ref_job wl[] = {
        REF_JOB(0, 0, 5, 10, 10), REF_JOB(0, 0, 3, 10, 10), REF_JOB(0, 0, 3, 10, 10), REF_JOB(0, 0, 2, 12, 12)};
    static const double es[] = {0, 10, 12, 0};
    static const char *const ea[] = {"0-4", "0-2", "3-5", "5-6"};
    check_run("easy", 0, 7, wl, 4, es, ea, NULL, NULL);
    static const double ks[] = {0, 10, 10, 20};
    static const char *const ka[] = {"0-4", "0-2", "3-5", "0-1"};
    check_run("easy", 2, 7, wl, 4, ks, ka, NULL, NULL);
    check_run("conservative", 0, 7, wl, 4, ks, ka, NULL, NULL);
}

/* 4 resources: A1 res 2 wall 10; A2 res 1 wall 5; B res 4 wall 10; C res 4
 * wall 10; D res 2 wall 5; Y res 1 wall 8. EASY and k = 2: Y backfills at
 * 0 (it ends by B's 10, C is at 20), D waits until 30. Conservative also
 * reserves D, at 5 on [5,10) beside A1: Y would delay it, so Y waits (30). */
static void test_depth2_vs_conservative(void **state)
{
    (void)state;
    static const ref_job wl[] = {REF_JOB(0, 0, 2, 10, 10), REF_JOB(0, 0, 1, 5, 5),  REF_JOB(0, 0, 4, 10, 10),
                                 REF_JOB(0, 0, 4, 10, 10), REF_JOB(0, 0, 2, 5, 5), REF_JOB(0, 0, 1, 8, 8)};
    static const double es[] = {0, 0, 10, 20, 30, 0};
    static const char *const ea[] = {"0-1", "2", "0-3", "0-3", "0-1", "3"};
    check_run("easy", 0, 4, wl, 6, es, ea, NULL, NULL);
    check_run("easy", 2, 4, wl, 6, es, ea, NULL, NULL);
    static const double cs[] = {0, 0, 10, 20, 5, 30};
    static const char *const ca[] = {"0-1", "2", "0-3", "0-3", "2-3", "0"};
    static const rsv_check rc[] = {{0, 4, 5}, {0, 5, 30}, {0, 3, 20}, {5, 5, 30}};
    rsv_checks c = {rc, 4, 0};
    check_run("conservative", 0, 4, wl, 6, cs, ca, check_rsv_hook, &c);
    assert_int_equal(c.done, 8);
}

/* ---- random workloads against the reference -------------------------------- */

#ifdef FBF_TEST_UNDER_TSAN
#define NB_WORKLOADS 40 /* see CMakeLists.txt */
#else
#define NB_WORKLOADS 200
#endif
#define MAX_JOBS 300

static int cmp_results(const ref_result *a, const ref_result *b, size_t n, size_t *first)
{
    int bad = 0;
    for (size_t i = n; i-- > 0;)
        if (a[i].rejected != b[i].rejected ||
            !(a[i].start == b[i].start || (isnan(a[i].start) && isnan(b[i].start))) ||
            strcmp(a[i].alloc, b[i].alloc) != 0) {
            bad++;
            *first = i;
        }
    return bad;
}

static void test_random_vs_reference(void **state)
{
    (void)state;
    static const char *const pol[] = {"fcfs", "easy", "conservative"};
    static ref_job jobs[MAX_JOBS];
    static ref_result want[MAX_JOBS], got[MAX_JOBS];
    uint32_t ids[REF_MAX_RES], nb;
    int failures[3] = {0, 0, 0}, reported = 0;
    size_t total_jobs = 0, calls = 0;
    for (uint64_t seed = 1; seed <= NB_WORKLOADS; seed++) {
        size_t n = ref_random_workload(seed, 30, MAX_JOBS, 4, 64, jobs, ids, &nb);
        total_jobs += n;
        for (int p = 0; p < 3; p++) {
            ref_trace rt = {0};
            char err[512] = "";
            if (ref_simulate((ref_policy)p, ids, nb, jobs, n, want, &rt, err, sizeof err) < 0)
                fail_msg("reference, seed %llu, %s: %s", (unsigned long long)seed, pol[p], err);
            for (size_t k = 0; k < rt.n; k++)
                calls += rt.v[k].kind == REF_CALL_ME_LATER;
            for (unsigned workers = 1; workers <= 4; workers += 3) {
                ref_trace et = {0};
                int rc = fbf_test_sim_run(pol[p], 0, workers, ids, nb, jobs, n, got, &et, NULL,
                                          NULL, NULL, err, sizeof err);
                size_t first = 0, at = ref_trace_diff(&rt, &et);
                int bad = rc < 0 ? -1 : cmp_results(want, got, n, &first);
                if (bad == 0 && at == SIZE_MAX) {
                    ref_trace_fini(&et);
                    continue;
                }
                failures[p]++;
                if (reported++ < 3) {
                    fprintf(stderr, "MISMATCH seed %llu, %s, %u workers: %s%d job(s) differ\n",
                            (unsigned long long)seed, pol[p], workers, rc < 0 ? err : "", bad);
                    if (bad > 0)
                        fprintf(stderr, "  first: job %zu: engine %.17g \"%s\"%s, reference "
                                        "%.17g \"%s\"%s\n",
                                first, got[first].start, got[first].alloc,
                                got[first].rejected ? " rejected" : "", want[first].start,
                                want[first].alloc, want[first].rejected ? " rejected" : "");
                    if (at != SIZE_MAX) {
                        size_t from = at > 6 ? at - 6 : 0;
                        fprintf(stderr, " first trace difference at entry %zu; reference:\n", at);
                        ref_trace_print(stderr, &rt, from, at + 4);
                        fprintf(stderr, " engine:\n");
                        ref_trace_print(stderr, &et, from, at + 4);
                    }
                    if (n <= 40)
                        ref_print_workload(stderr, ids, nb, jobs, n);
                }
                ref_trace_fini(&et);
            }
            ref_trace_fini(&rt);
        }
    }
    fprintf(stderr, "random: %d workloads, %zu jobs, %zu reference CALL_ME_LATERs; runs (of "
                    "%d each) that differ from the reference: fcfs %d, easy %d, conservative %d\n",
            NB_WORKLOADS, total_jobs, calls, 2 * NB_WORKLOADS, failures[0], failures[1],
            failures[2]);
    assert_int_equal(failures[0] + failures[1] + failures[2], 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_worked_trace_and_reasons),
        cmocka_unit_test(test_compression_example),
        cmocka_unit_test(test_zero_walltime),
        cmocka_unit_test(test_easy_shadow_now),
        cmocka_unit_test(test_call_me_later_not_needed),
        cmocka_unit_test(test_estimate_start),
        cmocka_unit_test(test_depth2_vs_easy),
        cmocka_unit_test(test_depth2_vs_conservative),
        cmocka_unit_test(test_random_vs_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
