/*
 * v5_message: the events Batsim 5 sends an EDC, as batprotocol JSON (the
 * shapes below; v5.h for the message around them). message.c decides which
 * events a message holds and in which order, as for the v4 replay, and
 * changes the state; this file writes their text.
 *
 *   SimulationBeginsEvent  host_number, computation_host_number,
 *       computation_hosts [{id, name "r<id>", pstate, pstate_count,
 *       state "IDLE", properties [{key, value}], zone_properties [],
 *       core_count 1, computation_speed [one per pstate]}],
 *       storage_host_number 0, storage_hosts [],
 *       batsim_execution_context_json (a string holding
 *       {"socket_endpoint","export_prefix"}), batsim_arguments [argv],
 *       workloads [{name, filename}], and profiles [ProfileAndId] when the
 *       EDC asked for forward_profiles_on_simulation_begins
 *   JobSubmittedEvent  job_id, job {resource_request, walltime (-1: none),
 *       extra_data "", rigid true, profile_id "<workload>!<profile>"},
 *       submission_time, and profile (a ProfileAndId) when the EDC asked
 *       for forward_profiles_on_job_submission
 *   JobCompletedEvent  job_id, state (COMPLETED_SUCCESSFULLY,
 *       COMPLETED_WALLTIME_REACHED, COMPLETED_KILLED), return_code (0 on
 *       success, else Batsim's -1 in the schema's uint32: 4294967295)
 *   JobsKilledEvent  job_ids (the ids of the KillJobsEvent not already
 *       being killed), progresses [{job_id, wrapper {kill_progress_type
 *       "KillProgressAtomicProfile", kill_progress {profile_id,
 *       progress}}}] for the jobs really killed, and profiles [ProfileAndId]
 *       of those with forward_profiles_on_jobs_killed; each really killed
 *       job's JobCompletedEvent (COMPLETED_KILLED) comes first
 *   AllStaticJobsHaveBeenSubmittedEvent,
 *   AllStaticExternalEventsHaveBeenInjectedEvent, SimulationEndsEvent  {}
 * A ProfileAndId is {id, profile_type "DelayProfile", profile {delay}}.
 */
#include "tools/replay/v5.h"
#include "tools/replay/machines.h"

#include <math.h>
#include <string.h>

void fbf_v5_time(fbf_jbuf *b, double v)
{
    /* flatbuffers prints a whole double as "12.0"; others exactly. */
    if (v == floor(v) && fabs(v) < 9e15) {
        fbf_jbuf_int(b, (int64_t)v);
        fbf_jbuf_lit(b, ".0");
        return;
    }
    fbf_jbuf_num(b, v);
}

/* The job's profile id, "<workload>!<profile>", as a JSON string. */
static void put_profile_id(fbf_replay *r, fbf_jbuf *b, uint32_t job)
{
    fbf_jbuf *t = &r->v5->scratch;
    fbf_jbuf_reset(t);
    fbf_v5_profile_id(r, job, t);
    fbf_jbuf_str(b, t->oom || !t->p ? "" : t->p);
    if (t->oom)
        r->oom = true;
}

void fbf_v5_profile_id(const fbf_replay *r, uint32_t job, fbf_jbuf *b)
{
    const char *id = r->wl->jobs[job].id, *bang = strchr(id, '!');
    const char *p = r->wl->profiles[r->wl->jobs[job].profile].name;
    /* Batsim names a profile after its workload: the job's prefix; a
     * registered job keeps the full id it named (v5_register.c). */
    if (job >= r->nb_static)
        ;
    else if (bang)
        fbf_jbuf_raw(b, id, (size_t)(bang - id) + 1);
    else
        fbf_jbuf_lit(b, "w0!");
    fbf_jbuf_raw(b, p, strlen(p));
}

