/*
 * decide: the job decisions of a reply other than EXECUTE_JOB, judged as
 * Batsim 4.2.1 judges them, with its own abort texts (validate.c adds the
 * reply context in front):
 *
 *   REJECT_JOB        only a submitted job that is not allocated; it then
 *                     gets a REJECTED row in out_jobs.csv and no message
 *   KILL_JOB          a running job is killed at the decision's time: the
 *                     next message holds its JOB_COMPLETED (COMPLETED_KILLED,
 *                     return code -1) and then one JOB_KILLED listing every
 *                     id of the KILL_JOB, with a job_progress entry
 *                     {"profile_name", "progress"} per job really killed; a
 *                     job that completed before the kill but whose
 *                     JOB_COMPLETED is not sent yet is listed without
 *                     progress; a job already named by a KILL_JOB is skipped
 *                     (no JOB_KILLED at all when every id is); a waiting job
 *                     is refused
 *   SET_JOB_METADATA  no double quote; kept for the job's row unless the
 *                     row is already written (job completed or rejected)
 *   CHANGE_JOB_STATE  one of Batsim's six states; waiting -> RUNNING is
 *                     accepted and the job never runs (the run then ends in
 *                     a deadlock, as Batsim's does); every change that would
 *                     end a job aborts ("Job N did not complete": 4.2.1
 *                     writes the row before it stores the new state)
 *
 * A job whose end was told to the scheduler (JOB_COMPLETED sent, or a
 * rejection followed by one message) is deleted: every decision naming it
 * aborts with "Cannot get job '...': it does not exist".
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define fail fbf_replay_fail

static const char *const end_states[] = {
    [FBF_END_NONE] = "RUNNING",
    [FBF_END_SUCCESS] = "COMPLETED_SUCCESSFULLY",
    [FBF_END_WALLTIME] = "COMPLETED_WALLTIME_REACHED",
    [FBF_END_KILLED] = "COMPLETED_KILLED",
    [FBF_END_FAILED] = "COMPLETED_FAILED",
};

/* A running job whose end is due by at has completed in Batsim, though its
 * JOB_COMPLETED is still to be sent. */
static bool completed_by(const fbf_rjob *j, double at)
{
    return j->state == FBF_RJ_RUNNING && !(j->flags & FBF_RJF_FROZEN) && j->end <= at;
}

const char *fbf_replay_state_name(const fbf_replay *r, uint32_t job, double at)
{
    const fbf_rjob *j = &r->jobs[job];
    switch (j->state) {
    case FBF_RJ_PENDING: return "NOT_SUBMITTED";
    case FBF_RJ_WAITING: return "SUBMITTED";
    case FBF_RJ_REJECTED: return "REJECTED";
    case FBF_RJ_DONE: return end_states[j->end_kind];
    default: return completed_by(j, at) ? end_states[j->end_kind] : "RUNNING";
    }
}

static bool gone(const fbf_rjob *j)
{
    return (j->state == FBF_RJ_DONE || j->state == FBF_RJ_REJECTED) &&
           !(j->flags & FBF_RJF_UNSENT);
}

/* The job named by v (a string), or -1 after fail() with Batsim's text
 * for an unknown id (missing) or a deleted job. */
static int64_t batsim_job(fbf_replay *r, const cJSON *v, long ev, const char *type,
                          const char *field, const char *missing)
{
    if (!cJSON_IsString(v))
        return fail(r, ev, type, NULL, "field data.%s is missing or not a string", field), -1;
    int64_t j = fbf_workload_find(r->wl, v->valuestring);
    if (j < 0)
        return fail(r, ev, type, v->valuestring, missing, v->valuestring), -1;
    if (gone(&r->jobs[j]))
        return fail(r, ev, type, v->valuestring, "Cannot get job '%s': it does not exist",
                    v->valuestring), -1;
    return j;
}

/* --verbose: why the scheduler rejected the job, when the job tells. */
static void log_rejection(const fbf_replay *r, uint32_t ji, double at)
{
    const fbf_wl_job *w = &r->wl->jobs[ji];
    const char *meta = r->text + r->jobs[ji].meta;
    char t[40];
    fbf_jbuf_fmt(t, sizeof t, at);
    fprintf(r->cfg.log, "fastbf-replay: t=%s s: job %s rejected: ", t, w->id);
    if (w->res > (int64_t)r->cfg.nb_res)
        fprintf(r->cfg.log, "it asks for %lld resources, the platform has %u", (long long)w->res,
                r->cfg.nb_res);
    else if (w->res < 1)
        fprintf(r->cfg.log, "it asks for %lld resources", (long long)w->res);
    else
        fprintf(r->cfg.log, "no reason known to the replayer (it asks for %lld of %u "
                "resources%s)", (long long)w->res, r->cfg.nb_res,
                w->walltime < 0 ? ", no walltime" : "");
    if (*meta)
        fprintf(r->cfg.log, "; its metadata: \"%s\"", meta);
    fputc('\n', r->cfg.log);
}

