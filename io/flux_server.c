/*
 * flux_server: the ROUTER loop of the RFC 27 service (see flux_server.h).
 *
 * Invariants: the socket, the frames and the pinned routing id belong to
 * the I/O thread; the connection watcher runs beside it from before the
 * bind to the end (both set up by zmq_router.h). A message's frames are
 * kept up to MAX_KEPT (the routing id and three RFC 3 frames); beyond,
 * the last frame is kept in the last slot, so that a refusal can still
 * read the PROTO frame. The socket lingers 1 s at close so that the last
 * answer still leaves.
 */
#include "io/flux_server.h"

#include <errno.h>
#include <zmq.h>

#include "io/zmq_router.h"

#define MAX_KEPT 5 /* routing id, topic, payload, PROTO, and the last */

typedef struct frames {
    zmq_msg_t f[MAX_KEPT];
    size_t kept, total;
} frames;

/* 0, or -errno. Beyond MAX_KEPT - 1 frames, each new one replaces the
 * last slot's. */
static int recv_frames(fbf_zmq_router *r, frames *m)
{
    int rc = fbf_zmq_router_recv(r, m->f, MAX_KEPT, &m->total);
    m->kept = m->total < MAX_KEPT ? m->total : MAX_KEPT;
    return rc;
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

static int send_msg(fbf_zmq_router *s, const void *peer, size_t peer_len, const fbf_flux_msg *m)
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

/* Another peer's message: a line on warn, and an error response when it
 * is a request that wants one. */
static void refuse_stranger(fbf_zmq_router *s, frames *m, const void **data, const size_t *len,
                            size_t n)
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

static int send_outbox(fbf_zmq_router *s, fbf_flux_session *fs, const void *peer,
                       size_t peer_len)
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

static int serve_loop(fbf_zmq_router *s, fbf_flux_session *fs, fbf_serve_stats *st,
                      fbf_error *err)
{
    frames m;
    for (size_t i = 0; i < MAX_KEPT; i++)
        zmq_msg_init(&m.f[i]);
    unsigned long received = 0;
    int rc;
    for (;;) {
        int e = 0;
        const char *op = "receive";
        if ((rc = recv_frames(s, &m)) < 0) {
            e = -rc;
            if (e == EINTR) {
                rc = fbf_errorf(err, -EINTR, "interrupted while waiting for the job manager");
                break;
            }
        } else {
            const void *data[MAX_KEPT];
            size_t len[MAX_KEPT];
            size_t n = body(&m, data, len);
            if (s->pinned && !fbf_zmq_router_is_peer(s, &m.f[0])) {
                refuse_stranger(s, &m, data, len, n);
                continue;
            }
            received++;
            double t0 = fbf_serve_stats_clock(st);
            rc = fbf_flux_session_receive(fs, (const void *const *)data, len, n, err);
            fbf_serve_stats_add(st, t0);
            if (!s->pinned && fbf_flux_session_attached(fs))
                fbf_zmq_router_pin(s, &m.f[0]);
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
        fbf_zmq_watch_loss loss = fbf_zmq_router_loss(s, e);
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
    fbf_zmq_router r;
    /* ZMQ_ROUTER_MANDATORY: an answer to a peer that is gone is an error,
     * not a silent drop. */
    int rc = fbf_zmq_router_open(&r, o, "job manager to attach", true, err);
    if (rc == 0)
        rc = serve_loop(&r, fs, stats, err);
    fbf_zmq_router_close(&r);
    return rc;
}
