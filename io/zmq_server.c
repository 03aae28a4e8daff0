/*
 * zmq_server: REP socket loop (see zmq_server.h).
 *
 * A REP socket never tells its owner that the peer went away, so a Batsim
 * that dies mid-simulation would leave fastbf waiting forever. A socket
 * monitor reports accepted and closed connections on an inproc PAIR
 * socket, which a watcher thread reads; once the conversation has started,
 * losing the last connected peer before SIMULATION_ENDS is an error. A
 * stray connection that comes and goes (a port probe) changes nothing.
 *
 * The exchange itself stays a plain blocking receive with no timeout: a
 * receive that times out now and then to look at the monitor arms and
 * cancels a kernel timer on every wait, and zmq_poll over both sockets
 * costs about 10 us per exchange; either is a visible share of a loopback
 * round trip. The watcher, which sleeps in zmq_poll until something
 * happens on its own sockets, ends the wait instead: on a lost Batsim it
 * shuts the context down (zmq_ctx_shutdown is thread-safe), which makes
 * the I/O thread's receive or send fail with ETERM.
 *
 * Invariants: sock and stop_tx belong to the I/O thread; mon and stop_rx
 * to the watcher from its start to its end, which the I/O thread joins
 * before closing anything; received and lost are the only shared state.
 * The socket lingers 1 s at close so the last reply (to SIMULATION_ENDS,
 * or the refusal that tells Batsim why fastbf stopped) still leaves when
 * the process exits.
 */
#include "io/zmq_server.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

typedef struct watch {
    void *ctx;
    void *mon, *stop_rx; /* the watcher's */
    void *stop_tx;       /* the I/O thread's end of the stop pair */
    atomic_ulong received; /* requests received so far */
    atomic_bool lost;      /* the watcher shut the context down */
    pthread_t thread;
    bool running;
} watch;

/* Reads one pending monitor event without waiting; returns its number
 * (ZMQ_EVENT_*), or 0 when there is none. */
static uint16_t read_monitor_event(void *mon)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    uint16_t ev = 0;
    if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) >= 6)
        memcpy(&ev, zmq_msg_data(&m), sizeof ev);
    while (zmq_msg_more(&m) && zmq_msg_recv(&m, mon, 0) >= 0) {
    }
    zmq_msg_close(&m);
    return ev;
}

