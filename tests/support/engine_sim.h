/*
 * engine_sim: the tiny simulation test_policies drives the engine with,
 * the same event loop ref_simulate() (ref_sched.h) runs around the
 * reference, so that their traces can be compared entry by entry:
 *   - jobs run exactly `runtime` (the walltime unless a case says less);
 *   - the next decision point is at the smallest of the next arrival, the
 *     end of a running job and a pending CALL_ME_LATER time;
 *   - all events at one time form one message (completions in job order,
 *     then submissions in arrival order), hence one decision point;
 *   - a CALL_ME_LATER(t) makes a decision point at t.
 * Job i of the workload is submitted as "w0!<i>".
 *
 * It lives apart from ref_sched.c because it depends on the engine, which
 * the reference must not. Every symbol is prefixed fbf_test_ since every
 * tests/support C file is linked into every test.
 */
#ifndef FBF_TEST_ENGINE_SIM_H
#define FBF_TEST_ENGINE_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "support/ref_sched.h"

/* Called after every decision point, once its decisions are applied. */
typedef void (*fbf_test_dp_hook)(void *ctx, fbf_engine *e, double now);

/* An engine under the policy (depth 0: the policy's default reservation
 * depth) on the nb resources ids. */
fbf_engine *fbf_test_sim_engine(const char *policy, int64_t depth, unsigned workers,
                                const uint32_t *ids, uint32_t nb);

/* The same with orders and an estimate by name (NULL: the defaults).
 * Jobs are submitted with their priority, user ("u<N>", none for 0) and
 * forwarded delay. */
typedef struct fbf_test_sim_config {
    const char *policy;
    int64_t depth;
    unsigned workers;
    const char *order, *backfill_order, *estimate;
    const void *policy_options; /* fbf_engine_config's (NULL: defaults) */
} fbf_test_sim_config;
fbf_engine *fbf_test_sim_engine_cfg(const fbf_test_sim_config *c, const uint32_t *ids,
                                    uint32_t nb);
int fbf_test_sim_run_cfg(const fbf_test_sim_config *c, const uint32_t *ids, uint32_t nb,
                         const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
                         fbf_test_dp_hook hook, void *ctx, fbf_engine **keep, char *err,
                         size_t errlen);

/* Runs the workload through an engine, filling out and tr like
 * ref_simulate. Returns 0, or -1 with the engine's error in err. The
 * engine is destroyed unless keep is given (then the caller destroys it). */
int fbf_test_sim_run(const char *policy, int64_t depth, unsigned workers, const uint32_t *ids,
                     uint32_t nb, const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
                     fbf_test_dp_hook hook, void *ctx, fbf_engine **keep, char *err,
                     size_t errlen);

/* A hook for fbf_test_sim_run: after every decision point, the
 * reservation of every job of the workload still waiting (-1: none, -2:
 * not submitted yet) and the time, folded into one hash, so that two runs
 * can be compared reservation by reservation. checks counts the
 * reservations hashed. handles must hold n entries. */
typedef struct fbf_test_rsv_log {
    size_t n;
    fbf_job_h *h; /* handle of job i once submitted */
    uint64_t hash;
    size_t checks;
} fbf_test_rsv_log;

void fbf_test_rsv_log_init(fbf_test_rsv_log *l, fbf_job_h *handles, size_t n);
void fbf_test_rsv_log_hook(void *arg, fbf_engine *e, double now);

#endif
