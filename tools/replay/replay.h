/*
 * replay: the state of one fastbf-replay run, shared by its modules.
 *
 *   sim.c       the discrete-event loop: setup, the exchanges, the end and
 *               deadlock decisions
 *   message.c   which events make the next message, and building it
 *               (message.h)
 *   validate.c  parsing and checking each reply as Batsim does, and applying
 *               its decisions to the state below
 *   decide.c    REJECT_JOB, KILL_JOB, SET_JOB_METADATA, CHANGE_JOB_STATE
 *   output.c    statistics, the summary, out_jobs.csv, summary.json, progress
 *   profiles.c  the workloads and profiles registrations create and drop
 *   dynamic.c   Batsim's side of dynamic registration (REGISTER_PROFILE,
 *               REGISTER_JOB, NOTIFY registration_finished /
 *               continue_registration) and of estimate_waiting_time queries
 *   store.c     job descriptions, the config, and Redis mode's keys
 *   msg_json.c  the JSON texts of the v4 messages message.c does not build inline
 *   v2_message.c, v2_reply.c  --protocol batsim2: the text protocol's
 *               messages, its Redis keys, and the checking of its replies;
 *               the simulation (this state, sim.c's loop) is the same
 *   v5_*.c      --protocol batsim5: Batsim 5's batprotocol in JSON (v5.h)
 *   options.c, main.c  options, and wiring
 *
 * Time model (what Batsim does, without SimGrid): a message carries every
 * event that happened at or before its `now`; `now` is the time of the
 * earliest pending event, but never before the scheduler's last reply
 * `now` (the scheduler is busy until then, and events that happen meanwhile
 * are delivered together, each with its own timestamp). Events of a message
 * are ordered by (time, kind, tie): JOB_COMPLETED (ties by start order),
 * JOB_KILLED (after the JOB_COMPLETED of the jobs it killed), JOB_SUBMITTED (file order), acknowledgements of registrations
 * (registration order), REQUESTED_CALL, then the NOTIFY
 * no_more_static_job_to_submit at the time of the last submission.
 * Times in messages are printed as Batsim prints them, "%f" (6 decimals),
 * while the clock stays exact; a reply's now must not be before the now
 * the request printed.
 * A decision of a reply takes effect at max(its timestamp, the request's
 * true now): a job started then runs min(runtime, walltime).
 * CALL_ME_LATER(t): t must be strictly after the time the event takes
 * effect (so neither the now the request printed nor its true now will
 * do), else Batsim's "You asked to be awaken in the past!"; the
 * REQUESTED_CALL comes at max(t, that time + 1e-5 s), as Batsim's waiter
 * never sleeps less. A scheduler that only ever asks to be called at once
 * is stopped after livelock_max such call-only messages in a row.
 * KILL_JOB and the other job decisions: decide.c. A killed job's
 * JOB_COMPLETED (COMPLETED_KILLED) precedes its JOB_KILLED, at the kill's
 * time (resources free at once).
 *
 * Dynamic jobs (--dynamic-jobs): registration is open from the start until
 * the reply after the scheduler's NOTIFY registration_finished, and again
 * after a continue_registration's; the run never ends while it is open (nothing left
 * to happen then is a deadlock, as Batsim would wait forever). A
 * REGISTER_JOB submits the job at the decision's time: it is appended to
 * the workload (jobs[] grows) and waits at once; with acknowledgements, a
 * JOB_SUBMITTED follows at that time (kind ACK, after static submissions).
 * --query-wait: every message that carries JOB_SUBMITTED events ends with
 * one QUERY estimate_waiting_time per submitted job, and the reply must
 * hold exactly one ANSWER for each.
 *
 * Invariants:
 *   - jobs[i] describes wl->jobs[i]; the first nb_static are the
 *     workload's, the rest were registered, in registration order; state only moves forward
 *     PENDING -> WAITING -> (RUNNING -> DONE | REJECTED); a RUNNING job
 *     flagged FROZEN (CHANGE_JOB_STATE RUNNING) never gets further.
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

#include <cjson/cJSON.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/store.h"
#include "tools/lib/workload.h"
#include "io/jbuf.h"
#include "io/json_arena.h"
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
    uint8_t pred;        /* fbf_rjob_pred */
    uint8_t flags;       /* FBF_RJF_* */
    double pred_start;   /* --query-wait: now + the answered waiting time */
} fbf_rjob;

