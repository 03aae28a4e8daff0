/*
 * test_bv4_register: fastbf's submitter mode (io/submitter.h) through
 * the transport-free session: which registration events each reply holds
 * with acknowledgements off and on, under both config forms, what each
 * REGISTER_PROFILE and REGISTER_JOB carries (every field Batsim parses),
 * the pause and continue_registration, a disabled Batsim and bad plans
 * refused, and the estimate_waiting_time answers about known jobs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/submitter.h"
#include "policies/registry.h"
#include "support/bv4_kit.h"
#include "support/testkit.h"

static const char FLAT_OFF[] = "'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':false";
static const char FLAT_ON[] = "'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':true";
static const char NESTED_OFF[] =
    "'redis':{'enabled':false},'job_submission':{'forward_profiles':false,"
    "'from_scheduler':{'enabled':true,'acknowledge':false}}";
static const char FLAT_REUSE[] = "'dynamic-jobs-enabled':true,'dynamic-jobs-acknowledged':false,"
                                 "'profile-reuse-enabled':true";
static const char NESTED_ON[] =
    "'redis':{'enabled':false},'job_submission':{'forward_profiles':true,"
    "'from_scheduler':{'enabled':true,'acknowledge':true}}";

/* dyn!1 and dyn!2 at 0 share profile p10; dyn!3 at 5 needs all 4. */
static const fbf_submitter_job plan[] = {
    {"dyn!1", 0, 2, 10, "p10", 10},
    {"dyn!2", 0, 1, 10, "p10", 10},
    {"dyn!3", 5, 4, 20, "p20", 20},
};

typedef struct fixture {
    fbf_submitter *reg;
    fbf_bv4_session *s;
} fixture;

static fixture make_killing(const char *policy, const fbf_submitter_job *jobs, size_t n,
                           double pause, double kill_after);

static fixture make(const char *policy, const fbf_submitter_job *jobs, size_t n, double pause)
{
    return make_killing(policy, jobs, n, pause, 0);
}

static fixture make_killing(const char *policy, const fbf_submitter_job *jobs, size_t n,
                           double pause, double kill_after)
{
    fbf_error err = {{0}};
    fbf_submitter_options ro = {.pause = pause};
    fixture f = {.reg = fbf_submitter_create(jobs, n, &ro, &err)};
    if (!f.reg)
        fail_msg("register_create: %s", err.text);
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops,
                   .reservation_depth = pe->default_depth,
                   .workers = 1,
                   .kill_after = kill_after},
        .submitter = f.reg,
    };
    f.s = fbf_bv4_session_create(&o, &err);
    if (!f.s)
        fail_msg("session_create: %s", err.text);
    return f;
}

static void done(fixture *f)
{
    fbf_bv4_session_destroy(f->s);
    fbf_submitter_destroy(f->reg);
}

/* Acks off: a registered job starts in the reply that registers it, after
 * its REGISTER_JOB; without profile reuse (Batsim's default) each job has
 * a profile of its own, registered just before it. */
static void check_acks_off(const char *config)
{
    fixture f = make("fcfs", plan, 3, 0);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, config),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_PROFILE|REGISTER_JOB dyn!2|"
                    "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2|CALL_ME_LATER 5");
    fbf_test_bv4_ok(f.s, "{\"now\":5,\"events\":[{\"timestamp\":5,\"type\":\"REQUESTED_CALL\","
                         "\"data\":{}}]}",
                    "REGISTER_PROFILE|REGISTER_JOB dyn!3|NOTIFY registration_finished");
    fbf_test_bv4_ok(f.s, fbf_test_msg("{'now':10,'events':["
                                      "{'timestamp':10,'type':'JOB_COMPLETED','data':{'job_id':"
                                      "'dyn!1','job_state':'COMPLETED_SUCCESSFULLY'}},"
                                      "{'timestamp':10,'type':'JOB_COMPLETED','data':{'job_id':"
                                      "'dyn!2','job_state':'COMPLETED_SUCCESSFULLY'}}]}"),
                    "EXECUTE_JOB dyn!3 0-3");
    assert_int_equal(fbf_submitter_nb_registered(f.reg), 3);
    assert_true(fbf_submitter_finished(f.reg));
    done(&f);
}

