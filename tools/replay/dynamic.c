/*
 * dynamic: Batsim's side of dynamic job registration and of the
 * estimate_waiting_time queries (time model and invariants in replay.h).
 *
 * Registration checks, as Batsim applies them (every failure stops the run
 * with exit code 2 and names the message, event, job and field):
 *   - dynamic jobs must be enabled (--dynamic-jobs) and registration open:
 *     not after NOTIFY registration_finished unless continue_registration
 *     re-opened it;
 *   REGISTER_PROFILE: workload_name and profile_name non-empty strings;
 *     profile an object of type "delay" (the only one the replayer runs)
 *     with a number delay >= 0; the pair must not exist yet (registered, or
 *     a profile of the input workload under one of its workload names);
 *   REGISTER_JOB: job_id a string "workload!name" (both parts non-empty),
 *     new; job an object whose id, when given, equals job_id; profile a
 *     string naming a profile of the job's workload (registered, or from
 *     the input when the workload is one SIMULATION_BEGINS listed); res an
 *     integer >= 1; walltime, when given, -1 or > 0; subtime, when given, a
 *     number >= 0 (Batsim submits the job now whatever it says).
 *   NOTIFY registration_finished needs open registration,
 *     continue_registration finished registration, both dynamic jobs.
 * Answers: data.estimate_waiting_time an object with job_id, a job asked
 * about in this request and not answered yet, and estimated_waiting_time a
 * number >= 0 or -1 (unknown); any other answer is refused.
 *
 * Profile lookups are linear in the registered profiles: registration is
 * for workloads built by a scheduler, not for million-profile traces.
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <math.h>
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

void fbf_replay_dynamic_fini(fbf_replay *r)
{
    for (size_t i = 0; i < r->nrprof; i++) {
        free(r->rprof[i].workload);
        free(r->rprof[i].name);
    }
    free(r->rprof);
    free(r->queries);
}

/* The delay of profile name in workload wl (len bytes), or -1 if none. */
static double find_profile(const fbf_replay *r, const char *wl, size_t len, const char *name)
{
    for (size_t i = 0; i < r->nrprof; i++)
        if (strlen(r->rprof[i].workload) == len && memcmp(r->rprof[i].workload, wl, len) == 0 &&
            strcmp(r->rprof[i].name, name) == 0)
            return r->rprof[i].delay;
    bool listed = false;
    for (size_t k = 0; k < r->nwl_names && !listed; k++)
        listed = strlen(r->wl_names[k]) == len && memcmp(r->wl_names[k], wl, len) == 0;
    if (!listed)
        return -1;
    for (size_t p = 0; p < r->nb_static_profiles; p++)
        if (strcmp(r->wl->profiles[p].name, name) == 0)
            return r->wl->profiles[p].delay;
    return -1;
}

static int need_open(fbf_replay *r, long ev, const char *type, const char *job)
{
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, type, job, "dynamic jobs are disabled (the replayer runs "
                               "with them only under --dynamic-jobs)");
    if (!r->reg_open)
        return fbf_replay_fail(r, ev, type, job, "registration is finished (NOTIFY "
                               "registration_finished) and was not re-opened with NOTIFY "
                               "continue_registration");
    return 0;
}

static bool nonempty_string(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring[0];
}

