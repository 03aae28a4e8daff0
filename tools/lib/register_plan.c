/*
 * register_plan: a workload file as a registration plan (see
 * register_plan.h).
 */
#include "tools/lib/register_plan.h"

#include <errno.h>
#include <stdlib.h>

#include "tools/lib/workload.h"

fbf_submitter *fbf_register_plan_load(const char *path, double pause, bool skip_short,
                                      fbf_error *err)
{
    fbf_wl_read_options ro = FBF_WL_READ_DEFAULTS;
    ro.skip_short_lines = skip_short;
    ro.name = "dyn";
    fbf_workload *wl = fbf_workload_read(path, &ro, err);
    if (!wl)
        return NULL;
    fbf_submitter_job *plan = calloc(wl->nb_jobs ? wl->nb_jobs : 1, sizeof *plan);
    fbf_submitter *reg = NULL;
    if (!plan) {
        fbf_errorf(err, -ENOMEM, "out of memory");
    } else {
        for (size_t i = 0; i < wl->nb_jobs; i++) {
            const fbf_wl_job *j = &wl->jobs[i];
            plan[i] = (fbf_submitter_job){.id = j->id, .subtime = j->subtime, .res = j->res,
                                          .walltime = j->walltime,
                                          .profile = wl->profiles[j->profile].name,
                                          .delay = j->runtime};
        }
        fbf_submitter_options ropt = {.pause = pause};
        reg = fbf_submitter_create(plan, wl->nb_jobs, &ropt, err);
    }
    free(plan);
    fbf_workload_destroy(wl);
    return reg;
}
