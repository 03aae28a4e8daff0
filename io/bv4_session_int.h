/*
 * bv4_session_int: the session's state, shared by its two halves:
 * bv4_session.c (requests: checking and applying events) and bv4_reply.c
 * (replies: decisions in D0 order, registrations, queries, answers).
 * Not part of the public API.
 */
#ifndef FBF_BV4_SESSION_INT_H
#define FBF_BV4_SESSION_INT_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "io/bv4_fetch.h"
#include "io/bv4_session.h"
#include "io/jbuf.h"
#include "io/json_arena.h"

struct fbf_bv4_session {
    fbf_bv4_options opt;
    fbf_engine *engine;
    bool begun, ended;
    bool dynamic_jobs;  /* Batsim waits for registration_finished */
    bool notified_registration;
    bool no_more_static, no_more_external;
    double last_call; /* the latest CALL_ME_LATER sent, NAN before any */
    fbf_json_arena *arena; /* holds the request being handled */
    fbf_bv4_fetch *fetch;  /* Redis mode: job descriptions from the store */
    fbf_jbuf out; /* the reply's text, reused across messages */
    /* Events other modules build for the reply as trees; empty between
     * messages, kept so that a message costs no array allocation. */
    cJSON *answers, *registrations;
    unsigned long nb_messages;
    bool query_due, final_query; /* query_energy */
    double energy; /* the last consumed_energy answered, NAN before */
};

/* A CALL_ME_LATER must be later than Batsim's clock when Batsim applies
 * it, or Batsim aborts ("You asked to be awaken in the past!"). Batsim
 * prints `now` with six decimals but keeps full precision, and on a
 * platform with network latency it applies each event of a reply some
 * microseconds after the one before (15 us on its small_platform). So no
 * call is asked for before now + FBF_BV4_CALL_MARGIN +
 * FBF_BV4_CALL_PER_EVENT x (the events before it in the reply); one due
 * sooner is asked for then. */
#define FBF_BV4_CALL_MARGIN 1e-3
#define FBF_BV4_CALL_PER_EVENT 2e-5

/* Writes the reply of the decision point just decided into s->out: the
 * engine's decisions in D0 order, with tags, registrations,
 * notifications, queries and the answers, every event stamped now.
 * Stamps the events of registrations and answers. 0 or -ENOMEM. */
int fbf_bv4_reply_build(fbf_bv4_session *s, cJSON *registrations, cJSON *answers);

#endif
