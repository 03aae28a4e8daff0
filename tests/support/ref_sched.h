/*
 * ref_sched: a deliberately simple reference scheduler for the tests.
 *
 * It implements scheduling-semantics.md (D0-D10) as literally as possible,
 * with plain arrays and brute force, so that it is obviously right rather
 * than fast: free(u) is recomputed by summing over every running job and
 * every reservation, earliest() tries now and every breakpoint in
 * ascending order, EASY uses the shadow/extra formulas of D6 (no profile),
 * a reservation depth k >= 2 re-reserves the first k jobs at every pass
 * (D8, as policies/backfilling/policy.c words it), conservative follows D7 (a)-(d) step by
 * step, FCFS is D5. The orders of D9 are sorts of the waiting jobs by
 * their keys, taken at every decision point; the estimates of D10 are
 * taken at submission, corrected after the events and repaired under
 * conservative, each where D10 says.
 *
 * ref_simulate() runs its own event loop over a workload (the same loop
 * the tests run around the engine):
 *   - the next decision point is at the smallest of: the next submission's
 *     arrival time, the actual end (start + runtime) of a running job, a
 *     pending CALL_ME_LATER time;
 *   - its message holds, in order, the completions of every running job
 *     ending by then (job index order), then every submission arriving by
 *     then (input order, which is arrival order);
 *   - one scheduling pass, whose decisions go to the trace: a DP marker,
 *     REJECTs (arrival order), EXECUTEs (start order), CALL_ME_LATER.
 * Jobs run `runtime` (<= walltime when a walltime is given).
 *
 * Nothing here depends on the engine: the test compares the two traces.
 */
#ifndef FBF_TEST_REF_SCHED_H
#define FBF_TEST_REF_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REF_MAX_RES 512
#define REF_ALLOC_LEN 2048

typedef enum ref_policy { REF_FCFS, REF_EASY, REF_CONSERVATIVE } ref_policy;

/* D9's orders and D10's estimates, in the order of their names below. */
typedef enum ref_order { REF_SUBMIT, REF_SJF, REF_SAF, REF_LXF, REF_WFP3, REF_PRIORITY } ref_order;
#define REF_NB_ORDERS 6
typedef enum ref_estimate { REF_WALLTIME, REF_EXACT, REF_PREDICT } ref_estimate;
#define REF_NB_ESTIMATES 3
extern const char *const ref_order_names[REF_NB_ORDERS];
extern const char *const ref_estimate_names[REF_NB_ESTIMATES];

typedef struct ref_options {
    ref_policy policy;
    /* REF_EASY only: 0 or 1 is D6 itself; k >= 2 the depth k of D8. */
    long depth;
    ref_order order, backfill_order;
    ref_estimate estimate;
    /* REF_EASY: D8's depth-k rule even at depth 1, where it must agree
     * with D6's shadow and extra (a check of the reference itself). */
    bool depth_rule;
} ref_options;

typedef enum ref_kind {
    REF_DP = 0, /* a decision point at `now` */
    REF_REJECT = 1,
    REF_EXECUTE = 2,
    REF_CALL_ME_LATER = 3,
} ref_kind;

typedef struct ref_entry {
    ref_kind kind;
    double now;
    long job;  /* REJECT, EXECUTE: index in the workload; else -1 */
    double at; /* CALL_ME_LATER */
} ref_entry;

typedef struct ref_trace {
    ref_entry *v;
    size_t n, cap;
} ref_trace;

void ref_trace_push(ref_trace *t, ref_kind kind, double now, long job, double at);
void ref_trace_fini(ref_trace *t);
/* Index of the first entry that differs, or SIZE_MAX if equal. */
size_t ref_trace_diff(const ref_trace *a, const ref_trace *b);
void ref_trace_print(FILE *f, const ref_trace *t, size_t from, size_t to);

typedef struct ref_job {
    double arrival;  /* when its submission reaches the scheduler (ascending) */
    double subtime;  /* its queue key (D1) */
    int64_t res;
    double walltime; /* < 0: none */
    double runtime;  /* actual run time */
    double priority; /* D9's priority */
    int user;        /* D10 predict: 0 is the anonymous user */
    bool has_delay;  /* D10 exact: its submission forwards a delay profile of `delay` */
    double delay;
} ref_job;

/* A job of the five fields above, without priority, user or delay. */
#define REF_JOB(a, s, r, w, rt)                                                                \
    { .arrival = (a), .subtime = (s), .res = (r), .walltime = (w), .runtime = (rt) }

typedef struct ref_result {
    bool rejected;
    double start; /* NAN if never started */
    char alloc[REF_ALLOC_LEN];
} ref_result;

/* Canonical interval-set form of ids (ascending): "0-3 8 10-11". */
void ref_format_ids(const uint32_t *ids, size_t n, char *buf, size_t cap);

/* Runs the workload. ids: the nb compute resources, strictly ascending
 * (nb <= REF_MAX_RES). out and trace are filled. Returns 0, or -1 with a
 * message in err when the reference finds the spec contradicting itself
 * (e.g. a compression that moves a reservation later). */
int ref_simulate(ref_policy pol, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                 size_t n, ref_result *out, ref_trace *trace, char *err, size_t errlen);
/* The same under orders, an estimate and a depth. */
int ref_simulate_opts(const ref_options *o, const uint32_t *ids, uint32_t nb,
                      const ref_job *jobs, size_t n, ref_result *out, ref_trace *trace,
                      char *err, size_t errlen);

/* Gives the jobs of a workload from ref_random_workload() priorities
 * (ties and negatives among them), users (a few, some anonymous) and, for
 * most, a forwarded delay profile of their run time; reproducible. */
void ref_random_extras(uint64_t seed, ref_job *jobs, size_t n);

/* A reproducible random workload (see ref_sched.c for the distribution).
 * jobs must hold max_jobs entries; ids REF_MAX_RES. Returns the job count
 * and sets *nb. */
size_t ref_random_workload(uint64_t seed, size_t min_jobs, size_t max_jobs, uint32_t min_res,
                           uint32_t max_res, ref_job *jobs, uint32_t *ids, uint32_t *nb);

/* Prints a workload as C initialisers (for reproducers). */
void ref_print_workload(FILE *f, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                        size_t n);

#endif
