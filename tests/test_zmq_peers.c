/*
 * test_zmq_peers: one peer per session, on the real fastbf process
 * (tests/support/zmq_peer.h).
 *
 * The session belongs to the first peer whose message fastbf takes.
 * Another peer's SIMULATION_ENDS, forged JOB_COMPLETED, second
 * SIMULATION_BEGINS or garbage gets an error reply and a line on stderr
 * and changes nothing: the session's own exchanges go on with the same
 * decisions. A message of several frames, from the session's peer or
 * before any session, is refused before anything of it is applied. And a
 * whole fastbf-replay run (v4 and Batsim 5, fastbf-replay's REQ socket
 * unchanged) under a flood of such messages from another peer writes the
 * out_jobs.csv of the same run in process.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "support/replay_run.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

enum { REPLY_MS = 15000, EXIT_MS = 15000 };

#define M fbf_test_msg
#define SUB fbf_test_sub
#define DONE fbf_test_done

#define OTHER_PEER_WHY                                                                         \
    "another peer holds this session: fastbf answers only the peer that spoke first"
/* The reply to a message refused before the session: Batsim 4.2.1 stops
 * on this NOTIFY, printing its type. */
#define REFUSED_V4(why)                                                                        \
    "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"NOTIFY\",\"data\":{\"type\":"          \
    "\"fastbf refused: " why "\"}}]}"

static const char ends_at_2_5[] =
    "{\"now\":2.5,\"events\":[{\"timestamp\":2.5,\"type\":\"SIMULATION_ENDS\",\"data\":{}}]}";

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static const char *stderr_of(const fbf_test_peer *p)
{
    static char buf[8192];
    char *e = fbf_test_peer_stderr(p);
    snprintf(buf, sizeof buf, "%s", e ? e : "");
    free(e);
    return buf;
}

/* A v4 reply's events, "TYPE job alloc|...", in a static buffer. */
static const char *events_of(const char *reply)
{
    static char buf[1024];
    cJSON *r = cJSON_Parse(reply);
    if (!r)
        fail_msg("reply is not JSON: %s", reply);
    buf[0] = '\0';
    size_t off = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(r, "events"))
    {
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
        const cJSON *job = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(d, "alloc");
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s%s%s%s", off ? "|" : "",
                                cJSON_IsString(type) ? type->valuestring : "?",
                                cJSON_IsString(job) ? " " : "",
                                cJSON_IsString(job) ? job->valuestring : "",
                                cJSON_IsString(alloc) ? " " : "");
        if (cJSON_IsString(alloc))
            off += (size_t)snprintf(buf + off, sizeof buf - off, "%s", alloc->valuestring);
    }
    cJSON_Delete(r);
    return buf;
}

/* One exchange of the session's peer (n frames); its reply's events must
 * be want. */
static void step(fbf_test_peer *p, const char *const *frames, size_t n, const char *want)
{
    char *reply = NULL;
    if (fbf_test_zmq_request(p->sock, frames, n, &reply, REPLY_MS) < 0)
        fail_msg("no reply to %.80s (stderr: %s)", frames[0], stderr_of(p));
    const char *got = events_of(reply);
    if (strcmp(got, want) != 0)
        fail_msg("reply to %.80s: \"%s\", want \"%s\" (%s)", frames[0], got, want, reply);
    free(reply);
}

static void step1(fbf_test_peer *p, const char *req, const char *want)
{
    step(p, (const char *const[]){req}, 1, want);
}

/* 4 hosts; w0!1 takes them all at 1; w0!2 (2 hosts) waits from 2. */
static void open_session(fbf_test_peer *p)
{
    step1(p, fbf_test_obs_begins4, "");
    step1(p, M("{'now':1,'events':[%s]}", SUB(1, "w0!1", 4, 100)), "EXECUTE_JOB w0!1 0-3");
    step1(p, M("{'now':2,'events':[%s]}", SUB(2, "w0!2", 2, 50)), "");
}

/* Nothing starts at 3: w0!1 still runs; it ends at 101 and w0!2 starts
 * then; the run ends at 151 and fastbf exits 0. */
static void finish_session(fbf_test_peer *p)
{
    step1(p, "{\"now\":3,\"events\":[]}", "");
    step1(p, M("{'now':101,'events':[%s]}", DONE(101, "w0!1", "0-3")),
          "EXECUTE_JOB w0!2 0-1");
    step1(p, M("{'now':151,'events':[%s]}", DONE(151, "w0!2", "0-1")), "");
    step1(p,
          "{\"now\":151,\"events\":[{\"timestamp\":151,\"type\":\"SIMULATION_ENDS\","
          "\"data\":{}}]}",
          "");
    int rc = fbf_test_peer_wait(p, EXIT_MS);
    if (rc != 0)
        fail_msg("exit %d at the end, want 0 (stderr: %s)", rc, stderr_of(p));
}

