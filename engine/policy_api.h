/*
 * policy_api: what a scheduling policy sees of the engine, and what the
 * engine asks of a policy.
 *
 * A policy is an ops table (fbf_policy_ops) plus private state. The engine
 * calls it at a decision point, after the message's events are applied
 * (D0); the policy reads the waiting queue and the free resources through
 * the fbf_sched_* functions below and starts jobs with fbf_sched_start().
 * A policy never sees sockets, JSON or threads: heavy scans go through
 * fbf_sched_scan(), which the engine splits over its workers.
 *
 * Ownership: the engine owns jobs, the queue and resources; a policy owns
 * its state (create/destroy). Handles and records returned are borrowed.
 */
#ifndef FBF_POLICY_API_H
#define FBF_POLICY_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/jobs.h"

/* To a policy, the engine is a scheduler context. */
typedef struct fbf_engine fbf_sched;

struct fbf_policy_ops {
    const char *name;
    /* D2: reject jobs whose walltime is missing or negative. */
    bool needs_walltime;
    int (*create)(fbf_sched *s, int64_t depth, void **state, fbf_error *err);
    void (*destroy)(void *state);
    /* Every callback below returns 0, or a negative errno with a message
     * in err (which may be NULL); the engine then fails the call that made
     * it (the message being applied, the decision, the estimate). */
    /* A job entered the waiting queue (optional; called while events are
     * applied, before decide, in arrival order). */
    int (*job_submitted)(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err);
    /* A running job ended (completed or killed) at the current decision
     * point; called while events are applied, before decide. */
    int (*job_ended)(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err);
    /* A waiting job leaves the queue without running (config.max_wait),
     * before the pass; its record (rsv included) is still as the policy
     * left it. Optional for a policy that keeps nothing per waiting job. */
    int (*job_withdrawn)(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err);
    /* The one scheduling pass of a decision point. */
    int (*decide)(void *state, fbf_sched *s, fbf_error *err);
    /* *start: see fbf_engine_estimate_start() (INFINITY: never; NAN: the
     * policy cannot tell, which is an answer, not a failure). */
    int (*estimate)(void *state, fbf_sched *s, uint32_t res, double walltime, double *start,
                    fbf_error *err);
    /* Optional: a machine that is not ON became held (engine/power.h): j
     * is a running pseudo-job of 1 resource over [start, est_end), whose
     * end is reported through job_ended like a job's. Called at a
     * decision point, before or after decide, never during it. The
     * engine holds a machine only where no reservation needs it. */
    int (*resources_held)(void *state, fbf_sched *s, fbf_job_h j, fbf_error *err);
    /* Optional: a waiting job's keys are about to change (done false:
     * its old keys still hold, so indexes keyed by them can let it go) or
     * have changed (done true); see fbf_engine_set_priority(). */
    int (*job_rekeyed)(void *state, fbf_sched *s, fbf_job_h j, bool done, fbf_error *err);
    /* Optional: a running job's estimate grew (D10 predict's correction):
     * it held [start, start + old_walltime) and now holds [start, est_end).
     * Called at a decision point before decide. */
    int (*job_extended)(void *state, fbf_sched *s, fbf_job_h j, double old_walltime,
                        fbf_error *err);
    /* Optional: fills up to max counters of the work done so far (what a
     * benchmark reports beside the time it took) and returns how many. */
    size_t (*counters)(const void *state, fbf_policy_counter *out, size_t max);
};

/* A growable array of handles. */
typedef struct fbf_hvec {
    fbf_job_h *v;
    size_t n, cap;
} fbf_hvec;

int fbf_hvec_push(fbf_hvec *h, fbf_job_h j);
void fbf_hvec_fini(fbf_hvec *h);

double fbf_sched_now(const fbf_sched *s);
/* D9's queue order and backfill order (order_api.h; NULL or a NULL key:
 * submit), whether they are the same, and D10's estimate. A job's
 * walltime field is already its estimate. */
const fbf_order_ops *fbf_sched_order(const fbf_sched *s);
const fbf_order_ops *fbf_sched_backfill_order(const fbf_sched *s);
bool fbf_sched_same_orders(const fbf_sched *s);
fbf_estimate fbf_sched_estimate(const fbf_sched *s);
/* The config's policy_options (NULL: none); valid during create only. */
const void *fbf_sched_policy_options(const fbf_sched *s);
uint32_t fbf_sched_capacity(const fbf_sched *s);
uint32_t fbf_sched_free(const fbf_sched *s);
size_t fbf_sched_nb_waiting(const fbf_sched *s);
/* True if a job completed or was killed in the current message (D7 a). */
bool fbf_sched_any_ended(const fbf_sched *s);
/* Smallest est_end among running jobs, INFINITY if none run. */
double fbf_sched_min_running_end(fbf_sched *s);

/* Calls fn(ctx, job) for every running job (any order). */
void fbf_sched_foreach_running(fbf_sched *s, void (*fn)(void *ctx, const fbf_job *j), void *ctx);

const fbf_job *fbf_sched_job(const fbf_sched *s, fbf_job_h j);
void fbf_sched_set_rsv(fbf_sched *s, fbf_job_h j, double rsv);

/* Walks the waiting queue in queue order (D9; D1 by default). A job returned by next() may be
 * started (removed) before the following next(); no other removal. */
typedef struct fbf_sched_iter {
    fbf_job_h *cur; /* one cursor per partition, owned by the engine */
} fbf_sched_iter;
void fbf_sched_iter_init(fbf_sched *s, fbf_sched_iter *it);
fbf_job_h fbf_sched_iter_next(fbf_sched *s, fbf_sched_iter *it);

/* Every waiting job for which keep(ctx, job) is true, in queue order, into
 * out (appended). keep runs on the worker threads concurrently: it must
 * only read, and nobody may write what it reads during the scan. */
typedef bool (*fbf_sched_filter)(const void *ctx, const fbf_job *job);
int fbf_sched_scan(fbf_sched *s, fbf_sched_filter keep, const void *ctx, fbf_hvec *out);

/* Starts a waiting job now on the res lowest-numbered free resources (D3)
 * and records its EXECUTE decision. -EPROTO if it does not fit or does
 * not wait (a policy bug, with a message). */
int fbf_sched_start(fbf_sched *s, fbf_job_h j, fbf_start_reason why, fbf_error *err);

/* Records a CALL_ME_LATER(t) decision (the last one recorded wins). */
void fbf_sched_call_me_later(fbf_sched *s, double t);

#endif
