/*
 * dynamic: Batsim's side of dynamic job registration and of the
 * estimate_waiting_time queries (time model and invariants in replay.h).
 *
 * Registration, as Batsim 4.2.1 checks it, with its abort texts (each
 * stops the run with exit code 2):
 *   - dynamic jobs must be enabled (--dynamic-jobs) and registration open
 *     as it was before the reply: a NOTIFY registration_finished or
 *     continue_registration takes effect after the reply that holds it
 *     (Batsim sets a flag then; a repeated NOTIFY is no error), and any
 *     other NOTIFY type aborts;
 *   REGISTER_PROFILE: the (workload, name) pair must never have existed
 *     (a dropped profile's name stays taken); it creates the workload; a
 *     delay profile only (the one type the replayer runs); also in Redis
 *     mode, where Batsim does not read profiles from the store;
 *   REGISTER_JOB: job_id "workload!name"; data.job given without Redis,
 *     absent with Redis (then read from <prefix>:job_<id>); the workload
 *     must exist (listed in SIMULATION_BEGINS or made by REGISTER_PROFILE);
 *     the id new; then Batsim's Job::from_json: id, subtime (mandatory, then
 *     ignored: the job is submitted now), walltime, res, and a profile of
 *     the workload that was not dropped.
 * Profiles: without --profile-reuse, Batsim drops a job's profile when it
 *   deletes the job (once its JOB_COMPLETED is out, or the message after
 *   its rejection), for the input's workloads too; jobs queued with it
 *   still run, but no REGISTER_JOB can name it again.
 * Answers: data.estimate_waiting_time an object with job_id, a job asked
 * about in this request and not answered yet, and estimated_waiting_time a
 * number >= 0 or -1 (unknown); any other answer is refused.
 *
 * Costs: a registration or an answer costs O(1) expected (hashes), however
 * many jobs and profiles were registered before.
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The workload names jobs carry before their '!': wl->name first, then any
 * other prefix a JSON workload used (a Batsim id names its workload), up to
 * FBF_REPLAY_MAX_WORKLOADS. Every listed workload gets the same profiles,
 * since the replayer's profiles are per file, not per prefix. */
size_t fbf_replay_workload_names(const fbf_workload *wl, char names[][64])
{
    size_t n = 1;
    snprintf(names[0], 64, "%s", wl->name);
    for (size_t i = 0; i < wl->nb_jobs && n < FBF_REPLAY_MAX_WORKLOADS; i++) {
        const char *id = wl->jobs[i].id, *bang = strchr(id, '!');
        size_t len = (size_t)(bang - id), k = 0;
        if (len >= 64)
            continue;
        while (k < n && (strncmp(names[k], id, len) != 0 || names[k][len] != '\0'))
            k++;
        if (k == n) {
            memcpy(names[n], id, len);
            names[n++][len] = '\0';
        }
    }
    return n;
}

/* Batsim checks a registration against the state before the reply: a
 * NOTIFY of the same reply takes effect after it. */
static int need_open(fbf_replay *r, long ev, const char *type, const char *what)
{
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, type, NULL, "Invalid JSON message: dynamic %s "
                               "registration received but the option seems disabled... It can "
                               "be activated with the '--enable-dynamic-jobs' command line "
                               "option.", what);
    if (!r->reg_open)
        return fbf_replay_fail(r, ev, type, NULL, "Invalid JSON message: dynamic %s "
                               "registration received but the option has been disabled (a "
                               "registration_finished message have already been received)", what);
    return 0;
}

