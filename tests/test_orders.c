/*
 * test_orders: the orders of scheduling-semantics.md D9 on hand-made
 * cases. Each key against its formula (FCFS's jobs without walltime
 * included), then small workloads whose start times are worked out by
 * hand below each case, checked on the engine (1 and 3 workers) and on
 * the brute-force reference alike: ties broken by D1, a queue order apart
 * from the backfill order, keys that change with time, and a priority
 * changed while jobs wait (fbf_engine_set_priority).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/order_api.h"
#include "policies/orders/registry.h"
#include "policies/registry.h"
#include "support/engine_sim.h"
#include "support/ref_sched.h"
#include "support/testkit.h"

static const uint32_t ids[] = {0, 1, 2, 3, 4, 5, 6, 7};

static double key(const char *order, double subtime, uint32_t res, double walltime,
                  double prio, double now)
{
    const fbf_order_ops *o = fbf_order_lookup(order);
    assert_non_null(o);
    fbf_job j = {.subtime = subtime, .res = res, .walltime = walltime};
    j.prio = prio;
    return fbf_order_key(o, &j, now);
}

/* ---- the keys ------------------------------------------------------------ */

static void test_keys(void **state)
{
    (void)state;
    /* submit: D1 itself, the subtime (ties by arrival). */
    assert_true(key("submit", 7, 3, 50, 9, 100) == 7);
    assert_true(fbf_order_is_submit(fbf_order_lookup("submit")));
    /* sjf: est; saf: res * est. */
    assert_true(key("sjf", 7, 3, 50, 9, 100) == 50);
    assert_true(key("saf", 7, 3, 50, 9, 100) == 150);
    /* priority: -priority. */
    assert_true(key("priority", 7, 3, 50, 9, 100) == -9);
    assert_true(key("priority", 7, 3, 50, -2.5, 100) == 2.5);
    /* lxf: -((wait + est) / e), e = max(est, 1): wait 93, est 50. */
    assert_true(key("lxf", 7, 3, 50, 9, 100) == -((93.0 + 50) / 50));
    /* ... est below 1 divides by 1, est 0 too. */
    assert_true(key("lxf", 7, 3, 0.5, 9, 100) == -(93.5 / 1));
    assert_true(key("lxf", 7, 3, 0, 9, 100) == -93);
    /* wfp3: -(q * q * q * res), q = wait / e, left to right. */
    double q = 93.0 / 50;
    assert_true(key("wfp3", 7, 3, 50, 9, 100) == -(q * q * q * 3));
    q = 93.0 / 1;
    assert_true(key("wfp3", 7, 2, 0.25, 9, 100) == -(q * q * q * 2));
    /* FCFS's jobs without walltime: est +inf; lxf -1 (D9). */
    assert_true(isinf(key("sjf", 7, 3, -1, 0, 100)) && key("sjf", 7, 3, -1, 0, 100) > 0);
    assert_true(isinf(key("saf", 7, 3, -1, 0, 100)));
    assert_true(key("lxf", 7, 3, -1, 0, 100) == -1);
    assert_true(key("wfp3", 7, 3, -1, 0, 100) == 0);
    /* lxf and wfp3 change with now, the others do not. */
    assert_true(fbf_order_lookup("lxf")->dynamic && fbf_order_lookup("wfp3")->dynamic);
    assert_false(fbf_order_lookup("sjf")->dynamic || fbf_order_lookup("saf")->dynamic ||
                 fbf_order_lookup("priority")->dynamic);
    assert_null(fbf_order_lookup("fifo"));
    /* The registry: submit first, every name once. */
    const fbf_order_ops *const *all = fbf_order_list();
    assert_string_equal(all[0]->name, "submit");
    size_t n = 0;
    while (all[n])
        n++;
    assert_int_equal(n, 6);
}

/* ---- workloads checked on the engine and the reference ------------------- */

typedef struct run {
    const char *policy;
    long depth;
    ref_order order, backfill;
} run;

static ref_policy ref_policy_of(const char *p)
{
    return p[0] == 'f' ? REF_FCFS : p[0] == 'e' ? REF_EASY : REF_CONSERVATIVE;
}

