/*
 * test_replay_batsim421: fastbf-replay behaves as a real Batsim 4.2.1 on
 * the points its observed runs showed (kills, CHANGE_JOB_STATE,
 * REJECT_JOB, dynamic registration and profile dropping, CALL_ME_LATER
 * and printed times, SET_JOB_METADATA, consumed_energy queries), each
 * accepted behaviour and each abort with Batsim's own reason and exit
 * status 2.
 *
 * The scheduler is scripted (support/replay_sched.h, FBF_TRF_SCRIPT): the
 * k-th message gets the k-th reply, so each case states the exact
 * exchange, in the observed captures' form where they fit.
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

#define TIMEOUT_MS 60000
#define FINAL_STATE 7
#define FINISH 10
#define METADATA 16

typedef struct run {
    int rc;
    char *log, *out, *err;
} run;

/* fastbf-replay [extra...] WL against the scripted replies (NULL-ended). */
static run script(const char *const *replies, const char *wl, const char *outdir,
                  const char *const *extra)
{
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_script(replies, ep, sizeof ep);
    assert_non_null(s);
    const char *args[20] = {"--endpoint", ep, "--timeout", "20", "--quiet"};
    int n = 5;
    if (outdir) {
        args[n++] = "--out";
        args[n++] = outdir;
    }
    for (int i = 0; extra && extra[i] && n < 18; i++)
        args[n++] = extra[i];
    args[n++] = wl;
    run r = {0};
    r.rc = fbf_test_replay_run(args, TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_rsched_stop(s);
    return r;
}

static void run_free(run *r)
{
    free(r->log);
    free(r->out);
    free(r->err);
}

/* Message k (0-based) the scheduler received. */
static void expect_message(const run *r, int k, const char *want)
{
    const char *p = r->log;
    for (int i = 0; i < k && p; i++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    size_t n = p ? strcspn(p, "\n") : 0;
    if (!p || strlen(want) != n || strncmp(p, want, n) != 0)
        fail_msg("message %d:\n  got      %.*s\n  expected %s", k, (int)n, p ? p : "", want);
}

/* The run stopped with exit 2 and Batsim's reason after the context. */
static void expect_abort(const char *const *replies, const char *wl, const char *const *extra,
                         const char *reason)
{
    run r = script(replies, wl, NULL, extra);
    if (r.rc != 2 || !r.err || !strstr(r.err, reason) ||
        !strstr(r.err, "fastbf-replay: error: invalid reply to message #"))
        fail_msg("exit %d (want 2), stderr:\n%s\nwant '%s'", r.rc, r.err ? r.err : "", reason);
    run_free(&r);
}

static void expect_text(const char *dir, const char *job, int col, const char *want)
{
    char *got = fbf_test_replay_csv_text(dir, job, col);
    if (!got || strcmp(got, want) != 0)
        fail_msg("job %s column %d: \"%s\", expected \"%s\"", job, col, got ? got : "(none)",
                 want);
    free(got);
}

#define EMPTY "{'now':$now,'events':[]}"
#define REPLY(events) "{'now':$now,'events':[" events "]}"
#define EV(type, data) "{'timestamp':$now,'type':'" type "','data':" data "}"
#define EXEC(id, alloc) EV("EXECUTE_JOB", "{'job_id':'" id "','alloc':'" alloc "'}")
#define KILL(ids) EV("KILL_JOB", "{'job_ids':[" ids "]}")
#define CALL(t) EV("CALL_ME_LATER", "{'timestamp':" t "}")
#define CHANGE(id, st) EV("CHANGE_JOB_STATE", "{'job_id':'" id "','job_state':'" st "'}")
#define META(id, m) EV("SET_JOB_METADATA", "{'job_id':'" id "','metadata':'" m "'}")
#define NOTIFY(t) EV("NOTIFY", "{'type':'" t "'}")
#define PROFILE(wl, name, d) EV("REGISTER_PROFILE", "{'workload_name':'" wl "','profile_name':'" \
                                name "','profile':{'type':'delay','delay':" d "}}")
#define REGISTER(id, prof) EV("REGISTER_JOB", "{'job_id':'" id "','job':{'id':'" id "','subtime':" \
                              "0,'res':1,'walltime':20,'profile':'" prof "'}}")

