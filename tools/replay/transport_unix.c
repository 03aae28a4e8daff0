/*
 * transport_unix: Batsim v2's transport (see transport.h): the replayer is
 * the server of a Unix-domain STREAM socket, listens for one client and
 * accepts exactly one; every message either way is a 32-bit native-endian
 * byte count followed by that many bytes.
 *
 * The socket's file is the path given, made absolute against the working
 * directory as Batsim did, or batsim.sock in a fresh directory under
 * $TMPDIR (/tmp), which destroy() removes with the socket. A file already
 * there is replaced only when it is a socket (Batsim unlinked whatever was
 * there; a regular file is more likely a mistake). With a command, the
 * scheduler is started at once (child.c: {socket} in the command becomes
 * the path, else " --socket PATH" is appended); without, the replayer
 * waits for any scheduler to connect. The connection is accepted on the
 * first exchange, within --timeout.
 *
 * Every wait (accept, each read) is a poll of at most WAIT_SLICE_MS, so a
 * scheduler that exits is reported with its status within a slice, and
 * one that does not answer after --timeout.
 *
 * Invariants: lfd >= 0 until the client is accepted, fd >= 0 after; buf
 * holds the last reply until the next exchange; a failed exchange leaves
 * the transport unusable (broken) but for destroy().
 */
#include "tools/replay/transport.h"
#include "tools/replay/child.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define WAIT_SLICE_MS 100

typedef struct unix_tr {
    fbf_transport base;
    int lfd, fd;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    char dir[sizeof ((struct sockaddr_un *)0)->sun_path]; /* ours to remove; "" none */
    fbf_child child;
    double timeout_s;
    char *buf;
    size_t cap;
    bool broken;
} unix_tr;

/* Why nothing came: the child's end, or the timeout. */
static int waited_out(unix_tr *t, const char *what, fbf_error *err)
{
    t->broken = true;
    if (t->child.pid > 0 && fbf_child_gone(&t->child)) {
        char how[96];
        fbf_child_describe(t->child.status, how, sizeof how);
        return fbf_errorf(err, -ECHILD, "the scheduler %s before %s", how, what);
    }
    return fbf_errorf(err, -ETIMEDOUT, "no %s from the scheduler on %s within %g s (--timeout)",
                      what, t->path, t->timeout_s);
}

/* Waits until fd is readable: 1, or 0 when the time is up or the child
 * has exited, or -errno. */
static int wait_readable(unix_tr *t, int fd, double until)
{
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int n = poll(&p, 1, WAIT_SLICE_MS);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -errno;
        if (fbf_child_mono_s() >= until || (t->child.pid > 0 && fbf_child_gone(&t->child)))
            return 0;
    }
}

static int accept_client(unix_tr *t, fbf_error *err)
{
    int w = wait_readable(t, t->lfd, fbf_child_mono_s() + t->timeout_s);
    if (w < 0)
        return t->broken = true, fbf_errorf(err, w, "waiting on %s: %s", t->path, strerror(-w));
    if (w == 0)
        return waited_out(t, "connection", err);
    t->fd = accept(t->lfd, NULL, NULL);
    if (t->fd >= 0)
        fcntl(t->fd, F_SETFD, FD_CLOEXEC);
    if (t->fd < 0)
        return t->broken = true, fbf_errorf(err, -errno, "accept on %s: %s", t->path,
                                            strerror(errno));
    close(t->lfd); /* exactly one client */
    t->lfd = -1;
    return 0;
}

