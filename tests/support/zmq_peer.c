/*
 * zmq_peer: plays Batsim against a real fastbf process (see zmq_peer.h).
 */
#include "support/zmq_peer.h"
#include "support/replay_run.h"
#include "support/testkit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "build"
#endif

const char *fbf_test_fastbf_path(void)
{
    static char path[4096];
    const char *dir = getenv("FBF_BUILD_DIR");
    if (!dir || !*dir)
        dir = FBF_BUILD_DIR;
    snprintf(path, sizeof path, "%s/fastbf", dir);
    return path;
}

int fbf_test_free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    int port = -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

/* Children still alive and their temp files, so that a test that fails
 * half-way (cmocka jumps out of it) leaves no process or file behind. */
#define FBF_TEST_MAX_LIVE 32
static struct {
    pid_t pid;
    char out_path[64], err_path[64];
} fbf_test_live[FBF_TEST_MAX_LIVE];

static void fbf_test_cleanup_at_exit(void)
{
    for (int i = 0; i < FBF_TEST_MAX_LIVE; i++) {
        if (fbf_test_live[i].pid > 0) {
            kill(fbf_test_live[i].pid, SIGKILL);
            waitpid(fbf_test_live[i].pid, NULL, 0);
        }
        if (fbf_test_live[i].out_path[0])
            unlink(fbf_test_live[i].out_path);
        if (fbf_test_live[i].err_path[0])
            unlink(fbf_test_live[i].err_path);
    }
}

static void fbf_test_track(const fbf_test_peer *p)
{
    static bool registered;
    if (!registered) {
        atexit(fbf_test_cleanup_at_exit);
        registered = true;
    }
    for (int i = 0; i < FBF_TEST_MAX_LIVE; i++) {
        if (fbf_test_live[i].pid == 0 && !fbf_test_live[i].out_path[0]) {
            fbf_test_live[i].pid = p->pid;
            memcpy(fbf_test_live[i].out_path, p->out_path, sizeof p->out_path);
            memcpy(fbf_test_live[i].err_path, p->err_path, sizeof p->err_path);
            return;
        }
    }
}

/* Forgets a reaped child (pid) or removed files (paths). */
static void fbf_test_untrack(pid_t pid, const char *out_path)
{
    for (int i = 0; i < FBF_TEST_MAX_LIVE; i++) {
        if (pid > 0 && fbf_test_live[i].pid == pid)
            fbf_test_live[i].pid = -1;
        if (out_path && out_path[0] && strcmp(fbf_test_live[i].out_path, out_path) == 0)
            memset(&fbf_test_live[i], 0, sizeof fbf_test_live[i]);
    }
}

static void fbf_test_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

static char *fbf_test_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf) {
        if (f)
            fclose(f);
        return NULL;
    }
    if (f) {
        size_t got;
        while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
            n += got;
            if (cap - n - 1 == 0) {
                char *nb = realloc(buf, cap * 2);
                if (!nb)
                    break;
                buf = nb;
                cap *= 2;
            }
        }
        fclose(f);
    }
    buf[n] = '\0';
    return buf;
}

char *fbf_test_peer_stdout(const fbf_test_peer *p) { return fbf_test_read_file(p->out_path); }
char *fbf_test_peer_stderr(const fbf_test_peer *p)
{
    return fbf_test_drop_announce(fbf_test_read_file(p->err_path));
}

char *fbf_test_peer_stderr_all(const fbf_test_peer *p) { return fbf_test_read_file(p->err_path); }

int fbf_test_count_lines(const char *s)
{
    int n = 0;
    for (const char *c = s; *c; c++)
        if (*c == '\n' || c[1] == '\0')
            n++;
    return n;
}

static int fbf_test_decode_status(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 255;
}

/* Polls the child without blocking: true once it has exited (reaped). */
static bool fbf_test_poll_exit(fbf_test_peer *p)
{
    if (p->exited)
        return true;
    if (p->pid <= 0)
        return false;
    int st;
    pid_t r = waitpid(p->pid, &st, WNOHANG);
    if (r == p->pid) {
        fbf_test_untrack(p->pid, NULL);
        p->exited = true;
        p->status = st;
        p->pid = -1;
        return true;
    }
    return false;
}