/* Jobs 1 and 2 (100 s) and 3 (10 s), all submitted at 0. */
static const char *three_wl(void)
{
    return fbf_test_tmp_write(
        "three.json",
        "{\"nb_res\": 4, \"jobs\": ["
        "{\"id\": 1, \"subtime\": 0, \"walltime\": 500, \"res\": 1, \"profile\": \"d100\"},"
        "{\"id\": 2, \"subtime\": 0, \"walltime\": 500, \"res\": 1, \"profile\": \"d100\"},"
        "{\"id\": 3, \"subtime\": 0, \"walltime\": 500, \"res\": 1, \"profile\": \"d10\"}],"
        "\"profiles\": {\"d100\": {\"type\": \"delay\", \"delay\": 100},"
        "\"d10\": {\"type\": \"delay\", \"delay\": 10}}}");
}

/* Kills at 25: the killed jobs' JOB_COMPLETED come first, then one
 * JOB_KILLED with profile_name and progress (6 decimals); a second
 * KILL_JOB of the same jobs in the reply is skipped (no JOB_KILLED). */
static void test_kill_acknowledged(void **state)
{
    (void)state;
    const char *out = fbf_test_tmp_path("kill");
    const char *const replies[] = {
        EMPTY, REPLY(EXEC("w0!1", "0") "," EXEC("w0!2", "1") "," EXEC("w0!3", "2") "," CALL("25")),
        EMPTY, REPLY(KILL("'w0!1','w0!2'") "," KILL("'w0!2'")), NULL};
    run r = script(replies, three_wl(), out, NULL);
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    expect_message(&r, 3, "{\"now\":25.000000,\"events\":[{\"timestamp\":25.000000,\"type\":"
                          "\"REQUESTED_CALL\",\"data\":{}}]}");
    expect_message(&r, 4,
                   "{\"now\":25.000000,\"events\":[{\"timestamp\":25.000000,\"type\":"
                   "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!1\",\"job_state\":"
                   "\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":\"0\"}},{\"timestamp\":"
                   "25.000000,\"type\":\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!2\","
                   "\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":\"1\"}},"
                   "{\"timestamp\":25.000000,\"type\":\"JOB_KILLED\",\"data\":{\"job_ids\":"
                   "[\"w0!1\",\"w0!2\"],\"job_progress\":{\"w0!1\":{\"profile_name\":\"d100\","
                   "\"progress\":0.250000},\"w0!2\":{\"profile_name\":\"d100\",\"progress\":"
                   "0.250000}}}}]}");
    expect_text(out, "1", FINAL_STATE, "COMPLETED_KILLED");
    assert_true(fbf_test_replay_csv(out, "1", FINISH) == 25);
    expect_text(out, "3", FINAL_STATE, "COMPLETED_SUCCESSFULLY");
    assert_true(fbf_test_replay_summary(out, "jobs.killed") == 2);
    run_free(&r);
}

/* A kill of a job that completed (at 10) before the kill (at 20) but whose
 * JOB_COMPLETED was not sent yet: listed in the JOB_KILLED, no progress,
 * no second JOB_COMPLETED. */
static void test_kill_of_completed_unsent(void **state)
{
    (void)state;
    const char *const replies[] = {
        EMPTY,
        "{'now':20,'events':[{'timestamp':0,'type':'EXECUTE_JOB','data':{'job_id':'w0!3',"
        "'alloc':'0'}},{'timestamp':20,'type':'KILL_JOB','data':{'job_ids':['w0!3']}}]}",
        REPLY(EXEC("w0!1", "0") "," EXEC("w0!2", "1")), NULL};
    run r = script(replies, three_wl(), NULL, NULL);
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    expect_message(&r, 2,
                   "{\"now\":20.000000,\"events\":[{\"timestamp\":10.000000,\"type\":"
                   "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!3\",\"job_state\":"
                   "\"COMPLETED_SUCCESSFULLY\",\"return_code\":0,\"alloc\":\"0\"}},{\"timestamp\":"
                   "20.000000,\"type\":\"JOB_KILLED\",\"data\":{\"job_ids\":[\"w0!3\"],"
                   "\"job_progress\":{}}}]}");
    run_free(&r);
}

