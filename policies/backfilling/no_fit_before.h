/*
 * no_fit_before: per res, "no window of res r for w seconds starts before
 * x" facts learnt while one batch of conservative arrivals is placed (the
 * profile only fills up, so they stay true), as a staircase over w; a
 * job's search starts from the bound they give. reset forgets them all; a
 * class stops learning at FBF_BF_FITS_PER_RES facts (looser bounds only).
 * Not thread-safe. Details: docs/backfilling.md.
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
