/*
 * zmq_server: the ROUTER socket loop of one session (see zmq_server.h).
 *
 * Invariants: the socket, the frames and the pinned routing id belong to
 * the I/O thread (the caller's); the connection watcher (zmq_watch.h)
 * runs beside it from before the bind to the end (both set up by
 * zmq_router.h). The socket lingers 1 s at close so the last reply (to
 * SIMULATION_ENDS, or the refusal that tells Batsim why fastbf stopped)
 * still leaves when the process exits.
 */
#include "io/zmq_server.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

#include "io/zmq_router.h"

/* A message's frames: the first MAX_FRAMES kept, any beyond only counted
 * (into the spare). A REQ peer sends three: routing id, delimiter, body. */
#define MAX_FRAMES 8

typedef struct frames {
    zmq_msg_t f[MAX_FRAMES + 1];
    size_t kept, total;
} frames;

typedef struct server {
    fbf_zmq_router r;
    const fbf_zmq_handler *h;
    fbf_jbuf refused; /* the reply to a refused message */
} server;

/* 0, or -errno. */
static int recv_frames(server *s, frames *m)
{
    int rc = fbf_zmq_router_recv(&s->r, m->f, MAX_FRAMES + 1, &m->total);
    m->kept = m->total < MAX_FRAMES ? m->total : MAX_FRAMES;
    return rc;
}

/* How many frames the reply must carry back: the routing id and, for a
 * REQ peer, everything up to and including the empty delimiter. */
static size_t envelope(frames *m)
{
    for (size_t i = 1; i < m->kept; i++)
        if (zmq_msg_size(&m->f[i]) == 0)
            return i + 1;
    return 1;
}

static int send_reply(server *s, frames *m, size_t env, const void *reply, size_t len)
{
    for (size_t i = 0; i < env; i++)
        if (zmq_send(s->r.sock, zmq_msg_data(&m->f[i]), zmq_msg_size(&m->f[i]), ZMQ_SNDMORE) < 0)
            return -1;
    return zmq_send(s->r.sock, reply, len, 0);
}

/* A message that the session never sees: a line on warn, an error reply
 * to its sender. */
static void refuse(server *s, frames *m, size_t env, bool stranger)
{
    const char *addr = zmq_msg_gets(&m->f[0], "Peer-Address");
    int fd = zmq_msg_get(&m->f[0], ZMQ_SRCFD);
    size_t body = m->total - env;
    char why[160];
    if (stranger) {
        snprintf(why, sizeof why, "another peer holds this session: fastbf answers only the "
                                  "peer that spoke first");
        fprintf(s->r.warn, "fastbf: refused a message from a peer that is not the session's "
                           "(%s, connection fd %d): this fastbf answers only the peer that "
                           "spoke first\n",
                addr ? addr : "address unknown", fd);
    } else {
        snprintf(why, sizeof why, "a message of %zu frames: fastbf takes one frame per message; "
                                  "nothing of it was applied",
                 body);
        fprintf(s->r.warn, "fastbf: refused a message of %zu frames from %s (connection fd "
                           "%d): one frame per message; nothing of it was applied\n",
                body, addr ? addr : "address unknown", fd);
    }
    fbf_jbuf_reset(&s->refused);
    if (s->h->refuse) {
        s->h->refuse(why, &s->refused);
    } else {
        fbf_jbuf_lit(&s->refused, "fastbf refused: ");
        fbf_jbuf_raw(&s->refused, why, strlen(why));
    }
    if (!s->refused.oom)
        send_reply(s, m, env, s->refused.p, s->refused.len);
}

