/*
 * order_api: what an order over waiting jobs is to the engine and the
 * policies (scheduling-semantics.md D9): a sort key, ascending, ties
 * broken by D1 (subtime, then arrival).
 *
 * An order is an ops table; policies/orders/ holds one file per order and
 * policies/orders/registry.h finds them by name. The engine takes two in
 * its configuration: the queue order (the head, who holds reservations,
 * the order FCFS starts jobs) and the backfill order (the order EASY's
 * scan and the depth-k family's backfilling consider the other jobs).
 * NULL, or an order whose key is NULL, is D1 itself ("submit").
 *
 * Keys read the job's estimate (fbf_job_est(), D10), res and priority
 * (jobs.h), and now for the orders marked dynamic; the engine evaluates
 * dynamic keys afresh at every decision point. A key is never NaN.
 */
#ifndef FBF_ORDER_API_H
#define FBF_ORDER_API_H

#include <math.h>
#include <stdbool.h>

#include "engine/jobs.h"

struct fbf_order_ops {
    const char *name;
    const char *summary; /* one line for --help */
    /* The key of waiting job j at now; NULL: D1 (submit). */
    double (*key)(const fbf_job *j, double now);
    /* The key depends on now (lxf, wfp3). */
    bool dynamic;
};

/* The estimate orders and reservations plan with (D10): the job's
 * walltime field, INFINITY when it has none (FCFS only, D9). */
static inline double fbf_job_est(const fbf_job *j)
{
    return j->walltime < 0 ? INFINITY : j->walltime;
}

static inline bool fbf_order_is_submit(const fbf_order_ops *o) { return !o || !o->key; }

static inline double fbf_order_key(const fbf_order_ops *o, const fbf_job *j, double now)
{
    return fbf_order_is_submit(o) ? j->subtime : o->key(j, now);
}

/* a before b in order o at now: key, then D1. */
static inline int fbf_order_cmp(const fbf_order_ops *o, const fbf_job *a, const fbf_job *b,
                                double now)
{
    if (!fbf_order_is_submit(o)) {
        double x = o->key(a, now), y = o->key(b, now);
        if (x != y)
            return x < y ? -1 : 1;
    }
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

#endif