int fbf_test_peer_wait(fbf_test_peer *p, int timeout_ms)
{
    for (int waited = 0;; waited += 5) {
        if (fbf_test_poll_exit(p))
            return fbf_test_decode_status(p->status);
        if (p->pid <= 0)
            return -ECHILD;
        if (waited >= timeout_ms)
            break;
        fbf_test_sleep_ms(5);
    }
    kill(p->pid, SIGKILL);
    int st;
    if (waitpid(p->pid, &st, 0) == p->pid) {
        p->exited = true;
        p->status = st;
    }
    fbf_test_untrack(p->pid, NULL);
    p->pid = -1;
    return -ETIMEDOUT;
}

/* True once a socket listens on 127.0.0.1:port (or 0.0.0.0:port). Read
 * from /proc/net/tcp rather than by connecting, so fastbf never sees a
 * connection that is not the test's. Elsewhere than Linux: assume so. */
static bool fbf_test_port_listening(int port)
{
#ifdef __linux__
    FILE *f = fopen("/proc/net/tcp", "r");
    if (!f)
        return true;
    char line[512];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned addr, lport, st;
        if (sscanf(line, " %*d: %8X:%4X %*8X:%*4X %2X", &addr, &lport, &st) == 3)
            found = (int)lport == port && st == 0x0A /* LISTEN */ &&
                    (addr == 0 || addr == 0x0100007F);
    }
    fclose(f);
    return found;
#else
    (void)port;
    return true;
#endif
}

static int fbf_test_spawn(fbf_test_peer *p, const char *const *args, const char *endpoint)
{
    const char *argv[64];
    int n = 0;
    argv[n++] = fbf_test_fastbf_path();
    for (int i = 0; args && args[i] && n < 60; i++)
        argv[n++] = args[i];
    if (endpoint) {
        argv[n++] = "--endpoint";
        argv[n++] = endpoint;
    }
    argv[n] = NULL;

    fbf_test_temp_name(p->out_path, sizeof p->out_path, "/tmp/fbf_test_out_");
    fbf_test_temp_name(p->err_path, sizeof p->err_path, "/tmp/fbf_test_err_");
    int ofd = mkstemp(p->out_path);
    int efd = ofd >= 0 ? mkstemp(p->err_path) : -1;
    if (ofd < 0 || efd < 0) {
        int e = errno;
        if (ofd >= 0) {
            close(ofd);
            unlink(p->out_path);
        }
        p->out_path[0] = p->err_path[0] = '\0';
        return -e;
    }
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(ofd);
        close(efd);
        return -e;
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(ofd, 1);
        dup2(efd, 2);
        execv(argv[0], (char *const *)argv);
        dprintf(2, "zmq_peer: cannot exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(ofd);
    close(efd);
    p->pid = pid;
    p->exited = false;
    fbf_test_track(p);
    return 0;
}

static void fbf_test_unlink_outputs(fbf_test_peer *p)
{
    fbf_test_untrack(-1, p->out_path);
    if (p->out_path[0])
        unlink(p->out_path);
    if (p->err_path[0])
        unlink(p->err_path);
    p->out_path[0] = p->err_path[0] = '\0';
}

int fbf_test_peer_start(fbf_test_peer *p, const char *const *args, bool connect)
{
    if (!connect) {
        memset(p, 0, sizeof *p);
        p->pid = -1;
        return fbf_test_spawn(p, args, NULL);
    }
    return fbf_test_peer_start_on(p, args, "127.0.0.1");
}

int fbf_test_peer_start_on(fbf_test_peer *p, const char *const *args, const char *host)
{
    memset(p, 0, sizeof *p);
    p->pid = -1;
    char bound[96];

    /* The port may be taken between our probe and fastbf's bind: retry. */
    for (int attempt = 0; attempt < 5; attempt++) {
        int port = fbf_test_free_port();
        if (port <= 0)
            return -EADDRNOTAVAIL;
        snprintf(p->endpoint, sizeof p->endpoint, "tcp://127.0.0.1:%d", port);
        snprintf(bound, sizeof bound, "tcp://%s:%d", host, port);
        int rc = fbf_test_spawn(p, args, bound);
        if (rc < 0)
            return rc;
        bool ready = false;
        for (int waited = 0; waited < 20000 && !ready; waited += 5) {
            if (fbf_test_poll_exit(p))
                break;
            ready = fbf_test_port_listening(port);
            if (!ready)
                fbf_test_sleep_ms(5);
        }
        if (!ready) {
            char *err = fbf_test_peer_stderr(p);
            bool in_use = err && strstr(err, "Address already in use");
            free(err);
            if (!p->exited)
                fbf_test_peer_wait(p, 0); /* kills it */
            if (in_use) {
                fbf_test_unlink_outputs(p);
                continue;
            }
            /* Leave the outputs for the caller to inspect. */
            return -ECONNREFUSED;
        }
        p->port = port;
        p->zctx = zmq_ctx_new();
        p->sock = p->zctx ? zmq_socket(p->zctx, ZMQ_REQ) : NULL;
        if (!p->sock)
            return -errno;
        int linger = 0;
        zmq_setsockopt(p->sock, ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_connect(p->sock, p->endpoint) != 0)
            return -errno;
        return 0;
    }
    return -EADDRINUSE;
}

int fbf_test_peer_send(fbf_test_peer *p, const char *req)
{
    if (!p->sock)
        return -ENOTCONN;
    int sndtimeo = 10000;
    zmq_setsockopt(p->sock, ZMQ_SNDTIMEO, &sndtimeo, sizeof sndtimeo);
    if (zmq_send(p->sock, req, strlen(req), 0) < 0)
        return -errno;
    return 0;
}

long fbf_test_zmq_request(void *sock, const char *const *frames, size_t n, char **reply,
                          int timeout_ms)
{
    *reply = NULL;
    int sndtimeo = 10000;
    zmq_setsockopt(sock, ZMQ_SNDTIMEO, &sndtimeo, sizeof sndtimeo);
    for (size_t i = 0; i < n; i++)
        if (zmq_send(sock, frames[i], strlen(frames[i]), i + 1 < n ? ZMQ_SNDMORE : 0) < 0)
            return -errno;
    zmq_setsockopt(sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, sock, 0) < 0) {
        int e = errno;
        zmq_msg_close(&msg);
        return -e;
    }
    size_t len = zmq_msg_size(&msg);
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, zmq_msg_data(&msg), len);
        s[len] = '\0';
    }
    bool more = zmq_msg_more(&msg);
    zmq_msg_close(&msg);
    if (!s)
        return -ENOMEM;
    if (more) { /* a REP or ROUTER server answers a REQ in one frame */
        free(s);
        return -EPROTO;
    }
    *reply = s;
    return (long)len;
}

