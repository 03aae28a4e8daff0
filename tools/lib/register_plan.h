/*
 * register_plan: the jobs of a workload file as a registration plan
 * (io/submitter.h) for fastbf's submitter mode (--register-workload, the
 * init string's register_workload): every job at its subtime, with its
 * workload's profile (SWF: one delay profile per run time), under the
 * workload name "dyn", apart from what Batsim submits itself; skip_short:
 * SWF lines of fewer than 18 fields are skipped (else refused).
 *
 * Ownership: the caller destroys the result (fbf_submitter_destroy()).
 * Errors: NULL with err set: the file's (tools/lib/workload.h) or the
 * plan's (-EINVAL, io/submitter.h), -ENOMEM.
 */
#ifndef FBF_REGISTER_PLAN_H
#define FBF_REGISTER_PLAN_H

#include <stdbool.h>

#include "engine/error.h"
#include "io/submitter.h"

fbf_submitter *fbf_register_plan_load(const char *path, double pause, bool skip_short,
                                      fbf_error *err);

#endif
