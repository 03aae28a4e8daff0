/*
 * flux_server: the ZeroMQ transport of fastbf's RFC 27 service.
 *
 * RFC 27's exchange is asynchronous: fastbf and the job manager each send
 * requests, and an alloc is answered much later, when cores free up. So
 * fastbf binds a ROUTER socket and the job manager connects a DEALER
 * (docs/flux.md): every message is one RFC 3 message in its frames
 * (io/flux_msg.h), the ROUTER's routing id before them, and either side
 * may send at any time. One thread (the caller's, the I/O thread) owns
 * the socket: it receives a message, hands it to the session, and sends
 * what the session queued, until sim.end is answered.
 *
 * Whom it answers, as the Batsim server does (io/zmq_server.h):
 *  - the endpoint must be local (loopback, ipc://, inproc://) unless
 *    allow_remote, which prints a warning line (io/endpoint.h);
 *  - the session belongs to the first peer whose sim.attach the session
 *    takes: its routing id is pinned. A message from any other peer
 *    never reaches the session: a request gets an error response
 *    (errnum EPERM, "another job manager holds this session") and each
 *    such message a line on warn;
 *  - a message above max_message is refused by ZeroMQ itself
 *    (ZMQ_MAXMSGSIZE), which ends that connection: the connection
 *    watcher (io/zmq_watch.h) reports it, and the session's peer's loss
 *    ends the session (-ECONNRESET).
 *
 * On an error that ends the session, and on a signal (-EINTR), fastbf
 * sends the pinned job manager RFC 27's disconnect
 * (job-manager.disconnect, no response wanted) before it returns.
 */
#ifndef FBF_FLUX_SERVER_H
#define FBF_FLUX_SERVER_H

#include "io/flux_session.h"
#include "io/zmq_server.h"

int fbf_flux_serve(const fbf_zmq_options *o, fbf_flux_session *s, fbf_serve_stats *stats,
                   fbf_error *err);

#endif
