/*
 * level_runs: for every level r at once, the widest run of free() >= r
 * and its latest end over a region of the profile (a staircase of steps
 * (h, w, e), levels decreasing), and the staircase of steps gathered from
 * several. A gathering: _clear, _sweep regions or _gather staircases,
 * _take. Scratch of one gathering at a time; -ENOMEM loses it. Details:
 * docs/backfilling.md.
 */
#ifndef FBF_STAIRS_H
#define FBF_STAIRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/profile.h"

typedef struct fbf_bf_stair {
    int64_t h;
    double w, e; /* widest run, latest end, among runs at levels >= h */
} fbf_bf_stair;

/* Runs of free() over [lo, hi) that meet [ha, hb] (closed). Where cut_lo
 * (cut_hi) holds, the region's edge there is a reach, not a drop of
 * free(): a run cut by it counts as unbounded (w, and for cut_hi e,
 * INFINITY). */
typedef struct fbf_bf_region {
    double lo, hi, ha, hb;
    bool cut_lo, cut_hi;
} fbf_bf_region;

typedef struct fbf_bf_stairs fbf_bf_stairs;

fbf_bf_stairs *fbf_bf_stairs_create(void);
void fbf_bf_stairs_destroy(fbf_bf_stairs *s);

void fbf_bf_stairs_clear(fbf_bf_stairs *s);
/* Every maximal run of free() >= h over g, once, for the h that is its
 * minimum: O(K) for K breakpoints in [g->lo, g->hi). 0 or -ENOMEM. */
int fbf_bf_stairs_sweep(fbf_bf_stairs *s, const fbf_profile *p, const fbf_bf_region *g);
/* n steps of a staircase made before. 0 or -ENOMEM. */
int fbf_bf_stairs_gather(fbf_bf_stairs *s, const fbf_bf_stair *v, size_t n);
/* The staircase of what was gathered, with levels in [1, cap], into *v
 * (*n steps; *vcap allocated, grown as needed). 0 or -ENOMEM (*v as it
 * was). */
int fbf_bf_stairs_take(fbf_bf_stairs *s, int64_t cap, fbf_bf_stair **v, size_t *n, size_t *vcap);

/* One past the last step of v (n steps) at level >= res: 0 when no run
 * of free() >= res was gathered. */
size_t fbf_bf_stairs_at(const fbf_bf_stair *v, size_t n, uint32_t res);

/* The staircase of a and b together into *v (*n steps; *vcap allocated,
 * grown as needed; v must be neither a nor b): O(na + nb). 0 or -ENOMEM
 * (*v as it was). */
int fbf_bf_stairs_merge2(const fbf_bf_stair *a, size_t na, const fbf_bf_stair *b, size_t nb,
                         fbf_bf_stair **v, size_t *n, size_t *vcap);

#endif