static void test_acks_off_flat(void **state)
{
    (void)state;
    check_acks_off(FLAT_OFF);
}

static void test_acks_off_nested(void **state)
{
    (void)state;
    check_acks_off(NESTED_OFF);
}

/* Acks on: nothing starts before Batsim's JOB_SUBMITTED. */
static void check_acks_on(const char *config)
{
    fixture f = make("fcfs", plan, 3, 0);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, config),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_PROFILE|REGISTER_JOB dyn!2|"
                    "CALL_ME_LATER 5");
    assert_int_equal(fbf_engine_nb_waiting(fbf_bv4_session_engine(f.s)), 0);
    fbf_test_bv4_ok(f.s, fbf_test_msg("{'now':0,'events':["
                                      "{'timestamp':0,'type':'JOB_SUBMITTED','data':{'job_id':"
                                      "'dyn!1','job':{'id':'dyn!1','subtime':0,'res':2,"
                                      "'walltime':10,'profile':'p10'},'profile':{'type':'delay',"
                                      "'delay':10}}},"
                                      "{'timestamp':0,'type':'JOB_SUBMITTED','data':{'job_id':"
                                      "'dyn!2','job':{'id':'dyn!2','subtime':0,'res':1,"
                                      "'walltime':10,'profile':'p10'}}}]}"),
                    "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2");
    done(&f);
}

static void test_acks_on_flat(void **state)
{
    (void)state;
    check_acks_on(FLAT_ON);
}

static void test_acks_on_nested(void **state)
{
    (void)state;
    check_acks_on(NESTED_ON);
}

static const char *call_at(double t)
{
    return fbf_test_msg("{'now':%.17g,'events':[{'timestamp':%.17g,'type':'REQUESTED_CALL',"
                        "'data':{}}]}", t, t);
}

/* A gap longer than the pause: finished during it, re-opened in a reply
 * before the next registration's (Batsim checks a REGISTER_JOB against
 * the state before its reply: a continue_registration beside it comes
 * too late), finished again after the last. */
static void test_pause_and_continue(void **state)
{
    (void)state;
    const fbf_submitter_job jobs[] = {{"dyn!a", 0, 1, 10, "p", 10}, {"dyn!b", 100, 1, 10, "p", 10}};
    fixture f = make("easy", jobs, 2, 50);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, FLAT_OFF),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!a|EXECUTE_JOB dyn!a 0|"
                    "NOTIFY registration_finished|CALL_ME_LATER 99|CALL_ME_LATER 100");
    fbf_test_bv4_ok(f.s, fbf_test_msg("{'now':10,'events':[{'timestamp':10,'type':"
                                      "'JOB_COMPLETED','data':{'job_id':'dyn!a','job_state':"
                                      "'COMPLETED_SUCCESSFULLY'}}]}"),
                    "");
    fbf_test_bv4_ok(f.s, call_at(99), "NOTIFY continue_registration");
    fbf_test_bv4_ok(f.s, call_at(100),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!b|EXECUTE_JOB dyn!b 0|"
                    "NOTIFY registration_finished");
    assert_int_equal(fbf_submitter_nb_continues(f.reg), 1);
    done(&f);
}

/* When the decision point before the job's does not come (here a call at
 * 100 first), registration re-opens at the job's and the job is
 * registered at the next decision point, asked for at once (now + 1 ms
 * + 20 us for the one event before the call: 100.00102). */
static void test_pause_reopened_late(void **state)
{
    (void)state;
    const fbf_submitter_job jobs[] = {{"dyn!a", 0, 1, 10, "p", 10}, {"dyn!b", 100, 1, 10, "p", 10}};
    fixture f = make("easy", jobs, 2, 50);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, FLAT_OFF),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!a|EXECUTE_JOB dyn!a 0|"
                    "NOTIFY registration_finished|CALL_ME_LATER 99|CALL_ME_LATER 100");
    fbf_test_bv4_ok(f.s, call_at(100), "NOTIFY continue_registration|CALL_ME_LATER 100.001");
    fbf_test_bv4_ok(f.s, call_at(100.00102),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!b|EXECUTE_JOB dyn!b 1|"
                    "NOTIFY registration_finished");
    assert_int_equal(fbf_submitter_nb_continues(f.reg), 1);
    done(&f);
}

