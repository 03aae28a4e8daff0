/*
 * replay: the state of one fastbf-replay run, shared by its modules.
 *
 *   sim.c       the discrete-event loop: which events make the next message,
 *               building it, the end and deadlock decisions
 *   validate.c  parsing and checking each reply as Batsim does, and applying
 *               its decisions to the state below
 *   output.c    statistics, the summary, out_jobs.csv, summary.json, progress
 *   main.c      options and wiring
 *
 * Time model (what Batsim does, without SimGrid): a message carries every
 * event that happened at or before its `now`; `now` is the time of the
 * earliest pending event, but never before the scheduler's last reply
 * `now` (the scheduler is busy until then, and events that happen meanwhile
 * are delivered together, each with its own timestamp). Events of a message
 * are ordered by (time, kind, tie): JOB_COMPLETED (ties by start order),
 * JOB_KILLED, JOB_SUBMITTED (file order), REQUESTED_CALL, then the NOTIFY
 * no_more_static_job_to_submit at the time of the last submission.
 * A decision of a reply takes effect at max(its timestamp, the request's
 * now): a job started then runs min(runtime, walltime).
 * CALL_ME_LATER(t): t == the reply's now is answered by a REQUESTED_CALL at
 * t in the very next message (Batsim's waker sleeps 0 s and fires at once);
 * t < the reply's now is a violation (Batsim only warns and drops it, but a
 * scheduler relying on that call would then hang, so the replayer refuses).
 * A scheduler that asks for "now" forever with nothing else happening is
 * stopped after livelock_max such messages in a row.
 * KILL_JOB: the jobs end at the decision's time (resources free at once);
 * one JOB_KILLED per KILL_JOB follows at that time, with job_progress
 * (share of the delay done) for the jobs really killed; jobs that had
 * already finished are listed without progress. A killed job gets no
 * JOB_COMPLETED, as in Batsim.
 *
 * Invariants:
 *   - jobs[i] describes wl->jobs[i]; state only moves forward
 *     PENDING -> WAITING -> (RUNNING -> DONE | REJECTED).
 *   - owner[r] is the index of the running job holding resource r, or
 *     FBF_NO_JOB; it changes only when a job starts or ends.
 *   - every RUNNING job has exactly one live COMPLETED entry in the heap;
 *     entries of jobs that are no longer RUNNING (killed) are stale and
 *     dropped when they reach the top (lazy deletion).
 *   - a message is sent only when it has at least one event.
 */
#ifndef FBF_REPLAY_H
#define FBF_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "tools/lib/workload.h"
#include "tools/replay/jbuf.h"
#include "tools/replay/transport.h"

#define FBF_NO_JOB UINT32_MAX

/* Exit codes of fastbf-replay. */
enum {
    FBF_EXIT_OK = 0,
    FBF_EXIT_INTERNAL = 1, /* out of memory, output files not writable */
    FBF_EXIT_INVALID = 2,  /* bad option or input, protocol violation, dead scheduler */
    FBF_EXIT_DEADLOCK = 3, /* jobs wait, nothing runs, nothing will happen */
};

typedef enum fbf_rjob_state {
    FBF_RJ_PENDING = 0, /* not submitted yet */
    FBF_RJ_WAITING,     /* submitted, neither started nor rejected */
    FBF_RJ_RUNNING,
    FBF_RJ_DONE,        /* completed or killed */
    FBF_RJ_REJECTED,
} fbf_rjob_state;

typedef enum fbf_rjob_end {
    FBF_END_NONE = 0,
    FBF_END_SUCCESS,  /* COMPLETED_SUCCESSFULLY */
    FBF_END_WALLTIME, /* COMPLETED_WALLTIME_REACHED */
    FBF_END_KILLED,   /* COMPLETED_KILLED (KILL_JOB, or CHANGE_JOB_STATE while waiting) */
    FBF_END_FAILED,   /* COMPLETED_FAILED (CHANGE_JOB_STATE while waiting) */
} fbf_rjob_end;

typedef struct fbf_rjob {
    double start;        /* when it started */
    double end;          /* when it ends (planned while RUNNING) */
    uint64_t start_seq;  /* start order, for completion ties */
    size_t ranges;       /* offset of its allocation in replay.ranges */
    size_t meta;         /* offset of SET_JOB_METADATA text in replay.text; 0 none */
    uint32_t nranges;
    uint8_t state;       /* fbf_rjob_state */
    uint8_t end_kind;    /* fbf_rjob_end */
} fbf_rjob;

/* Heap event kinds, in the order they appear within one timestamp. */
enum { FBF_EV_COMPLETED = 0, FBF_EV_KILLED = 1, FBF_EV_SUBMITTED = 2, FBF_EV_CALL = 3,
       FBF_EV_NOTIFY = 4, FBF_EV_STATE = 5, FBF_EV_ANSWER = 6 }; /* the last two: machines.h */

