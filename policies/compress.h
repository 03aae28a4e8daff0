/*
 * compress: test hooks of conservative backfilling's compression pass
 * (policies/compress.c) and arrivals (policies/conservative.c). Not
 * thread-safe: set before creating engines.
 */
#ifndef FBF_COMPRESS_H
#define FBF_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Tests only. budget: the work budget of a pass over the per-size trees,
 * in units (a subtree test or a profile search), 0 for the default; a
 * small one makes passes fall back to the single tree early.
 * always_sizes: use the per-size trees in every pass with holes, whatever
 * the last pass moved. no_memo: never memoise window tests. All false/0
 * restores the defaults. The decisions are the same in every case. */
void fbf_backfill_set_compress_tuning(size_t budget, bool always_sizes, bool no_memo);

/* Passes run over the per-size trees so far, and how many of them spent
 * their budget and finished over the single tree. */
void fbf_backfill_compress_stats(unsigned long *sized, unsigned long *fell_back);

/* Tests only. span_share for the run tables (policies/runs.h): 0 builds
 * every table, however wide; FBF_RUNS_SPAN_SHARE is the default. */
void fbf_backfill_set_runs_share(unsigned span_share);

/* Tests only. The smallest batch of arrivals placed with corner facts
 * (conservative.c); 0 restores the default. The decisions are the same
 * whatever it is. Returns the batches placed with them so far. */
unsigned long fbf_backfill_set_corner_batch(size_t min_batch);

#endif