/* With profile reuse, a profile shared by jobs is registered once, under
 * the plan's name; without, each job's is its own, <profile>@<name>. */
static void test_profile_names(void **state)
{
    (void)state;
    const char *cfg[] = {FLAT_REUSE, FLAT_OFF};
    const char *want[] = {"REGISTER_PROFILE p10|REGISTER_JOB dyn!1|REGISTER_JOB dyn!2",
                          "REGISTER_PROFILE p10@1|REGISTER_JOB dyn!1|REGISTER_PROFILE p10@2|"
                          "REGISTER_JOB dyn!2"};
    for (int k = 0; k < 2; k++) {
        fixture f = make("fcfs", plan, 3, 0);
        char *raw = fbf_test_bv4_exchange(f.s, fbf_test_bv4_begins(4, cfg[k]), 0, NULL, true);
        cJSON *reply = cJSON_Parse(raw);
        char got[256] = "";
        const cJSON *ev;
        cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, "events"))
        {
            const char *t = cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
            const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
            const cJSON *name = cJSON_GetObjectItemCaseSensitive(d, "profile_name");
            const cJSON *job = cJSON_GetObjectItemCaseSensitive(d, "job");
            if (strncmp(t, "REGISTER_", 9) != 0)
                continue;
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s %s", got[0] ? "|" : "",
                     t, name ? name->valuestring
                             : cJSON_GetObjectItemCaseSensitive(d, "job_id")->valuestring);
            /* the job names its own profile */
            if (job && k == 1)
                assert_non_null(strstr(cJSON_GetObjectItemCaseSensitive(job, "profile")
                                           ->valuestring, "p10@"));
        }
        assert_string_equal(got, want[k]);
        cJSON_Delete(reply);
        free(raw);
        done(&f);
    }
}

/* A short gap is no pause. */
static void test_short_gap_no_pause(void **state)
{
    (void)state;
    const fbf_submitter_job jobs[] = {{"dyn!a", 0, 1, 10, "p", 10}, {"dyn!b", 20, 1, 10, "p", 10}};
    fixture f = make("easy", jobs, 2, 50);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, FLAT_OFF),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!a|EXECUTE_JOB dyn!a 0|CALL_ME_LATER 20");
    done(&f);
}

/* Nothing to register: registration is finished in the first reply, and
 * only there (Batsim may then end the run). */
static void test_empty_plan(void **state)
{
    (void)state;
    fixture f = make("fcfs", NULL, 0, 10);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, FLAT_OFF), "NOTIFY registration_finished");
    fbf_test_bv4_ok(f.s, fbf_test_msg("{'now':3,'events':[{'timestamp':3,'type':'JOB_SUBMITTED',"
                                      "'data':{'job_id':'w0!1','job':{'id':'w0!1','res':1,"
                                      "'walltime':5}}}]}"),
                    "EXECUTE_JOB w0!1 0");
    assert_int_equal(fbf_submitter_nb_registered(f.reg), 0);
    assert_int_equal(fbf_submitter_nb_continues(f.reg), 0);
    assert_true(fbf_submitter_finished(f.reg));
    done(&f);
}

/* Batsim stops on a profile registered twice: with reuse, the ones
 * SIMULATION_BEGINS lists are not registered again, and one that differs
 * is refused; without, a job's own profile name that is taken is refused. */