static void test_kill_refused(void **state)
{
    (void)state;
    const char *wl = three_wl();
    expect_abort((const char *const[]){EMPTY, REPLY(KILL("'w0!1'")), NULL}, wl, NULL,
                 "reply event 0 (KILL_JOB, job w0!1): Invalid KILL_JOB: job_id 'w0!1' refers to "
                 "a job not being executed nor completed.");
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!3", "0")), REPLY(KILL("'w0!3'")),
                                       NULL},
                 wl, NULL, "Cannot get job 'w0!3': it does not exist");
    expect_abort((const char *const[]){EMPTY, REPLY(KILL("'w0!9'")), NULL}, wl, NULL,
                 "Trying to kill job 'w0!9' but it does not exist.");
}

static void test_change_job_state(void **state)
{
    (void)state;
    const char *wl = three_wl();
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "COMPLETED_FAILED")), NULL},
                 wl, NULL,
                 "reply event 0 (CHANGE_JOB_STATE): Invalid JSON message: in event 0 "
                 "(CHANGE_JOB_STATE): ['data']['job_state'] must be one of: {COMPLETED_KILLED, "
                 "COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED, NOT_SUBMITTED, REJECTED, "
                 "RUNNING}");
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "COMPLETED_KILLED")), NULL},
                 wl, NULL,
                 "(CHANGE_JOB_STATE, job w0!1): Invalid requested job state modification to "
                 "'COMPLETED_KILLED': can only be running or rejected.");
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "NOT_SUBMITTED")), NULL}, wl,
                 NULL, "Invalid requested job state modification to 'NOT_SUBMITTED'");
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "REJECTED")), NULL}, wl,
                 NULL, "(CHANGE_JOB_STATE, job w0!1): Job 1 did not complete");
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!1", "0") "," CALL("5")),
                                       REPLY(CHANGE("w0!1", "COMPLETED_KILLED")), NULL},
                 wl, NULL, "Job 1 did not complete");
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!1", "0") "," CHANGE("w0!1",
                                                                                   "RUNNING")),
                                       NULL},
                 wl, NULL, "Can only change the state of a running job to completed "
                           "(successfully, failed, and killed). State was RUNNING");
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "RUNNING") "," CALL("5")),
                                       REPLY(CHANGE("w0!1", "COMPLETED_SUCCESSFULLY")), NULL},
                 wl, NULL, "Job 1 did not complete");
    expect_abort((const char *const[]){EMPTY, REPLY(CHANGE("w0!9", "RUNNING")), NULL}, wl, NULL,
                 "The job 'w0!9' does not exist.");
    /* waiting -> RUNNING is accepted and the job never runs: the others
     * complete, then nothing can happen (Batsim's SimGrid deadlock). */
    const char *out = fbf_test_tmp_path("frozen");
    run r = script((const char *const[]){EMPTY, REPLY(CHANGE("w0!1", "RUNNING") ","
                                                      EXEC("w0!2", "1") "," EXEC("w0!3", "2")),
                                         NULL},
                   wl, out, NULL);
    assert_int_equal(r.rc, 3);
    expect_text(out, "2", FINAL_STATE, "COMPLETED_SUCCESSFULLY");
    char *none = fbf_test_replay_csv_text(out, "1", FINAL_STATE);
    assert_null(none);
    run_free(&r);
}

/* The observed §3 run: a rejected job's row, metadata kept before the
 * rejection, the last value set wins, commas and single quotes pass. */
