/*
 * test_e2e: the real fastbf process, driven over a real ZeroMQ REQ socket
 * (tests/support/zmq_peer.h): command line, a whole small simulation in
 * which the test plays Batsim, and the failure paths (a malformed message,
 * an endpoint that cannot be bound), all with bounded waits.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "policies/registry.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

#ifndef FBF_VERSION
#define FBF_VERSION "unknown"
#endif

enum { REPLY_MS = 15000, EXIT_MS = 15000 };

/* The message builders of support/testkit.h under short names: they nest
 * inside each other's arguments. Batsim's own SIMULATION_BEGINS for 4 hosts
 * is fbf_test_obs_begins4 there, shared with test_bv4. */
#define M fbf_test_msg
#define SUB fbf_test_sub
#define DONE fbf_test_done

/* The child's stderr so far, in a static buffer (nothing to free when a
 * failure message uses it). */
static const char *stderr_of(const fbf_test_peer *p)
{
    static char buf[8192];
    char *e = fbf_test_peer_stderr(p);
    snprintf(buf, sizeof buf, "%s", e ? e : "");
    free(e);
    return buf;
}

/* ---- reply checks ----------------------------------------------------- */

/* Parses reply, checks now and every timestamp against req's now, and
 * returns the events compactly: "EXECUTE_JOB w0!A 0-1|...". */
static const char *summary(const char *req, const char *reply)
{
    static char buf[4096];
    cJSON *rq = cJSON_Parse(req), *rp = cJSON_Parse(reply);
    assert_non_null(rq);
    if (!rp)
        fail_msg("reply is not JSON: %s", reply);
    double now = cJSON_GetObjectItemCaseSensitive(rq, "now")->valuedouble;
    const cJSON *rp_now = cJSON_GetObjectItemCaseSensitive(rp, "now");
    if (!cJSON_IsNumber(rp_now) || rp_now->valuedouble != now)
        fail_msg("reply now differs from request now %.17g: %s", now, reply);
    size_t off = 0;
    buf[0] = '\0';
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(rp, "events");
    assert_true(cJSON_IsArray(events));
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "timestamp");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        assert_true(cJSON_IsString(type));
        if (!cJSON_IsNumber(ts) || ts->valuedouble != now)
            fail_msg("event not stamped now %.17g: %s", now, reply);
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", off ? "|" : "",
                                type->valuestring);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(d, "alloc");
        if (cJSON_IsString(id))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", id->valuestring);
        if (cJSON_IsString(alloc))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", alloc->valuestring);
    }
    cJSON_Delete(rq);
    cJSON_Delete(rp);
    return buf;
}

/* The last line of a log of '\n'-terminated lines, without its '\n' (in a
 * static buffer). */
static const char *last_line(const char *log)
{
    static char buf[8192];
    size_t n = strlen(log);
    if (n && log[n - 1] == '\n')
        n--;
    size_t b = n;
    while (b > 0 && log[b - 1] != '\n')
        b--;
    snprintf(buf, sizeof buf, "%.*s", (int)(n - b), log + b);
    return buf;
}

/* ---- command line ----------------------------------------------------- */

static void test_help(void **state)
{
    char *out = NULL, *err = NULL;
    const char *args[] = {"--help", NULL};
    int rc = fbf_test_run_fastbf(args, EXIT_MS, &out, &err);
    assert_int_equal(rc, 0);
    assert_string_equal(err, "");
    assert_non_null(strstr(out, "usage: fastbf"));
    const char *names[] = {"fcfs", "easy", "conservative"};
    for (int i = 0; i < 3; i++) {
        char needle[64];
        snprintf(needle, sizeof needle, " %s ", names[i]);
        if (!strstr(out, needle))
            fail_msg("--help does not list policy %s:\n%s", names[i], out);
    }
    /* ... and every policy of the registry. */
    int n = 0;
    for (const fbf_policy_entry *e = fbf_policy_list(); e->name; e++, n++)
        assert_non_null(strstr(out, e->name));
    assert_int_equal(n, 3);
    for (const char *o = "--policy\0--reservation-depth\0--endpoint\0--workers\0--verbose\0";
         *o; o += strlen(o) + 1)
        if (!strstr(out, o))
            fail_msg("--help does not mention %s", o);
    free(out);
    free(err);
}

