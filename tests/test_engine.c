/*
 * test_engine: the engine's modules and its event API.
 *   - fbf_jobs: ids -> handles, -EEXIST, 100k ids, stable record addresses;
 *   - the engine: its error codes, D2 rejections in arrival order, D0 reply
 *     order, D3 resource choice on fragmented and non-contiguous sets.
 * The queue's partitions: test_queue.
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
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "policies/backfilling/tuning.h"
#include "policies/policies.h"
#include "policies/registry.h"
#include "support/testkit.h"

/* ---- fbf_jobs ------------------------------------------------------------ */

static void test_jobs_add_find(void **state)
{
    (void)state;
    fbf_jobs *js = fbf_jobs_create();
    char buf[16] = "w0!1";
    fbf_job_h a, b, c;
    assert_int_equal(fbf_jobs_add(js, buf, &a), 0);
    assert_int_equal(fbf_jobs_add(js, "w0!2", &b), 0);
    assert_int_not_equal(a, b);
    assert_int_equal(fbf_jobs_add(js, "w0!1", &c), -EEXIST);
    assert_int_equal(fbf_jobs_count(js), 2);
    strcpy(buf, "zz"); /* the store keeps its own copy */
    assert_int_equal(fbf_jobs_find(js, "w0!1"), a);
    assert_int_equal(fbf_jobs_find(js, "zz"), FBF_JOB_NONE);
    assert_int_equal(fbf_jobs_find(js, "w0!"), FBF_JOB_NONE);
    const fbf_job *ra = fbf_jobs_get(js, a);
    assert_string_equal(ra->id, "w0!1");
    assert_true(ra->seq < fbf_jobs_get(js, b)->seq); /* arrival order */
    assert_true(isnan(ra->rsv) && ra->res == 0 && ra->state == 0 && ra->alloc.n == 0);
    assert_true(ra->prev == FBF_JOB_NONE && ra->next == FBF_JOB_NONE);
    fbf_job_h d; /* a refused id left the store as it was */
    assert_int_equal(fbf_jobs_add(js, "w0!3", &d), 0);
    assert_int_equal(d, b + 1);
    assert_string_equal(fbf_jobs_get(js, d)->id, "w0!3");
    assert_string_equal(fbf_jobs_get(js, b)->id, "w0!2");
    assert_int_equal(fbf_jobs_find(js, "w0!3"), d);
    fbf_jobs_destroy(js);
    fbf_jobs_destroy(NULL);

    enum { N = 100000 }; /* 100k ids; records never move */
    js = fbf_jobs_create();
    fbf_job **rec = malloc(N * sizeof *rec);
    fbf_job_h *h = malloc(N * sizeof *h);
    assert_true(js && rec && h);
    char id[32];
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "w%d!%d", i % 7, i);
        assert_int_equal(fbf_jobs_add(js, id, &h[i]), 0);
        rec[i] = fbf_jobs_get(js, h[i]);
        rec[i]->res = (uint32_t)i; /* written through the first address */
    }
    assert_int_equal(fbf_jobs_count(js), N);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "w%d!%d", i % 7, i);
        assert_int_equal(fbf_jobs_find(js, id), h[i]);
        assert_ptr_equal(fbf_jobs_get(js, h[i]), rec[i]);
        assert_int_equal(rec[i]->res, (uint32_t)i);
        assert_string_equal(rec[i]->id, id);
        assert_int_equal(rec[i]->seq, (uint64_t)i);
        assert_int_equal(rec[i]->seq, (uint64_t)h[i]); /* qindex keys on it */
    }
    assert_int_equal(fbf_jobs_add(js, "w3!3", &c), -EEXIST);
    assert_int_equal(fbf_jobs_add(js, "w4!99999", &c), -EEXIST);
    assert_int_equal(fbf_jobs_count(js), N);
    free(rec);
    free(h);
    fbf_jobs_destroy(js);
}

/* ---- engine helpers ---------------------------------------------------------- */

/* The one-step-a-call helpers (fbf_test_begin, _submit, _complete,
 * _decide, _expect_alloc) are shared with test_policies: support/testkit.h. */

/* An engine of cfg on platform (NULL: none yet). */
static fbf_engine *mk_engine_cfg(const fbf_engine_config *cfg, const char *platform)
{
    fbf_error err;
    fbf_engine *e = fbf_engine_create(cfg, &err);
    assert_non_null(e);
    if (platform) {
        fbf_idset s;
        fbf_idset_init(&s);
        assert_int_equal(fbf_idset_parse(&s, platform, &err), 0);
        assert_int_equal(fbf_engine_set_platform(e, &s, &err), 0);
        fbf_idset_fini(&s);
    }
    return e;
}

