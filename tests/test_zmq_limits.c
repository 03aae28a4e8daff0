/*
 * test_zmq_limits: what fastbf's ZeroMQ front ends bind and what sizes
 * they accept, on the real fastbf process (tests/support/zmq_peer.h).
 *
 *   - which endpoints are the loopback (io/endpoint.h), and that fastbf
 *     refuses to bind any other, for batsim4 and batsim5, unless
 *     --allow-remote, which warns; the default endpoint is the loopback
 *     and Batsim's default tcp://localhost:28000 reaches it;
 *   - --max-message: a message of exactly the limit is taken; one above
 *     it from the session's peer ends the run with a line that names the
 *     limit; one from another peer is reported and changes nothing;
 *   - a frame header that claims 1 TiB or 16 GiB (raw ZMTP over TCP) is
 *     refused when it is read: the connection is closed and fastbf never
 *     reserves the memory (VmPeak, in the plain build; the sanitizers
 *     reserve terabytes of shadow memory of their own).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "io/endpoint.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

enum { REPLY_MS = 15000, EXIT_MS = 15000 };

static const char ends_msg[] =
    "{\"now\":1,\"events\":[{\"timestamp\":1,\"type\":\"SIMULATION_ENDS\",\"data\":{}}]}";

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* Waits up to ms for needle on p's stderr. */
static bool stderr_shows(const fbf_test_peer *p, const char *needle, int ms)
{
    for (int waited = 0;; waited += 10) {
        char *e = fbf_test_peer_stderr(p);
        bool found = e && strstr(e, needle);
        free(e);
        if (found || waited >= ms)
            return found;
        sleep_ms(10);
    }
}

/* SIMULATION_BEGINS then SIMULATION_ENDS on p's socket; fastbf exits 0. */
static void short_session(fbf_test_peer *p)
{
    char *reply = NULL;
    if (fbf_test_peer_request(p, fbf_test_obs_begins4, &reply, REPLY_MS) <= 0)
        fail_msg("no reply to SIMULATION_BEGINS (stderr: %s)", fbf_test_peer_stderr(p));
    free(reply);
    assert_true(fbf_test_peer_request(p, ends_msg, &reply, REPLY_MS) > 0);
    free(reply);
    int rc = fbf_test_peer_wait(p, EXIT_MS);
    if (rc != 0)
        fail_msg("exit %d after SIMULATION_ENDS (stderr: %s)", rc, fbf_test_peer_stderr(p));
}

static void test_endpoint_reach(void **state)
{
    (void)state;
    static const struct {
        const char *endpoint;
        fbf_reach want;
    } cases[] = {
        {"tcp://127.0.0.1:28000", FBF_REACH_LOCAL},
        {"tcp://127.0.0.1:*", FBF_REACH_LOCAL},
        {"tcp://127.10.20.30:1", FBF_REACH_LOCAL},
        {"tcp://localhost:28000", FBF_REACH_LOCAL},
        {"tcp://LocalHost:28000", FBF_REACH_LOCAL},
        {"tcp://lo:28000", FBF_REACH_LOCAL},
        {"tcp://[::1]:28000", FBF_REACH_LOCAL},
        {"tcp://[::ffff:127.0.0.1]:28000", FBF_REACH_LOCAL},
        {"ws://127.0.0.1:8080/batsim", FBF_REACH_LOCAL},
        {"ipc:///tmp/fastbf.sock", FBF_REACH_LOCAL},
        {"inproc://fastbf", FBF_REACH_LOCAL},
        {"nonsense://x", FBF_REACH_LOCAL}, /* ZeroMQ refuses it itself */
        {"tcp://*:28000", FBF_REACH_NETWORK},
        {"tcp://0.0.0.0:28000", FBF_REACH_NETWORK},
        {"tcp://[::]:28000", FBF_REACH_NETWORK},
        {"tcp://[::ffff:10.0.0.1]:28000", FBF_REACH_NETWORK},
        {"tcp://192.168.1.5:28000", FBF_REACH_NETWORK},
        {"tcp://128.0.0.1:28000", FBF_REACH_NETWORK},
        {"tcp://eth0:28000", FBF_REACH_NETWORK},
        {"tcp://localhost.example.org:28000", FBF_REACH_NETWORK},
        {"tcp://:28000", FBF_REACH_NETWORK},
        {"ws://*:8080/batsim", FBF_REACH_NETWORK},
        {"epgm://eth0;239.192.1.1:5555", FBF_REACH_NETWORK},
        {"udp://*:5555", FBF_REACH_NETWORK},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_reach got = fbf_endpoint_reach(cases[i].endpoint);
        if (got != cases[i].want)
            fail_msg("%s: %s, want %s", cases[i].endpoint, got ? "network" : "local",
                     cases[i].want ? "network" : "local");
        fbf_error err = {{0}};
        int rc = fbf_endpoint_check_bind(cases[i].endpoint, false, &err);
        assert_int_equal(rc, cases[i].want == FBF_REACH_LOCAL ? 0 : -EACCES);
        assert_int_equal(fbf_endpoint_check_bind(cases[i].endpoint, true, NULL),
                         cases[i].want == FBF_REACH_LOCAL ? 0 : 1);
    }
}

