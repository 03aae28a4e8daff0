/*
 * test_estimates: the estimates of scheduling-semantics.md D10 on
 * hand-made cases, and what carries them in: predict's correction under
 * EASY and its repair under conservative (start times worked out by hand,
 * checked on the engine and on the reference), the kill that does not
 * count, exact's forwarded delay and the user and priority of a Batsim v4
 * JOB_SUBMITTED, the members of a job description, and the user that
 * fastbf-replay's workloads give each job.
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
#include "io/bv4_session.h"
#include "io/job_json.h"
#include "policies/orders/registry.h"
#include "policies/registry.h"
#include "support/bv4_kit.h"
#include "support/engine_sim.h"
#include "support/ref_sched.h"
#include "support/testkit.h"
#include "tools/lib/workload.h"

static const uint32_t ids[] = {0, 1, 2, 3};

#define J(a, r, w, rt, u) {.arrival = (a), .subtime = (a), .res = (r), .walltime = (w), \
                           .runtime = (rt), .user = (u)}

/* Every job's start must be `starts`, for the reference and for the
 * engine under 1 and 3 workers. */
static void check(const char *policy, ref_policy rp, ref_estimate est, uint32_t nb,
                  const ref_job *jobs, size_t n, const double *starts)
{
    ref_result out[16];
    ref_trace tr = {0};
    char err[512];
    ref_options o = {.policy = rp, .estimate = est};
    assert_int_equal(ref_simulate_opts(&o, ids, nb, jobs, n, out, &tr, err, sizeof err), 0);
    ref_trace_fini(&tr);
    for (size_t i = 0; i < n; i++)
        if (out[i].start != starts[i])
            fail_msg("reference %s/%s: job %zu at %g, expected %g", policy,
                     ref_estimate_names[est], i, out[i].start, starts[i]);
    fbf_test_sim_config c = {policy, 0, 1, NULL, NULL, ref_estimate_names[est], NULL};
    for (c.workers = 1; c.workers <= 3; c.workers += 2) {
        tr = (ref_trace){0};
        if (fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, out, &tr, NULL, NULL, NULL, err,
                                 sizeof err) < 0)
            fail_msg("%s", err);
        ref_trace_fini(&tr);
        for (size_t i = 0; i < n; i++)
            if (out[i].start != starts[i])
                fail_msg("%s/%s, %u workers: job %zu at %g, expected %g", policy, c.estimate,
                         c.workers, i, out[i].start, starts[i]);
    }
}

/* EASY, 3 resources. User 1's j0 and j1 run 10 and 20 s: j2 (res 2, wall
 * 100, runs 40) starts at 30 predicted to end at 30 + 15 = 45. j3 (res 3)
 * heads the queue from 31: shadow 45, extra 0, so j4 (res 1, wall 30)
 * cannot backfill at 31 (ends 61 > 45). At 50 (j5 arrives) j2 has outlived
 * its prediction: its estimate is its walltime again, shadow 130, and j4
 * backfills (80 <= 130). At 70 j2 ends; j3 needs 3, j4 holds one until
 * 80: shadow 80, j5 (5 s) backfills at 70. j3 at 80.
 * With walltimes: j4 backfills at 31 (61 <= 130), j5 at 61, j3 at 70. */
static const ref_job easy_wl[] = {J(0, 1, 100, 10, 1), J(0, 1, 100, 20, 1),
                                  J(30, 2, 100, 40, 1), J(31, 3, 100, 5, 2),
                                  J(31, 1, 30, 30, 3),  J(50, 1, 5, 5, 3)};

static void test_predict_correction(void **state)
{
    (void)state;
    static const double predict[] = {0, 0, 30, 80, 50, 70}, wall[] = {0, 0, 30, 70, 31, 61};
    check("easy", REF_EASY, REF_PREDICT, 3, easy_wl, 6, predict);
    check("easy", REF_EASY, REF_WALLTIME, 3, easy_wl, 6, wall);
}

/* Conservative, 2 resources. User 1's j0, j1 run 10 s each; j2 (res 2,
 * wall 100, runs 50) starts at 20 predicted to end at 30. j3 (res 2, wall
 * 10) is reserved at 30, j4 (res 1, wall 5) at 40. At 35 (j5 arrives) j2
 * has outlived its prediction: it holds both resources until 120; D10's
 * repair moves j3, whose reservation has passed, to 120, and j4, which no
 * longer fits at 40, to 130; j5 (res 1, wall 100) goes beside j4 at 130.
 * At 70 j2 ends: compression brings j3 to 70 (it starts), j4 and j5 to 80. */
static const ref_job cons_wl[] = {J(0, 1, 100, 10, 1), J(0, 1, 100, 10, 1),
                                  J(20, 2, 100, 50, 1), J(21, 2, 10, 10, 2),
                                  J(22, 1, 5, 5, 2),    J(35, 1, 100, 1, 3)};