static fbf_engine *mk_engine(const char *policy, unsigned workers, const char *platform)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    assert_non_null(pe);
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                             .workers = workers};
    return mk_engine_cfg(&cfg, platform);
}

static fbf_job_state state_of(fbf_engine *e, const char *id)
{
    fbf_job_h h = fbf_engine_find(e, id);
    assert_int_not_equal(h, FBF_JOB_NONE);
    return fbf_engine_job_state(e, h);
}

/* ---- engine errors ------------------------------------------------------------- */

static void test_engine_errors(void **state)
{
    (void)state;
    fbf_error err;
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    assert_null(fbf_policy_lookup("nope"));
#define C(p, d, w, k, m) {p, d, w, k, m, NULL, NULL, FBF_ESTIMATE_WALLTIME, NULL}
    fbf_engine_config bad[] = {
        C(NULL, 1, 1, 0, 0),        C(pe->ops, 1, 0, 0, 0),     C(pe->ops, 0, 1, 0, 0),
        C(pe->ops, 1, 257, 0, 0),   C(pe->ops, 1, 1, -1, 0),    C(pe->ops, 1, 1, NAN, 0),
        C(pe->ops, 1, 1, INFINITY, 0), C(pe->ops, 1, 1, 0, -1), C(pe->ops, 1, 1, 0, NAN),
        C(pe->ops, 1, 1, 0, INFINITY),
        {pe->ops, 1, 1, 0, 0, NULL, NULL, (fbf_estimate)3, NULL}};
#undef C
    for (int k = 0; k < 11; k++)
        assert_null(fbf_engine_create(&bad[k], &err));
    fbf_engine_destroy(NULL);
    fbf_engine *e = mk_engine("fcfs", 2, NULL);
    assert_false(fbf_engine_has_platform(e));
    fbf_test_begin(e, 0);
    assert_int_equal(fbf_engine_submit(e, "a", 0, 1, 10, &err), -EINVAL); /* no platform */
    fbf_idset s;
    fbf_idset_init(&s);
    assert_int_equal(fbf_engine_set_platform(e, &s, &err), -EINVAL); /* empty */
    assert_int_equal(fbf_idset_parse(&s, "0-3", &err), 0);
    assert_int_equal(fbf_engine_set_platform(e, &s, &err), 0);
    assert_int_equal(fbf_engine_set_platform(e, &s, &err), -EINVAL); /* twice */
    fbf_idset_fini(&s);
    assert_true(fbf_engine_has_platform(e));
    assert_int_equal(fbf_engine_nb_compute(e), 4);
    assert_int_equal(fbf_engine_nb_free(e), 4);

    fbf_test_begin(e, 5);
    assert_int_equal(fbf_engine_begin(e, 4, &err), -EINVAL); /* backwards */
    assert_int_equal(fbf_engine_begin(e, NAN, &err), -EINVAL);
    assert_true(fbf_engine_now(e) == 5);
    fbf_test_begin(e, 5); /* the same time again is fine */
    fbf_test_submit(e, "a", 1, 10);
    assert_int_equal(fbf_engine_submit(e, "a", 5, 1, 10, &err), -EEXIST);
    fbf_test_submit(e, "w", 4, 10);
    assert_int_equal(fbf_engine_submit(e, "x", 5, 1, NAN, &err), -EINVAL);
    assert_int_equal(fbf_engine_submit(e, "y", NAN, 1, 1, &err), -EINVAL);
    assert_int_equal(fbf_engine_complete(e, "nope", &err), -ENOENT);
    assert_int_equal(fbf_engine_complete(e, "w", &err), -EINVAL); /* waiting */
    fbf_test_decide(e, "E:a");
    assert_int_equal(fbf_engine_nb_waiting(e), 1);
    assert_int_equal(fbf_engine_nb_running(e), 1);
    assert_int_equal(fbf_engine_nb_free(e), 3);
    assert_int_equal(state_of(e, "w"), FBF_JOB_WAITING);
    assert_int_equal(fbf_engine_complete(e, "w", &err), -EINVAL);

    fbf_test_begin(e, 6);
    fbf_test_complete(e, "a");
    assert_int_equal(fbf_engine_complete(e, "a", &err), -EINVAL); /* twice */
    assert_int_equal(fbf_engine_submit(e, "a", 6, 1, 10, &err), -EEXIST);
    fbf_test_submit(e, "r", 0, 10);
    assert_int_equal(fbf_engine_complete(e, "r", &err), -EINVAL); /* rejected */
    fbf_test_decide(e, "R:r E:w");
    assert_int_equal(state_of(e, "a"), FBF_JOB_DONE);
    assert_int_equal(state_of(e, "r"), FBF_JOB_REJECTED);
    assert_true(isnan(fbf_engine_job_start(e, fbf_engine_find(e, "r"))));
    assert_true(fbf_engine_job_start(e, fbf_engine_find(e, "w")) == 6);
    fbf_test_begin(e, 7);
    fbf_test_decide(e, ""); /* nothing to decide: an empty reply */
    fbf_engine_destroy(e);
}

