/*
 * counters: one line for a policy's work counters (engine/engine.h), as
 * fastbf's log and fastbf-replay's summary print them:
 *   LABEL name value, name value, ...
 * Nothing is printed when there are none.
 */
#ifndef FBF_TOOLS_COUNTERS_H
#define FBF_TOOLS_COUNTERS_H

#include <stddef.h>
#include <stdio.h>

#include "engine/engine.h"

void fbf_counters_print(FILE *f, const char *label, const fbf_policy_counter *c, size_t n);

#endif
