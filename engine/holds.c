/*
 * holds: machines out of service as RUNNING pseudo-jobs (engine_int.h),
 * for energy saving (power.c) and failures (failures.c). To the policies
 * a hold is a running job of the machines it holds, ending when they are
 * expected back; its end reaches them as a job's does (job_ended).
 */
#include <errno.h>
#include <stdio.h>

#include "engine/engine_int.h"
#include "engine/jobs.h"
#include "engine/runheap.h"

int fbf_engine_hold(fbf_engine *e, const fbf_idset *set, double start, double walltime,
                    bool from_free, fbf_job_h *out)
{
    char id[40];
    snprintf(id, sizeof id, "!hold-%llu", (unsigned long long)e->nb_holds++);
    fbf_job_h h;
    if (fbf_jobs_add(e->jobs, id, &h) < 0)
        return -ENOMEM;
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    uint64_t n = fbf_idset_count(set);
    j->hold = 1;
    j->res = (uint32_t)n;
    j->subtime = j->start = start;
    /* start + walltime is what the policies' profiles hold: est_end is
     * computed the same way so that both agree to the last bit. */
    j->walltime = walltime;
    j->est_end = start + walltime;
    j->state = FBF_JOB_RUNNING;
    if (fbf_idset_copy(&j->alloc, set) < 0 || fbf_runheap_push(&e->heap, j->est_end, h) < 0)
        return -ENOMEM;
    if (from_free) {
        if (fbf_idset_subtract(&e->free_set, set) < 0)
            return -ENOMEM;
        e->nb_free -= (uint32_t)n;
    }
    int rc = e->ops->resources_held ? e->ops->resources_held(e->pstate, e, h, NULL) : 0;
    if (rc < 0)
        return rc;
    *out = h;
    return 0;
}

int fbf_engine_unhold(fbf_engine *e, fbf_job_h h, const fbf_idset *to_free)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (to_free && to_free->n) {
        if (fbf_idset_union(&e->free_set, to_free) < 0)
            return -ENOMEM;
        e->nb_free += (uint32_t)fbf_idset_count(to_free);
    }
    j->state = FBF_JOB_DONE;
    e->any_ended = true;
    int rc = e->ops->job_ended ? e->ops->job_ended(e->pstate, e, h, NULL) : 0;
    if (rc < 0)
        return rc;
    return to_free && to_free->n && e->nb_failed ? fbf_failures_freed(e, to_free) : 0;
}

int fbf_engine_hold_machine(fbf_engine *e, uint32_t m, double end, bool from_free, fbf_job_h *out)
{
    fbf_range r = {m, m};
    fbf_idset one = {.r = &r, .n = 1, .cap = 1};
    return fbf_engine_hold(e, &one, e->now, end - e->now, from_free, out);
}

int fbf_engine_unhold_machine(fbf_engine *e, fbf_job_h h, bool to_free)
{
    return fbf_engine_unhold(e, h, to_free ? &fbf_jobs_get(e->jobs, h)->alloc : NULL);
}
