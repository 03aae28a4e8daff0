/*
 * zmq_server: the ZeroMQ REP transport of the Batsim v4 protocol.
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


/* stats (NULL: not wanted, and nothing is timed) is filled in whatever the
 * outcome. */
int fbf_zmq_serve(const char *endpoint, fbf_bv4_session *s, fbf_serve_stats *stats,
                  fbf_error *err);

#endif
