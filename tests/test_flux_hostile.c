/*
 * test_flux_hostile: fastbf --protocol flux as a process, over its
 * socket, with job data in a real Redis (support/redis_server):
 *  - the malformed and out-of-order messages of support/flux_bad_cases,
 *    sent one after the other to one fastbf: each gets the answer the
 *    case wants (an error response naming the topic and the field, or
 *    nothing for a message that wants none) and one line on stderr, and
 *    the session goes on: the last instant answers as if none had come,
 *    and sim.end ends fastbf with status 0;
 *  - a second job manager is refused (EPERM, a line naming it) and
 *    changes nothing;
 *  - the hello answered with an error: fastbf sends job-manager.disconnect
 *    and exits 1 with the error; the job manager gone: exit 1; a message
 *    above --max-message: ZeroMQ drops it, fastbf says so and exits 1;
 *  - the command line: a network-wide endpoint without --allow-remote,
 *    options of another protocol, an unreachable Redis.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "support/flux_bad_cases.h"
#include "support/flux_peer.h"
#include "support/redis_server.h"
#include "support/testkit.h"

#define MS 20000
#define REQ FBF_FLUX_REQUEST
#define RESP FBF_FLUX_RESPONSE

static char port_text[16];

static void jobspec(uint64_t id, int64_t ncores, double duration)
{
    char key[64];
    fbf_flux_key(key, sizeof key, id, "jobspec");
    fbf_jbuf b = {0};
    fbf_flux_jobspec_put(&b, ncores, duration, "sleep");
    fbf_test_redis_set(fbf_test_redis_shared(), key, b.p);
    fbf_jbuf_fini(&b);
}

static void start(fbf_test_flux_peer *p, const char *policy)
{
    snprintf(port_text, sizeof port_text, "%d", fbf_test_redis_shared()->port);
    const char *args[] = {"--policy", policy, "--flux-ranks", "1", "--flux-cores", "4",
                          "--redis-port", port_text, NULL};
    assert_int_equal(fbf_test_flux_peer_start(p, args), 0);
}

/* Receives one message, which must come. */
static const char *recv1(void *sock)
{
    static char line[8192];
    int rc = fbf_test_flux_sock_recv(sock, line, sizeof line, MS);
    if (rc < 0)
        fail_msg("no message from fastbf (%s)", strerror(-rc));
    return line;
}

static void handshake(fbf_test_flux_peer *p)
{
    fbf_test_flux_sock_send(p->sock, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                            FBF_FLUX_ATTACH, NULL);
    assert_string_equal(recv1(p->sock), "req job-manager.sched-hello e=4294967295 m=1 -\n");
    fbf_test_flux_sock_send(p->sock, RESP, 0, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}");
    assert_string_equal(recv1(p->sock),
                        "req job-manager.sched-ready e=4294967295 m=2 {\"mode\":\"unlimited\"}\n");
    fbf_test_flux_sock_send(p->sock, RESP, 0, 0, 2, FBF_FLUX_READY, NULL);
}

/* Sends a case's frames, then a probe whose answer is known; returns
 * what came before the probe's answer. */
static const char *answer_of(void *sock, const fbf_test_flux_bad *c)
{
    static char all[8192];
    const void *data[4];
    size_t len[4];
    unsigned char scratch[4][64];
    size_t n = fbf_test_flux_bad_frames(c, data, len, scratch);
    assert_int_equal(fbf_test_flux_sock_frames(sock, data, len, n), 0);
    fbf_test_flux_sock_send(sock, REQ, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_FREE, "{\"id\":99999}");
    static const char probe[] = "resp sched.free e=2 m=0 sched.free: id: unknown job 99999: "
                                "it holds nothing\n";
    all[0] = '\0';
    for (;;) {
        const char *l = recv1(sock);
        if (strcmp(l, probe) == 0)
            return all;
        strncat(all, l, sizeof all - strlen(all) - 1);
    }
}