/* D2 (rejections in arrival order, before the starts; walltime < 0 only
 * under the backfilling policies) and D0's first two groups. */
static void test_rejections(void **state)
{
    (void)state;
    static const char *const pol[] = {"fcfs", "easy", "conservative"};
    static const char *const want[] = {
        "R:r0 R:big R:rm R:huge E:ok1 E:neg E:ok2",
        "R:r0 R:big R:neg R:rm R:huge E:ok1 E:ok2",
        "R:r0 R:big R:neg R:rm R:huge E:ok1 E:ok2",
    };
    for (int p = 0; p < 3; p++) {
        fbf_engine *e = mk_engine(pol[p], 3, "0-3");
        fbf_test_begin(e, 0);
        fbf_test_submit(e, "ok1", 1, 10);
        fbf_test_submit(e, "r0", 0, 10);
        fbf_test_submit(e, "big", 5, 10);
        fbf_test_submit(e, "neg", 2, -1);
        fbf_test_submit(e, "rm", -3, 10);
        fbf_test_submit(e, "huge", (int64_t)1 << 32 | 1, 10); /* not truncated to 1 */
        fbf_test_submit(e, "ok2", 1, 5);
        fbf_test_decide(e, want[p]);
        assert_int_equal(state_of(e, "big"), FBF_JOB_REJECTED);
        assert_int_equal(state_of(e, "neg"), p ? FBF_JOB_REJECTED : FBF_JOB_RUNNING);
        assert_int_equal(fbf_engine_nb_waiting(e), 0);
        assert_int_equal(fbf_engine_nb_free(e), p ? 2 : 0);
        fbf_test_begin(e, 1);
        fbf_test_decide(e, ""); /* rejections belong to the message that submitted them */
        fbf_engine_destroy(e);
    }
}

/* A policy for D0: it records a call before and after starting jobs (the
 * last wins); the engine must still reply REJECT, EXECUTE, CALL_ME_LATER.
 * With depth 2 it starts the head even if it does not fit (-EPROTO). */
static int t_create(fbf_sched *s, int64_t depth, void **st, fbf_error *err)
{
    *st = (void *)(intptr_t)depth;
    return 0;
}

static void t_destroy(void *st) { (void)st; }

static int t_decide(void *st, fbf_sched *s, fbf_error *err)
{
    fbf_sched_call_me_later(s, fbf_sched_now(s) + 7);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        if ((intptr_t)st == 1 && fbf_sched_job(s, h)->res > fbf_sched_free(s))
            continue;
        int rc = fbf_sched_start(s, h, FBF_START_HEAD, err);
        if (rc < 0)
            return rc;
    }
    fbf_sched_call_me_later(s, fbf_sched_now(s) + 9);
    return 0;
}

static int t_estimate(void *st, fbf_sched *s, uint32_t res, double walltime, double *start,
                      fbf_error *err)
{
    *start = NAN;
    return 0;
}

static const fbf_policy_ops test_ops = {
    .name = "test", .needs_walltime = true, .create = t_create, .destroy = t_destroy,
    .decide = t_decide, .estimate = t_estimate};

/* kill_after: each job is killed kill_after seconds after it started, in
 * start order; the engine asks to be woken for the next kill; the job's
 * resources stay busy until the kill is reported, and a kill frees them
 * like an early completion (conservative compresses its reservations). */