/* fbf_rjob.flags. Batsim deletes a job once the message telling its end
 * (JOB_COMPLETED, or nothing for a rejection) has been sent: after that,
 * any decision about it aborts with "Cannot get job". */
enum {
    FBF_RJF_UNSENT = 1,   /* killed or rejected in a reply, not deleted yet */
    FBF_RJF_KILL_REQ = 2, /* a KILL_JOB named it: later ones skip it */
    FBF_RJF_FROZEN = 4,   /* CHANGE_JOB_STATE RUNNING while waiting: Batsim
                           * calls it running but never runs it */
    FBF_RJF_ROW = 8,      /* its out_jobs.csv row is in replay.rows */
};

typedef enum fbf_rjob_pred {
    FBF_PRED_NONE = 0,   /* not asked */
    FBF_PRED_PENDING,    /* asked in the current message */
    FBF_PRED_VALUE,      /* answered with a waiting time >= 0 */
    FBF_PRED_UNKNOWN,    /* answered -1 */
} fbf_rjob_pred;

/* A profile registered with REGISTER_PROFILE (owned strings). */
typedef struct fbf_rprofile {
    char *workload, *name;
    double delay;
} fbf_rprofile;

/* Heap event kinds, in the order they appear within one timestamp. */
enum { FBF_EV_COMPLETED = 0, FBF_EV_KILLED = 1, FBF_EV_SUBMITTED = 2, FBF_EV_ACK = 3,
       FBF_EV_CALL = 4, FBF_EV_NOTIFY = 5, FBF_EV_STATE = 6,
       FBF_EV_ANSWER = 7 }; /* the last two: machines.h */

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
    double progress; /* NAN: the job had completed before the kill */
} fbf_kill_item;

/* Which side of which protocol the replayer plays. */
typedef enum fbf_replay_protocol {
    FBF_PROTO_BV4 = 0, /* Batsim 4.2.1's JSON protocol over ZeroMQ (or in process) */
    FBF_PROTO_BV2,     /* Batsim v2's text protocol over a Unix socket, jobs in Redis */
    FBF_PROTO_BV5,     /* Batsim 5's batprotocol (JSON) with an EDC process or library */
} fbf_replay_protocol;

/* Progress on stderr: none; one line redrawn in place (a terminal); or a
 * line every FBF_PROGRESS_PERIOD_S seconds (--progress, for logs). */
enum { FBF_PROGRESS_OFF = 0, FBF_PROGRESS_TERMINAL, FBF_PROGRESS_LINES };
#define FBF_PROGRESS_PERIOD_S 5.0

typedef struct fbf_replay_config {
    uint32_t nb_res;     /* platform size (> 0) */
    fbf_replay_protocol protocol;
    double livelock_max; /* consecutive call-only messages at one time before giving up */
    int progress;        /* FBF_PROGRESS_*: how progress shows on stderr */
    bool dyn_jobs;       /* dynamic-jobs-enabled */
    bool dyn_acks;       /* dynamic-jobs-acknowledged */
    bool forward_profiles; /* profiles-forwarded-on-submission */
    bool query_wait;     /* QUERY estimate_waiting_time with each submission */
    bool profile_reuse;  /* profile-reuse-enabled; else a profile is dropped
                          * once a job using it is deleted (dynamic.c) */
    /* Redis mode (--redis): job descriptions go to this store (borrowed)
     * and JOB_SUBMITTED carries only job_id; NULL: off. */
    fbf_store *redis;
    const char *redis_host; /* as the config tells the scheduler */
    int redis_port;
    const struct fbf_energy_config *energy; /* --energy (machines.h); NULL: off */
    /* --external-events-end T: as Batsim run with --events whose last
     * external event falls at T (none of them for the scheduler), NOTIFY
     * no_more_external_event_to_occur at T; NAN: no such list. */
    double external_end;
    size_t max_exchanges; /* --max-exchanges: SIMULATION_ENDS after this many
                           * exchanges past SIMULATION_BEGINS; 0: no limit */
    /* --record: every request and reply goes here (a zlib gzFile,
     * borrowed; NULL: none), see fbf_replay_record_message(). */
    void *record;
    const struct fbf_v5_config *v5; /* --protocol batsim5 (v5.h); NULL otherwise */
    FILE *log;           /* --verbose: every rejection and why, when known; NULL: off */
} fbf_replay_config;