/* The frames of a message another peer sends mid-session. */
typedef struct hostile {
    const char *what;
    const char *frames[3];
    size_t n;
} hostile;

static void test_other_peer_refused(void **state)
{
    (void)state;
    const char *forged = M("{'now':2.5,'events':[%s]}", DONE(2.5, "w0!1", "0-3"));
    const hostile cases[] = {
        {"SIMULATION_ENDS", {ends_at_2_5}, 1},
        {"a forged JOB_COMPLETED", {forged}, 1},
        {"a second SIMULATION_BEGINS", {fbf_test_obs_begins4}, 1},
        {"a message that is not JSON", {"hello"}, 1},
        {"a multipart message", {forged, "x"}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_test_peer p;
        assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){NULL}, true), 0);
        open_session(&p);
        for (int twice = 0; twice < 2; twice++) {
            char *reply = NULL;
            long got = fbf_test_zmq_ask(p.endpoint, cases[i].frames, cases[i].n, &reply,
                                        REPLY_MS);
            if (got < 0 || strcmp(reply, REFUSED_V4(OTHER_PEER_WHY)) != 0)
                fail_msg("%s from another peer: reply %ld \"%s\" (stderr: %s)", cases[i].what,
                         got, reply ? reply : "", stderr_of(&p));
            free(reply);
        }
        finish_session(&p);
        const char *err = stderr_of(&p);
        const char *line = "fastbf: refused a message from a peer that is not the session's "
                           "(127.0.0.1, connection fd ";
        const char *first = strstr(err, line);
        if (!first || !strstr(first + 1, line))
            fail_msg("%s: want two refusal lines on stderr: %s", cases[i].what, err);
        fbf_test_peer_stop(&p);
    }
}

/* The session's own peer sends a message of several frames: refused,
 * nothing of it applied (a JOB_COMPLETED of w0!1 in it would start w0!2
 * at 3, and make the real one at 101 an error). */
static void test_multipart_refused(void **state)
{
    (void)state;
    const char *forged = M("{'now':2.5,'events':[%s]}", DONE(2.5, "w0!1", "0-3"));
    const hostile cases[] = {
        {"2 frames", {forged, "x"}, 2},
        {"3 frames", {forged, "", "x"}, 3},
        {"2 frames", {"", forged}, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_test_peer p;
        assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){NULL}, true), 0);
        open_session(&p);
        char *reply = NULL;
        long got = fbf_test_zmq_request(p.sock, cases[i].frames, cases[i].n, &reply, REPLY_MS);
        char want[256];
        snprintf(want, sizeof want,
                 REFUSED_V4("a message of %s: fastbf takes one frame per message; nothing "
                            "of it was applied"),
                 cases[i].what);
        if (got < 0 || strcmp(reply, want) != 0)
            fail_msg("a message of %s: reply %ld \"%s\" (stderr: %s)", cases[i].what, got,
                     reply ? reply : "", stderr_of(&p));
        free(reply);
        finish_session(&p);
        char line[128];
        snprintf(line, sizeof line, "fastbf: refused a message of %s from 127.0.0.1 "
                                    "(connection fd ", cases[i].what);
        if (!strstr(stderr_of(&p), line))
            fail_msg("no line \"%s\" on stderr: %s", line, stderr_of(&p));
        fbf_test_peer_stop(&p);
    }
}

/* A multipart first message neither opens the session nor pins its
 * sender: the same peer's SIMULATION_BEGINS then does, and from then on
 * another peer is refused. */
static void test_multipart_first_message(void **state)
{
    (void)state;
    fbf_test_peer p;
    assert_int_equal(fbf_test_peer_start(&p, (const char *const[]){NULL}, true), 0);
    char *reply = NULL;
    const char *twice[] = {fbf_test_obs_begins4, fbf_test_obs_begins4};
    assert_true(fbf_test_zmq_request(p.sock, twice, 2, &reply, REPLY_MS) > 0);
    assert_string_equal(reply, REFUSED_V4("a message of 2 frames: fastbf takes one frame per "
                                          "message; nothing of it was applied"));
    free(reply);
    open_session(&p);
    const char *ends[] = {ends_at_2_5};
    assert_true(fbf_test_zmq_ask(p.endpoint, ends, 1, &reply, REPLY_MS) > 0);
    assert_string_equal(reply, REFUSED_V4(OTHER_PEER_WHY));
    free(reply);
    finish_session(&p);
    fbf_test_peer_stop(&p);
}

