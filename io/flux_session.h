/*
 * flux_session: fastbf as the scheduler of Flux's RFC 27 (resource
 * allocation protocol, version 1), transport-free: the RFC 27 codec
 * (io/flux_codec.h) around the protocol-neutral session (io/session.h).
 *
 * The exchange (docs/flux.md tells it whole):
 *   job manager: sim.attach               fastbf: job-manager.sched-hello
 *   job manager: hello's response         fastbf: reads each job's R, then
 *                                                 job-manager.sched-ready {"mode"}
 *   job manager: ready's response
 *   then, each instant of the simulated clock: the job manager's
 *   sched.free, sched.cancel, sched.prioritize and sched.alloc requests,
 *   then sim.instant {"now": T}, which closes the instant: fastbf applies
 *   them all (frees first, as D0 wants ends before the pass), runs one
 *   pass at T, writes R for every job it starts, answers each free, each
 *   cancelled alloc (CANCEL), each job it denies (DENY), starts (SUCCESS)
 *   or whose annotations changed (ANNOTATE), then answers sim.instant
 *   {"now": T[, "wake": T2]}, T2 being when it wants an instant even if
 *   nothing happens (a reservation's start). sim.end ends the session.
 *
 * Job data is in Redis under RFC 16's keys (io/flux_job.h): fastbf reads
 * job.<id>.jobspec at alloc and job.<id>.R after hello, and writes
 * job.<id>.R before it answers SUCCESS.
 *
 * Checks at receipt, each refused with an error response to the request
 * (errnum and a text naming the topic and the field), nothing of it
 * applied: a malformed message or payload, a second alloc for a job
 * whose alloc is pending (RFC 27: one in flight per job), an alloc for a
 * job that holds cores or ended, in single mode an alloc while another is
 * pending, a free of a job that holds nothing or
 * whose free is in flight, a request before the handshake is done.
 * Cancels and prioritize entries for jobs without a pending alloc are
 * ignored, as RFC 27 says. A job whose jobspec is missing or malformed,
 * or that can never run (more cores than the platform, no duration under
 * EASY or conservative), is denied with a note saying why.
 *
 * Ownership: fbf_flux_session_create() returns a session the caller
 * destroys (NULL accepted). The messages to send (fbf_flux_session_outbox)
 * are the session's, valid until the next receive.
 *
 * Errors (fatal: the session must not be used after them): -EPROTO a
 * hello or ready the job manager answered with an error, or an R fastbf
 * cannot read after hello; -ECONNREFUSED / -EIO Redis; -ENOMEM; what the
 * engine refuses (io/session.h). err names the topic, the job and the key.
 */
#ifndef FBF_FLUX_SESSION_H
#define FBF_FLUX_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/flux_kvs.h"
#include "io/flux_msg.h"
#include "io/session.h"

typedef enum fbf_flux_mode { FBF_FLUX_MODE_UNLIMITED, FBF_FLUX_MODE_SINGLE } fbf_flux_mode;

typedef struct fbf_flux_options {
    fbf_session_options session;
    fbf_flux_mode mode;
    uint32_t nranks, cores_per_rank; /* the platform: nranks x cores_per_rank cores */
    const char *redis_host;          /* NULL: 127.0.0.1 */
    int redis_port;                  /* 0: 6379 */
    /* Borrowed; NULL: a Redis store at redis_host:redis_port, the
     * session's own (io/flux_kvs.h). */
    fbf_flux_kvs *kvs;
    FILE *warn; /* refused messages' lines; NULL: stderr */
    /* Annotate waiting jobs with sched.t_estimate and sched.reason_pending
     * (the backfilling policies, whose reservations give estimates). */
    bool annotate;
} fbf_flux_options;

/* One message to send: its PROTO fields, topic and payload (NULL: none). */
typedef struct fbf_flux_out {
    fbf_flux_msg msg;
} fbf_flux_out;

typedef struct fbf_flux_session fbf_flux_session;

/* Returned by fbf_flux_session_receive() once sim.end was answered. */
#define FBF_FLUX_ENDED 1

fbf_flux_session *fbf_flux_session_create(const fbf_flux_options *opt, fbf_error *err);
void fbf_flux_session_destroy(fbf_flux_session *s);

/* One message from the job manager, its frames as received (the routing
 * id taken off). Returns 0 (a refused message included: its error
 * response is in the outbox and a line on the log), FBF_FLUX_ENDED, or
 * a fatal error. */
int fbf_flux_session_receive(fbf_flux_session *s, const void *const *frames, const size_t *lens,
                             size_t n, fbf_error *err);

/* The messages to send now, in order. Their strings are the session's. */
const fbf_flux_out *fbf_flux_session_outbox(fbf_flux_session *s, size_t *n);

/* The request that tells the job manager fastbf stops (RFC 27's
 * disconnect: it then suspends scheduling), for the transport to send
 * when fastbf exits on an error or a signal. */
fbf_flux_msg fbf_flux_disconnect_msg(void);

/* Whether the handshake is done (sched-ready answered), or begun (the job
 * manager attached: the transport pins its peer then). */
bool fbf_flux_session_ready(const fbf_flux_session *s);
bool fbf_flux_session_attached(const fbf_flux_session *s);

/* The last refusal's text (a refused message), "" when none: for tests. */
const char *fbf_flux_session_last_refusal(const fbf_flux_session *s);
unsigned long fbf_flux_session_refusals(const fbf_flux_session *s);

fbf_engine *fbf_flux_session_engine(fbf_flux_session *s);
fbf_session *fbf_flux_session_core(fbf_flux_session *s);

#endif