/* Every job's start (NAN: never) must be `starts`, for the reference and
 * for the engine under 1 and 3 workers. */
static void check(const run *r, uint32_t nb, const ref_job *jobs, size_t n, const double *starts)
{
    ref_result out[16];
    ref_trace tr = {0};
    char err[512];
    ref_options o = {.policy = ref_policy_of(r->policy), .depth = r->depth, .order = r->order,
                     .backfill_order = r->backfill};
    assert_int_equal(ref_simulate_opts(&o, ids, nb, jobs, n, out, &tr, err, sizeof err), 0);
    ref_trace_fini(&tr);
    for (size_t i = 0; i < n; i++)
        if (!(out[i].start == starts[i] || (isnan(out[i].start) && isnan(starts[i]))))
            fail_msg("reference %s, order %s/%s: job %zu at %g, expected %g", r->policy,
                     ref_order_names[r->order], ref_order_names[r->backfill], i, out[i].start,
                     starts[i]);
    fbf_test_sim_config c = {r->policy, r->depth, 1, ref_order_names[r->order],
                             ref_order_names[r->backfill], NULL, NULL};
    for (c.workers = 1; c.workers <= 3; c.workers += 2) {
        tr = (ref_trace){0};
        if (fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, out, &tr, NULL, NULL, NULL, err,
                                 sizeof err) < 0)
            fail_msg("%s", err);
        ref_trace_fini(&tr);
        for (size_t i = 0; i < n; i++)
            if (!(out[i].start == starts[i] || (isnan(out[i].start) && isnan(starts[i]))))
                fail_msg("%s, order %s/%s, %u workers: job %zu at %g, expected %g", r->policy,
                         c.order, c.backfill_order, c.workers, i, out[i].start, starts[i]);
    }
}

#define J(a, s, r, w, rt, p) {.arrival = (a), .subtime = (s), .res = (r), .walltime = (w), \
                              .runtime = (rt), .priority = (p)}

/* 2 resources, A runs [0, 10) on both; then, all submitted at 1 and
 * running their walltime: B (res 1, wall 30, prio 1), C (res 1, wall 5,
 * prio 5), D (res 2, wall 5, prio 5), E (res 1, wall 5, prio 1). From 10
 * FCFS starts, in queue order, while the head fits:
 *   submit:   B, C at 10; D (res 2) waits for B: 40; E at 45
 *   sjf:      C, D, E tie at 5, D1 keeps them so, then B: C at 10, D
 *             (after C) at 15, E and B at 20
 *   priority: C, D tie at -5 (C first), then B, E tie at -1 (B first):
 *             the same starts as sjf
 *   saf:      C (5), E (5), D (10), B (30): C, E at 10, D at 15, B at 20 */
static const ref_job fcfs_wl[] = {
    J(0, 0, 2, 10, 10, 0),  J(1, 1, 1, 30, 30, 1), J(1, 1, 1, 5, 5, 5),
    J(1, 1, 2, 5, 5, 5),    J(1, 1, 1, 5, 5, 1),
};

static void test_fcfs_orders(void **state)
{
    (void)state;
    static const double submit[] = {0, 10, 10, 40, 45};
    static const double sjf[] = {0, 20, 10, 15, 20};
    static const double prio[] = {0, 20, 10, 15, 20};
    static const double saf[] = {0, 20, 10, 15, 10};
    run r = {"fcfs", 0, REF_SUBMIT, REF_SUBMIT};
    check(&r, 2, fcfs_wl, 5, submit);
    r.order = r.backfill = REF_SJF;
    check(&r, 2, fcfs_wl, 5, sjf);
    r.order = r.backfill = REF_PRIORITY;
    check(&r, 2, fcfs_wl, 5, prio);
    r.order = r.backfill = REF_SAF;
    check(&r, 2, fcfs_wl, 5, saf);
}