static int count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void bad_cases_over_the_socket(void **state)
{
    jobspec(1, 4, 100);
    jobspec(2, 2, 10);
    jobspec(3, 1, 10);
    jobspec(4, 1, 10);
    fbf_test_flux_peer p;
    start(&p, "easy");
    handshake(&p);
    size_t ns;
    const fbf_test_flux_bad *script = fbf_test_flux_bad_script(&ns);
    char got[8192] = "";
    for (size_t i = 0; i < ns; i++) {
        const void *data[4];
        size_t len[4];
        unsigned char scratch[4][64];
        size_t n = fbf_test_flux_bad_frames(&script[i], data, len, scratch);
        fbf_test_flux_sock_frames(p.sock, data, len, n);
        if (fbf_flux_msg_is(&(fbf_flux_msg){.topic = script[i].topic,
                                            .topic_len = strlen(script[i].topic)},
                            FBF_FLUX_INSTANT)) {
            const char *l;
            got[0] = '\0';
            do {
                l = recv1(p.sock);
                strncat(got, l, sizeof got - strlen(got) - 1);
            } while (strncmp(l, "resp sim.instant", 16) != 0);
        }
    }
    assert_string_equal(got, "resp sched.alloc e=0 m=0 {\"id\":2,\"type\":1,\"annotations\":"
                             "{\"sched\":{\"t_estimate\":101,\"reason_pending\":\"insufficient "
                             "resources: reserved at its t_estimate\"}}}\n"
                             "resp sim.instant e=0 m=7 {\"now\":2}\n");
    size_t n;
    const fbf_test_flux_bad *bad = fbf_test_flux_bad_cases(&n);
    for (size_t i = 0; i < n; i++)
        fbf_test_flux_bad_expect(NULL, &bad[i], answer_of(p.sock, &bad[i]), bad[i].text);
    char *err = fbf_test_peer_stderr(&p.proc);
    for (size_t i = 0; i < n; i++) {
        char line[1024];
        snprintf(line, sizeof line, "fastbf: refused a message from the job manager: %s\n",
                 bad[i].text);
        if (count(err, line) < 1)
            fail_msg("case \"%s\": stderr lacks \"%s\"", bad[i].name, line);
    }
    /* n cases and n probes, one line each, and nothing else. */
    assert_int_equal(count(err, "fastbf: refused"), 2 * (int)n);
    free(err);
    /* Nothing of them was applied. */
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_FREE, "{\"id\":1}");
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 7, FBF_FLUX_INSTANT,
                            "{\"now\":3}");
    got[0] = '\0';
    for (int i = 0; i < 3; i++)
        strncat(got, recv1(p.sock), sizeof got - strlen(got) - 1);
    assert_string_equal(got, fbf_test_flux_bad_after_answer);
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 6, FBF_FLUX_END, NULL);
    assert_string_equal(recv1(p.sock), "resp sim.end e=0 m=6 {}\n");
    assert_int_equal(fbf_test_peer_wait(&p.proc, MS), 0);
    fbf_test_flux_peer_stop(&p);
}

/* Another job manager: refused, with EPERM to its requests and a line,
 * and the session does not notice. */
static void second_job_manager_refused(void **state)
{
    jobspec(5, 1, 10);
    fbf_test_flux_peer p;
    start(&p, "fcfs");
    handshake(&p);
    void *other = fbf_test_flux_peer_another(&p);
    assert_non_null(other);
    fbf_test_flux_sock_send(other, REQ, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ALLOC,
                            "{\"id\":5,\"priority\":1,\"userid\":1}");
    assert_string_equal(recv1(other), "resp sched.alloc e=1 m=0 another job manager holds this "
                                      "session: fastbf answers only the job manager that "
                                      "attached first\n");
    fbf_test_flux_sock_send(other, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                            FBF_FLUX_ATTACH, NULL);
    char line[256];
    assert_int_equal(fbf_test_flux_sock_recv(other, line, sizeof line, 300), -EAGAIN);
    /* The session's job 5 was never allocated: its own alloc works. */
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ALLOC,
                            "{\"id\":5,\"priority\":1,\"userid\":1}");
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 7, FBF_FLUX_INSTANT,
                            "{\"now\":0}");
    assert_string_equal(recv1(p.sock), "resp sched.alloc e=0 m=0 {\"id\":5,\"type\":0,"
                                       "\"annotations\":{\"sched\":{\"resource_summary\":"
                                       "\"rank0/core0\"}}}\n");
    assert_string_equal(recv1(p.sock), "resp sim.instant e=0 m=7 {\"now\":0}\n");
    char *err = fbf_test_peer_stderr(&p.proc);
    assert_int_equal(count(err, "fastbf: refused a message from a peer that is not the "
                                "session's job manager ("),
                     2);
    free(err);
    fbf_test_flux_sock_close(other);
    fbf_test_flux_peer_stop(&p);
}

/* hello answered with an error: RFC 27 says the scheduler exits; it
 * tells the job manager first (disconnect). */