/* A ProfileAndId from a workload name and a profile. */
static void profile_and_id(fbf_jbuf *b, fbf_jbuf *tmp, const char *wl, size_t wl_len,
                           const fbf_wl_profile *p)
{
    fbf_jbuf_reset(tmp);
    fbf_jbuf_raw(tmp, wl, wl_len);
    fbf_jbuf_lit(tmp, "!");
    fbf_jbuf_raw(tmp, p->name, strlen(p->name));
    fbf_jbuf_lit(b, "{\"id\":");
    fbf_jbuf_str(b, tmp->oom || !tmp->p ? "" : tmp->p);
    fbf_jbuf_lit(b, ",\"profile_type\":\"DelayProfile\",\"profile\":{\"delay\":");
    fbf_v5_time(b, p->delay);
    fbf_jbuf_lit(b, "}}");
}

static void job_profile(fbf_replay *r, fbf_jbuf *b, uint32_t job)
{
    fbf_jbuf tmp = {0};
    const char *id = r->wl->jobs[job].id, *bang = strchr(id, '!');
    profile_and_id(b, &tmp, bang ? id : "w0", bang ? (size_t)(bang - id) : 2,
                   &r->wl->profiles[r->wl->jobs[job].profile]);
    if (tmp.oom)
        r->oom = true;
    fbf_jbuf_fini(&tmp);
}

/* One host's properties and pstates; with --energy, as Batsim copies them
 * from its energy platforms (machines.h). */
static void host(fbf_replay *r, fbf_jbuf *b, uint32_t id)
{
    uint32_t npstates = 1, pstate = 0;
    fbf_jbuf_lit(b, "{\"id\":");
    fbf_jbuf_int(b, id);
    fbf_jbuf_lit(b, ",\"name\":\"r");
    fbf_jbuf_int(b, id);
    fbf_jbuf_lit(b, "\",");
    if (r->mach) {
        const fbf_energy_config *c = fbf_machines_config(r);
        npstates = (c->compute_pstate > c->sleep_pstate ? c->compute_pstate : c->sleep_pstate) + 3;
        pstate = c->compute_pstate;
    }
    fbf_jbuf_lit(b, "\"pstate\":");
    fbf_jbuf_int(b, pstate);
    fbf_jbuf_lit(b, ",\"pstate_count\":");
    fbf_jbuf_int(b, npstates);
    fbf_jbuf_lit(b, ",\"state\":\"IDLE\",\"properties\":[");
    if (r->mach) {
        /* machines.c writes them as object members: re-shape each
         * ,"key":"value" into {"key":..,"value":..}. */
        fbf_jbuf props = {0};
        fbf_machines_properties(r, &props);
        const char *p = props.oom ? "" : props.p;
        bool first = true;
        while (*p == ',') {
            const char *k = p + 1, *kend = strchr(k + 1, '"');
            const char *v = kend ? kend + 2 : NULL, *vend = v ? strchr(v + 1, '"') : NULL;
            if (!vend)
                break;
            if (!first)
                fbf_jbuf_lit(b, ",");
            fbf_jbuf_lit(b, "{\"key\":");
            fbf_jbuf_raw(b, k, (size_t)(kend - k) + 1);
            fbf_jbuf_lit(b, ",\"value\":");
            fbf_jbuf_raw(b, v, (size_t)(vend - v) + 1);
            fbf_jbuf_lit(b, "}");
            first = false;
            p = vend + 1;
        }
        if (props.oom)
            r->oom = true;
        fbf_jbuf_fini(&props);
    }
    fbf_jbuf_lit(b, "],\"zone_properties\":[],\"core_count\":1,\"computation_speed\":[");
    for (uint32_t k = 0; k < npstates; k++)
        fbf_jbuf_raw(b, k ? ",1.0" : "1.0", k ? 4 : 3);
    fbf_jbuf_lit(b, "]}");
}