static void test_kill_after(void **state)
{
    (void)state;
    const fbf_policy_entry *pe = fbf_policy_lookup("conservative");
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                             .workers = 2, .kill_after = 5};
    fbf_engine *e = mk_engine_cfg(&cfg, "0-3");

    fbf_test_begin(e, 0);
    fbf_test_submit(e, "a", 4, 100);
    fbf_test_submit(e, "b", 2, 10); /* reserved at 100 behind a */
    fbf_test_decide(e, "E:a C:5");
    assert_true(fbf_engine_job_reservation(e, fbf_engine_find(e, "b")) == 100);
    fbf_test_begin(e, 3); /* woken early: nothing due yet */
    fbf_test_decide(e, "C:5");
    fbf_test_begin(e, 5);
    fbf_test_decide(e, "K:a"); /* a is killed, but still holds its resources */
    assert_int_equal(fbf_engine_nb_free(e), 0);
    fbf_test_begin(e, 5);
    fbf_test_decide(e, ""); /* never killed twice */
    fbf_test_begin(e, 5);
    fbf_test_complete(e, "a"); /* JOB_KILLED */
    fbf_test_decide(e, "E:b C:10"); /* compression moved b from 100 to now */
    fbf_test_begin(e, 7);
    fbf_test_complete(e, "b"); /* b ended on its own before its kill */
    fbf_test_decide(e, "");
    fbf_engine_destroy(e);
}

/* max_wait: jobs waiting that long after their subtime are given up
 * before the pass, in queue order, a call covers the next one, and a
 * reservation given up is released and compressed away (D7 a). */
static void give_up(const char *policy, bool plain, const char *at0, const char *at20,
                    const char *at30)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_backfill_tuning tune = fbf_backfill_tuning_defaults();
    tune.plain = plain;
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                             .workers = 2, .max_wait = 30, .policy_options = &tune};
    fbf_engine *e = mk_engine_cfg(&cfg, "0-3");

    fbf_test_begin(e, 0);
    fbf_test_submit(e, "a", 4, 100);
    fbf_test_submit(e, "b", 2, 10);
    fbf_test_submit(e, "c", 1, 50);
    fbf_test_decide(e, at0);
    fbf_test_begin(e, 20);
    fbf_test_submit(e, "d", 4, 10);
    fbf_test_decide(e, at20);
    if (strcmp(policy, "conservative") == 0)
        assert_true(fbf_engine_job_reservation(e, fbf_engine_find(e, "d")) == 150);
    fbf_test_begin(e, 30);
    fbf_test_decide(e, at30);
    assert_int_equal(state_of(e, "b"), FBF_JOB_REJECTED);
    assert_int_equal(state_of(e, "c"), FBF_JOB_REJECTED);
    assert_int_equal(fbf_engine_nb_waiting(e), 1);
    if (strcmp(policy, "conservative") == 0) /* b's and c's reservations are gone */
        assert_true(fbf_engine_job_reservation(e, fbf_engine_find(e, "d")) == 100);
    fbf_test_begin(e, 50);
    fbf_test_decide(e, "G:d");
    assert_int_equal(fbf_engine_nb_waiting(e), 0);
    fbf_test_begin(e, 60);
    fbf_test_complete(e, "a");
    fbf_test_decide(e, "");
    assert_int_equal(fbf_engine_nb_free(e), 4);
    fbf_engine_destroy(e);
}

static void test_max_wait(void **state)
{
    (void)state;
    give_up("fcfs", false, "E:a C:30", "C:30", "G:b G:c C:50");
    give_up("easy", false, "E:a C:30", "C:30", "G:b G:c C:50");
    /* conservative: b and c reserved at 100, d behind them at 150; the
     * same calls (no running job ends before the give-ups). */
    give_up("conservative", false, "E:a C:30", "C:30", "G:b G:c C:50");
    /* the plain passes agree */
    give_up("easy", true, "E:a C:30", "C:30", "G:b G:c C:50");
    give_up("conservative", true, "E:a C:30", "C:30", "G:b G:c C:50");
}

static void test_reply_order(void **state)
{
    (void)state;
    fbf_error err;
    fbf_engine_config cfg = {.policy = &test_ops, .reservation_depth = 1, .workers = 2};
    fbf_engine *e = fbf_engine_create(&cfg, &err);
    assert_non_null(e);
    fbf_idset s;
    fbf_idset_init(&s);
    assert_int_equal(fbf_idset_parse(&s, "0-3", &err), 0);
    assert_int_equal(fbf_engine_set_platform(e, &s, &err), 0);
    fbf_test_begin(e, 1);
    fbf_test_submit(e, "a", 3, 1);
    fbf_test_submit(e, "r1", 0, 1);
    fbf_test_submit(e, "b", 2, 1); /* does not fit after a */
    fbf_test_submit(e, "c", 1, 1);
    fbf_test_submit(e, "r2", 1, -1);
    fbf_test_decide(e, "R:r1 R:r2 E:a E:c C:10");
    fbf_test_begin(e, 2);
    fbf_test_complete(e, "a");
    fbf_test_decide(e, "E:b C:11");
    fbf_engine_destroy(e);

    cfg.reservation_depth = 2; /* a policy that over-commits is refused */
    e = fbf_engine_create(&cfg, &err);
    assert_non_null(e);
    assert_int_equal(fbf_engine_set_platform(e, &s, &err), 0);
    fbf_idset_fini(&s);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "a", 3, 1);
    fbf_test_submit(e, "b", 2, 1);
    assert_int_equal(fbf_engine_decide(e, &err), -EPROTO);
    fbf_engine_destroy(e);
}

