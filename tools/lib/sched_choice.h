/*
 * sched_choice: the options that pick how the backfilling family orders
 * (scheduling-semantics.md D9), shared by fastbf and fastbf-replay
 * --inproc:
 *   --order NAME           the queue order (default submit)
 *   --backfill-order NAME  the backfill order (default: the queue order)
 * Strings are borrowed; NULL means not given.
 */
#ifndef FBF_SCHED_CHOICE_H
#define FBF_SCHED_CHOICE_H

#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine/error.h"

typedef struct fbf_sched_choice {
    const char *policy, *order, *backfill_order;
} fbf_sched_choice;

/* Fills cfg's order and backfill_order (policy is for the options to
 * come). -EINVAL with one line in err naming the option and the known
 * names. */
int fbf_sched_choice_apply(const fbf_sched_choice *c, fbf_engine_config *cfg,
                           const char **policy, fbf_error *err);

/* ", order sjf, backfill order ..." for what differs from the defaults,
 * "" when nothing does (the announce lines). */
void fbf_sched_choice_describe(const fbf_engine_config *cfg, char *buf, size_t cap);

/* The --help lines of the options, indented to `indent` columns. */
void fbf_sched_choice_usage(FILE *out, int indent);

#endif
