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
 * holds the last reply until the next exchange; child > 0 while a spawned
 * process may still be alive and unreaped, and it does not change while
 * the watcher runs; the watcher shares only inflight_ns, why and (under
 * mu) stop. The signal handler only reads g_child_pgid (sig_atomic_t) and
 * kills that one process group.
 */
#include "tools/replay/transport.h"

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
#define FINISH_GRACE_S 5.0 /* how long a scheduler may linger after SIMULATION_ENDS */
#define KILL_GRACE_S 1.0   /* between SIGTERM and SIGKILL */

typedef struct zmq_tr {
    fbf_transport base;
    void *ctx, *sock;
    zmq_msg_t reply_msg;
    bool have_reply;
    double timeout_s;
    pid_t child;      /* 0: none, or reaped */
    int child_status; /* valid once reaped */
    bool reaped;
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

static volatile sig_atomic_t g_child_pgid;

static long long mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double mono_s(void) { return (double)mono_ns() * 1e-9; }

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

static void describe_status(int status, char *buf, size_t cap)
{
    if (WIFEXITED(status))
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "ended with wait status %d", status);
}

/* True once the child has exited (and is reaped). */
static bool child_gone(zmq_tr *t)
{
    if (t->child <= 0)
        return true;
    if (t->reaped)
        return true;
    int st;
    pid_t r = waitpid(t->child, &st, WNOHANG);
    if (r == t->child || (r < 0 && errno == ECHILD)) {
        t->reaped = true;
        t->child_status = r == t->child ? st : 0;
        g_child_pgid = 0;
        return true;
    }
    return false;
}

/* Waits up to s seconds for the child to exit. */
static bool wait_child(zmq_tr *t, double s)
{
    double until = mono_s() + s;
    while (!child_gone(t)) {
        if (mono_s() >= until)
            return false;
        sleep_s(0.01);
    }
    return true;
}

/* SIGTERM to the child's group, then SIGKILL if it does not go. */
static void kill_child(zmq_tr *t)
{
    if (child_gone(t))
        return;
    kill(-t->child, SIGTERM);
    if (!wait_child(t, KILL_GRACE_S)) {
        kill(-t->child, SIGKILL);
        wait_child(t, KILL_GRACE_S);
    }
}

/* True once the child has exited; it stays waitable (WNOWAIT). */
static bool child_exited(pid_t pid)
{
    siginfo_t si = {0};
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

static void *watch_main(void *arg)
{
    zmq_tr *t = arg;
    long long limit = (long long)fmin(t->timeout_s * 1e9, 9e18);
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
        int why = t->child > 0 && child_exited(t->child) ? WHY_CHILD
                  : mono_ns() - since >= limit          ? WHY_TIMEOUT
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
        if (why == WHY_CHILD && child_gone(t)) {
            char how[96];
            describe_status(t->child_status, how, sizeof how);
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
    if (t->child <= 0)
        return 0;
    if (!wait_child(t, FINISH_GRACE_S)) {
        kill_child(t);
        return fbf_errorf(err, 1,
                          "the scheduler was still running %g s after SIMULATION_ENDS; killed it",
                          FINISH_GRACE_S);
    }
    if (WIFEXITED(t->child_status) && WEXITSTATUS(t->child_status) == 0)
        return 0;
    char how[96];
    describe_status(t->child_status, how, sizeof how);
    return fbf_errorf(err, -ECHILD, "the scheduler %s after SIMULATION_ENDS", how);
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
    if (t->child > 0)
        kill_child(t);
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
    static const char key[] = "{endpoint}";
    const size_t klen = sizeof key - 1, elen = strlen(endpoint);
    size_t n = 0;
    for (const char *p = cmd; (p = strstr(p, key)); p += klen)
        n++;
    size_t len = strlen(cmd) + (n ? n * elen : elen + 12) + 1;
    char *out = malloc(len);
    if (!out)
        return NULL;
    if (!n) {
        snprintf(out, len, "%s --endpoint %s", cmd, endpoint);
        return out;
    }
    char *o = out;
    for (const char *p = cmd;;) {
        const char *k = strstr(p, key);
        size_t seg = k ? (size_t)(k - p) : strlen(p);
        memcpy(o, p, seg);
        o += seg;
        if (!k)
            break;
        memcpy(o, endpoint, elen);
        o += elen;
        p = k + klen;
    }
    *o = '\0';
    return out;
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

static void on_fatal_signal(int sig)
{
    pid_t pg = (pid_t)g_child_pgid;
    if (pg > 0)
        kill(-pg, SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
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
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fbf_errorf(err, -errno, "fork: %s", strerror(errno));
        free(full);
        zmq_destroy(&t->base);
        return NULL;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        execl("/bin/sh", "sh", "-c", full, (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid); /* also here: whichever runs first, the group exists */
    free(full);
    t->child = pid;
    g_child_pgid = pid;
    struct sigaction sa = {.sa_handler = on_fatal_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    snprintf(t->base.what, sizeof t->base.what, "%s (pid %d)", endpoint, (int)pid);
    return &t->base;
}