int fbf_replay_register_profile(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "REGISTER_PROFILE";
    if (need_open(r, ev, T, "profile"))
        return -EPROTO;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(data, "workload_name");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(data, "profile_name");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(data, "profile");
    if (!cJSON_IsString(wl))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['workload_name'] should be a "
                               "string", ev);
    if (!cJSON_IsString(name))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['profile_name'] should be a "
                               "string", ev);
    if (!cJSON_IsObject(prof))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['profile'] should be an object", ev);
    if (!wl->valuestring[0] || !name->valuestring[0] || strchr(wl->valuestring, '!'))
        return fbf_replay_fail(r, ev, T, NULL, "data.workload_name and data.profile_name must "
                               "be non-empty (and the workload name without '!') for "
                               "fastbf-replay");
    if (fbf_replay_profiles_ready(r) < 0)
        return -ENOMEM;
    size_t lw = strlen(wl->valuestring);
    if (fbf_replay_profile_delay(r, wl->valuestring, lw, name->valuestring) != -1)
        return fbf_replay_fail(r, ev, T, NULL, "Invalid new profile registration: profile '%s' "
                               "already existed in workload '%s'", name->valuestring,
                               wl->valuestring);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(prof, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.type is not "
                               "\"delay\" (the only profile type the replayer runs)",
                               wl->valuestring, name->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(prof, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.delay is missing "
                               "or not a number >= 0", wl->valuestring, name->valuestring);
    return fbf_replay_profile_add(r, wl->valuestring, name->valuestring, delay->valuedouble);
}

#define JOB_PREFIX "Invalid JSON job submitted by the scheduler"

/* Batsim's reading of a registered job's description (Job::from_json),
 * whose texts it keeps, then the registration. */
static int register_desc(fbf_replay *r, long ev, const char *id, const cJSON *job, double at)
{
    static const char T[] = "REGISTER_JOB";
    const char *bang = strchr(id, '!');
    size_t lw = (size_t)(bang - id);
    if (!cJSON_IsObject(job))
        return fbf_replay_fail(r, ev, T, id, "%s: one job is not an object", JOB_PREFIX);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job, "id");
    if (!v)
        return fbf_replay_fail(r, ev, T, id, "%s: one job has no 'id' field", JOB_PREFIX);
    bool is_int = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
                  fabs(v->valuedouble) <= INT32_MAX;
    if (!cJSON_IsString(v) && !is_int)
        return fbf_replay_fail(r, ev, T, id, "%s: on job id field is invalid, it should be a "
                               "string or an integer", JOB_PREFIX);
    /* Batsim prefixes an id that lacks the workload's name, then wants
     * the job_id back. */
    char num[16];
    if (is_int)
        snprintf(num, sizeof num, "%d", (int)v->valuedouble);
    const char *s = is_int ? num : v->valuestring;
    char wl[256];
    snprintf(wl, sizeof wl, "%.*s", (int)lw, id);
    bool same = strstr(s, wl) ? strcmp(s, id) == 0 : strcmp(s, bang + 1) == 0;
    if (!same)
        return fbf_replay_fail(r, ev, T, id, "Internal error (data.job.id '%.60s' names another "
                               "job than data.job_id)", s);
    v = cJSON_GetObjectItemCaseSensitive(job, "subtime");
    if (!v)
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has no 'subtime' field", JOB_PREFIX,
                               id);
    if (!cJSON_IsNumber(v))
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has a non-number 'subtime' field",
                               JOB_PREFIX, id);
    double walltime = -1;
    v = cJSON_GetObjectItemCaseSensitive(job, "walltime");
    if (v && !cJSON_IsNumber(v))
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-number 'walltime' field",
                               JOB_PREFIX, id);
    if (v)
        walltime = v->valuedouble;
    if (!(walltime == -1 || walltime > 0) || isinf(walltime))
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has an invalid walltime (%g). It "
                               "should either be -1 (no walltime) or a strictly positive number.",
                               JOB_PREFIX, id, walltime);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(job, "res");
    if (!res)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has no 'res' field", JOB_PREFIX, id);
    if (!cJSON_IsNumber(res) || res->valuedouble != floor(res->valuedouble) ||
        fabs(res->valuedouble) > INT32_MAX)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-number 'res' field",
                               JOB_PREFIX, id);
    if (res->valuedouble < 0)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a negative 'res' field (%d)",
                               JOB_PREFIX, id, (int)res->valuedouble);
    if (res->valuedouble < 1)
        return fbf_replay_fail(r, ev, T, id, "data.job.res is 0: fastbf-replay runs jobs of "
                               "1 resource or more");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(job, "profile");
    if (!prof)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has no 'profile' field", JOB_PREFIX, id);
    if (!cJSON_IsString(prof))
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-string 'profile' field",
                               JOB_PREFIX, id);
    if (fbf_replay_profiles_ready(r) < 0)
        return -ENOMEM;
    double delay = fbf_replay_profile_delay(r, id, lw, prof->valuestring);
    if (delay == -1)
        return fbf_replay_fail(r, ev, T, id, "%s: the profile %s for job %s does not exist",
                               JOB_PREFIX, prof->valuestring, id);
    if (delay == FBF_REPLAY_PROFILE_DROPPED)
        return fbf_replay_fail(r, ev, T, id, "Cannot get profile '%s': it existed some time ago "
                               "but is no longer accessible", prof->valuestring);
    return fbf_replay_job_register(r, ev, T, id, at, delay, walltime, (int64_t)res->valuedouble,
                                   prof->valuestring);
}

