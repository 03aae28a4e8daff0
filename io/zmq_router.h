/*
 * zmq_router: the bound ROUTER socket of one session, as the Batsim server
 * (io/zmq_server.h) and the RFC 27 server (io/flux_server.h) both set it
 * up: its ZeroMQ context, the options, the bind, the connection watcher
 * (io/zmq_watch.h) and the peer the session belongs to. The serving loops
 * (synchronous for Batsim, asynchronous for Flux) stay with the servers.
 *
 * fbf_zmq_router_open(), in order:
 *  - refuses a network-wide endpoint unless allow_remote (io/endpoint.h);
 *  - creates a context and a ROUTER socket that lingers 1 s at close (so
 *    that the last reply still leaves when the process exits), with
 *    ZMQ_ROUTER_MANDATORY when asked (a message to a peer that is gone is
 *    then an error, not a silent drop), and ZMQ_MAXMSGSIZE max_message;
 *  - starts the connection watcher (before the bind, so that no connection
 *    is accepted unseen) and binds the endpoint;
 *  - on a network-wide endpoint, prints "fastbf: warning: <endpoint> is
 *    reachable from other machines (--allow-remote): the first <first>
 *    drives this fastbf" on warn; with announce, "<announce> listening on
 *    <endpoint>" (flushed).
 * It returns 0, or a negative errno with one line in err, having then
 * released whatever it had set up (closing it again is harmless).
 *
 * Ownership and threads: the router owns its context, socket and
 * watcher; fbf_zmq_router_close() releases them. The watcher's thread
 * holds r's address from open to close, so r must not move in between.
 * The socket, the pinned peer and every call are the I/O thread's (the
 * caller's); ZeroMQ sockets are not thread-safe. o's strings are
 * borrowed: endpoint must outlive the router.
 */
#ifndef FBF_ZMQ_ROUTER_H
#define FBF_ZMQ_ROUTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <zmq.h>

#include "engine/error.h"
#include "io/zmq_watch.h"

/* Default endpoint: the loopback, what Batsim's default tcp://localhost:28000 reaches. */
#define FBF_ZMQ_DEFAULT_ENDPOINT "tcp://127.0.0.1:28000"
/* Default message limit: a burst of 1e6 submissions is 158 MB (335 MB
 * with forwarded profiles and a waiting-time query per job). */
#define FBF_ZMQ_MAX_MESSAGE_DEFAULT ((size_t)512 << 20)

typedef struct fbf_zmq_options {
    const char *endpoint; /* NULL: FBF_ZMQ_DEFAULT_ENDPOINT */
    bool allow_remote;    /* bind a network-wide endpoint, with a warning */
    size_t max_message;   /* bytes; 0: FBF_ZMQ_MAX_MESSAGE_DEFAULT */
    FILE *warn;           /* refused peers and messages; NULL: stderr */
    const char *announce; /* once bound, "<announce> listening on <endpoint>" on warn;
                           * NULL: nothing */
} fbf_zmq_options;

typedef struct fbf_zmq_router {
    void *ctx, *sock;
    fbf_zmq_watch watch;
    const char *endpoint; /* o's, defaults applied */
    FILE *warn;
    size_t max_message;
    bool pinned;
    size_t peer_len;
    unsigned char peer[256]; /* the session's routing id (ZeroMQ caps it at 255 bytes) */
} fbf_zmq_router;

/* first: who drives a network-wide fastbf, in the warning ("peer to
 * speak"). mandatory: ZMQ_ROUTER_MANDATORY. */
int fbf_zmq_router_open(fbf_zmq_router *r, const fbf_zmq_options *o, const char *first,
                        bool mandatory, fbf_error *err);
void fbf_zmq_router_close(fbf_zmq_router *r);

/* Receives one message into f[0..n-1] (n >= 2, initialised): its first
 * n - 1 frames in order, then each further frame in turn into f[n - 1],
 * which so holds the message's last one. *total: how many frames came.
 * 0, or -errno (ETERM: see fbf_zmq_router_loss()). ZeroMQ delivers a
 * message's frames together: only the first receive waits. */
int fbf_zmq_router_recv(fbf_zmq_router *r, zmq_msg_t *f, size_t n, size_t *total);

/* The session belongs to the peer of routing id id (a message's first
 * frame): the watcher follows its connection from now on. */
void fbf_zmq_router_pin(fbf_zmq_router *r, zmq_msg_t *id);
/* Whether id is the pinned peer's. */
bool fbf_zmq_router_is_peer(const fbf_zmq_router *r, zmq_msg_t *id);

/* Why a receive or send failed with errno e: the watcher's verdict when
 * it shut the context down (ETERM), else FBF_ZMQ_WATCH_HELD. */
fbf_zmq_watch_loss fbf_zmq_router_loss(fbf_zmq_router *r, int e);

#endif
