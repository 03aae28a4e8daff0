/*
 * flux_server: the ROUTER loop of the RFC 27 service (see flux_server.h).
 *
 * Invariants: the socket, the frames and the pinned routing id belong to
 * the I/O thread; the connection watcher runs beside it from before the
 * bind to the end. A message's frames are kept up to MAX_KEPT (the
 * routing id and three RFC 3 frames); beyond, the last frame is kept in
 * the last slot, so that a refusal can still read the PROTO frame. The
 * socket lingers 1 s at close so that the last answer still leaves.
 */
#include "io/flux_server.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "io/endpoint.h"
#include "io/zmq_watch.h"

#define MAX_KEPT 5 /* routing id, topic, payload, PROTO, and the last */

typedef struct frames {
    zmq_msg_t f[MAX_KEPT];
    size_t kept, total;
} frames;

typedef struct server {
    void *sock;
    fbf_zmq_watch watch;
    FILE *warn;
    size_t max_message;
    bool pinned;
    size_t peer_len;
    unsigned char peer[256];
} server;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 0, or -errno. Beyond MAX_KEPT - 1 frames, each new one replaces the
 * last slot's. */
static int recv_frames(void *sock, frames *m)
{
    m->kept = m->total = 0;
    for (;;) {
        size_t slot = m->kept < MAX_KEPT ? m->kept : MAX_KEPT - 1;
        if (m->kept >= MAX_KEPT) {
            zmq_msg_close(&m->f[slot]);
            zmq_msg_init(&m->f[slot]);
        }
        if (zmq_msg_recv(&m->f[slot], sock, 0) < 0)
            return -errno;
        m->total++;
        if (m->kept < MAX_KEPT)
            m->kept++;
        if (!zmq_msg_more(&m->f[slot]))
            return 0;
    }
}

/* The body frames (after the routing id) as arrays, the last being the
 * message's last frame: at most 4, which the codec refuses by count. */
static size_t body(frames *m, const void **data, size_t *len)
{
    size_t kept = m->kept - 1;
    for (size_t i = 0; i < kept; i++) {
        data[i] = zmq_msg_data(&m->f[i + 1]);
        len[i] = zmq_msg_size(&m->f[i + 1]);
    }
    return kept;
}

static int send_msg(server *s, const void *peer, size_t peer_len, const fbf_flux_msg *m)
{
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(m, proto);
    if (zmq_send(s->sock, peer, peer_len, ZMQ_SNDMORE) < 0)
        return -1;
    if (m->topic && zmq_send(s->sock, m->topic, m->topic_len, ZMQ_SNDMORE) < 0)
        return -1;
    if (m->payload && zmq_send(s->sock, m->payload, m->payload_len, ZMQ_SNDMORE) < 0)
        return -1;
    return zmq_send(s->sock, proto, sizeof proto, 0);
}

static bool is_peer(const server *s, zmq_msg_t *id)
{
    return zmq_msg_size(id) == s->peer_len && memcmp(zmq_msg_data(id), s->peer, s->peer_len) == 0;
}

/* Another peer's message: a line on warn, and an error response when it
 * is a request that wants one. */
static void refuse_stranger(server *s, frames *m, const void **data, const size_t *len, size_t n)
{
    const char *addr = zmq_msg_gets(&m->f[0], "Peer-Address");
    int fd = zmq_msg_get(&m->f[0], ZMQ_SRCFD);
    static const char why[] = "another job manager holds this session: fastbf answers only "
                              "the job manager that attached first";
    fprintf(s->warn, "fastbf: refused a message from a peer that is not the session's job "
                     "manager (%s, connection fd %d): %s\n",
            addr ? addr : "address unknown", fd, why);
    fbf_flux_msg req;
    if (!fbf_flux_msg_answerable((const void *const *)data, len, n, &req))
        return;
    fbf_flux_msg r = {.type = FBF_FLUX_RESPONSE,
                      .userid = FBF_FLUX_USERID_UNKNOWN,
                      .rolemask = FBF_FLUX_ROLE_OWNER,
                      .aux1 = EPERM,
                      .matchtag = req.matchtag,
                      .topic = req.topic,
                      .topic_len = req.topic_len,
                      .payload = why,
                      .payload_len = sizeof why};
    r.flags = fbf_flux_msg_flags(&r);
    send_msg(s, zmq_msg_data(&m->f[0]), zmq_msg_size(&m->f[0]), &r);
}

static void pin(server *s, zmq_msg_t *id)
{
    s->pinned = true;
    s->peer_len = zmq_msg_size(id);
    memcpy(s->peer, zmq_msg_data(id), s->peer_len);
    fbf_zmq_watch_pin(&s->watch, zmq_msg_get(id, ZMQ_SRCFD));
}

static int send_outbox(server *s, fbf_flux_session *fs, const void *peer, size_t peer_len)
{
    size_t n;
    const fbf_flux_out *out = fbf_flux_session_outbox(fs, &n);
    if (!out && n)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (send_msg(s, peer, peer_len, &out[i].msg) < 0)
            return -errno;
    return 0;
}

