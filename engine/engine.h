/*
 * engine: the scheduling engine's event API. No sockets, no JSON.
 *
 * A caller (a protocol codec) drives the engine one decision point at a
 * time, as scheduling-semantics.md D0 says:
 *
 *     fbf_engine_begin(e, now);
 *     fbf_engine_submit(...); fbf_engine_complete(...); ...   (in message order)
 *     fbf_engine_decide(e, err);
 *     decisions = fbf_engine_decisions(e, &n);                (REJECT, EXECUTE, CALL_ME_LATER)
 *
 * Jobs are named by their protocol id ("w0!17"); the engine maps each to a
 * compact handle (fbf_job_h) that stays valid for the engine's lifetime.
 * A killed job is reported like a completed one (fbf_engine_complete):
 * either way its resources are free again.
 *
 * The engine owns a pool of worker threads (config.workers) over which the
 * waiting jobs are partitioned; see engine/pool.h for who owns what when.
 * Decisions never depend on the number of workers.
 *
 * Ownership: fbf_engine_create() returns an engine the caller destroys with
 * fbf_engine_destroy() (NULL accepted). Strings and sets returned by getters
 * are borrowed and live as long as the engine (decisions: until the next
 * fbf_engine_begin()). Not thread-safe: one caller thread drives an engine.
 *
 * Errors: 0 or a negative errno code with a message in err:
 *   -EINVAL  a request that contradicts the engine's state or arguments
 *            (walltime NaN, a job completed twice, a platform set twice...)
 *   -ENOENT  an unknown job id
 *   -EEXIST  a job id submitted twice
 *   -ENOMEM  allocation failure
 *   -EPROTO  an internal inconsistency (a bug): the engine refuses to go on
 */
#ifndef FBF_ENGINE_H
#define FBF_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "engine/power.h"

typedef uint32_t fbf_job_h;
#define FBF_JOB_NONE UINT32_MAX

typedef struct fbf_engine fbf_engine;
typedef struct fbf_policy_ops fbf_policy_ops; /* engine/policy_api.h */
typedef struct fbf_order_ops fbf_order_ops;   /* engine/order_api.h */

/* The runtime estimate policies plan with (scheduling-semantics.md D10). */
typedef enum fbf_estimate {
    FBF_ESTIMATE_WALLTIME = 0, /* the walltime (the default) */
    FBF_ESTIMATE_EXACT,        /* min(the forwarded delay profile's delay, walltime) */
    FBF_ESTIMATE_PREDICT,      /* the user's last two run times, at most the walltime */
} fbf_estimate;

/* "walltime", "exact", "predict"; NULL for an unknown value. */
const char *fbf_estimate_name(fbf_estimate est);
/* -1 for an unknown name. */
int fbf_estimate_lookup(const char *name);

/* A count of work the policy did since the engine was created; the name
 * is the policy's (static storage). */
typedef struct fbf_policy_counter {
    const char *name;
    uint64_t value;
} fbf_policy_counter;

/* Unlimited reservation depth (conservative backfilling). */
#define FBF_DEPTH_UNLIMITED INT64_MAX

typedef struct fbf_engine_config {
    const fbf_policy_ops *policy; /* required */
    int64_t reservation_depth;    /* for the backfilling family; >= 1 */
    unsigned workers;             /* >= 1 */
    /* > 0: every job is killed this many seconds after it started (a
     * KILL_JOB decision, then CALL_ME_LATER to be woken for the next one),
     * as Batsim's "killer" test schedulers do; 0: never. Its resources
     * stay busy until the kill is reported (fbf_engine_complete). */
    double kill_after;
    /* > 0: a job still waiting max_wait seconds after its subtime is given
     * up before the pass (FBF_DEC_GIVE_UP: it leaves the queue, its
     * reservation is released, its state becomes FBF_JOB_REJECTED, and the
     * codec tells the peer with a rejection); a CALL_ME_LATER covers the
     * next one. 0: never. */
    double max_wait;
    /* D9: the queue order and the backfill order (NULL: submit, D1, and
     * the queue order); policies/orders/registry.h names them. */
    const fbf_order_ops *order;
    const fbf_order_ops *backfill_order;
    fbf_estimate estimate; /* D10 */
    /* The policy's own options, of a type its header defines (e.g.
     * policies/backfilling/tuning.h); NULL: its defaults. Borrowed: the
     * policy reads it while fbf_engine_create() runs, never after. */
    const void *policy_options;
} fbf_engine_config;

