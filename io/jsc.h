/*
 * jsc: job status and control, after Flux's JSC text
 * (shared/protocols/flux-jsc-job-status-api.md): every job's state as a
 * job_state_t, its job control block (JCB) as JSON, notification of each
 * state change, query and update by key, served from a control endpoint
 * that any running fastbf opens (io/jsc_server.h), whatever its protocol;
 * io/jsc_client.h is the C API a tool calls, fastbf-jstat the tool.
 *
 * States: JSC's table, in its order (J_NULL = 0 ... J_FOR_RENT = 14).
 * fastbf's jobs take these, from either life cycle:
 *
 *   what happens                         Batsim (v4, v5, v2)   Flux (RFC 27)
 *   submitted, waits in fastbf's queue   J_SCHEDREQ            J_SCHEDREQ (alloc pending)
 *   can never run (D2), given up         J_FAILED (REJECT)     J_FAILED (DENY)
 *   started by a pass                    J_RUNNING (EXECUTE)   J_ALLOCATED (SUCCESS: the
 *                                                              job manager runs it)
 *   found holding cores after a restart  -                     J_ALLOCATED (hello)
 *   ended                                J_COMPLETE            J_COMPLETE (sched.free)
 *   killed, canceled                     J_CANCELLED (killed,  J_CANCELLED (sched.cancel,
 *                                        or rejected by an     or denied by an update)
 *                                        update)
 *   its request sent again               -                     J_SCHEDREQ
 *
 * The JCB, JSON, keyed as JSC's tables 3-1 to 3-3 (rdl and pdesc are not
 * known to a scheduler and are refused), plus fastbf's "sched":
 *   {"jobid": "w0!3" (Batsim's ids are strings) or 123 (Flux's, integers),
 *    "state-pair": {"ostate": 4, "nstate": 9},
 *    "rdesc": {"nnodes": N, "ntasks": T, "ncores": C, "ngpus": 0, "walltime": W},
 *    "R_lite": "[{\"rank\":\"0-1\",\"children\":{\"core\":\"0-3\"}}]" or null,
 *    "sched": {"t_estimate": T or null, "reason_pending": "..." or null}}
 * A Batsim resource is a machine: rdesc's nnodes, ntasks and ncores are
 * its res, and its R_lite names machines as ranks of one core. A Flux job's
 * rdesc comes from its jobspec (nnodes: its node level's count; without
 * one, 0 until it starts, then the ranks of its R). walltime is the one
 * fastbf plans with (an update's), -1 without one.
 *
 * Threads (DESIGN). The I/O thread (the session's: io/session.h) calls
 * the producer half within each decision point: each change is appended,
 * as a small binary record, to a buffer it alone owns; at the end of the
 * decision point fbf_jsc_publish() appends that buffer to the shared one
 * under the one mutex and wakes the control thread (an eventfd). The
 * control thread (io/jsc_server.c) owns the mirror of every job's JCB,
 * built from those records, and its two sockets; it answers queries from
 * the mirror at once and publishes each state change. An update it
 * cannot answer alone (walltime, cancel) goes to the I/O thread through
 * the shared list, under the same mutex; the I/O thread takes it at its
 * next decision point (fbf_jsc_take_updates(), a relaxed atomic flag
 * checked first, so that a decision point without updates costs one
 * load), applies it and records the result, which comes back with the
 * decision point's records. The I/O thread never waits for the control
 * thread but for the mutex's few instructions. Lock order: one mutex.
 *
 * Ownership: fbf_jsc_create() / fbf_jsc_destroy() (NULL accepted; after
 * the server stopped). Strings passed to the producer are copied.
 */
#ifndef FBF_JSC_H
#define FBF_JSC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"
#include "engine/idset.h"

