/*
 * energy: energy saving as an engine extension (extension.h): machine
 * states and their switches live in power.c; this file only says when
 * the engine hands them a decision point.
 */
#include <errno.h>

#include "engine/engine_int.h"
#include "engine/extension.h"

static int energy_create(fbf_engine *e, fbf_error *err)
{
    fbf_power_config pdef = fbf_power_config_default();
    e->power = fbf_power_create(&pdef);
    return e->power ? 0 : fbf_errorf(err, -ENOMEM, "engine: out of memory");
}

static void energy_destroy(fbf_engine *e) { fbf_power_destroy(e->power); }

static int energy_platform(fbf_engine *e, const fbf_idset *compute, fbf_error *err)
{
    if (fbf_power_set_platform(e->power, compute) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory for the machine states of energy saving");
    return 0;
}

static int energy_ended(fbf_engine *e, fbf_job_h h, fbf_error *err)
{
    if (fbf_power_freed(e->power, &fbf_jobs_get(e->jobs, h)->alloc, e->now) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return 0;
}

static int energy_before(fbf_engine *e, fbf_error *err)
{
    if (e->has_platform && fbf_power_before(e->power, e) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return 0;
}

static int energy_after(fbf_engine *e, double *wake, fbf_error *err)
{
    if (e->has_platform && fbf_power_after(e->power, e, wake) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return 0;
}

static size_t energy_changes(const fbf_engine *e, const fbf_idset **sets, uint32_t *pstates)
{
    return fbf_power_requests(e->power, sets, pstates);
}

const fbf_extension_ops fbf_ext_energy = {
    .name = "energy",
    .create = energy_create,
    .destroy = energy_destroy,
    .platform_set = energy_platform,
    .job_ended = energy_ended,
    .before_pass = energy_before,
    .after_pass = energy_after,
    .state_changes = energy_changes,
};
