/*
 * bv4_fetch: Batsim's Redis mode on the scheduler's side, for the session
 * (io/bv4_session.c).
 *
 * In Redis mode Batsim keeps job descriptions in a Redis server and
 * JOB_SUBMITTED carries only job_id (the store's keys: io/bv4_redis.h).
 * fbf_bv4_fetch_prepare() runs over a checked message before any of its
 * events is applied:
 *   - a SIMULATION_BEGINS whose config enables Redis connects to the
 *     server it names. Both config forms are read: Batsim 4.2.1's flat
 *     `redis-enabled`, `redis-hostname`, `redis-port`, `redis-prefix` and
 *     the protocol text's `redis: {enabled, hostname, port, prefix}`;
 *     absent members default to Batsim's 127.0.0.1, 6379 and "default".
 *   - every JOB_SUBMITTED without `job` gets its description from Redis:
 *     one pipelined round of GETs for the whole message, each value parsed
 *     and checked as data.job would be (io/bv4_check.h).
 * fbf_bv4_fetch_next() then hands those descriptions out in event order,
 * as the session applies the events.
 *
 * Errors (-EPROTO unless said), one line naming the event (index and
 * type), for instance:
 *   event 0 (SIMULATION_BEGINS): data.config.redis-port: expected an
 *     integer in [1, 65535], got a string
 *   event 0 (SIMULATION_BEGINS): cannot connect to Redis at 127.0.0.1:1
 *     (host 127.0.0.1, port 1): Connection refused            -ECONNREFUSED
 *   event 2 (JOB_SUBMITTED): data.job: expected an object (fastbf needs
 *     job descriptions), got nothing                          Redis off
 *   event 2 (JOB_SUBMITTED): Redis key "default:job_w0!3" does not exist
 *     (job w0!3 has no description)
 *   event 2 (JOB_SUBMITTED): Redis key "default:job_w0!3": malformed JSON
 *     near byte 7
 *   event 2 (JOB_SUBMITTED): Redis key "default:job_w0!3": res: expected
 *     an integer, got a string
 *   event 2 (JOB_SUBMITTED): Redis at 127.0.0.1:6379: GET: Connection
 *     reset by peer                                           -EIO
 *
 * Ownership: create/destroy pair (NULL accepted); descriptions are owned
 * by the fetcher and live until the next prepare.
 */
#ifndef FBF_BV4_FETCH_H
#define FBF_BV4_FETCH_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

#include "engine/error.h"
#include "io/bv4_redis.h"

typedef struct fbf_bv4_fetch fbf_bv4_fetch;

fbf_bv4_fetch *fbf_bv4_fetch_create(void);
void fbf_bv4_fetch_destroy(fbf_bv4_fetch *f);

/* events: the `events` array of a message fbf_bv4_check() accepted. log:
 * where to say that Redis is on (NULL: silent). */
int fbf_bv4_fetch_prepare(fbf_bv4_fetch *f, const cJSON *events, FILE *log, fbf_error *err);

/* The description of the next JOB_SUBMITTED without `job` of the message
 * prepared last, or NULL when none is left. */
const cJSON *fbf_bv4_fetch_next(fbf_bv4_fetch *f);

/* The store, once SIMULATION_BEGINS enabled Redis (else NULL): for other
 * users of Batsim's keys (dynamic registration). */
fbf_bv4_redis *fbf_bv4_fetch_store(fbf_bv4_fetch *f);

#endif
