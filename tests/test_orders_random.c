/*
 * test_orders_random: every combination of policy (FCFS, EASY, depth 2
 * and 3, conservative), queue order, backfill order and estimate
 * (scheduling-semantics.md D8-D10) on random workloads, checked decision
 * by decision against the brute-force reference (tests/support/ref_sched.c,
 * ref_policies.c), under 1 and 3 workers. Workloads carry priorities,
 * users and forwarded delay profiles (ref_random_extras()); jobs that
 * outlive their prediction, walltimes of 0 and FCFS jobs without walltime
 * are among them.
 *
 * The backfill order applies to EASY and depth k only (D9): FCFS and
 * conservative run each queue order once. FBF_TEST_ORDERS_WORKLOADS=N
 * runs N workloads per combination instead of the default.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/engine_sim.h"
#include "support/ref_sched.h"

#ifdef FBF_TEST_UNDER_TSAN
#define WORKLOADS 2 /* see CMakeLists.txt */
#else
#define WORKLOADS 6
#endif
#define MAX_JOBS 120

typedef struct policy_case {
    const char *name; /* fastbf's */
    ref_policy ref;
    long depth;
    bool backfill_order; /* whether the backfill order applies */
} policy_case;

static const policy_case policies[] = {
    {"fcfs", REF_FCFS, 0, false},
    {"easy", REF_EASY, 0, true},
    {"easy", REF_EASY, 2, true},
    {"easy", REF_EASY, 3, true},
    {"conservative", REF_CONSERVATIVE, 0, false},
};

static int same_results(const ref_result *a, const ref_result *b, size_t n, size_t *first)
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

typedef struct tally {
    size_t runs, mismatches, jobs, reported;
} tally;

/* One workload under one combination: the reference, then the engine
 * with 1 and 3 workers. */
static void run_one(tally *t, const policy_case *pc, ref_order qo, ref_order bo,
                    ref_estimate est, uint64_t seed)
{
    static ref_job jobs[MAX_JOBS];
    static ref_result want[MAX_JOBS], got[MAX_JOBS];
    uint32_t ids[REF_MAX_RES], nb;
    size_t n = ref_random_workload(seed, 20, MAX_JOBS, 4, 32, jobs, ids, &nb);
    ref_random_extras(seed, jobs, n);
    t->jobs += n;
    ref_options o = {.policy = pc->ref, .depth = pc->depth, .order = qo, .backfill_order = bo,
                     .estimate = est};
    ref_trace rt = {0};
    char err[512] = "";
    if (ref_simulate_opts(&o, ids, nb, jobs, n, want, &rt, err, sizeof err) < 0)
        fail_msg("reference, seed %llu: %s", (unsigned long long)seed, err);
    fbf_test_sim_config c = {.policy = pc->name,
                             .depth = pc->depth,
                             .order = ref_order_names[qo],
                             .backfill_order = ref_order_names[bo],
                             .estimate = ref_estimate_names[est]};
    for (c.workers = 1; c.workers <= 3; c.workers += 2) {
        ref_trace et = {0};
        int rc = fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, got, &et, NULL, NULL, NULL, err,
                                      sizeof err);
        size_t first = 0, at = ref_trace_diff(&rt, &et);
        int bad = rc < 0 ? -1 : same_results(want, got, n, &first);
        t->runs++;
        if (bad != 0 || at != SIZE_MAX) {
            t->mismatches++;
            if (t->reported++ < 3) {
                fprintf(stderr,
                        "MISMATCH %s depth %ld, order %s, backfill order %s, estimate %s, "
                        "seed %llu, %u workers: %s%d job(s) differ\n",
                        pc->name, pc->depth, c.order, c.backfill_order, c.estimate,
                        (unsigned long long)seed, c.workers, rc < 0 ? err : "", bad);
                if (bad > 0)
                    fprintf(stderr,
                            "  first: job %zu: engine %.17g \"%s\", reference %.17g \"%s\"\n",
                            first, got[first].start, got[first].alloc, want[first].start,
                            want[first].alloc);
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
        }
        ref_trace_fini(&et);
    }
    ref_trace_fini(&rt);
}

static void test_every_combination(void **state)
{
    (void)state;
    const char *env = getenv("FBF_TEST_ORDERS_WORKLOADS");
    uint64_t per = env ? strtoull(env, NULL, 10) : WORKLOADS;
    tally t = {0};
    size_t combos = 0;
    uint64_t seed = 1;
    for (size_t p = 0; p < sizeof policies / sizeof *policies; p++)
        for (int qo = 0; qo < REF_NB_ORDERS; qo++)
            for (int bo = 0; bo < REF_NB_ORDERS; bo++) {
                if (!policies[p].backfill_order && bo != qo)
                    continue;
                for (int est = 0; est < REF_NB_ESTIMATES; est++) {
                    combos++;
                    for (uint64_t k = 0; k < per; k++)
                        run_one(&t, &policies[p], (ref_order)qo, (ref_order)bo,
                                (ref_estimate)est, seed++);
                }
            }
    fprintf(stderr, "%zu combinations, %zu runs of %zu jobs in all: %zu differ from the "
                    "reference\n",
            combos, t.runs, t.jobs, t.mismatches);
    assert_int_equal(t.mismatches, 0);
}

/* The reference against itself: EASY by D6's shadow and extra, and by
 * D8's rule at depth 1, under every order and estimate. */
static void test_reference_depth_one(void **state)
{
    (void)state;
    static ref_job jobs[MAX_JOBS];
    static ref_result a[MAX_JOBS], b[MAX_JOBS];
    uint32_t ids[REF_MAX_RES], nb;
    size_t differ = 0, runs = 0;
    uint64_t seed = 100000;
    for (int qo = 0; qo < REF_NB_ORDERS; qo++)
        for (int bo = 0; bo < REF_NB_ORDERS; bo++)
            for (int est = 0; est < REF_NB_ESTIMATES; est++, seed++) {
                size_t n = ref_random_workload(seed, 20, MAX_JOBS, 4, 32, jobs, ids, &nb);
                ref_random_extras(seed, jobs, n);
                ref_options o = {.policy = REF_EASY, .order = (ref_order)qo,
                                 .backfill_order = (ref_order)bo,
                                 .estimate = (ref_estimate)est};
                ref_trace ta = {0}, tb = {0};
                char err[256];
                assert_int_equal(ref_simulate_opts(&o, ids, nb, jobs, n, a, &ta, err, sizeof err),
                                 0);
                o.depth_rule = true;
                assert_int_equal(ref_simulate_opts(&o, ids, nb, jobs, n, b, &tb, err, sizeof err),
                                 0);
                size_t first;
                differ += same_results(a, b, n, &first) != 0 ||
                          ref_trace_diff(&ta, &tb) != SIZE_MAX;
                runs++;
                ref_trace_fini(&ta);
                ref_trace_fini(&tb);
            }
    fprintf(stderr, "reference, D6 against D8 at depth 1: %zu of %zu runs differ\n", differ, runs);
    assert_int_equal(differ, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_combination),
        cmocka_unit_test(test_reference_depth_one),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