static void test_known_profiles(void **state)
{
    (void)state;
    fixture f = make("fcfs", plan, 3, 0);
    const char *begins = fbf_test_msg(
        "{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
        "'nb_resources':4,'nb_compute_resources':4,'config':{%s},"
        "'profiles':{'w0':{'p20':{'type':'delay','delay':20}},"
        "'dyn':{'p10':{'type':'delay','delay':10}}}}}]}",
        FLAT_REUSE);
    fbf_test_bv4_ok(f.s, begins,
                    "REGISTER_JOB dyn!1|REGISTER_JOB dyn!2|"
                    "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2|CALL_ME_LATER 5");
    /* p20 exists in another workload only: dyn's own is registered. */
    fbf_test_bv4_ok(f.s, "{\"now\":5,\"events\":[{\"timestamp\":5,\"type\":\"REQUESTED_CALL\","
                         "\"data\":{}}]}",
                    "REGISTER_PROFILE|REGISTER_JOB dyn!3|NOTIFY registration_finished");
    done(&f);

    f = make("fcfs", plan, 3, 0);
    begins = fbf_test_msg("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
                          "'nb_resources':4,'nb_compute_resources':4,'config':{%s},"
                          "'profiles':{'dyn':{'p10':{'type':'delay','delay':11}}}}}]}",
                          FLAT_REUSE);
    const char *reply;
    size_t len;
    fbf_error err;
    assert_int_equal(fbf_bv4_session_handle(f.s, begins, strlen(begins), &reply, &len, &err),
                     -EINVAL);
    assert_string_equal(err.text,
                        "event 0 (SIMULATION_BEGINS): data.profiles.dyn.p10: Batsim already has "
                        "this profile, and it is not the delay 10 that job dyn!1 needs");
    done(&f);

    f = make("fcfs", plan, 3, 0);
    begins = fbf_test_msg("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
                          "'nb_resources':4,'nb_compute_resources':4,'config':{%s},"
                          "'profiles':{'dyn':{'p10@2':{'type':'delay','delay':10}}}}}]}",
                          FLAT_OFF);
    assert_int_equal(fbf_bv4_session_handle(f.s, begins, strlen(begins), &reply, &len, &err),
                     -EINVAL);
    assert_string_equal(err.text,
                        "event 0 (SIMULATION_BEGINS): data.profiles.dyn.p10@2: Batsim already "
                        "has a profile of the name fastbf would register for job dyn!2 (without "
                        "profile reuse each registered job gets a profile of its own, "
                        "<profile>@<job name>)");
    done(&f);
}

/* The kill deadline and the next registration fall at the same time:
 * one CALL_ME_LATER, not two. */
static void test_one_call_per_time(void **state)
{
    (void)state;
    fixture f = make_killing("fcfs", plan, 3, 0, 5);
    fbf_test_bv4_ok(f.s, fbf_test_bv4_begins(4, FLAT_REUSE),
                    "REGISTER_PROFILE|REGISTER_JOB dyn!1|REGISTER_JOB dyn!2|"
                    "EXECUTE_JOB dyn!1 0-1|EXECUTE_JOB dyn!2 2|CALL_ME_LATER 5");
    done(&f);
}

static void test_disabled_refused(void **state)
{
    (void)state;
    fixture f = make("fcfs", plan, 3, 0);
    const char *req = fbf_test_bv4_begins(4, "'dynamic-jobs-enabled':false");
    const char *reply;
    size_t len;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(f.s, req, strlen(req), &reply, &len, &err);
    assert_int_equal(rc, -ENOTSUP);
    assert_non_null(strstr(err.text, "dynamic jobs are disabled"));
    done(&f);
}

static void expect_bad_plan(const fbf_submitter_job *jobs, size_t n, double pause,
                            const char *want)
{
    fbf_error err = {{0}};
    fbf_submitter_options ro = {.pause = pause};
    fbf_submitter *r = fbf_submitter_create(jobs, n, &ro, &err);
    assert_null(r);
    if (!strstr(err.text, want))
        fail_msg("error \"%s\", expected \"%s\"", err.text, want);
}