typedef struct fbf_rev {
    double t;
    uint32_t kind;
    uint32_t arg;  /* job index (COMPLETED) or kill index (KILLED) */
    uint64_t seq;  /* tie order within (t, kind) */
} fbf_rev;

/* One KILL_JOB, answered by one JOB_KILLED: items[first .. first + n). */
typedef struct fbf_kill {
    size_t first;
    uint32_t n;
} fbf_kill;

typedef struct fbf_kill_item {
    uint32_t job;
    double progress; /* NAN: the job had finished before the kill */
} fbf_kill_item;

typedef struct fbf_replay_config {
    uint32_t nb_res;     /* platform size (> 0) */
    double livelock_max; /* consecutive call-only messages at one time before giving up */
    bool progress;       /* progress lines on stderr */
    const struct fbf_energy_config *energy; /* --energy (machines.h); NULL: off */
} fbf_replay_config;

typedef struct fbf_replay {
    const fbf_workload *wl;
    fbf_replay_config cfg;
    fbf_transport *tr;

    fbf_rjob *jobs;
    uint32_t *order;   /* job indexes in submission order (subtime, file order) */
    size_t next_sub;   /* next entry of order[] to submit */
    uint32_t *owner;   /* per resource */

    fbf_rev *heap;
    size_t heap_n, heap_cap;
    uint64_t seq;

    fbf_kill *kills;
    size_t nkills, kills_cap;
    fbf_kill_item *kill_items;
    size_t nkill_items, kill_items_cap;

    fbf_range *ranges; /* allocations of started jobs, by offset */
    size_t nranges, ranges_cap;
    char *text;        /* metadata strings, by offset; offset 0 is "" */
    size_t text_len, text_cap;
    fbf_idset scratch; /* parsed alloc of the current EXECUTE_JOB */

    fbf_jbuf msg;      /* the request being built */
    double clock;      /* the last reply's now: where the simulation stands */
    double req_now;    /* now of the request being answered */
    size_t msg_index;  /* 0-based number of the current request */
    const char *msg_kind; /* its first event's type, for error messages */
    bool ending;       /* the current request is SIMULATION_ENDS */
    size_t same_time_calls; /* livelock guard */
    bool oom;          /* a state array could not grow: stop at the next send */

    /* counters */
    size_t submitted, waiting, running, done, rejected;
    size_t success, walltime_reached, killed;
    uint64_t starts;

    /* measurements */
    float *lat;        /* seconds per exchange */
    size_t nlat, lat_cap;
    double wall_total, wall_sched;
    double progress_last;

    struct fbf_machines *mach; /* --energy (machines.h); NULL: off */

    fbf_error err;     /* why the run stopped, when it did not end well */
} fbf_replay;

/* sim.c */
int fbf_replay_init(fbf_replay *r, const fbf_workload *wl, const fbf_replay_config *cfg,
                    fbf_error *err);
void fbf_replay_fini(fbf_replay *r);
/* Runs the whole conversation over tr. Returns an FBF_EXIT_* code; on
 * anything but FBF_EXIT_OK, r->err says why (for a deadlock, the stuck
 * jobs are listed on out as well). A warning (scheduler killed after the
 * end) leaves FBF_EXIT_OK with r->err set. */
int fbf_replay_run(fbf_replay *r, fbf_transport *tr, FILE *out);
void fbf_replay_heap_push(fbf_replay *r, double t, uint32_t kind, uint32_t arg, uint64_t seq);
/* Opens one event of the message being built (its data object follows). */
void fbf_replay_ev_open(fbf_replay *r, size_t *count, double t, const char *type);
double fbf_replay_now_s(void);

/* validate.c: checks and applies one reply. 0 or -EPROTO/-ENOMEM (r->err). */
int fbf_replay_apply_reply(fbf_replay *r, const char *text, size_t len);

/* output.c */
typedef struct fbf_replay_stats {
    double makespan, first_subtime, last_end;
    double mean_wait, max_wait, mean_bsld, utilization;
    double lat_p50, lat_p99, lat_max, lat_mean;
    size_t exchanges;
    double jobs_per_s;
} fbf_replay_stats;

void fbf_replay_stats_compute(fbf_replay *r, fbf_replay_stats *st);
void fbf_replay_print_summary(const fbf_replay *r, const fbf_replay_stats *st,
                              const char *label, FILE *out);
int fbf_replay_write_outputs(const fbf_replay *r, const fbf_replay_stats *st, const char *label,
                             const char *dir, fbf_error *err);
void fbf_replay_progress(fbf_replay *r, double wall_now, bool last);
/* The job's allocation in canonical form into b (appended). */
void fbf_replay_alloc_text(const fbf_replay *r, uint32_t job, fbf_jbuf *b);

#endif
