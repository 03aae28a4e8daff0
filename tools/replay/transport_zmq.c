/*
 * transport_zmq: the two ZeroMQ transports of fastbf-replay (see
 * transport.h): a REQ socket connected to a scheduler's endpoint, and the
 * same with a scheduler process this replayer starts and must clean up.
 *
 * Waiting for a reply is one blocking receive with no timeout: a receive
 * with a timeout arms and cancels a kernel timer on every wait, a visible
 * share of a loopback round trip. A watcher thread looks every
 * WATCH_SLICE_MS at the exchange in flight instead: when it has waited
 * longer than --timeout, or when the spawned scheduler has exited (seen
 * with WNOWAIT, so that the reaping and its status stay with the caller's
 * thread), it records why and shuts the context down (zmq_ctx_shutdown is
 * thread-safe), which makes the receive fail with ETERM. A scheduler that
 * dies is so reported within a slice with its exit status, instead of
 * after the full --timeout.
 *
 * Invariants: the socket is only touched by the calling thread; reply_msg
 * holds the last reply until the next exchange; child.pid > 0 while a
 * spawned process may still be alive and unreaped, and it does not change
 * while the watcher runs; the watcher shares only inflight_ns, why and
 * (under mu) stop. Starting and stopping the child: child.c.
 */
#include "tools/replay/transport.h"
#include "tools/replay/child.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#define WATCH_SLICE_MS 100

typedef struct zmq_tr {
    fbf_transport base;
    void *ctx, *sock;
    zmq_msg_t reply_msg;
    bool have_reply;
    double timeout_s;
    fbf_child child;  /* pid 0: none */
    /* The watcher (started by the first exchange). */
    pthread_t watcher;
    bool watching;
    pthread_mutex_t mu;
    pthread_cond_t wake;
    bool stop;                  /* under mu */
    atomic_llong inflight_ns;   /* when the exchange in flight began; 0: none */
    atomic_int why;             /* WHY_*: why the watcher shut the context down */
} zmq_tr;

enum { WHY_NONE, WHY_TIMEOUT, WHY_CHILD };

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *watch_main(void *arg)
{
    zmq_tr *t = arg;
    long long limit = (long long)fmin(t->timeout_s * 1e9, 9e18);
    /* A scheduler may send its last reply and exit at once: the reply can
     * still be on its way through ZeroMQ when the exit is seen, so the
     * exchange is given up only once the exit is this old. */
    const long long grace = 500 * 1000000LL;
    long long gone_at = 0; /* when the child's exit was first seen */
    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WATCH_SLICE_MS * 1000000L;
        until.tv_sec += until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&t->wake, &t->mu, &until);
        long long since = atomic_load(&t->inflight_ns);
        if (t->stop || since == 0)
            continue;
        long long now = mono_ns();
        bool exited = t->child.pid > 0 && fbf_child_exited(&t->child);
        if (exited && gone_at == 0)
            gone_at = now;
        int why = exited && now - gone_at >= grace ? WHY_CHILD
                  : now - since >= limit         ? WHY_TIMEOUT
                                                 : WHY_NONE;
        if (why != WHY_NONE) {
            atomic_store(&t->why, why);
            zmq_ctx_shutdown(t->ctx);
            break;
        }
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

static void watch_stop(zmq_tr *t)
{
    if (!t->watching)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->wake);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->watcher, NULL);
    t->watching = false;
}

static int zmq_exchange(fbf_transport *base, const char *req, size_t len, const char **reply,
                        size_t *reply_len, fbf_error *err)
{
    zmq_tr *t = (zmq_tr *)base;
    if (t->have_reply) {
        zmq_msg_close(&t->reply_msg);
        t->have_reply = false;
    }
    if (!t->watching) {
        if (pthread_create(&t->watcher, NULL, watch_main, t) != 0)
            return fbf_errorf(err, -EAGAIN, "cannot start the thread that watches %s",
                              t->base.what);
        t->watching = true;
    }
    atomic_store(&t->inflight_ns, mono_ns());
    while (zmq_send(t->sock, req, len, 0) < 0) {
        if (errno == EINTR)
            continue;
        atomic_store(&t->inflight_ns, 0);
        if (errno == EAGAIN)
            return fbf_errorf(err, -ETIMEDOUT, "could not send to %s within %g s",
                              t->base.what, t->timeout_s);
        return fbf_errorf(err, -EIO, "sending to %s: %s", t->base.what, zmq_strerror(errno));
    }
    zmq_msg_init(&t->reply_msg);
    while (zmq_msg_recv(&t->reply_msg, t->sock, 0) < 0) {
        int e = errno;
        if (e == EINTR)
            continue;
        atomic_store(&t->inflight_ns, 0);
        zmq_msg_close(&t->reply_msg);
        int why = e == ETERM ? atomic_load(&t->why) : WHY_NONE;
        if (why == WHY_CHILD && fbf_child_gone(&t->child)) {
            char how[96];
            fbf_child_describe(t->child.status, how, sizeof how);
            return fbf_errorf(err, -ECHILD, "the scheduler %s before replying", how);
        }
        if (why != WHY_NONE)
            return fbf_errorf(err, -ETIMEDOUT,
                              "no reply from the scheduler at %s within %g s (--timeout)",
                              t->base.what, t->timeout_s);
        return fbf_errorf(err, -EIO, "receiving from %s: %s", t->base.what, zmq_strerror(e));
    }
    atomic_store(&t->inflight_ns, 0);
    t->have_reply = true;
    *reply = zmq_msg_data(&t->reply_msg);
    *reply_len = zmq_msg_size(&t->reply_msg);
    return 0;
}