/* A network-wide endpoint without --allow-remote: exit 2 before any bind,
 * one line saying what to do. */
static void test_network_endpoint_refused(void **state)
{
    (void)state;
    static const struct {
        const char *args[8];
        const char *want; /* the first line of stderr */
    } cases[] = {
        {{"--endpoint", "tcp://*:28000", NULL},
         "fastbf: tcp://*:28000 is not a loopback address: other machines could drive this "
         "fastbf; bind tcp://127.0.0.1:PORT (Batsim's tcp://localhost:PORT reaches it) or pass "
         "--allow-remote\n"},
        {{"--endpoint", "tcp://0.0.0.0:28000", "--policy", "fcfs", NULL},
         "fastbf: tcp://0.0.0.0:28000 is not a loopback address: "},
        {{"--protocol", "batsim5", "--endpoint", "tcp://*:28000", NULL},
         "fastbf: tcp://*:28000 is not a loopback address: "},
        {{"--protocol", "batsim5", "--endpoint", "tcp://[::]:28000", NULL},
         "fastbf: tcp://[::]:28000 is not a loopback address: "},
        {{"--endpoint", "tcp://eth0:28000", NULL},
         "fastbf: tcp://eth0:28000 is not a loopback address: "},
        {{"--protocol", "batsim2", "--socket", "/tmp/x.sock", "--allow-remote", NULL},
         "fastbf: --endpoint and --allow-remote are ZeroMQ's (batsim4, batsim5); batsim2 "
         "takes --socket\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *out = NULL, *err = NULL;
        int rc = fbf_test_run_fastbf(cases[i].args, EXIT_MS, &out, &err);
        if (rc != 2)
            fail_msg("case %zu: exit %d, want 2 (stderr: %s)", i, rc, err);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu: stderr \"%s\" does not begin with \"%s\"", i, err,
                     cases[i].want);
        assert_string_equal(out, "");
        free(out);
        free(err);
    }
}

/* --allow-remote binds every interface, says so once, and serves. */
static void test_allow_remote(void **state)
{
    (void)state;
    fbf_test_peer p;
    const char *args[] = {"--allow-remote", NULL};
    assert_int_equal(fbf_test_peer_start_on(&p, args, "0.0.0.0"), 0);
    short_session(&p);
    char *err = fbf_test_peer_stderr(&p);
    if (!strstr(err, "fastbf: warning: tcp://0.0.0.0:") ||
        !strstr(err, " is reachable from other machines (--allow-remote): the first peer to "
                     "speak drives this fastbf\n") ||
        fbf_test_count_lines(err) != 1)
        fail_msg("stderr: \"%s\", want the one warning line", err);
    free(err);
    fbf_test_peer_stop(&p);
}

/* Without --endpoint, fastbf listens on 127.0.0.1:28000 only, and Batsim's
 * default endpoint tcp://localhost:28000 reaches it. Skipped when
 * something else holds the port. */
static void test_default_endpoint(void **state)
{
    (void)state;
    fbf_test_peer p;
    const char *args[] = {NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, false), 0);
    bool listening = false, wildcard = false;
    for (int waited = 0; waited < 10000 && !listening; waited += 10) {
        FILE *f = fopen("/proc/net/tcp", "r");
        assert_non_null(f);
        char line[512];
        while (fgets(line, sizeof line, f)) {
            unsigned addr, port, st;
            if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &addr, &port, &st) == 3 &&
                port == 28000 && st == 0x0A) {
                listening = listening || addr == 0x0100007F;
                wildcard = wildcard || addr == 0;
            }
        }
        fclose(f);
        if (!listening) {
            char *err = fbf_test_peer_stderr(&p);
            bool busy = err && strstr(err, "Address already in use");
            free(err);
            if (busy) {
                fbf_test_peer_stop(&p);
                skip(); /* port 28000 is someone else's */
            }
            sleep_ms(10);
        }
    }
    assert_true(listening);
    assert_false(wildcard);
    p.zctx = zmq_ctx_new();
    p.sock = zmq_socket(p.zctx, ZMQ_REQ);
    assert_int_equal(zmq_connect(p.sock, "tcp://localhost:28000"), 0);
    short_session(&p);
    fbf_test_peer_stop(&p);
}