/* ---- a whole replay under fire --------------------------------------- */

typedef struct replay_job {
    const char *const *args;
    int rc;
    char *err;
    atomic_bool done;
} replay_job;

static void *replay_thread(void *arg)
{
    replay_job *j = arg;
    j->rc = fbf_test_replay_run(j->args, 600000, NULL, &j->err);
    atomic_store(&j->done, true);
    return NULL;
}

static void test_replay_under_fire(void **state)
{
    (void)state;
    static const char v5_ends[] = "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":"
                                  "\"SimulationEndsEvent\",\"event\":{}}]}";
    static const char v5_done[] =
        "{\"now\":1,\"events\":[{\"timestamp\":1,\"event_type\":\"JobCompletedEvent\","
        "\"event\":{\"job_id\":\"w0!1\",\"state\":\"COMPLETED_SUCCESSFULLY\","
        "\"return_code\":0}}]}";
    const char *forged_v4 = M("{'now':1,'events':[%s]}", DONE(1, "w0!1", "0"));
    char v4_done[1024];
    snprintf(v4_done, sizeof v4_done, "%s", forged_v4);
    const struct {
        const char *protocol;
        const char *hostile[2];
        const char *refusal;
    } cases[] = {
        {"batsim4", {ends_at_2_5, v4_done}, REFUSED_V4(OTHER_PEER_WHY)},
        {"batsim5", {v5_ends, v5_done}, "fastbf refused: " OTHER_PEER_WHY},
    };
    char wl[4200];
    snprintf(wl, sizeof wl, "%s/data/KTH-SP2-1996-2.1-cln.swf.gz", FBF_SOURCE_DIR);
    char *ref = fbf_test_replay_tmpdir();
    int rc = fbf_test_replay_run((const char *const[]){"--quiet", "--inproc", "--policy", "easy",
                                                       "--max-jobs", "2000", "--out", ref, wl,
                                                       NULL},
                                 600000, NULL, NULL);
    assert_int_equal(rc, 0);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_test_peer p;
        const char *args[] = {"--protocol", cases[i].protocol, "--verbose", NULL};
        /* The test's own socket connects but stays silent until the
         * replayer has spoken: it is the other peer. */
        assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
        char *out = fbf_test_replay_tmpdir();
        const char *rargs[] = {"--quiet", "--protocol", cases[i].protocol, "--endpoint",
                               p.endpoint, "--max-jobs", "2000", "--out", out, wl, NULL};
        replay_job job = {.args = rargs};
        atomic_init(&job.done, false);
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, replay_thread, &job), 0);
        bool spoke = false;
        for (int waited = 0; waited < 60000 && !spoke && !atomic_load(&job.done); waited += 5) {
            spoke = strstr(stderr_of(&p), "fastbf: +") != NULL;
            if (!spoke)
                sleep_ms(5);
        }
        int refused = 0;
        for (int k = 0; spoke && !atomic_load(&job.done); k++) {
            char *reply = NULL;
            const char *frames[] = {cases[i].hostile[k % 2]};
            long got = fbf_test_zmq_request(p.sock, frames, 1, &reply, 2000);
            if (got < 0)
                break; /* fastbf has ended: the socket cannot send again */
            if (strcmp(reply, cases[i].refusal) != 0)
                fail_msg("%s: another peer got \"%s\"", cases[i].protocol, reply);
            free(reply);
            refused++;
            sleep_ms(2);
        }
        pthread_join(t, NULL);
        if (job.rc != 0)
            fail_msg("%s: the replay under fire exited %d: %s", cases[i].protocol, job.rc,
                     job.err);
        int frc = fbf_test_peer_wait(&p, EXIT_MS);
        if (frc != 0)
            fail_msg("%s: fastbf exited %d (stderr ends: %s)", cases[i].protocol, frc,
                     stderr_of(&p));
        if (refused < 1)
            fail_msg("%s: no message of the other peer came during the replay",
                     cases[i].protocol);
        print_message("%s: %d messages of another peer refused during the replay\n",
                      cases[i].protocol, refused);
        char what[64];
        snprintf(what, sizeof what, "%s under %d refused messages", cases[i].protocol, refused);
        fbf_test_replay_same_jobs(out, ref, what, 1000);
        free(job.err);
        fbf_test_replay_rmdir(out);
        fbf_test_peer_stop(&p);
    }
    fbf_test_replay_rmdir(ref);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_peer_refused),
        cmocka_unit_test(test_multipart_refused),
        cmocka_unit_test(test_multipart_first_message),
        cmocka_unit_test(test_replay_under_fire),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