static int serve_loop(server *s, fbf_flux_session *fs, fbf_serve_stats *st, fbf_error *err)
{
    frames m;
    for (size_t i = 0; i < MAX_KEPT; i++)
        zmq_msg_init(&m.f[i]);
    unsigned long received = 0;
    int rc;
    for (;;) {
        int e = 0;
        const char *op = "receive";
        if ((rc = recv_frames(s->sock, &m)) < 0) {
            e = -rc;
            if (e == EINTR) {
                rc = fbf_errorf(err, -EINTR, "interrupted while waiting for the job manager");
                break;
            }
        } else {
            const void *data[MAX_KEPT];
            size_t len[MAX_KEPT];
            size_t n = body(&m, data, len);
            if (s->pinned && !is_peer(s, &m.f[0])) {
                refuse_stranger(s, &m, data, len, n);
                continue;
            }
            received++;
            double t0 = st ? mono_s() : 0;
            rc = fbf_flux_session_receive(fs, (const void *const *)data, len, n, err);
            if (st) {
                double dt = mono_s() - t0;
                st->messages = received;
                st->handling_s += dt;
                if (received == 1)
                    st->first_s = dt;
            }
            if (!s->pinned && fbf_flux_session_attached(fs))
                pin(s, &m.f[0]);
            /* What the session queued goes out even after a fatal error:
             * the answers before it, and the error response. */
            int sent = send_outbox(s, fs, zmq_msg_data(&m.f[0]), zmq_msg_size(&m.f[0]));
            if (rc < 0)
                break;
            if (sent == 0) {
                if (rc == FBF_FLUX_ENDED) {
                    rc = 0;
                    break;
                }
                continue;
            }
            e = -sent;
            op = "send";
        }
        fbf_zmq_watch_loss loss = e == ETERM ? fbf_zmq_watch_lost(&s->watch) : FBF_ZMQ_WATCH_HELD;
        if (loss == FBF_ZMQ_WATCH_DROPPED)
            rc = fbf_errorf(err, -EMSGSIZE,
                            "the job manager's message was refused unread after %lu messages: "
                            "above --max-message %zu bytes, or more than this process can "
                            "allocate (ZeroMQ ends the connection so)",
                            received, s->max_message);
        else if (loss == FBF_ZMQ_WATCH_LEFT)
            rc = fbf_errorf(err, -ECONNRESET,
                            "the job manager disconnected after %lu messages, before sim.end",
                            received);
        else
            rc = fbf_errorf(err, -e, "%s failed: %s", op, zmq_strerror(e));
        break;
    }
    if (rc < 0 && s->pinned && !fbf_zmq_watch_lost(&s->watch)) {
        fbf_flux_msg d = fbf_flux_disconnect_msg();
        send_msg(s, s->peer, s->peer_len, &d);
    }
    for (size_t i = 0; i < MAX_KEPT; i++)
        zmq_msg_close(&m.f[i]);
    return rc;
}

int fbf_flux_serve(const fbf_zmq_options *o, fbf_flux_session *fs, fbf_serve_stats *stats,
                   fbf_error *err)
{
    if (stats)
        *stats = (fbf_serve_stats){0};
    const char *endpoint = o->endpoint ? o->endpoint : FBF_ZMQ_DEFAULT_ENDPOINT;
    server s = {.warn = o->warn ? o->warn : stderr,
                .max_message = o->max_message ? o->max_message : FBF_ZMQ_MAX_MESSAGE_DEFAULT};
    int reach = fbf_endpoint_check_bind(endpoint, o->allow_remote, err);
    if (reach < 0)
        return reach;
    void *zctx = zmq_ctx_new();
    s.sock = zctx ? zmq_socket(zctx, ZMQ_ROUTER) : NULL;
    int rc;
    if (!s.sock) {
        rc = fbf_errorf(err, -errno, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        goto out;
    }
    int linger = 1000, mandatory = 1;
    int64_t max = (int64_t)s.max_message;
    zmq_setsockopt(s.sock, ZMQ_LINGER, &linger, sizeof linger);
    /* An answer to a peer that is gone is an error, not a silent drop. */
    zmq_setsockopt(s.sock, ZMQ_ROUTER_MANDATORY, &mandatory, sizeof mandatory);
    if (zmq_setsockopt(s.sock, ZMQ_MAXMSGSIZE, &max, sizeof max) != 0) {
        rc = fbf_errorf(err, -errno, "cannot limit messages to %zu bytes: %s", s.max_message,
                        zmq_strerror(errno));
        goto out;
    }
    if ((rc = fbf_zmq_watch_start(&s.watch, zctx, s.sock, s.warn, s.max_message, err)) < 0) {
        /* said as it is */
    } else if (zmq_bind(s.sock, endpoint) != 0) {
        rc = fbf_errorf(err, -errno, "cannot bind %s: %s", endpoint, zmq_strerror(errno));
    } else {
        if (reach > 0)
            fprintf(s.warn, "fastbf: warning: %s is reachable from other machines "
                            "(--allow-remote): the first job manager to attach drives this "
                            "fastbf\n",
                    endpoint);
        if (o->announce) {
            fprintf(s.warn, "%s listening on %s\n", o->announce, endpoint);
            fflush(s.warn);
        }
        rc = serve_loop(&s, fs, stats, err);
    }
    fbf_zmq_watch_stop(&s.watch, s.sock);
out:
    if (s.sock)
        zmq_close(s.sock);
    if (zctx)
        zmq_ctx_term(zctx);
    return rc;
}