void fbf_v5_begins(fbf_replay *r)
{
    const fbf_workload *wl = r->wl;
    const fbf_v5_config *c = r->cfg.v5;
    fbf_jbuf *b = &r->msg;
    size_t count = 0;
    fbf_replay_msg_open(r, 0);
    fbf_replay_ev_open(r, &count, 0, "SimulationBeginsEvent");
    fbf_jbuf_lit(b, "{\"host_number\":");
    fbf_jbuf_int(b, r->cfg.nb_res);
    fbf_jbuf_lit(b, ",\"computation_host_number\":");
    fbf_jbuf_int(b, r->cfg.nb_res);
    fbf_jbuf_lit(b, ",\"computation_hosts\":[");
    for (uint32_t i = 0; i < r->cfg.nb_res; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        host(r, b, i);
    }
    fbf_jbuf_lit(b, "],\"storage_host_number\":0,\"storage_hosts\":[],"
                    "\"batsim_execution_context_json\":");
    fbf_jbuf ctx = {0};
    fbf_jbuf_lit(&ctx, "{\"socket_endpoint\":");
    fbf_jbuf_str(&ctx, c && c->endpoint ? c->endpoint : "");
    fbf_jbuf_lit(&ctx, ",\"export_prefix\":");
    fbf_jbuf_str(&ctx, c && c->export_prefix ? c->export_prefix : "");
    fbf_jbuf_lit(&ctx, "}");
    fbf_jbuf_str(b, ctx.oom || !ctx.p ? "" : ctx.p);
    if (ctx.oom)
        r->oom = true;
    fbf_jbuf_fini(&ctx);
    fbf_jbuf_lit(b, ",\"batsim_arguments\":[");
    for (int i = 0; c && i < c->argc; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_str(b, c->argv[i]);
    }
    fbf_jbuf_lit(b, "],\"workloads\":[");
    char (*names)[64] = r->wl_names;
    size_t nn = r->nwl_names = fbf_replay_workload_names(wl, names);
    for (size_t k = 0; k < nn; k++) {
        if (k)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_lit(b, "{\"name\":");
        fbf_jbuf_str(b, names[k]);
        fbf_jbuf_lit(b, ",\"filename\":");
        fbf_jbuf_str(b, wl->path ? wl->path : "");
        fbf_jbuf_lit(b, "}");
    }
    fbf_jbuf_lit(b, "]");
    if (r->v5->fwd_begins) {
        fbf_jbuf tmp = {0};
        fbf_jbuf_lit(b, ",\"profiles\":[");
        for (size_t k = 0; k < nn; k++)
            for (size_t p = 0; p < wl->nb_profiles; p++) {
                if (k || p)
                    fbf_jbuf_lit(b, ",");
                profile_and_id(b, &tmp, names[k], strlen(names[k]), &wl->profiles[p]);
            }
        fbf_jbuf_lit(b, "]");
        if (tmp.oom)
            r->oom = true;
        fbf_jbuf_fini(&tmp);
    }
    fbf_jbuf_lit(b, "}}]}");
}

void fbf_v5_submitted(fbf_replay *r, size_t *count, uint32_t job)
{
    const fbf_wl_job *wj = &r->wl->jobs[job];
    fbf_jbuf *b = &r->msg;
    fbf_replay_ev_open(r, count, wj->subtime, "JobSubmittedEvent");
    fbf_jbuf_lit(b, "{\"job_id\":");
    fbf_jbuf_str(b, wj->id);
    fbf_jbuf_lit(b, ",\"job\":{\"resource_request\":");
    fbf_jbuf_int(b, wj->res);
    fbf_jbuf_lit(b, ",\"walltime\":");
    fbf_v5_time(b, wj->walltime > 0 ? wj->walltime : -1);
    fbf_jbuf_lit(b, ",\"extra_data\":\"\",\"rigid\":true,\"profile_id\":");
    put_profile_id(r, b, job);
    fbf_jbuf_lit(b, "},\"submission_time\":");
    fbf_v5_time(b, wj->subtime);
    if (r->v5->fwd_submission) {
        fbf_jbuf_lit(b, ",\"profile\":");
        job_profile(r, b, job);
    }
    fbf_jbuf_lit(b, "}}");
}

static const char *const final_states[] = {
    [FBF_END_NONE] = "COMPLETED_SUCCESSFULLY", /* not sent */
    [FBF_END_SUCCESS] = "COMPLETED_SUCCESSFULLY",
    [FBF_END_WALLTIME] = "COMPLETED_WALLTIME_REACHED",
    [FBF_END_KILLED] = "COMPLETED_KILLED",
    [FBF_END_FAILED] = "COMPLETED_FAILED",
};

