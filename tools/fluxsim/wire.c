/*
 * wire: the job manager's DEALER socket, RFC 3 frames, and the scheduler
 * process it may start (see fluxsim.h).
 *
 * Each connection is a fresh socket: after a restart nothing queued for
 * the old scheduler reaches the new one. Receives wait in slices of
 * 100 ms so that a spawned scheduler's exit is seen at once.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#define SLICE_MS 100

struct fs_wire {
    void *ctx, *sock;
    zmq_msg_t f[4];
    size_t nf;
};

fs_wire *fs_wire_open(const char *endpoint, fbf_error *err)
{
    fs_wire *w = calloc(1, sizeof *w);
    if (!w) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    for (int i = 0; i < 4; i++)
        zmq_msg_init(&w->f[i]);
    w->ctx = zmq_ctx_new();
    w->sock = w->ctx ? zmq_socket(w->ctx, ZMQ_DEALER) : NULL;
    int linger = 0;
    if (!w->sock || zmq_setsockopt(w->sock, ZMQ_LINGER, &linger, sizeof linger) != 0 ||
        zmq_connect(w->sock, endpoint) != 0) {
        fbf_errorf(err, -EINVAL, "cannot connect to %s: %s", endpoint, zmq_strerror(errno));
        fs_wire_close(w);
        return NULL;
    }
    return w;
}

void fs_wire_close(fs_wire *w)
{
    if (!w)
        return;
    for (int i = 0; i < 4; i++)
        zmq_msg_close(&w->f[i]);
    if (w->sock)
        zmq_close(w->sock);
    if (w->ctx)
        zmq_ctx_term(w->ctx);
    free(w);
}

int fs_wire_send(fluxsim *fs, uint8_t type, uint8_t flags, uint32_t aux1, uint32_t matchtag,
                 const char *topic, const char *payload, size_t len, fbf_error *err)
{
    fbf_flux_msg m = {.type = type,
                      .flags = flags,
                      .userid = 0,
                      .rolemask = FBF_FLUX_ROLE_OWNER,
                      .aux1 = aux1,
                      .matchtag = matchtag,
                      .topic = topic,
                      .topic_len = strlen(topic),
                      .payload = payload,
                      .payload_len = len};
    m.flags = fbf_flux_msg_flags(&m);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&m, proto);
    void *s = fs->w->sock;
    int rc = zmq_send(s, topic, m.topic_len, ZMQ_SNDMORE);
    if (rc >= 0 && payload) {
        /* Flux's strings carry their NUL. */
        zmq_msg_t p;
        rc = zmq_msg_init_size(&p, len + 1);
        if (rc == 0) {
            memcpy(zmq_msg_data(&p), payload, len);
            ((char *)zmq_msg_data(&p))[len] = '\0';
            rc = zmq_msg_send(&p, s, ZMQ_SNDMORE);
            if (rc < 0)
                zmq_msg_close(&p);
        }
    }
    if (rc >= 0)
        rc = zmq_send(s, proto, sizeof proto, 0);
    if (rc < 0)
        return fbf_errorf(err, -EIO, "sending %s: %s", topic, zmq_strerror(errno));
    fs->messages_out++;
    return 0;
}

