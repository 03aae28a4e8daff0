/*
 * state: the parts of the backfilling family's state, one struct per file
 * that owns it, and the functions each file offers (README's tour gives
 * the layering: a file calls only the files below it). Private to
 * policies/backfilling/. Between passes the profile holds the running
 * jobs' spans, plus, at unlimited depth, every reservation of walltime > 0
 * (docs/backfilling.md states every invariant).
 */
#ifndef FBF_BF_STATE_H
#define FBF_BF_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/backfilling/queue_index.h"
#include "policies/backfilling/tuning.h"

typedef struct fbf_bf_windex fbf_bf_windex;
typedef struct fbf_bf_runs fbf_bf_runs;
struct fbf_bf_fits;

typedef struct fbf_bf_rsv_item {
    double t;
    fbf_job_h j;
} fbf_bf_rsv_item;

/* A job and its place in an order, for sorting (fbf_bf_sort_item_cmp). */
typedef struct fbf_bf_sort_item {
    fbf_qindex_probe at;
    fbf_job_h j;
} fbf_bf_sort_item;
static inline int fbf_bf_sort_item_cmp(const void *x, const void *y)
{
    return fbf_qindex_probe_cmp(&((const fbf_bf_sort_item *)x)->at,
                                &((const fbf_bf_sort_item *)y)->at);
}

/* A released time range [a, b); mf bounds free() from above over it. */
typedef struct fbf_bf_hole {
    double a, b;
    int64_t mf;
} fbf_bf_hole;

typedef struct fbf_bf_holes {
    fbf_bf_hole *v;
    size_t n, cap;
} fbf_bf_holes;

/* ---- reserve_k.c: finite depth k (EASY is 1), D6/D8 ---- */
typedef struct fbf_bf_finite {
    int64_t depth;
    bool same_order;   /* the backfill order is the queue order (D9) */
    fbf_bf_windex *wq; /* every waiting job (NULL: plain scans) */
    fbf_hvec tmp;      /* this pass's reservations */
    uint64_t plain_fallbacks;
} fbf_bf_finite;
int fbf_bf_finite_decide(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, fbf_error *err);
int fbf_bf_finite_estimate(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, uint32_t res,
                           double walltime, double *start, fbf_error *err);

/* ---- may_backfill.c: the first waiting job past the boundary that fits
 * now, through wq; the plain scan once a budget is spent ---- */
int fbf_bf_indexed_scan(fbf_bf_finite *k, fbf_profile *p, fbf_sched *s, fbf_job_h last,
                        fbf_error *err);

/* ---- plain_scan.c: every waiting job from `after` on in the backfill
 * order (after it when strict; NULL: all) that fits now starts ---- */
int fbf_bf_plain_scan(fbf_bf_windex *wq, fbf_profile *p, fbf_sched *s, bool same_order,
                      const fbf_qindex_probe *after, bool strict, fbf_error *err);

/* ---- start.c: a job starts now; the profile and wq learn it ---- */
int fbf_bf_start(fbf_bf_windex *wq, fbf_profile *p, fbf_sched *s, fbf_job_h h,
                 fbf_start_reason why, fbf_error *err);

/* ---- waiting_index.c: the waiting jobs in the backfill order, one tree
 * per res (may_backfill.c searches them). add: -ENOMEM (unchanged);
 * remove: no-op for a job not indexed; update: after its rsv changed. */