static void test_version(void **state)
{
    char *out = NULL, *err = NULL;
    const char *args[] = {"--version", NULL};
    assert_int_equal(fbf_test_run_fastbf(args, EXIT_MS, &out, &err), 0);
    assert_string_equal(out, "fastbf " FBF_VERSION "\n");
    assert_string_equal(err, "");
    free(out);
    free(err);
}

static void test_bad_options(void **state)
{
    static const struct {
        const char *args[6];
        const char *want; /* the first line of stderr */
    } cases[] = {
        {{"--bogus", NULL}, "fastbf: unknown option '--bogus'"},
        {{"--policy", "sjf", NULL}, "fastbf: unknown policy 'sjf' (fcfs, easy or conservative)"},
        {{"--workers", "0", NULL}, "fastbf: --workers: '0' is not a number from 1 to 256"},
        {{"--workers", "x", NULL}, "fastbf: --workers: 'x' is not a number from 1 to 256"},
        {{"--workers", "257", NULL}, "fastbf: --workers: '257' is not a number from 1 to 256"},
        {{"--reservation-depth", "0", NULL},
         "fastbf: --reservation-depth: '0' is not a number >= 1 or 'unlimited'"},
        {{"--policy", "conservative", "--reservation-depth", "-3", NULL},
         "fastbf: --reservation-depth: '-3' is not a number >= 1 or 'unlimited'"},
        {{"--policy", "fcfs", "--reservation-depth", "2", NULL},
         "fastbf: --reservation-depth applies to the backfilling policies, not 'fcfs'"},
        {{"stray", NULL}, "fastbf: unexpected argument 'stray'"},
        {{"--policy", "easy", "stray", NULL}, "fastbf: unexpected argument 'stray'"},
        {{"--policy", NULL}, "fastbf: option '--policy' needs a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL, *err = NULL;
        int rc = fbf_test_run_fastbf(cases[i].args, EXIT_MS, &out, &err);
        if (rc != 2)
            fail_msg("%s ...: exit %d, want 2 (stderr: %s)", cases[i].args[0], rc, err);
        assert_string_equal(out, "");
        char *nl = strchr(err, '\n');
        if (!nl)
            fail_msg("%s ...: no message on stderr", cases[i].args[0]);
        *nl = '\0';
        assert_string_equal(err, cases[i].want);
        assert_string_equal(nl + 1, "Try 'fastbf --help'.\n");
        free(out);
        free(err);
    }
}

/* ---- a whole simulation ----------------------------------------------- */

typedef struct step {
    const char *req;
    const char *want;
} step;

/* Plays Batsim over the steps of the worked example (scheduling-semantics.md)
 * against fastbf started with args; the raw replies go to log. fastbf's
 * stderr must stay empty, or, with err, is copied there. */
static void play_err(const char *const *args, const step *steps, size_t n, char *log, size_t cap,
                     char *err, size_t err_cap)
{
    fbf_test_peer p;
    int rc = fbf_test_peer_start(&p, args, true);
    if (rc < 0)
        fail_msg("cannot start fastbf: %d (stderr: %s)", rc, stderr_of(&p));
    size_t off = 0;
    log[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        char *reply = NULL;
        long len = fbf_test_peer_request(&p, steps[i].req, &reply, REPLY_MS);
        if (len < 0)
            fail_msg("step %zu: no reply (%ld); fastbf stderr: %s", i, len, stderr_of(&p));
        off += (size_t)snprintf(log + off, cap - off, "%s\n", reply);
        free(reply);
        const char *got = summary(steps[i].req, last_line(log));
        if (strcmp(got, steps[i].want) != 0)
            fail_msg("step %zu: reply \"%s\", want \"%s\" (raw %s)", i, got, steps[i].want,
                     last_line(log));
        if (i + 1 == n) /* SIMULATION_ENDS: a reply with no events at all */
            assert_non_null(strstr(last_line(log), "\"events\":[]"));
    }
    rc = fbf_test_peer_wait(&p, EXIT_MS);
    if (rc != 0)
        fail_msg("fastbf exited %d after SIMULATION_ENDS; stderr: %s", rc, stderr_of(&p));
    if (err)
        snprintf(err, err_cap, "%s", stderr_of(&p));
    else
        assert_string_equal(stderr_of(&p), "");
    fbf_test_peer_stop(&p);
}

static void play(const char *const *args, const step *steps, size_t n, char *log, size_t cap)
{
    play_err(args, steps, n, log, cap, NULL, 0);
}

/* The requests of the worked example, as Batsim would send them when every
 * job runs exactly its walltime. Completion times depend on the policy. */
static void worked_steps(bool fcfs, step st[8], char bufs[8][2048])
{
    snprintf(bufs[0], 2048, "%s", fbf_test_obs_begins4);
    snprintf(bufs[1], 2048, "%s",
             M("{'now':0,'events':[%s,%s,%s,%s]}", SUB(0, "w0!A", 2, 10), SUB(0, "w0!B", 4, 5),
               SUB(0, "w0!C", 2, 5), SUB(0, "w0!D", 1, 20)));
    if (fcfs) {
        snprintf(bufs[2], 2048, "%s", M("{'now':10,'events':[%s]}", DONE(10, "w0!A", "0-1")));
        snprintf(bufs[3], 2048, "%s", M("{'now':15,'events':[%s]}", DONE(15, "w0!B", "0-3")));
        snprintf(bufs[4], 2048, "%s", M("{'now':20,'events':[%s]}", DONE(20, "w0!C", "0-1")));
        snprintf(bufs[5], 2048, "%s",
                 M("{'now':35,'events':[{'timestamp':20.5,'type':'NOTIFY','data':{'type':"
                   "'no_more_static_job_to_submit'}},%s]}",
                   DONE(35, "w0!D", "2")));
    } else {
        snprintf(bufs[2], 2048, "%s", M("{'now':5,'events':[%s]}", DONE(5, "w0!C", "2-3")));
        snprintf(bufs[3], 2048, "%s", M("{'now':10,'events':[%s]}", DONE(10, "w0!A", "0-1")));
        snprintf(bufs[4], 2048, "%s", M("{'now':15,'events':[%s]}", DONE(15, "w0!B", "0-3")));
        snprintf(bufs[5], 2048, "%s",
                 M("{'now':35,'events':[{'timestamp':15.5,'type':'NOTIFY','data':{'type':"
                   "'no_more_static_job_to_submit'}},%s]}",
                   DONE(35, "w0!D", "0")));
    }
    snprintf(bufs[6], 2048, "%s",
             M("{'now':35,'events':[{'timestamp':35,'type':'SIMULATION_ENDS','data':{}}]}"));
    for (int i = 0; i < 7; i++)
        st[i].req = bufs[i];
    st[0].want = "";
    if (fcfs) {
        st[1].want = "EXECUTE_JOB w0!A 0-1";
        st[2].want = "EXECUTE_JOB w0!B 0-3";
        st[3].want = "EXECUTE_JOB w0!C 0-1|EXECUTE_JOB w0!D 2";
        st[4].want = "";
    } else {
        st[1].want = "EXECUTE_JOB w0!A 0-1|EXECUTE_JOB w0!C 2-3";
        st[2].want = "";
        st[3].want = "EXECUTE_JOB w0!B 0-3";
        st[4].want = "EXECUTE_JOB w0!D 0";
    }
    st[5].want = "";
    st[6].want = "";
}

static void test_simulation_easy(void **state)
{
    static char bufs[8][2048];
    static char log1[16384], log4[16384], logc[16384];
    step st[8];
    worked_steps(false, st, bufs);

    const char *args1[] = {NULL}; /* easy is the default */
    play(args1, st, 7, log1, sizeof log1);
    /* The reply to SIMULATION_ENDS, exactly. */
    assert_non_null(strstr(log1, "\n{\"now\":35,\"events\":[]}\n"));

    const char *args4[] = {"--workers", "4", NULL};
    play(args4, st, 7, log4, sizeof log4);
    assert_string_equal(log1, log4);

    const char *argsc[] = {"--policy", "easy", "--workers", "3", "--reservation-depth", "1",
                           NULL};
    play(argsc, st, 7, logc, sizeof logc);
    assert_string_equal(log1, logc);
}

/* The same workload under another policy (fcfs: completions in FCFS's
 * order), with 1 and 4 workers: --policy is honoured and the replies do
 * not depend on the workers. */
static void play_policy(const char *policy, bool fcfs)
{
    static char bufs[8][2048];
    static char log[16384], log4[16384];
    step st[8];
    worked_steps(fcfs, st, bufs);
    const char *args[] = {"--policy", policy, NULL};
    play(args, st, 7, log, sizeof log);
    const char *args4[] = {"--policy", policy, "--workers", "4", NULL};
    play(args4, st, 7, log4, sizeof log4);
    assert_string_equal(log, log4);
}

static void test_simulation_conservative(void **state) { play_policy("conservative", false); }

/* --stats: one line at the end, where a user reads whether fastbf or its
 * peer set the pace: every message counted, and times that add up (the
 * first message within all of them, all of them within the run). The
 * replies are those of a run without it. */
static void test_stats(void **state)
{
    static char bufs[8][2048], log[16384], plain[16384], err[8192];
    step st[8];
    worked_steps(false, st, bufs);
    play((const char *const[]){"--policy", "conservative", NULL}, st, 7, plain, sizeof plain);
    play_err((const char *const[]){"--policy", "conservative", "--stats", NULL}, st, 7, log,
             sizeof log, err, sizeof err);
    assert_string_equal(log, plain);
    unsigned long n = 0;
    double all = -1, each = -1, first = -1, served = -1;
    int k = sscanf(err, "fastbf: %lu messages answered in %lf s (%lf us each; the first in %lf s) "
                   "of %lf s served; the rest in ZeroMQ and waiting for Batsim\n",
                   &n, &all, &each, &first, &served);
    if (k != 5 || strchr(err, '\n') != err + strlen(err) - 1)
        fail_msg("--stats: want one line of figures, got \"%s\"", err);
    assert_int_equal(n, 7);
    if (!(first > 0 && first <= all && all <= served && served < 60))
        fail_msg("--stats: times do not add up: %s", err);
    /* all is printed to the microsecond, each to the hundredth of one. */
    if (!(fabs(each * 7 * 1e-6 - all) <= 0.5e-6 + 7 * 0.005e-6))
        fail_msg("--stats: the mean is not all / 7: %s", err);
}

static void test_simulation_fcfs(void **state) { play_policy("fcfs", true); }

/* ---- failures --------------------------------------------------------- */

/* The reply to a refused request must make Batsim stop with fastbf's
 * reason: one NOTIFY whose type, which Batsim 4.2.1 does not know and
 * prints in its abort, is "fastbf stopped: " and the line fastbf printed;
 * at the request's now (now, NAN when the request has none). */
static void expect_refusal(const char *reply, const char *err_line, double now)
{
    cJSON *r = cJSON_Parse(reply);
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(r, "events");
    const cJSON *ev = cJSON_GetArrayItem(evs, 0);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
    const cJSON *what = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(ev, "data"), "type");
    const cJSON *rnow = cJSON_GetObjectItemCaseSensitive(r, "now");
    char want[1100];
    snprintf(want, sizeof want, "fastbf stopped: %.*s", (int)strlen(err_line) - 9,
             err_line + 8); /* without "fastbf: " and the newline */
    if (cJSON_GetArraySize(evs) != 1 || !cJSON_IsString(type) ||
        strcmp(type->valuestring, "NOTIFY") != 0 || !cJSON_IsString(what) ||
        strcmp(what->valuestring, want) != 0 || !cJSON_IsNumber(rnow) ||
        (!isnan(now) && rnow->valuedouble != now))
        fail_msg("refusal \"%s\", want one NOTIFY of type \"%s\" at now %g", reply, want, now);
    cJSON_Delete(r);
}