int fs_wire_recv(fluxsim *fs, fbf_flux_msg *m, fbf_error *err)
{
    fs_wire *w = fs->w;
    double deadline = fbf_child_mono_s() + fs->o.timeout_s;
    for (;;) {
        zmq_pollitem_t it = {.socket = w->sock, .events = ZMQ_POLLIN};
        int n = zmq_poll(&it, 1, SLICE_MS);
        if (n < 0 && errno != EINTR)
            return fbf_errorf(err, -EIO, "waiting for the scheduler: %s", zmq_strerror(errno));
        if (n > 0)
            break;
        if (fs->spawned && fbf_child_exited(&fs->child)) {
            fbf_child_gone(&fs->child);
            char how[96];
            fbf_child_describe(fs->child.status, how, sizeof how);
            return fbf_errorf(err, -ECHILD, "the scheduler %s", how);
        }
        if (fbf_child_mono_s() > deadline)
            return fbf_errorf(err, -ETIMEDOUT, "the scheduler said nothing for %g s "
                              "(--timeout)", fs->o.timeout_s);
    }
    w->nf = 0;
    size_t total = 0;
    for (;;) {
        size_t slot = w->nf < 4 ? w->nf : 3;
        if (zmq_msg_recv(&w->f[slot], w->sock, 0) < 0)
            return fbf_errorf(err, -EIO, "receiving: %s", zmq_strerror(errno));
        total++;
        if (w->nf < 4)
            w->nf++;
        if (!zmq_msg_more(&w->f[slot]))
            break;
    }
    fs->messages_in++;
    const void *data[4];
    size_t len[4];
    for (size_t i = 0; i < w->nf; i++) {
        data[i] = zmq_msg_data(&w->f[i]);
        len[i] = zmq_msg_size(&w->f[i]);
    }
    fbf_error inner;
    if (fbf_flux_msg_decode(m, data, len, w->nf, &inner) < 0)
        return fbf_errorf(err, -EPROTO, "a message of %zu frames RFC 3 does not allow: %s",
                          total, inner.text);
    return 0;
}

/* ---- the scheduler ---- */

static int spawn(fluxsim *fs, fbf_error *err)
{
    char *cmd = fbf_child_command(fs->o.scheduler, "{endpoint}", "--endpoint", fs->endpoint);
    if (!cmd)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = fbf_child_spawn(&fs->child, cmd, err);
    free(cmd);
    fs->spawned = rc == 0;
    return rc;
}

int fs_wire_start(fluxsim *fs, fbf_error *err)
{
    int rc;
    if (fs->o.scheduler) {
        snprintf(fs->tmpdir, sizeof fs->tmpdir, "/tmp/fastbf-fluxsim-XXXXXX");
        if (!mkdtemp(fs->tmpdir))
            return fbf_errorf(err, -errno, "cannot make a temporary folder: %s",
                              strerror(errno));
        snprintf(fs->endpoint, sizeof fs->endpoint, "ipc://%s/sched", fs->tmpdir);
        if ((rc = spawn(fs, err)) < 0)
            return rc;
    } else {
        snprintf(fs->endpoint, sizeof fs->endpoint, "%s", fs->o.endpoint);
    }
    fs->w = fs_wire_open(fs->endpoint, err);
    return fs->w ? 0 : -EINVAL;
}

int fs_wire_restart(fluxsim *fs, fbf_error *err)
{
    if (!fs->spawned)
        return fbf_errorf(err, -EINVAL, "--kill-at needs --scheduler: only a scheduler this "
                          "job manager started can be restarted");
    kill(-fs->child.pid, SIGKILL); /* its own process group: fbf_child_spawn made it */
    fbf_child_wait(&fs->child, 10);
    fbf_child_gone(&fs->child);
    fs_wire_close(fs->w);
    fs->w = NULL;
    char sock[600];
    snprintf(sock, sizeof sock, "%s/sched", fs->tmpdir);
    unlink(sock); /* the killed scheduler left its socket file */
    int rc = spawn(fs, err);
    if (rc < 0)
        return rc;
    fs->w = fs_wire_open(fs->endpoint, err);
    return fs->w ? 0 : -EINVAL;
}

void fs_wire_stop(fluxsim *fs)
{
    fs_wire_close(fs->w);
    fs->w = NULL;
    if (fs->spawned && !fs->child.reaped)
        fbf_child_kill(&fs->child);
    if (fs->tmpdir[0]) {
        char sock[600];
        snprintf(sock, sizeof sock, "%s/sched", fs->tmpdir);
        unlink(sock);
        rmdir(fs->tmpdir);
    }
}
