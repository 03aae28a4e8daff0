/*
 * bv4_begins: what Batsim v4's SIMULATION_BEGINS says to a scheduler: the
 * compute machines (compute_resources[].id, else nb_compute_resources,
 * else nb_resources), their initial states and pstates (io/bv4_power.h),
 * the profiles Batsim has, and its config, in both of its forms: the flat
 * one real Batsim 4.2.1 sends (dynamic-jobs-enabled, redis-enabled,
 * redis-hostname...) and the nested one of the protocol text
 * (job_submission.from_scheduler.enabled, redis: {enabled, hostname,
 * port, prefix}); a flat member wins.
 *
 * Read into the decoder's begins: dynamic_jobs, dynamic_acks,
 * profile_reuse (flat only; absent means no reuse, Batsim's default) and
 * the store (absent host, port, prefix: Batsim's 127.0.0.1, 6379,
 * "default").
 * Errors: -EPROTO (-EINVAL for pstates the machines contradict) naming
 * the member, e.g. "data.config.redis-port: expected an integer in [1,
 * 65535], got a string"; the decoder adds the event.
 */
#ifndef FBF_BV4_BEGINS_H
#define FBF_BV4_BEGINS_H

#include <cjson/cJSON.h>

#include "engine/error.h"
#include "io/bv4_decode.h"

int fbf_bv4_begins_read(const cJSON *data, fbf_bv4_decoder *d, fbf_error *err);

#endif
