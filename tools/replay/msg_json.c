/*
 * msg_json: the texts of the v4 JSON messages that are long and rare
 * enough to live outside message.c's loop: SIMULATION_BEGINS (the platform,
 * the config, the workloads and their profiles) and a KILL_JOB's answer
 * (the JOB_COMPLETED of each job it really killed, then one JOB_KILLED).
 * The state changes stay with the caller, except the deletion bookkeeping
 * of killed jobs, which belongs to their JOB_COMPLETED.
 */
#include "tools/replay/replay.h"
#include "tools/replay/machines.h"

#include <math.h>
#include <string.h>

/* The JOB_COMPLETED of a job a KILL_JOB really killed. */
static void emit_kill_completed(fbf_replay *r, size_t *count, double t, uint32_t job)
{
    fbf_jbuf *b = &r->msg;
    fbf_replay_ev_open(r, count, t, "JOB_COMPLETED");
    fbf_jbuf_lit(b, "{\"job_id\":");
    fbf_jbuf_str(b, r->wl->jobs[job].id);
    fbf_jbuf_lit(b, ",\"job_state\":\"COMPLETED_KILLED\",\"return_code\":-1,\"alloc\":\"");
    fbf_replay_alloc_text(r, job, b);
    fbf_jbuf_lit(b, "\"}}");
    r->jobs[job].flags &= (uint8_t)~FBF_RJF_UNSENT;
    if (r->cfg.dyn_jobs)
        fbf_replay_drop_profile(r, job);
}

void fbf_replay_json_killed(fbf_replay *r, size_t *count, double t, uint32_t kill)
{
    const fbf_kill *k = &r->kills[kill];
    fbf_jbuf *b = &r->msg;
    /* As Batsim: the JOB_COMPLETED of each job really killed, then one
     * JOB_KILLED with every id and the really killed jobs' progress. */
    for (uint32_t i = 0; i < k->n; i++)
        if (!isnan(r->kill_items[k->first + i].progress))
            emit_kill_completed(r, count, t, r->kill_items[k->first + i].job);
    fbf_replay_ev_open(r, count, t, "JOB_KILLED");
    fbf_jbuf_lit(b, "{\"job_ids\":[");
    for (uint32_t i = 0; i < k->n; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_str(b, r->wl->jobs[r->kill_items[k->first + i].job].id);
    }
    fbf_jbuf_lit(b, "],\"job_progress\":{");
    bool first = true;
    for (uint32_t i = 0; i < k->n; i++) {
        const fbf_kill_item *it = &r->kill_items[k->first + i];
        if (isnan(it->progress))
            continue; /* completed before the kill, or already being killed */
        const fbf_wl_job *wj = &r->wl->jobs[it->job];
        if (!first)
            fbf_jbuf_lit(b, ",");
        first = false;
        fbf_jbuf_str(b, wj->id);
        fbf_jbuf_lit(b, ":{\"profile_name\":");
        fbf_jbuf_str(b, r->wl->profiles[wj->profile].name);
        fbf_jbuf_lit(b, ",\"progress\":");
        fbf_replay_put_f(b, it->progress);
        fbf_jbuf_lit(b, "}");
    }
    fbf_jbuf_lit(b, "}}}");
}

void fbf_replay_json_begins(fbf_replay *r)
{
    const fbf_workload *wl = r->wl;
    fbf_jbuf *b = &r->msg;
    fbf_replay_msg_open(r, 0);
    size_t count = 0;
    fbf_replay_ev_open(r, &count, 0, "SIMULATION_BEGINS");
    fbf_jbuf_lit(b, "{\"nb_resources\":");
    fbf_jbuf_int(b, r->cfg.nb_res);
    fbf_jbuf_lit(b, ",\"nb_compute_resources\":");
    fbf_jbuf_int(b, r->cfg.nb_res);
    fbf_jbuf_lit(b, ",\"nb_storage_resources\":0,\"allow_compute_sharing\":false,"
                    "\"allow_storage_sharing\":true,\"config\":");
    fbf_replay_config_json(r, b);
    fbf_jbuf_lit(b, ",\"compute_resources\":[");
    for (uint32_t i = 0; i < r->cfg.nb_res; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_lit(b, "{\"id\":");
        fbf_jbuf_int(b, i);
        fbf_jbuf_lit(b, ",\"name\":\"r");
        fbf_jbuf_int(b, i);
        fbf_jbuf_lit(b, "\",\"state\":\"idle\",\"properties\":{\"role\":\"\"");
        if (r->mach)
            fbf_machines_properties(r, b);
        fbf_jbuf_lit(b, "},\"zone_properties\":{}}");
    }
    fbf_jbuf_lit(b, "],\"storage_resources\":[],\"workloads\":{");
    char (*names)[64] = r->wl_names;
    size_t nn = r->nwl_names = fbf_replay_workload_names(wl, names);
    for (size_t k = 0; k < nn; k++) {
        if (k)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_str(b, names[k]);
        fbf_jbuf_lit(b, ":");
        fbf_jbuf_str(b, wl->path ? wl->path : "");
    }
    fbf_jbuf_lit(b, "},\"profiles\":{");
    for (size_t k = 0; k < nn; k++) {
        if (k)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_str(b, names[k]);
        fbf_jbuf_lit(b, ":{");
        for (size_t p = 0; p < wl->nb_profiles; p++) {
            if (p)
                fbf_jbuf_lit(b, ",");
            fbf_jbuf_str(b, wl->profiles[p].name);
            fbf_jbuf_lit(b, ":{\"type\":\"delay\",\"delay\":");
            fbf_jbuf_num(b, wl->profiles[p].delay);
            fbf_jbuf_lit(b, "}");
        }
        fbf_jbuf_lit(b, "}");
    }
    fbf_jbuf_lit(b, "}}}]}");
}