typedef enum fbf_decision_kind {
    FBF_DEC_REJECT = 1,
    FBF_DEC_EXECUTE,
    FBF_DEC_CALL_ME_LATER,
    FBF_DEC_KILL,
    FBF_DEC_SET_STATE, /* switch machines to a pstate (engine/power.h) */
    FBF_DEC_GIVE_UP,   /* a waiting job given up (config.max_wait) */
} fbf_decision_kind;

typedef struct fbf_decision {
    fbf_decision_kind kind;
    fbf_job_h job;  /* REJECT, EXECUTE, KILL */
    double at;      /* CALL_ME_LATER: the requested time */
    const fbf_idset *set; /* SET_STATE: the machines (borrowed) */
    uint32_t pstate;      /* SET_STATE: the target pstate */
} fbf_decision;

typedef enum fbf_job_state {
    FBF_JOB_WAITING = 1,
    FBF_JOB_RUNNING,
    FBF_JOB_DONE,     /* completed or killed */
    FBF_JOB_REJECTED,
} fbf_job_state;

/* Why a job started (for metadata and tests). */
typedef enum fbf_start_reason {
    FBF_START_NONE = 0,
    FBF_START_HEAD,        /* in queue order from the head (FCFS, D5) */
    FBF_START_BACKFILLED,  /* ahead of an earlier waiting job */
    FBF_START_RESERVATION, /* its reservation came due (D7 c) */
} fbf_start_reason;

fbf_engine *fbf_engine_create(const fbf_engine_config *cfg, fbf_error *err);
void fbf_engine_destroy(fbf_engine *e);

/* Sets the compute resources jobs may be given (once). nb_compute is
 * fbf_idset_count(compute); it must be >= 1. */
int fbf_engine_set_platform(fbf_engine *e, const fbf_idset *compute, fbf_error *err);
bool fbf_engine_has_platform(const fbf_engine *e);
uint32_t fbf_engine_nb_compute(const fbf_engine *e);

/* Opens a decision point at now (clears the previous decisions). now must
 * not go backwards (-EINVAL). */
int fbf_engine_begin(fbf_engine *e, double now, fbf_error *err);

/* A job submission. res is signed so that res < 1 can be rejected (D2)
 * rather than refused; walltime < 0 (or NAN is refused) means "none".
 * subtime orders the queue (D1). A job the policy rejects is recorded as a
 * REJECT decision and never waits; that is not an error. */
int fbf_engine_submit(fbf_engine *e, const char *id, double subtime, int64_t res,
                      double walltime, fbf_error *err);

/* A submission with what the orders and estimates read besides (D9,
 * D10). fbf_engine_submit() is this with priority 0, no user, no delay. */
typedef struct fbf_submission {
    const char *id;
    double subtime;
    int64_t res;
    double walltime;  /* < 0: none */
    double priority;  /* the priority order's key is -priority; not NaN */
    /* predict: the user, as the canonical text of its JSON value (borrowed
     * for the call); NULL: the anonymous user. */
    const char *user;
    /* exact: the delay of the delay profile the submission carried; NAN:
     * none (a value < 0 counts as none). */
    double delay;
} fbf_submission;
int fbf_engine_submit_job(fbf_engine *e, const fbf_submission *sub, fbf_error *err);

/* Changes a waiting job's priority (Flux's prioritize, a control
 * interface). Under an order that reads it the job takes its new place at
 * once; no reservation is given up or recomputed for it (D9). -EINVAL if
 * the job does not wait or priority is NaN (err names the job). */
int fbf_engine_set_priority(fbf_engine *e, fbf_job_h h, double priority, fbf_error *err);
/* A running job ended (any final state) at the current decision point:
 * its resources are free again. -ENOENT unknown id, -EINVAL not running
 * (err names the job and its state). */
