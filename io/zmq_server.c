/*
 * zmq_server: the ROUTER socket loop of one session (see zmq_server.h).
 *
 * Invariants: the socket, the frames and the pinned routing id belong to
 * the I/O thread (the caller's); the connection watcher (zmq_watch.h)
 * runs beside it from before the bind to the end. The socket lingers 1 s
 * at close so the last reply (to SIMULATION_ENDS, or the refusal that
 * tells Batsim why fastbf stopped) still leaves when the process exits.
 */
#include "io/zmq_server.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "io/endpoint.h"
#include "io/zmq_watch.h"

/* A message's frames: the first MAX_FRAMES kept, any beyond only counted
 * (into the spare). A REQ peer sends three: routing id, delimiter, body. */
#define MAX_FRAMES 8

typedef struct frames {
    zmq_msg_t f[MAX_FRAMES + 1];
    size_t kept, total;
} frames;

typedef struct server {
    void *sock;
    fbf_zmq_watch watch;
    const fbf_zmq_handler *h;
    FILE *warn;
    size_t max_message;
    bool pinned;
    size_t peer_len;
    unsigned char peer[256]; /* the session's routing id (ZeroMQ caps it at 255 bytes) */
    fbf_jbuf refused;        /* the reply to a refused message */
} server;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* 0, or -errno. ZeroMQ delivers a message's frames together: only the
 * first receive waits. */
static int recv_frames(void *sock, frames *m)
{
    m->kept = m->total = 0;
    for (;;) {
        zmq_msg_t *f = &m->f[m->kept < MAX_FRAMES ? m->kept : MAX_FRAMES];
        if (zmq_msg_recv(f, sock, 0) < 0)
            return -errno;
        m->total++;
        if (m->kept < MAX_FRAMES)
            m->kept++;
        if (!zmq_msg_more(f))
            return 0;
    }
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
        if (zmq_send(s->sock, zmq_msg_data(&m->f[i]), zmq_msg_size(&m->f[i]), ZMQ_SNDMORE) < 0)
            return -1;
    return zmq_send(s->sock, reply, len, 0);
}

static bool is_session_peer(const server *s, zmq_msg_t *id)
{
    return zmq_msg_size(id) == s->peer_len && memcmp(zmq_msg_data(id), s->peer, s->peer_len) == 0;
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
        fprintf(s->warn, "fastbf: refused a message from a peer that is not the session's "
                         "(%s, connection fd %d): this fastbf answers only the peer that spoke "
                         "first\n",
                addr ? addr : "address unknown", fd);
    } else {
        snprintf(why, sizeof why, "a message of %zu frames: fastbf takes one frame per message; "
                                  "nothing of it was applied",
                 body);
        fprintf(s->warn, "fastbf: refused a message of %zu frames from %s (connection fd %d): "
                         "one frame per message; nothing of it was applied\n",
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

static void pin(server *s, zmq_msg_t *id)
{
    s->pinned = true;
    s->peer_len = zmq_msg_size(id);
    memcpy(s->peer, zmq_msg_data(id), s->peer_len);
    fbf_zmq_watch_pin(&s->watch, zmq_msg_get(id, ZMQ_SRCFD));
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
        if ((rc = recv_frames(s->sock, &m)) < 0) {
            e = -rc;
            if (e == EINTR) {
                rc = fbf_errorf(err, -EINTR, "interrupted while waiting for Batsim");
                break;
            }
        } else {
            size_t env = envelope(&m);
            bool stranger = s->pinned && !is_session_peer(s, &m.f[0]);
            if (stranger || m.total - env != 1) {
                refuse(s, &m, env, stranger);
                continue;
            }
            if (!s->pinned)
                pin(s, &m.f[0]);
            zmq_msg_t *body = &m.f[env];
            received++;
            const void *reply;
            size_t len;
            double t0 = st ? mono_s() : 0;
            rc = s->h->handle(s->h->ctx, zmq_msg_data(body), zmq_msg_size(body), &reply, &len,
                              err);
            if (st) { /* asked for: two clock reads a message */
                double dt = mono_s() - t0;
                st->messages = received;
                st->handling_s += dt;
                if (received == 1)
                    st->first_s = dt;
            }
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
        fbf_zmq_watch_loss loss = e == ETERM ? fbf_zmq_watch_lost(&s->watch)
                                             : FBF_ZMQ_WATCH_HELD;
        if (loss == FBF_ZMQ_WATCH_DROPPED)
            rc = fbf_errorf(err, -ENOMEM,
                            "cannot take Batsim's message #%lu: ZeroMQ dropped it unread with "
                            "its connection, as it does with a message above --max-message %zu "
                            "bytes or larger than this process can allocate; Batsim, still "
                            "connected, waits for a reply",
                            received + 1, s->max_message);
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
    const char *endpoint = o->endpoint ? o->endpoint : FBF_ZMQ_DEFAULT_ENDPOINT;
    server s = {.h = h,
                .warn = o->warn ? o->warn : stderr,
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
    int linger = 1000;
    int64_t max = (int64_t)s.max_message;
    zmq_setsockopt(s.sock, ZMQ_LINGER, &linger, sizeof linger);
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
                            "(--allow-remote): the first peer to speak drives this fastbf\n",
                    endpoint);
        if (o->announce) {
            fprintf(s.warn, "%s listening on %s\n", o->announce, endpoint);
            fflush(s.warn);
        }
        rc = serve_loop(&s, stats, err);
    }
    fbf_zmq_watch_stop(&s.watch, s.sock);
out:
    if (s.sock)
        zmq_close(s.sock);
    if (zctx)
        zmq_ctx_term(zctx);
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
