/*
 * zmq_server: the ZeroMQ server of Batsim v4's protocol and of a Batsim 5
 * process EDC, for one peer.
 *
 * fbf_zmq_serve_with() binds a socket to the endpoint and runs the
 * synchronous exchange on the calling thread (the I/O thread: ZeroMQ
 * sockets are not thread-safe, so no other thread touches it): receive a
 * request, let the handler turn it into a reply, send the reply; until
 * the handler says the last reply is sent. It returns 0 then, or a
 * negative code with a message (a protocol violation, a socket error, a
 * signal, the session's peer gone). A request the handler refuses is
 * still answered, by the handler's refusal (else the text "fastbf
 * stopped: <why>"), so that Batsim stops too, with the reason.
 *
 * Whom it answers. fastbf answers whoever reaches its socket, so:
 *  - a network-wide endpoint (io/endpoint.h: "*", 0.0.0.0, a public
 *    interface) is refused (-EACCES) unless allow_remote, which prints a
 *    warning line on warn instead; the default binds the loopback;
 *  - the session belongs to the first peer whose message the handler
 *    takes: its ZeroMQ routing id is pinned. The socket is a ROUTER, which
 *    tells every message's peer and can answer each peer its own way,
 *    where a REP socket answers whoever spoke last and names nobody
 *    (ZeroMQ's metadata gives only a peer's IP address, the same for every
 *    process on a machine). Replies carry the request's envelope (the
 *    frames up to and including the empty delimiter, as REQ sockets, Batsim
 *    and fastbf-replay send them), so a REQ peer sees what a REP server
 *    would send. A message from any other peer, including the session's
 *    own process reconnecting (a new routing id: Batsim never reconnects),
 *    never reaches the handler: it gets an error reply (its REQ socket does
 *    not hang) and one line on warn;
 *  - a message of more than one frame (after the envelope) is refused
 *    before anything of it is applied, with an error reply and a line on
 *    warn; the session goes on as if it had never come;
 *  - a message above max_message bytes is refused by ZeroMQ itself
 *    (ZMQ_MAXMSGSIZE) when its header is read, before any allocation:
 *    ZeroMQ closes that connection without a word, so the connection
 *    watcher (io/zmq_watch.h) reports it: a line on warn for another
 *    peer, the session's end with that reason for the session's peer.
 *
 * Replies to refused messages are the handler's refuse() (made without
 * the session), or the text "fastbf refused: <why>" when it has none.
 */
#ifndef FBF_ZMQ_SERVER_H
#define FBF_ZMQ_SERVER_H

#include <stdbool.h>
#include <stdio.h>

#include "engine/error.h"
#include "io/bv4_session.h"
#include "io/jbuf.h"
#include "io/session.h"
#include "io/zmq_router.h" /* fbf_zmq_options and its defaults */

/* What the server asks of a protocol: handle() turns a request into its
 * reply (0; 1 for the last one, after which the server returns; < 0 an
 * error, with err); after an error, refusal() (NULL: none) gives the reply
 * that makes the peer stop with why, or NULL. refuse() (NULL: the plain
 * text) writes into out the reply to a message refused before the
 * session saw it, without touching the session. Replies are the
 * handler's, valid until its next call. */
typedef struct fbf_zmq_handler {
    void *ctx;
    int (*handle)(void *ctx, const void *req, size_t len, const void **reply,
                  size_t *reply_len, fbf_error *err);
    const void *(*refusal)(void *ctx, const void *req, size_t len, const char *why,
                           size_t *reply_len);
    void (*refuse)(const char *why, fbf_jbuf *out);
} fbf_zmq_handler;

int fbf_zmq_serve_with(const fbf_zmq_options *o, const fbf_zmq_handler *h,
                       fbf_serve_stats *stats, fbf_error *err);

/* The Batsim v4 session as the handler. stats (NULL: not wanted, and
 * nothing is timed) is filled in whatever the outcome. */
int fbf_zmq_serve(const fbf_zmq_options *o, fbf_bv4_session *s, fbf_serve_stats *stats,
                  fbf_error *err);

#endif