#define FBF_REPLAY_MAX_WORKLOADS 16

#define FBF_REPLAY_MAX_COUNTERS 8

typedef struct fbf_replay {
    fbf_workload *wl;  /* grows with registered jobs */
    fbf_replay_config cfg;
    fbf_transport *tr;
    /* The scheduler's work counters, read after SIMULATION_ENDS when the
     * transport can tell (in process). */
    fbf_policy_counter sched_work[FBF_REPLAY_MAX_COUNTERS];
    size_t nsched_work;

    fbf_rjob *jobs;
    size_t jobs_cap;
    size_t nb_static;  /* the workload's own jobs; registered ones follow */
    size_t nb_static_profiles;
    uint32_t *order;   /* static job indexes in submission order (subtime, file order) */
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
    char *v2_buf;      /* batsim2: the reply being checked, NUL-terminated */
    size_t v2_cap;
    fbf_json_arena *arena; /* holds the reply being checked (made by the first) */
    uint32_t *store_q; /* Redis mode: jobs the request submits (store.c) */
    size_t nstore, store_cap;
    uint8_t *profile_stored;
    fbf_jbuf store_text;
    double clock;      /* where the simulation stands: the later of the last
                        * request's true now and its reply's now */
    double req_now;    /* true now of the request being answered */
    double req_shown;  /* that now as the request printed it (6 decimals) */
    uint32_t *unsent;  /* rejected jobs to delete after the next message */
    size_t nunsent, unsent_cap;
    size_t msg_index;  /* 0-based number of the current request */
    const char *msg_kind; /* its first event's type, for error messages */
    bool ending;       /* the current request is SIMULATION_ENDS */
    size_t same_time_calls; /* livelock guard: call-only messages in a row
                             * whose calls came at the waiter's minimum */
    bool oom;          /* a state array could not grow: stop at the next send */

    /* counters */
    size_t submitted, waiting, running, done, rejected;
    size_t success, walltime_reached, killed;
    uint64_t starts;

    /* measurements */
    float *lat;        /* seconds per exchange */
    size_t nlat, lat_cap;
    double wall_total, wall_sched;
    double loop_from, loop_to; /* when the first and the last reply came */
    double progress_last, progress_t0;
    bool progress_ended; /* the last line is out: nothing may redraw it */

    /* dynamic registration and queries (dynamic.c) */
    char wl_names[FBF_REPLAY_MAX_WORKLOADS][64]; /* the workloads SIMULATION_BEGINS lists */
    size_t nwl_names;
    bool reg_open;     /* as Batsim checks a reply: the state before it */
    int reg_next;      /* -1: no NOTIFY in this reply; else the open state
                        * its last registration NOTIFY leaves */
    size_t registered, continues;
    fbf_rprofile *rprof;
    size_t nrprof, rprof_cap;
    uint32_t *queries; /* jobs asked about in the current message */
    size_t nqueries, queries_cap;
    size_t answered, answered_unknown;
    struct fbf_machines *mach; /* --energy (machines.h); NULL: off */
    struct fbf_v5 *v5;  /* --protocol batsim5 (v5.h); NULL otherwise */

    /* The jobs in the order Batsim 4.2.1 writes their out_jobs.csv rows:
     * a completion when its JOB_COMPLETED goes out, a kill when its
     * JOB_KILLED does, a rejection when it is applied (batsim_out.c). */
    uint32_t *rows;
    size_t nrows, rows_cap;

    fbf_error err;     /* why the run stopped, when it did not end well */
    char *err_long;    /* the whole text when err.text had to cut it; NULL */
    bool truncated;    /* ended by --max-exchanges with jobs not done: the
                        * figures cover the done jobs only (output.c) */
} fbf_replay;

