/*
 * test_machine_runs: engine/machine_runs against one state per machine.
 * Random changes on random sets over a platform with gaps (ids that are
 * not compute machines) must leave the runs describing, machine by machine,
 * what a plain array says, sorted, covering exactly the compute machines,
 * with no two neighbours that could be merged; each() must visit exactly
 * the pieces of a set, in id order; a failing change must leave the runs
 * as they were.
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

#include "engine/machine_runs.h"
#include "engine/power.h"

#define IDS 96

typedef struct change {
    uint8_t st;
    double t;
    fbf_job_h hold;
    int calls, fail_at; /* fail_at: the call that fails (-1: none) */
} change;

static int apply(void *ctx, fbf_mrun *x)
{
    change *c = ctx;
    if (c->calls++ == c->fail_at)
        return -ENOMEM;
    x->st = c->st;
    if (c->st == FBF_MACHINE_ON) {
        x->idle_since = c->t;
    } else {
        x->req_at = c->t;
        x->wake_at = c->t + 5;
        x->hold = c->hold;
    }
    return 0;
}

/* What one machine's state is, in the array model. */
typedef struct one {
    uint8_t st;
    double idle_since, req_at, wake_at;
    fbf_job_h hold;
} one;

static void model_apply(one *m, const change *c)
{
    m->st = c->st;
    if (c->st == FBF_MACHINE_ON) {
        *m = (one){.st = c->st, .idle_since = c->t, .wake_at = INFINITY, .hold = FBF_JOB_NONE};
    } else {
        *m = (one){.st = c->st, .req_at = c->t, .wake_at = c->t + 5, .hold = c->hold};
    }
}

static void check(const fbf_mruns *r, const one *model, const fbf_idset *compute)
{
    uint32_t id = 0;
    for (size_t i = 0; i < r->n; i++) {
        const fbf_mrun *x = &r->v[i];
        assert_true(x->lo <= x->hi);
        if (i) {
            const fbf_mrun *p = &r->v[i - 1];
            assert_true(p->hi < x->lo);
            bool mergeable = p->hi + 1 == x->lo && p->st == x->st && p->hold == x->hold &&
                             p->idle_since == x->idle_since && p->req_at == x->req_at &&
                             p->wake_at == x->wake_at;
            if (mergeable)
                fail_msg("runs %u-%u and %u-%u could be one", p->lo, p->hi, x->lo, x->hi);
        }
        for (; id < x->lo; id++)
            assert_false(fbf_idset_contains(compute, id));
        for (; id <= x->hi; id++) {
            assert_true(fbf_idset_contains(compute, id));
            const one *m = &model[id];
            if (x->st != m->st || x->hold != m->hold || x->idle_since != m->idle_since ||
                x->req_at != m->req_at || x->wake_at != m->wake_at)
                fail_msg("machine %u: run %u-%u says state %u, the model %u", id, x->lo, x->hi,
                         x->st, m->st);
            assert_ptr_equal(fbf_mruns_find(r, id), x);
        }
    }
    for (; id < IDS; id++)
        assert_false(fbf_idset_contains(compute, id));
}

typedef struct visit {
    uint32_t next; /* pieces must come in id order */
    uint64_t seen;
    const one *model;
} visit;

static int visit_piece(void *ctx, const fbf_mrun *x)
{
    visit *v = ctx;
    assert_true(x->lo >= v->next && x->lo <= x->hi);
    for (uint32_t id = x->lo; id <= x->hi; id++)
        assert_int_equal(x->st, v->model[id].st);
    v->seen += (uint64_t)x->hi - x->lo + 1;
    v->next = x->hi + 1;
    return 0;
}

static void random_set(fbf_idset *s, unsigned *seed)
{
    fbf_idset_clear(s);
    int n = rand_r(seed) % 4;
    for (int k = 0; k < n; k++) {
        uint32_t lo = (uint32_t)(rand_r(seed) % IDS), len = (uint32_t)(rand_r(seed) % 20);
        uint32_t hi = lo + len < IDS ? lo + len : IDS - 1;
        assert_int_equal(fbf_idset_add_range(s, lo, hi), 0);
    }
}

