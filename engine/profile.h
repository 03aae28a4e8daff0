/*
 * profile: resource availability as a step function of time.
 *
 * The profile answers the one question backfilling asks — "from time t0
 * on, when is the earliest moment n resources stay free for d seconds?" —
 * and takes spans in and out ("n resources busy over [start, end)").
 *
 * Model: capacity C (total resources). used(u) = sum of n over every span
 * [s, e) with s <= u < e. free(u) = C - used(u). Intervals are half-open.
 * Times are IEEE doubles and are compared exactly: a span must be removed
 * with the very same (start, end, n) it was added with.
 *
 * Representation (why it scales): an ordered balanced tree keyed by time
 * (a B+ tree, engine/profile_tree.h) that holds, per key, the change of
 * used() at that time (+n at a span's start, -n at its end). Each subtree
 * keeps the sum of its deltas and the maximum and minimum prefix sums
 * over its keys, so used(u), the maximum of used() over a window, and
 * "first key after t where used() <= x" are O(log B) with B breakpoints. A key stays while some live span starts or
 * ends there (even if its deltas cancel out, so that either span can
 * still be removed) and goes with the last of them, so B <= 2 * (live
 * spans). No scan from the front, ever.
 *
 * Ownership: fbf_profile_create() returns a profile the caller destroys
 * with fbf_profile_destroy() (NULL accepted). Not thread-safe for writers;
 * concurrent readers (earliest/free_at) are safe while nobody writes.
 */
#ifndef FBF_PROFILE_H
#define FBF_PROFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct fbf_profile fbf_profile;

/* NULL with errno = ENOMEM on allocation failure. */
fbf_profile *fbf_profile_create(uint32_t capacity);
void fbf_profile_destroy(fbf_profile *p);

uint32_t fbf_profile_capacity(const fbf_profile *p);

/* Marks n resources busy over [start, end). start < end required, and
 * end may be INFINITY (a span with no end). -EINVAL on start >= end or
 * n == 0; -ENOMEM on allocation failure (profile unchanged). It is the
 * caller's business not to exceed capacity; the profile does not refuse. */
int fbf_profile_add(fbf_profile *p, double start, double end, uint32_t n);

/* Undoes one fbf_profile_add(p, start, end, n). -ENOENT if no breakpoint
 * exists at start or end (profile unchanged). */
int fbf_profile_remove(fbf_profile *p, double start, double end, uint32_t n);

/* free(t). */
int64_t fbf_profile_free_at(const fbf_profile *p, double t);

/* Minimum of free(u) over u in [t, t + d); for d == 0, free(t). */
int64_t fbf_profile_min_free(const fbf_profile *p, double t, double d);

/* The smallest t >= from, taken among {from} and the breakpoints after
 * from, such that free(u) >= n for every u in [t, t + d) (for d == 0:
 * free(t) >= n). Returns it, or INFINITY if n > capacity. d may be
 * INFINITY (then the answer is the first t after which free never drops
 * below n). Cost: a forward walk over the breakpoints up to the answer,
 * passing whole subtrees where free() stays below n or at least n, or
 * where all keys lie closer than d; past a few thousand steps, O(log B)
 * per island of free() >= n too short for d jumped over. */
double fbf_profile_earliest(const fbf_profile *p, double from, uint32_t n, double d);

/* fbf_profile_earliest() cut off at limit: the same answer when it is
 * below limit, INFINITY otherwise. Cost: the walk over [from, limit)
 * only, which is what makes searches local. */
double fbf_profile_earliest_before(const fbf_profile *p, double from, uint32_t n, double d,
                                   double limit);

/* The last breakpoint k with lo < k < hi from which free() < n, or
 * -INFINITY; the first such k > after, or INFINITY. O(log B): where runs
 * of free() >= n end. */
double fbf_profile_last_below(const fbf_profile *p, double lo, double hi, uint32_t n);
double fbf_profile_first_below(const fbf_profile *p, double after, uint32_t n);

/* Maximum of free(u) over u in [t0, t1) (free(t0) if t1 <= t0). */
int64_t fbf_profile_max_free(const fbf_profile *p, double t0, double t1);

/* The largest breakpoint <= t, or -INFINITY if there is none. */
double fbf_profile_key_floor(const fbf_profile *p, double t);

/* Number of breakpoints currently stored (for tests and benchmarks). */
size_t fbf_profile_breakpoints(const fbf_profile *p);

/* Calls fn(time, used_after, ctx) for each breakpoint in ascending order,
 * used_after being used() from that breakpoint on (for tests and dumps). */
void fbf_profile_foreach(const fbf_profile *p,
                         void (*fn)(double t, int64_t used_after, void *ctx),
                         void *ctx);

/* Calls fn(time, used_after, ctx) for each breakpoint t0 < time < t1 in
 * ascending order: with free_at(t0), the step function over [t0, t1), in
 * O(log B + K), K the breakpoints visited. */
void fbf_profile_foreach_between(const fbf_profile *p, double t0, double t1,
                                 void (*fn)(double t, int64_t used_after, void *ctx),
                                 void *ctx);

#endif
