/*
 * test_qindex: the queue-order index of policies/backfilling/queue_index.c finds, after
 * any job (indexed or not) or from the head, exactly the first job in
 * queue order whose own values pass a monotone predicate, as a scan of
 * every indexed job does; while jobs are inserted, removed and have their
 * reservations changed, in the main tree and in groups sharing its nodes,
 * and with subtime ties (the arrival order breaks them). Its aggregates
 * (fbf_qindex_all) and count are checked the same way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "policies/backfilling/queue_index.h"
#include "support/testkit.h"

#define NJOBS 600
#define ROUNDS 40
#define QUERIES 200

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t rnd(uint32_t bound)
{
    return fbf_test_rnd(&rng, bound);
}

/* A predicate of the shape the policies use: every bound an upper or
 * lower limit on one aggregate, so a subtree passes whenever one of its
 * jobs does. */
typedef struct limits {
    uint32_t res;
    double wall, rsv_below, rsv_above;
    unsigned long calls;
} limits;

static bool pass(void *ctx, const fbf_qagg *g)
{
    limits *l = ctx;
    l->calls++;
    return g->min_res <= l->res && g->min_wall <= l->wall && g->min_rsv < l->rsv_below &&
           g->max_rsv > l->rsv_above;
}

static fbf_qagg own_values(const fbf_job *j)
{
    double r = isnan(j->rsv) ? INFINITY : j->rsv;
    return (fbf_qagg){j->res, j->walltime, r, r};
}

/* The engine only provides the job records the index reads. */
static fbf_engine *mk_jobs(fbf_job_h *h)
{
    fbf_engine *e = fbf_test_engine("fcfs", 1, "0-999");
    fbf_error err;
    assert_int_equal(fbf_engine_begin(e, 0, &err), 0);
    for (size_t i = 0; i < NJOBS; i++) {
        char id[32];
        snprintf(id, sizeof id, "j%zu", i);
        /* Few distinct subtimes: many ties, broken by arrival. */
        double sub = (double)rnd(40);
        double wall = rnd(8) == 0 ? 0.5 * (double)rnd(10) : (double)(1 + rnd(500));
        assert_int_equal(fbf_engine_submit(e, id, sub, 1 + (int64_t)rnd(64), wall, &err), 0);
        h[i] = fbf_engine_find(e, id);
        assert_int_not_equal(h[i], FBF_JOB_NONE);
    }
    return e;
}

static void random_rsv(fbf_engine *e, fbf_job_h h)
{
    fbf_sched_set_rsv(e, h, rnd(6) == 0 ? NAN : (double)rnd(2000) + 0.25 * rnd(4));
}

static int by_key(const void *a, const void *b, void *e)
{
    return fbf_job_key_cmp(fbf_sched_job(e, *(const fbf_job_h *)a),
                           fbf_sched_job(e, *(const fbf_job_h *)b));
}

/* Insertion sort of the handles by queue key (the reference order). */
static void sort_by_key(fbf_engine *e, fbf_job_h *v, size_t n)
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i; k > 0 && by_key(&v[k - 1], &v[k], e) > 0; k--) {
            fbf_job_h t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
}

/* Jobs with random reservations (some none), and their handles in queue
 * order. */
static fbf_engine *mk_reserved(fbf_job_h *h, fbf_job_h *order)
{
    fbf_engine *e = mk_jobs(h);
    for (size_t i = 0; i < NJOBS; i++) {
        random_rsv(e, h[i]);
        order[i] = h[i];
    }
    sort_by_key(e, order, NJOBS);
    return e;
}

/* What fbf_qindex_next must return: the first member after `after` in
 * key order that passes. */
static fbf_job_h scan_next(fbf_engine *e, const fbf_job_h *order, size_t n, const bool *member,
                           fbf_job_h after, limits *l)
{
    const fbf_job *k = after == FBF_JOB_NONE ? NULL : fbf_sched_job(e, after);
    for (size_t i = 0; i < n; i++) {
        const fbf_job *j = fbf_sched_job(e, order[i]);
        if (!member[order[i]] || (k && fbf_job_key_cmp(j, k) <= 0))
            continue;
        fbf_qagg a = own_values(j);
        if (pass(l, &a))
            return order[i];
    }
    return FBF_JOB_NONE;
}

static limits random_limits(void)
{
    return (limits){.res = 1 + rnd(70),
                    .wall = rnd(4) == 0 ? INFINITY : (double)rnd(520),
                    .rsv_below = rnd(4) == 0 ? INFINITY : (double)rnd(2100),
                    .rsv_above = rnd(4) == 0 ? -INFINITY : (double)rnd(2000)};
}

/* Checks QUERIES random queries on the tree at root (the main tree when
 * root is NULL) against the scan over its members. */
static void check_queries(fbf_engine *e, fbf_qindex *q, const uint32_t *root,
                          const fbf_job_h *order, const bool *member)
{
    for (int k = 0; k < QUERIES; k++) {
        limits l = random_limits();
        limits ref = l;
        /* After a member, a job of the other tree or nothing. */
        fbf_job_h after = rnd(10) == 0 ? FBF_JOB_NONE : order[rnd(NJOBS)];
        fbf_job_h want = scan_next(e, order, NJOBS, member, after, &ref);
        fbf_job_h got = root ? fbf_qindex_next_at(q, e, *root, after, pass, &l)
                             : fbf_qindex_next(q, e, after, pass, &l);
        if (got != want)
            fail_msg("query res <= %u wall <= %g rsv in (%g, %g) after %u: got %u, want %u",
                     l.res, l.wall, l.rsv_above, l.rsv_below, after, got, want);
    }
}