fbf_bf_windex *fbf_bf_windex_create(const fbf_order_ops *backfill_order);
void fbf_bf_windex_destroy(fbf_bf_windex *w);
int fbf_bf_windex_add(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
void fbf_bf_windex_remove(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
void fbf_bf_windex_update(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
/* The first class with res >= r (w->n if none). */
size_t fbf_bf_windex_class_from(const fbf_bf_windex *w, uint32_t r);
/* Written by waiting_index.c only. */
/* The res values of waiting jobs, sorted, each with its tree: sized by
 * the distinct sizes that wait, not by the largest a peer may send. A
 * class whose tree empties stays (root 0) until empties outnumber the
 * live ones, so that sizes that come and go cost no moves. */
typedef struct res_class {
    uint32_t res;
    uint32_t root; /* tree of the waiting jobs of this res (0: none) */
} res_class;

struct fbf_bf_windex {
    fbf_qindex *all;   /* every waiting job */
    fbf_qindex *byres; /* the same jobs, one tree per res value */
    res_class *cls;    /* sorted by res */
    size_t n, cap, empty;
};

/* ---- earliest.c: earliest start for r resources during d, from now,
 * with facts learnt by earlier searches (fast path only) ---- */
#define FBF_BF_SKIP_MAX 32
/* No window of res >= h free for >= d starts in [lo, hi). */
typedef struct fbf_bf_skip {
    uint32_t h;
    double d, lo, hi;
} fbf_bf_skip;
typedef struct fbf_bf_search {
    fbf_bf_skip skip[FBF_BF_SKIP_MAX];
    size_t skip_n;
    double *corner;           /* corner facts of a batch (NULL: none) */
    struct fbf_bf_fits *fits; /* fit facts of a batch (no_fit_before.h) */
    uint32_t floor_h;         /* the smallest job searched for (floor_d 0: none) */
    double floor_d;
    bool in_batch;
    uint64_t fit_starts, corner_batches;
} fbf_bf_search;
double fbf_bf_earliest(fbf_bf_search *x, const fbf_profile *p, double now, uint32_t res,
                       double walltime);
/* The same within a batch of arrivals begun by batch_begin (false: no
 * memory for corners, earliest alone) and ended by batch_end. */
bool fbf_bf_batch_begin(fbf_bf_search *x);
double fbf_bf_earliest_in_batch(fbf_bf_search *x, const fbf_profile *p, double now,
                                uint32_t res, double walltime);
void fbf_bf_batch_end(fbf_bf_search *x);
/* Forgets what the facts know about windows meeting [a, b). */
void fbf_bf_search_release(fbf_bf_search *x, double a, double b);
void fbf_bf_search_fini(fbf_bf_search *x);

/* ---- due.c: the plain path's reservations by time (min-heap of
 * (rsv, job), stale entries dropped lazily) ---- */
typedef struct fbf_bf_due {
    fbf_bf_rsv_item *heap;
    size_t n, cap;
} fbf_bf_due;
int fbf_bf_due_note(fbf_bf_due *d, double t, fbf_job_h j); /* -ENOMEM */
/* Appends the live entries due by now to out (any order). */
int fbf_bf_due_take(fbf_bf_due *d, fbf_sched *s, double now, fbf_hvec *out);
/* The earliest live reservation (INFINITY: none); live counts them. */
double fbf_bf_due_first(fbf_bf_due *d, fbf_sched *s, size_t live);
void fbf_bf_due_fini(fbf_bf_due *d);

/* ---- move_earlier.c: D7 (a), compression; qi (fast path) indexes
 * exactly the waiting jobs that hold a reservation, `pending` every range
 * released since the last pass. p is borrowed (policy.c's). ---- */
typedef struct fbf_bf_compression {
    fbf_profile *p;
    bool fast;
    fbf_qindex *qi;
    fbf_bf_holes pending; /* released since the last compression */
    fbf_bf_holes holes;   /* the current compression's released region */
    fbf_bf_runs *runs;    /* per hole of `holes`, its runs (NULL: none) */
    bool runs_failed;     /* runs could not be allocated: searches only */
    double max_wall;      /* the longest walltime ever indexed in qi */
    unsigned runs_share;  /* tuning.h */
    size_t runs_cells_from;
    uint64_t n_passes, n_visited, n_moved;
} fbf_bf_compression;
/* due: where moved reservations are noted (NULL on the fast path); x:
 * the search facts a move makes stale (NULL on the plain path). */
int fbf_bf_compress(fbf_bf_compression *c, fbf_bf_due *due, fbf_bf_search *x, fbf_sched *s,
                    fbf_error *err);
/* index_add: -ENOMEM when qi cannot take the job; remove: no-op for a job
 * not indexed. */
int fbf_bf_index_add(fbf_bf_compression *c, fbf_sched *s, fbf_job_h h);
void fbf_bf_index_remove(fbf_bf_compression *c, fbf_sched *s, fbf_job_h h);
/* [start, end) was released (only its part after now matters). */
int fbf_bf_released(fbf_bf_compression *c, double now, double start, double end);
void fbf_bf_compression_fini(fbf_bf_compression *c);

/* ---- conservative.c: unlimited depth, D7 (b)-(d) around compression
 * (a); p is borrowed (policy.c's); the parts below are its own ---- */
typedef struct fbf_bf_conservative {
    fbf_profile *p;
    bool fast;             /* indexes and caches on; off: the plain loops */
    fbf_hvec arrivals;     /* submitted since the last pass */
    fbf_hvec tmp;          /* per-pass scratch */
    fbf_bf_sort_item *sorted;
    size_t sorted_cap;
    size_t live_rsv;       /* waiting jobs holding a reservation */
    size_t zero_waiting;   /* waiting jobs of walltime 0 */
    size_t corner_min_batch, scratch_keep; /* tuning.h */
    uint64_t n_placed, scratch_frees;
    fbf_bf_due due;        /* plain path */
    fbf_bf_search search;  /* fast path */
    fbf_bf_compression cmp;
} fbf_bf_conservative;
/* qorder: the queue order qi keeps (fast path). -ENOMEM. */
int fbf_bf_conservative_init(fbf_bf_conservative *c, fbf_profile *p, bool fast,
                             const fbf_order_ops *qorder, const fbf_backfill_tuning *t);
void fbf_bf_conservative_fini(fbf_bf_conservative *c);
/* The engine's events (policy_api.h), this depth's share of them. */
int fbf_bf_conservative_submitted(fbf_bf_conservative *c, fbf_job_h h);
int fbf_bf_conservative_released(fbf_bf_conservative *c, double now, double a, double b);
int fbf_bf_conservative_withdrawn(fbf_bf_conservative *c, fbf_sched *s, fbf_job_h h);
int fbf_bf_conservative_rekeyed(fbf_bf_conservative *c, fbf_sched *s, fbf_job_h h, bool done);
int fbf_bf_conservative_decide(fbf_bf_conservative *c, fbf_sched *s, fbf_error *err);
double fbf_bf_conservative_estimate(fbf_bf_conservative *c, fbf_sched *s, uint32_t res,
                                    double walltime);

#endif
