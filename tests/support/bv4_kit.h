/*
 * bv4_kit: a Batsim v4 session (io/bv4_session.h) driven in process, for
 * test_bv4 (accepted messages) and test_bv4_errors (refused ones).
 *
 * Every reply that goes through fbf_test_bv4_exchange() is parsed back
 * with cJSON and checked against D0 (reply now == request now, every
 * event stamped now, REJECT < EXECUTE < CALL_ME_LATER, allocations
 * canonical and disjoint), then compared with the expected summary of its
 * events, "EXECUTE_JOB w0!1 0-1|REJECT_JOB w0!2": each event's type, then
 * what it carries among job_id, alloc, job_ids, metadata, data.type,
 * data.timestamp and the job_id and estimate of an estimate_waiting_time
 * answer.
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_BV4_KIT_H
#define FBF_TEST_BV4_KIT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "io/bv4_session.h"

/* A fresh session under the policy (its default reservation depth). */
fbf_bv4_session *fbf_test_bv4_session(const char *policy, unsigned workers);
/* The same with fastbf's kill delay (0: none) and start tags. */
fbf_bv4_session *fbf_test_bv4_session_opts(const char *policy, unsigned workers,
                                           double kill_after, bool tag_starts);

/* A flat SIMULATION_BEGINS message of n resources with the given config
 * members (a JSON fragment, may be empty), in fbf_test_msg()'s buffers. */
const char *fbf_test_bv4_begins(int n, const char *config);

/* Checks the D0 invariants of reply against req; returns the parsed reply
 * (caller deletes). */
cJSON *fbf_test_bv4_check_reply(const char *req, const char *reply, size_t reply_len);

/* Sends req, which must succeed with want_rc (0 or FBF_BV4_ENDED), checks
 * the reply's invariants and its summary (want NULL: any). Returns a copy of the raw reply
 * if keep (caller frees), else NULL. */
char *fbf_test_bv4_exchange(fbf_bv4_session *s, const char *req, int want_rc, const char *want,
                            bool keep);

/* fbf_test_bv4_exchange() of a request that must succeed (rc 0). */
void fbf_test_bv4_ok(fbf_bv4_session *s, const char *req, const char *want);

#endif