int fbf_engine_complete(fbf_engine *e, const char *id, fbf_error *err);
/* As fbf_engine_complete(), for a handle the caller already looked up
 * (fbf_engine_find()); -EINVAL if it is not running. */
int fbf_engine_complete_job(fbf_engine *e, fbf_job_h h, fbf_error *err);
/* The same, saying how it ended: a JOB_COMPLETED stamped `at` (under the
 * predict estimate its run time, at - start, counts for its user's next
 * jobs, D10) or, killed, a kill without one (whose run time never
 * counts). fbf_engine_complete_job() is a completion at now. */
int fbf_engine_end_job(fbf_engine *e, fbf_job_h h, double at, bool killed, fbf_error *err);

/* Machine states and energy saving (engine/power.h). Before the
 * platform is set (-EINVAL after); the default is fbf_power_config_default()
 * (no saving, every machine ON unless told otherwise). -EINVAL on a
 * negative or non-finite delay or timeout, or equal pstates. */
int fbf_engine_set_power(fbf_engine *e, const fbf_power_config *cfg, fbf_error *err);
/* A machine's initial state, after the
 * platform is set and before any job is submitted: -EINVAL if it is not a
 * compute resource or not free. */
int fbf_engine_set_machine_state(fbf_engine *e, uint32_t machine, fbf_machine_state st,
                                 fbf_error *err);
/* The machines reached pstate (a RESOURCE_STATE_CHANGED): the compute
 * pstate ends a switch-on (they become ON and allocatable), the sleep
 * pstate a switch-off. -EINVAL, nothing applied, if a machine is not a
 * compute resource or was not switching that way, or the pstate is
 * neither; the message names the machine. */
int fbf_engine_state_changed(fbf_engine *e, const fbf_idset *machines, uint32_t pstate,
                             fbf_error *err);
fbf_machine_state fbf_engine_machine_state(const fbf_engine *e, uint32_t machine);
/* Machines out of service (failed) or back in it (!failed), as the peer
 * reports them. A failed machine is held with no known end: nothing is
 * placed or reserved on it until it is back. One that fails under a
 * running job stays that job's (the engine ends no job by itself) and is
 * held when the job ends. -EINVAL, nothing applied, naming the machine: not
 * a compute resource, failed while out of service, back while in it. */
int fbf_engine_set_failed(fbf_engine *e, const fbf_idset *machines, bool failed,
                          fbf_error *err);
uint32_t fbf_engine_nb_failed(const fbf_engine *e);
/* Machines held (not ON) right now. */
uint32_t fbf_engine_nb_held(const fbf_engine *e);

/* Runs the one scheduling pass of this decision point. */
int fbf_engine_decide(fbf_engine *e, fbf_error *err);

/* The decisions of the current decision point, in D0 reply order
 * (REJECT, then KILL, then EXECUTE, then SET_STATE (wakes, then
 * switch-offs), then CALL_ME_LATER). */
const fbf_decision *fbf_engine_decisions(const fbf_engine *e, size_t *n);

/* Estimated start of a hypothetical job (res, walltime) submitted now,
 * from the policy's own reservations; INFINITY if it can never start,
 * NAN if the policy cannot tell (e.g. FCFS with jobs of unknown walltime). */
double fbf_engine_estimate_start(fbf_engine *e, int64_t res, double walltime);

/* Up to max of the policy's work counters (none for a policy that keeps
 * none); returns how many were written. */
size_t fbf_engine_policy_counters(const fbf_engine *e, fbf_policy_counter *out, size_t max);
/* The state of the engine's policy when it is `ops` (NULL otherwise), for
 * a policy's own accessors (e.g. its statistics); read only. */
const void *fbf_engine_policy_state(const fbf_engine *e, const fbf_policy_ops *ops);

double fbf_engine_now(const fbf_engine *e);