static void test_random_changes(void **state)
{
    (void)state;
    fbf_idset compute, set, inter;
    fbf_idset_init(&compute);
    fbf_idset_init(&set);
    fbf_idset_init(&inter);
    /* Compute machines 0-39, 45-70, 80-95: the gaps are not machines. */
    assert_int_equal(fbf_idset_add_range(&compute, 0, 39), 0);
    assert_int_equal(fbf_idset_add_range(&compute, 45, 70), 0);
    assert_int_equal(fbf_idset_add_range(&compute, 80, 95), 0);
    for (unsigned round = 0; round < 50; round++) {
        unsigned seed = round + 1;
        fbf_mruns r;
        assert_int_equal(fbf_mruns_init(&r, &compute), 0);
        one model[IDS];
        for (uint32_t id = 0; id < IDS; id++)
            model[id] = (one){.st = FBF_MACHINE_ON, .wake_at = INFINITY, .hold = FBF_JOB_NONE};
        check(&r, model, &compute);
        for (int step = 0; step < 200; step++) {
            random_set(&set, &seed);
            bool all = rand_r(&seed) % 10 == 0;
            change c = {.st = (uint8_t)(rand_r(&seed) % 4),
                        .t = rand_r(&seed) % 3,
                        .hold = (fbf_job_h)(rand_r(&seed) % 3),
                        .fail_at = -1};
            if (rand_r(&seed) % 8 == 0)
                c.fail_at = rand_r(&seed) % 3;
            int rc = fbf_mruns_change(&r, all ? NULL : &set, apply, &c);
            bool failed = c.fail_at >= 0 && c.fail_at < c.calls;
            assert_int_equal(rc, failed ? -ENOMEM : 0);
            if (!failed)
                for (uint32_t id = 0; id < IDS; id++)
                    if (fbf_idset_contains(&compute, id) && (all || fbf_idset_contains(&set, id)))
                        model_apply(&model[id], &c);
            check(&r, model, &compute);
            /* each() sees exactly the set's compute machines */
            assert_int_equal(fbf_idset_copy(&inter, &set), 0);
            fbf_idset tmp;
            fbf_idset_init(&tmp);
            assert_int_equal(fbf_idset_copy(&tmp, &set), 0);
            assert_int_equal(fbf_idset_subtract(&tmp, &compute), 0);
            assert_int_equal(fbf_idset_subtract(&inter, &tmp), 0);
            fbf_idset_fini(&tmp);
            visit v = {.model = model};
            assert_int_equal(fbf_mruns_each(&r, &set, visit_piece, &v), 0);
            assert_int_equal(v.seen, fbf_idset_count(&inter));
        }
        fbf_mruns_fini(&r);
    }
    fbf_idset_fini(&compute);
    fbf_idset_fini(&set);
    fbf_idset_fini(&inter);
}

/* 2^31 machines in one state are one run, however they are cut. */
static void test_huge_runs(void **state)
{
    (void)state;
    fbf_idset compute, set;
    fbf_idset_init(&compute);
    fbf_idset_init(&set);
    assert_int_equal(fbf_idset_add_range(&compute, 0, 2147483646u), 0);
    fbf_mruns r;
    assert_int_equal(fbf_mruns_init(&r, &compute), 0);
    assert_int_equal(fbf_idset_add_range(&set, 5, 1000000004u), 0);
    change c = {.st = FBF_MACHINE_OFF, .t = 1, .hold = 7, .fail_at = -1};
    assert_int_equal(fbf_mruns_change(&r, &set, apply, &c), 0);
    assert_int_equal(r.n, 3);
    assert_int_equal(fbf_mruns_find(&r, 1000000004u)->st, FBF_MACHINE_OFF);
    assert_int_equal(fbf_mruns_find(&r, 1000000005u)->st, FBF_MACHINE_ON);
    c = (change){.st = FBF_MACHINE_ON, .t = 0, .fail_at = -1};
    assert_int_equal(fbf_mruns_change(&r, &set, apply, &c), 0);
    assert_int_equal(r.n, 1);
    assert_int_equal(r.v[0].hi, 2147483646u);
    fbf_mruns_fini(&r);
    fbf_idset_fini(&compute);
    fbf_idset_fini(&set);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_changes),
        cmocka_unit_test(test_huge_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
