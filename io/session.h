/*
 * session: one scheduler-side conversation with a simulator or a resource
 * manager, whatever its protocol. A codec (io/bv4_*, io/bv2_*) turns the
 * wire's bytes into a typed batch of events for one decision point and the
 * session's typed decisions back into bytes; everything that is not wire
 * syntax lives here, once: the engine calls, D2 (a job ends or is killed
 * before the pass), kills after --kill-after, --max-wait, dynamic
 * registration (io/submitter.h), energy saving, queries, --tag-starts
 * and the look-ups of job descriptions in Batsim's store (io/store.h).
 *
 * One decision point:
 *   fbf_session_open(s, now)              the request's time
 *   fbf_session_apply(s, events, n)       its events in order, in one call
 *                                         or several (a streamed request)
 *   fbf_session_decide(s, &outs, &n)      the pass; the reply's decisions
 *
 * Decisions come in the reply's order: registrations due before the pass,
 * then the engine's decisions in D0 order (rejections and give-ups, kills,
 * starts each followed by its --tag-starts metadata, machine state
 * changes, the call for the next decision point), then the call and
 * notifications of registration, the energy query and the answers.
 *
 * Ownership: _create() copies the options (the submitter and the power
 * config stay the caller's); strings of events are borrowed for the call;
 * decisions and their strings are the session's, valid until the next
 * fbf_session_open().
 *
 * Errors: negative errno codes; err holds the session's text, and
 * fbf_session_last_fault() the event (its origin) and the field it
 * concerns, so that a codec phrases it in its own terms. Codes:
 *   -ENOENT unknown job; -EEXIST a job submitted twice; -EINVAL an event
 *   that contradicts the state (a job ending that does not run, a state
 *   change the engine refuses); -EPROTO a description fastbf cannot use
 *   (a Redis key missing or malformed, an allocation that differs);
 *   -ENOTSUP registration on a peer without dynamic jobs; -ECONNREFUSED /
 *   -EIO Redis; -ENOMEM. The session must not be used after an error.
 */
#ifndef FBF_SESSION_H
#define FBF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "engine/engine.h"
#include "engine/idset.h"
#include "io/submitter.h"
#include "io/decisions.h"
#include "io/job_json.h"
#include "io/jsc.h"

typedef enum fbf_event_kind {
    FBF_EV_JOB_SUBMITTED,
    FBF_EV_JOB_ENDED,
    FBF_EV_CALL_DUE,
    FBF_EV_NOTIFY,
    FBF_EV_JOB_KILLED, /* one per job of a kill */
    FBF_EV_STATE_CHANGED,
    FBF_EV_MACHINES_FAILED,
    FBF_EV_MACHINES_RESTORED,
    FBF_EV_QUERY_WAIT, /* how long would this job wait */
    FBF_EV_ENERGY,     /* the answer to fastbf's energy query */
    FBF_EV_SIMULATION_BEGINS,
    FBF_EV_SIMULATION_ENDS,
    /* A peer that keeps its jobs across a scheduler's restart, and cancels
     * and re-sends a job's request (Flux's RFC 27; engine/jobctl.c). */
    FBF_EV_JOB_ADOPTED,   /* a running job found at the start */
    FBF_EV_JOB_WITHDRAWN, /* a waiting job's request cancelled */
    FBF_EV_JOB_REQUEUED,  /* a withdrawn job's request sent again */
} fbf_event_kind;

/* What a peer notifies. */
typedef enum fbf_notice {
    FBF_NOTICE_NO_MORE_STATIC_JOBS,
    FBF_NOTICE_NO_MORE_EXTERNAL_EVENTS,
} fbf_notice;

/* The platform and the peer's configuration, at the first event. */
typedef struct fbf_begins {
    /* The compute machines; NULL: 0..n-1, n being the store's nb_res. */
    const fbf_idset *compute;
    /* Initial states (NULL: all ON): nb_states pairs. */
    const uint32_t *state_machines;
    const fbf_machine_state *states;
    size_t nb_states;
    /* The platform's pstates (found false: not said): the sleep pstates
     * in the platform's order, the virtual ones of the switches, how many
     * pstates a machine has (0: not said), and the first machine that said
     * so, for messages. */
    struct {
        bool found;
        uint32_t sleep[8], nsleep, virt[16], nvirt, count, machine;
        const char *field; /* where the codec read them, for messages */
    } pstates;
    bool dynamic_jobs, dynamic_acks, profile_reuse;
    /* Batsim's store of job descriptions (enabled false: events carry
     * descriptions). prefix NULL: Batsim's default. */
    struct {
        bool enabled;
        const char *host, *prefix;
        int port;
    } store;
    /* The profiles the peer already has, {workload: {name: profile}} in
     * Batsim's JSON (every Batsim protocol describes profiles in JSON);
     * NULL: none. For registration (submitter.h). */
    const cJSON *known_profiles;
} fbf_begins;