/* FCFS with a job without walltime (D9: est +inf, lxf key -1). 1 resource;
 * A runs [0, 10); at 2: N (no walltime, runs 4), then S (wall 3), the same
 * subtime. submit: D1 puts N (which arrived first) first: N at 10, S at
 * 14. sjf: S first (3 < inf): S at 10, N at 13. lxf at 10: N's key is -1,
 * S's -((8 + 3) / 3): S first again. wfp3: N's q is 8 / inf = 0, key 0;
 * S's q = 8 / 3, key -(q^3): S first. */
static void test_fcfs_without_walltime(void **state)
{
    (void)state;
    static const ref_job wl[] = {J(0, 0, 1, 10, 10, 0), J(2, 2, 1, -1, 4, 0),
                                 J(2, 2, 1, 3, 3, 0)};
    static const double submit[] = {0, 10, 14}, sjf[] = {0, 13, 10};
    run r = {"fcfs", 0, REF_SUBMIT, REF_SUBMIT};
    check(&r, 1, wl, 3, submit);
    r.order = r.backfill = REF_SJF;
    check(&r, 1, wl, 3, sjf);
    r.order = r.backfill = REF_LXF;
    check(&r, 1, wl, 3, sjf);
    r.order = r.backfill = REF_WFP3;
    check(&r, 1, wl, 3, sjf);
}

/* lxf changes with time. 1 resource; A runs [0, 100). L (wall 100) at 0,
 * S (wall 10) at 90. At 100: L's key -((100 + 100) / 100) = -2, S's
 * -((10 + 10) / 10) = -2: a tie, D1 puts L first: L at 100, S at 200.
 * If S comes at 89 instead, its key is -(21 / 10) = -2.1 < -2: S at 100,
 * L at 110. sjf would start S first in both. */
static void test_lxf_over_time(void **state)
{
    (void)state;
    ref_job wl[] = {J(0, 0, 1, 100, 100, 0), J(0, 0, 1, 100, 100, 0), J(90, 90, 1, 10, 10, 0)};
    static const double tie[] = {0, 100, 200}, sooner[] = {0, 110, 100};
    run r = {"fcfs", 0, REF_LXF, REF_LXF};
    check(&r, 1, wl, 3, tie);
    wl[2].arrival = wl[2].subtime = 89;
    check(&r, 1, wl, 3, sooner);
    r.order = r.backfill = REF_SJF;
    check(&r, 1, wl, 3, sooner);
}

/* EASY with a backfill order of its own (EASY++'s shape). 4 resources; A
 * (res 3, wall 10) runs from 0. At 1, in order: H (res 4, wall 10), then
 * X (res 1, wall 20), Y (res 1, wall 9), Z (res 1, wall 5); each runs its
 * walltime. The head H gets shadow 10, extra 0: only a job ending by 10
 * may backfill on the one free resource.
 *   submit: X (ends 21) fails, Y (ends 10) starts at 1, Z finds nothing
 *           free. H at 10, then X and Z when H ends at 20.
 *   sjf backfill order: Z (ends 6) first, at 1; at 6 Y would end at 15
 *           > 10 with extra 0: it waits. H at 10; X and Y at 20.
 *   depth 2, sjf backfill: H reserved at 10, X at 20 ([10, 20) is H's);
 *           Z backfills at 1; at 6 Y's window [6, 15) meets H's: it
 *           waits, and starts at 20 beside X.
 * With sjf as the queue order too: Z, Y, H, X. Z starts at 1 on the free
 * resource; head Y, shadow 6 (Z's end). At 6 Y starts (ends 15); head H,
 * shadow 15, extra 0; X (ends 30 > 15) waits. H at 15, X at 25. */
static void test_backfill_order(void **state)
{
    (void)state;
    static const ref_job wl[] = {J(0, 0, 3, 10, 10, 0), J(1, 1, 4, 10, 10, 0),
                                 J(1, 1, 1, 20, 20, 0), J(1, 1, 1, 9, 9, 0),
                                 J(1, 1, 1, 5, 5, 0)};
    static const double submit[] = {0, 10, 20, 1, 20}, sjf[] = {0, 10, 20, 20, 1};
    run r = {"easy", 0, REF_SUBMIT, REF_SUBMIT};
    check(&r, 4, wl, 5, submit);
    r.backfill = REF_SJF;
    check(&r, 4, wl, 5, sjf);
    /* Depth 2 holds H's and X's reservations (X at 20), the rest as EASY. */
    r.depth = 2;
    check(&r, 4, wl, 5, sjf);
    r = (run){"easy", 0, REF_SJF, REF_SJF};
    static const double q[] = {0, 15, 25, 6, 1};
    check(&r, 4, wl, 5, q);
}

