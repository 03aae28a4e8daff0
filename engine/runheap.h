/*
 * runheap: a binary min-heap of (end, job) pairs, the engine's running
 * jobs ordered by estimated end. Entries are plain values; whether one is
 * still live (the job still runs with that end) is the caller's business.
 *
 * Ownership: a value the caller embeds; zero-initialised is empty;
 * fbf_runheap_fini() frees it. Push may fail with -ENOMEM (heap unchanged).
 */
#ifndef FBF_RUNHEAP_H
#define FBF_RUNHEAP_H

#include <stddef.h>

#include "engine/engine.h"

typedef struct fbf_runheap_item {
    double end;
    fbf_job_h job;
} fbf_runheap_item;

typedef struct fbf_runheap {
    fbf_runheap_item *v;
    size_t n, cap;
} fbf_runheap;

int fbf_runheap_push(fbf_runheap *h, double end, fbf_job_h j);
/* Removes the smallest entry (n > 0 required). */
void fbf_runheap_pop(fbf_runheap *h);
void fbf_runheap_fini(fbf_runheap *h);

#endif
