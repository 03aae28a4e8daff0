/*
 * machine_runs: the state of every compute machine, kept as runs of
 * consecutive ids in the same state, for engine/power.c.
 *
 * A platform of 2^31 machines that all sleep, or all idle since the same
 * instant, is one run: memory and time follow the number of distinct
 * states (about the jobs and holds that made them), not the ids. Runs
 * cover exactly the compute machines, sorted by id, and neighbours with
 * the same state (lo = previous hi + 1, every field equal) are merged.
 * Fields that do not apply to a state are kept at one value (ON: req_at
 * 0, wake_at INFINITY, no hold; otherwise idle_since 0) so that equal
 * states compare equal.
 *
 * Ownership: the caller's struct; fbf_mruns_init() / fbf_mruns_fini().
 * Errors: -ENOMEM (the runs are then as before the call).
 */
#ifndef FBF_MACHINE_RUNS_H
#define FBF_MACHINE_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/idset.h"
#include "engine/jobs.h"

typedef struct fbf_mrun {
    uint32_t lo, hi;
    uint8_t st;        /* fbf_machine_state */
    double idle_since; /* ON: free since (energy saving's idle timer) */
    double req_at;     /* switching: when the switch was requested */
    double wake_at;    /* not ON: when to send its switch-on (INFINITY: on demand) */
    fbf_job_h hold;    /* not ON: the hold it belongs to (engine_int.h) */
} fbf_mrun;

typedef struct fbf_mruns {
    fbf_mrun *v;
    size_t n, cap;
    fbf_mrun *tmp; /* the next runs, while a change is applied */
    size_t tmp_cap;
} fbf_mruns;

/* Every machine of compute ON, idle since 0. */
int fbf_mruns_init(fbf_mruns *r, const fbf_idset *compute);
void fbf_mruns_fini(fbf_mruns *r);

/* The run holding id, or NULL when id is not a compute machine. */
const fbf_mrun *fbf_mruns_find(const fbf_mruns *r, uint32_t id);

/* Calls fn on the part of each run that lies in set (NULL: every run),
 * in id order: piece is a copy whose lo and hi are that part's. A
 * non-zero return stops the walk and is returned. Ids of set that are not
 * compute machines are skipped. */
int fbf_mruns_each(const fbf_mruns *r, const fbf_idset *set,
                   int (*fn)(void *ctx, const fbf_mrun *piece), void *ctx);

/* As fbf_mruns_each, but fn may change the piece's state (not its lo and
 * hi) and returns 0 or a negative errno: runs are split at set's bounds
 * and equal neighbours merged after. A negative return from fn leaves the
 * runs as they were and is returned (what fn did to its own ctx stays). */
int fbf_mruns_change(fbf_mruns *r, const fbf_idset *set, int (*fn)(void *ctx, fbf_mrun *piece),
                     void *ctx);

#endif
