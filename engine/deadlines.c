/*
 * deadlines: the engine's two clocks on jobs, kept out of engine.c.
 *
 *   kill_after: started jobs are killed kill_after seconds after their
 *   start. Deadlines are start + a constant, so jobs are due in the order
 *   they started: a FIFO of started jobs replaces a heap.
 *
 *   max_wait: a waiting job is given up max_wait seconds after its
 *   subtime. Under D1 the jobs due are at the queue's head: giving up
 *   walks the head only, and the next one due is the head's. Under another
 *   queue order (D9) they can be anywhere: the whole queue is walked.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/extension.h"
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/queue.h"

/* kill_after: kills the jobs whose time is up, and sets *next to when the
 * next one is due (NAN if none), for a CALL_ME_LATER. */
static int due_kills(fbf_engine *e, double *next)
{
    fbf_hvec *q = &e->started;
    *next = NAN;
    while (e->started_head < q->n) {
        fbf_job *j = fbf_jobs_get(e->jobs, q->v[e->started_head]);
        if (j->state == FBF_JOB_RUNNING && !j->kill_sent) {
            double due = j->start + e->cfg.kill_after;
            if (due > e->now) {
                *next = due;
                return 0;
            }
            if (fbf_hvec_push(&e->kills, q->v[e->started_head]) < 0)
                return -ENOMEM;
            j->kill_sent = 1;
        }
        e->started_head++;
    }
    return 0;
}

static void compact_started(fbf_engine *e)
{
    fbf_hvec *q = &e->started;
    if (e->started_head < 1024 || e->started_head * 2 < q->n)
        return;
    memmove(q->v, q->v + e->started_head, (q->n - e->started_head) * sizeof *q->v);
    q->n -= e->started_head;
    e->started_head = 0;
}

static int kills_due(fbf_engine *e, double *next)
{
    int rc = due_kills(e, next);
    compact_started(e);
    return rc;
}

static int give_up_due(fbf_engine *e, fbf_error *err)
{
    fbf_sched_iter it;
    fbf_sched_iter_init(e, &it);
    bool d1 = e->qmode == FBF_QUEUE_LIST;
    for (fbf_job_h h; (h = fbf_sched_iter_next(e, &it)) != FBF_JOB_NONE;) {
        fbf_job *j = fbf_jobs_get(e->jobs, h);
        if (!(j->subtime + e->cfg.max_wait <= e->now)) {
            if (d1)
                break;
            continue;
        }
        if (fbf_hvec_push(&e->given_up, h) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        int rc = e->ops->job_withdrawn ? e->ops->job_withdrawn(e->pstate, e, h, err) : 0;
        if (rc < 0)
            return rc;
        fbf_partition_unlink(&e->parts[j->part], e->jobs, h);
        j->state = FBF_JOB_REJECTED; /* as Batsim records it (REJECT_JOB) */
        j->rsv = NAN;
        e->nb_waiting--;
        e->any_ended = true; /* like a kill: conservative compresses (D7 a) */
    }
    return 0;
}

static double next_give_up(fbf_engine *e)
{
    fbf_sched_iter it;
    fbf_sched_iter_init(e, &it);
    double first = INFINITY;
    for (fbf_job_h h; (h = fbf_sched_iter_next(e, &it)) != FBF_JOB_NONE;) {
        first = fmin(first, fbf_jobs_get(e->jobs, h)->subtime);
        if (e->qmode == FBF_QUEUE_LIST)
            break; /* D1: the head's is the first */
    }
    return isinf(first) ? NAN : first + e->cfg.max_wait;
}

static int deadlines_started(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    if (e->cfg.kill_after > 0 && fbf_hvec_push(&e->started, h) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory starting job %s",
                          fbf_jobs_get(e->jobs, h)->id);
    return 0;
}

static int deadlines_before(fbf_engine *e, fbf_error *err)
{
    return e->has_platform && e->cfg.max_wait > 0 ? give_up_due(e, err) : 0;
}

static int deadlines_after(fbf_engine *e, double *wake, fbf_error *err)
{
    if (e->cfg.kill_after > 0 && kills_due(e, wake) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    if (e->cfg.max_wait > 0)
        *wake = fmin(*wake, next_give_up(e)); /* fmin ignores a NAN side */
    return 0;
}

const fbf_extension_ops fbf_ext_deadlines = {
    .name = "deadlines",
    .job_started = deadlines_started,
    .before_pass = deadlines_before,
    .after_pass = deadlines_after,
};
