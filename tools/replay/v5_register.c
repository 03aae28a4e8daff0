/*
 * v5_register: Batsim 5's side of dynamic registration (RegisterProfileEvent,
 * RegisterJobEvent, FinishRegistrationEvent), as Batsim 5.0.0-rc2 reads
 * them (src/protocol.cpp from_register_*, server.cpp server_on_register_*),
 * with its texts where it has one.
 *
 *   RegisterProfileEvent  profile.id "workload!name" (the workload is what
 *       comes before the first '!'; Batsim creates it if new), never
 *       registered before in that workload, a dropped one included
 *       ("Invalid new profile registration: '...' already exists in the
 *       workload."); profile_type DelayProfile (the one type the replayer
 *       runs) with delay > 0 ("Invalid registration of profile '...':
 *       non-strictly-positive 'delay' field (...)")
 *   RegisterJobEvent  job_id "workload!name" (Batsim's JobIdentifier text),
 *       new in its workload, which Batsim creates if new ("Invalid new job
 *       registration: '...' already exists in the workload."); job.
 *       profile_id "workload!name" or a name of the job's workload, known
 *       and not dropped (Batsim's three texts); resource_request >= 1;
 *       walltime absent (none) or > 0. The job is submitted at the event's
 *       time; JobSubmittedEvent acknowledges it when the EDC asked for
 *       acknowledge_dynamic_jobs
 *   FinishRegistrationEvent  registration is over from this event on
 *
 * Stricter than Batsim 5.0.0-rc2, which takes them without a word: a
 * registration from an EDC that did not request dynamic_registration
 * (batprotocol: "Jobs registration from the EDC must be enabled") or after
 * its FinishRegistrationEvent ("dynamic job registrations are over"), and
 * an event without the member Batsim reads unchecked (a segmentation fault
 * there).
 */
#include "tools/replay/v5.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_arena.h" /* fbf_json_get */

#define fail fbf_replay_fail

static int need_open(fbf_replay *r, long ev, const char *type)
{
    if (!r->cfg.dyn_jobs)
        return fail(r, ev, type, NULL, "the EDC did not request dynamic_registration in its "
                    "EDCHelloEvent (batprotocol: \"Jobs registration from the EDC must be "
                    "enabled\")");
    if (!r->reg_open)
        return fail(r, ev, type, NULL, "registration after the EDC's FinishRegistrationEvent "
                    "(batprotocol: \"dynamic job registrations are over\")");
    return 0;
}

/* A string member Batsim reads unchecked; NULL after fail(). */
static const char *member(fbf_replay *r, long ev, const char *type, const cJSON *o,
                          const char *path)
{
    const char *dot = strrchr(path, '.');
    const cJSON *v = fbf_json_get(o, dot ? dot + 1 : path);
    if (cJSON_IsString(v))
        return v->valuestring;
    fail(r, ev, type, NULL, "event.%s is %s (Batsim 5.0.0-rc2 reads it unchecked)", path,
         v ? "not a string" : "missing");
    return NULL;
}

int fbf_v5_register_profile(fbf_replay *r, const cJSON *e, long ev)
{
    static const char T[] = "RegisterProfileEvent";
    if (need_open(r, ev, T))
        return -EPROTO;
    const cJSON *pa = fbf_json_get(e, "profile");
    if (!cJSON_IsObject(pa))
        return fail(r, ev, T, NULL, "event.profile is %s (Batsim 5.0.0-rc2 reads it unchecked)",
                    pa ? "not an object" : "missing");
    const char *id = member(r, ev, T, pa, "profile.id");
    if (!id)
        return -EPROTO;
    const char *bang = strchr(id, '!');
    if (!bang || bang == id || !bang[1])
        return fail(r, ev, T, NULL, "event.profile.id '%.80s' is not \"workload!name\" with "
                    "both parts non-empty (Batsim files a profile under the workload before "
                    "its first '!')", id);
    if (fbf_replay_profiles_ready(r) < 0)
        return -ENOMEM;
    size_t lw = (size_t)(bang - id);
    if (fbf_replay_profile_delay(r, id, lw, bang + 1) != FBF_REPLAY_PROFILE_NONE)
        return fail(r, ev, T, NULL, "Invalid new profile registration: '%s' already exists in "
                    "the workload.", id);
    const cJSON *ty = fbf_json_get(pa, "profile_type"), *p = fbf_json_get(pa, "profile");
    if (!cJSON_IsString(ty) || strcmp(ty->valuestring, "DelayProfile") != 0)
        return fail(r, ev, T, NULL, "profile %s: event.profile.profile_type is not "
                    "DelayProfile (the only profile type the replayer runs)", id);
    const cJSON *d = cJSON_IsObject(p) ? fbf_json_get(p, "delay") : NULL;
    if (!cJSON_IsObject(p) || (d && !cJSON_IsNumber(d)))
        return fail(r, ev, T, NULL, "profile %s: event.profile.profile is not a DelayProfile "
                    "(an object with a number delay)", id);
    double delay = d ? d->valuedouble : 0; /* flatbuffers' default */
    if (!(delay > 0) || isinf(delay))
        return fail(r, ev, T, NULL, "Invalid registration of profile '%s': non-strictly-"
                    "positive 'delay' field (%g)", id, delay);
    char wl[256];
    if (lw >= sizeof wl)
        return fail(r, ev, T, NULL, "event.profile.id: a workload name of %zu bytes (the "
                    "replayer's limit is %zu)", lw, sizeof wl - 1);
    memcpy(wl, id, lw);
    wl[lw] = '\0';
    return fbf_replay_profile_add(r, wl, bang + 1, delay);
}

