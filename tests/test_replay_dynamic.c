/*
 * test_replay_dynamic: dynamic job registration and estimate_waiting_time
 * queries end to end, fastbf-replay playing Batsim and the real fastbf
 * process deciding over ZeroMQ, outcomes read back from out_jobs.csv and
 * summary.json.
 *
 *  - fastbf --register-workload registers a workload itself; with
 *    acknowledgements off, on, and with forwarded profiles, the schedule is
 *    the hand-computed one and the one the same jobs get when Batsim
 *    submits them (a static replay);
 *  - --register-pause declares registration finished during a long gap
 *    and re-opens it with continue_registration;
 *  - --query-wait under conservative with runtime == walltime: every
 *    prediction equals the actual start (reservations are exact then);
 *  - the replayer refuses malformed or untimely registrations and answers
 *    (scripted scheduler of support/), with exit code 2 and a precise
 *    message; registration left open with nothing to do is a deadlock.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"

#define TIMEOUT_MS 120000
#define START 8     /* out_jobs.csv columns */
#define RUNTIME 9
#define WAIT 11
#define PREDICTED 17

/* 4 resources. Hand-computed conservative schedule: 1 starts at 0 on 2
 * resources; 2 needs all 4: reserved at 10; 3 arrives at 3, 2 resources
 * for 10 s, but [3, 10) is too short: after 2, at 15; 4 at 100, alone. */
static const char plan_json[] =
    "{\"nb_res\": 4, \"jobs\": ["
    "{\"id\": \"1\", \"subtime\": 0, \"res\": 2, \"walltime\": 10, \"profile\": \"d10\"},"
    "{\"id\": \"2\", \"subtime\": 0, \"res\": 4, \"walltime\": 5, \"profile\": \"d5\"},"
    "{\"id\": \"3\", \"subtime\": 3, \"res\": 2, \"walltime\": 10, \"profile\": \"d10\"},"
    "{\"id\": \"4\", \"subtime\": 100, \"res\": 1, \"walltime\": 10, \"profile\": \"d10\"}],"
    "\"profiles\": {\"d10\": {\"type\": \"delay\", \"delay\": 10},"
    "\"d5\": {\"type\": \"delay\", \"delay\": 5}}}";
static const char empty_json[] = "{\"nb_res\": 4, \"jobs\": [], \"profiles\": {}}";
static const double plan_starts[] = {0, 10, 15, 100};

/* runtime == walltime everywhere, so conservative's reservations hold. */
static const char exact_swf[] = "; MaxProcs: 8\n"
                                "1 0 -1 40 4 -1 -1 4 40 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 0 -1 30 8 -1 -1 8 30 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 5 -1 20 2 -1 -1 2 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "4 5 -1 100 6 -1 -1 6 100 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "5 12 -1 10 4 -1 -1 4 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "6 50 -1 25 2 -1 -1 2 25 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "7 60 -1 15 8 -1 -1 8 15 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

/* Runs fastbf-replay with args then the workload; returns the exit code,
 * stderr in *err (caller frees). */
static int replay(const char *const *args, const char *wl, char **err)
{
    const char *argv[16];
    int n = 0;
    for (; args[n]; n++)
        argv[n] = args[n];
    argv[n++] = "--timeout";
    argv[n++] = "20";
    argv[n++] = wl;
    argv[n] = NULL;
    char *so = NULL;
    int rc = fbf_test_replay_run(argv, TIMEOUT_MS, &so, err);
    free(so);
    return rc;
}

/* fastbf's command line, in one of 4 rotating static buffers. */
static const char *fastbf_cmd(const char *opts)
{
    static char bufs[4][10000];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "%s %s", fbf_test_replay_fastbf_path(), opts);
    return b;
}

/* A test file whose path outlives the rotating buffers of testkit. */
static const char *keep(char *buf, const char *name, const char *text)
{
    snprintf(buf, 4096, "%s", fbf_test_tmp_write(name, text));
    return buf;
}

static void run_ok(const char *const *args, const char *wl)
{
    char *err = NULL;
    int rc = replay(args, wl, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err ? err : "");
    free(err);
}