/* Starts fastbf, sends the good requests (each must be answered), then the
 * bad one, and expects its refusal (expect_refusal(), at now), exit 1 and
 * exactly one line on stderr beginning with want_prefix, within a bounded
 * time. */
static void expect_violation(const char *const *good, size_t n, const char *bad, double now,
                             const char *want_prefix)
{
    fbf_test_peer p;
    const char *args[] = {NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    for (size_t i = 0; i < n; i++) {
        char *reply = NULL;
        long len = fbf_test_peer_request(&p, good[i], &reply, REPLY_MS);
        if (len < 0)
            fail_msg("no reply to good request %zu (%ld)", i, len);
        free(reply);
    }
    char *refusal = NULL;
    if (fbf_test_peer_request(&p, bad, &refusal, REPLY_MS) < 0)
        fail_msg("no reply to the bad request: Batsim would wait forever");
    int rc = fbf_test_peer_wait(&p, EXIT_MS);
    const char *err = stderr_of(&p);
    expect_refusal(refusal, err, now);
    free(refusal);
    if (rc != 1)
        fail_msg("exit %d after a bad message, want 1 (stderr: %s)", rc, err);
    if (strncmp(err, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("stderr \"%s\" does not begin with \"%s\"", err, want_prefix);
    if (fbf_test_count_lines(err) != 1 || err[strlen(err) - 1] != '\n')
        fail_msg("stderr is not exactly one line: \"%s\"", err);
    fbf_test_peer_stop(&p);
}

static void test_malformed_message_exits(void **state)
{
    const char *begun[] = {fbf_test_obs_begins4};
    /* A mistyped field: the event index, its type and the field are named. */
    expect_violation(begun, 1,
                     M("{'now':1,'events':[%s,{'timestamp':1,'type':'JOB_SUBMITTED','data':{"
                       "'job_id':'w0!2','job':{'id':'w0!2','res':'4','walltime':10}}}]}",
                       SUB(1, "w0!1", 1, 10)),
                     1,
                     "fastbf: event 1 (JOB_SUBMITTED): data.job.res: expected an integer, got ");
    /* Not JSON at all, as the very first message. */
    expect_violation(NULL, 0, "hello", NAN, "fastbf: malformed JSON message near byte ");
    /* A first message without SIMULATION_BEGINS. */
    expect_violation(NULL, 0, "{\"now\":0,\"events\":[]}", 0,
                     "fastbf: message: the first message must hold SIMULATION_BEGINS\n");
    /* A completion of a job fastbf never heard of. */
    expect_violation(begun, 1, M("{'now':2,'events':[%s]}", DONE(2, "w0!9", "0")), 2,
                     "fastbf: event 0 (JOB_COMPLETED): data.job_id: unknown job w0!9\n");
    /* Time going backwards between messages. */
    const char *ran[] = {fbf_test_obs_begins4,
                         M("{'now':10,'events':[%s]}", SUB(10, "w0!1", 1, 10))};
    expect_violation(ran, 2, "{\"now\":9,\"events\":[]}", 9,
                     "fastbf: now: time goes backwards: now 9 after 10\n");
}

static void test_bad_endpoint(void **state)
{
    char *out = NULL, *err = NULL;
    const char *args[] = {"--endpoint", "nonsense://x", NULL};
    int rc = fbf_test_run_fastbf(args, EXIT_MS, &out, &err);
    if (rc != 1)
        fail_msg("exit %d for a bad endpoint, want 1 (stderr: %s)", rc, err);
    assert_string_equal(err, "fastbf: cannot bind nonsense://x: Protocol not supported\n");
    assert_string_equal(out, "");
    free(out);
    free(err);
}

/* An endpoint somebody else already listens on. */
static void test_endpoint_in_use(void **state)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    char ep[64], want[160];
    snprintf(ep, sizeof ep, "tcp://127.0.0.1:%d", ntohs(a.sin_port));
    snprintf(want, sizeof want, "fastbf: cannot bind %s: Address already in use\n", ep);

    char *out = NULL, *err = NULL;
    const char *args[] = {"--endpoint", ep, NULL};
    int rc = fbf_test_run_fastbf(args, EXIT_MS, &out, &err);
    close(fd);
    if (rc != 1)
        fail_msg("exit %d for a busy endpoint, want 1 (stderr: %s)", rc, err);
    assert_string_equal(err, want);
    free(out);
    free(err);
}

/* Batsim going away mid-simulation: fastbf must not wait forever. */
static void test_batsim_disconnects(void **state)
{
    fbf_test_peer p;
    const char *args[] = {NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    char *reply = NULL;
    assert_true(fbf_test_peer_request(&p, fbf_test_obs_begins4, &reply, REPLY_MS) > 0);
    assert_string_equal(reply, "{\"now\":0,\"events\":[]}");
    free(reply);
    fbf_test_peer_disconnect(&p);
    int rc = fbf_test_peer_wait(&p, EXIT_MS);
    const char *err = stderr_of(&p);
    if (rc != 1)
        fail_msg("exit %d after Batsim left, want 1 (stderr: %s)", rc, err);
    /* It left: said so, and not mistaken for a message ZeroMQ dropped. */
    assert_string_equal(err, "fastbf: Batsim disconnected after 1 messages, before the "
                             "simulation ended\n");
    fbf_test_peer_stop(&p);
}

/* Connects to 127.0.0.1:port and closes at once, like `nc -z` or a
 * monitoring probe would. */
static void touch_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    close(fd);
}

/* A connection that is not Batsim's, opened and closed mid-simulation,
 * must not end the simulation: Batsim is still there. */
static void test_stray_connection_mid_simulation(void **state)
{
    fbf_test_peer p;
    const char *args[] = {NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    char *reply = NULL;
    assert_true(fbf_test_peer_request(&p, fbf_test_obs_begins4, &reply, REPLY_MS) > 0);
    free(reply);
    touch_port(p.port);
    usleep(200 * 1000);
    const char *req = M("{'now':1,'events':[%s]}", SUB(1, "w0!1", 1, 10));
    /* fastbf answers in milliseconds: no need for the long timeout here. */
    long len = fbf_test_peer_request(&p, req, &reply, 3000);
    if (len < 0) {
        int rc = fbf_test_peer_wait(&p, EXIT_MS);
        fail_msg("no reply after a stray connection came and went (exit %d, stderr: %s)", rc,
                 stderr_of(&p));
    }
    char got[256];
    snprintf(got, sizeof got, "%s", summary(req, reply));
    free(reply);
    assert_string_equal(got, "EXECUTE_JOB w0!1 0");
    req = "{\"now\":2,\"events\":[{\"timestamp\":2,\"type\":\"SIMULATION_ENDS\",\"data\":{}}]}";
    assert_true(fbf_test_peer_request(&p, req, &reply, REPLY_MS) > 0);
    free(reply);
    assert_int_equal(fbf_test_peer_wait(&p, EXIT_MS), 0);
    fbf_test_peer_stop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_simulation_easy),
        cmocka_unit_test(test_simulation_conservative),
        cmocka_unit_test(test_stats),
        cmocka_unit_test(test_simulation_fcfs),
        cmocka_unit_test(test_malformed_message_exits),
        cmocka_unit_test(test_bad_endpoint),
        cmocka_unit_test(test_endpoint_in_use),
        cmocka_unit_test(test_batsim_disconnects),
        cmocka_unit_test(test_stray_connection_mid_simulation),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
