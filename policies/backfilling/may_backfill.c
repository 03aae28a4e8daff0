/*
 * may_backfill: which waiting job past the k-th reservation may backfill
 * now, without walking the queue: the first in the backfill order that
 * fits (res <= free, min free() over its walltime >= res), found in the
 * waiting index's tree of every job and its trees per res; a pass whose
 * budget of node tests runs out ends with plain_scan.c, which decides the
 * same. The rule, the searches and their cost: docs/backfilling.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"

typedef struct fit_ctx {
    const fbf_profile *p;
    double now;
    uint32_t free;
    int64_t floor;  /* min free() over [now, inf) */
    uint32_t any;   /* min(free, floor): such a res fits any walltime */
    size_t visits, budget;
    bool spent;
} fit_ctx;

static bool charge(fit_ctx *c)
{
    if (++c->visits <= c->budget)
        return true;
    c->spent = true;
    return false;
}

/* `all`: may the subtree hold a job of res <= any? */
static bool small_enough(void *arg, const fbf_qagg *a)
{
    fit_ctx *c = arg;
    return charge(c) && a->min_res <= c->any;
}

/* `byres` (one res value per tree): may the subtree hold a job that fits?
 * On a job's own values this is fits() itself. */
static bool may_fit(void *arg, const fbf_qagg *a)
{
    fit_ctx *c = arg;
    if (!charge(c) || a->min_res > c->free)
        return false;
    if (a->min_wall == 0 || (int64_t)a->min_res <= c->floor)
        return true;
    return fbf_profile_min_free(c->p, c->now, a->min_wall) >= (int64_t)a->min_res;
}

int fbf_bf_indexed_scan(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, fbf_job_h last,
                        fbf_error *err)
{
    fbf_bf_windex *w = k->wq;
    size_t n = fbf_sched_nb_waiting(s), lg = 1;
    while ((size_t)1 << lg < n)
        lg++;
    fit_ctx c = {.p = p, .now = fbf_sched_now(s), .budget = n / 8 + 16 * lg};
    /* Where the scan is, kept as a place: the job there has started, and
     * its record no longer gives every order's key. */
    fbf_qindex_probe at, *after = NULL;
    if (last != FBF_JOB_NONE) {
        at = fbf_qindex_probe_of(w->all, s, last);
        after = &at;
    }
    for (;;) {
        c.free = fbf_sched_free(s);
        if (c.free == 0)
            return 0;
        c.floor = fbf_profile_min_free(p, c.now, INFINITY);
        c.any = c.floor <= 0 ? 0 : c.floor < c.free ? (uint32_t)c.floor : c.free;
        fbf_job_h best = FBF_JOB_NONE;
        if (c.any > 0)
            best = fbf_qindex_next_after(w->all, s, fbf_qindex_root(w->all), after, small_enough,
                                         &c);
        for (size_t i = fbf_bf_windex_class_from(w, c.any + 1);
             i < w->n && w->cls[i].res <= c.free && !c.spent; i++) {
            if (!w->cls[i].root)
                continue;
            fbf_job_h h = fbf_qindex_next_after(w->byres, s, w->cls[i].root, after, may_fit, &c);
            if (h != FBF_JOB_NONE &&
                (best == FBF_JOB_NONE || fbf_qindex_cmp(w->all, s, h, best) < 0))
                best = h;
        }
        if (c.spent) { /* too many classes for this queue: finish plainly */
            k->plain_fallbacks++;
            return fbf_bf_plain_scan(w, p, s, k->same_order, after, true, err);
        }
        if (best == FBF_JOB_NONE)
            return 0;
        at = fbf_qindex_probe_of(w->all, s, best);
        after = &at;
        int rc = fbf_bf_start(w, p, s, best, FBF_START_BACKFILLED, err);
        if (rc < 0)
            return rc;
        c.budget += 16 * lg;
    }
}