int fbf_replay_job_register(fbf_replay *r, long ev, const char *type, const char *id, double at,
                            double delay, double walltime, int64_t res, const char *profile)
{
    if (!fbf_replay_grow((void **)&r->jobs, &r->jobs_cap, r->wl->nb_jobs + 1, sizeof *r->jobs))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_error werr;
    int rc = fbf_workload_add_job_profile(r->wl, id, at, delay, walltime, res, profile, &werr);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return fbf_replay_fail(r, ev, type, id, "%s", werr.text);
    uint32_t ji = (uint32_t)(r->wl->nb_jobs - 1);
    r->jobs[ji] = (fbf_rjob){.state = FBF_RJ_WAITING};
    r->submitted++;
    r->waiting++;
    r->registered++;
    if (r->cfg.dyn_acks)
        fbf_replay_heap_push(r, at, FBF_EV_ACK, ji, r->seq++);
    return 0;
}

int fbf_replay_register_job(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "REGISTER_JOB";
    if (need_open(r, ev, T, "job"))
        return -EPROTO;
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(data, "job_id");
    if (!cJSON_IsString(jid))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_JOB): ['data']['job_id'] should be a string", ev);
    const char *id = jid->valuestring;
    /* Batsim splits job_id at '!' into exactly two parts (a run of '!'
     * counts as one). */
    const char *bang = strchr(id, '!'), *end = bang;
    while (end && *end == '!')
        end++;
    if (!bang || bang == id || !*end || strchr(end, '!') || end != bang + 1)
        return fbf_replay_fail(r, ev, T, id, "Invalid string job identifier '%s': should be "
                               "formatted as two '!'-separated parts, the second one being any "
                               "string without '!'. Example: 'some_text!42'.", id);
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(data, "job");
    if (job && r->cfg.redis)
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "'job' object is given but redis seems enabled...", ev);
    if (job && !cJSON_IsObject(job))
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "['data']['job'] should be an object", ev);
    if (!job && !r->cfg.redis)
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "['data']['job'] is unset but redis seems disabled...", ev);
    cJSON *stored = NULL;
    if (!job) { /* Redis mode: Batsim reads the description from the store */
        const char *text;
        size_t len;
        fbf_error e;
        char key[300];
        fbf_store_key(r->cfg.redis, FBF_STORE_JOB, id, key, sizeof key);
        if (fbf_store_get_job(r->cfg.redis, id, &text, &len, &e) < 0)
            return fbf_replay_fail(r, ev, T, id, "reading the job's description: %s", e.text);
        if (!text)
            return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\" does not exist (with Redis, "
                                   "the job's description goes to the store before "
                                   "REGISTER_JOB)", key);
        stored = cJSON_ParseWithLength(text, len);
        if (!stored)
            return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\": malformed JSON", key);
        job = stored;
    }
    int rc;
    if (!fbf_replay_workload_known(r, id, (size_t)(bang - id)))
        rc = fbf_replay_fail(r, ev, T, id, "Internal error: Workload '%.*s' should exist.",
                             (int)(bang - id), id);
    else if (fbf_workload_find(r->wl, id) >= 0)
        rc = fbf_replay_fail(r, ev, T, id, "Cannot register new job '%s', it already exists in "
                             "the workload.", id);
    else
        rc = register_desc(r, ev, id, job, at);
    cJSON_Delete(stored);
    return rc;
}

