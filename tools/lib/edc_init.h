/*
 * edc_init: an External Decision Component's init string, as Batsim 5
 * passes it (`batsim -l LIB INIT`, `batsim -s ENDPOINT INIT`): a JSON
 * object of fastbf's options under their command-line names, read over
 * the options already set (the library's defaults, or the process's
 * command line):
 *   policy ("fcfs", "easy", "conservative"), reservation_depth (>= 1 or
 *   "unlimited", backfilling only), order and backfill_order (the names of
 *   policies/orders/registry.h), estimate ("walltime", "exact",
 *   "predict"), workers (1..256), format ("json",
 *   "binary"), kill_after, max_wait (seconds > 0), energy_saving (seconds
 *   >= 0), switch_delays ("OFF:ON"), sleep_pstate, compute_pstate,
 *   verbose (a boolean), register_workload (a workload file whose jobs
 *   fastbf registers itself, tools/lib/register_plan.h).
 * An empty string (or only a NUL) changes nothing. Errors: -EINVAL with
 * one line naming the key: an unknown key, a bad value, a string that is
 * not a JSON object; a register_workload file that cannot be read is its
 * reader's error, after the key.
 */
#ifndef FBF_EDC_INIT_H
#define FBF_EDC_INIT_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "io/bv5_edc.h"
#include "io/submitter.h"

/* What the options point to, kept by the caller beside them: the power
 * settings, the log choice, and the registration plan (owned: the caller
 * destroys it after the EDC; NULL when the init string names none). */
typedef struct fbf_edc_setup {
    fbf_power_config power;
    bool verbose;
    fbf_submitter *submitter;
} fbf_edc_setup;

int fbf_edc_init_read(const char *init, size_t len, fbf_bv5_options *o, fbf_edc_setup *setup,
                      fbf_error *err);

#endif
