/*
 * ref_policies: the reference's scheduling pass (see ref_sched.h): D5,
 * D6, D7 and D8 over the orders of D9 and the estimates of D10, brute
 * force on purpose. Every rule cites the paragraph it implements.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "support/ref_sched_int.h"

/* ---- D9: orders ---------------------------------------------------------- */

/* Job i's key in order o at now. D1 itself (submit) has no key: 0. */
static double key(const rstate *s, ref_order o, size_t i)
{
    const ref_job *J = &s->in[i];
    double est = s->j[i].est, wait = s->now - J->subtime, e = est > 1 ? est : 1;
    switch (o) {
    case REF_SJF: return est;
    case REF_SAF: return (double)J->res * est;
    case REF_LXF: return isinf(est) ? -1 : -((wait + est) / e);
    case REF_WFP3: {
        double q = wait / e;
        return -(q * q * q * (double)J->res);
    }
    case REF_PRIORITY: return -J->priority;
    default: return 0;
    }
}

/* D1: subtime, then arrival. */
static bool d1_before(const rstate *s, size_t a, size_t b)
{
    if (s->in[a].subtime != s->in[b].subtime)
        return s->in[a].subtime < s->in[b].subtime;
    return s->j[a].seq < s->j[b].seq;
}

static bool before(const rstate *s, ref_order o, size_t a, size_t b)
{
    double x = key(s, o, a), y = key(s, o, b);
    if (x != y)
        return x < y;
    return d1_before(s, a, b);
}

/* The waiting jobs in order o at now, into v (room for s->qn). */
static size_t view(const rstate *s, ref_order o, size_t *v)
{
    size_t m = 0;
    for (size_t q = 0; q < s->qn; q++) {
        size_t i = s->queue[q], pos = m++;
        while (pos > 0 && before(s, o, i, v[pos - 1])) {
            v[pos] = v[pos - 1];
            pos--;
        }
        v[pos] = i;
    }
    return m;
}

static size_t *alloc_view(const rstate *s)
{
    size_t *v = malloc((s->qn + 1) * sizeof *v);
    if (!v)
        abort();
    return v;
}

static bool waiting(const rstate *s, size_t i) { return s->j[i].status == WAITING; }

/* ---- the profile ------------------------------------------------------- */

/* A span of the profile: res resources busy over [from, to). */
typedef struct span {
    double from, to;
    int64_t res;
} span;

typedef struct spans {
    span *v;
    size_t n;
} spans;

/* Every running job holds res over [now, est_end) (D7, with D10's est). */
static spans running_spans(const rstate *s, size_t extra)
{
    spans p = {malloc((s->n + extra + 1) * sizeof(span)), 0};
    if (!p.v)
        abort();
    for (size_t i = 0; i < s->n; i++)
        if (s->j[i].status == RUNNING)
            p.v[p.n++] = (span){s->now, s->j[i].est_end, s->in[i].res};
    return p;
}

static int64_t free_at(const rstate *s, const spans *p, double u)
{
    int64_t f = s->nb;
    for (size_t k = 0; k < p->n; k++)
        if (p->v[k].from <= u && u < p->v[k].to)
            f -= p->v[k].res;
    return f;
}

/* Minimum of free(u) over [t, t + d) (free(t) for d == 0): free is
 * constant between breakpoints, so t and the breakpoints inside do. */
