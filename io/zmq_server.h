/*
 * zmq_server: the ZeroMQ REP transport of Batsim v4's protocol and of a
 * Batsim 5 process EDC.
 *
 * fbf_zmq_serve() binds a REP socket to the endpoint and runs the
 * synchronous exchange on the calling thread (the I/O thread: ZeroMQ
 * sockets are not thread-safe, so no other thread touches it): receive a
 * request, let the session turn it into a reply, send the reply; until
 * SIMULATION_ENDS has been answered. It returns 0 then, or a negative code
 * with a message (a protocol violation, a socket error, a signal). A
 * request the session refuses is still answered, by the session's refusal
 * (fbf_bv4_session_refusal()), so that Batsim stops too, with the reason.
 */
#ifndef FBF_ZMQ_SERVER_H
#define FBF_ZMQ_SERVER_H

#include "engine/error.h"
#include "io/bv4_session.h"
#include "io/session.h"

/* Default endpoint: what Batsim connects to (tcp://localhost:28000). */
#define FBF_ZMQ_DEFAULT_ENDPOINT "tcp://*:28000"


/* What the server asks of a protocol: handle() turns a request into its
 * reply (0; 1 for the last one, after which the server returns; < 0 an
 * error, with err); after an error, refusal() (NULL: none) gives the reply
 * that makes the peer stop with why, or NULL. Replies are the handler's,
 * valid until its next call. */
typedef struct fbf_zmq_handler {
    void *ctx;
    int (*handle)(void *ctx, const void *req, size_t len, const void **reply,
                  size_t *reply_len, fbf_error *err);
    const void *(*refusal)(void *ctx, const void *req, size_t len, const char *why,
                           size_t *reply_len);
} fbf_zmq_handler;

int fbf_zmq_serve_with(const char *endpoint, const fbf_zmq_handler *h, fbf_serve_stats *stats,
                       fbf_error *err);

/* The Batsim v4 session as the handler. stats (NULL: not wanted, and
 * nothing is timed) is filled in whatever the outcome. */
int fbf_zmq_serve(const char *endpoint, fbf_bv4_session *s, fbf_serve_stats *stats,
                  fbf_error *err);

#endif
