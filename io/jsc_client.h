/*
 * jsc_client: JSC's three calls (shared/protocols/flux-jsc-job-status-api.md,
 * section 4) against a running fastbf's control endpoint
 * (io/jsc_server.h), for tools: fastbf-jstat, and any C program.
 *
 *   jsc_notify_status  -> fbf_jsc_notify_status(c, cb, arg), then
 *                         fbf_jsc_dispatch(c, timeout): the client's
 *                         reactor, which calls every callback registered,
 *                         in registration order, with each state change's
 *                         base JCB ({"jobid", "state-pair"}) and errnum 0
 *   jsc_query_jcb      -> fbf_jsc_query_jcb(c, jobid, key, &jcb)
 *   jsc_update_jcb     -> fbf_jsc_update_jcb(c, jobid, key, jcb)
 * and fbf_jsc_list(), the waiting and running jobs.
 *
 * Job ids are given as text: Batsim's ("w0!3") and Flux's ("123").
 *
 * Ownership: _open() returns a client _close() frees (NULL accepted);
 * *jcb and *json are malloc'ed, the caller frees them. One client, one
 * thread.
 *
 * Errors: 0 or a negative errno with one line in err: -ETIMEDOUT no
 * answer within the client's timeout (an update waits for the
 * scheduler's next decision point), -EPROTO an answer that is not
 * fastbf's, -EINVAL the scheduler's refusal (its text), -ENOMEM.
 * fbf_jsc_dispatch() returns how many notifications it handled, or a
 * callback's non-zero return.
 */
#ifndef FBF_JSC_CLIENT_H
#define FBF_JSC_CLIENT_H

#include "engine/error.h"

typedef struct fbf_jsc_client fbf_jsc_client;

typedef int (*fbf_jsc_handler_f)(const char *base_jcb, void *arg, int errnum);

fbf_jsc_client *fbf_jsc_client_open(const char *control, int timeout_ms, fbf_error *err);
void fbf_jsc_client_close(fbf_jsc_client *c);

int fbf_jsc_notify_status(fbf_jsc_client *c, fbf_jsc_handler_f cb, void *arg, fbf_error *err);
int fbf_jsc_dispatch(fbf_jsc_client *c, int timeout_ms);
/* Waits up to timeout_ms for fastbf's welcome (io/jsc_server.h): after
 * it, the client hears every change. 0, or -ETIMEDOUT (fastbf not there
 * yet); notifications that come meanwhile are dispatched. */
int fbf_jsc_subscribed(fbf_jsc_client *c, int timeout_ms);

int fbf_jsc_query_jcb(fbf_jsc_client *c, const char *jobid, const char *key, char **jcb,
                      fbf_error *err);
int fbf_jsc_update_jcb(fbf_jsc_client *c, const char *jobid, const char *key, const char *jcb,
                       fbf_error *err);
int fbf_jsc_list(fbf_jsc_client *c, char **json, fbf_error *err);

#endif