static void test_submitter_schedule(void **state)
{
    (void)state;
    char b1[4096], b2[4096];
    const char *plan = keep(b1, "plan.json", plan_json);
    const char *empty = keep(b2, "empty.json", empty_json);
    char opts[5000];
    snprintf(opts, sizeof opts, "--policy conservative --register-workload %s", plan);
    const char *cmd = fastbf_cmd(opts);
    const char *const modes[][4] = {
        {"--dynamic-jobs", NULL},
        {"--ack-dynamic-jobs", NULL},
        {"--ack-dynamic-jobs", "--forward-profiles", NULL},
        {"--dynamic-jobs", "--forward-profiles", NULL},
    };
    for (int m = 0; m < 4; m++) {
        const char *out = fbf_test_tmp_path("submit-%d", m);
        const char *args[8] = {"--scheduler", cmd, "--out", out, "--quiet"};
        for (int k = 0; modes[m][k]; k++)
            args[5 + k] = modes[m][k];
        run_ok(args, empty);
        assert_true(fbf_test_replay_summary(out, "jobs.registered") == 4);
        assert_true(fbf_test_replay_summary(out, "jobs.completed") == 4);
        for (int j = 0; j < 4; j++) {
            char id[8];
            snprintf(id, sizeof id, "%d", j + 1);
            double got = fbf_test_replay_csv(out, id, START);
            if (got != plan_starts[j])
                fail_msg("mode %d: job %s starts at %g, expected %g", m, id, got,
                         plan_starts[j]);
        }
    }
}

/* The same jobs, registered by fastbf or submitted by Batsim, get the same
 * schedule under every policy, with and without acknowledgements. */
static void test_registered_like_submitted(void **state)
{
    (void)state;
    char b1[4096], b2[4096];
    const char *swf = keep(b1, "like.swf", exact_swf);
    const char *empty = keep(b2, "empty8.json", "{\"nb_res\": 8, \"jobs\": [], \"profiles\": {}}");
    const char *policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++) {
        char opts[5000];
        snprintf(opts, sizeof opts, "--policy %s", policies[p]);
        char ref[4096];
        snprintf(ref, sizeof ref, "%s", fbf_test_tmp_path("like-ref-%d", p));
        run_ok((const char *const[]){"--scheduler", fastbf_cmd(opts), "--out", ref, "--quiet",
                                     NULL},
               swf);
        snprintf(opts, sizeof opts, "--policy %s --register-workload %s", policies[p], swf);
        for (int ack = 0; ack < 2; ack++) {
            const char *out = fbf_test_tmp_path("like-%d-%d", p, ack);
            run_ok((const char *const[]){"--scheduler", fastbf_cmd(opts), "--out", out,
                                         "--quiet", ack ? "--ack-dynamic-jobs" : "--dynamic-jobs",
                                         NULL},
                   empty);
            for (int j = 1; j <= 7; j++) {
                char id[8];
                snprintf(id, sizeof id, "%d", j);
                double want = fbf_test_replay_csv(ref, id, START);
                double got = fbf_test_replay_csv(out, id, START);
                if (isnan(want) || got != want)
                    fail_msg("%s, acks %d: job %s starts at %g registered, %g submitted",
                             policies[p], ack, id, got, want);
            }
        }
    }
}

static void test_continue_registration(void **state)
{
    (void)state;
    char b1[4096], b2[4096];
    const char *plan = keep(b1, "plan-p.json", plan_json);
    const char *empty = keep(b2, "empty-p.json", empty_json);
    char opts[5000];
    /* The gap from 3 to 100 is longer than 50 s: one pause. */
    snprintf(opts, sizeof opts, "--policy conservative --register-workload %s "
             "--register-pause 50", plan);
    for (int ack = 0; ack < 2; ack++) {
        const char *out = fbf_test_tmp_path("pause-%d", ack);
        run_ok((const char *const[]){"--scheduler", fastbf_cmd(opts), "--out", out, "--quiet",
                                     ack ? "--ack-dynamic-jobs" : "--dynamic-jobs", NULL},
               empty);
        assert_true(fbf_test_replay_summary(out, "jobs.registration_reopenings") == 1);
        assert_true(fbf_test_replay_summary(out, "jobs.registered") == 4);
        assert_true(fbf_test_replay_csv(out, "4", START) == 100);
    }
}