void fbf_replay_reject_job_at(fbf_replay *r, uint32_t ji, double at)
{
    fbf_rjob *j = &r->jobs[ji];
    if (!fbf_replay_grow((void **)&r->unsent, &r->unsent_cap, r->nunsent + 1, sizeof *r->unsent))
        r->oom = true;
    else
        r->unsent[r->nunsent++] = ji;
    j->state = FBF_RJ_REJECTED;
    j->flags |= FBF_RJF_UNSENT;
    j->end = at; /* when Batsim writes its row */
    r->waiting--;
    r->rejected++;
    fbf_replay_note_row(r, ji);
    if (r->cfg.log)
        log_rejection(r, ji, at);
}

void fbf_replay_reject_job(fbf_replay *r, uint32_t ji)
{
    fbf_replay_reject_job_at(r, ji, r->req_now);
}

void fbf_replay_delete_unsent(fbf_replay *r)
{
    for (size_t i = 0; i < r->nunsent; i++) {
        r->jobs[r->unsent[i]].flags &= (uint8_t)~FBF_RJF_UNSENT;
        fbf_replay_drop_profile(r, r->unsent[i]);
    }
    r->nunsent = 0;
}

int fbf_replay_reject(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "REJECT_JOB";
    int64_t ji = batsim_job(r, fbf_json_get(data, "job_id"), ev, T, "job_id",
                            "Job '%s' does not exist.");
    if (ji < 0)
        return -EPROTO;
    if (r->jobs[ji].state != FBF_RJ_WAITING)
        return fail(r, ev, T, r->wl->jobs[ji].id, "Invalid rejection received: job '%s' cannot "
                    "be rejected at the present time. To be rejected, a job must be submitted "
                    "and not allocated yet.", r->wl->jobs[ji].id);
    fbf_replay_reject_job_at(r, (uint32_t)ji, at);
    return 0;
}

int fbf_replay_kill(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "KILL_JOB";
    const cJSON *ids = fbf_json_get(data, "job_ids");
    if (!cJSON_IsArray(ids))
        return fail(r, ev, T, NULL, "Invalid JSON message: the 'job_ids' value in the 'data' "
                    "value of event %ld (KILL_JOB) should be an array.", ev);
    if (!ids->child)
        return fail(r, ev, T, NULL, "Invalid JSON message: the 'job_ids' array in the 'data' "
                    "value of event %ld (KILL_JOB) should be non-empty.", ev);
    size_t n = (size_t)cJSON_GetArraySize(ids);
    if (!fbf_replay_grow((void **)&r->kill_items, &r->kill_items_cap, r->nkill_items + n,
                         sizeof *r->kill_items) ||
        !fbf_replay_grow((void **)&r->kills, &r->kills_cap, r->nkills + 1, sizeof *r->kills))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_kill *k = &r->kills[r->nkills];
    k->first = r->nkill_items;
    k->n = 0;
    uint32_t named = 0;
    for (const cJSON *v = ids->child; v; v = v->next) {
        int64_t ji = batsim_job(r, v, ev, T, "job_ids[]",
                                "Trying to kill job '%s' but it does not exist.");
        if (ji < 0)
            return -EPROTO;
        fbf_rjob *j = &r->jobs[ji];
        const fbf_wl_job *wj = &r->wl->jobs[ji];
        named++;
        /* Batsim lists every id in the JOB_KILLED, even one it skips. */
        double progress = NAN;
        if (!(j->flags & FBF_RJF_KILL_REQ)) {
            if (j->state == FBF_RJ_PENDING || j->state == FBF_RJ_WAITING)
                return fail(r, ev, T, wj->id, "Invalid KILL_JOB: job_id '%s' refers to a job "
                            "not being executed nor completed.", wj->id);
            if (j->state == FBF_RJ_REJECTED || (j->flags & FBF_RJF_FROZEN))
                return fail(r, ev, T, wj->id, "Bad kill: job %s has not been started", wj->id);
            j->flags |= FBF_RJF_KILL_REQ;
            if (!completed_by(j, at)) {
                /* Progress of a delay profile: the share of its delay done. */
                progress = wj->runtime > 0 ? (at - j->start) / wj->runtime : 0;
                if (progress < 0)
                    progress = 0;
                for (uint32_t g = 0; g < j->nranges; g++)
                    for (uint32_t id = r->ranges[j->ranges + g].lo;
                         id <= r->ranges[j->ranges + g].hi; id++)
                        r->owner[id] = FBF_NO_JOB;
                j->state = FBF_RJ_DONE;
                j->flags |= FBF_RJF_UNSENT;
                j->end = at;
                j->end_kind = FBF_END_KILLED;
                r->running--;
                r->done++;
                r->killed++;
            }
        } else {
            named--; /* already being killed: no killer for it */
        }
        r->kill_items[r->nkill_items++] = (fbf_kill_item){(uint32_t)ji, progress};
        k->n++;
    }
    if (named == 0) { /* every id was skipped: Batsim starts no killer */
        r->nkill_items = k->first;
        return 0;
    }
    fbf_replay_heap_push(r, at, FBF_EV_KILLED, (uint32_t)r->nkills, r->nkills);
    r->nkills++;
    return 0;
}

