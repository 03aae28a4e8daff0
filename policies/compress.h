/*
 * compress: test hooks of conservative backfilling's compression pass
 * (policies/compress.c). Not thread-safe: set before creating engines.
 */
#ifndef FBF_COMPRESS_H
#define FBF_COMPRESS_H

#include <stddef.h>

/* Tests only: the work budget of a pass over the per-size trees, in
 * units (a subtree test or a profile search); 0 restores the default.
 * A small budget makes passes fall back to the all-jobs tree early. */
void fbf_backfill_set_compress_budget(size_t units);

/* How many passes have spent their budget and finished over the
 * all-jobs tree. */
unsigned long fbf_backfill_compress_fallbacks(void);

#endif
