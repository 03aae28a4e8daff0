/*
 * jobctl: jobs steered from outside a pass (engine.h): running jobs
 * adopted after a scheduler's restart, waiting jobs withdrawn and
 * requeued, a waiting job's walltime changed; and the reservations a
 * pass set, for peers that show them.
 *
 * Each goes through the policy's hooks as the ordinary events do: an
 * adopted job is held like a machine that is not ON (resources_held), a
 * withdrawn one leaves as a job given up does (job_withdrawn), a requeued
 * one arrives again (job_submitted). A job that entered the queue at the
 * current decision point is refused: the policy keeps it in its arrivals
 * until the pass, and would see it twice.
 */
#include <errno.h>
#include <math.h>

#include "engine/engine.h"
#include "engine/engine_int.h"
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/pool.h"
#include "engine/queue.h"
#include "engine/runheap.h"

/* As engine.c's: below this many pending submissions the owner applies them. */
#define INLINE_SYNC_BELOW 512

int fbf_engine_adopt(fbf_engine *e, const char *id, const fbf_idset *alloc, double end,
                     fbf_error *err)
{
    if (!e->has_platform)
        return fbf_errorf(err, -EINVAL, "job %s adopted before the platform is known", id);
    if (e->nb_waiting)
        return fbf_errorf(err, -EINVAL, "job %s adopted while %zu jobs wait: running jobs are "
                          "adopted first", id, e->nb_waiting);
    if (isnan(end))
        return fbf_errorf(err, -EINVAL, "job %s: its end must be a number", id);
    uint64_t n = fbf_idset_count(alloc);
    if (n == 0)
        return fbf_errorf(err, -EINVAL, "job %s adopted with no resources", id);
    if (!fbf_idset_contains_all(&e->free_set, alloc)) {
        for (uint32_t i = 0; i < alloc->n; i++)
            for (uint64_t r = alloc->r[i].lo; r <= alloc->r[i].hi; r++)
                if (!fbf_idset_contains(&e->free_set, (uint32_t)r))
                    return fbf_errorf(err, -EINVAL, "job %s: resource %llu is not free (another "
                                      "job's, or not a compute resource)", id,
                                      (unsigned long long)r);
    }
    fbf_job_h h;
    int rc = fbf_jobs_add(e->jobs, id, &h);
    if (rc == -EEXIST)
        return fbf_errorf(err, rc, "job %s adopted twice", id);
    if (rc < 0)
        return fbf_errorf(err, rc, "job %s: cannot store job", id);
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    j->res = (uint32_t)n;
    j->subtime = j->start = e->now;
    /* The policy holds [start, start + walltime): the same sum as est_end. */
    j->walltime = end > e->now ? end - e->now : 0;
    j->est_end = e->now + j->walltime;
    if (fbf_idset_copy(&j->alloc, alloc) < 0 || fbf_idset_subtract(&e->free_set, alloc) < 0 ||
        fbf_runheap_push(&e->heap, j->est_end, h) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory adopting job %s", id);
    j->state = FBF_JOB_RUNNING;
    e->nb_free -= j->res;
    e->nb_running++;
    return e->ops->resources_held ? e->ops->resources_held(e->pstate, e, h, err) : 0;
}

/* Whether h entered the queue at this decision point. */
static bool entered_now(const fbf_engine *e, fbf_job_h h)
{
    if (fbf_jobs_get(e->jobs, h)->seq >= e->point_seq0)
        return true;
    for (size_t i = 0; i < e->requeued.n; i++)
        if (e->requeued.v[i] == h)
            return true;
    return false;
}

static int withdraw(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (j->state != FBF_JOB_WAITING || j->hold)
        return fbf_errorf(err, -EINVAL, "job %s does not wait", j->id);
    if (entered_now(e, h))
        return fbf_errorf(err, -EBUSY, "job %s entered the queue at this decision point",
                          j->id);
    fbf_pool_sync(e->pool, INLINE_SYNC_BELOW); /* every job is in its partition */
    int rc = e->ops->job_withdrawn ? e->ops->job_withdrawn(e->pstate, e, h, err) : 0;
    if (rc < 0)
        return rc;
    fbf_partition_unlink(&e->parts[j->part], e->jobs, h);
    j->state = FBF_JOB_REJECTED;
    j->rsv = NAN;
    e->nb_waiting--;
    e->any_ended = true; /* like a kill: conservative compresses (D7 a) */
    return 0;
}

int fbf_engine_withdraw(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    return withdraw(e, h, err);
}

/* Whether the policy accepts j's request (D2). */
static const char *refused(const fbf_engine *e, const fbf_job *j)
{
    if (j->res < 1 || j->res > e->nb_compute)
        return "its size does not fit the platform";
    if (e->ops->needs_walltime && j->walltime < 0)
        return "the policy needs a walltime";
    return NULL;
}

static int requeue(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (fbf_hvec_push(&e->requeued, h) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    j->state = FBF_JOB_WAITING;
    j->rsv = NAN;
    e->nb_waiting++;
    fbf_pool_post(e->pool, j->part, h);
    return e->ops->job_submitted ? e->ops->job_submitted(e->pstate, e, h, err) : 0;
}

int fbf_engine_requeue(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    const char *why = refused(e, j);
    if (j->state != FBF_JOB_REJECTED || j->hold || why)
        return fbf_errorf(err, -EINVAL, "job %s cannot wait again: %s", j->id,
                          why ? why : "it was not withdrawn");
    if (entered_now(e, h))
        return fbf_errorf(err, -EBUSY, "job %s entered the queue at this decision point",
                          j->id);
    return requeue(e, h, err);
}

int fbf_engine_set_walltime(fbf_engine *e, fbf_job_h h, double walltime, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (isnan(walltime) || isinf(walltime))
        return fbf_errorf(err, -EINVAL, "job %s: a walltime is a finite number", j->id);
    if (walltime < 0 && e->ops->needs_walltime)
        return fbf_errorf(err, -EINVAL, "job %s: the policy needs a walltime", j->id);
    int rc = withdraw(e, h, err);
    if (rc < 0)
        return rc;
    j->walltime = walltime < 0 ? -1.0 : walltime;
    return requeue(e, h, err);
}

void fbf_engine_track_reservations(fbf_engine *e, bool on) { e->track_rsv = on; }

int fbf_engine_reservations_set(const fbf_engine *e, const fbf_job_h **v, size_t *n)
{
    *v = e->rsv_set.v;
    *n = e->rsv_set.n;
    return e->rsv_oom ? -ENOMEM : 0;
}

bool fbf_engine_reservations_persist(const fbf_engine *e)
{
    return e->cfg.reservation_depth == FBF_DEPTH_UNLIMITED;
}

uint32_t fbf_engine_job_res(const fbf_engine *e, fbf_job_h j)
{
    return fbf_jobs_get(e->jobs, j)->res;
}

double fbf_engine_job_walltime(const fbf_engine *e, fbf_job_h j)
{
    return fbf_jobs_get(e->jobs, j)->walltime;
}

double fbf_engine_job_subtime(const fbf_engine *e, fbf_job_h j)
{
    return fbf_jobs_get(e->jobs, j)->subtime;
}

bool fbf_engine_needs_walltime(const fbf_engine *e) { return e->ops->needs_walltime; }
