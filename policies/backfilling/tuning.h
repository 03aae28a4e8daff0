/*
 * tuning: the backfilling family's options and statistics, per engine.
 * Options go in fbf_engine_config.policy_options (a fbf_backfill_tuning,
 * read at create; NULL: fbf_backfill_tuning_defaults()). None changes a
 * decision: they choose between exact paths, for tests. Statistics count
 * which paths ran, read through the engine (fbf_backfill_stats_of).
 */
#ifndef FBF_BACKFILL_TUNING_H
#define FBF_BACKFILL_TUNING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

#define FBF_BF_CORNER_MIN_BATCH 256 /* defaults (hole_runs.h: the runs') */
#define FBF_BF_SCRATCH_KEEP 4096u

typedef struct fbf_backfill_tuning {
    bool plain;              /* the plain loops of D6/D7 (a), no indexes */
    unsigned runs_share;     /* hole_runs.h span_share; 0: every table */
    size_t runs_cells_from;  /* ranges released before they are indexed */
    size_t corner_min_batch; /* smallest batch placed with corner facts */
    size_t scratch_keep;     /* scratch entries kept between decisions */
} fbf_backfill_tuning;

fbf_backfill_tuning fbf_backfill_tuning_defaults(void);

typedef struct fbf_backfill_stats {
    uint64_t plain_fallbacks; /* indexed scans finished plainly (budget) */
    uint64_t corner_batches;  /* batches of arrivals placed by corners */
    uint64_t fit_starts;      /* searches started from a fit fact */
    uint64_t scratch_frees;   /* scratch buffers freed after a pass */
} fbf_backfill_stats;

/* The statistics of e's backfilling policy so far: 0, or -EINVAL when e
 * does not run the backfilling family. */
int fbf_backfill_stats_of(const fbf_engine *e, fbf_backfill_stats *out);

#endif
