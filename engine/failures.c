/*
 * failures: machines out of service, as a peer reports them failed and
 * back (fbf_engine_set_failed(), engine.h).
 *
 * A failed machine is held (engine_int.h) with no known end: to the
 * policies it is a running job that never ends, so nothing is placed or
 * reserved on it. A machine that fails under a running job stays that
 * job's: the engine ends no job by itself (the peer reports how the job
 * ended); when the job's machines come back, the failed ones are held at
 * once instead of being freed. Failures are rare: a plain list suffices.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine/engine_int.h"

static bool is_compute(const fbf_engine *e, uint32_t id)
{
    return fbf_power_is_compute(e->power, id);
}

static long find(const fbf_engine *e, uint32_t id)
{
    for (size_t i = 0; i < e->nb_failed; i++)
        if (e->failed[i].id == id)
            return (long)i;
    return -1;
}

static int fail_one(fbf_engine *e, uint32_t id)
{
    if (e->nb_failed == e->failed_cap) {
        size_t cap = e->failed_cap ? 2 * e->failed_cap : 16;
        fbf_failed_machine *v = realloc(e->failed, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        e->failed = v;
        e->failed_cap = cap;
    }
    fbf_failed_machine *f = &e->failed[e->nb_failed++];
    *f = (fbf_failed_machine){.id = id, .hold = FBF_JOB_NONE};
    if (fbf_idset_contains(&e->free_set, id))
        return fbf_engine_hold_machine(e, id, INFINITY, true, &f->hold);
    return 0; /* busy: held once its job or hold gives it back */
}

int fbf_engine_set_failed(fbf_engine *e, const fbf_idset *machines, bool failed,
                          fbf_error *err)
{
    if (!e->has_platform)
        return fbf_errorf(err, -EINVAL, "machines reported before the platform");
    for (uint32_t k = 0; k < machines->n; k++)
        for (uint32_t id = machines->r[k].lo; id <= machines->r[k].hi; id++) {
            if (!is_compute(e, id))
                return fbf_errorf(err, -EINVAL, "machine %u is not a compute resource", id);
            if (failed && find(e, id) >= 0)
                return fbf_errorf(err, -EINVAL, "machine %u failed but it is already out of "
                                  "service", id);
            if (!failed && find(e, id) < 0)
                return fbf_errorf(err, -EINVAL, "machine %u is back in service but it had not "
                                  "failed", id);
        }
    for (uint32_t k = 0; k < machines->n; k++)
        for (uint32_t id = machines->r[k].lo; id <= machines->r[k].hi; id++) {
            if (failed) {
                if (fail_one(e, id) < 0)
                    return fbf_errorf(err, -ENOMEM, "out of memory");
                continue;
            }
            long i = find(e, id);
            fbf_job_h h = e->failed[i].hold;
            e->failed[i] = e->failed[--e->nb_failed];
            if (h != FBF_JOB_NONE && fbf_engine_unhold_machine(e, h, true) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
        }
    return 0;
}

int fbf_failures_freed(fbf_engine *e, const fbf_idset *alloc)
{
    for (size_t i = 0; i < e->nb_failed; i++) {
        fbf_failed_machine *f = &e->failed[i];
        if (f->hold == FBF_JOB_NONE && fbf_idset_contains(alloc, f->id) &&
            fbf_engine_hold_machine(e, f->id, INFINITY, true, &f->hold) < 0)
            return -ENOMEM;
    }
    return 0;
}

uint32_t fbf_engine_nb_failed(const fbf_engine *e) { return (uint32_t)e->nb_failed; }