int fbf_replay_metadata(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "SET_JOB_METADATA";
    const cJSON *m = fbf_json_get(data, "metadata");
    if (!cJSON_IsString(m))
        return fail(r, ev, T, NULL, "Invalid JSON message: the 'metadata' value in the 'data' "
                    "value of event %ld (SET_JOB_METADATA) should be a string.", ev);
    if (strchr(m->valuestring, '"'))
        return fail(r, ev, T, NULL, "Invalid JSON message: the 'metadata' value in the 'data' "
                    "value of event %ld (SET_JOB_METADATA) should not contain double quotes "
                    "(got ###%.60s###)", ev, m->valuestring);
    int64_t ji = batsim_job(r, fbf_json_get(data, "job_id"), ev, T, "job_id",
                            "The job '%s' does not exist, cannot set its metadata");
    if (ji < 0)
        return -EPROTO;
    fbf_rjob *j = &r->jobs[ji];
    /* Batsim writes a job's row when it ends: metadata set later is kept
     * in memory only. */
    if (j->state == FBF_RJ_DONE || j->state == FBF_RJ_REJECTED || completed_by(j, at))
        return 0;
    size_t len = strlen(m->valuestring) + 1;
    if (!fbf_replay_grow((void **)&r->text, &r->text_cap, r->text_len + len, 1))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    memcpy(r->text + r->text_len, m->valuestring, len);
    j->meta = r->text_len;
    r->text_len += len;
    return 0;
}

int fbf_replay_change_state(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "CHANGE_JOB_STATE";
    static const char *const allowed[] = {"COMPLETED_KILLED", "COMPLETED_SUCCESSFULLY",
                                          "COMPLETED_WALLTIME_REACHED", "NOT_SUBMITTED",
                                          "REJECTED", "RUNNING"};
    const cJSON *jid = fbf_json_get(data, "job_id");
    if (!cJSON_IsString(jid))
        return fail(r, ev, T, NULL, "Invalid JSON message: in event %ld (CHANGE_JOB_STATE): "
                    "['data']['job_id'] should be a string", ev);
    const cJSON *st = fbf_json_get(data, "job_state");
    if (!cJSON_IsString(st))
        return fail(r, ev, T, NULL, "Invalid JSON message: in event %ld (CHANGE_JOB_STATE): "
                    "['data']['job_state'] should be a string", ev);
    const char *s = st->valuestring;
    size_t k = 0;
    while (k < 6 && strcmp(s, allowed[k]) != 0)
        k++;
    if (k == 6)
        return fail(r, ev, T, NULL, "Invalid JSON message: in event %ld (CHANGE_JOB_STATE): "
                    "['data']['job_state'] must be one of: {COMPLETED_KILLED, "
                    "COMPLETED_SUCCESSFULLY, COMPLETED_WALLTIME_REACHED, NOT_SUBMITTED, "
                    "REJECTED, RUNNING}", ev);
    int64_t ji = batsim_job(r, jid, ev, T, "job_id", "The job '%s' does not exist.");
    if (ji < 0)
        return -EPROTO;
    fbf_rjob *j = &r->jobs[ji];
    const char *id = r->wl->jobs[ji].id, *name = strchr(id, '!') + 1;
    const char *cur = fbf_replay_state_name(r, (uint32_t)ji, at);
    bool ends = strncmp(s, "COMPLETED_", 10) == 0;
    if (strcmp(cur, "SUBMITTED") == 0) {
        if (strcmp(s, "RUNNING") == 0) {
            /* Batsim counts it running and never runs it. */
            j->state = FBF_RJ_RUNNING;
            j->flags |= FBF_RJF_FROZEN;
            j->start = at;
            j->end = INFINITY;
            r->waiting--;
            r->running++;
            return 0;
        }
        if (strcmp(s, "REJECTED") == 0)
            return fail(r, ev, T, id, "Job %s did not complete", name);
        return fail(r, ev, T, id, "Invalid requested job state modification to '%s': can only "
                    "be running or rejected.", s);
    }
    if (strcmp(cur, "RUNNING") == 0) {
        if (ends)
            return fail(r, ev, T, id, "Job %s did not complete", name);
        return fail(r, ev, T, id, "Can only change the state of a running job to completed "
                    "(successfully, failed, and killed). State was RUNNING");
    }
    return fail(r, ev, T, id, "Can only change the state of a submitted or running job. State "
                "was %s", cur);
}
