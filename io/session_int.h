/*
 * session_int: the session's state, shared by its halves: session.c
 * (events) and session_reply.c (the pass and the reply's decisions).
 * Not part of the public API.
 */
#ifndef FBF_SESSION_INT_H
#define FBF_SESSION_INT_H

#include "io/store.h"
#include "io/session.h"

/* An estimate_waiting_time question, answered after the pass. */
typedef struct fbf_wait_query {
    char *id;
    int64_t res;
    double walltime;
} fbf_wait_query;

/* Descriptions read from the store ahead of the events that need them:
 * every undescribed submission from the first one of a batch to its end,
 * in one pipeline. */
typedef struct fbf_prefetch {
    fbf_store_item *items;
    long *origins;
    fbf_job_desc *descs;
    cJSON **docs; /* the descriptions read, alive while descs point into them */
    size_t n, next, cap;
} fbf_prefetch;

struct fbf_session {
    fbf_session_options opt;
    fbf_engine *engine;
    bool open, begun, ended;
    bool dynamic_jobs;  /* the peer waits for registration_finished */
    bool notified_registration;
    bool no_more_static, no_more_external;
    double last_call; /* the latest CALL_ME_LATER asked, NAN before any */
    fbf_store *store; /* Batsim's store, once SIMULATION_BEGINS turned it on */
    fbf_prefetch pre;
    fbf_decisions outs;
    fbf_wait_query *queries;
    size_t nqueries, qcap;
    bool query_due, final_query; /* query_energy */
    bool jobs_since_query;       /* query_energy without the end's notice */
    double energy; /* the last consumed energy answered, NAN before */
    unsigned long nb_points;
    fbf_session_fault fault;
    double t0; /* the first decision point's monotonic time, for the log */
    /* Job status and control (session_jsc.c): the jobs an update cancelled
     * at this decision point, to reject or kill in its reply, and every
     * job killed so, whose end is a cancellation. */
    fbf_job_h *ctl_rejects, *ctl_kills, *ctl_killed;
    size_t nctl_rejects, nctl_kills, nctl_killed, ctl_cap[3];
};

/* session_jsc.c: job status and control. */
/* At the start of a decision point: the updates asked since the last. */
int fbf_session_jsc_updates(fbf_session *s, fbf_error *err);
/* A job's end: a cancellation when an update killed it. */
void fbf_session_jsc_ended(fbf_session *s, fbf_job_h h, bool killed);
/* The reply's decisions and the reservations, told; the records handed over. */
void fbf_session_jsc_decided(fbf_session *s);
void fbf_session_jsc_fini(fbf_session *s);

/* Runs the pass of the decision point opened and lists its decisions. */
int fbf_session_reply(fbf_session *s, fbf_error *err);

#endif
