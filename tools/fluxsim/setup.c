/*
 * setup: the job manager's jobs from the workload (see fluxsim.h): their
 * ids in submission order, their jobspecs' numbers, the seeded cancels and
 * priority changes; and the job by id.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* ---- setup ---- */

sjob *fs_job_by_id(fluxsim *fs, uint64_t id)
{
    size_t lo = 0, hi = fs->njobs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uint64_t v = fs->jobs[fs->order[mid]].id;
        if (v == id)
            return &fs->jobs[fs->order[mid]];
        if (v < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}


static const fbf_workload *g_wl; /* qsort's comparator context, setup only */

static int by_submission(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    double tx = g_wl->jobs[x].subtime, ty = g_wl->jobs[y].subtime;
    if (tx != ty)
        return tx < ty ? -1 : 1;
    return x < y ? -1 : x > y;
}

int fs_setup(fluxsim *fs, fbf_error *err)
{
    fbf_idset_init(&fs->busy);
    fs->wake_last = NAN;
    fs->rng = fs->o.seed ? fs->o.seed : 0x9e3779b97f4a7c15ULL;
    fbf_wl_read_options ro = FBF_WL_READ_DEFAULTS;
    ro.max_jobs = fs->o.max_jobs;
    if (!(fs->wl = fbf_workload_read(fs->o.workload, &ro, err)))
        return -EINVAL;
    if (!fs->o.ranks) {
        if (!fs->wl->nb_res)
            return fbf_errorf(err, -EINVAL, "%s gives no platform size: give --ranks and "
                              "--cores", fs->o.workload);
        fs->o.ranks = fs->wl->nb_res;
        fs->o.cores = 1;
    }
    fs->njobs = fs->wl->nb_jobs;
    fs->jobs = calloc(fs->njobs, sizeof *fs->jobs);
    fs->order = calloc(fs->njobs, sizeof *fs->order);
    if (!fs->jobs || !fs->order)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < fs->njobs; i++)
        fs->order[i] = (uint32_t)i;
    g_wl = fs->wl;
    qsort(fs->order, fs->njobs, sizeof *fs->order, by_submission);
    g_wl = NULL;
    uint64_t last = 0;
    for (size_t k = 0; k < fs->njobs; k++) {
        uint32_t i = fs->order[k];
        const fbf_wl_job *w = &fs->wl->jobs[i];
        sjob *j = &fs->jobs[i];
        /* FLUID-like: milliseconds since the epoch in the high bits. */
        uint64_t id = ((uint64_t)(w->subtime * 1000) + 1) << 24;
        j->id = id > last ? id : last + 1;
        last = j->id;
        j->wl = i;
        j->priority = fs->o.base_priority;
        j->t_submit = w->subtime;
        j->runtime = w->runtime;
        j->duration = w->walltime > 0 ? w->walltime : 0;
        j->ncores = w->res;
        j->cancel_at = NAN;
        j->last_est = NAN;
        j->start = j->end = NAN;
        fbf_idset_init(&j->cores);
        double span = fmax(1, j->duration > 0 ? j->duration : j->runtime);
        if (fs->o.cancel_p > 0 && fs_urand(&fs->rng) < fs->o.cancel_p) {
            j->cancel_at = w->subtime + floor(fs_urand(&fs->rng) * 1.5 * span);
            if (fs_heap_push(fs, (tev){j->cancel_at, EV_CANCEL, fs->seq++, i, 0}) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
        }
        if (fs->o.prio_p > 0 && fs_urand(&fs->rng) < fs->o.prio_p) {
            double at = w->subtime + floor(fs_urand(&fs->rng) * span);
            uint32_t p = 1 + fs_rnd(&fs->rng, 1000000);
            if (fs_heap_push(fs, (tev){at, EV_PRIO, fs->seq++, i, p}) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
        }
    }
    fs->store = fbf_store_connect(fs->o.redis_host, fs->o.redis_port, NULL, 30, err);
    return fs->store ? 0 : -ECONNREFUSED;
}

void fs_fini(fluxsim *fs)
{
    for (size_t i = 0; i < fs->njobs; i++) {
        fbf_idset_fini(&fs->jobs[i].cores);
        cJSON_Delete(fs->jobs[i].ann);
        free(fs->jobs[i].note);
    }
    free(fs->jobs);
    free(fs->order);
    fbf_workload_destroy(fs->wl);
    fbf_store_destroy(fs->store);
    free(fs->queue);
    free(fs->heap);
    free(fs->frees);
    free(fs->cancels);
    free(fs->allocs);
    free(fs->prio);
    free(fs->succ);
    free(fs->subs);
    fbf_idset_fini(&fs->busy);
    fbf_json_exact_fini(&fs->nums);
    fbf_jbuf_fini(&fs->buf);
}

