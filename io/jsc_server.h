/*
 * jsc_server: the control endpoint of job status and control (io/jsc.h):
 * a thread of its own with two ZeroMQ sockets, whatever the protocol
 * fastbf serves.
 *
 * Endpoints (fbf_jsc_endpoints): `--control ipc://PATH` answers requests
 * at ipc://PATH and publishes state changes at ipc://PATH.pub;
 * `--control tcp://127.0.0.1:PORT` (or localhost, or [::1]) at PORT and
 * PORT + 1. Any other address is refused: the endpoint steers the
 * scheduler (cancels, walltimes), so it is this machine's only, even
 * with --allow-remote.
 *
 * Requests (a ROUTER: REQ or DEALER clients), one JSON object each, and
 * their replies, {"result": ...} or {"error": "why"}:
 *   {"op": "query", "jobid": "ID", "key": "KEY"}    the JCB's KEY
 *                                                  ({"KEY": value}; "jcb": all)
 *   {"op": "list"}                                  {"jobs": [...]}: waiting,
 *                                                  then running jobs
 *   {"op": "update", "jobid": "ID", "key": "rdesc",
 *    "value": {"rdesc": {"walltime": W}}}            a waiting job's walltime
 *   {"op": "update", "jobid": "ID", "key": "state-pair",
 *    "value": {"state-pair": {"nstate": 10}}}        cancel (J_CANCELLED)
 *   {"op": "update", "jobid": "ID", "key": "priority",
 *    "value": {"priority": P}}                       a waiting job's priority
 *                                                  (its place under the
 *                                                  priority order, D9)
 * A query or a list is answered at once from the mirror; an update when
 * the I/O thread has applied it, at the scheduler's next decision point
 * ({"result": "done"}). A cancel rejects a waiting job (Batsim: REJECT_JOB;
 * Flux: DENY with a note: flux-core's job manager sends a CANCELed alloc
 * again, so DENY is what ends the job) or kills a running Batsim v4 or v5
 * job (KILL_JOB); a running Flux job is the job manager's to cancel, and
 * Batsim v2 has no kill: both are refused.
 *
 * Notifications (a PUB, no limit on what it queues for a slow
 * subscriber): one message per state change, the base JCB of JSC's
 * notify, {"jobid": ID, "state-pair": {"ostate": A, "nstate": B}}; and,
 * to each subscriber as it connects, FBF_JSC_WELCOME, so that it knows
 * from when it hears everything (an XPUB's welcome message).
 *
 * Ownership: _start() returns a server that _stop() joins and frees
 * (NULL accepted); the fbf_jsc stays the caller's and must outlive it.
 * Errors: -EINVAL an endpoint refused (one line in err), a ZeroMQ
 * failure (-errno, the endpoint named).
 */
#ifndef FBF_JSC_SERVER_H
#define FBF_JSC_SERVER_H

#include <stddef.h>
#include <stdio.h>

#include "io/jsc.h"

#define FBF_JSC_WELCOME "{\"welcome\":\"fastbf\"}"

typedef struct fbf_jsc_server fbf_jsc_server;

int fbf_jsc_endpoints(const char *control, char *req, size_t req_cap, char *pub, size_t pub_cap,
                      fbf_error *err);
fbf_jsc_server *fbf_jsc_server_start(fbf_jsc *j, const char *control, fbf_error *err);
void fbf_jsc_server_stop(fbf_jsc_server *s);

#endif