static void *watch_main(void *arg)
{
    watch *w = arg;
    long peers = 0;
    for (;;) {
        zmq_pollitem_t it[2] = {{w->mon, 0, ZMQ_POLLIN, 0}, {w->stop_rx, 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(it, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break; /* ETERM: the context is going away */
        }
        if (it[1].revents & ZMQ_POLLIN)
            break; /* the exchange is over */
        bool lost = false;
        for (uint16_t ev; (ev = read_monitor_event(w->mon)) != 0;) {
            peers += ev == ZMQ_EVENT_ACCEPTED ? 1 : ev == ZMQ_EVENT_DISCONNECTED ? -1 : 0;
            lost = lost || (ev == ZMQ_EVENT_DISCONNECTED && peers <= 0);
        }
        if (lost && peers <= 0 && atomic_load(&w->received) > 0) {
            atomic_store(&w->lost, true);
            zmq_ctx_shutdown(w->ctx);
            break;
        }
    }
    zmq_close(w->mon);
    zmq_close(w->stop_rx);
    return NULL;
}

/* Starts the watcher of sock; on any failure fastbf serves without
 * disconnection detection (w->running stays false). */
static void watch_start(watch *w, void *ctx, void *sock)
{
    *w = (watch){.ctx = ctx};
    char mon_ep[64], stop_ep[64];
    snprintf(mon_ep, sizeof mon_ep, "inproc://fbf-monitor-%p", (void *)sock);
    snprintf(stop_ep, sizeof stop_ep, "inproc://fbf-stop-%p", (void *)sock);
    if (zmq_socket_monitor(sock, mon_ep, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) != 0)
        return;
    w->mon = zmq_socket(ctx, ZMQ_PAIR);
    w->stop_tx = zmq_socket(ctx, ZMQ_PAIR);
    w->stop_rx = zmq_socket(ctx, ZMQ_PAIR);
    if (w->mon && w->stop_tx && w->stop_rx && zmq_connect(w->mon, mon_ep) == 0 &&
        zmq_bind(w->stop_tx, stop_ep) == 0 && zmq_connect(w->stop_rx, stop_ep) == 0 &&
        pthread_create(&w->thread, NULL, watch_main, w) == 0) {
        w->running = true;
        return;
    }
    zmq_socket_monitor(sock, NULL, 0);
    void *const made[] = {w->mon, w->stop_tx, w->stop_rx};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (made[i])
            zmq_close(made[i]);
}

static void watch_stop(watch *w, void *sock)
{
    if (!w->running)
        return;
    zmq_socket_monitor(sock, NULL, 0);
    zmq_send(w->stop_tx, "", 0, ZMQ_DONTWAIT); /* fails with ETERM once shut down */
    pthread_join(w->thread, NULL);
    zmq_close(w->stop_tx);
    w->running = false;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int serve_loop(void *sock, watch *w, const fbf_zmq_handler *h, fbf_serve_stats *st,
                      fbf_error *err)
{
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    unsigned long received = 0;
    int rc;
    for (;;) {
        int e = 0;
        const char *op = "receive";
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            e = errno;
            if (e == EINTR) {
                rc = fbf_errorf(err, -EINTR, "interrupted while waiting for Batsim");
                break;
            }
        } else {
            atomic_store(&w->received, ++received);
            const void *reply;
            size_t len;
            double t0 = st ? mono_s() : 0;
            rc = h->handle(h->ctx, zmq_msg_data(&msg), zmq_msg_size(&msg), &reply, &len, err);
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
                reply = h->refusal ? h->refusal(h->ctx, zmq_msg_data(&msg), zmq_msg_size(&msg),
                                                err->text, &len)
                                   : NULL;
                if (reply)
                    zmq_send(sock, reply, len, 0);
                break;
            }
            if (zmq_send(sock, reply, len, 0) >= 0) {
                if (rc > 0) {
                    rc = 0;
                    break;
                }
                continue;
            }
            e = errno;
            op = "send";
        }
        if (e == ETERM && atomic_load(&w->lost))
            rc = fbf_errorf(err, -ECONNRESET,
                            "Batsim disconnected after %lu messages, before the simulation "
                            "ended",
                            received);
        else
            rc = fbf_errorf(err, -e, "%s failed: %s", op, zmq_strerror(e));
        break;
    }
    zmq_msg_close(&msg);
    return rc;
}

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

int fbf_zmq_serve(const char *endpoint, fbf_bv4_session *s, fbf_serve_stats *stats,
                  fbf_error *err)
{
    fbf_zmq_handler h = {.ctx = s, .handle = bv4_handle, .refusal = bv4_refusal};
    return fbf_zmq_serve_with(endpoint, &h, stats, err);
}

int fbf_zmq_serve_with(const char *endpoint, const fbf_zmq_handler *h, fbf_serve_stats *stats,
                       fbf_error *err)
{
    if (stats)
        *stats = (fbf_serve_stats){0};
    void *zctx = zmq_ctx_new();
    void *sock = zctx ? zmq_socket(zctx, ZMQ_REP) : NULL;
    int rc;
    if (!sock) {
        rc = fbf_errorf(err, -errno, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        goto out;
    }
    int linger = 1000;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(sock, endpoint) != 0) {
        rc = fbf_errorf(err, -errno, "cannot bind %s: %s", endpoint, zmq_strerror(errno));
        goto out;
    }
    watch w;
    watch_start(&w, zctx, sock);
    rc = serve_loop(sock, &w, h, stats, err);
    watch_stop(&w, sock);
out:
    if (sock)
        zmq_close(sock);
    if (zctx)
        zmq_ctx_term(zctx);
    return rc;
}