/* ---- priorities changed while jobs wait ------------------------------ */

static fbf_engine *prio_engine(const char *policy)
{
    fbf_test_sim_config c = {policy, 0, 2, "priority", NULL, NULL, NULL};
    return fbf_test_sim_engine_cfg(&c, ids, 1);
}

static void submit_prio(fbf_engine *e, const char *id, double wall, double prio)
{
    fbf_error err;
    fbf_submission s = {.id = id, .subtime = fbf_engine_now(e), .res = 1, .walltime = wall,
                        .priority = prio, .delay = NAN};
    if (fbf_engine_submit_job(e, &s, &err) < 0)
        fail_msg("%s", err.text);
}

static void set_prio(fbf_engine *e, const char *id, double p)
{
    fbf_error err;
    if (fbf_engine_set_priority(e, fbf_engine_find(e, id), p, &err) < 0)
        fail_msg("%s", err.text);
}

/* One resource: R runs until 10, A B C wait (priorities 1 2 3). Raised to
 * 4 in the message that submits it, A goes next. Then B is raised over C:
 * FCFS and EASY start B at 20; conservative keeps the reservations it
 * gave in queue order at 1 (D9): C at 20, B at 30, and starts C. */
static void test_set_priority(void **state)
{
    (void)state;
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++) {
        fbf_engine *e = prio_engine(policies[p]);
        fbf_test_begin(e, 0);
        submit_prio(e, "R", 10, 0);
        fbf_test_decide(e, "E:R");
        fbf_test_begin(e, 1);
        submit_prio(e, "A", 10, 1);
        submit_prio(e, "B", 10, 2);
        submit_prio(e, "C", 10, 3);
        set_prio(e, "A", 4); /* before the pass, in the same message */
        fbf_test_decide(e, "");
        fbf_test_begin(e, 10);
        fbf_test_complete(e, "R");
        fbf_test_decide(e, "E:A");
        set_prio(e, "B", 3.5); /* over C now */
        fbf_test_begin(e, 20);
        fbf_test_complete(e, "A");
        fbf_test_decide(e, policies[p][0] == 'c' ? "E:C" : "E:B");
        fbf_error err;
        fbf_job_h a = fbf_engine_find(e, "A");
        assert_int_equal(fbf_engine_set_priority(e, a, 1, &err), -EINVAL);
        assert_non_null(strstr(err.text, "job A"));
        fbf_job_h b = fbf_engine_find(e, policies[p][0] == 'c' ? "B" : "C");
        assert_int_equal(fbf_engine_set_priority(e, b, NAN, &err), -EINVAL);
        fbf_engine_destroy(e);
    }
}

/* --max-wait under another order than D1: the jobs due need not be at the
 * queue's head. 1 resource, a (wall 100) runs from 0; b (wall 200) waits
 * from 0, c (wall 10) from 20: under sjf c heads the queue, yet b is the
 * one due at 30 (max wait 30), and c at 50. */
static void test_max_wait_any_order(void **state)
{
    (void)state;
    static const char *const policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++) {
        const fbf_policy_entry *pe = fbf_policy_lookup(policies[p]);
        fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                                 .workers = 2, .max_wait = 30,
                                 .order = fbf_order_lookup("sjf")};
        fbf_error err;
        fbf_engine *e = fbf_engine_create(&cfg, &err);
        assert_non_null(e);
        fbf_idset one;
        fbf_idset_init(&one);
        assert_int_equal(fbf_idset_add_range(&one, 0, 0), 0);
        assert_int_equal(fbf_engine_set_platform(e, &one, &err), 0);
        fbf_idset_fini(&one);
        fbf_test_begin(e, 0);
        fbf_test_submit(e, "a", 1, 100);
        fbf_test_submit(e, "b", 1, 200);
        fbf_test_decide(e, "E:a C:30");
        fbf_test_begin(e, 20);
        fbf_test_submit(e, "c", 1, 10);
        fbf_test_decide(e, "C:30");
        fbf_test_begin(e, 30);
        fbf_test_decide(e, "G:b C:50");
        fbf_test_begin(e, 50);
        fbf_test_decide(e, "G:c");
        assert_int_equal(fbf_engine_nb_waiting(e), 0);
        fbf_engine_destroy(e);
    }
}