static void hello_error_disconnects(void **state)
{
    fbf_test_flux_peer p;
    start(&p, "easy");
    fbf_test_flux_sock_send(p.sock, REQ, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                            FBF_FLUX_ATTACH, NULL);
    recv1(p.sock);
    fbf_test_flux_sock_send(p.sock, RESP, 0, 38, 1, FBF_FLUX_HELLO, "no such service");
    assert_string_equal(recv1(p.sock), "req job-manager.disconnect e=4294967295 m=0 -\n");
    assert_int_equal(fbf_test_peer_wait(&p.proc, MS), 1);
    char *err = fbf_test_peer_stderr(&p.proc);
    assert_string_equal(err, "fastbf: job-manager.sched-hello: the job manager answered error 38 "
                             "(Function not implemented): no such service\n");
    free(err);
    fbf_test_flux_peer_stop(&p);
}

/* The job manager goes away mid-session: fastbf says so and exits 1. */
static void job_manager_lost(void **state)
{
    fbf_test_flux_peer p;
    start(&p, "easy");
    handshake(&p);
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 7, FBF_FLUX_INSTANT,
                            "{\"now\":0}");
    recv1(p.sock);
    fbf_test_flux_sock_close(p.sock);
    p.sock = NULL;
    assert_int_equal(fbf_test_peer_wait(&p.proc, MS), 1);
    char *err = fbf_test_peer_stderr(&p.proc);
    assert_non_null(strstr(err, "fastbf: the job manager disconnected after 4 messages, before "
                                "sim.end"));
    free(err);
    fbf_test_flux_peer_stop(&p);
}

/* A message above --max-message: ZeroMQ refuses it unread and ends the
 * connection; the job manager reconnects, and fastbf says why it stops. */
static void message_too_large(void **state)
{
    snprintf(port_text, sizeof port_text, "%d", fbf_test_redis_shared()->port);
    const char *args[] = {"--policy", "easy", "--redis-port", port_text, "--max-message", "4096",
                          NULL};
    fbf_test_flux_peer p;
    assert_int_equal(fbf_test_flux_peer_start(&p, args), 0);
    handshake(&p);
    char *big = malloc(9000);
    memset(big, ' ', 8999);
    big[0] = '{';
    big[8997] = '}';
    big[8998] = '\0';
    fbf_test_flux_sock_send(p.sock, REQ, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ALLOC, big);
    free(big);
    assert_int_equal(fbf_test_peer_wait(&p.proc, MS), 1);
    char *err = fbf_test_peer_stderr(&p.proc);
    if (!strstr(err, "fastbf: the job manager's message was refused unread after 3 messages: "
                     "above --max-message 4096 bytes"))
        fail_msg("stderr: %s", err);
    free(err);
    fbf_test_flux_peer_stop(&p);
}

static void command_line(void **state)
{
    char dead[16];
    snprintf(dead, sizeof dead, "%d", fbf_test_redis_dead_port());
    static const struct {
        const char *args[10];
        int rc;
        const char *want;
    } cases[] = {
        {{"--protocol", "flux", "--endpoint", "tcp://0.0.0.0:28999", NULL}, 2,
         "--allow-remote"},
        {{"--protocol", "flux", "--flux-mode", "limited", NULL}, 2,
         "fastbf: --flux-mode: 'limited' is not single or unlimited\n"},
        {{"--flux-ranks", "4", NULL}, 2,
         "fastbf: --flux-mode, --flux-ranks and --flux-cores go with --protocol flux\n"},
        {{"--protocol", "flux", "--flux-ranks", "65536", "--flux-cores", "65536", NULL}, 2,
         "fastbf: --flux-ranks x --flux-cores: at most 2^31 cores in all\n"},
        {{"--protocol", "flux", "--kill-after", "5", NULL}, 2, "RFC 27 has no kill"},
        {{"--redis-port", "7000", NULL}, 2,
         "fastbf: --redis-host and --redis-port go with --protocol batsim2 or flux\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *err = NULL;
        int rc = fbf_test_run_fastbf(cases[i].args, MS, NULL, &err);
        if (rc != cases[i].rc || !strstr(err, cases[i].want))
            fail_msg("case %zu: exit %d, stderr \"%s\"; want %d and \"%s\"", i, rc, err,
                     cases[i].rc, cases[i].want);
        free(err);
    }
    const char *args[] = {"--protocol", "flux", "--redis-port", dead, NULL};
    char *err = NULL;
    assert_int_equal(fbf_test_run_fastbf(args, MS, NULL, &err), 1);
    assert_non_null(strstr(err, "fastbf: cannot connect to Redis at 127.0.0.1:"));
    free(err);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(bad_cases_over_the_socket),
        cmocka_unit_test(second_job_manager_refused),
        cmocka_unit_test(hello_error_disconnects),
        cmocka_unit_test(job_manager_lost),
        cmocka_unit_test(message_too_large),
        cmocka_unit_test(command_line),
    };
    return cmocka_run_group_tests(tests, fbf_test_redis_group_setup,
                                  fbf_test_redis_group_teardown);
}
