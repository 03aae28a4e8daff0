/*
 * fits: what a batch of conservative arrivals has learnt about where
 * windows cannot start (policies/backfilling/no_fit_before.c). Private to policies/.
 *
 * While one batch of arrivals is placed the profile only fills up, so
 * "no window of res r free for w seconds starts in [now, t)" stays true
 * once learnt, and holds for every (r, w') with w' >= w. Each placement
 * teaches one such fact, its own earliest fit; a later job of the same
 * res then starts its search from the fit of the longest walltime not
 * above its own, instead of walking every island of free() >= r too
 * short for it. Facts are kept per res, as a staircase over walltime
 * (walltimes and starts both strictly increasing: a fact whose start is
 * no later than a shorter job's is useless).
 *
 * Ownership: _create/_destroy; reset forgets every fact (a completion or
 * a moved reservation frees capacity, and facts would lie). A class stops
 * learning at FBF_BF_FITS_PER_RES facts: fewer facts only loosen bounds.
 * Not thread-safe.
 */
#ifndef FBF_FITS_H
#define FBF_FITS_H

#include <stddef.h>
#include <stdint.h>

#define FBF_BF_FITS_PER_RES 4096u

typedef struct fbf_bf_fits fbf_bf_fits;

/* NULL on allocation failure. */
fbf_bf_fits *fbf_bf_fits_create(void);
void fbf_bf_fits_destroy(fbf_bf_fits *f);
/* Forgets every fact (storage is kept: destroy gives it back). */
void fbf_bf_fits_reset(fbf_bf_fits *f);

/* The latest t known such that no window (res, walltime) starts before
 * it; -INFINITY when nothing is known. */
double fbf_bf_fits_bound(const fbf_bf_fits *f, uint32_t res, double walltime);

/* No window (res, walltime) starts before t. 0, or -ENOMEM (nothing
 * learnt, every bound still true). */
int fbf_bf_fits_learn(fbf_bf_fits *f, uint32_t res, double walltime, double t);

/* Bytes held. */
size_t fbf_bf_fits_bytes(const fbf_bf_fits *f);

#endif
