/*
 * ordering: the queue order and the backfill order in the engine
 * (scheduling-semantics.md D9), kept out of engine.c: which form the
 * partitions take, the keys taken afresh at each decision point under an
 * order that changes with time, and priorities changed while jobs wait.
 */
#include <errno.h>
#include <math.h>

#include "engine/engine_int.h"
#include "engine/order_api.h"
#include "engine/policy_api.h"
#include "engine/queue.h"

/* Below this many waiting jobs, sorting on the owner beats waking the
 * workers. */
#define PARALLEL_SORT_FROM 4096

fbf_queue_mode fbf_engine_queue_mode(const fbf_order_ops *order)
{
    if (fbf_order_is_submit(order))
        return FBF_QUEUE_LIST;
    return order->dynamic ? FBF_QUEUE_UNSORTED : FBF_QUEUE_TREE;
}

typedef struct rekey_job {
    fbf_engine *e;
    int err;
} rekey_job;

static void rekey_phase(void *arg, unsigned w)
{
    rekey_job *rj = arg;
    fbf_engine *e = rj->e;
    if (fbf_partition_sort(&e->parts[w], e->jobs, e->order->key, e->now) < 0)
        __atomic_store_n(&rj->err, -ENOMEM, __ATOMIC_RELAXED);
}

int fbf_engine_rekey(fbf_engine *e)
{
    if (e->qmode != FBF_QUEUE_UNSORTED || e->nb_waiting == 0)
        return 0;
    rekey_job rj = {e, 0};
    if (e->nb_waiting >= PARALLEL_SORT_FROM)
        fbf_pool_run(e->pool, rekey_phase, &rj);
    else
        fbf_pool_run_inline(e->pool, rekey_phase, &rj);
    return rj.err;
}

int fbf_engine_set_priority(fbf_engine *e, fbf_job_h h, double priority, fbf_error *err)
{
    fbf_job *j = fbf_jobs_get(e->jobs, h);
    if (j->hold || j->state != FBF_JOB_WAITING)
        return fbf_errorf(err, -EINVAL, "job %s: only a waiting job's priority can change",
                          j->id);
    if (isnan(priority))
        return fbf_errorf(err, -EINVAL, "job %s: priority must be a number", j->id);
    /* The job may still be on its way to its partition. */
    fbf_pool_sync(e->pool, 512);
    int rc = e->ops->job_rekeyed ? e->ops->job_rekeyed(e->pstate, e, h, false, err) : 0;
    if (rc < 0)
        return rc;
    double key = fbf_order_key(e->order, j, e->now);
    bool move = false;
    if (e->qmode == FBF_QUEUE_TREE) {
        double before = j->prio;
        j->prio = priority;
        key = fbf_order_key(e->order, j, e->now);
        j->prio = before;
        move = key != j->qkey;
    }
    if (move)
        fbf_partition_unlink(&e->parts[j->part], e->jobs, h);
    j->prio = priority;
    if (move) {
        j->qkey = key;
        fbf_partition_insert(&e->parts[j->part], e->jobs, h);
    }
    return e->ops->job_rekeyed ? e->ops->job_rekeyed(e->pstate, e, h, true, err) : 0;
}

/* ---- policy-facing (policy_api.h) ---- */

const fbf_order_ops *fbf_sched_order(const fbf_sched *s) { return s->order; }
const fbf_order_ops *fbf_sched_backfill_order(const fbf_sched *s) { return s->border; }

bool fbf_sched_same_orders(const fbf_sched *s)
{
    return s->order == s->border ||
           (fbf_order_is_submit(s->order) && fbf_order_is_submit(s->border));
}

fbf_estimate fbf_sched_estimate(const fbf_sched *s) { return s->cfg.estimate; }
const void *fbf_sched_policy_options(const fbf_sched *s) { return s->cfg.policy_options; }
