/*
 * zmq_watch: watches the connections of a server socket (io/zmq_router.h)
 * from a thread of its own, through a ZeroMQ socket monitor.
 *
 * A server socket never tells its owner that a peer went away, so a
 * Batsim that dies mid-simulation would leave fastbf waiting forever. The
 * watcher keeps the set of connections open (ZMQ_EVENT_ACCEPTED and
 * ZMQ_EVENT_DISCONNECTED carry the connection's file descriptor, which is
 * also every message's ZMQ_SRCFD). Once the I/O thread has pinned the
 * session's peer (fbf_zmq_watch_pin(), with that descriptor), losing that
 * connection shuts the context down (zmq_ctx_shutdown is thread-safe):
 * the I/O thread's blocking receive or send then fails with ETERM, and
 * fbf_zmq_watch_lost() says why. A connection closes so either because the
 * peer left or because ZeroMQ could not take the message it was bringing
 * (above ZMQ_MAXMSGSIZE, or more than the process could allocate): ZeroMQ
 * then ends the connection unread and says nothing more. A REQ peer that
 * did not leave reconnects within its reconnect interval (100 ms by
 * default), so the watcher waits FBF_ZMQ_WATCH_GRACE_MS for a new
 * connection before it tells the two apart. Any other connection coming and going
 * changes nothing; one that had completed ZeroMQ's handshake gets a line
 * on warn, since ZeroMQ ends a connection so, unread and unreported, when
 * it brings a message above the socket's ZMQ_MAXMSGSIZE (max_message).
 * A port probe or a peer that fails the handshake (a handshake-failed
 * event just before its disconnection: both come from ZeroMQ's single I/O
 * thread, one connection at a time) is not reported.
 *
 * The exchange itself stays a plain blocking receive with no timeout: a
 * receive that times out now and then to look at the monitor arms and
 * cancels a kernel timer on every wait, and zmq_poll over both sockets
 * costs about 10 us per exchange; either is a visible share of a loopback
 * round trip. The watcher sleeps in zmq_poll until something happens on
 * its own sockets.
 *
 * Threads: start, pin and stop are the I/O thread's (it owns the stop_tx
 * end of an inproc pair; pin and stop send on it); the monitor socket,
 * stop_rx and the set of connections are the watcher's from start to
 * stop, which joins it; pinned_fd and lost are the only shared state.
 * start must come before the socket binds, so that no connection is
 * accepted unseen. start returns -errno with one line in err when the
 * monitor or its thread cannot be set up (out of memory, no thread to be
 * had): a server that could not tell Batsim's death would wait forever.
 * The watcher's table of connections is allocated by start, on the I/O
 * thread, so that the watcher itself allocates nothing until a 17th
 * connection: a thread's first allocation is where an allocator that
 * has run out of memory fails worst.
 */
#ifndef FBF_ZMQ_WATCH_H
#define FBF_ZMQ_WATCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/error.h"

typedef struct fbf_zmq_watch {
    void *ctx;
    void *mon, *stop_rx; /* the watcher's */
    void *stop_tx;       /* the I/O thread's */
    FILE *warn;
    size_t max_message;
    int *fds;            /* connections open (the watcher's) */
    size_t nfds, capfds;
    bool fds_incomplete; /* out of memory once: fds may miss some */
    atomic_int pinned_fd; /* the session's peer; -1: none yet */
    atomic_int lost;      /* fbf_zmq_watch_loss: why the watcher shut the context down */
    size_t accepts;       /* connections accepted since the last one closed */
    pthread_t thread;
    bool running;
} fbf_zmq_watch;

int fbf_zmq_watch_start(fbf_zmq_watch *w, void *ctx, void *sock, FILE *warn,
                        size_t max_message, fbf_error *err);
/* The session's peer speaks through connection fd (its messages' ZMQ_SRCFD). */
void fbf_zmq_watch_pin(fbf_zmq_watch *w, int fd);
#define FBF_ZMQ_WATCH_GRACE_MS 500

typedef enum fbf_zmq_watch_loss {
    FBF_ZMQ_WATCH_HELD = 0, /* the pinned peer's connection is open */
    FBF_ZMQ_WATCH_LEFT,     /* it closed and the peer did not come back */
    FBF_ZMQ_WATCH_DROPPED,  /* it closed and the peer reconnected at once: ZeroMQ
                             * ended it because of the message it brought */
} fbf_zmq_watch_loss;

/* Why the pinned peer's connection was lost (and the context shut down). */
fbf_zmq_watch_loss fbf_zmq_watch_lost(fbf_zmq_watch *w);
void fbf_zmq_watch_stop(fbf_zmq_watch *w, void *sock);

#endif