/* Getters on a job handle (valid handle required). */
fbf_job_h fbf_engine_find(const fbf_engine *e, const char *id);
const char *fbf_engine_job_id(const fbf_engine *e, fbf_job_h j);
fbf_job_state fbf_engine_job_state(const fbf_engine *e, fbf_job_h j);
const fbf_idset *fbf_engine_job_alloc(const fbf_engine *e, fbf_job_h j);
double fbf_engine_job_start(const fbf_engine *e, fbf_job_h j);
fbf_start_reason fbf_engine_job_start_reason(const fbf_engine *e, fbf_job_h j);
/* The reservation the policy holds for a waiting job, or NAN. */
double fbf_engine_job_reservation(const fbf_engine *e, fbf_job_h j);
/* What the policy plans the job's run time to be (D10's est; INFINITY for
 * none), as of the last decision point. */
double fbf_engine_job_estimate(const fbf_engine *e, fbf_job_h j);

/* ---- jobs steered from outside a pass (engine/jobctl.c) ----
 *
 * For a peer that keeps its jobs across a scheduler's restart (Flux's
 * RFC 27 hello), cancels a waiting job's request (sched.cancel), sends it
 * again later, and for an operator who corrects a waiting job's walltime.
 * Each applies at once, at the current decision point, between
 * fbf_engine_begin() and fbf_engine_decide(). A job that entered the
 * queue at the current decision point (submitted or requeued) cannot be
 * withdrawn, requeued or changed at it (-EBUSY): the policy has not
 * placed it yet. */

/* A job found running (its peer's word), on alloc until end (INFINITY: no
 * known end), before any job waits: it runs from now on for the policy,
 * which plans with end. -EINVAL (nothing applied, the resource named) if
 * alloc is empty or a resource of it is not free (already a job's, or not
 * a compute resource), or jobs wait; -EEXIST an id known; -ENOMEM. */
int fbf_engine_adopt(fbf_engine *e, const char *id, const fbf_idset *alloc, double end,
                     fbf_error *err);
/* A waiting job leaves the queue without running; its reservation is
 * released (conservative compresses, as for a completion) and its state
 * becomes FBF_JOB_REJECTED. -EINVAL if it does not wait. */
int fbf_engine_withdraw(fbf_engine *e, fbf_job_h h, fbf_error *err);
/* A withdrawn job waits again, at its place in queue order (its subtime
 * and arrival are unchanged). -EINVAL if it is not a withdrawn job (it
 * must fit the platform and, under a policy that needs one, have a
 * walltime). */
int fbf_engine_requeue(fbf_engine *e, fbf_job_h h, fbf_error *err);
/* A waiting job's walltime becomes walltime (-1: none, refused where the
 * policy needs one): it is placed again as a new arrival would be (D7 b),
 * its place in the queue unchanged. -EINVAL if it does not wait or the
 * walltime is refused. A running job keeps the walltime it started with:
 * the peer enforces that one. */
int fbf_engine_set_walltime(fbf_engine *e, fbf_job_h h, double walltime, fbf_error *err);

/* Reservations as they change, for a peer that shows them (RFC 27's
 * sched.t_estimate): once on, the waiting jobs whose reservation the pass
 * of the current decision point set, in the order it set them (a job may
 * come more than once; its last value is fbf_engine_job_reservation()).
 * With a finite reservation depth every pass sets anew the reservations
 * that hold (a job not set has none); with the unlimited depth a
 * reservation holds until the pass moves it. -ENOMEM if some were lost. */
void fbf_engine_track_reservations(fbf_engine *e, bool on);
int fbf_engine_reservations_set(const fbf_engine *e, const fbf_job_h **v, size_t *n);
bool fbf_engine_reservations_persist(const fbf_engine *e);

/* A job's request: resources (0 for one rejected as < 1 or too large),
 * walltime (< 0: none), subtime. */
uint32_t fbf_engine_job_res(const fbf_engine *e, fbf_job_h j);
double fbf_engine_job_walltime(const fbf_engine *e, fbf_job_h j);
double fbf_engine_job_subtime(const fbf_engine *e, fbf_job_h j);
/* Whether the policy needs a walltime (D2). */
bool fbf_engine_needs_walltime(const fbf_engine *e);

/* Counters. */
size_t fbf_engine_nb_waiting(const fbf_engine *e);
size_t fbf_engine_nb_running(const fbf_engine *e);
uint32_t fbf_engine_nb_free(const fbf_engine *e);

#endif
