/*
 * zmq_server: REP socket loop (see zmq_server.h).
 *
 * The socket lingers 1 s at close so the last reply (to SIMULATION_ENDS)
 * still leaves when the process exits right after.
 */
#include "io/zmq_server.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

int fbf_zmq_serve(const char *endpoint, fbf_bv4_session *s, fbf_error *err)
{
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
    zmq_msg_t msg;
    zmq_msg_init(&msg);
    for (;;) {
        if (zmq_msg_recv(&msg, sock, 0) < 0) {
            int e = errno;
            rc = e == EINTR ? fbf_errorf(err, -EINTR, "interrupted while waiting for Batsim")
                            : fbf_errorf(err, -e, "receive failed: %s", zmq_strerror(e));
            break;
        }
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
out:
    if (sock)
        zmq_close(sock);
    if (zctx)
        zmq_ctx_term(zctx);
    return rc;
}