/* sim.c */
int fbf_replay_init(fbf_replay *r, fbf_workload *wl, const fbf_replay_config *cfg,
                    fbf_error *err);
void fbf_replay_fini(fbf_replay *r);
/* Runs the whole conversation over tr. Returns an FBF_EXIT_* code; on
 * anything but FBF_EXIT_OK, r->err says why (for a deadlock, the stuck
 * jobs are listed on out as well). A warning (scheduler killed after the
 * end) leaves FBF_EXIT_OK with r->err set. */
int fbf_replay_run(fbf_replay *r, fbf_transport *tr, FILE *out);
/* events.c: the pending events' heap. Pop needs a non-empty heap. */
void fbf_replay_heap_push(fbf_replay *r, double t, uint32_t kind, uint32_t arg, uint64_t seq);
fbf_rev fbf_replay_heap_pop(fbf_replay *r);
/* Opens one event of the message being built (its data object follows). */
void fbf_replay_ev_open(fbf_replay *r, size_t *count, double t, const char *type);
/* A time or any other number Batsim writes itself, as it prints it: "%f"
 * (6 decimals; whole values without a printf). */
void fbf_replay_put_f(fbf_jbuf *b, double v);
/* Batsim's waiter never sleeps less than this (s). */
#define FBF_REPLAY_MIN_SLEEP 1e-5
double fbf_replay_now_s(void);

/* validate.c: checks and applies one reply. 0 or -EPROTO/-ENOMEM (r->err). */
int fbf_replay_apply_reply(fbf_replay *r, const char *text, size_t len);
/* Fills r->err with the reply context (event ev of type, job), returns -EPROTO. */
int fbf_replay_fail(fbf_replay *r, long ev, const char *type, const char *job, const char *fmt,
                    ...) __attribute__((format(printf, 5, 6)));
/* Starts job ji on the machines of s (exactly its res, free and in range:
 * the caller checked) at time at: it runs min(runtime, walltime). -EPROTO
 * with why when it would end past the largest representable time, -ENOMEM. */
int fbf_replay_start_job(fbf_replay *r, uint32_t ji, const fbf_idset *s, double at, char *why,
                         size_t cap);
/* Grows *p to hold need elements of elem bytes; false when out of memory. */
bool fbf_replay_grow(void **p, size_t *cap, size_t need, size_t elem);

/* decide.c: the job decisions of a reply (REJECT_JOB, KILL_JOB,
 * SET_JOB_METADATA, CHANGE_JOB_STATE), with Batsim's reasons. */
int fbf_replay_reject(fbf_replay *r, const cJSON *data, long ev, double at);
int fbf_replay_kill(fbf_replay *r, const cJSON *data, long ev, double at);
int fbf_replay_metadata(fbf_replay *r, const cJSON *data, long ev, double at);
int fbf_replay_change_state(fbf_replay *r, const cJSON *data, long ev, double at);
/* Rejects waiting job ji (the caller checked it waits) at time at; the
 * first form at the request's now. With cfg.log, says why when it can
 * tell (more resources than the platform, none, the job's metadata). */
void fbf_replay_reject_job(fbf_replay *r, uint32_t ji);
void fbf_replay_reject_job_at(fbf_replay *r, uint32_t ji, double at);
/* Deletes the jobs rejected by the last reply (the next message is out). */
void fbf_replay_delete_unsent(fbf_replay *r);
/* Batsim's name of a job's state at time at (JOB_STATE_ less). */
const char *fbf_replay_state_name(const fbf_replay *r, uint32_t job, double at);