long fbf_test_zmq_ask(const char *endpoint, const char *const *frames, size_t n, char **reply,
                      int timeout_ms)
{
    *reply = NULL;
    void *ctx = zmq_ctx_new();
    void *sock = ctx ? zmq_socket(ctx, ZMQ_REQ) : NULL;
    long rc = -ENOMEM;
    if (sock) {
        int linger = 0;
        zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
        rc = zmq_connect(sock, endpoint) == 0 ? fbf_test_zmq_request(sock, frames, n, reply,
                                                                     timeout_ms)
                                              : -errno;
        zmq_close(sock);
    }
    if (ctx)
        zmq_ctx_term(ctx);
    return rc;
}

long fbf_test_peer_request(fbf_test_peer *p, const char *req, char **reply, int timeout_ms)
{
    *reply = NULL;
    int rc = fbf_test_peer_send(p, req);
    if (rc < 0)
        return rc;
    zmq_setsockopt(p->sock, ZMQ_RCVTIMEO, &timeout_ms, sizeof timeout_ms);
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    if (zmq_msg_recv(&msg, p->sock, 0) < 0) {
        int e = errno;
        zmq_msg_close(&msg);
        return -e;
    }
    size_t n = zmq_msg_size(&msg);
    char *s = malloc(n + 1);
    if (!s) {
        zmq_msg_close(&msg);
        return -ENOMEM;
    }
    memcpy(s, zmq_msg_data(&msg), n);
    s[n] = '\0';
    zmq_msg_close(&msg);
    *reply = s;
    return (long)n;
}

void fbf_test_peer_disconnect(fbf_test_peer *p)
{
    if (p->sock)
        zmq_close(p->sock);
    if (p->zctx)
        zmq_ctx_term(p->zctx);
    p->sock = p->zctx = NULL;
}

void fbf_test_peer_stop(fbf_test_peer *p)
{
    if (p->pid > 0 && !p->exited)
        fbf_test_peer_wait(p, 0);
    fbf_test_peer_disconnect(p);
    fbf_test_unlink_outputs(p);
}

int fbf_test_run_fastbf(const char *const *args, int timeout_ms, char **out, char **err)
{
    fbf_test_peer p;
    int rc = fbf_test_peer_start(&p, args, false);
    if (rc < 0)
        return rc;
    rc = fbf_test_peer_wait(&p, timeout_ms);
    if (out)
        *out = fbf_test_peer_stdout(&p);
    if (err)
        *err = fbf_test_peer_stderr(&p);
    fbf_test_peer_stop(&p);
    return rc;
}
