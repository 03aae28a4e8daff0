/*
 * bv2_client: fastbf as a Batsim v2 text-protocol scheduler. Batsim serves
 * a Unix stream socket; fastbf connects to it and runs the synchronous
 * exchange on the calling thread (the I/O thread): read a message
 * (io/bv2_frame.h), read its events (io/bv2_codec.h), let the session
 * (io/session.h) apply them and decide, write the reply; until the reply
 * to Z. Job data is in Batsim's Redis store, under the socket's absolute
 * path followed by a colon.
 *
 * A machine Batsim reports failed (F) is out of service until it is back
 * (f): nothing is started or reserved on it. One that fails under a
 * running job stays that job's: v2 has no kill and Batsim reports the
 * job's end (C) itself; from then on the machine stays out of service
 * until f.
 *
 * Ownership: _create() copies the options' strings it keeps (the socket's
 * absolute path); the submitter and power config of the session options
 * stay the caller's. _destroy() accepts NULL.
 *
 * Errors: fbf_bv2_client_serve() returns 0 after answering Z, or a
 * negative code with one line in err: the connection (cannot connect
 * within the timeout: -ECONNREFUSED; closed by Batsim: -EPIPE; a message
 * above the limit: -EMSGSIZE), the message (-EPROTO, from the codec, or
 * the session's refusal phrased with its message and event: "message 3:
 * event 0 (C): unknown job w0!9"), Redis (-ECONNREFUSED, -EIO).
 */
#ifndef FBF_BV2_CLIENT_H
#define FBF_BV2_CLIENT_H

#include <stddef.h>

#include "engine/error.h"
#include "io/session.h"

typedef struct fbf_bv2_options {
    fbf_session_options session;
    const char *socket;     /* Batsim's socket file */
    const char *redis_host; /* Batsim's Redis server */
    int redis_port;
    size_t max_message;      /* the largest message accepted, in bytes */
    double connect_timeout_s; /* how long to retry connecting */
} fbf_bv2_options;

typedef struct fbf_bv2_client fbf_bv2_client;

fbf_bv2_client *fbf_bv2_client_create(const fbf_bv2_options *opt, fbf_error *err);
void fbf_bv2_client_destroy(fbf_bv2_client *c);

/* stats: NULL when not wanted. */
int fbf_bv2_client_serve(fbf_bv2_client *c, fbf_serve_stats *stats, fbf_error *err);

/* The socket's absolute path (the store's prefix). */
const char *fbf_bv2_client_socket(const fbf_bv2_client *c);
fbf_engine *fbf_bv2_client_engine(fbf_bv2_client *c);

#endif