/* Reads n bytes into p; what names them for errors. */
static int read_all(unix_tr *t, char *p, size_t n, double until, const char *what,
                    fbf_error *err)
{
    while (n) {
        int w = wait_readable(t, t->fd, until);
        if (w < 0)
            return t->broken = true, fbf_errorf(err, w, "reading %s: %s", what, strerror(-w));
        if (w == 0)
            return waited_out(t, what, err);
        ssize_t got = read(t->fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return t->broken = true, fbf_errorf(err, -EIO, "reading %s: %s", what,
                                                strerror(errno));
        if (got == 0) {
            if (t->child.pid > 0 && fbf_child_wait(&t->child, 0.5))
                return waited_out(t, what, err);
            return t->broken = true, fbf_errorf(err, -EPIPE, "the scheduler closed the "
                                                "connection before %s", what);
        }
        p += got;
        n -= (size_t)got;
    }
    return 0;
}

static int write_all(unix_tr *t, const char *p, size_t n, fbf_error *err)
{
    while (n) {
        ssize_t put = send(t->fd, p, n, MSG_NOSIGNAL);
        if (put < 0 && errno == EINTR)
            continue;
        if (put < 0)
            return t->broken = true,
                   fbf_errorf(err, errno == EPIPE ? -EPIPE : -EIO, "sending to the scheduler: %s",
                              errno == EPIPE ? "it closed the connection" : strerror(errno));
        p += put;
        n -= (size_t)put;
    }
    return 0;
}

static int unix_exchange(fbf_transport *base, const char *req, size_t len, const char **reply,
                         size_t *reply_len, fbf_error *err)
{
    unix_tr *t = (unix_tr *)base;
    if (t->broken)
        return fbf_errorf(err, -EIO, "the connection to the scheduler failed earlier");
    int rc;
    if (t->fd < 0 && (rc = accept_client(t, err)) < 0)
        return rc;
    if (len > UINT32_MAX)
        return fbf_errorf(err, -EMSGSIZE, "a message of %zu bytes does not fit the size prefix",
                          len);
    uint32_t n = (uint32_t)len;
    char head[4];
    memcpy(head, &n, 4);
    rc = write_all(t, head, 4, err);
    if (rc == 0)
        rc = write_all(t, req, len, err);
    if (rc < 0)
        return rc;
    double until = fbf_child_mono_s() + t->timeout_s;
    rc = read_all(t, head, 4, until, "a reply", err);
    if (rc < 0)
        return rc;
    memcpy(&n, head, 4);
    if (n > FBF_TRANSPORT_UNIX_MAX) {
        t->broken = true;
        return fbf_errorf(err, -EMSGSIZE, "the reply's size prefix says %u bytes, above the "
                          "bound of %u (a stray write on the socket, or the wrong byte order)",
                          n, (unsigned)FBF_TRANSPORT_UNIX_MAX);
    }
    if (n + 1 > t->cap) {
        char *b = realloc(t->buf, (size_t)n + 1);
        if (!b)
            return t->broken = true, fbf_errorf(err, -ENOMEM, "out of memory for a reply of %u "
                                                "bytes", n);
        t->buf = b;
        t->cap = (size_t)n + 1;
    }
    rc = read_all(t, t->buf, n, until, "the end of a reply", err);
    if (rc < 0)
        return rc;
    t->buf[n] = '\0';
    *reply = t->buf;
    *reply_len = n;
    return 0;
}

static int unix_finish(fbf_transport *base, fbf_error *err)
{
    unix_tr *t = (unix_tr *)base;
    return fbf_child_finish(&t->child, "the message carrying Z", err);
}

static void unix_destroy(fbf_transport *base)
{
    unix_tr *t = (unix_tr *)base;
    if (t->fd >= 0)
        close(t->fd);
    if (t->lfd >= 0)
        close(t->lfd);
    if (t->child.pid > 0)
        fbf_child_kill(&t->child);
    if (t->path[0])
        unlink(t->path);
    if (t->dir[0])
        rmdir(t->dir);
    free(t->buf);
    free(t);
}

static const fbf_transport_ops unix_ops = {unix_exchange, unix_finish, unix_destroy, NULL};

/* The absolute path of the socket into t->path (and t->dir when fresh). */
static int socket_path(unix_tr *t, const char *given, fbf_error *err)
{
    char full[PATH_MAX + 64];
    if (!given) {
        const char *tmp = getenv("TMPDIR");
        snprintf(t->dir, sizeof t->dir, "%s/fastbf-replay-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(t->dir)) {
            int e = errno;
            t->dir[0] = '\0';
            return fbf_errorf(err, -e, "cannot make a directory for the socket: %s",
                              strerror(e));
        }
        snprintf(full, sizeof full, "%s/batsim.sock", t->dir);
    } else if (given[0] == '/') {
        snprintf(full, sizeof full, "%s", given);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd))
            return fbf_errorf(err, -errno, "getcwd: %s", strerror(errno));
        snprintf(full, sizeof full, "%s/%s", cwd, given);
    }
    if (strlen(full) >= sizeof t->path)
        return fbf_errorf(err, -ENAMETOOLONG, "--socket %s: Socket filename too long! (%zu "
                          "bytes, a Unix socket's path holds %zu)", full, strlen(full),
                          sizeof t->path - 1);
    struct stat st;
    if (given && lstat(full, &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
            return fbf_errorf(err, -EEXIST, "--socket %s: the file exists and is not a socket",
                              full);
        unlink(full);
    }
    memcpy(t->path, full, strlen(full) + 1);
    return 0;
}

fbf_transport *fbf_transport_unix(const char *cmd, const char *path, double timeout_s,
                                  fbf_error *err)
{
    unix_tr *t = calloc(1, sizeof *t);
    if (!t) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    t->base.ops = &unix_ops;
    t->lfd = t->fd = -1;
    t->timeout_s = timeout_s;
    char saved[sizeof t->path] = "";
    if (socket_path(t, path, err) < 0) {
        unix_destroy(&t->base);
        return NULL;
    }
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, t->path, strlen(t->path) + 1);
    memcpy(saved, t->path, sizeof saved);
    t->path[0] = '\0'; /* nothing of ours to unlink before the bind */
    t->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (t->lfd < 0 || bind(t->lfd, (struct sockaddr *)&a, sizeof a) < 0) {
        fbf_errorf(err, -errno, "cannot create the socket %s: %s", saved, strerror(errno));
        unix_destroy(&t->base);
        return NULL;
    }
    memcpy(t->path, saved, sizeof saved);
    if (listen(t->lfd, 1) < 0) {
        fbf_errorf(err, -errno, "cannot listen on %s: %s", t->path, strerror(errno));
        unix_destroy(&t->base);
        return NULL;
    }
    snprintf(t->base.what, sizeof t->base.what, "%.150s", t->path);
    if (!cmd)
        return &t->base;
    char *full = fbf_child_command(cmd, "{socket}", "--socket", t->path);
    if (!full) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        unix_destroy(&t->base);
        return NULL;
    }
    int rc = fbf_child_spawn(&t->child, full, err);
    free(full);
    if (rc < 0) {
        unix_destroy(&t->base);
        return NULL;
    }
    return &t->base;
}

const char *fbf_transport_unix_path(const fbf_transport *base)
{
    return ((const unix_tr *)base)->path;
}
