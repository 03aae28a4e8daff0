/*
 * zmq_server: REP socket loop (see zmq_server.h).
 *
 * A REP socket never tells its owner that the peer went away, so a Batsim
 * that dies mid-simulation would leave fastbf waiting forever. A socket
 * monitor reports accepted and closed connections on an inproc PAIR
 * socket; once the conversation has started, losing the last connected
 * peer before SIMULATION_ENDS is an error. A stray connection that comes
 * and goes (a port probe) changes nothing. The exchange itself stays a
 * plain blocking receive (zmq_poll over both sockets costs about 10 us per
 * exchange): the receive times out every MONITOR_MS, and only then are the
 * monitor's events read, so a lost Batsim is noticed within that delay. The socket lingers 1 s at close so
 * the last reply (to SIMULATION_ENDS) still leaves when the process exits.
 */
#include "io/zmq_server.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zmq.h>

#define MONITOR_MS 500

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

static int serve_loop(void *sock, void *mon, fbf_bv4_session *s, fbf_error *err)
{
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    unsigned long received = 0;
    long peers = 0;
    int rc;
    for (;;) {
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            int e = errno;
            if (e == EAGAIN && mon) { /* a quiet moment: is Batsim still there? */
                bool lost = false;
                for (uint16_t ev; (ev = read_monitor_event(mon)) != 0;) {
                    peers += ev == ZMQ_EVENT_ACCEPTED ? 1 : ev == ZMQ_EVENT_DISCONNECTED ? -1 : 0;
                    lost = lost || (ev == ZMQ_EVENT_DISCONNECTED && peers <= 0);
                }
                if (!(lost && peers <= 0 && received > 0))
                    continue;
                rc = fbf_errorf(err, -ECONNRESET,
                                "Batsim disconnected after %lu messages, before "
                                "SIMULATION_ENDS",
                                received);
                break;
            }
            rc = e == EINTR ? fbf_errorf(err, -EINTR, "interrupted while waiting for Batsim")
                            : fbf_errorf(err, -e, "receive failed: %s", zmq_strerror(e));
            break;
        }
        received++;
        const char *reply;
        size_t len;
        rc = fbf_bv4_session_handle(s, zmq_msg_data(&msg), zmq_msg_size(&msg), &reply, &len,
                                    err);
        if (rc < 0)
            break;
        if (zmq_send(sock, reply, len, 0) < 0) {
            int e = errno;
            rc = fbf_errorf(err, -e, "send failed: %s", zmq_strerror(e));
            break;
        }
        if (rc == FBF_BV4_ENDED) {
            rc = 0;
            break;
        }
    }
    zmq_msg_close(&msg);
    return rc;
}

int fbf_zmq_serve(const char *endpoint, fbf_bv4_session *s, fbf_error *err)
{
    void *zctx = zmq_ctx_new();
    void *sock = zctx ? zmq_socket(zctx, ZMQ_REP) : NULL;
    void *mon = NULL;
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
    char mon_ep[64];
    snprintf(mon_ep, sizeof mon_ep, "inproc://fbf-monitor-%p", (void *)sock);
    if (zmq_socket_monitor(sock, mon_ep, ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED) == 0 &&
        (mon = zmq_socket(zctx, ZMQ_PAIR)) != NULL && zmq_connect(mon, mon_ep) != 0) {
        zmq_close(mon);
        mon = NULL; /* serve without disconnection detection */
    }
    if (mon) {
        int ms = MONITOR_MS;
        zmq_setsockopt(sock, ZMQ_RCVTIMEO, &ms, sizeof ms);
    }
    rc = serve_loop(sock, mon, s, err);
out:
    if (mon) {
        zmq_socket_monitor(sock, NULL, 0);
        zmq_close(mon);
    }
    if (sock)
        zmq_close(sock);
    if (zctx)
        zmq_ctx_term(zctx);
    return rc;
}