static void test_reject_row(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "reject.json",
        "{\"nb_res\": 4, \"jobs\": ["
        "{\"id\": 1, \"subtime\": 0, \"walltime\": 50, \"res\": 1, \"profile\": \"d10\"},"
        "{\"id\": 2, \"subtime\": 0, \"walltime\": 50, \"res\": 2, \"profile\": \"d10\"},"
        "{\"id\": 3, \"subtime\": 0, \"walltime\": 50, \"res\": 1, \"profile\": \"d10\"}],"
        "\"profiles\": {\"d10\": {\"type\": \"delay\", \"delay\": 10}}}");
    const char *out = fbf_test_tmp_path("reject");
    run r = script((const char *const[]){EMPTY,
                                         REPLY(META("w0!1", "before reject") ","
                                               EV("REJECT_JOB", "{'job_id':'w0!1'}") ","
                                               META("w0!2", "first") ","
                                               META("w0!2", "k=v, x=\\u0027y\\u0027; z") ","
                                               EXEC("w0!2", "0-1") "," EXEC("w0!3", "2")),
                                         NULL},
                   wl, out, NULL);
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    char *csv = fbf_test_replay_read(fbf_test_tmp_path("reject/out_jobs.csv"));
    assert_non_null(csv);
    if (!strstr(csv, "\n1,w0,d10,0.000000,1,50.000000,0,REJECTED,,,,,,,,,\"before reject\"\n") ||
        !strstr(csv, "\n2,w0,d10,0.000000,2,50.000000,1,COMPLETED_SUCCESSFULLY,0.000000,"
                     "10.000000,10.000000,0.000000,10.000000,1.000000,0-1,-1.000000,"
                     "\"k=v, x='y'; z\"\n") ||
        !strstr(csv, ",2,-1.000000,\"\"\n"))
        fail_msg("out_jobs.csv:\n%s", csv);
    free(csv);
    assert_true(fbf_test_replay_summary(out, "jobs.rejected") == 1);
    assert_true(fbf_test_replay_summary(out, "jobs.completed") == 2);
    assert_true(fbf_test_replay_summary(out, "mean_wait") == 0);
    run_free(&r);
    const char *t = three_wl();
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!1", "0") ","
                                                    EV("REJECT_JOB", "{'job_id':'w0!1'}")),
                                       NULL},
                 t, NULL, "reply event 1 (REJECT_JOB, job w0!1): Invalid rejection received: "
                          "job 'w0!1' cannot be rejected at the present time. To be rejected, "
                          "a job must be submitted and not allocated yet.");
    /* Deleted once the next message is out. */
    expect_abort((const char *const[]){EMPTY, REPLY(EV("REJECT_JOB", "{'job_id':'w0!1'}") ","
                                                    EXEC("w0!3", "0")),
                                       REPLY(EV("REJECT_JOB", "{'job_id':'w0!1'}")), NULL},
                 t, NULL, "Cannot get job 'w0!1': it does not exist");
}

static void test_metadata_refused(void **state)
{
    (void)state;
    const char *wl = three_wl();
    expect_abort((const char *const[]){EMPTY, REPLY(META("w0!2", "say \\\"hi\\\"")), NULL}, wl,
                 NULL, "(SET_JOB_METADATA): Invalid JSON message: the 'metadata' value in the "
                       "'data' value of event 0 (SET_JOB_METADATA) should not contain double "
                       "quotes (got ###say \"hi\"###)");
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!3", "0")),
                                       REPLY(META("w0!3", "after completion")), NULL},
                 wl, NULL, "Cannot get job 'w0!3': it does not exist");
}

static const char *empty_wl(void)
{
    return fbf_test_tmp_write("empty.json", "{\"nb_res\": 4, \"jobs\": [], \"profiles\": {}}");
}

/* The observed §4 script without acknowledgements: a (d5) runs and ends
 * at 5, which drops d5 although b (d5) still waits; b can still run. */
