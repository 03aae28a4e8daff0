/*
 * bv4_session: one Batsim v4 JSON-protocol conversation, transport-free:
 * the v4 codec around a protocol-neutral session (io/session.h).
 *
 * Each request message (a JSON text from Batsim) is decoded into typed
 * events, the session applies them to the engine it owns and runs the
 * decision pass, and its decisions are encoded as the reply. The ZeroMQ server (io/zmq_server.h) and any
 * in-process driver (fastbf-replay --inproc) use the very same entry
 * point, so both see the same validation and the same decisions.
 *
 * Ownership: fbf_bv4_session_create() returns a session the caller
 * destroys with fbf_bv4_session_destroy() (NULL accepted). The reply
 * returned by fbf_bv4_session_handle() is owned by the session and valid
 * until the next call.
 *
 * Errors: a request that breaks the protocol returns a negative code with
 * one line in err naming the event (index and type) and the field:
 *   -EPROTO   malformed JSON, a missing or mistyped field, timestamps out of
 *             order, an unknown event type, an allocation that differs
 *   -ENOENT   an unknown job id
 *   -EEXIST   a job id submitted twice
 *   -EINVAL   an event that contradicts the state (a job that ends but does
 *             not run, time going backwards)
 *   -ENOTSUP  submitter mode with Batsim's dynamic jobs disabled
 *   -ECONNREFUSED  Redis mode: the Redis server named by SIMULATION_BEGINS
 *             cannot be reached (host, port and hiredis's message)
 *   -EIO      Redis mode: the connection to Redis failed later
 * Redis mode (the store, io/session.h): a missing key, malformed JSON in a key or
 * a description missing a field are -EPROTO naming the key and the field.
 * The session must not be used after an error, since the request may have
 * been applied in part.
 */
#ifndef FBF_BV4_SESSION_H
#define FBF_BV4_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "io/jsc.h"
#include "io/submitter.h"

typedef struct fbf_bv4_session fbf_bv4_session;

typedef struct fbf_bv4_options {
    fbf_engine_config engine;
    FILE *log;    /* where --verbose lines go; NULL = silent */
    /* Follow every EXECUTE_JOB with a SET_JOB_METADATA saying why the job
     * started: "reason=head" (FCFS order), "reason=backfilled" (ahead of
     * an earlier waiting job) or "reason=reservation rsv=T" (its
     * conservative reservation came due at T). */
    bool tag_starts;
    /* Borrowed, NULL for none: jobs fastbf registers itself (submitter
     * mode, io/submitter.h). Without it, fastbf registers nothing and
     * sends NOTIFY registration_finished at once when Batsim's dynamic
     * jobs are enabled. */
    fbf_submitter *submitter;
    /* Machine states and energy saving (engine/power.h, io/bv4_power.h);
     * NULL: defaults, no saving. */
    const fbf_power_config *power;
    /* The command line named these pstates: a platform whose machines
     * say otherwise (fbf_bv4_power_pstates()) is an error, where without
     * them the platform's pstates replace the defaults. */
    bool sleep_pstate_given, compute_pstate_given;
    /* Send QUERY consumed_energy in the reply to NOTIFY
     * no_more_static_job_to_submit, and once more when, after it, nothing
     * waits or runs; the ANSWER goes to the log. */
    bool query_energy;
    /* Requests of at least this many bytes are streamed (0: the default,
     * FBF_BV4_STREAM_MIN); a test or fuzz target lowers it to reach the
     * streamed reading with short messages. */
    size_t stream_min;
    /* Job status and control (io/jsc.h); borrowed, NULL: none. */
    fbf_jsc *jsc;
} fbf_bv4_options;

/* Requests of at least this many bytes are read one event at a time
 * (io/json_stream.h) instead of being parsed whole: a message that submits
 * a million jobs then costs no more memory than its text and the jobs. */
#define FBF_BV4_STREAM_MIN ((size_t)1 << 20)

/* Returned by fbf_bv4_session_handle() once SIMULATION_ENDS was handled:
 * send the reply, then close. */
#define FBF_BV4_ENDED 1

fbf_bv4_session *fbf_bv4_session_create(const fbf_bv4_options *opt, fbf_error *err);
void fbf_bv4_session_destroy(fbf_bv4_session *s);

int fbf_bv4_session_handle(fbf_bv4_session *s, const char *req, size_t len,
                           const char **reply, size_t *reply_len, fbf_error *err);

/* After fbf_bv4_session_handle() failed on req: a reply that makes a real
 * Batsim stop at once with why in its own error, instead of waiting
 * forever for a scheduler that has given up. Batsim 4.2.1 aborts on a
 * NOTIFY of a type it does not know, printing the type ("Unknown NOTIFY
 * type received ('fastbf stopped: <why>')."), so that is the reply, at
 * req's now when it can be read. Owned by the session, valid until the
 * next call; NULL when out of memory. */
const char *fbf_bv4_session_refusal(fbf_bv4_session *s, const char *req, size_t len,
                                    const char *why, size_t *reply_len);

/* The engine behind the session (borrowed), for tests and statistics. */
fbf_engine *fbf_bv4_session_engine(fbf_bv4_session *s);

#endif
