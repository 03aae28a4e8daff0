/*
 * echo: the baseline for "is the replayer the bottleneck over a socket?".
 *
 * fastbf-replay --echo-bench N times N round trips of a fixed-size message
 * between a ZeroMQ REQ socket and a REP socket that sends every message
 * straight back, over TCP on 127.0.0.1 (the transport --scheduler uses),
 * with the echo side in a child process, as a scheduler started with
 * --scheduler is. No JSON, no scheduling: the ceiling any Batsim-protocol
 * exchange over this transport can reach. A replay over the socket that
 * comes close to this rate spends its time in ZeroMQ and the kernel, not in
 * the replayer.
 *
 * Invariants: the child is forked before the parent creates any ZeroMQ
 * context (a context does not survive fork); it binds a free port, writes
 * the endpoint into a pipe, and stops at an empty message.
 */
#include "tools/replay/echo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "tools/replay/replay.h"

static void echo_serve(void *sock)
{
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, 0) < 0) {
            zmq_msg_close(&m);
            if (errno == EINTR)
                continue;
            return;
        }
        size_t n = zmq_msg_size(&m);
        zmq_msg_send(&m, sock, 0); /* zero copy: the same message goes back */
        zmq_msg_close(&m);
        if (n == 0)
            return;
    }
}

/* The echo process: binds, reports its endpoint on fd, serves. */
static _Noreturn void echo_child(int fd)
{
    void *ctx = zmq_ctx_new();
    void *rep = zmq_socket(ctx, ZMQ_REP);
    char ep[256] = "";
    size_t eplen = sizeof ep;
    int linger = 1000;
    zmq_setsockopt(rep, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(rep, "tcp://127.0.0.1:*") != 0 ||
        zmq_getsockopt(rep, ZMQ_LAST_ENDPOINT, ep, &eplen) != 0)
        ep[0] = '\0';
    if (write(fd, ep, sizeof ep) != (ssize_t)sizeof ep || !ep[0])
        _exit(1);
    close(fd);
    echo_serve(rep);
    zmq_close(rep);
    zmq_ctx_term(ctx);
    _exit(0);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int fbf_echo_bench(size_t n, size_t size, FILE *out)
{
    int fds[2];
    pid_t child;
    char ep[256];
    if (pipe(fds) != 0 || (child = fork()) < 0) {
        fprintf(stderr, "fastbf-replay: echo bench: %s\n", strerror(errno));
        return FBF_EXIT_INTERNAL;
    }
    if (child == 0) {
        close(fds[0]);
        echo_child(fds[1]);
    }
    close(fds[1]);
    ssize_t got = read(fds[0], ep, sizeof ep);
    close(fds[0]);
    void *ctx = zmq_ctx_new();
    void *req = zmq_socket(ctx, ZMQ_REQ);
    int linger = 0;
    zmq_setsockopt(req, ZMQ_LINGER, &linger, sizeof linger);
    if (got != (ssize_t)sizeof ep || !ep[0] || zmq_connect(req, ep) != 0) {
        fprintf(stderr, "fastbf-replay: echo bench: the echo process did not start\n");
        zmq_close(req);
        zmq_ctx_term(ctx);
        waitpid(child, NULL, 0);
        return FBF_EXIT_INTERNAL;
    }
    char *buf = malloc(size ? size : 1), *back = malloc(size + 1);
    double *lat = malloc((n ? n : 1) * sizeof *lat);
    if (!buf || !back || !lat)
        return FBF_EXIT_INTERNAL;
    memset(buf, 'x', size);
    size_t warm = n < 1000 ? n : 1000;
    for (size_t i = 0; i < warm; i++) { /* connect and fill the caches first */
        zmq_send(req, buf, size, 0);
        zmq_recv(req, back, size + 1, 0);
    }
    double t0 = fbf_replay_now_s();
    for (size_t i = 0; i < n; i++) {
        double a = fbf_replay_now_s();
        zmq_send(req, buf, size, 0);
        zmq_recv(req, back, size + 1, 0);
        lat[i] = fbf_replay_now_s() - a;
    }
    double total = fbf_replay_now_s() - t0;
    zmq_send(req, "", 0, 0);
    zmq_recv(req, back, size + 1, 0);
    waitpid(child, NULL, 0);
    qsort(lat, n, sizeof *lat, cmp_double);
    if (n) {
        size_t k50 = (n + 1) / 2, k99 = (size_t)((double)n * 0.99 + 0.999999);
        fprintf(out,
                "echo bench: %zu round trips of %zu bytes over %s: %.3f s, %.0f round trips/s, "
                "latency p50 %.2f us, p99 %.2f us, max %.2f us\n",
                n, size, ep, total, (double)n / total, lat[k50 - 1] * 1e6,
                lat[(k99 ? k99 : 1) - 1] * 1e6, lat[n - 1] * 1e6);
    }
    free(buf);
    free(back);
    free(lat);
    zmq_close(req);
    zmq_ctx_term(ctx);
    return FBF_EXIT_OK;
}