typedef enum fbf_jsc_state {
    FBF_J_NULL = 0,
    FBF_J_RESERVED,
    FBF_J_SUBMITTED,
    FBF_J_PENDING,
    FBF_J_SCHEDREQ,
    FBF_J_ALLOCATED,
    FBF_J_RUNREQUEST,
    FBF_J_STARTING,
    FBF_J_STOPPED,
    FBF_J_RUNNING,
    FBF_J_CANCELLED,
    FBF_J_COMPLETE,
    FBF_J_REAPED,
    FBF_J_FAILED,
    FBF_J_FOR_RENT,
} fbf_jsc_state;

/* "null", "reserved", ..., "for_rent"; "?" beyond. */
const char *fbf_jsc_state_name(int state);

typedef enum fbf_jsc_life {
    FBF_JSC_BATSIM,      /* v4, v5: a running job can be killed */
    FBF_JSC_BATSIM_NOKILL, /* v2: it cannot */
    FBF_JSC_FLUX,        /* RFC 27: started is allocated; ids are integers */
} fbf_jsc_life;

typedef struct fbf_jsc fbf_jsc;

/* cores_per_rank: Flux's platform (R_lite); 1 for Batsim. */
fbf_jsc *fbf_jsc_create(fbf_jsc_life life, uint32_t cores_per_rank, fbf_error *err);
void fbf_jsc_destroy(fbf_jsc *j);
fbf_jsc_life fbf_jsc_lifecycle(const fbf_jsc *j);

/* ---- producer: the I/O thread, within a decision point ---- */

void fbf_jsc_queued(fbf_jsc *j, const char *id, int64_t res, double walltime, double subtime);
/* Flux's jobspec: the JCB's nnodes and ntasks. */
void fbf_jsc_described(fbf_jsc *j, const char *id, uint32_t nnodes, uint32_t ntasks);
void fbf_jsc_failed(fbf_jsc *j, const char *id);
void fbf_jsc_started(fbf_jsc *j, const char *id, const fbf_idset *alloc);
void fbf_jsc_adopted(fbf_jsc *j, const char *id, const fbf_idset *alloc);
void fbf_jsc_completed(fbf_jsc *j, const char *id);
void fbf_jsc_cancelled(fbf_jsc *j, const char *id);
void fbf_jsc_requeued(fbf_jsc *j, const char *id);
/* An update changed a waiting job's walltime. */
void fbf_jsc_walltime(fbf_jsc *j, const char *id, double walltime);
/* Reservations: with reset, the jobs listed are the only ones that hold
 * one now (a finite depth's pass); without, those listed changed. t NAN:
 * none. */
void fbf_jsc_estimates_reset(fbf_jsc *j);
void fbf_jsc_estimate(fbf_jsc *j, const char *id, double t);
/* The end of the decision point: hands its records to the control thread. */
void fbf_jsc_publish(fbf_jsc *j);
/* Records appended, for the benchmarks; the producer's memory failure. */
uint64_t fbf_jsc_records(const fbf_jsc *j);

/* ---- updates: asked on the control endpoint, applied by the I/O thread ---- */

typedef enum fbf_jsc_op { FBF_JSC_CANCEL, FBF_JSC_WALLTIME, FBF_JSC_PRIORITY } fbf_jsc_op;

typedef struct fbf_jsc_update {
    fbf_jsc_op op;
    char *id;
    double value; /* FBF_JSC_WALLTIME: seconds; FBF_JSC_PRIORITY: the priority */
    uint64_t token; /* the control thread's, to answer the asker */
} fbf_jsc_update;

/* Whether updates wait for the next decision point (for tests). */
bool fbf_jsc_updates_waiting(fbf_jsc *j);
/* The updates asked since the last call (the caller owns the array and
 * its ids: fbf_jsc_updates_free()); 0 when none. */
size_t fbf_jsc_take_updates(fbf_jsc *j, fbf_jsc_update **out);
void fbf_jsc_updates_free(fbf_jsc_update *u, size_t n);
/* The answer to an update (rc 0, or negative with why). */
void fbf_jsc_answer(fbf_jsc *j, uint64_t token, int rc, const char *why);

#endif