static int serve_loop(server *s, fbf_serve_stats *st, fbf_error *err)
{
    frames m;
    for (size_t i = 0; i <= MAX_FRAMES; i++)
        zmq_msg_init(&m.f[i]);
    unsigned long received = 0;
    int rc;
    for (;;) {
        int e = 0;
        const char *op = "receive";
        if ((rc = recv_frames(s, &m)) < 0) {
            e = -rc;
            if (e == EINTR) {
                rc = fbf_errorf(err, -EINTR, "interrupted while waiting for Batsim");
                break;
            }
        } else {
            size_t env = envelope(&m);
            bool stranger = s->r.pinned && !fbf_zmq_router_is_peer(&s->r, &m.f[0]);
            if (stranger || m.total - env != 1) {
                refuse(s, &m, env, stranger);
                continue;
            }
            if (!s->r.pinned)
                fbf_zmq_router_pin(&s->r, &m.f[0]);
            zmq_msg_t *body = &m.f[env];
            received++;
            const void *reply;
            size_t len;
            double t0 = fbf_serve_stats_clock(st);
            rc = s->h->handle(s->h->ctx, zmq_msg_data(body), zmq_msg_size(body), &reply, &len,
                              err);
            fbf_serve_stats_add(st, t0);
            if (rc < 0) {
                /* Batsim would wait for this reply forever: one that it
                 * refuses makes it stop with our reason instead. */
                reply = s->h->refusal ? s->h->refusal(s->h->ctx, zmq_msg_data(body),
                                                      zmq_msg_size(body), err->text, &len)
                                      : NULL;
                if (!reply) { /* none in the protocol's terms (a Batsim 5 handshake) */
                    fbf_jbuf_reset(&s->refused);
                    fbf_jbuf_lit(&s->refused, "fastbf stopped: ");
                    fbf_jbuf_raw(&s->refused, err->text, strlen(err->text));
                    reply = s->refused.oom ? NULL : s->refused.p;
                    len = s->refused.len;
                }
                if (reply)
                    send_reply(s, &m, env, reply, len);
                break;
            }
            if (send_reply(s, &m, env, reply, len) >= 0) {
                if (rc > 0) {
                    rc = 0;
                    break;
                }
                continue;
            }
            e = errno;
            op = "send";
        }
        fbf_zmq_watch_loss loss = fbf_zmq_router_loss(&s->r, e);
        if (loss == FBF_ZMQ_WATCH_DROPPED)
            rc = fbf_errorf(err, -ENOMEM,
                            "cannot take Batsim's message #%lu: ZeroMQ dropped it unread with "
                            "its connection, as it does with a message above --max-message %zu "
                            "bytes or larger than this process can allocate; Batsim, still "
                            "connected, waits for a reply",
                            received + 1, s->r.max_message);
        else if (loss == FBF_ZMQ_WATCH_LEFT)
            rc = fbf_errorf(err, -ECONNRESET,
                            "Batsim disconnected after %lu messages, before the simulation "
                            "ended",
                            received);
        else
            rc = fbf_errorf(err, -e, "%s failed: %s", op, zmq_strerror(e));
        break;
    }
    for (size_t i = 0; i <= MAX_FRAMES; i++)
        zmq_msg_close(&m.f[i]);
    return rc;
}

int fbf_zmq_serve_with(const fbf_zmq_options *o, const fbf_zmq_handler *h,
                       fbf_serve_stats *stats, fbf_error *err)
{
    if (stats)
        *stats = (fbf_serve_stats){0};
    server s = {.h = h};
    int rc = fbf_zmq_router_open(&s.r, o, "peer to speak", false, err);
    if (rc == 0)
        rc = serve_loop(&s, stats, err);
    fbf_zmq_router_close(&s.r);
    fbf_jbuf_fini(&s.refused);
    return rc;
}

/* ---- Batsim v4 ------------------------------------------------------- */

static int bv4_handle(void *ctx, const void *req, size_t len, const void **reply,
                      size_t *reply_len, fbf_error *err)
{
    const char *r;
    int rc = fbf_bv4_session_handle(ctx, req, len, &r, reply_len, err);
    *reply = r;
    return rc;
}

static const void *bv4_refusal(void *ctx, const void *req, size_t len, const char *why,
                               size_t *reply_len)
{
    return fbf_bv4_session_refusal(ctx, req, len, why, reply_len);
}

/* A NOTIFY Batsim 4.2.1 aborts on, printing its type (as the session's
 * refusal, io/bv4_session.h), at time 0: nothing of the session is read. */
static void bv4_refuse(const char *why, fbf_jbuf *out)
{
    fbf_jbuf_lit(out, "{\"now\":0,\"events\":[{\"timestamp\":0,\"type\":\"NOTIFY\",\"data\":"
                      "{\"type\":");
    char text[200];
    snprintf(text, sizeof text, "fastbf refused: %s", why);
    fbf_jbuf_str(out, text);
    fbf_jbuf_lit(out, "}}]}");
}

int fbf_zmq_serve(const fbf_zmq_options *o, fbf_bv4_session *s, fbf_serve_stats *stats,
                  fbf_error *err)
{
    fbf_zmq_handler h = {
        .ctx = s, .handle = bv4_handle, .refusal = bv4_refusal, .refuse = bv4_refuse};
    return fbf_zmq_serve_with(o, &h, stats, err);
}
