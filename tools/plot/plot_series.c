/*
 * plot_series: the window, load bins and wait classes; see plot_series.h.
 */
#include "tools/plot/plot_series.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool fbf_plot_in_window(const fbf_plot_job *j, double from, double to)
{
    if (j->state == FBF_PLOT_REJECTED)
        return false;
    if (j->finish == j->start)
        return from <= j->start && j->start <= to;
    return j->start < to && j->finish > from;
}

fbf_plot_cat fbf_plot_category(const fbf_plot_job *j, fbf_plot_color c)
{
    if (c != FBF_PLOT_COLOR_START) {
        switch (j->state) {
        case FBF_PLOT_WALLTIME: return FBF_PLOT_CAT_WALLTIME;
        case FBF_PLOT_KILLED: return FBF_PLOT_CAT_KILLED;
        case FBF_PLOT_FAILED: return FBF_PLOT_CAT_FAILED;
        default: break;
        }
    }
    if (c != FBF_PLOT_COLOR_STATE) {
        switch (j->reason) {
        case FBF_PLOT_HEAD: return FBF_PLOT_CAT_HEAD;
        case FBF_PLOT_BACKFILLED: return FBF_PLOT_CAT_BACKFILLED;
        case FBF_PLOT_RESERVATION: return FBF_PLOT_CAT_RESERVATION;
        default: break;
        }
    }
    return FBF_PLOT_CAT_COMPLETED;
}

unsigned fbf_plot_size_class(int64_t res)
{
    unsigned k = 0;
    while (k < 63 && ((int64_t)1 << k) < res)
        k++;
    return k;
}

/* ---- load: busy resources and waiting jobs as step functions ----------- */

typedef struct event {
    double t;
    int64_t busy; /* change of busy resources */
    int64_t wait; /* change of waiting jobs */
} event;

static int event_cmp(const void *a, const void *b)
{
    double x = ((const event *)a)->t, y = ((const event *)b)->t;
    return (x > y) - (x < y);
}

typedef struct sweep {
    const event *ev;
    size_t n, i;
    int64_t busy, wait;
} sweep;

/* Applies every event at the next event time; returns that time. */
static double sweep_step(sweep *s)
{
    double t = s->ev[s->i].t;
    while (s->i < s->n && s->ev[s->i].t == t) {
        s->busy += s->ev[s->i].busy;
        s->wait += s->ev[s->i].wait;
        s->i++;
    }
    return t;
}

static void bin_see(fbf_plot_bin *b, double v)
{
    if (v < b->min)
        b->min = v;
    if (v > b->max)
        b->max = v;
}

static int load(fbf_plot_view *v, const fbf_plot_jobs *J)
{
    event *ev = malloc(sizeof *ev * (J->n * 4 + 1));
    v->busy = calloc(v->nbins, sizeof *v->busy);
    v->queue = calloc(v->nbins, sizeof *v->queue);
    if (!ev || !v->busy || !v->queue) {
        free(ev);
        return -ENOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < J->n; i++) {
        const fbf_plot_job *j = &J->jobs[i];
        if (j->state == FBF_PLOT_REJECTED)
            continue;
        ev[n++] = (event){j->submit, 0, 1};
        ev[n++] = (event){j->start, 0, -1};
        ev[n++] = (event){j->start, j->nalloc, 0};
        ev[n++] = (event){j->finish, -j->nalloc, 0};
    }
    qsort(ev, n, sizeof *ev, event_cmp);
    sweep s = {ev, n, 0, 0, 0};
    while (s.i < n && ev[s.i].t <= v->from)
        sweep_step(&s);
    double width = (v->to - v->from) / (double)v->nbins, busy_area = 0, wait_area = 0;
    for (size_t k = 0; k < v->nbins; k++) {
        double lo = v->from + width * (double)k;
        double hi = k + 1 == v->nbins ? v->to : v->from + width * (double)(k + 1);
        double cur = lo, ab = 0, aw = 0;
        fbf_plot_bin *b = &v->busy[k], *q = &v->queue[k];
        b->min = b->max = (double)s.busy;
        q->min = q->max = (double)s.wait;
        while (s.i < n && ev[s.i].t < hi) {
            double t = ev[s.i].t;
            ab += (double)s.busy * (t - cur);
            aw += (double)s.wait * (t - cur);
            cur = sweep_step(&s);
            bin_see(b, (double)s.busy);
            bin_see(q, (double)s.wait);
        }
        ab += (double)s.busy * (hi - cur);
        aw += (double)s.wait * (hi - cur);
        b->mean = ab / (hi - lo);
        q->mean = aw / (hi - lo);
        busy_area += ab;
        wait_area += aw;
        if (q->max > v->queue_max)
            v->queue_max = q->max;
    }
    v->util_mean = busy_area / ((double)v->nres * (v->to - v->from));
    v->queue_mean = wait_area / (v->to - v->from);
    free(ev);
    return 0;
}

/* ---- waits by size class ------------------------------------------------ */

typedef struct wait_of {
    unsigned cls;
    double wait;
} wait_of;