/* After the decision point at 35, the reservations D10's repair made. */
static void repaired_at_35(void *ctx, fbf_engine *e, double now)
{
    static const char *const id[] = {"w0!3", "w0!4", "w0!5"};
    static const double want[] = {120, 130, 130};
    if (now != 35)
        return;
    for (int k = 0; k < 3; k++) {
        double got = fbf_engine_job_reservation(e, fbf_engine_find(e, id[k]));
        if (got != want[k])
            fail_msg("%s reserved at %g after 35, expected %g", id[k], got, want[k]);
    }
    ++*(int *)ctx;
}

static void test_predict_repair(void **state)
{
    (void)state;
    static const double predict[] = {0, 0, 20, 70, 80, 80};
    check("conservative", REF_CONSERVATIVE, REF_PREDICT, 2, cons_wl, 6, predict);
    fbf_test_sim_config c = {"conservative", 0, 2, NULL, NULL, "predict", NULL};
    ref_result out[6];
    ref_trace tr = {0};
    char err[256];
    int seen = 0;
    assert_int_equal(fbf_test_sim_run_cfg(&c, ids, 2, cons_wl, 6, out, &tr, repaired_at_35, &seen,
                                          NULL, err, sizeof err),
                     0);
    ref_trace_fini(&tr);
    assert_int_equal(seen, 1);
}

/* The estimates of predict, on the engine by hand: a user's last two
 * completions (JOB_COMPLETED's time minus the start), at most the
 * walltime; a kill without completion does not count. */
static void test_predict_history(void **state)
{
    (void)state;
    const fbf_policy_entry *pe = fbf_policy_lookup("fcfs");
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = 1, .workers = 1,
                             .estimate = FBF_ESTIMATE_PREDICT};
    fbf_error err;
    fbf_engine *e = fbf_engine_create(&cfg, &err);
    assert_non_null(e);
    fbf_idset all;
    fbf_idset_init(&all);
    assert_int_equal(fbf_idset_add_range(&all, 0, 7), 0);
    assert_int_equal(fbf_engine_set_platform(e, &all, &err), 0);
    fbf_idset_fini(&all);
    const char *ids3[] = {"a", "b", "c"};
    fbf_test_begin(e, 0);
    for (int i = 0; i < 3; i++) {
        fbf_submission s = {ids3[i], 0, 1, 100, 0, "\"u\"", NAN};
        assert_int_equal(fbf_engine_submit_job(e, &s, &err), 0);
    }
    fbf_test_decide(e, "E:a E:b E:c");
    fbf_test_begin(e, 6);
    assert_int_equal(fbf_engine_end_job(e, fbf_engine_find(e, "a"), 4, false, &err), 0);
    assert_int_equal(fbf_engine_end_job(e, fbf_engine_find(e, "b"), 6, true, &err), 0);
    fbf_submission d = {"d", 6, 1, 100, 0, "\"u\"", NAN};
    assert_int_equal(fbf_engine_submit_job(e, &d, &err), 0);
    /* One completion counted (4 s): the walltime. */
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "d")) == 100);
    fbf_test_decide(e, "E:d");
    fbf_test_begin(e, 10);
    assert_int_equal(fbf_engine_end_job(e, fbf_engine_find(e, "c"), 9, false, &err), 0);
    fbf_submission f = {"f", 10, 1, 100, 0, "\"u\"", NAN}, g = {"g", 10, 1, 5, 0, "\"u\"", NAN},
                   h = {"h", 10, 1, 100, 0, "\"v\"", NAN}, k = {"k", 10, 1, 100, 0, NULL, NAN};
    assert_int_equal(fbf_engine_submit_job(e, &f, &err), 0);
    assert_int_equal(fbf_engine_submit_job(e, &g, &err), 0);
    assert_int_equal(fbf_engine_submit_job(e, &h, &err), 0);
    assert_int_equal(fbf_engine_submit_job(e, &k, &err), 0);
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "f")) == (4.0 + 9.0) / 2);
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "g")) == 5); /* its walltime */
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "h")) == 100); /* another user */
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "k")) == 100); /* anonymous */
    /* The correction: d (started at 6, predicted 100, its walltime) keeps
     * it; f starts at 10 predicted 6.5 and gets 100 back once outlived. */
    fbf_test_decide(e, "E:f E:g E:h E:k");
    fbf_test_begin(e, 16.5);
    fbf_test_decide(e, "");
    assert_true(fbf_engine_job_estimate(e, fbf_engine_find(e, "f")) == 100);
    fbf_engine_destroy(e);
}

/* ---- through Batsim v4 ------------------------------------------------ */

