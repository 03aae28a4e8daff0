/*
 * plot_series: what fastbf-plot draws, computed from the jobs of an
 * out_jobs.csv (plot_csv.h) and a time window; no drawing here.
 *
 *  - The window [from, to] defaults to the first submission and the last
 *    finish. A started job is in it when it runs inside it: start < to
 *    and finish > from, or, for a job that ran 0 s, from <= start <= to.
 *    The Gantt chart draws these jobs, one rectangle per range of their
 *    allocation, cut at the window's edges, and the wait-time
 *    distribution is over them. Rejected jobs never ran: they are counted,
 *    never drawn.
 *  - Resources: the platform's size is --resources when given (a job
 *    allocated beyond it is an error), else the highest resource number
 *    allocated plus one (evalys does the same).
 *  - Load: busy resources (the jobs' allocations, from start to finish)
 *    and waiting jobs (from submission to start; a rejected job's
 *    rejection time is not in the file, so it is never counted as
 *    waiting) as exact step functions. The window is cut into nbins equal
 *    bins, each with the time-weighted mean of the function over the bin
 *    and its least and greatest value there; events at the same instant
 *    are applied together, so a job that starts as another ends, or a job
 *    that waits 0 s, causes no spike.
 *  - Wait (start - submission) by size class of the request: class k holds
 *    the sizes (2^(k-1), 2^k] (1, 2, 3-4, 5-8, ...). Percentiles are
 *    nearest-rank (the ceil(p n)-th smallest), as fastbf-replay's.
 */
#ifndef FBF_PLOT_SERIES_H
#define FBF_PLOT_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"
#include "tools/plot/plot_csv.h"

/* How the Gantt chart colours a job. */
typedef enum fbf_plot_color {
    FBF_PLOT_COLOR_BOTH,  /* why it started; a job that did not complete successfully: its state */
    FBF_PLOT_COLOR_STATE, /* its final state only */
    FBF_PLOT_COLOR_START, /* why it started only (untagged: "completed") */
} fbf_plot_color;

typedef enum fbf_plot_cat {
    FBF_PLOT_CAT_COMPLETED, /* completed, and no start reason shown */
    FBF_PLOT_CAT_HEAD,
    FBF_PLOT_CAT_BACKFILLED,
    FBF_PLOT_CAT_RESERVATION,
    FBF_PLOT_CAT_WALLTIME,
    FBF_PLOT_CAT_KILLED,
    FBF_PLOT_CAT_FAILED,
    FBF_PLOT_NCATS
} fbf_plot_cat;

typedef struct fbf_plot_bin {
    double mean, min, max;
} fbf_plot_bin;

typedef struct fbf_plot_wclass {
    int64_t lo, hi; /* sizes of the class */
    size_t n;
    double mean, p10, p25, p50, p75, p90, max;
} fbf_plot_wclass;

#define FBF_PLOT_MAX_CLASSES 64

typedef struct fbf_plot_view_opts {
    double from, to; /* NAN: the default */
    int64_t nres;    /* 0: highest resource allocated + 1 */
    size_t nbins;    /* >= 1 */
    fbf_plot_color color;
} fbf_plot_view_opts;

/* Zero-initialise; free with fbf_plot_view_fini. */
typedef struct fbf_plot_view {
    double from, to;
    int64_t nres;
    bool nres_given;
    fbf_plot_color color;
    size_t *sel; /* jobs in the window (indices into the jobs), in file order */
    size_t nsel;
    size_t nrect;                   /* their ranges */
    size_t ncat[FBF_PLOT_NCATS];    /* rectangles of each colour */
    size_t catjobs[FBF_PLOT_NCATS]; /* jobs of each colour */
    fbf_plot_bin *busy, *queue;     /* nbins each */
    size_t nbins;
    double util_mean;  /* busy resources / nres, time-weighted over the window */
    double queue_mean; /* waiting jobs, time-weighted */
    double queue_max;
    fbf_plot_wclass wclass[FBF_PLOT_MAX_CLASSES]; /* the non-empty classes, ascending */
    size_t nclass;
} fbf_plot_view;

/* Computes the view. 0; -EINVAL with the line in err (a window that is
 * empty or reversed, resources below what a job uses); -ENOMEM. */
int fbf_plot_view_build(fbf_plot_view *v, const fbf_plot_jobs *jobs, const fbf_plot_view_opts *o,
                        fbf_error *err);

void fbf_plot_view_fini(fbf_plot_view *v);

/* Whether the started job j runs inside [from, to] (see above). */
bool fbf_plot_in_window(const fbf_plot_job *j, double from, double to);

/* The colour of a started job. */
fbf_plot_cat fbf_plot_category(const fbf_plot_job *j, fbf_plot_color c);

/* The size class k of a request: 2^(k-1) < res <= 2^k (res >= 1). */
unsigned fbf_plot_size_class(int64_t res);

#endif
