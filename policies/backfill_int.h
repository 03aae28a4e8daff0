/*
 * backfill_int: state shared by the backfilling family's two halves,
 * policies/backfill.c (ops table, finite depth: EASY and k, D6/D8) and
 * policies/conservative.c (unlimited depth, D7). Private to policies/.
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
#include <stdint.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/qindex.h"

typedef struct fbf_bf_rsv_item {
    double t;
    fbf_job_h j;
} fbf_bf_rsv_item;

typedef struct fbf_bf_sort_item {
    double subtime;
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

typedef struct fbf_backfill {
    int64_t depth;
    bool persistent;
    bool fast; /* indexes and caches on; off: the plain D7(a) and D6 loops */
    fbf_profile *p;
    fbf_hvec arrivals; /* persistent: submitted since the last pass */
    fbf_hvec tmp;      /* per-pass scratch */
    fbf_bf_sort_item *sorted;
    size_t sorted_cap;
    fbf_bf_rsv_item *heap;
    size_t heap_n, heap_cap, live_rsv;
    size_t zero_waiting; /* persistent: waiting jobs of walltime 0 */
    fbf_qindex *qi;
    fbf_qindex *wq;  /* finite depth, fast: every waiting job (backfill.c) */
    bool wq_failed;  /* an insertion into wq failed: reported by decide */
    fbf_bf_holes pending; /* released since the last compression */
    fbf_bf_holes holes;   /* the current compression's released region */
    fbf_bf_skip skip[FBF_BF_SKIP_MAX];
    size_t skip_n;
    uint32_t floor_h; /* the smallest job searched for (floor_d 0: none yet) */
    double floor_d;
} fbf_backfill;

int fbf_backfill_start_job(fbf_backfill *b, fbf_sched *s, fbf_job_h h, fbf_start_reason why,
                           fbf_error *err);

/* conservative.c */
int fbf_backfill_decide_persistent(fbf_backfill *b, fbf_sched *s, fbf_error *err);
double fbf_backfill_estimate_persistent(fbf_backfill *b, fbf_sched *s, uint32_t res,
                                        double walltime);
void fbf_backfill_released(fbf_backfill *b, double now, double start, double end);
void fbf_backfill_fini_persistent(fbf_backfill *b);

#endif
