/*
 * sched_choice: the options that pick how the backfilling family orders
 * and estimates (scheduling-semantics.md D9, D10), shared by fastbf,
 * fastbf-replay --inproc and Batsim 5's init string:
 *   --order NAME           the queue order (default submit)
 *   --backfill-order NAME  the backfill order (default: the queue order)
 *   --estimate NAME        walltime (default), exact or predict
 *   --preset NAME          easy++: --policy easy --estimate predict
 *                          --backfill-order sjf (Tsafrir, Etsion and
 *                          Feitelson's EASY++); options given beside a
 *                          preset win over it
 * Strings are borrowed; NULL means not given.
 */
#ifndef FBF_SCHED_CHOICE_H
#define FBF_SCHED_CHOICE_H

#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"
#include "engine/error.h"

typedef struct fbf_sched_choice {
    const char *policy, *order, *backfill_order, *estimate, *preset;
} fbf_sched_choice;

/* Fills cfg's order, backfill_order and estimate, and *policy (the
 * preset's when none was given; left alone otherwise). -EINVAL with one
 * line in err naming the option and the known names. */
int fbf_sched_choice_apply(const fbf_sched_choice *c, fbf_engine_config *cfg,
                           const char **policy, fbf_error *err);

/* ", order sjf, backfill order ..., estimate predict" for what differs
 * from the defaults, "" when nothing does (the announce lines). */
void fbf_sched_choice_describe(const fbf_engine_config *cfg, char *buf, size_t cap);

/* The --help lines of the four options, indented to `indent` columns. */
void fbf_sched_choice_usage(FILE *out, int indent);

#endif