static void test_disabled_dynamic_jobs_stop_fastbf(void **state)
{
    (void)state;
    char b1[4096], b2[4096];
    const char *plan = keep(b1, "plan-d.json", plan_json);
    /* Without --dynamic-jobs a workload needs a job: the plan's own. */
    const char *statics = keep(b2, "static-d.json", plan_json);
    char opts[5000];
    snprintf(opts, sizeof opts, "--register-workload %s", plan);
    char *err = NULL;
    int rc = replay((const char *const[]){"--scheduler", fastbf_cmd(opts), "--quiet", NULL},
                    statics, &err);
    assert_int_equal(rc, 2);
    if (!err || !strstr(err, "dynamic jobs are disabled"))
        fail_msg("stderr: %s", err ? err : "(none)");
    free(err);
}

/* Conservative with exact walltimes: every reservation is kept, so every
 * answered waiting time is the real one, for submitted and registered jobs. */
static void test_query_predictions_exact(void **state)
{
    (void)state;
    char b1[4096], b2[4096];
    const char *swf = keep(b1, "exact.swf", exact_swf);
    const char *empty = keep(b2, "empty-q.json", "{\"nb_res\": 8, \"jobs\": [], \"profiles\": {}}");
    const char *out = fbf_test_tmp_path("query-static");
    run_ok((const char *const[]){"--scheduler", fastbf_cmd("--policy conservative"), "--out",
                                 out, "--quiet", "--query-wait", NULL},
           swf);
    assert_true(fbf_test_replay_summary(out, "predictions.answers") == 7);
    assert_true(fbf_test_replay_summary(out, "predictions.unknown") == 0);
    assert_true(fbf_test_replay_summary(out, "predictions.exact") == 7);
    assert_true(fbf_test_replay_summary(out, "predictions.mean_abs_error_s") == 0);
    /* Someone waits, so the test is not trivially zero. */
    assert_true(fbf_test_replay_summary(out, "max_wait") > 0);
    for (int j = 1; j <= 7; j++) {
        char id[8];
        snprintf(id, sizeof id, "%d", j);
        assert_true(fbf_test_replay_csv(out, id, PREDICTED) == fbf_test_replay_csv(out, id, WAIT));
    }
    char opts[5000];
    snprintf(opts, sizeof opts, "--policy conservative --register-workload %s", swf);
    out = fbf_test_tmp_path("query-registered");
    run_ok((const char *const[]){"--scheduler", fastbf_cmd(opts), "--out", out, "--quiet",
                                 "--ack-dynamic-jobs", "--query-wait", NULL},
           empty);
    assert_true(fbf_test_replay_summary(out, "predictions.exact") == 7);
}

/* A scripted FCFS injects events into its first reply with a submission;
 * the run must stop with exit code want and want_text in its error. */
static void expect_refusal(const char *events, const char *mode, int want,
                           const char *want_text)
{
    const char *wl = fbf_test_tmp_write("refuse.json",
                                        "{\"nb_res\": 4, \"jobs\": [{\"id\": \"1\", \"subtime\": "
                                        "0, \"res\": 1, \"walltime\": 10, \"profile\": \"p\"}],"
                                        "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": "
                                        "10}}}");
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_inject(events, ep, sizeof ep);
    assert_non_null(s);
    char *err = NULL;
    const char *args[] = {"--endpoint", ep, "--quiet", mode, NULL};
    if (!mode)
        args[3] = NULL;
    int rc = replay(args, wl, &err);
    free(fbf_test_rsched_stop(s));
    if (rc != want || !err || !strstr(err, want_text))
        fail_msg("events %s: exit %d (want %d), stderr: %s (want '%s')", events, rc, want,
                 err ? err : "(none)", want_text);
    free(err);
}

#define PROFILE_Q "{'type':'REGISTER_PROFILE','data':{'workload_name':'dyn','profile_name':'q'," \
                  "'profile':{'type':'delay','delay':5}}}"
#define JOB(id, prof, res) "{'type':'REGISTER_JOB','data':{'job_id':'" id "','job':{'id':'" id \
                           "','subtime':0,'profile':'" prof "','res':" res ",'walltime':10}}}"
/* A job description of dyn!a with the given members. */
#define JOB_A(members) "{'type':'REGISTER_JOB','data':{'job_id':'dyn!a','job':{" members "}}}"
#define FINISHED "{'type':'NOTIFY','data':{'type':'registration_finished'}}"

#define IM "Invalid JSON message: "
#define JP "Invalid JSON job submitted by the scheduler: "