static void completed(fbf_replay *r, size_t *count, double t, uint32_t job, uint8_t end)
{
    fbf_jbuf *b = &r->msg;
    fbf_replay_ev_open(r, count, t, "JobCompletedEvent");
    fbf_jbuf_lit(b, "{\"job_id\":");
    fbf_jbuf_str(b, r->wl->jobs[job].id);
    fbf_jbuf_lit(b, ",\"state\":\"");
    fbf_jbuf_raw(b, final_states[end], strlen(final_states[end]));
    if (end == FBF_END_SUCCESS)
        fbf_jbuf_lit(b, "\",\"return_code\":0}}");
    else
        fbf_jbuf_lit(b, "\",\"return_code\":4294967295}}");
}

void fbf_v5_completed(fbf_replay *r, size_t *count, uint32_t job)
{
    const fbf_rjob *j = &r->jobs[job];
    completed(r, count, j->end, job, j->end_kind);
}

void fbf_v5_killed(fbf_replay *r, size_t *count, double t, uint32_t kill)
{
    const fbf_kill *k = &r->kills[kill];
    fbf_jbuf *b = &r->msg;
    for (uint32_t i = 0; i < k->n; i++) {
        const fbf_kill_item *it = &r->kill_items[k->first + i];
        if (isnan(it->progress))
            continue;
        completed(r, count, t, it->job, FBF_END_KILLED);
        r->jobs[it->job].flags &= (uint8_t)~FBF_RJF_UNSENT;
        if (r->cfg.dyn_jobs)
            fbf_replay_drop_profile(r, it->job);
    }
    fbf_replay_ev_open(r, count, t, "JobsKilledEvent");
    fbf_jbuf_lit(b, "{\"job_ids\":[");
    for (uint32_t i = 0; i < k->n; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_str(b, r->wl->jobs[r->kill_items[k->first + i].job].id);
    }
    fbf_jbuf_lit(b, "],\"progresses\":[");
    bool first = true;
    for (uint32_t i = 0; i < k->n; i++) {
        const fbf_kill_item *it = &r->kill_items[k->first + i];
        if (isnan(it->progress))
            continue; /* it had completed before the kill */
        if (!first)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_lit(b, "{\"job_id\":");
        first = false;
        fbf_jbuf_str(b, r->wl->jobs[it->job].id);
        fbf_jbuf_lit(b, ",\"wrapper\":{\"kill_progress_type\":\"KillProgressAtomicProfile\","
                        "\"kill_progress\":{\"profile_id\":");
        put_profile_id(r, b, it->job);
        fbf_jbuf_lit(b, ",\"progress\":");
        fbf_jbuf_num(b, it->progress);
        fbf_jbuf_lit(b, "}}}");
    }
    fbf_jbuf_lit(b, "]");
    if (r->v5->fwd_killed) {
        fbf_jbuf_lit(b, ",\"profiles\":[");
        first = true;
        for (uint32_t i = 0; i < k->n; i++) {
            const fbf_kill_item *it = &r->kill_items[k->first + i];
            if (isnan(it->progress))
                continue;
            if (!first)
                fbf_jbuf_lit(b, ",");
            first = false;
            job_profile(r, b, it->job);
        }
        fbf_jbuf_lit(b, "]");
    }
    fbf_jbuf_lit(b, "}}");
}

void fbf_v5_notify(fbf_replay *r, size_t *count, double t, uint32_t arg)
{
    fbf_replay_ev_open(r, count, t, arg ? "AllStaticExternalEventsHaveBeenInjectedEvent"
                                        : "AllStaticJobsHaveBeenSubmittedEvent");
    fbf_jbuf_lit(&r->msg, "{}}");
}

void fbf_v5_ends(fbf_replay *r, size_t *count)
{
    fbf_replay_ev_open(r, count, r->clock, "SimulationEndsEvent");
    fbf_jbuf_lit(&r->msg, "{}}]}");
}
