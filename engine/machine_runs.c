/*
 * machine_runs: machine states as runs of consecutive ids (machine_runs.h).
 *
 * A change rebuilds the array in one pass over the runs and the set's
 * ranges, into a second array that then takes the first's place: O(runs +
 * ranges) whatever the number of machines, and on failure the old runs
 * are untouched.
 */
#include "engine/machine_runs.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/power.h"

int fbf_mruns_init(fbf_mruns *r, const fbf_idset *compute)
{
    *r = (fbf_mruns){0};
    r->cap = compute->n ? compute->n : 1;
    if (!(r->v = malloc(r->cap * sizeof *r->v)))
        return -ENOMEM;
    for (uint32_t k = 0; k < compute->n; k++)
        r->v[r->n++] = (fbf_mrun){.lo = compute->r[k].lo,
                                  .hi = compute->r[k].hi,
                                  .st = FBF_MACHINE_ON,
                                  .wake_at = INFINITY,
                                  .hold = FBF_JOB_NONE};
    return 0;
}

void fbf_mruns_fini(fbf_mruns *r)
{
    free(r->v);
    free(r->tmp);
    *r = (fbf_mruns){0};
}

/* The first run whose hi >= id (n if none). */
static size_t first_from(const fbf_mruns *r, uint32_t id)
{
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->v[mid].hi < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const fbf_mrun *fbf_mruns_find(const fbf_mruns *r, uint32_t id)
{
    size_t i = first_from(r, id);
    return i < r->n && r->v[i].lo <= id ? &r->v[i] : NULL;
}

int fbf_mruns_each(const fbf_mruns *r, const fbf_idset *set,
                   int (*fn)(void *ctx, const fbf_mrun *piece), void *ctx)
{
    if (!set) {
        for (size_t i = 0; i < r->n; i++) {
            int rc = fn(ctx, &r->v[i]);
            if (rc)
                return rc;
        }
        return 0;
    }
    for (uint32_t k = 0; k < set->n; k++) {
        uint32_t lo = set->r[k].lo, hi = set->r[k].hi;
        for (size_t i = first_from(r, lo); i < r->n && r->v[i].lo <= hi; i++) {
            fbf_mrun piece = r->v[i];
            if (piece.lo < lo)
                piece.lo = lo;
            if (piece.hi > hi)
                piece.hi = hi;
            int rc = fn(ctx, &piece);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Fields that do not apply to the state take their one value. */
static void normalise(fbf_mrun *x)
{
    if (x->st == FBF_MACHINE_ON) {
        x->req_at = 0;
        x->wake_at = INFINITY;
        x->hold = FBF_JOB_NONE;
    } else {
        x->idle_since = 0;
    }
}

static bool same_state(const fbf_mrun *a, const fbf_mrun *b)
{
    return a->st == b->st && a->hold == b->hold && a->idle_since == b->idle_since &&
           a->req_at == b->req_at && a->wake_at == b->wake_at;
}

/* Appends x to tmp, merged into the last run when it continues it. */
static int push(fbf_mruns *r, size_t *tn, fbf_mrun x)
{
    normalise(&x);
    if (*tn) {
        fbf_mrun *last = &r->tmp[*tn - 1];
        if (last->hi + 1 == x.lo && same_state(last, &x)) {
            last->hi = x.hi;
            return 0;
        }
    }
    if (*tn == r->tmp_cap) {
        size_t cap = r->tmp_cap ? 2 * r->tmp_cap : 16;
        fbf_mrun *v = realloc(r->tmp, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        r->tmp = v;
        r->tmp_cap = cap;
    }
    r->tmp[(*tn)++] = x;
    return 0;
}

int fbf_mruns_change(fbf_mruns *r, const fbf_idset *set, int (*fn)(void *ctx, fbf_mrun *piece),
                     void *ctx)
{
    size_t tn = 0;
    uint32_t k = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        const fbf_mrun *run = &r->v[i];
        uint64_t a = run->lo; /* the part of the run not yet pushed starts here */
        while (a <= run->hi && rc == 0) {
            while (set && k < set->n && set->r[k].hi < a)
                k++;
            fbf_mrun part = *run;
            part.lo = (uint32_t)a;
            if (set && (k == set->n || set->r[k].lo > run->hi)) {
                rc = push(r, &tn, part); /* the rest lies outside the set */
                break;
            }
            if (set && set->r[k].lo > a) {
                part.hi = set->r[k].lo - 1;
                rc = push(r, &tn, part);
                a = (uint64_t)part.hi + 1;
                continue;
            }
            part.hi = set && set->r[k].hi < run->hi ? set->r[k].hi : run->hi;
            if ((rc = fn(ctx, &part)) == 0)
                rc = push(r, &tn, part);
            a = (uint64_t)part.hi + 1;
        }
    }
    if (rc < 0)
        return rc;
    fbf_mrun *v = r->v;
    size_t cap = r->cap;
    r->v = r->tmp;
    r->cap = r->tmp_cap;
    r->n = tn;
    r->tmp = v;
    r->tmp_cap = cap;
    return 0;
}