typedef struct fbf_event {
    fbf_event_kind kind;
    double time;
    long origin; /* the codec's index of the event it came from, for errors */
    union {
        struct {
            const char *id;
            bool described; /* false: the description is in the store */
            fbf_job_desc desc;
        } submitted;
        struct {
            const char *id;
            const char *alloc; /* the machines it ran on, as an interval set; NULL: unsaid */
        } ended;
        struct {
            const char *id;
            const char *progress; /* how far it got, for the log; NULL: unsaid */
        } killed;
        struct {
            const char *id;
            const fbf_idset *alloc;
            double end; /* INFINITY: no known end */
        } adopted;
        const char *job; /* withdrawn, requeued */
        struct {
            const fbf_idset *machines;
            uint32_t pstate;
        } state;
        const fbf_idset *machines; /* failed, restored */
        struct {
            const char *id;
            int64_t res;
            double walltime;
        } query;
        double joules;
        fbf_notice notice;
        const fbf_begins *begins;
    } u;
} fbf_event;

typedef struct fbf_session_options {
    fbf_engine_config engine;
    FILE *log;       /* --verbose lines; NULL = silent */
    bool tag_starts; /* metadata after each start: why it started */
    fbf_submitter *submitter; /* borrowed; NULL: fastbf registers nothing */
    const fbf_power_config *power; /* NULL: defaults, no saving */
    bool sleep_pstate_given, compute_pstate_given;
    bool query_energy;
    /* What a reply costs the peer per event before it: a call asked for
     * sooner than now + call_margin + call_per_event x (decisions before
     * it, the kills of a reply counting once) is asked for then. */
    double call_margin, call_per_event;
    /* The peer never says that its last job was submitted (v2): the
     * energy query goes out whenever nothing waits or runs any more after
     * jobs came. */
    bool no_end_notice;
    /* Borrowed; NULL: none. Job status and control (io/jsc.h): every
     * state change is told to it, its updates are applied at the start of
     * each decision point (a cancelled waiting job is rejected, a
     * cancelled running one killed), and it gets the reservations. */
    fbf_jsc *jsc;
} fbf_session_options;

typedef struct fbf_session fbf_session;

/* Where an error is: the event (index; -1 none) and its field. */
typedef enum fbf_session_field {
    FBF_FIELD_NONE,
    FBF_FIELD_TIME,
    FBF_FIELD_JOB_ID,
    FBF_FIELD_JOB,      /* the description */
    FBF_FIELD_ALLOC,
    FBF_FIELD_MACHINES,
    FBF_FIELD_PSTATE,
    FBF_FIELD_STATES,   /* SIMULATION_BEGINS' initial states */
    FBF_FIELD_PSTATES,  /* SIMULATION_BEGINS' pstates */
    FBF_FIELD_CONFIG,
} fbf_session_field;

typedef struct fbf_session_fault {
    long index;
    fbf_session_field field;
} fbf_session_fault;

/* Where a transport's I/O thread's time went, for a user who asks whether
 * the scheduler or its peer sets the pace: the time between receiving a
 * request and having its reply ready, over all requests and for the first
 * alone (the simulation's beginning, with the platform; often the
 * largest). The rest of the run is spent in the transport and waiting for
 * the peer. */
typedef struct fbf_serve_stats {
    unsigned long messages;
    double handling_s;
    double first_s;
} fbf_serve_stats;

/* Timing one request, only when stats are wanted (st non-NULL: two clock
 * reads a request): t0 = fbf_serve_stats_clock(st) on receiving it,
 * fbf_serve_stats_add(st, t0) once its reply is ready, which counts it in
 * st->messages and adds to its times. */
double fbf_serve_stats_clock(const fbf_serve_stats *st);
void fbf_serve_stats_add(fbf_serve_stats *st, double t0);

fbf_session *fbf_session_create(const fbf_session_options *opt, fbf_error *err);
void fbf_session_destroy(fbf_session *s);

int fbf_session_open(fbf_session *s, double now, fbf_error *err);
int fbf_session_apply(fbf_session *s, const fbf_event *ev, size_t n, fbf_error *err);
int fbf_session_decide(fbf_session *s, const fbf_out **outs, size_t *n, fbf_error *err);

/* After an error: where it was. */
fbf_session_fault fbf_session_last_fault(const fbf_session *s);

fbf_engine *fbf_session_engine(fbf_session *s);
bool fbf_session_begun(const fbf_session *s);
bool fbf_session_ended(const fbf_session *s);
/* Whether SIMULATION_BEGINS turned Batsim's store on. */
bool fbf_session_uses_store(const fbf_session *s);
unsigned long fbf_session_nb_decision_points(const fbf_session *s);

#endif
