/*
 * hole_runs: for each released range ("hole") of a compression pass, the
 * longest run of free() >= r that meets it, for every r at once, so that
 * may_move.c's test "does a window of r for l fit across this hole" is a
 * binary search, not a walk. Tables stay valid while the pass reports
 * every change of free() (fbf_bf_runs_changed) and follow their hole
 * through fbf_bf_runs_remap. Not thread-safe. Contract and invariants:
 * docs/backfilling.md.
 */
#ifndef FBF_RUNS_H
#define FBF_RUNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/profile.h"
#include "policies/backfilling/state.h"
#include "policies/backfilling/may_move.h"

typedef struct fbf_bf_runs fbf_bf_runs;

/* NULL on allocation failure (the caller then searches the profile). */
fbf_bf_runs *fbf_bf_runs_create(void);
void fbf_bf_runs_destroy(fbf_bf_runs *r);

/* A pass starts (or ends): every table and range is dropped; windows up
 * to `reach` long, of
 * at least min_res resources, matter. With span_share > 0, a table whose
 * region is longer than 1/span_share of the schedule ahead (now to the
 * last breakpoint) is not built and its hole is searched instead: on a
 * short schedule every move would invalidate it, and one sweep of it
 * costs more than the searches it saves. */
#define FBF_RUNS_SPAN_SHARE 8
void fbf_bf_runs_reset(fbf_bf_runs *r, double reach, uint32_t min_res, unsigned span_share);

/* [x, y) was released in this pass (clipped to now): every range that a
 * hole is made of must be added, before the holes are normalised again.
 * Runs that meet no added range are not counted: merged holes span gaps
 * where nothing was released. On allocation failure no table answers
 * until the next reset (the caller searches the profile). */
void fbf_bf_runs_add(fbf_bf_runs *r, double now, double x, double y);

/* The ranges added in this pass that a search for windows of res
 * resources and l seconds must visit, in order: k = fbf_bf_runs_first(r,
 * a) (SIZE_MAX when they are not all known, after an allocation failure:
 * search [a, b) whole), then fbf_bf_runs_next(r, p, now, &k, b, ...)
 * gives each range [x, y) that ends at or after a and starts before b,
 * and false after the last, leaving out those where, by their tables, no
 * run of free() >= res at least l long meets them and every window ends
 * at or before kept - l (INFINITY: no such bound). The left out hold no
 * window of the search that ends before kept; the tables count the
 * profile as it is, so a span taken out of it since (the searching job's
 * own, starting at kept) is not counted. */
size_t fbf_bf_runs_first(const fbf_bf_runs *r, double a);
bool fbf_bf_runs_next(fbf_bf_runs *r, const fbf_profile *p, double now, size_t *k, double b,
                      uint32_t res, double l, double kept, double *x, double *y);

/* Does t lie in a range added in this pass (true too when they are not
 * all known, after an allocation failure)? */
bool fbf_bf_runs_released_at(const fbf_bf_runs *r, double t);

/* Ranges are visited one by one up to this many in a pass; past it an
 * index over them (policies/backfilling/cell_runs.h) lets searches jump over stretches
 * where none can hold a window, and hole tables merge whole stretches at
 * once. Tests lower it with fbf_bf_runs_set_cells_from (0: the default),
 * which lasts across resets. */
#define FBF_RUNS_CELLS_FROM 4096
void fbf_bf_runs_set_cells_from(fbf_bf_runs *r, size_t n);
/* Jumps over cells of ranges r made so far (which path ran, for tests). */
uint64_t fbf_bf_runs_cell_jumps(const fbf_bf_runs *r);

/* free() changed on [x, y): the tables whose region meets it are dropped
 * (required where it grew; where it dropped they would only be loose). */
void fbf_bf_runs_changed(fbf_bf_runs *r, double x, double y);

/* hs was normalised again: tables move to their hole's new index. */
void fbf_bf_runs_remap(fbf_bf_runs *r, const fbf_bf_holes *hs);

/* Over the runs of free() >= res that meet hole i: the longest (INFINITY
 * past the region's reach, 0 if none) and the latest end (INFINITY past
 * the region's reach, -INFINITY if none). */
typedef struct fbf_bf_run_info {
    double longest, latest_end;
} fbf_bf_run_info;

/* Fills *out from hole i's table, merged from its ranges' tables on first
 * use: 0, or -1 if a table could not be allocated, a range's region is
 * too wide to sweep (see span_share), or the ranges are not all known
 * (the caller searches the profile instead). */
int fbf_bf_runs_query(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs, size_t i,
                      double now, uint32_t res, fbf_bf_run_info *out);
/* The first hole i in [from, to) whose table does not rule out, at level
 * res, both a run at least l long and a run ending at or after `end`
 * (one with no table never does); `to` if there is none. One lookup
 * passes over a whole range of holes that all rule both out, through a
 * summary kept over the tables (policies/backfilling/runs_over_holes.h). */
size_t fbf_bf_runs_candidate(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs,
                             double now, size_t from, size_t to, uint32_t res, double l,
                             double end);
/* Its longest, or -1 as above. */
double fbf_bf_runs_longest(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs,
                           size_t i, double now, uint32_t res);

#endif