static fbf_bv4_session *session(const char *policy, const char *order, fbf_estimate est)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_bv4_options o = {.engine = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                                    .workers = 2, .estimate = est}};
    if (order)
        o.engine.order = fbf_order_lookup(order);
    fbf_error err;
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("%s", err.text);
    return s;
}

static double reservation(fbf_bv4_session *s, const char *id)
{
    fbf_engine *e = fbf_bv4_session_engine(s);
    return fbf_engine_job_reservation(e, fbf_engine_find(e, id));
}

/* A JOB_SUBMITTED of job w0!<name> (res, walltime) at time 0, with extra
 * members in its description and its data (JSON fragments, may be ""). */
static const char *submitted(const char *name, int res, double wall, const char *job_extra,
                             const char *data_extra)
{
    return fbf_test_msg("{'timestamp':0,'type':'JOB_SUBMITTED','data':{'job_id':'w0!%s',"
                        "'job':{'id':'w0!%s','subtime':0,'res':%d,'walltime':%g,"
                        "'profile':'p'%s}%s}}",
                        name, name, res, wall, job_extra, data_extra);
}

/* exact: the forwarded delay profile's delay; another profile type or
 * none: the walltime. 2 resources, conservative: a (res 2, wall 100,
 * delay 10) runs; b (delay 5) and c (another profile) are reserved beside
 * each other at a's estimated end, d (no profile) after b's: at 10 and 15
 * with exact, 100 and 150 with walltimes (b then plans its 50 s). */
static void test_exact_over_v4(void **state)
{
    (void)state;
    for (int exact = 0; exact < 2; exact++) {
        fbf_bv4_session *s =
            session("conservative", NULL, exact ? FBF_ESTIMATE_EXACT : FBF_ESTIMATE_WALLTIME);
        fbf_test_bv4_ok(s, fbf_test_bv4_begins(2, "'profiles-forwarded-on-submission':true"), "");
        const char *msg = fbf_test_msg(
            "{'now':0,'events':[%s,%s,%s,%s]}",
            submitted("a", 2, 100, "", ",'profile':{'type':'delay','delay':10}"),
            submitted("b", 1, 50, "", ",'profile':{'type':'delay','delay':5}"),
            submitted("c", 1, 50, "", ",'profile':{'type':'parallel_homogeneous','cpu':1e9}"),
            submitted("d", 1, 50, "", ""));
        fbf_test_bv4_ok(s, msg, "EXECUTE_JOB w0!a 0-1");
        double at = exact ? 10 : 100;
        assert_true(reservation(s, "w0!b") == at);
        assert_true(reservation(s, "w0!c") == at);
        assert_true(reservation(s, "w0!d") == (exact ? 15 : 150));
        fbf_bv4_session_destroy(s);
    }
}

/* priority and user from data.job: FCFS under the priority order on one
 * resource; a priority that is not a number counts as 0. */
static void test_priority_over_v4(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("fcfs", "priority", FBF_ESTIMATE_WALLTIME);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(1, ""), "");
    const char *msg = fbf_test_msg("{'now':0,'events':[%s,%s,%s,%s]}",
                                   submitted("r", 1, 10, "", ""),
                                   submitted("x", 1, 10, ",'priority':'high'", ""),
                                   submitted("y", 1, 10, ",'priority':2.5,'user':'u'", ""),
                                   submitted("z", 1, 10, ",'priority':-1", ""));
    fbf_test_bv4_ok(s, msg, "EXECUTE_JOB w0!y 0");
    fbf_test_bv4_ok(s, "{\"now\":10,\"events\":[{\"timestamp\":10,\"type\":\"JOB_COMPLETED\","
                       "\"data\":{\"job_id\":\"w0!y\",\"job_state\":\"COMPLETED_SUCCESSFULLY\"}}]}",
                    "EXECUTE_JOB w0!r 0");
    fbf_bv4_session_destroy(s);
}

/* predict over v4: users are equal when their JSON values are; the run
 * time is the JOB_COMPLETED's timestamp minus the start. */
