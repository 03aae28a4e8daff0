/*
 * bv2_client: the Batsim v2 text protocol's transport (see bv2_client.h).
 */
#include "io/bv2_client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "io/bv2_codec.h"
#include "io/bv2_frame.h"
#include "io/jbuf.h"

struct fbf_bv2_client {
    fbf_bv2_options opt;
    char *path; /* the socket's absolute path */
    fbf_session *session;
    fbf_bv2_decoder dec;
    fbf_jbuf out;
    int fd;
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Batsim names its keys after the socket's absolute path, as given: a
 * relative one is taken from the working directory, links unresolved. */
static char *absolute(const char *path)
{
    if (path[0] == '/')
        return strdup(path);
    char cwd[4096];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    size_t n = strlen(cwd) + strlen(path) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", cwd, path);
    return p;
}

fbf_bv2_client *fbf_bv2_client_create(const fbf_bv2_options *opt, fbf_error *err)
{
    fbf_bv2_client *c = calloc(1, sizeof *c);
    if (!c) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    c->opt = *opt;
    c->fd = -1;
    c->path = absolute(opt->socket);
    if (!c->path) {
        fbf_errorf(err, -ENOMEM, "the socket's absolute path: %s", strerror(errno));
        free(c);
        return NULL;
    }
    if (strlen(c->path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
        fbf_errorf(err, -ENAMETOOLONG, "socket path %s: longer than a Unix socket's %zu bytes",
                   c->path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
        fbf_bv2_client_destroy(c);
        return NULL;
    }
    fbf_bv2_decoder_init(&c->dec, opt->redis_host, opt->redis_port, c->path);
    fbf_session_options so = opt->session;
    so.no_end_notice = true;
    c->session = fbf_session_create(&so, err);
    if (!c->session) {
        fbf_bv2_client_destroy(c);
        return NULL;
    }
    return c;
}

void fbf_bv2_client_destroy(fbf_bv2_client *c)
{
    if (!c)
        return;
    if (c->fd >= 0)
        close(c->fd);
    fbf_session_destroy(c->session);
    fbf_bv2_decoder_fini(&c->dec);
    fbf_jbuf_fini(&c->out);
    free(c->path);
    free(c);
}

const char *fbf_bv2_client_socket(const fbf_bv2_client *c) { return c->path; }
fbf_engine *fbf_bv2_client_engine(fbf_bv2_client *c) { return fbf_session_engine(c->session); }

/* Batsim may still be setting its socket up: retried until the timeout. */
static int connect_batsim(fbf_bv2_client *c, fbf_error *err)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    memcpy(a.sun_path, c->path, strlen(c->path) + 1);
    double until = now_s() + c->opt.connect_timeout_s;
    for (;;) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
            return fbf_errorf(err, -EIO, "socket: %s", strerror(errno));
        if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
            c->fd = fd;
            return 0;
        }
        int e = errno;
        close(fd);
        if ((e != ENOENT && e != ECONNREFUSED && e != EINTR) || now_s() >= until)
            return fbf_errorf(err, -ECONNREFUSED, "cannot connect to Batsim's socket %s: %s",
                              c->path, strerror(e));
        nanosleep(&(struct timespec){.tv_nsec = 50 * 1000 * 1000}, NULL);
    }
}

/* A session error with its message and event. */
static int phrase(fbf_bv2_client *c, int rc, fbf_error *err)
{
    fbf_session_fault f = fbf_session_last_fault(c->session);
    fbf_error inner = *err;
    if (f.index < 0)
        return fbf_errorf(err, rc, "message %lu: %s", c->dec.nb_messages, inner.text);
    return fbf_errorf(err, rc, "message %lu: event %ld (%c): %s", c->dec.nb_messages, f.index,
                      fbf_bv2_decoded_stamp(&c->dec, f.index), inner.text);
}

/* One message: 1 when it was the last (Z answered), 0, or an error. */
static int exchange(fbf_bv2_client *c, char *msg, size_t len, fbf_error *err)
{
    int rc = fbf_bv2_decode(&c->dec, msg, len, err);
    if (rc < 0)
        return rc;
    const fbf_out *outs;
    size_t n;
    if ((rc = fbf_session_open(c->session, c->dec.now, err)) < 0 ||
        (rc = fbf_session_apply(c->session, c->dec.ev, c->dec.n, err)) < 0 ||
        (rc = fbf_session_decide(c->session, &outs, &n, err)) < 0)
        return phrase(c, rc, err);
    if ((rc = fbf_bv2_encode(&c->out, c->dec.now, fbf_session_engine(c->session), outs, n,
                             err)) < 0)
        return rc;
    return fbf_session_ended(c->session);
}

int fbf_bv2_client_serve(fbf_bv2_client *c, fbf_serve_stats *stats, fbf_error *err)
{
    int rc = connect_batsim(c, err);
    if (rc < 0)
        return rc;
    fbf_bv2_reader rd;
    fbf_bv2_reader_init(&rd, c->fd, c->opt.max_message);
    for (;;) {
        char *msg;
        size_t len;
        bool closed;
        if ((rc = fbf_bv2_frame_read(&rd, &msg, &len, &closed, err)) < 0) {
            if (closed)
                fbf_errorf(err, rc, "Batsim closed the connection after %lu message%s, before "
                           "the simulation ended (no Z)", c->dec.nb_messages,
                           c->dec.nb_messages == 1 ? "" : "s");
            break;
        }
        double t0 = fbf_serve_stats_clock(stats);
        int last = exchange(c, msg, len, err);
        fbf_serve_stats_add(stats, t0);
        if ((rc = last) < 0 ||
            (rc = fbf_bv2_frame_write(c->fd, c->out.p, c->out.len, err)) < 0 || last)
            break;
    }
    fbf_bv2_reader_fini(&rd);
    return rc < 0 ? rc : 0;
}