static void test_registrations_refused(void **state)
{
    (void)state;
    /* A correct registration runs (the scripted FCFS queues it from its
     * acknowledgement). Refusals carry Batsim 4.2.1's own texts. */
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "1") "," FINISHED "]",
                   "--ack-dynamic-jobs", 0, "");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "1") "]", NULL, 2,
                   "(REGISTER_PROFILE): Invalid JSON message: dynamic profile registration "
                   "received but the option seems disabled... It can be activated with the "
                   "'--enable-dynamic-jobs' command line option.");
    /* No REGISTER_PROFILE made workload dyn. */
    expect_refusal("[" JOB("dyn!a", "q", "1") "]", "--dynamic-jobs", 2,
                   "(REGISTER_JOB, job dyn!a): Internal error: Workload 'dyn' should exist.");
    /* The input's profiles belong to its own workload (w0), not to dyn. */
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "p", "1") "]", "--dynamic-jobs", 2,
                   "Invalid JSON job submitted by the scheduler: the profile p for job dyn!a "
                   "does not exist");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "1") "," JOB("dyn!a", "q", "1") "]",
                   "--dynamic-jobs", 2, "(REGISTER_JOB, job dyn!a): Cannot register new job "
                   "'dyn!a', it already exists in the workload.");
    expect_refusal("[" JOB("w0!1", "p", "1") "]", "--dynamic-jobs", 2,
                   "Cannot register new job 'w0!1', it already exists in the workload.");
    expect_refusal("[" PROFILE_Q "," JOB("a", "q", "1") "]", "--dynamic-jobs", 2,
                   "Invalid string job identifier 'a': should be formatted as two "
                   "'!'-separated parts, the second one being any string without '!'. "
                   "Example: 'some_text!42'.");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a!b", "q", "1") "]", "--dynamic-jobs", 2,
                   "(REGISTER_JOB, job dyn!a!b): Invalid string job identifier 'dyn!a!b'");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "0") "]", "--dynamic-jobs", 2,
                   "data.job.res is 0: fastbf-replay runs jobs of 1 resource or more");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "1.5") "]", "--dynamic-jobs", 2,
                   "job dyn!a has a non-number 'res' field");
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':'dyn!a','subtime':0,'profile':'q','res':1,"
                                           "'walltime':0") "]",
                   "--dynamic-jobs", 2, "job 'dyn!a' has an invalid walltime (0). It should "
                   "either be -1 (no walltime) or a strictly positive number.");
    /* Batsim parses the job as a workload's: id and subtime are mandatory,
     * res a 32-bit int. */
    expect_refusal("[" PROFILE_Q "," JOB_A("'subtime':0,'profile':'q','res':1") "]",
                   "--dynamic-jobs", 2, "(REGISTER_JOB, job dyn!a): " JP "one job has no 'id' "
                   "field");
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':'dyn!a','profile':'q','res':1") "]",
                   "--dynamic-jobs", 2, JP "job 'dyn!a' has no 'subtime' field");
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':'dyn!a','subtime':'0','profile':'q','res':1")
                   "]",
                   "--dynamic-jobs", 2, JP "job 'dyn!a' has a non-number 'subtime' field");
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':'dyn!b','subtime':0,'profile':'q','res':1") "]",
                   "--dynamic-jobs", 2, "(REGISTER_JOB, job dyn!a): Internal error");
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':7,'subtime':0,'profile':'q','res':1") "]",
                   "--dynamic-jobs", 2, "Internal error");
    expect_refusal("[" PROFILE_Q "," JOB("dyn!a", "q", "2147483648") "]", "--dynamic-jobs", 2,
                   "job dyn!a has a non-number 'res' field");
    /* The bare name, as Batsim completes it, and a numeric one. */
    expect_refusal("[" PROFILE_Q "," JOB_A("'id':'a','subtime':0,'profile':'q','res':1") ","
                   "{'type':'REGISTER_JOB','data':{'job_id':'dyn!7','job':{'id':7,'subtime':0,"
                   "'profile':'q','res':1}}}," FINISHED "]",
                   "--ack-dynamic-jobs", 0, "");
    /* A scheduler notifies registration only; Batsim stops on any other. */
    expect_refusal("[{'type':'NOTIFY','data':{'type':'no_more_static_job_to_submit'}}]", NULL,
                   2, "(NOTIFY): Unknown NOTIFY type received ('no_more_static_job_to_submit').");
    expect_refusal("[{'type':'NOTIFY','data':{'type':3}}]", NULL, 2,
                   IM "in event 0 (NOTIFY): ['data']['type'] should be a string");
    /* The input's profiles exist in its own workload: not registrable again. */
    expect_refusal("[{'type':'REGISTER_PROFILE','data':{'workload_name':'w0','profile_name':"
                   "'p','profile':{'type':'delay','delay':5}}}]",
                   "--dynamic-jobs", 2, "Invalid new profile registration: profile 'p' already "
                   "existed in workload 'w0'");
    expect_refusal("[{'type':'REGISTER_PROFILE','data':{'workload_name':'dyn','profile_name':"
                   "'x','profile':{'type':'delay','delay':-1}}}]",
                   "--dynamic-jobs", 2, "data.profile.delay is missing or not a number >= 0");
    expect_refusal("[{'type':'REGISTER_PROFILE','data':{'workload_name':'','profile_name':"
                   "'x','profile':{'type':'delay','delay':1}}}]",
                   "--dynamic-jobs", 2, "data.workload_name and data.profile_name must be "
                   "non-empty");
    expect_refusal("[" PROFILE_Q ",{'type':'REGISTER_JOB','data':{'job_id':'dyn!a','job':3}}]",
                   "--dynamic-jobs", 2, IM "in event 1 (REGISTER_JOB): ['data']['job'] should be "
                   "an object");
    expect_refusal("[" PROFILE_Q ",{'type':'REGISTER_JOB','data':{'job_id':'dyn!a'}}]",
                   "--dynamic-jobs", 2, IM "in event 1 (REGISTER_JOB): ['data']['job'] is unset "
                   "but redis seems disabled...");
    expect_refusal("[" PROFILE_Q "," PROFILE_Q "]", "--dynamic-jobs", 2,
                   "Invalid new profile registration: profile 'q' already existed in workload "
                   "'dyn'");
    expect_refusal("[{'type':'REGISTER_PROFILE','data':{'workload_name':'dyn','profile_name':"
                   "'x','profile':{'type':'parallel','cpu':1}}}]",
                   "--dynamic-jobs", 2, "is not \"delay\"");
    /* Batsim checks a registration against the state before the reply: a
     * registration_finished of the same reply does not stop a REGISTER_JOB
     * that follows it (test_replay_batsim421 has the converse). */
    expect_refusal("[" PROFILE_Q "," FINISHED "," JOB("dyn!a", "q", "1") "]",
                   "--ack-dynamic-jobs", 0, "");
    expect_refusal("[" PROFILE_Q "," FINISHED ",{'type':'NOTIFY','data':{'type':"
                   "'continue_registration'}}," JOB("dyn!a", "q", "1") "," FINISHED "]",
                   "--ack-dynamic-jobs", 0, "");
    /* A continue_registration while open is no error for Batsim (a flag):
     * never finished, the run waits forever. */
    expect_refusal("[{'type':'NOTIFY','data':{'type':'continue_registration'}}]",
                   "--dynamic-jobs", 3, "dynamic registration is still open");
    expect_refusal("[" PROFILE_Q "]", "--dynamic-jobs", 3,
                   "dynamic registration is still open");
}

