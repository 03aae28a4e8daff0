/*
 * plain_scan: which waiting jobs may backfill, by testing each one: on the
 * engine's workers (fbf_sched_scan), then again in the backfill order (D9)
 * as jobs start, O(N) per pass. The rule (D6, D8) and why walltime 0
 * jobs fit: docs/backfilling.md. See state.h for the contract.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "policies/backfilling/state.h"

typedef struct keep_ctx {
    const fbf_profile *p;
    const fbf_order_ops *order; /* the scan's (backfill) order */
    bool same;                  /* ... which is the queue order: its key is qkey */
    const fbf_qindex_probe *after; /* only jobs from there on (NULL: all) */
    bool strict; /* only jobs after it, not the one there */
    double now;
    uint32_t free;
} keep_ctx;

/* A waiting job's place in the scan's order. */
static fbf_qindex_probe place_of(const keep_ctx *c, const fbf_job *j)
{
    return (fbf_qindex_probe){c->same ? j->qkey : fbf_order_key(c->order, j, c->now),
                              j->subtime, j->seq};
}

/* Whether j fits now for its whole walltime. A job of walltime 0 holds
 * nothing over time and delays nobody: it fits iff its resources are free
 * (D6: now + 0 <= shadow), even when a reservation starts right now. */
static bool fits_now(const fbf_profile *p, double now, uint32_t nb_free, const fbf_job *j)
{
    return j->res <= nb_free &&
           (j->walltime == 0 || fbf_profile_min_free(p, now, j->walltime) >= j->res);
}

/* Runs on the workers: may this job backfill? (necessary condition; the
 * owner re-checks in queue order as resources get taken). */
static bool may_backfill(const void *arg, const fbf_job *j)
{
    const keep_ctx *c = arg;
    if (c->after) {
        fbf_qindex_probe x = place_of(c, j);
        int o = fbf_qindex_probe_cmp(&x, c->after);
        if (!(o > 0 || (o == 0 && !c->strict)))
            return false;
    }
    return fits_now(c->p, c->now, c->free, j);
}

/* Puts candidates found in queue order into the backfill order. */
static int sort_for_scan(const keep_ctx *c, fbf_sched *s, fbf_hvec *v)
{
    if (v->n < 2)
        return 0;
    fbf_bf_sort_item *t = malloc(v->n * sizeof *t);
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < v->n; i++)
        t[i] = (fbf_bf_sort_item){place_of(c, fbf_sched_job(s, v->v[i])), v->v[i]};
    qsort(t, v->n, sizeof *t, fbf_bf_sort_item_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = t[i].j;
    free(t);
    return 0;
}

/* The plain scan: every waiting job from `after` on in the backfill order
 * (after it when strict; NULL: all) is tested on the workers, then
 * re-tested in that order as jobs start. */
int fbf_bf_plain_scan(fbf_bf_windex *wq, fbf_profile *p, fbf_sched *s, bool same_order,
                      const fbf_qindex_probe *after, bool strict, fbf_error *err)
{
    double now = fbf_sched_now(s);
    keep_ctx c = {p, fbf_sched_backfill_order(s), same_order, after, strict, now,
                  fbf_sched_free(s)};
    fbf_hvec cand = {0};
    int rc = fbf_sched_scan(s, may_backfill, &c, &cand);
    if (rc == 0 && !same_order)
        rc = sort_for_scan(&c, s, &cand);
    if (rc < 0)
        fbf_errorf(err, rc, "backfill: out of memory");
    for (size_t i = 0; rc == 0 && i < cand.n; i++) {
        if (fits_now(p, now, fbf_sched_free(s), fbf_sched_job(s, cand.v[i])))
            rc = fbf_bf_start(wq, p, s, cand.v[i], FBF_START_BACKFILLED, err);
    }
    fbf_hvec_fini(&cand);
    return rc;
}

