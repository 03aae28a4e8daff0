/*
 * job_json: a job's description in Batsim's JSON, as every Batsim
 * protocol carries it (v4's data.job, the value of the store's job_<id>
 * key in v4's Redis mode and in the v2 text protocol).
 *
 * fbf_job_json_read() checks and reads, each member once: res an integer
 * >= 1 as JSON numbers go (Batsim prints workload integers as integers),
 * walltime and subtime numbers when present, priority and user as they
 * come (see fbf_job_desc), id, when both it and the
 * expected id are given, a string equal to it, or with number_id a number
 * equal to the part after '!' too (the v2 protocol's store holds the
 * job's number within its workload: 3 for "w0!3"). Errors are -EPROTO
 * with one line naming the member after `where` ("data.job.res: expected
 * an integer, got a string"; where "" gives "res: ...").
 */
#ifndef FBF_JOB_JSON_H
#define FBF_JOB_JSON_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "engine/error.h"

/* res >= 1; walltime -1 for none; subtime NAN for "the event's time".
 * What orders and estimates read besides (scheduling-semantics.md D9,
 * D10): priority, the `priority` member when it is a number, else 0;
 * user, the `user` member (borrowed from the JSON read; NULL when absent
 * or null); delay, the forwarded delay profile's delay (NAN: none; the
 * codec fills it, fbf_job_json_read() sets NAN). */
typedef struct fbf_job_desc {
    int64_t res;
    double walltime, subtime;
    double priority;
    const cJSON *user;
    double delay;
} fbf_job_desc;

int fbf_job_json_read(const cJSON *job, const char *where, const char *id, bool number_id,
                      fbf_job_desc *out, fbf_error *err);

/* What kind of JSON value v is, for messages: "a string", "nothing"... */
const char *fbf_job_json_kind(const cJSON *v);

/* A JSON number with an integral value that a double holds exactly. */
bool fbf_job_json_is_int(const cJSON *v);

#endif