static void test_bad_plans(void **state)
{
    (void)state;
    const fbf_submitter_job no_bang[] = {{"a", 0, 1, 10, "p", 10}};
    expect_bad_plan(no_bang, 1, 0, "not of the form workload!name");
    const fbf_submitter_job res0[] = {{"dyn!a", 0, 0, 10, "p", 10}};
    expect_bad_plan(res0, 1, 0, "res 0 is not in [1, 2147483647]");
    const fbf_submitter_job res_big[] = {{"dyn!a", 0, 1LL << 31, 10, "p", 10}};
    expect_bad_plan(res_big, 1, 0, "res 2147483648 is not in [1, 2147483647]");
    const fbf_submitter_job no_wl[] = {{"!a", 0, 1, 10, "p", 10}};
    expect_bad_plan(no_wl, 1, 0, "both parts non-empty");
    const fbf_submitter_job no_name[] = {{"dyn!", 0, 1, 10, "p", 10}};
    expect_bad_plan(no_name, 1, 0, "both parts non-empty");
    const fbf_submitter_job two_bangs[] = {{"dyn!a!b", 0, 1, 10, "p", 10}};
    expect_bad_plan(two_bangs, 1, 0, "one '!'");
    const fbf_submitter_job no_prof[] = {{"dyn!a", 0, 1, 10, "", 10}};
    expect_bad_plan(no_prof, 1, 0, "job dyn!a: empty profile name");
    /* Batsim refuses a second job under one id: found before the run. */
    const fbf_submitter_job twice[] = {{"dyn!a", 0, 1, 10, "p", 10},
                                     {"dyn!b", 3, 1, 10, "p", 10},
                                     {"dyn!a", 9, 1, 10, "p", 10}};
    expect_bad_plan(twice, 3, 0, "job id dyn!a appears twice");
    const fbf_submitter_job wall0[] = {{"dyn!a", 0, 1, 0, "p", 10}};
    expect_bad_plan(wall0, 1, 0, "walltime 0 is neither -1 nor > 0");
    const fbf_submitter_job two_delays[] = {{"dyn!a", 0, 1, 10, "p", 10},
                                          {"dyn!b", 0, 1, 10, "p", 20}};
    expect_bad_plan(two_delays, 2, 0, "share profile p with different delays");
    expect_bad_plan(plan, 3, -1, "registration pause");
}

/* The event of type and job (NULL: any) in a parsed reply, and how many
 * events of that type it holds. */
static const cJSON *event_of(const cJSON *reply, const char *type, const char *job, int *count)
{
    const cJSON *found = NULL;
    *count = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, "events"))
    {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "type");
        if (!cJSON_IsString(t) || strcmp(t->valuestring, type) != 0)
            continue;
        ++*count;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        if (!found && (!job || (cJSON_IsString(id) && strcmp(id->valuestring, job) == 0)))
            found = ev;
    }
    return found;
}

static double num(const cJSON *obj, const char *path1, const char *path2)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, path1);
    if (path2)
        v = cJSON_GetObjectItemCaseSensitive(v, path2);
    if (!cJSON_IsNumber(v))
        fail_msg("%s.%s is not a number", path1, path2 ? path2 : "");
    return v->valuedouble;
}

static const char *str(const cJSON *obj, const char *path1, const char *path2)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, path1);
    if (path2)
        v = cJSON_GetObjectItemCaseSensitive(v, path2);
    if (!cJSON_IsString(v))
        fail_msg("%s.%s is not a string", path1, path2 ? path2 : "");
    return v->valuestring;
}

/* What Batsim parses: a REGISTER_JOB's job holds id, subtime (the
 * registration time: Batsim stops on a job without one), res, walltime
 * and profile; a REGISTER_PROFILE names the job's whole workload, even a
 * long one. A job registered late (its subtime passed) says now. */