/* A JSON message of exactly n bytes: no events, padded with spaces. */
static char *padded(double now, size_t n)
{
    char head[64];
    int len = snprintf(head, sizeof head, "{\"now\":%g,\"events\":[]", now);
    assert_true(n > (size_t)len + 1);
    char *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, head, (size_t)len);
    memset(s + len, ' ', n - (size_t)len - 1);
    s[n - 1] = '}';
    s[n] = '\0';
    return s;
}

/* The session's peer: a message of exactly --max-message bytes is taken,
 * one byte more ends the run with a line that names the limit. */
static void test_session_peer_above_limit(void **state)
{
    (void)state;
    fbf_test_peer p;
    const char *args[] = {"--max-message", "4096", NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    char *reply = NULL;
    assert_true(fbf_test_peer_request(&p, fbf_test_obs_begins4, &reply, REPLY_MS) > 0);
    free(reply);
    char *at = padded(1, 4096), *above = padded(2, 4097);
    if (fbf_test_peer_request(&p, at, &reply, REPLY_MS) <= 0)
        fail_msg("no reply to a message of exactly --max-message bytes (stderr: %s)",
                 fbf_test_peer_stderr(&p));
    assert_string_equal(reply, "{\"now\":1,\"events\":[]}");
    free(reply);
    long got = fbf_test_peer_request(&p, above, &reply, 2000);
    free(reply);
    free(at);
    free(above);
    int rc = fbf_test_peer_wait(&p, EXIT_MS);
    char *err = fbf_test_peer_stderr(&p);
    if (got >= 0 || rc != 1)
        fail_msg("a message above --max-message: reply %ld, exit %d, want none and 1 (stderr: "
                 "%s)",
                 got, rc, err);
    /* Batsim did not leave: its REQ socket reconnected, waiting for a reply. */
    assert_string_equal(err, "fastbf: cannot take Batsim's message #3: ZeroMQ dropped it "
                             "unread with its connection, as it does with a message above "
                             "--max-message 4096 bytes or larger than this process can "
                             "allocate; Batsim, still connected, waits for a reply\n");
    free(err);
    fbf_test_peer_stop(&p);
}

/* Another peer's oversized message: a line on stderr, and the session,
 * whose peer comes after, runs as if nothing had happened. */
static void test_other_peer_above_limit(void **state)
{
    (void)state;
    fbf_test_peer p;
    const char *args[] = {"--max-message", "4096", NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    char *big = padded(0, 5000), *reply = NULL;
    const char *frames[] = {big};
    long got = fbf_test_zmq_ask(p.endpoint, frames, 1, &reply, 1000);
    free(reply);
    free(big);
    assert_int_equal(got, -EAGAIN);
    if (!stderr_shows(&p, "fastbf: a peer that is not the session's disconnected (connection "
                          "fd ",
                      5000))
        fail_msg("no line about the oversized message: %s", fbf_test_peer_stderr(&p));
    assert_true(stderr_shows(&p, "); ZeroMQ also ends a connection whose message it cannot "
                                 "take unread: above --max-message 4096 bytes, or more than "
                                 "this process can allocate\n",
                             0));
    short_session(&p);
    fbf_test_peer_stop(&p);
}

/* VmPeak of pid in KiB, or -1. */
static long vm_peak_kib(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmPeak: %ld kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/* Reads n bytes (up to 5 s); false when the connection ends first. */
static bool read_exactly(int fd, unsigned char *buf, size_t n)
{
    for (size_t got = 0; got < n;) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 5000) <= 0)
            return false;
        ssize_t r = recv(fd, buf + got, n - got, 0);
        if (r <= 0)
            return false;
        got += (size_t)r;
    }
    return true;
}