/* Many profiles in two workloads (the replayer's profile index grows past
 * its first size): each job finds its own workload's profile, and the
 * same name in the other workload stays a different profile. */
static void test_many_registered_profiles(void **state)
{
    (void)state;
    enum { N = 40 };
    static char ev[N * 2 * 300 + 200];
    size_t len = 0;
    len += (size_t)snprintf(ev + len, sizeof ev - len, "[");
    for (int i = 0; i < N; i++)
        for (int w = 0; w < 2; w++)
            len += (size_t)snprintf(ev + len, sizeof ev - len,
                                    "{'type':'REGISTER_PROFILE','data':{'workload_name':'wl%d',"
                                    "'profile_name':'p%d','profile':{'type':'delay','delay':%d}}},",
                                    w, i, 1 + i + 100 * w);
    for (int i = 0; i < N; i++)
        for (int w = 0; w < 2; w++)
            len += (size_t)snprintf(ev + len, sizeof ev - len,
                                    "{'type':'REGISTER_JOB','data':{'job_id':'wl%d!%c%d','job':{"
                                    "'id':'wl%d!%c%d','subtime':0,'profile':'p%d','res':1}}},",
                                    w, 'a' + w, i, w, 'a' + w, i, i);
    snprintf(ev + len, sizeof ev - len, FINISHED "]");
    const char *wl = fbf_test_tmp_write("many.json",
                                        "{\"nb_res\": 4, \"jobs\": [{\"id\": \"1\", \"subtime\": "
                                        "0, \"res\": 1, \"walltime\": 10, \"profile\": \"p\"}],"
                                        "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": "
                                        "10}}}");
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_inject(ev, ep, sizeof ep);
    assert_non_null(s);
    const char *out = fbf_test_tmp_path("many");
    char *err = NULL;
    int rc = replay((const char *const[]){"--endpoint", ep, "--quiet", "--ack-dynamic-jobs",
                                          "--out", out, NULL},
                    wl, &err);
    free(fbf_test_rsched_stop(s));
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err ? err : "");
    free(err);
    assert_true(fbf_test_replay_summary(out, "jobs.registered") == 2 * N);
    for (int i = 0; i < N; i++)
        for (int w = 0; w < 2; w++) {
            char id[16];
            snprintf(id, sizeof id, "%c%d", 'a' + w, i);
            double got = fbf_test_replay_csv(out, id, RUNTIME);
            if (got != 1 + i + 100 * w)
                fail_msg("wl%d!%s ran %g s, its profile says %d", w, id, got, 1 + i + 100 * w);
        }
    /* A profile of wl1 is unknown in wl0 until registered there. */
    expect_refusal("[{'type':'REGISTER_PROFILE','data':{'workload_name':'wl1','profile_name':"
                   "'only1','profile':{'type':'delay','delay':3}}},"
                   "{'type':'REGISTER_PROFILE','data':{'workload_name':'wl0','profile_name':"
                   "'other','profile':{'type':'delay','delay':3}}},"
                   "{'type':'REGISTER_JOB','data':{'job_id':'wl0!x','job':{'id':'wl0!x',"
                   "'subtime':0,'profile':'only1','res':1}}}]",
                   "--dynamic-jobs", 2, "the profile only1 for job wl0!x does not exist");
}

