/*
 * no_fit_before: per res, a staircase of "no window of this walltime starts before
 * x" facts; see no_fit_before.h for what they mean and when they hold.
 *
 * Invariants: a class's facts are sorted by walltime, and both walltime
 * and x strictly increase along them (a fact with a longer walltime and
 * no later x tells nothing the shorter one does not). Classes live in an
 * open-addressing table keyed by res (res 0 marks a free slot; jobs hold
 * at least one resource).
 */
#include "policies/backfilling/no_fit_before.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct fact {
    double w, x;
} fact;

typedef struct fclass {
    uint32_t res;
    uint32_t n, cap;
    fact *v;
} fclass;

struct fbf_bf_fits {
    fclass *slot;
    size_t nslots, used; /* nslots: a power of two, or 0 */
};

fbf_bf_fits *fbf_bf_fits_create(void)
{
    return calloc(1, sizeof(fbf_bf_fits));
}

void fbf_bf_fits_destroy(fbf_bf_fits *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < f->nslots; i++)
        free(f->slot[i].v);
    free(f->slot);
    free(f);
}

void fbf_bf_fits_reset(fbf_bf_fits *f)
{
    for (size_t i = 0; i < f->nslots; i++)
        f->slot[i].n = 0;
}

static size_t hash(uint32_t res, size_t nslots)
{
    return (size_t)((res * 0x9E3779B1u) >> 7) & (nslots - 1);
}

static fclass *find(const fbf_bf_fits *f, uint32_t res)
{
    if (!f->nslots || res == 0)
        return NULL;
    for (size_t i = hash(res, f->nslots);; i = (i + 1) & (f->nslots - 1)) {
        fclass *c = &f->slot[i];
        if (c->res == res)
            return c;
        if (c->res == 0)
            return NULL;
    }
}

/* The class of res, added if new; NULL on allocation failure. */
static fclass *get(fbf_bf_fits *f, uint32_t res)
{
    fclass *c = find(f, res);
    if (c)
        return c;
    if (2 * (f->used + 1) > f->nslots) {
        size_t n = f->nslots ? 2 * f->nslots : 64;
        fclass *s = calloc(n, sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = 0; i < f->nslots; i++) {
            if (!f->slot[i].res)
                continue;
            size_t k = hash(f->slot[i].res, n);
            while (s[k].res)
                k = (k + 1) & (n - 1);
            s[k] = f->slot[i];
        }
        free(f->slot);
        f->slot = s;
        f->nslots = n;
    }
    size_t k = hash(res, f->nslots);
    while (f->slot[k].res)
        k = (k + 1) & (f->nslots - 1);
    f->slot[k] = (fclass){.res = res};
    f->used++;
    return &f->slot[k];
}

/* The number of facts with walltime <= w. */
static size_t upto(const fclass *c, double w)
{
    size_t lo = 0, hi = c->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->v[mid].w <= w)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

double fbf_bf_fits_bound(const fbf_bf_fits *f, uint32_t res, double walltime)
{
    const fclass *c = find(f, res);
    size_t k = c ? upto(c, walltime) : 0;
    return k ? c->v[k - 1].x : -INFINITY;
}

int fbf_bf_fits_learn(fbf_bf_fits *f, uint32_t res, double walltime, double t)
{
    fclass *c = get(f, res);
    if (!c)
        return -ENOMEM;
    size_t k = upto(c, walltime);
    if (k && c->v[k - 1].x >= t)
        return 0; /* a shorter walltime already knows as much */
    /* Facts from k on with x <= t are longer and know less: they go. */
    size_t e = k;
    while (e < c->n && c->v[e].x <= t)
        e++;
    if (k && c->v[k - 1].w == walltime) {
        c->v[k - 1].x = t;
        memmove(&c->v[k], &c->v[e], (c->n - e) * sizeof *c->v);
        c->n -= (uint32_t)(e - k);
        return 0;
    }
    if (e == k) {
        if (c->n >= FBF_BF_FITS_PER_RES)
            return 0;
        if (c->n == c->cap) {
            uint32_t cap = c->cap ? 2 * c->cap : 16;
            fact *v = realloc(c->v, cap * sizeof *v);
            if (!v)
                return -ENOMEM;
            c->v = v;
            c->cap = cap;
        }
        memmove(&c->v[k + 1], &c->v[k], (c->n - k) * sizeof *c->v);
        c->n++;
    } else if (e > k + 1) {
        memmove(&c->v[k + 1], &c->v[e], (c->n - e) * sizeof *c->v);
        c->n -= (uint32_t)(e - k - 1);
    }
    c->v[k] = (fact){walltime, t};
    return 0;
}

size_t fbf_bf_fits_bytes(const fbf_bf_fits *f)
{
    size_t n = sizeof *f + f->nslots * sizeof *f->slot;
    for (size_t i = 0; i < f->nslots; i++)
        n += f->slot[i].cap * sizeof(fact);
    return n;
}