static void test_event_contents(void **state)
{
    (void)state;
    char wl[301];
    memset(wl, 'w', 300);
    wl[300] = '\0';
    char id[320];
    snprintf(id, sizeof id, "%s!late", wl);
    const fbf_submitter_job jobs[] = {{"dyn!1", 0, 3, -1, "p7", 7}, {id, 5, 2, 30, "q", 12.5}};
    fixture f = make("fcfs", jobs, 2, 0);
    char *raw = fbf_test_bv4_exchange(f.s, fbf_test_bv4_begins(4, FLAT_ON), 0,
                                      "REGISTER_PROFILE|REGISTER_JOB dyn!1|CALL_ME_LATER 5", true);
    cJSON *reply = cJSON_Parse(raw);
    int n;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(event_of(reply, "REGISTER_PROFILE", NULL,
                                                               &n), "data");
    assert_string_equal(str(p, "workload_name", NULL), "dyn");
    assert_string_equal(str(p, "profile_name", NULL), "p7@1");
    assert_string_equal(str(p, "profile", "type"), "delay");
    assert_true(num(p, "profile", "delay") == 7);
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(event_of(reply, "REGISTER_JOB", "dyn!1",
                                                               &n), "data");
    assert_string_equal(str(j, "job", "id"), "dyn!1");
    assert_true(num(j, "job", "subtime") == 0);
    assert_true(num(j, "job", "res") == 3);
    assert_true(num(j, "job", "walltime") == -1);
    assert_string_equal(str(j, "job", "profile"), "p7@1");
    cJSON_Delete(reply);
    free(raw);

    /* Called late, at 7: the job registered then is submitted at 7. */
    char want[400];
    snprintf(want, sizeof want, "REGISTER_PROFILE|REGISTER_JOB %s|NOTIFY registration_finished",
             id);
    raw = fbf_test_bv4_exchange(f.s, "{\"now\":7,\"events\":[{\"timestamp\":7,\"type\":"
                                     "\"REQUESTED_CALL\",\"data\":{}}]}",
                                0, want, true);
    reply = cJSON_Parse(raw);
    p = cJSON_GetObjectItemCaseSensitive(event_of(reply, "REGISTER_PROFILE", NULL, &n), "data");
    assert_int_equal(n, 1);
    assert_string_equal(str(p, "workload_name", NULL), wl);
    assert_true(num(p, "profile", "delay") == 12.5);
    j = cJSON_GetObjectItemCaseSensitive(event_of(reply, "REGISTER_JOB", id, &n), "data");
    assert_true(num(j, "job", "subtime") == 7);
    assert_true(num(j, "job", "walltime") == 30);
    cJSON_Delete(reply);
    free(raw);
    done(&f);
}

/* A known job is answered from the engine: a running one waits 0, a
 * waiting one until its reservation; an unknown id is a potential job. */
static void test_answers_about_known_jobs(void **state)
{
    (void)state;
    fbf_bv4_session *s = fbf_test_bv4_session("conservative", 1);
    fbf_test_bv4_ok(s, fbf_test_bv4_begins(4, ""), "");
    fbf_test_bv4_ok(s, fbf_test_msg("{'now':2,'events':["
                                    "{'timestamp':2,'type':'JOB_SUBMITTED','data':{'job_id':"
                                    "'w0!1','job':{'id':'w0!1','res':4,'walltime':10}}},"
                                    "{'timestamp':2,'type':'JOB_SUBMITTED','data':{'job_id':"
                                    "'w0!2','job':{'id':'w0!2','res':4,'walltime':10}}},"
                                    "{'timestamp':2,'type':'QUERY','data':{'requests':{"
                                    "'estimate_waiting_time':{'job_id':'w0!1','job':{'res':4,"
                                    "'walltime':10}}}}},"
                                    "{'timestamp':2,'type':'QUERY','data':{'requests':{"
                                    "'estimate_waiting_time':{'job_id':'w0!2','job':{'res':4,"
                                    "'walltime':10}}}}},"
                                    "{'timestamp':2,'type':'QUERY','data':{'requests':{"
                                    "'estimate_waiting_time':{'job_id':'x!potential','job':{"
                                    "'res':4,'walltime':10}}}}}]}"),
                    "EXECUTE_JOB w0!1 0-3|ANSWER w0!1 0|ANSWER w0!2 10|"
                    "ANSWER x!potential 20");
    fbf_bv4_session_destroy(s);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acks_off_flat),
        cmocka_unit_test(test_acks_off_nested),
        cmocka_unit_test(test_acks_on_flat),
        cmocka_unit_test(test_acks_on_nested),
        cmocka_unit_test(test_pause_and_continue),
        cmocka_unit_test(test_pause_reopened_late),
        cmocka_unit_test(test_profile_names),
        cmocka_unit_test(test_short_gap_no_pause),
        cmocka_unit_test(test_empty_plan),
        cmocka_unit_test(test_known_profiles),
        cmocka_unit_test(test_one_call_per_time),
        cmocka_unit_test(test_disabled_refused),
        cmocka_unit_test(test_bad_plans),
        cmocka_unit_test(test_event_contents),
        cmocka_unit_test(test_answers_about_known_jobs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
