/*
 * estimate: the runtime estimates of scheduling-semantics.md D10, what a
 * job's walltime field holds for the policies to plan with.
 *
 *   walltime: the walltime itself.
 *   exact:    min(delay, walltime), the delay of the profile forwarded on
 *             submission.
 *   predict:  the mean of the run times of the user's last two completed
 *             jobs, at most the walltime; the walltime until the user has
 *             two. A running job that outlives its estimate gets its
 *             walltime back (the correction), found through a min-heap of
 *             the running jobs whose estimate is below their walltime.
 *
 * Users are interned by their JSON text (equal JSON values, equal text:
 * the codec prints them canonically); index 0 is the anonymous user. What
 * predict keeps per job (user, walltime) lives in arrays by handle,
 * allocated only under predict.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/jobs.h"
#include "engine/order_api.h"
#include "engine/runheap.h"

typedef struct user_hist {
    char *name;     /* NULL: anonymous */
    double last[2]; /* the latest run time first */
    unsigned n;     /* run times known, at most 2 */
} user_hist;

struct fbf_estimator {
    fbf_estimate kind;
    user_hist *users;
    size_t nusers, ucap;
    uint32_t *slots; /* open addressing: user index + 1, 0 empty */
    size_t nslots;
    uint32_t *user_of; /* by handle */
    double *limit;     /* by handle: the walltime, INFINITY for none */
    size_t jcap;
    fbf_runheap due;   /* (est_end, job): running jobs with est < walltime */
};

static const char *const names[] = {"walltime", "exact", "predict"};

const char *fbf_estimate_name(fbf_estimate est)
{
    return (unsigned)est < sizeof names / sizeof *names ? names[est] : NULL;
}

int fbf_estimate_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strcmp(names[i], name) == 0)
            return (int)i;
    return -1;
}

fbf_estimator *fbf_estimator_create(fbf_estimate kind)
{
    fbf_estimator *x = calloc(1, sizeof *x);
    if (!x)
        return NULL;
    x->kind = kind;
    if (kind == FBF_ESTIMATE_PREDICT) {
        x->users = calloc(16, sizeof *x->users);
        x->slots = calloc(64, sizeof *x->slots);
        if (!x->users || !x->slots) {
            fbf_estimator_destroy(x);
            return NULL;
        }
        x->ucap = 16;
        x->nslots = 64;
        x->nusers = 1; /* the anonymous user */
    }
    return x;
}

void fbf_estimator_destroy(fbf_estimator *x)
{
    if (!x)
        return;
    for (size_t i = 0; i < x->nusers; i++)
        free(x->users[i].name);
    free(x->users);
    free(x->slots);
    free(x->user_of);
    free(x->limit);
    fbf_runheap_fini(&x->due);
    free(x);
}

static uint64_t text_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow_slots(fbf_estimator *x)
{
    size_t n = 2 * x->nslots;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -ENOMEM;
    for (size_t u = 1; u < x->nusers; u++) {
        size_t i = text_hash(x->users[u].name) & (n - 1);
        while (s[i])
            i = (i + 1) & (n - 1);
        s[i] = (uint32_t)u + 1;
    }
    free(x->slots);
    x->slots = s;
    x->nslots = n;
    return 0;
}

/* The index of user `name` (0 for NULL), made if new; -ENOMEM. */
static int64_t intern(fbf_estimator *x, const char *name)
{
    if (!name)
        return 0;
    size_t i = text_hash(name) & (x->nslots - 1);
    for (; x->slots[i]; i = (i + 1) & (x->nslots - 1))
        if (strcmp(x->users[x->slots[i] - 1].name, name) == 0)
            return x->slots[i] - 1;
    if (x->nusers == x->ucap) {
        user_hist *u = realloc(x->users, 2 * x->ucap * sizeof *u);
        if (!u)
            return -ENOMEM;
        x->users = u;
        x->ucap *= 2;
    }
    char *copy = strdup(name);
    if (!copy)
        return -ENOMEM;
    size_t idx = x->nusers++;
    x->users[idx] = (user_hist){.name = copy};
    x->slots[i] = (uint32_t)idx + 1;
    if (2 * x->nusers > x->nslots && grow_slots(x) < 0)
        return -ENOMEM; /* the table is still whole, only fuller */
    return (int64_t)idx;
}

static int grow_jobs(fbf_estimator *x, fbf_job_h h)
{
    if (h < x->jcap)
        return 0;
    size_t cap = x->jcap ? x->jcap : 1024;
    while (cap <= h)
        cap *= 2;
    uint32_t *u = realloc(x->user_of, cap * sizeof *u);
    if (u)
        x->user_of = u;
    double *l = realloc(x->limit, cap * sizeof *l);
    if (l)
        x->limit = l;
    if (!u || !l)
        return -ENOMEM;
    x->jcap = cap;
    return 0;
}

int fbf_estimator_submit(fbf_estimator *x, fbf_job_h h, const fbf_submission *sub,
                         double *est)
{
    double wall = sub->walltime < 0 ? INFINITY : sub->walltime; /* D9: none is +inf */
    *est = wall;
    if (x->kind == FBF_ESTIMATE_EXACT && sub->delay >= 0)
        *est = fmin(sub->delay, wall);
    if (x->kind != FBF_ESTIMATE_PREDICT)
        return 0;
    int64_t u = intern(x, sub->user);
    if (u < 0 || grow_jobs(x, h) < 0)
        return -ENOMEM;
    x->user_of[h] = (uint32_t)u;
    x->limit[h] = wall;
    const user_hist *uh = &x->users[u];
    if (uh->n >= 2)
        *est = fmin((uh->last[0] + uh->last[1]) / 2, wall);
    return 0;
}

int fbf_estimator_started(fbf_estimator *x, fbf_job_h h, const fbf_job *j)
{
    if (x->kind != FBF_ESTIMATE_PREDICT || j->hold || !(fbf_job_est(j) < x->limit[h]))
        return 0;
    return fbf_runheap_push(&x->due, j->est_end, h);
}

void fbf_estimator_ended(fbf_estimator *x, fbf_job_h h, const fbf_job *j, double at,
                         bool killed)
{
    if (x->kind != FBF_ESTIMATE_PREDICT || killed || j->hold)
        return;
    user_hist *u = &x->users[x->user_of[h]];
    /* A completion stamped before the start is a peer's error; it must not
     * make a negative estimate, which would read as "no walltime". */
    u->last[1] = u->last[0];
    u->last[0] = at > j->start ? at - j->start : 0;
    u->n += u->n < 2;
}

double fbf_engine_job_estimate(const fbf_engine *e, fbf_job_h j)
{
    return fbf_job_est(fbf_jobs_get(e->jobs, j));
}

int fbf_engine_correct_estimates(fbf_engine *e, fbf_error *err)
{
    fbf_estimator *x = e->est;
    while (x->due.n && x->due.v[0].end <= e->now) {
        fbf_runheap_item it = x->due.v[0];
        fbf_runheap_pop(&x->due);
        fbf_job *j = fbf_jobs_get(e->jobs, it.job);
        if (j->state != FBF_JOB_RUNNING || j->est_end != it.end)
            continue;
        double old = j->walltime, lim = x->limit[it.job];
        j->walltime = isinf(lim) ? -1.0 : lim;
        j->est_end = isinf(lim) ? INFINITY : j->start + lim; /* as fbf_sched_start sums */
        if (fbf_runheap_push(&e->heap, j->est_end, it.job) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        int rc = e->ops->job_extended ? e->ops->job_extended(e->pstate, e, it.job, old, err) : 0;
        if (rc < 0)
            return rc;
    }
    return 0;
}