int fbf_replay_register_profile(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "REGISTER_PROFILE";
    if (need_open(r, ev, T, NULL))
        return -EPROTO;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(data, "workload_name");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(data, "profile_name");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(data, "profile");
    if (!nonempty_string(wl))
        return fbf_replay_fail(r, ev, T, NULL, "field data.workload_name is missing or not a "
                               "non-empty string");
    if (!nonempty_string(name))
        return fbf_replay_fail(r, ev, T, NULL, "field data.profile_name is missing or not a "
                               "non-empty string");
    if (!cJSON_IsObject(prof))
        return fbf_replay_fail(r, ev, T, NULL, "field data.profile is missing or not an object");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(prof, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.type is not "
                               "\"delay\" (the only profile type the replayer runs)",
                               wl->valuestring, name->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(prof, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.delay is missing "
                               "or not a number >= 0", wl->valuestring, name->valuestring);
    if (find_profile(r, wl->valuestring, strlen(wl->valuestring), name->valuestring) >= 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s of workload %s already exists",
                               name->valuestring, wl->valuestring);
    if (!fbf_replay_grow((void **)&r->rprof, &r->rprof_cap, r->nrprof + 1, sizeof *r->rprof))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_rprofile *p = &r->rprof[r->nrprof];
    p->workload = strdup(wl->valuestring);
    p->name = strdup(name->valuestring);
    p->delay = delay->valuedouble;
    r->nrprof++;
    if (!p->workload || !p->name)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return 0;
}

int fbf_replay_register_job(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "REGISTER_JOB";
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(data, "job_id");
    const char *id = cJSON_IsString(jid) ? jid->valuestring : NULL;
    if (need_open(r, ev, T, id))
        return -EPROTO;
    if (!id)
        return fbf_replay_fail(r, ev, T, NULL, "field data.job_id is missing or not a string");
    const char *bang = strchr(id, '!');
    if (!bang || bang == id || !bang[1])
        return fbf_replay_fail(r, ev, T, id, "data.job_id is not of the form workload!name");
    if (fbf_workload_find(r->wl, id) >= 0)
        return fbf_replay_fail(r, ev, T, id, "job id already exists (duplicate job ids are "
                               "forbidden)");
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(data, "job");
    if (!cJSON_IsObject(job))
        return fbf_replay_fail(r, ev, T, id, "field data.job is missing or not an object");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job, "id");
    if (v && (!cJSON_IsString(v) || strcmp(v->valuestring, id) != 0))
        return fbf_replay_fail(r, ev, T, id, "data.job.id differs from data.job_id");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(job, "profile");
    if (!cJSON_IsString(prof))
        return fbf_replay_fail(r, ev, T, id, "field data.job.profile is missing or not a string");
    double delay = find_profile(r, id, (size_t)(bang - id), prof->valuestring);
    if (delay < 0)
        return fbf_replay_fail(r, ev, T, id, "unknown profile '%.60s' in workload %.*s "
                               "(register it first with REGISTER_PROFILE)", prof->valuestring,
                               (int)(bang - id), id);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(job, "res");
    if (!cJSON_IsNumber(res) || res->valuedouble != floor(res->valuedouble) ||
        !(res->valuedouble >= 1) || res->valuedouble > 1e15)
        return fbf_replay_fail(r, ev, T, id, "field data.job.res is missing or not an integer "
                               ">= 1");
    double walltime = -1;
    v = cJSON_GetObjectItemCaseSensitive(job, "walltime");
    if (v) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble == -1 || v->valuedouble > 0) ||
            isinf(v->valuedouble))
            return fbf_replay_fail(r, ev, T, id, "data.job.walltime is not -1 nor a number > 0");
        walltime = v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(job, "subtime");
    if (v && (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || isinf(v->valuedouble)))
        return fbf_replay_fail(r, ev, T, id, "data.job.subtime is not a number >= 0");
    if (!fbf_replay_grow((void **)&r->jobs, &r->jobs_cap, r->wl->nb_jobs + 1, sizeof *r->jobs))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_error werr;
    int rc = fbf_workload_add_job_profile(r->wl, id, at, delay, walltime,
                                          (int64_t)res->valuedouble, prof->valuestring, &werr);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return fbf_replay_fail(r, ev, T, id, "%s", werr.text);
    uint32_t ji = (uint32_t)(r->wl->nb_jobs - 1);
    r->jobs[ji] = (fbf_rjob){.state = FBF_RJ_WAITING};
    r->submitted++;
    r->waiting++;
    r->registered++;
    if (r->cfg.dyn_acks)
        fbf_replay_heap_push(r, at, FBF_EV_ACK, ji, r->seq++);
    return 0;
}

int fbf_replay_notify(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "NOTIFY";
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "type");
    if (!cJSON_IsString(type))
        return fbf_replay_fail(r, ev, T, NULL, "field data.type is missing or not a string");
    bool fin = strcmp(type->valuestring, "registration_finished") == 0;
    bool cont = strcmp(type->valuestring, "continue_registration") == 0;
    if (!fin && !cont)
        return 0; /* nothing else the replayer acts on */
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, T, NULL, "%s while dynamic jobs are disabled (the "
                               "replayer runs with them only under --dynamic-jobs)",
                               type->valuestring);
    if (fin && !r->reg_open)
        return fbf_replay_fail(r, ev, T, NULL, "registration_finished while registration is "
                               "already finished");
    if (cont && r->reg_open)
        return fbf_replay_fail(r, ev, T, NULL, "continue_registration while registration is "
                               "open (it follows a registration_finished)");
    r->reg_open = cont;
    r->continues += cont;
    return 0;
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
