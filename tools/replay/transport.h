/*
 * transport: how fastbf-replay hands a request to a scheduler and gets the
 * reply, behind one small interface so the simulator does not care whether
 * the scheduler is a process it started, one already running, or the
 * fastbf session linked into the replayer.
 *
 *   exchange(request) -> reply   one request/reply round trip
 *   finish()                     after the reply to SIMULATION_ENDS: let the
 *                                scheduler go (wait for a child, 5 s at most)
 *   destroy()                    releases everything; kills a child still alive
 *
 * Invariants: exchanges are strictly alternating request/reply (ZeroMQ REQ
 * semantics); the reply buffer is owned by the transport and valid until
 * the next exchange() or destroy(); it need not be NUL-terminated.
 * A failed exchange (timeout, child exited, scheduler error) leaves the
 * transport unusable except for destroy(): the caller reports and stops.
 *
 * Errors: negative errno codes with one line in err: -ETIMEDOUT (no reply
 * within the timeout), -ECHILD (the spawned scheduler exited; its status is
 * in the text), -EPROTO (the in-process session refused the request),
 * -EIO (ZeroMQ or socket failure), -EPIPE (the scheduler closed its
 * socket), -EMSGSIZE (a size prefix above the bound), -ENOMEM.
 */
#ifndef FBF_REPLAY_TRANSPORT_H
#define FBF_REPLAY_TRANSPORT_H

#include <stddef.h>

#include "engine/engine.h"
#include "engine/error.h"
#include "io/bv4_session.h"

typedef struct fbf_transport fbf_transport;

typedef struct fbf_transport_ops {
    int (*exchange)(fbf_transport *t, const char *req, size_t len, const char **reply,
                    size_t *reply_len, fbf_error *err);
    int (*finish)(fbf_transport *t, fbf_error *err);
    void (*destroy)(fbf_transport *t);
    /* Optional: the scheduler's work counters, when it can tell
     * (in process: the policy's, engine.h); returns how many. */
    size_t (*counters)(fbf_transport *t, fbf_policy_counter *out, size_t max);
} fbf_transport_ops;

struct fbf_transport {
    const fbf_transport_ops *ops;
    char what[160]; /* "tcp://127.0.0.1:5555", "in-process fcfs", ... for messages */
};

static inline int fbf_transport_exchange(fbf_transport *t, const char *req, size_t len,
                                         const char **reply, size_t *reply_len, fbf_error *err)
{
    return t->ops->exchange(t, req, len, reply, reply_len, err);
}

static inline int fbf_transport_finish(fbf_transport *t, fbf_error *err)
{
    return t->ops->finish ? t->ops->finish(t, err) : 0;
}

static inline size_t fbf_transport_counters(fbf_transport *t, fbf_policy_counter *out,
                                            size_t max)
{
    return t->ops->counters ? t->ops->counters(t, out, max) : 0;
}

static inline void fbf_transport_destroy(fbf_transport *t)
{
    if (t)
        t->ops->destroy(t);
}

/* A ZeroMQ REQ socket connected to a running scheduler's endpoint. */
fbf_transport *fbf_transport_connect(const char *endpoint, double timeout_s, fbf_error *err);

/* Starts "/bin/sh -c cmd" with {endpoint} replaced by tcp://127.0.0.1:PORT
 * (or " --endpoint tcp://127.0.0.1:PORT" appended when cmd has none), PORT
 * being a free port, and connects to it. The child's stdout goes to our
 * stderr so the summary on stdout stays clean. The child runs in its own
 * process group, which the replayer kills if it must (never anything else). */
fbf_transport *fbf_transport_spawn(const char *cmd, double timeout_s, fbf_error *err);

/* The fastbf session in this process (io/bv4_session.h). */
fbf_transport *fbf_transport_inproc(const fbf_bv4_options *opt, const char *what,
                                    fbf_error *err);

/* Batsim v2's transport: a Unix-domain stream socket this replayer
 * listens on, size-prefixed messages (transport_unix.c). path NULL: a
 * fresh one in a temporary directory (removed by destroy); cmd NULL: wait
 * for any scheduler to connect, else start "/bin/sh -c cmd" with
 * "{socket}" replaced by the absolute path (or " --socket PATH" appended),
 * in its own process group as fbf_transport_spawn() does. A reply whose
 * size prefix is above FBF_TRANSPORT_UNIX_MAX is -EMSGSIZE. */
#define FBF_TRANSPORT_UNIX_MAX (64u << 20)
fbf_transport *fbf_transport_unix(const char *cmd, const char *path, double timeout_s,
                                  fbf_error *err);
/* Its socket's absolute path (the Redis key prefix, without the ':'). */
const char *fbf_transport_unix_path(const fbf_transport *t);

/* A Batsim 5 EDC built as a shared library (transport_edc.c): the first
 * exchange goes to batsim_edc_init (the request and the reply in the
 * process EDC's init layout), the next ones to batsim_edc_take_decisions,
 * finish() to batsim_edc_deinit. */
fbf_transport *fbf_transport_edc_library(const char *path, fbf_error *err);

/* Batsim 5's flatbuffers binary format around inner (taken, destroyed
 * with the result, also on failure), for a replayer that speaks JSON
 * (tools/replay/transport_binary.c). */
fbf_transport *fbf_transport_binary(fbf_transport *inner, fbf_error *err);

/* Replaces every "{endpoint}" in cmd by endpoint, or appends
 * " --endpoint <endpoint>". Returns a malloc'ed string (caller frees). */
char *fbf_transport_command(const char *cmd, const char *endpoint);

#endif