/* A queue deep enough that the engine's workers take the keys of a
 * dynamic order and sort the partitions in parallel (4096 jobs and more):
 * the decisions are the same with 1 and 4 workers, under EASY and
 * conservative, for lxf and sjf (a tree per partition). */
static void run_deep(const char *policy, const char *order, unsigned workers, char *log,
                     size_t cap)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                             .workers = workers, .order = fbf_order_lookup(order)};
    fbf_error err;
    fbf_engine *e = fbf_engine_create(&cfg, &err);
    assert_non_null(e);
    fbf_idset all;
    fbf_idset_init(&all);
    assert_int_equal(fbf_idset_add_range(&all, 0, 63), 0);
    assert_int_equal(fbf_engine_set_platform(e, &all, &err), 0);
    fbf_idset_fini(&all);
    uint64_t rng = 12345;
    char id[32];
    size_t len = 0;
    fbf_job_h running[4096];
    size_t nrun = 0;
    for (int dp = 0; dp < 20; dp++) {
        fbf_test_begin(e, dp * 7.0);
        if (dp > 0 && nrun > 0) { /* the oldest running job ends */
            assert_int_equal(fbf_engine_complete_job(e, running[0], &err), 0);
            memmove(running, running + 1, --nrun * sizeof *running);
        }
        for (int k = 0; k < (dp == 0 ? 4500 : 3); k++) {
            snprintf(id, sizeof id, "j%d.%d", dp, k);
            fbf_submission sub = {id, dp * 7.0, 1 + fbf_test_rnd(&rng, 16),
                                  1 + fbf_test_rnd(&rng, 500), 0, NULL, NAN};
            assert_int_equal(fbf_engine_submit_job(e, &sub, &err), 0);
        }
        assert_int_equal(fbf_engine_decide(e, &err), 0);
        size_t nd;
        const fbf_decision *d = fbf_engine_decisions(e, &nd);
        for (size_t k = 0; k < nd; k++) {
            if (d[k].kind == FBF_DEC_EXECUTE && nrun < 4096)
                running[nrun++] = d[k].job;
            int w = d[k].kind == FBF_DEC_CALL_ME_LATER
                        ? snprintf(log + len, cap - len, "C:%.17g ", d[k].at)
                        : snprintf(log + len, cap - len, "%d:%s ", d[k].kind,
                                   fbf_engine_job_id(e, d[k].job));
            len += w > 0 && (size_t)w < cap - len ? (size_t)w : 0;
        }
    }
    fbf_engine_destroy(e);
}

static void test_deep_queue_workers(void **state)
{
    (void)state;
    static char one[1 << 16], four[1 << 16];
    static const char *const cases[][2] = {
        {"easy", "lxf"}, {"conservative", "wfp3"}, {"easy", "sjf"}, {"conservative", "priority"}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        run_deep(cases[c][0], cases[c][1], 1, one, sizeof one);
        run_deep(cases[c][0], cases[c][1], 4, four, sizeof four);
        assert_true(strlen(one) > 100);
        if (strcmp(one, four) != 0)
            fail_msg("%s, order %s: 1 and 4 workers decide differently", cases[c][0],
                     cases[c][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_fcfs_orders),
        cmocka_unit_test(test_fcfs_without_walltime),
        cmocka_unit_test(test_lxf_over_time),
        cmocka_unit_test(test_backfill_order),
        cmocka_unit_test(test_set_priority),
        cmocka_unit_test(test_max_wait_any_order),
        cmocka_unit_test(test_deep_queue_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
