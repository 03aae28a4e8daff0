/*
 * common: profile helpers shared by the policies (see common.h).
 */
#include "policies/common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct fill_ctx {
    fbf_profile *p;
    bool unknown;
    int rc;
} fill_ctx;

static void add_running(void *arg, const fbf_job *j)
{
    fill_ctx *c = arg;
    if (j->walltime < 0) {
        c->unknown = true;
        if (c->rc == 0)
            c->rc = fbf_profile_add(c->p, j->start, INFINITY, j->res);
        return;
    }
    if (c->rc == 0 && j->est_end > j->start)
        c->rc = fbf_profile_add(c->p, j->start, j->est_end, j->res);
}

int fbf_policy_running_profile(fbf_sched *s, fbf_profile *p, bool *unknown)
{
    fill_ctx c = {.p = p, .unknown = false, .rc = 0};
    fbf_sched_foreach_running(s, add_running, &c);
    if (unknown)
        *unknown = c.unknown;
    return c.rc;
}

int fbf_policy_hold(fbf_profile *p, double from, const fbf_job *j)
{
    double end = from + j->walltime;
    return end > from ? fbf_profile_add(p, from, end, j->res) : 0;
}

int fbf_policy_release(fbf_profile *p, double from, const fbf_job *j)
{
    double end = from + j->walltime;
    return end > from ? fbf_profile_remove(p, from, end, j->res) : 0;
}

void *fbf_policy_grow(void *v, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return v;
    size_t c = *cap ? *cap * 2 : first;
    void *g = realloc(v, c * size);
    if (g)
        *cap = c;
    return g;
}
