/*
 * engine_int: the engine's state, and what engine/engine.c offers
 * engine/power.c and engine/deadlines.c, and back. Private to engine/.
 *
 * Holds are pseudo-jobs in the job store (fbf_job.hold set, res and alloc
 * the machines held, never waiting, never named by the protocol): RUNNING
 * until their end, in the running heap, not counted in nb_running.
 */
#ifndef FBF_ENGINE_INT_H
#define FBF_ENGINE_INT_H

#include <stdbool.h>

#include "engine/engine.h"
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/pool.h"
#include "engine/queue.h"
#include "engine/runheap.h"

typedef struct fbf_power fbf_power;
typedef struct fbf_estimator fbf_estimator;

/* A machine out of service and its hold (FBF_JOB_NONE while a job still
 * runs on it): failures.c. */
typedef struct fbf_failed_machine {
    uint32_t id;
    fbf_job_h hold;
} fbf_failed_machine;

typedef struct scan_job {
    fbf_engine *e;
    fbf_sched_filter keep;
    const void *ctx;
    int err;
} scan_job;

struct fbf_engine {
    fbf_engine_config cfg;
    fbf_jobs *jobs;
    fbf_pool *pool;
    fbf_partition *parts;
    fbf_hvec *scan_out; /* one per worker */
    fbf_job_h *cursor;  /* iterator cursors, one per partition */
    fbf_queue_place *cursor_at; /* ... and where they stopped (queue.h) */

    const fbf_policy_ops *ops;
    void *pstate;
    /* D9: the queue order (its partitions' form follows it) and the
     * backfill order, the queue order's own when not given. */
    const fbf_order_ops *order, *border;
    fbf_queue_mode qmode;
    fbf_estimator *est; /* D10 */

    fbf_idset free_set;
    uint32_t nb_compute, nb_free;
    bool has_platform;
    double now;
    bool any_ended;
    size_t nb_waiting, nb_running;

    fbf_runheap heap;

    fbf_hvec rejects, execs, kills;
    fbf_hvec started; /* kill_after: started jobs, oldest from started_head */
    fbf_hvec given_up; /* max_wait: this decision point's */
    size_t started_head;
    double cml;
    fbf_decision *dec;
    size_t dec_n, dec_cap;
    fbf_power *power;
    uint64_t nb_holds; /* ever made: names them */
    fbf_failed_machine *failed;
    size_t nb_failed, failed_cap;

    /* jobctl.c: the first handle of this decision point's arrivals, the
     * jobs requeued at it, and, when asked for (track_rsv), every waiting
     * job whose reservation the pass set (in_pass: only the pass's). */
    uint64_t point_seq0;
    fbf_hvec requeued;
    bool track_rsv, in_pass, rsv_oom;
    fbf_hvec rsv_set;
};

/* deadlines.c (an extension, extension.h): kill_after's due kills go into
 * kills, max_wait's jobs given up before the pass into given_up. */

/* holds.c */
/* Holds the machines of set (a copy is kept) from start for walltime (its
 * end, start + walltime, INFINITY when unknown): a pseudo-job of as many
 * resources. from_free: take them out of the free set (they must all be
 * there), else they are already out (moved from another hold). Tells the
 * policy (resources_held). -ENOMEM. */
int fbf_engine_hold(fbf_engine *e, const fbf_idset *set, double start, double walltime,
                    bool from_free, fbf_job_h *out);
/* Ends hold h: the policy hears it as a job end (job_ended); the machines
 * of to_free (part of the hold's, or NULL: none) go back to the free set,
 * the others stay out (held again by the caller). */
int fbf_engine_unhold(fbf_engine *e, fbf_job_h h, const fbf_idset *to_free);
/* Holds machine m from now until end (INFINITY: no known end). from_free:
 * take m out of the free set (it must be there), else m is already out
 * (a re-planned hold). Tells the policy (resources_held). -ENOMEM. */
int fbf_engine_hold_machine(fbf_engine *e, uint32_t m, double end, bool from_free,
                            fbf_job_h *out);
/* Ends a hold: the policy hears it as a job end (job_ended); to_free puts
 * the machine back in the free set. */
int fbf_engine_unhold_machine(fbf_engine *e, fbf_job_h h, bool to_free);

/* engine.c */
/* The free (hence ON) machines. */
const fbf_idset *fbf_engine_free_set(const fbf_engine *e);
int64_t fbf_engine_depth(const fbf_engine *e);

fbf_power *fbf_engine_power(const fbf_engine *e);

/* power.c */
fbf_power *fbf_power_create(const fbf_power_config *cfg);
void fbf_power_destroy(fbf_power *p);
int fbf_power_set_platform(fbf_power *p, const fbf_idset *compute);
int fbf_power_initial(fbf_power *p, fbf_engine *e, uint32_t m, fbf_machine_state st,
                      fbf_error *err);
int fbf_power_changed(fbf_power *p, fbf_engine *e, const fbf_idset *set, uint32_t pstate,
                      fbf_error *err);
/* A job's machines are free again at now (idle timers). -ENOMEM. */
int fbf_power_freed(fbf_power *p, const fbf_idset *alloc, double now);
/* Before the pass: wakes; after it: switch-offs and the call wanted
 * (*cml, NAN if none). -ENOMEM. */
int fbf_power_before(fbf_power *p, fbf_engine *e);
int fbf_power_after(fbf_power *p, fbf_engine *e, double *cml);
/* This decision point's SET requests: 0, 1 or 2 (wakes first). */
size_t fbf_power_requests(const fbf_power *p, const fbf_idset **sets, uint32_t *pstates);
fbf_machine_state fbf_power_state(const fbf_power *p, uint32_t m);
bool fbf_power_is_compute(const fbf_power *p, uint32_t m);

/* ordering.c: the partitions' form for the queue order; at a decision
 * point, dynamic keys taken afresh and the partitions sorted (-ENOMEM). */
fbf_queue_mode fbf_engine_queue_mode(const fbf_order_ops *order);
int fbf_engine_rekey(fbf_engine *e);

/* estimate.c (D10). create: NULL when out of memory. submit: the
 * estimate of a new job (INFINITY: none), what predict keeps of it noted
 * (-ENOMEM). started/ended: a job's start and end. correct: the
 * correction of D10 predict, before the pass (-ENOMEM). */
fbf_estimator *fbf_estimator_create(fbf_estimate kind);
void fbf_estimator_destroy(fbf_estimator *x);
int fbf_estimator_submit(fbf_estimator *x, fbf_job_h h, const fbf_submission *sub,
                         double *est);
int fbf_estimator_started(fbf_estimator *x, fbf_job_h h, const fbf_job *j);
void fbf_estimator_ended(fbf_estimator *x, fbf_job_h h, const fbf_job *j, double at,
                         bool killed);
int fbf_engine_correct_estimates(fbf_engine *e, fbf_error *err);

/* failures.c: machines given back (a job's, a hold's) that are out of
 * service are held again at once. -ENOMEM. */
int fbf_failures_freed(fbf_engine *e, const fbf_idset *alloc);
uint32_t fbf_power_nb_held(const fbf_power *p);

#endif
