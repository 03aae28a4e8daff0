/*
 * backfill_int: state shared by the backfilling family's two halves,
 * policies/backfilling/policy.c (ops table, finite depth: EASY and k, D6/D8) and
 * policies/backfilling/conservative.c (unlimited depth, D7). Private to policies/.
 *
 * Invariant between passes: the profile holds exactly the running jobs'
 * spans [start, est_end), plus, when persistent, every waiting job's
 * reservation span [rsv, rsv + walltime) (walltime > 0 only). When the
 * fast paths are on, qi indexes exactly the waiting jobs that hold a
 * reservation (persistent), wq (finite depth) exactly the waiting jobs,
 * and `pending` holds every span of the profile
 * released since the last compression pass (see conservative.c).
 */
#ifndef FBF_BACKFILL_INT_H
#define FBF_BACKFILL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/backfilling/queue_index.h"
#include "policies/backfilling/tuning.h"

typedef struct fbf_bf_rsv_item {
    double t;
    fbf_job_h j;
} fbf_bf_rsv_item;

typedef struct fbf_bf_sort_item {
    double key, subtime;
    uint64_t seq;
    fbf_job_h j;
} fbf_bf_sort_item;

/* A released time range [a, b); mf bounds free() from above over it. */
typedef struct fbf_bf_hole {
    double a, b;
    int64_t mf;
} fbf_bf_hole;

typedef struct fbf_bf_holes {
    fbf_bf_hole *v;
    size_t n, cap;
} fbf_bf_holes;

/* A fact learnt by a search from now: no window of res >= h free for
 * >= d starts in [lo, hi) (see conservative.c, the skip cache). */
#define FBF_BF_SKIP_MAX 32

typedef struct fbf_bf_skip {
    uint32_t h;
    double d, lo, hi;
} fbf_bf_skip;

typedef struct fbf_bf_windex fbf_bf_windex;
typedef struct fbf_bf_runs fbf_bf_runs;

typedef struct fbf_backfill {
    int64_t depth;
    bool persistent;
    bool fast; /* indexes and caches on; off: the plain D7(a) and D6 loops */
    bool same_order; /* the backfill order is the queue order (D9) */
    fbf_profile *p;
    fbf_hvec arrivals; /* persistent: submitted since the last pass */
    fbf_hvec tmp;      /* per-pass scratch */
    fbf_bf_sort_item *sorted;
    size_t sorted_cap;
    fbf_bf_rsv_item *heap; /* plain path: due reservations (conservative.c) */
    size_t heap_n, heap_cap, live_rsv;
    size_t zero_waiting; /* persistent: waiting jobs of walltime 0 */
    fbf_qindex *qi;      /* persistent, fast: the reserved jobs */
    fbf_bf_windex *wq; /* finite depth, fast: every waiting job (may_backfill.c) */
    fbf_bf_holes pending; /* released since the last compression */
    fbf_bf_holes holes;   /* the current compression's released region */
    fbf_bf_runs *runs;    /* per hole of `holes`, its runs (hole_runs.c; NULL: none) */
    bool runs_failed;     /* runs could not be allocated: searches only */
    double max_wall;      /* the longest walltime ever indexed in qi */
    fbf_bf_skip skip[FBF_BF_SKIP_MAX];
    size_t skip_n;
    double *corner;   /* persistent: corner facts of a batch (conservative.c) */
    struct fbf_bf_fits *fits; /* persistent: fit facts of a batch (no_fit_before.h) */
    uint32_t floor_h; /* the smallest job searched for (floor_d 0: none yet) */
    double floor_d;
    /* Work done (persistent): compression passes, reservations they
     * re-placed, of which moved to an earlier start, and arrivals placed. */
    uint64_t n_passes, n_visited, n_moved, n_placed;
    fbf_backfill_tuning tune; /* this engine's options (tuning.h) */
    fbf_backfill_stats stats; /* which paths ran (tuning.h) */
} fbf_backfill;

int fbf_backfill_start_job(fbf_backfill *b, fbf_sched *s, fbf_job_h h, fbf_start_reason why,
                           fbf_error *err);

/* policy.c: the plain scan, in the backfill order, from the place
 * `after` on (after it when strict; NULL: from the head). */
int fbf_backfill_plain_scan(fbf_backfill *b, fbf_sched *s, const fbf_qindex_probe *after,
                            bool strict, fbf_error *err);

/* may_backfill.c: the waiting jobs indexed for the finite-depth scan. add:
 * -ENOMEM (index unchanged); remove: no-op for a job not indexed; update:
 * after the job's rsv changed. */
fbf_bf_windex *fbf_bf_windex_create(const fbf_order_ops *backfill_order);
void fbf_bf_windex_destroy(fbf_bf_windex *w);
int fbf_bf_windex_add(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
void fbf_bf_windex_remove(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
void fbf_bf_windex_update(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h);
/* Starts, in the backfill order, every waiting job after `last` (from the
 * head: FBF_JOB_NONE) that fits now (the plain scan's decisions), through
 * b->wq. */
int fbf_bf_indexed_scan(fbf_backfill *b, fbf_sched *s, fbf_job_h last, fbf_error *err);

/* conservative.c */
/* Notes that job j's reservation is now t, for finding due reservations:
 * the plain path's min-heap takes an entry (-ENOMEM); on the fast path qi
 * already holds it and this does nothing (conservative.c). */
int fbf_bf_due_note(fbf_backfill *b, double t, fbf_job_h j);
/* Forgets what the skip cache knows about windows meeting [x, y). */
void fbf_bf_skip_release(fbf_backfill *b, double x, double y);
int fbf_backfill_decide_persistent(fbf_backfill *b, fbf_sched *s, fbf_error *err);
double fbf_backfill_estimate_persistent(fbf_backfill *b, fbf_sched *s, uint32_t res,
                                        double walltime);
void fbf_backfill_fini_persistent(fbf_backfill *b);

/* move_earlier.c: D7 (a), the index of the reserved jobs (qi) and the
 * released ranges. index_add: -ENOMEM when qi cannot take the job;
 * index_remove: no-op for a job not indexed. */
int fbf_bf_compress(fbf_backfill *b, fbf_sched *s, fbf_error *err);
int fbf_bf_index_add(fbf_backfill *b, fbf_sched *s, fbf_job_h h);
void fbf_bf_index_remove(fbf_backfill *b, fbf_sched *s, fbf_job_h h);
void fbf_bf_index_fini(fbf_backfill *b);
void fbf_backfill_released(fbf_backfill *b, double now, double start, double end);

#endif