static void test_profile_dropped(void **state)
{
    (void)state;
    const char *wl = empty_wl();
    const char *const dyn[] = {"--dynamic-jobs", NULL};
#define FIRST REPLY(PROFILE("dyn", "d5", "5") "," REGISTER("dyn!a", "d5") "," EXEC("dyn!a", "0") \
                    "," REGISTER("dyn!b", "d5") "," CALL("7"))
    expect_abort((const char *const[]){FIRST, EMPTY, REPLY(REGISTER("dyn!c", "d5")), NULL}, wl,
                 dyn, "(REGISTER_JOB, job dyn!c): Cannot get profile 'd5': it existed some time "
                      "ago but is no longer accessible");
    expect_abort((const char *const[]){FIRST, EMPTY, REPLY(EXEC("dyn!b", "1") ","
                                                           PROFILE("dyn", "d5", "5")),
                                       NULL},
                 wl, dyn, "(REGISTER_PROFILE): Invalid new profile registration: profile 'd5' "
                          "already existed in workload 'dyn'");
    /* With --profile-reuse, c reuses d5 and everything runs. */
    const char *out = fbf_test_tmp_path("reuse");
    run r = script((const char *const[]){FIRST, EMPTY,
                                         REPLY(REGISTER("dyn!c", "d5") "," EXEC("dyn!c", "2") ","
                                               EXEC("dyn!b", "1") ","
                                               NOTIFY("registration_finished")),
                                         NULL},
                   wl, out, (const char *const[]){"--dynamic-jobs", "--profile-reuse", NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    assert_true(fbf_test_replay_summary(out, "jobs.registered") == 3);
    if (!strstr(r.log, "\"profile-reuse-enabled\":true"))
        fail_msg("SIMULATION_BEGINS: %s", r.log);
    run_free(&r);
    /* The input's profiles are dropped the same way. */
    expect_abort((const char *const[]){EMPTY, REPLY(EXEC("w0!3", "0")),
                                       REPLY(REGISTER("w0!x", "d10")), NULL},
                 three_wl(), dyn, "Cannot get profile 'd10': it existed some time ago");
    fbf_test_replay_expect((const char *const[]){"--inproc", "--profile-reuse", wl, NULL},
                           TIMEOUT_MS, 2, "Profile reuse is enabled but dynamic registration "
                                          "is not, have you missed something?", false);
#undef FIRST
}

/* Registration is checked against its state before the reply. */
static void test_registration_state(void **state)
{
    (void)state;
    const char *wl = empty_wl();
    const char *const dyn[] = {"--dynamic-jobs", NULL};
    expect_abort((const char *const[]){REPLY(PROFILE("dyn", "d5", "5") ","
                                             NOTIFY("registration_finished")),
                                       REPLY(NOTIFY("continue_registration") ","
                                             REGISTER("dyn!d", "d5")),
                                       NULL},
                 wl, dyn, "(REGISTER_JOB): Invalid JSON message: dynamic job registration "
                          "received but the option has been disabled (a registration_finished "
                          "message have already been received)");
    /* One reply later, the continue_registration has taken effect. */
    run r = script((const char *const[]){REPLY(PROFILE("dyn", "d5", "5") ","
                                               NOTIFY("registration_finished")),
                                         REPLY(NOTIFY("continue_registration") "," CALL("1")),
                                         REPLY(REGISTER("dyn!d", "d5") "," EXEC("dyn!d", "0") ","
                                               NOTIFY("registration_finished")),
                                         NULL},
                   wl, NULL, dyn);
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    run_free(&r);
    expect_abort((const char *const[]){REPLY(PROFILE("dyn", "delay_10s", "10") ","
                                             EV("REGISTER_JOB",
                                                "{'job_id':'dyn!my_new_job','job':{'profile':"
                                                "'delay_10s','res':1,'id':'dyn!my_new_job',"
                                                "'walltime':12.0}}")),
                                       NULL},
                 wl, dyn, "Invalid JSON job submitted by the scheduler: job 'dyn!my_new_job' "
                          "has no 'subtime' field");
    /* A scheduler's own NOTIFY type makes Batsim stop with it, verbatim,
     * however long. */
    static char reason[700], reply[900], want[800];
    for (size_t i = 0; i < 600; i++)
        reason[i] = (char)('a' + i % 26);
    reason[300] = ' ';
    snprintf(reply, sizeof reply, REPLY(NOTIFY("%s")), reason);
    snprintf(want, sizeof want, "reply event 0 (NOTIFY): Unknown NOTIFY type received ('%s').",
             reason);
    expect_abort((const char *const[]){reply, NULL}, three_wl(), NULL, want);
}

/* The observed §6 runs on a platform without latency: job 1 ends at
 * 1.0000004, printed 1.000000; a reply at that printed now is fine. */
static void test_call_me_later(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write(
        "cml.json", "{\"nb_res\": 2, \"jobs\": ["
                    "{\"id\": 1, \"subtime\": 0, \"walltime\": 100, \"res\": 1, \"profile\": \"odd\"},"
                    "{\"id\": 2, \"subtime\": 0, \"walltime\": 100, \"res\": 1, \"profile\": \"d2\"}],"
                    "\"profiles\": {\"odd\": {\"type\": \"delay\", \"delay\": 1.0000004},"
                    "\"d2\": {\"type\": \"delay\", \"delay\": 2}}}");
#define START2 REPLY(EXEC("w0!1", "0") "," EXEC("w0!2", "1"))
#define AT1(t) "{'now':1.0,'events':[{'timestamp':1.0,'type':'CALL_ME_LATER','data':{'timestamp':" \
               t "}}]}"
    expect_abort((const char *const[]){EMPTY, START2, AT1("1.0"), NULL}, wl, NULL,
                 "reply event 0 (CALL_ME_LATER): You asked to be awaken in the past! (you ask: "
                 "1.000000, it is: 1.000000)");
    expect_abort((const char *const[]){EMPTY, START2, AT1("1.0000004"), NULL}, wl, NULL,
                 "You asked to be awaken in the past! (you ask: 1.000000, it is: 1.000000)");
    expect_abort((const char *const[]){EMPTY, START2, EMPTY,
                                       "{'now':2.0,'events':[{'timestamp':2.0,'type':"
                                       "'CALL_ME_LATER','data':{'timestamp':2.0}}]}",
                                       NULL},
                 wl, NULL, "You asked to be awaken in the past! (you ask: 2.000000, it is: "
                           "2.000000)");
    run r = script((const char *const[]){EMPTY, START2, AT1("1.000000401"),
                                         "{'now':1.00001,'events':[{'timestamp':1.00001,'type':"
                                         "'CALL_ME_LATER','data':{'timestamp':1.000011}}]}",
                                         NULL},
                   wl, NULL, NULL);
    if (r.rc != 0)
        fail_msg("exit %d: %s", r.rc, r.err);
    expect_message(&r, 2, "{\"now\":1.000000,\"events\":[{\"timestamp\":1.000000,\"type\":"
                          "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!1\",\"job_state\":"
                          "\"COMPLETED_SUCCESSFULLY\",\"return_code\":0,\"alloc\":\"0\"}}]}");
    expect_message(&r, 3, "{\"now\":1.000010,\"events\":[{\"timestamp\":1.000010,\"type\":"
                          "\"REQUESTED_CALL\",\"data\":{}}]}");
    expect_message(&r, 4, "{\"now\":1.000020,\"events\":[{\"timestamp\":1.000020,\"type\":"
                          "\"REQUESTED_CALL\",\"data\":{}}]}");
    run_free(&r);
#undef START2
#undef AT1
}

/* QUERY consumed_energy: the ANSWER comes in the next message, at the
 * same now. */
static void test_energy_answer_next(void **state)
{
    (void)state;
    run r = script((const char *const[]){EMPTY, REPLY(EV("QUERY", "{'requests':{"
                                                                  "'consumed_energy':{}}}")),
                                         NULL},
                   three_wl(), NULL, (const char *const[]){"--energy", NULL});
    assert_int_equal(r.rc, 3); /* nothing ever runs */
    expect_message(&r, 2, "{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,\"type\":"
                          "\"ANSWER\",\"data\":{\"consumed_energy\":0.000000}}]}");
    run_free(&r);
}

/* FBF_TRF_KILL: a job arriving at 50 makes the scheduler kill job 1. */
static void test_kill_fault(void **state)
{
    (void)state;
    char ep[256];
    const char *wl = fbf_test_tmp_write(
        "kill.swf", "; MaxProcs: 1\n1 0 -1 100 1 -1 -1 1 200 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                    "2 50 -1 10 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
    const char *out = fbf_test_tmp_path("kill-fault");
    fbf_test_rsched *s = fbf_test_rsched_start(FBF_TRF_KILL, ep, sizeof ep);
    assert_non_null(s);
    run r = {0};
    r.rc = fbf_test_replay_run((const char *const[]){"--endpoint", ep, "--out", out, wl, NULL},
                               TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_rsched_stop(s);
    if (r.rc != 0)
        fail_msg("rc %d: %s", r.rc, r.err);
    expect_message(&r, 3,
                   "{\"now\":50.000000,\"events\":[{\"timestamp\":50.000000,\"type\":"
                   "\"JOB_COMPLETED\",\"data\":{\"job_id\":\"w0!1\",\"job_state\":"
                   "\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":\"0\"}},{\"timestamp\":"
                   "50.000000,\"type\":\"JOB_KILLED\",\"data\":{\"job_ids\":[\"w0!1\"],"
                   "\"job_progress\":{\"w0!1\":{\"profile_name\":\"delay_100\",\"progress\":"
                   "0.500000}}}}]}");
    assert_true(fbf_test_replay_csv(out, "2", 8) == 50);
    assert_true(fbf_test_replay_summary(out, "jobs.completed") == 1);
    run_free(&r);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill_acknowledged),
        cmocka_unit_test(test_kill_of_completed_unsent),
        cmocka_unit_test(test_kill_refused),
        cmocka_unit_test(test_kill_fault),
        cmocka_unit_test(test_change_job_state),
        cmocka_unit_test(test_reject_row),
        cmocka_unit_test(test_metadata_refused),
        cmocka_unit_test(test_profile_dropped),
        cmocka_unit_test(test_registration_state),
        cmocka_unit_test(test_call_me_later),
        cmocka_unit_test(test_energy_answer_next),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
