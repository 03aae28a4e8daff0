/*
 * compress: test hooks of conservative backfilling's compression pass
 * (policies/backfilling/move_earlier.c) and arrivals (policies/backfilling/conservative.c). Not
 * thread-safe: set before creating engines.
 */
#ifndef FBF_COMPRESS_H
#define FBF_COMPRESS_H

#include <stddef.h>

/* Tests only. span_share for the run tables (policies/backfilling/hole_runs.h): 0 builds
 * every table, however wide; FBF_RUNS_SPAN_SHARE is the default. */
void fbf_backfill_set_runs_share(unsigned span_share);
/* Tests only. How many ranges a pass releases before they are indexed
 * (policies/backfilling/hole_runs.h: FBF_RUNS_CELLS_FROM, the default, also restored by
 * 0). The decisions are the same whatever it is. */
void fbf_backfill_set_runs_cells(size_t from);

/* Tests only. The smallest batch of arrivals placed with corner facts
 * (conservative.c); 0 restores the default. The decisions are the same
 * whatever it is. Returns the batches placed with them so far. */
unsigned long fbf_backfill_set_corner_batch(size_t min_batch);
/* Tests only. Placements so far whose search started from a fit fact
 * (policies/backfilling/no_fit_before.h) later than their corner's. */
unsigned long fbf_backfill_fit_starts(void);

/* Tests only. After each decision point, conservative frees the scratch
 * of its passes (sort buffer, handle vectors) that holds more than keep
 * entries; FBF_BF_SCRATCH_KEEP is the default. The decisions are the same
 * whatever it is. Returns the buffers freed so far. */
#define FBF_BF_SCRATCH_KEEP 4096u
unsigned long fbf_backfill_set_scratch_keep(size_t keep);

#endif