static int64_t min_free(const rstate *s, const spans *p, double t, double d)
{
    int64_t m = free_at(s, p, t);
    for (size_t k = 0; k < p->n; k++) {
        double b[2] = {p->v[k].from, p->v[k].to};
        for (int x = 0; x < 2; x++)
            if (b[x] > t && b[x] < t + d) {
                int64_t f = free_at(s, p, b[x]);
                m = f < m ? f : m;
            }
    }
    return m;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* earliest: the smallest t >= now among now and the breakpoints such that
 * free(u) >= res on [t, t + d) (free(t) >= res for d == 0). */
static double earliest_in(const rstate *s, const spans *p, int64_t res, double d)
{
    double *bp = malloc((2 * p->n + 1) * sizeof *bp);
    if (!bp)
        abort();
    size_t nbp = 0;
    bp[nbp++] = s->now;
    for (size_t k = 0; k < p->n; k++) {
        if (p->v[k].from > s->now)
            bp[nbp++] = p->v[k].from;
        if (p->v[k].to > s->now && !isinf(p->v[k].to))
            bp[nbp++] = p->v[k].to;
    }
    qsort(bp, nbp, sizeof *bp, cmp_double);
    double t = INFINITY;
    for (size_t c = 0; c < nbp && isinf(t); c++) {
        if (c > 0 && bp[c - 1] == bp[c])
            continue;
        /* free is constant between breakpoints: check t and those inside */
        bool ok = free_at(s, p, bp[c]) >= res;
        for (size_t k = c + 1; ok && k < nbp && bp[k] < bp[c] + d; k++)
            ok = free_at(s, p, bp[k]) >= res;
        if (ok)
            t = bp[c];
    }
    free(bp);
    return t;
}

/* ---- FCFS (D5) and EASY (D6) ------------------------------------------ */

static void fcfs(rstate *s)
{
    size_t *v = alloc_view(s), m = view(s, s->opt.order, v);
    for (size_t k = 0; k < m && s->in[v[k]].res <= ref_nb_free(s); k++)
        ref_start(s, v[k]);
    free(v);
}

static void easy(rstate *s)
{
    fcfs(s);
    if (s->qn == 0)
        return;
    size_t *v = alloc_view(s);
    view(s, s->opt.order, v);
    size_t h = v[0];
    int64_t nfree = ref_nb_free(s);
    /* shadow: the smallest est_end E such that free + sum(res of running
     * jobs with est_end <= E) >= H.res. */
    double shadow = INFINITY;
    for (size_t r = 0; r < s->n; r++) {
        if (s->j[r].status != RUNNING)
            continue;
        double e = s->j[r].est_end;
        int64_t avail = nfree;
        for (size_t q = 0; q < s->n; q++)
            if (s->j[q].status == RUNNING && s->j[q].est_end <= e)
                avail += s->in[q].res;
        if (avail >= s->in[h].res && e < shadow)
            shadow = e;
    }
    int64_t extra = nfree - s->in[h].res;
    for (size_t q = 0; q < s->n; q++)
        if (s->j[q].status == RUNNING && s->j[q].est_end <= shadow)
            extra += s->in[q].res;
    /* D9: the rest, in the backfill order. */
    size_t m = view(s, s->opt.backfill_order, v);
    for (size_t k = 0; k < m; k++) {
        size_t i = v[k];
        if (i == h)
            continue;
        bool short_enough = s->now + s->j[i].est <= shadow;
        if (s->in[i].res <= nfree && (short_enough || s->in[i].res <= extra)) {
            nfree -= s->in[i].res;
            if (!short_enough)
                extra -= s->in[i].res;
            ref_start(s, i);
        }
    }
    free(v);
}

/* ---- depth k >= 2 (D8) -------------------------------------------------- */

/* The first k waiting jobs, in queue order, each take the earliest fit in
 * the profile of the running jobs and the reservations made before it in
 * this pass: a job that fits now starts, the others hold a reservation
 * (one of estimate 0 an instant, [t, nextafter(t))). The others, in the
 * backfill order, start iff they fit now for their whole estimate. */
static void depth_k(rstate *s, long k)
{
    size_t *v = alloc_view(s), m = view(s, s->opt.order, v);
    span *rsv = malloc((s->n + 1) * sizeof *rsv);
    bool *reserved = calloc(s->n + 1, sizeof *reserved);
    if (!rsv || !reserved)
        abort();
    size_t nrsv = 0;
    for (size_t q = 0; q < m && (long)nrsv < k; q++) {
        size_t i = v[q];
        double est = s->j[i].est;
        spans p = running_spans(s, nrsv);
        memcpy(p.v + p.n, rsv, nrsv * sizeof *rsv);
        p.n += nrsv;
        double t = earliest_in(s, &p, s->in[i].res, est);
        free(p.v);
        if ((t <= s->now || est == 0) && s->in[i].res <= ref_nb_free(s)) {
            ref_start(s, i);
            continue;
        }
        rsv[nrsv++] = (span){t, est > 0 ? t + est : nextafter(t, INFINITY), s->in[i].res};
        reserved[i] = true;
    }
    m = view(s, s->opt.backfill_order, v);
    for (size_t q = 0; q < m; q++) {
        size_t i = v[q];
        if (reserved[i])
            continue;
        double est = s->j[i].est;
        spans p = running_spans(s, nrsv);
        memcpy(p.v + p.n, rsv, nrsv * sizeof *rsv);
        p.n += nrsv;
        bool fits = s->in[i].res <= ref_nb_free(s) &&
                    (est == 0 || min_free(s, &p, s->now, est) >= s->in[i].res);
        free(p.v);
        if (fits)
            ref_start(s, i);
    }
    free(reserved);
    free(rsv);
    free(v);
}

/* ---- conservative (D7, and D10's repair) --------------------------------- */

static bool holds_rsv(const rstate *s, size_t i)
{
    return waiting(s, i) && s->j[i].est > 0 && !isnan(s->j[i].rsv);
}

/* The profile of D7: the running jobs, and every reservation but excl's
 * over [rsv, rsv + est). */
static spans profile(const rstate *s, size_t excl)
{
    spans p = running_spans(s, s->n);
    for (size_t i = 0; i < s->n; i++)
        if (i != excl && holds_rsv(s, i))
            p.v[p.n++] = (span){s->j[i].rsv, s->j[i].rsv + s->j[i].est, s->in[i].res};
    return p;
}

/* earliest(J), J's own reservation left out. */
static double earliest(const rstate *s, size_t i)
{
    spans p = profile(s, i);
    double t = earliest_in(s, &p, s->in[i].res, s->j[i].est);
    free(p.v);
    return t;
}

static void conservative(rstate *s)
{
    size_t *v = alloc_view(s), m = view(s, s->opt.order, v);
    /* D10: under predict, before (a), every reservation that has passed
     * or no longer fits goes to its earliest fit, in queue order. */
    if (s->opt.estimate == REF_PREDICT)
        for (size_t q = 0; q < m; q++) {
            size_t i = v[q];
            if (!holds_rsv(s, i))
                continue;
            spans p = profile(s, i);
            bool fits = s->j[i].rsv >= s->now &&
                        min_free(s, &p, s->j[i].rsv, s->j[i].est) >= s->in[i].res;
            free(p.v);
            if (!fits)
                s->j[i].rsv = earliest(s, i);
        }
    /* (a) compression, in queue order, every other reservation in place. */
    if (s->any_ended)
        for (size_t q = 0; q < m; q++) {
            size_t i = v[q];
            if (!holds_rsv(s, i))
                continue;
            double old = s->j[i].rsv;
            double t = earliest(s, i);
            if (t > old)
                ref_fail(s, "compression moved job %zu later at %.17g: %.17g -> %.17g", i,
                         s->now, old, t);
            s->j[i].rsv = t;
        }
    /* (b) new arrivals (estimate > 0, no reservation yet), in queue order. */
    for (size_t q = 0; q < m; q++) {
        size_t i = v[q];
        if (s->j[i].est > 0 && isnan(s->j[i].rsv))
            s->j[i].rsv = earliest(s, i);
    }
    /* (c) due reservations, then jobs of estimate 0 that fit. */
    for (size_t q = 0; q < m; q++) {
        size_t i = v[q];
        if (s->j[i].est > 0 && s->j[i].rsv == s->now) {
            if (s->in[i].res > ref_nb_free(s))
                ref_fail(s, "job %zu reserved at %.17g does not fit", i, s->now);
            else
                ref_start(s, i);
        }
    }
    for (size_t q = 0; q < m; q++) {
        size_t i = v[q];
        if (waiting(s, i) && s->j[i].est == 0 && s->in[i].res <= ref_nb_free(s))
            ref_start(s, i);
    }
    free(v);
    /* (d) */
    double x = INFINITY;
    bool any = false;
    for (size_t q = 0; q < s->qn; q++) {
        size_t i = s->queue[q];
        if (s->j[i].est > 0) {
            any = true;
            if (s->j[i].rsv < x)
                x = s->j[i].rsv;
        }
    }
    if (!any)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->j[i].status == RUNNING && s->j[i].est_end <= x)
            return;
    ref_trace_push(s->tr, REF_CALL_ME_LATER, s->now, -1, x);
}

void ref_pass(rstate *s)
{
    if (s->opt.policy == REF_FCFS)
        fcfs(s);
    else if (s->opt.policy == REF_CONSERVATIVE)
        conservative(s);
    else if (s->opt.depth >= 2 || s->opt.depth_rule)
        depth_k(s, s->opt.depth > 1 ? s->opt.depth : 1);
    else
        easy(s);
}