static int zmq_finish(fbf_transport *base, fbf_error *err)
{
    zmq_tr *t = (zmq_tr *)base;
    return fbf_child_finish(&t->child, "SIMULATION_ENDS", err);
}

static void zmq_destroy(fbf_transport *base)
{
    zmq_tr *t = (zmq_tr *)base;
    watch_stop(t); /* before the context goes: the watcher may shut it down */
    if (t->have_reply)
        zmq_msg_close(&t->reply_msg);
    if (t->sock)
        zmq_close(t->sock);
    if (t->ctx)
        zmq_ctx_term(t->ctx);
    if (t->child.pid > 0)
        fbf_child_kill(&t->child);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->wake);
    free(t);
}

static const fbf_transport_ops zmq_ops = {zmq_exchange, zmq_finish, zmq_destroy, NULL};

static zmq_tr *zmq_open(const char *endpoint, double timeout_s, fbf_error *err)
{
    if (!(timeout_s > 0)) {
        fbf_errorf(err, -EINVAL, "timeout %g is not > 0", timeout_s);
        return NULL;
    }
    zmq_tr *t = calloc(1, sizeof *t);
    if (!t) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    t->base.ops = &zmq_ops;
    t->timeout_s = timeout_s;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->wake, NULL);
    snprintf(t->base.what, sizeof t->base.what, "%s", endpoint);
    t->ctx = zmq_ctx_new();
    t->sock = t->ctx ? zmq_socket(t->ctx, ZMQ_REQ) : NULL;
    if (!t->sock) {
        fbf_errorf(err, -EIO, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        zmq_destroy(&t->base);
        return NULL;
    }
    int linger = 0;
    int sndto = timeout_s * 1000 > 1e9 ? -1 : (int)ceil(timeout_s * 1000);
    zmq_setsockopt(t->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(t->sock, ZMQ_SNDTIMEO, &sndto, sizeof sndto);
    /* A scheduler started by the replayer binds a little after the
     * connect: retry within a millisecond, backing off to ZeroMQ's usual
     * 100 ms, rather than waiting 100 ms from the first refusal. */
    int ivl = 1, ivl_max = 100;
    zmq_setsockopt(t->sock, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl);
    zmq_setsockopt(t->sock, ZMQ_RECONNECT_IVL_MAX, &ivl_max, sizeof ivl_max);
    if (zmq_connect(t->sock, endpoint) != 0) {
        fbf_errorf(err, -EINVAL, "cannot connect to '%s': %s", endpoint, zmq_strerror(errno));
        zmq_destroy(&t->base);
        return NULL;
    }
    return t;
}

fbf_transport *fbf_transport_connect(const char *endpoint, double timeout_s, fbf_error *err)
{
    zmq_tr *t = zmq_open(endpoint, timeout_s, err);
    return t ? &t->base : NULL;
}

char *fbf_transport_command(const char *cmd, const char *endpoint)
{
    return fbf_child_command(cmd, "{endpoint}", "--endpoint", endpoint);
}

/* Binds 127.0.0.1:port (0: any) and lets it go: the port bound, or a
 * negative errno. */
static int probe_port(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t al = sizeof a;
    int rc = bind(fd, (struct sockaddr *)&a, sizeof a) < 0 ||
                     getsockname(fd, (struct sockaddr *)&a, &al) < 0
                 ? -errno
                 : ntohs(a.sin_port);
    close(fd);
    return rc;
}

/* The first port of the kernel's ephemeral range, or 0 if unknown. */
static int ephemeral_low(void)
{
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int lo = 0, hi = 0;
    if (f) {
        if (fscanf(f, "%d %d", &lo, &hi) != 2)
            lo = 0;
        fclose(f);
    }
    return lo;
}

/*
 * A port nobody listens on now, for the scheduler to bind. Ports of the
 * ephemeral range go to every bind of port 0 on the machine: one probed
 * that way and let go can be handed to another process (another replay's
 * scheduler, anything binding "tcp://127.0.0.1:*") before ours binds it,
 * and this replay would then exchange with that process without knowing.
 * So the port is drawn at random from the 16384 ports below the range,
 * where no bind of port 0 lands, and probed free; bind(0) is the fallback
 * when the range is unknown or 64 draws find nothing.
 */
static int free_port(fbf_error *err)
{
    int lo = ephemeral_low(), base = lo - 16384 > 1024 ? lo - 16384 : 1024;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_nsec;
    for (int i = 0; lo > base && i < 64; i++) {
        x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
        int port = base + (int)((x >> 16) % (uint64_t)(lo - base));
        if (probe_port(port) == port)
            return port;
    }
    int port = probe_port(0);
    if (port < 0)
        return fbf_errorf(err, port, "cannot find a free port: %s", strerror(-port));
    return port;
}

fbf_transport *fbf_transport_spawn(const char *cmd, double timeout_s, fbf_error *err)
{
    int port = free_port(err);
    if (port < 0)
        return NULL;
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "tcp://127.0.0.1:%d", port);
    char *full = fbf_transport_command(cmd, endpoint);
    if (!full) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    zmq_tr *t = zmq_open(endpoint, timeout_s, err);
    if (!t) {
        free(full);
        return NULL;
    }
    int rc = fbf_child_spawn(&t->child, full, err);
    free(full);
    if (rc < 0) {
        zmq_destroy(&t->base);
        return NULL;
    }
    snprintf(t->base.what, sizeof t->base.what, "%s (pid %d)", endpoint, (int)t->child.pid);
    return &t->base;
}