/* ---- D3 ---------------------------------------------------------------------- */

static void test_lowest_resources(void **state)
{
    (void)state;
    fbf_engine *e = mk_engine("fcfs", 2, "0-7");
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "a", 2, 10);
    fbf_test_submit(e, "b", 1, 10);
    fbf_test_submit(e, "c", 2, 10);
    fbf_test_submit(e, "d", 3, 10);
    fbf_test_decide(e, "E:a E:b E:c E:d");
    fbf_test_expect_alloc(e, "a", "0-1");
    fbf_test_expect_alloc(e, "b", "2");
    fbf_test_expect_alloc(e, "c", "3-4");
    fbf_test_expect_alloc(e, "d", "5-7");
    fbf_test_begin(e, 1);
    fbf_test_complete(e, "c");
    fbf_test_complete(e, "a");
    fbf_test_submit(e, "e", 3, 10); /* free: 0-1 3-4 */
    fbf_test_submit(e, "f", 1, 10);
    fbf_test_decide(e, "E:e E:f");
    fbf_test_expect_alloc(e, "e", "0-1 3");
    fbf_test_expect_alloc(e, "f", "4");
    assert_int_equal(fbf_engine_nb_free(e), 0);
    fbf_test_begin(e, 2);
    fbf_test_complete(e, "d");
    fbf_test_complete(e, "b");
    fbf_test_submit(e, "g", 4, 10); /* free: 2 5-7 */
    fbf_test_decide(e, "E:g");
    fbf_test_expect_alloc(e, "g", "2 5-7");
    fbf_engine_destroy(e);

    e = mk_engine("easy", 3, "0-1 5-6");
    assert_int_equal(fbf_engine_nb_compute(e), 4);
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "g", 3, 10);
    fbf_test_submit(e, "h", 1, 10);
    fbf_test_submit(e, "x", 5, 10); /* more than the 4 compute resources */
    fbf_test_decide(e, "R:x E:g E:h");
    fbf_test_expect_alloc(e, "g", "0-1 5");
    fbf_test_expect_alloc(e, "h", "6");
    fbf_test_begin(e, 10);
    fbf_test_complete(e, "g");
    fbf_test_submit(e, "i", 2, 1);
    fbf_test_submit(e, "j", 1, 1);
    fbf_test_decide(e, "E:i E:j");
    fbf_test_expect_alloc(e, "i", "0-1");
    fbf_test_expect_alloc(e, "j", "5");
    fbf_engine_destroy(e);
}

/* More submissions in one message than a worker's ring holds (65536),
 * pairs swapped in subtime: the queue still follows D1. */
static void test_many_submissions(void **state)
{
    (void)state;
    enum { N = 140000 };
    fbf_engine *e = mk_engine("fcfs", 2, "0");
    char id[32];
    fbf_test_begin(e, 0);
    for (int i = 0; i < N; i++) {
        snprintf(id, sizeof id, "j%d", i);
        assert_int_equal(fbf_engine_submit(e, id, i ^ 1, 1, 1, NULL), 0);
    }
    fbf_test_decide(e, "E:j1");
    assert_int_equal(fbf_engine_nb_waiting(e), N - 1);
    static const char *const seq[] = {"j1", "j0", "j3", "j2", "j5"};
    for (int i = 1; i < 5; i++) {
        char want[32];
        fbf_test_begin(e, i);
        fbf_test_complete(e, seq[i - 1]);
        snprintf(want, sizeof want, "E:%s", seq[i]);
        fbf_test_decide(e, want);
    }
    fbf_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_jobs_add_find),
        cmocka_unit_test(test_engine_errors),
        cmocka_unit_test(test_rejections),
        cmocka_unit_test(test_reply_order),
        cmocka_unit_test(test_kill_after),
        cmocka_unit_test(test_max_wait),
        cmocka_unit_test(test_lowest_resources),
        cmocka_unit_test(test_many_submissions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