static void test_users_over_v4(void **state)
{
    (void)state;
    fbf_bv4_session *s = session("fcfs", NULL, FBF_ESTIMATE_PREDICT);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(4, ""), "");
    fbf_test_bv4_ok(s,
                    fbf_test_msg("{'now':0,'events':[%s,%s,%s]}",
                                 submitted("a", 1, 100, ",'user':7", ""),
                                 submitted("b", 1, 100, ",'user':7.0", ""),
                                 submitted("c", 1, 100, ",'user':'7'", "")),
                    "EXECUTE_JOB w0!a 0|EXECUTE_JOB w0!b 1|EXECUTE_JOB w0!c 2");
    fbf_test_bv4_ok(
        s,
        "{\"now\":20,\"events\":["
        "{\"timestamp\":12,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!a\","
        "\"job_state\":\"COMPLETED_SUCCESSFULLY\"}},"
        "{\"timestamp\":20,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!b\","
        "\"job_state\":\"COMPLETED_SUCCESSFULLY\"}},"
        "{\"timestamp\":20,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!d\",\"job\":"
        "{\"id\":\"w0!d\",\"subtime\":20,\"res\":1,\"walltime\":100,\"profile\":\"p\","
        "\"user\":7}}},"
        "{\"timestamp\":20,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":\"w0!e\",\"job\":"
        "{\"id\":\"w0!e\",\"subtime\":20,\"res\":1,\"walltime\":100,\"profile\":\"p\","
        "\"user\":\"7\"}}}]}",
        "EXECUTE_JOB w0!d 0|EXECUTE_JOB w0!e 1");
    fbf_engine *e = fbf_bv4_session_engine(s);
    /* 7 and 7.0 are one user (12 and 20 s), "7" another (none done). */
    fbf_job_h d = fbf_engine_find(e, "w0!d"), x = fbf_engine_find(e, "w0!e");
    assert_true(fbf_engine_job_start(e, d) == 20);
    fbf_test_bv4_ok(s, "{\"now\":36,\"events\":[]}", "");
    /* d's prediction, 16 s, has passed: the correction gave it back its
     * walltime; e never had less. */
    assert_true(fbf_engine_job_estimate(e, d) == 100 && fbf_engine_job_estimate(e, x) == 100);
    fbf_bv4_session_destroy(s);
}

/* ---- descriptions and workloads ------------------------------------------ */

static fbf_job_desc read_desc(const char *text)
{
    cJSON *j = cJSON_Parse(text);
    assert_non_null(j);
    fbf_job_desc d;
    fbf_error err;
    assert_int_equal(fbf_job_json_read(j, "data.job", NULL, false, &d, &err), 0);
    static cJSON *keep[8];
    static int k;
    cJSON_Delete(keep[k % 8]);
    keep[k++ % 8] = j; /* d.user points into it */
    return d;
}

static void test_description_members(void **state)
{
    (void)state;
    fbf_job_desc d = read_desc("{\"res\":2,\"priority\":3.5,\"user\":\"alice\"}");
    assert_true(d.priority == 3.5 && isnan(d.delay) && d.walltime == -1);
    assert_string_equal(d.user->valuestring, "alice");
    d = read_desc("{\"res\":2,\"priority\":\"high\",\"user\":null}");
    assert_true(d.priority == 0 && d.user == NULL);
    d = read_desc("{\"res\":2,\"user\":{\"uid\":3},\"walltime\":5}");
    assert_true(d.priority == 0 && cJSON_IsObject(d.user) && d.walltime == 5);
    /* The first of a name counts, as before. */
    d = read_desc("{\"res\":2,\"priority\":1,\"priority\":2}");
    assert_true(d.priority == 1);
}

static void test_workload_users(void **state)
{
    (void)state;
    static const char swf[] =
        "; MaxProcs: 4\n"
        "1 0 -1 10 1 -1 -1 1 20 -1 1 7 1 -1 -1 -1 -1 -1\n"
        "2 5 -1 10 1 -1 -1 1 20 -1 1 -1 1 -1 -1 -1 -1 -1\n";
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    fbf_error err;
    fbf_workload *wl = fbf_workload_read(fbf_test_tmp_write("u.swf", swf), &o, &err);
    assert_non_null(wl);
    assert_string_equal(wl->jobs[0].extra, ",\"user\":7");
    assert_null(wl->jobs[1].extra);
    fbf_workload_destroy(wl);
    static const char json[] =
        "{\"nb_res\":4,\"jobs\":["
        "{\"id\":1,\"subtime\":0,\"res\":1,\"walltime\":20,\"profile\":\"d\",\"user\":\"bob\","
        "\"priority\":4},"
        "{\"id\":2,\"subtime\":0,\"res\":1,\"walltime\":20,\"profile\":\"d\",\"user\":null},"
        "{\"id\":3,\"subtime\":0,\"res\":1,\"walltime\":20,\"profile\":\"d\"}],"
        "\"profiles\":{\"d\":{\"type\":\"delay\",\"delay\":10}}}";
    wl = fbf_workload_read(fbf_test_tmp_write("u.json", json), &o, &err);
    assert_non_null(wl);
    assert_string_equal(wl->jobs[0].extra, ",\"user\":\"bob\",\"priority\":4");
    assert_null(wl->jobs[1].extra);
    assert_null(wl->jobs[2].extra);
    fbf_workload_destroy(wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict_correction),
        cmocka_unit_test(test_predict_repair),
        cmocka_unit_test(test_predict_history),
        cmocka_unit_test(test_exact_over_v4),
        cmocka_unit_test(test_priority_over_v4),
        cmocka_unit_test(test_users_over_v4),
        cmocka_unit_test(test_description_members),
        cmocka_unit_test(test_workload_users),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