/* dynamic.c: the events of a reply that dynamic registration and queries
 * bring; each returns 0 or fills r->err and returns -EPROTO / -ENOMEM. */
int fbf_replay_register_profile(fbf_replay *r, const cJSON *data, long ev);
int fbf_replay_register_job(fbf_replay *r, const cJSON *data, long ev, double at);
int fbf_replay_notify(fbf_replay *r, const cJSON *data, long ev);
int fbf_replay_answer(fbf_replay *r, const cJSON *data, long ev);
/* After a reply: every QUERY of the request was answered. */
int fbf_replay_answers_done(fbf_replay *r);
/* Appends the QUERY events for the jobs submitted in the message built. */
void fbf_replay_emit_queries(fbf_replay *r, size_t *count);
void fbf_replay_dynamic_fini(fbf_replay *r);
/* A registered job, checked by the caller as its protocol's Batsim does
 * (type names the event for errors): into the workload and the queue at
 * at, acknowledged later when acknowledgements are on. */
int fbf_replay_job_register(fbf_replay *r, long ev, const char *type, const char *id, double at,
                            double delay, double walltime, int64_t res, const char *profile);

/* profiles.c: Batsim's workloads and profiles by (workload, name) once a
 * registration came (the input's under every workload SIMULATION_BEGINS
 * listed). Each returns 0 or -ENOMEM with r->err set. */
#define FBF_REPLAY_PROFILE_NONE (-1.0)
#define FBF_REPLAY_PROFILE_DROPPED (-2.0)
/* Builds the index at the first registration (runs without pay nothing). */
int fbf_replay_profiles_ready(fbf_replay *r);
void fbf_replay_profiles_fini(fbf_replay *r);
/* The delay of profile name of workload wl (len bytes), or _NONE, or
 * _DROPPED. After fbf_replay_profiles_ready(). */
double fbf_replay_profile_delay(const fbf_replay *r, const char *wl, size_t len,
                                const char *name);
/* Whether Batsim knows workload wl: the input's, or one registered. */
bool fbf_replay_workload_known(const fbf_replay *r, const char *wl, size_t len);
int fbf_replay_workload_add(fbf_replay *r, const char *wl, size_t len);
/* A new profile (the caller checked the name is free), creating its
 * workload as Batsim does. */
int fbf_replay_profile_add(fbf_replay *r, const char *wl, const char *name, double delay);
/* Batsim deletes job: without profile reuse, its profile goes with it
 * (the name stays taken). Only with dynamic jobs, where it can matter. */
void fbf_replay_drop_profile(fbf_replay *r, uint32_t job);
/* After a reply: its NOTIFYs' effect on registration. */
void fbf_replay_notify_apply(fbf_replay *r);
/* The workload names SIMULATION_BEGINS lists (jobs' id prefixes). */
size_t fbf_replay_workload_names(const fbf_workload *wl, char names[][64]);

/* store.c */
/* The job's JSON description (Batsim's job_definition) into b. */
void fbf_replay_job_desc(const fbf_replay *r, uint32_t job, fbf_jbuf *b);
/* SIMULATION_BEGINS' config object, flat as Batsim 4.2.1 sends it. */
void fbf_replay_config_json(const fbf_replay *r, fbf_jbuf *b);
/* Redis mode: queue job's keys for the message being built. */
void fbf_replay_store_queue(fbf_replay *r, uint32_t job);
/* Redis mode: nb_res at the start, the queued keys before each send.
 * FBF_EXIT_* codes (r->err says why); no-ops when Redis is off. */
int fbf_replay_store_start(fbf_replay *r);
int fbf_replay_store_pending(fbf_replay *r);

/* Starts the message at now (message.c): its head, and the now the scheduler
 * reads (req_now, req_shown). */
