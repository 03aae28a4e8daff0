/*
 * common: helpers shared by the policies, built only on the engine's API.
 *
 * fbf_policy_running_profile() fills a profile with the spans of the
 * running jobs ([start, est_end) each), which is what "the profile of the
 * running jobs" means in scheduling-semantics.md D6/D7. Jobs of zero or
 * unknown walltime hold no span (unknown: the caller must decide what it
 * means; the function reports whether it saw one).
 */
#ifndef FBF_POLICY_COMMON_H
#define FBF_POLICY_COMMON_H

#include <stdbool.h>

#include "engine/policy_api.h"
#include "engine/profile.h"

/* Adds every running job's span to p. Returns 0, or -ENOMEM; *unknown is
 * set when a running job has no walltime. */
int fbf_policy_running_profile(fbf_sched *s, fbf_profile *p, bool *unknown);

/* Adds/removes the span a job holds from `from` for its walltime. Spans of
 * zero length hold nothing and are skipped, as D7 says. */
int fbf_policy_hold(fbf_profile *p, double from, const fbf_job *j);
int fbf_policy_release(fbf_profile *p, double from, const fbf_job *j);

/* v, holding n elements of `size` bytes in *cap, with room for one more
 * (grown to `first`, then doubled); NULL, v unchanged, out of memory. */
void *fbf_policy_grow(void *v, size_t *cap, size_t n, size_t size, size_t first);

#endif