static int wait_cmp(const void *a, const void *b)
{
    const wait_of *x = a, *y = b;
    if (x->cls != y->cls)
        return x->cls < y->cls ? -1 : 1;
    return (x->wait > y->wait) - (x->wait < y->wait);
}

static double rank(const wait_of *w, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return w[(k < 1 ? 1 : k) - 1].wait;
}

static int waits(fbf_plot_view *v, const fbf_plot_jobs *J)
{
    wait_of *w = malloc(sizeof *w * (v->nsel + 1));
    if (!w)
        return -ENOMEM;
    for (size_t i = 0; i < v->nsel; i++) {
        const fbf_plot_job *j = &J->jobs[v->sel[i]];
        w[i] = (wait_of){fbf_plot_size_class(j->res), j->start - j->submit};
    }
    qsort(w, v->nsel, sizeof *w, wait_cmp);
    for (size_t i = 0; i < v->nsel;) {
        size_t e = i;
        double sum = 0;
        while (e < v->nsel && w[e].cls == w[i].cls)
            sum += w[e++].wait;
        size_t n = e - i;
        unsigned k = w[i].cls;
        v->wclass[v->nclass++] = (fbf_plot_wclass){
            .lo = k ? ((int64_t)1 << (k - 1)) + 1 : 1,
            .hi = (int64_t)1 << k,
            .n = n,
            .mean = sum / (double)n,
            .p10 = rank(w + i, n, 0.10),
            .p25 = rank(w + i, n, 0.25),
            .p50 = rank(w + i, n, 0.50),
            .p75 = rank(w + i, n, 0.75),
            .p90 = rank(w + i, n, 0.90),
            .max = w[e - 1].wait,
        };
        i = e;
    }
    free(w);
    return 0;
}

/* ---- the view ----------------------------------------------------------- */

void fbf_plot_view_fini(fbf_plot_view *v)
{
    free(v->sel);
    free(v->busy);
    free(v->queue);
    memset(v, 0, sizeof *v);
}

static int window(fbf_plot_view *v, const fbf_plot_jobs *J, const fbf_plot_view_opts *o,
                  fbf_error *err)
{
    double first = INFINITY, last = -INFINITY;
    for (size_t i = 0; i < J->n; i++) {
        const fbf_plot_job *j = &J->jobs[i];
        first = fmin(first, j->submit);
        last = fmax(last, j->state == FBF_PLOT_REJECTED ? j->submit : j->finish);
    }
    if (!J->n)
        first = last = 0;
    v->from = isnan(o->from) ? first : o->from;
    v->to = isnan(o->to) ? last : o->to;
    if (!isnan(o->from) && !isnan(o->to) && !(o->from < o->to))
        return fbf_errorf(err, -EINVAL, "--from %g is not before --to %g", o->from, o->to);
    if (!isnan(o->from) && isnan(o->to) && !(v->from < v->to))
        return fbf_errorf(err, -EINVAL, "--from %g is not before the last finish (%g)", o->from,
                          last);
    if (isnan(o->from) && !isnan(o->to) && !(v->from < v->to))
        return fbf_errorf(err, -EINVAL, "--to %g is not after the first submission (%g)", o->to,
                          first);
    if (!(v->from < v->to)) /* every job at one instant: a second around it */
        v->to = v->from + 1;
    return 0;
}

int fbf_plot_view_build(fbf_plot_view *v, const fbf_plot_jobs *J, const fbf_plot_view_opts *o,
                        fbf_error *err)
{
    memset(v, 0, sizeof *v);
    v->color = o->color;
    v->nbins = o->nbins ? o->nbins : 1;
    int rc = window(v, J, o, err);
    if (rc)
        return rc;
    v->nres_given = o->nres > 0;
    v->nres = o->nres > 0 ? o->nres : J->max_resource + 1;
    if (v->nres < 1) /* nothing was allocated */
        v->nres = J->max_res > 0 ? J->max_res : 1;
    if (o->nres > 0 && J->max_resource >= o->nres) {
        for (size_t i = 0; i < J->n; i++) {
            const fbf_plot_job *j = &J->jobs[i];
            if (j->nranges && J->ranges[j->range0 + j->nranges - 1].hi >= o->nres)
                return fbf_errorf(err, -EINVAL,
                                  "job %s (line %u) uses resource %u, beyond --resources %lld",
                                  fbf_plot_job_id(J, j), j->line,
                                  J->ranges[j->range0 + j->nranges - 1].hi, (long long)o->nres);
        }
    }
    v->sel = malloc(sizeof *v->sel * (J->n + 1));
    if (!v->sel)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < J->n; i++) {
        const fbf_plot_job *j = &J->jobs[i];
        if (!fbf_plot_in_window(j, v->from, v->to))
            continue;
        v->sel[v->nsel++] = i;
        v->nrect += j->nranges;
        fbf_plot_cat c = fbf_plot_category(j, v->color);
        v->ncat[c] += j->nranges;
        v->catjobs[c]++;
    }
    if (load(v, J) || waits(v, J)) {
        fbf_plot_view_fini(v);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    return 0;
}