/* Batsim's JobIdentifier: two '!'-separated parts (a run of '!' counts as
 * one), both non-empty. */
static bool job_identifier(const char *id)
{
    const char *bang = strchr(id, '!'), *end = bang;
    while (end && *end == '!')
        end++;
    return bang && bang != id && *end && !strchr(end, '!') && end == bang + 1;
}

int fbf_v5_register_job(fbf_replay *r, const cJSON *e, long ev, double at)
{
    static const char T[] = "RegisterJobEvent";
    if (need_open(r, ev, T))
        return -EPROTO;
    const char *id = member(r, ev, T, e, "job_id");
    if (!id)
        return -EPROTO;
    if (!job_identifier(id))
        return fail(r, ev, T, id, "Invalid string job identifier '%s': should be formatted as "
                    "two '!'-separated parts, the second one being any string without '!'. "
                    "Example: 'some_text!42'.", id);
    const cJSON *job = fbf_json_get(e, "job");
    if (!cJSON_IsObject(job))
        return fail(r, ev, T, id, "event.job is %s (Batsim 5.0.0-rc2 reads it unchecked)",
                    job ? "not an object" : "missing");
    const char *pid = member(r, ev, T, job, "job.profile_id");
    if (!pid)
        return -EPROTO;
    const cJSON *res = fbf_json_get(job, "resource_request");
    const cJSON *wt = fbf_json_get(job, "walltime");
    const cJSON *rigid = fbf_json_get(job, "rigid"), *extra = fbf_json_get(job, "extra_data");
    if (res && (!cJSON_IsNumber(res) || res->valuedouble != floor(res->valuedouble) ||
                res->valuedouble < 0 || res->valuedouble > UINT32_MAX))
        return fail(r, ev, T, id, "event.job.resource_request is not a uint32");
    if (!res || res->valuedouble < 1)
        return fail(r, ev, T, id, "event.job.resource_request is 0: fastbf-replay runs jobs of "
                    "1 resource or more");
    if (wt && (!cJSON_IsNumber(wt) || !(wt->valuedouble > 0) || isinf(wt->valuedouble)))
        return fail(r, ev, T, id, "event.job.walltime is not a number > 0 (absent: no "
                    "walltime)");
    if ((rigid && !cJSON_IsBool(rigid)) || (extra && !cJSON_IsString(extra)))
        return fail(r, ev, T, id, "event.job.%s is not a %s", rigid && !cJSON_IsBool(rigid)
                    ? "rigid" : "extra_data", rigid && !cJSON_IsBool(rigid) ? "boolean"
                                                                            : "string");
    if (fbf_replay_profiles_ready(r) < 0)
        return -ENOMEM;
    size_t lw = (size_t)(strchr(id, '!') - id);
    if (!fbf_replay_workload_known(r, id, lw)) {
        if (fbf_replay_workload_add(r, id, lw) < 0)
            return -ENOMEM;
    } else if (fbf_workload_find(r->wl, id) >= 0) {
        return fail(r, ev, T, id, "Invalid new job registration: '%s' already exists in the "
                    "workload.", id);
    }
    /* The profile: "workload!name", or a name in the job's workload. */
    const char *pbang = strchr(pid, '!');
    const char *pwl = pbang ? pid : id, *pname = pbang ? pbang + 1 : pid;
    size_t plw = pbang ? (size_t)(pbang - pid) : lw;
    double delay;
    if (pbang && !fbf_replay_workload_known(r, pid, plw))
        return fail(r, ev, T, id, "Invalid new job resgistration for '%s': the profile's "
                    "workload does not exist (%.*s)", id, (int)plw, pid);
    delay = fbf_replay_profile_delay(r, pwl, plw, pname);
    if (delay == FBF_REPLAY_PROFILE_NONE && pbang)
        return fail(r, ev, T, id, "Invalid new job registration for '%s': the profile does not "
                    "exist (%s).", id, pid);
    if (delay == FBF_REPLAY_PROFILE_NONE)
        return fail(r, ev, T, id, "Invalid new job registration for '%s': the associated "
                    "profile '%.*s!%s' does not exist", id, (int)lw, id, pid);
    char full[512];
    if (snprintf(full, sizeof full, "%.*s!%s", (int)plw, pwl, pname) >= (int)sizeof full)
        return fail(r, ev, T, id, "event.job.profile_id: longer than the replayer's %zu bytes",
                    sizeof full - 1);
    if (delay == FBF_REPLAY_PROFILE_DROPPED)
        return fail(r, ev, T, id, "Cannot get profile '%s': it existed some time ago but is no "
                    "longer accessible", full);
    /* Registered jobs keep the profile's full id: profiles of different
     * workloads may share a name. */
    return fbf_replay_job_register(r, ev, T, id, at, delay, wt ? wt->valuedouble : -1,
                                   (int64_t)res->valuedouble, full);
}

int fbf_v5_finish_registration(fbf_replay *r)
{
    r->reg_open = false;
    return 0;
}