/* Speaks ZMTP 3.0 as a REQ peer over a raw TCP connection, then sends a
 * message frame whose 8-byte header claims `claim` bytes, followed by
 * `sent` bytes of it. Returns the connection. */
static int raw_claim(int port, uint64_t claim, size_t sent)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
    unsigned char hello[64 + 27] = {0xFF, [9] = 0x7F, [10] = 3, [11] = 0};
    memcpy(hello + 12, "NULL", 4); /* mechanism, then as-server 0 and filler */
    static const unsigned char ready[] = {0x04, 25, 5, 'R', 'E', 'A', 'D', 'Y', 11, 'S', 'o',
                                          'c', 'k', 'e', 't', '-', 'T', 'y', 'p', 'e', 0, 0, 0,
                                          3, 'R', 'E', 'Q'};
    memcpy(hello + 64, ready, sizeof ready);
    assert_int_equal(send(fd, hello, sizeof hello, MSG_NOSIGNAL), (ssize_t)sizeof hello);
    /* fastbf's greeting and READY first: a frame that comes before the
     * handshake is over fails it, and would never reach the size check. */
    unsigned char in[64 + 9];
    assert_true(read_exactly(fd, in, 64 + 2));
    size_t cmd = in[64] & 0x02 ? 0 : in[65];
    assert_true((in[64] & 0x02) == 0 && read_exactly(fd, in, cmd));
    unsigned char frames[2 + 9], *c = frames;
    *c++ = 0x01; /* the empty delimiter frame, more to come */
    *c++ = 0x00;
    *c++ = 0x02; /* a long frame, last: its size, big-endian */
    for (int i = 7; i >= 0; i--)
        *c++ = (unsigned char)(claim >> (8 * i));
    assert_int_equal(send(fd, frames, sizeof frames, MSG_NOSIGNAL), (ssize_t)sizeof frames);
    static char chunk[65536];
    for (size_t done = 0; done < sent;) {
        ssize_t n = send(fd, chunk, sent - done < sizeof chunk ? sent - done : sizeof chunk,
                         MSG_NOSIGNAL);
        if (n <= 0)
            break; /* closed on us already */
        done += (size_t)n;
    }
    return fd;
}

/* True when fastbf closes fd within ms (reading whatever it sent). */
static bool closed_by_peer(int fd, int ms)
{
    char buf[4096];
    for (int waited = 0; waited < ms; waited += 50) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 50) > 0) {
            ssize_t n = recv(fd, buf, sizeof buf, 0);
            if (n == 0 || (n < 0 && errno == ECONNRESET))
                return true;
        }
    }
    return false;
}

static void test_frame_header_claims(void **state)
{
    (void)state;
    static const struct {
        uint64_t claim;
        size_t sent;
    } cases[] = {
        {(uint64_t)1 << 40, 0},       /* 1 TiB claimed, nothing of it sent */
        {(uint64_t)16 << 30, 1 << 20}, /* 16 GiB claimed, 1 MiB of it sent */
        {((uint64_t)512 << 20) + 1, 4096}, /* one byte above the default limit */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_test_peer p;
        const char *args[] = {NULL};
        assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
        int fd = raw_claim(p.port, cases[i].claim, cases[i].sent);
        bool closed = closed_by_peer(fd, 5000);
        close(fd);
        long peak = vm_peak_kib(p.pid);
        if (!closed)
            fail_msg("case %zu: a frame of %llu bytes announced: the connection is still open "
                     "5 s later (VmPeak %ld KiB)",
                     i, (unsigned long long)cases[i].claim, peak);
#if !defined(FBF_TEST_UNDER_SAN) && !defined(FBF_TEST_UNDER_TSAN)
        if (peak > 4L << 20)
            fail_msg("case %zu: a frame of %llu bytes announced took fastbf's address space "
                     "to %ld KiB",
                     i, (unsigned long long)cases[i].claim, peak);
#endif
        assert_true(stderr_shows(&p, "above --max-message 536870912 bytes, or more than this "
                                     "process can allocate",
                                 5000));
        short_session(&p);
        fbf_test_peer_stop(&p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint_reach),
        cmocka_unit_test(test_network_endpoint_refused),
        cmocka_unit_test(test_allow_remote),
        cmocka_unit_test(test_default_endpoint),
        cmocka_unit_test(test_session_peer_above_limit),
        cmocka_unit_test(test_other_peer_above_limit),
        cmocka_unit_test(test_frame_header_claims),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