static void test_answers_refused(void **state)
{
    (void)state;
    /* The scripted FCFS answers no query. */
    expect_refusal("[]", "--query-wait", 2,
                   "no ANSWER to the QUERY estimate_waiting_time about job w0!1");
    expect_refusal("[{'type':'ANSWER','data':{'estimate_waiting_time':{'job_id':'w0!1',"
                   "'estimated_waiting_time':-3}}}]",
                   "--query-wait", 2, "estimated_waiting_time is missing or not a number >= 0");
    expect_refusal("[{'type':'ANSWER','data':{'estimate_waiting_time':{'job_id':'w0!1'}}}]",
                   "--query-wait", 2, "estimated_waiting_time is missing");
    expect_refusal("[{'type':'ANSWER','data':{'estimate_waiting_time':{'job_id':'w0!2',"
                   "'estimated_waiting_time':1}}}]",
                   "--query-wait", 2, "no QUERY about this job is waiting for an answer");
    expect_refusal("[{'type':'ANSWER','data':{'consumed_energy':12}}]", "--query-wait", 2,
                   "data must hold exactly one object estimate_waiting_time");
    expect_refusal("[{'type':'ANSWER','data':{'estimate_waiting_time':{'job_id':'w0!1',"
                   "'estimated_waiting_time':1}}},{'type':'ANSWER','data':{"
                   "'estimate_waiting_time':{'job_id':'w0!1','estimated_waiting_time':1}}}]",
                   "--query-wait", 2, "already answered");
    /* Unasked, an answer is refused too. */
    expect_refusal("[{'type':'ANSWER','data':{'estimate_waiting_time':{'job_id':'w0!1',"
                   "'estimated_waiting_time':1}}}]",
                   NULL, 2, "never asked");
}

int main(void)
{
    fbf_test_filter_from_env();
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_submitter_schedule),
        cmocka_unit_test(test_registered_like_submitted),
        cmocka_unit_test(test_continue_registration),
        cmocka_unit_test(test_disabled_dynamic_jobs_stop_fastbf),
        cmocka_unit_test(test_query_predictions_exact),
        cmocka_unit_test(test_registrations_refused),
        cmocka_unit_test(test_many_registered_profiles),
        cmocka_unit_test(test_answers_refused),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