static void test_next_matches_scan(void **state)
{
    (void)state;
    fbf_job_h h[NJOBS], order[NJOBS];
    fbf_engine *e = mk_reserved(h, order);
    fbf_qindex *q = fbf_qindex_create(FBF_QINDEX_RSV);
    assert_non_null(q);
    bool member[NJOBS] = {false};
    size_t count = 0;
    for (int round = 0; round < ROUNDS; round++) {
        /* Insert, remove, re-reserve: a mix that keeps about half in. */
        for (int k = 0; k < NJOBS / 4; k++) {
            fbf_job_h j = h[rnd(NJOBS)];
            unsigned op = rnd(3);
            if (op == 0 && !member[j]) {
                assert_int_equal(fbf_qindex_insert(q, e, j), 0);
                member[j] = true;
                count++;
            } else if (op == 1 && member[j]) {
                fbf_qindex_remove(q, e, j);
                member[j] = false;
                count--;
            } else {
                random_rsv(e, j);
                if (member[j])
                    fbf_qindex_update(q, e, j);
            }
        }
        assert_int_equal(fbf_qindex_count(q), count);
        fbf_qagg all = {UINT32_MAX, INFINITY, INFINITY, -INFINITY};
        for (size_t i = 0; i < NJOBS; i++) {
            assert_true(fbf_qindex_contains(q, h[i]) == member[h[i]]);
            if (!member[h[i]])
                continue;
            fbf_qagg a = own_values(fbf_sched_job(e, h[i]));
            all.min_res = a.min_res < all.min_res ? a.min_res : all.min_res;
            all.min_wall = fmin(all.min_wall, a.min_wall);
            all.min_rsv = fmin(all.min_rsv, a.min_rsv);
            all.max_rsv = fmax(all.max_rsv, a.max_rsv);
        }
        fbf_qagg got = fbf_qindex_all(q);
        assert_int_equal(got.min_res, all.min_res);
        assert_true(got.min_wall == all.min_wall && got.min_rsv == all.min_rsv &&
                    got.max_rsv == all.max_rsv);
        check_queries(e, q, NULL, order, member);
    }
    fbf_qindex_destroy(q);
    fbf_engine_destroy(e);
}

/* Two groups over one qindex's nodes (jobs of even and odd res): each
 * finds only its own jobs, in its own order. */
static void test_groups(void **state)
{
    (void)state;
    fbf_job_h h[NJOBS], order[NJOBS];
    fbf_engine *e = mk_reserved(h, order);
    fbf_qindex *q = fbf_qindex_create(FBF_QINDEX_RSV);
    assert_non_null(q);
    uint32_t root[2] = {0, 0};
    bool member[2][NJOBS] = {{false}};
    for (int round = 0; round < ROUNDS; round++) {
        for (int k = 0; k < NJOBS / 4; k++) {
            fbf_job_h j = h[rnd(NJOBS)];
            unsigned g = fbf_sched_job(e, j)->res % 2;
            if (!member[g][j] && rnd(2)) {
                assert_int_equal(fbf_qindex_insert_at(q, e, &root[g], j), 0);
                member[g][j] = true;
            } else if (member[g][j] && rnd(2)) {
                fbf_qindex_remove_at(q, e, &root[g], j);
                member[g][j] = false;
            } else {
                random_rsv(e, j);
                if (member[g][j])
                    fbf_qindex_update_at(q, e, root[g], j);
            }
        }
        for (unsigned g = 0; g < 2; g++)
            check_queries(e, q, &root[g], order, member[g]);
    }
    fbf_qindex_destroy(q);
    fbf_engine_destroy(e);
}

/* A search after a job tests nothing that lies before it: with every job
 * passing, the next one is found with a single test (its own), however
 * deep it sits and whatever its ancestors' subtrees hold. */
static void test_search_after_is_short(void **state)
{
    (void)state;
    fbf_job_h h[NJOBS], order[NJOBS];
    fbf_engine *e = mk_jobs(h);
    fbf_qindex *q = fbf_qindex_create(FBF_QINDEX_RSV);
    assert_non_null(q);
    for (size_t i = 0; i < NJOBS; i++) {
        fbf_sched_set_rsv(e, h[i], 1);
        assert_int_equal(fbf_qindex_insert(q, e, h[i]), 0);
        order[i] = h[i];
    }
    sort_by_key(e, order, NJOBS);
    for (size_t i = 0; i + 1 < NJOBS; i++) {
        limits l = {.res = UINT32_MAX, .wall = INFINITY, .rsv_below = INFINITY,
                    .rsv_above = -INFINITY};
        assert_int_equal(fbf_qindex_next(q, e, order[i], pass, &l), order[i + 1]);
        if (l.calls != 1)
            fail_msg("the search after job %zu of %d made %lu tests", i, NJOBS, l.calls);
    }
    fbf_qindex_destroy(q);
    fbf_engine_destroy(e);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_matches_scan),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_search_after_is_short),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
