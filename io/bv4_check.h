/*
 * bv4_check: validation of Batsim v4 requests against the protocol's
 * constraints, before anything is applied.
 *
 * fbf_bv4_check() parses the text and checks the envelope (`now` a finite
 * number, `events` an array), each event (`timestamp` a number <= now and
 * not below the previous one, `type` a known Batsim-to-scheduler event,
 * `data` an object) and each event's mandatory fields and their types.
 * JOB_SUBMITTED without `job` (Batsim's Redis form) passes here: whether
 * Redis is on is the session's business. Every failure is -EPROTO with one
 * line naming the event (index and type) and the field, e.g.
 *   event 2 (JOB_SUBMITTED): data.job.res: expected an integer, got a string
 *
 * Ownership: on success *root is a tree inside the given arena, valid
 * until its next parse (never cJSON_Delete() it); on failure nothing is
 * returned.
 */
#ifndef FBF_BV4_CHECK_H
#define FBF_BV4_CHECK_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/json_arena.h"

/* The Batsim-to-scheduler events. fbf_bv4_check() records each event's
 * kind in its "type" node, so that later passes need no string compare. */
typedef enum fbf_bv4_event {
    FBF_BV4_JOB_SUBMITTED,
    FBF_BV4_JOB_COMPLETED,
    FBF_BV4_REQUESTED_CALL,
    FBF_BV4_NOTIFY,
    FBF_BV4_JOB_KILLED,
    FBF_BV4_RESOURCE_STATE_CHANGED,
    FBF_BV4_QUERY,
    FBF_BV4_ANSWER,
    FBF_BV4_SIMULATION_BEGINS,
    FBF_BV4_SIMULATION_ENDS,
} fbf_bv4_event;

/* The kind of an event of a checked message. */
static inline fbf_bv4_event fbf_bv4_event_of(const cJSON *ev)
{
    return (fbf_bv4_event)cJSON_GetObjectItemCaseSensitive(ev, "type")->valueint;
}

/* begun: whether SIMULATION_BEGINS was already received (it must come
 * first, and only once). */
int fbf_bv4_check(fbf_json_arena *arena, const char *text, size_t len, bool begun, cJSON **root,
                  fbf_error *err);

/* The same checks one event at a time, for a message read as a stream
 * (io/json_stream.h): init with the message's now, check each event in
 * order (its kind is recorded as fbf_bv4_check() does), then end. */
typedef struct fbf_bv4_checker {
    double now, prev;
    bool begun, ended;
    int index;
} fbf_bv4_checker;
void fbf_bv4_checker_init(fbf_bv4_checker *k, double now, bool begun);
int fbf_bv4_check_event(fbf_bv4_checker *k, const cJSON *ev, fbf_error *err);
int fbf_bv4_checker_end(const fbf_bv4_checker *k, fbf_error *err);
/* The message's now: a finite number. */
int fbf_bv4_check_now(const cJSON *now, fbf_error *err);

/* Checks a job description object as data.job of JOB_SUBMITTED is
 * checked (res an integer, walltime and subtime numbers, id a string equal
 * to id when both are given), for descriptions read from elsewhere
 * (Redis). -EPROTO with the field alone, e.g. "res: expected an integer,
 * got a string": the caller says where the object came from. */
int fbf_bv4_check_job(const cJSON *job, const char *id, fbf_error *err);

/* The compute resources of a checked SIMULATION_BEGINS data object: the
 * ids of compute_resources when given, else 0..nb_compute_resources-1
 * (else 0..nb_resources-1). */
int fbf_bv4_compute_set(const cJSON *data, fbf_idset *out, fbf_error *err);

/* Appends one ANSWER event skeleton per request of a checked QUERY data
 * object to answers; the estimate itself is filled in after the pass. */
int fbf_bv4_queue_answers(const cJSON *data, cJSON *answers, fbf_error *err);

#endif