int fbf_replay_notify(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "NOTIFY";
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "type");
    if (!cJSON_IsString(type))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld (NOTIFY): "
                               "['data']['type'] should be a string", ev);
    bool fin = strcmp(type->valuestring, "registration_finished") == 0;
    bool cont = strcmp(type->valuestring, "continue_registration") == 0;
    if (!fin && !cont)
        return fbf_replay_fail(r, ev, T, NULL, "Unknown NOTIFY type received ('%s').",
                               type->valuestring);
    /* Batsim only sets a flag, after the reply: a repeated or useless
     * NOTIFY is no error. */
    r->reg_next = cont;
    return 0;
}

void fbf_replay_notify_apply(fbf_replay *r)
{
    if (r->reg_next < 0)
        return;
    bool open = r->cfg.dyn_jobs && r->reg_next;
    r->continues += open && !r->reg_open;
    r->reg_open = open;
    r->reg_next = -1;
}

void fbf_replay_emit_queries(fbf_replay *r, size_t *count)
{
    fbf_jbuf *b = &r->msg;
    for (size_t i = 0; i < r->nqueries; i++) {
        uint32_t ji = r->queries[i];
        const fbf_wl_job *wj = &r->wl->jobs[ji];
        fbf_replay_ev_open(r, count, r->req_now, "QUERY");
        fbf_jbuf_lit(b, "{\"requests\":{\"estimate_waiting_time\":{\"job_id\":");
        fbf_jbuf_str(b, wj->id);
        fbf_jbuf_lit(b, ",\"job\":{\"res\":");
        fbf_jbuf_int(b, wj->res);
        fbf_jbuf_lit(b, ",\"walltime\":");
        fbf_jbuf_num(b, wj->walltime);
        fbf_jbuf_lit(b, "}}}}}");
        r->jobs[ji].pred = FBF_PRED_PENDING;
    }
}

int fbf_replay_answer(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "ANSWER";
    const cJSON *est = cJSON_GetObjectItemCaseSensitive(data, "estimate_waiting_time");
    if (!cJSON_IsObject(est) || cJSON_GetArraySize(data) != 1)
        return fbf_replay_fail(r, ev, T, NULL, "data must hold exactly one object "
                               "estimate_waiting_time (the only query the replayer asks)");
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(est, "job_id");
    if (!cJSON_IsString(jid))
        return fbf_replay_fail(r, ev, T, NULL, "field data.estimate_waiting_time.job_id is "
                               "missing or not a string");
    int64_t ji = fbf_workload_find(r->wl, jid->valuestring);
    if (ji < 0 || r->jobs[ji].pred != FBF_PRED_PENDING)
        return fbf_replay_fail(r, ev, T, jid->valuestring, "no QUERY about this job is waiting "
                               "for an answer (%s)", ji < 0 ? "unknown job"
                               : r->jobs[ji].pred == FBF_PRED_NONE ? "never asked"
                                                                    : "already answered");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(est, "estimated_waiting_time");
    if (!cJSON_IsNumber(w) || !(w->valuedouble >= 0 || w->valuedouble == -1) ||
        isinf(w->valuedouble))
        return fbf_replay_fail(r, ev, T, jid->valuestring, "data.estimate_waiting_time."
                               "estimated_waiting_time is missing or not a number >= 0 or -1");
    fbf_rjob *j = &r->jobs[ji];
    if (w->valuedouble < 0) {
        j->pred = FBF_PRED_UNKNOWN;
        r->answered_unknown++;
    } else {
        j->pred = FBF_PRED_VALUE;
        j->pred_start = r->req_now + w->valuedouble;
    }
    r->answered++;
    return 0;
}

int fbf_replay_answers_done(fbf_replay *r)
{
    for (size_t i = 0; i < r->nqueries; i++) {
        uint32_t ji = r->queries[i];
        if (r->jobs[ji].pred == FBF_PRED_PENDING)
            return fbf_replay_fail(r, -1, NULL, NULL, "no ANSWER to the QUERY "
                                   "estimate_waiting_time about job %s (the request asked %zu)",
                                   r->wl->jobs[ji].id, r->nqueries);
    }
    r->nqueries = 0;
    return 0;
}

void fbf_replay_dynamic_fini(fbf_replay *r)
{
    fbf_replay_profiles_fini(r);
    free(r->queries);
}
