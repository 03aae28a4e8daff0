/*
 * idset: sets of resource ids in Batsim's interval-set notation.
 *
 * A set is a sorted array of disjoint, non-adjacent closed ranges
 * [lo, hi] (invariant: r[i].lo <= r[i].hi and r[i].hi + 1 < r[i+1].lo), so
 * every set has exactly one representation and formats canonically:
 * ascending, maximal ranges, one space between them: "0-3 8 10-11".
 *
 * Ownership: an fbf_idset is a value the caller owns (stack or embedded);
 * fbf_idset_init() makes it empty without allocating and fbf_idset_fini()
 * frees its storage. Functions that grow a set may return -ENOMEM, after
 * which the set is left unchanged.
 *
 * Parsing is strict: tokens are "N" or "N-M" with N <= M, decimal digits
 * only (no sign, no leading '+', no leading zeros except "0" itself), values
 * below 2^31, separated by exactly one space, no leading/trailing space.
 * Tokens may come in any order and may overlap or touch (Batsim accepts
 * "3 0-2"); the result is normalised. The empty string is the empty set.
 */
#ifndef FBF_IDSET_H
#define FBF_IDSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"

typedef struct fbf_range {
    uint32_t lo, hi;
} fbf_range;

typedef struct fbf_idset {
    fbf_range *r;
    uint32_t n;   /* number of ranges */
    uint32_t cap; /* allocated ranges */
} fbf_idset;

#define FBF_IDSET_MAX_ID 0x7fffffffu

void fbf_idset_init(fbf_idset *s);
void fbf_idset_fini(fbf_idset *s);
void fbf_idset_clear(fbf_idset *s);

/* Replaces s with the parsed set. -EINVAL with a message naming the
 * offending token and its position on malformed input (s unchanged). */
int fbf_idset_parse(fbf_idset *s, const char *str, fbf_error *err);

/* Writes the canonical form, NUL-terminated, truncated to cap bytes like
 * snprintf. Returns the length the full string needs (without the NUL). */
size_t fbf_idset_format(const fbf_idset *s, char *buf, size_t cap);

/* Returns the canonical form in a malloc'ed string (caller frees), or NULL
 * on allocation failure. */
char *fbf_idset_to_string(const fbf_idset *s);

/* Number of ids in the set. */
uint64_t fbf_idset_count(const fbf_idset *s);

int fbf_idset_copy(fbf_idset *dst, const fbf_idset *src);
bool fbf_idset_equal(const fbf_idset *a, const fbf_idset *b);
bool fbf_idset_contains(const fbf_idset *s, uint32_t id);
/* True when every id of sub is in s. */
bool fbf_idset_contains_all(const fbf_idset *s, const fbf_idset *sub);
bool fbf_idset_intersects(const fbf_idset *a, const fbf_idset *b);

/* s := s U [lo, hi]. lo <= hi required (-EINVAL otherwise). */
int fbf_idset_add_range(fbf_idset *s, uint32_t lo, uint32_t hi);
/* dst := dst U src. */
int fbf_idset_union(fbf_idset *dst, const fbf_idset *src);
/* dst := dst \ src. */
int fbf_idset_subtract(fbf_idset *dst, const fbf_idset *src);

/* Moves the n lowest ids of from into out (out is replaced). -ENOSPC if
 * from holds fewer than n ids (nothing moves). Cost: O(ranges touched)
 * plus one memmove of the remaining ranges (bench/idset_bench.cc). */
int fbf_idset_take_lowest(fbf_idset *from, uint32_t n, fbf_idset *out);

#endif