void fbf_replay_msg_open(fbf_replay *r, double now);
/* msg_json.c: the v4 messages' texts that message.c does not build inline. */
void fbf_replay_json_begins(fbf_replay *r);
void fbf_replay_json_killed(fbf_replay *r, size_t *count, double t, uint32_t kill);

/* v2_message.c: --protocol batsim2, Batsim's side of the text protocol. */
#define FBF_V2_VERSION 3 /* the version Batsim's messages carry */
/* Appends the event "|T:S" (its content, ":..." if any, follows). */
void fbf_v2_event(fbf_replay *r, size_t *count, double t, char stamp);
/* Machine ids as the protocol writes them: "0-3,8" from n ranges. */
void fbf_v2_ranges(fbf_jbuf *b, const fbf_range *rg, uint32_t n);
/* 0, or -EINVAL when a job id holds a byte the text protocol cannot carry
 * (outside printable ASCII, a space, or one of | : ; = ,). */
int fbf_v2_check_ids(const fbf_workload *wl, fbf_error *err);
/* The first message, A, with nb_res already in Redis. */
void fbf_v2_begins(fbf_replay *r);
/* Whether the message built ends the simulation: every job submitted and
 * done or rejected and nothing pending. Then Z is appended to it. */
bool fbf_v2_end_due(fbf_replay *r);
/* Redis: job_<id> and profile_<id> of every job the message submits,
 * pipelined before it is sent. FBF_EXIT_* (r->err says why). */
int fbf_v2_store_pending(fbf_replay *r);
/* v2_reply.c: checks and applies one reply, as Batsim v2 did and more.
 * 0 or -EPROTO / -ENOMEM (r->err). */
int fbf_v2_apply_reply(fbf_replay *r, const char *text, size_t len);

/* output.c */
typedef struct fbf_replay_stats {
    double makespan, first_subtime, last_end;
    double mean_wait, max_wait, mean_bsld, utilization;
    double lat_p50, lat_p99, lat_max, lat_mean;
    double loop_rate; /* exchanges per second after the first; 0: fewer than 2 */
    size_t exchanges;
    double jobs_per_s;
    /* --query-wait: over started jobs whose ANSWER was a time */
    size_t pred_n, pred_exact;
    double pred_mae, pred_max_err;
} fbf_replay_stats;

/* Records one exchange sent at a and answered at b (fbf_replay_now_s);
 * false on ENOMEM. */
bool fbf_replay_record_exchange(fbf_replay *r, double a, double b);
void fbf_replay_stats_compute(fbf_replay *r, fbf_replay_stats *st);
void fbf_replay_print_summary(const fbf_replay *r, const fbf_replay_stats *st,
                              const char *label, FILE *out);
int fbf_replay_write_outputs(const fbf_replay *r, const fbf_replay_stats *st, const char *label,
                             const char *dir, fbf_error *err);
/* The progress line (jobs done of all, percentage, simulated time, jobs
 * running and waiting, wall time and time left); last: the final one,
 * ended by a newline, after which the scheduler's own last words come. */
void fbf_replay_progress(fbf_replay *r, double wall_now, bool last);
/* batsim_out.c: Batsim 4.2.1's own output files. */
/* Notes that Batsim writes job's row now (its state is final); once. */
void fbf_replay_note_row(fbf_replay *r, uint32_t job);
/* DIR/out_jobs.csv and DIR/out_schedule.csv (paths given whole). */
int fbf_replay_write_batsim_files(const fbf_replay *r, const char *jobs_path,
                                  const char *schedule_path, fbf_error *err);
/* The job's allocation in canonical form into b (appended). */
void fbf_replay_alloc_text(const fbf_replay *r, uint32_t job, fbf_jbuf *b);

/* --record: one line, prefix ("> " request, "< " reply) then text with
 * each line break written as \\n. false when the write failed. */
bool fbf_replay_record_message(fbf_replay *r, const char *prefix, const char *text,
                               size_t len);

#endif
