/*
 * flux_table: records by id (open addressing, linear probing, load <= 1/2)
 * and by engine handle (a dense array: handles are arrival numbers).
 */
#include "io/flux_table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void fbf_flux_table_init(fbf_flux_table *t) { memset(t, 0, sizeof *t); }

void fbf_flux_table_fini(fbf_flux_table *t)
{
    free(t->v);
    free(t->slots);
    free(t->by_h);
    memset(t, 0, sizeof *t);
}

static uint32_t hash(uint64_t id)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdULL;
    id ^= id >> 33;
    return (uint32_t)id;
}

uint32_t fbf_flux_table_find(const fbf_flux_table *t, uint64_t id)
{
    if (!t->nslots)
        return FBF_FJ_NONE;
    uint32_t mask = t->nslots - 1;
    for (uint32_t k = hash(id) & mask;; k = (k + 1) & mask) {
        uint32_t s = t->slots[k];
        if (!s)
            return FBF_FJ_NONE;
        if (t->v[s - 1].id == id)
            return s - 1;
    }
}

static void place(uint32_t *slots, uint32_t nslots, uint64_t id, uint32_t index)
{
    uint32_t mask = nslots - 1;
    uint32_t k = hash(id) & mask;
    while (slots[k])
        k = (k + 1) & mask;
    slots[k] = index + 1;
}

static int grow_slots(fbf_flux_table *t)
{
    uint32_t n = t->nslots ? 2 * t->nslots : 64;
    if (n < t->nslots)
        return -ENOMEM;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -ENOMEM;
    for (uint32_t i = 0; i < t->n; i++)
        place(s, n, t->v[i].id, i);
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return 0;
}

int fbf_flux_table_add(fbf_flux_table *t, uint64_t id, uint32_t *out)
{
    if (t->n == UINT32_MAX - 1)
        return -ENOMEM;
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? 2 * t->cap : 64;
        fbf_flux_job *v = realloc(t->v, (size_t)cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        t->v = v;
        t->cap = cap;
    }
    if ((uint64_t)(t->n + 1) * 2 > t->nslots && grow_slots(t) < 0)
        return -ENOMEM;
    uint32_t i = t->n++;
    t->v[i] = (fbf_flux_job){.id = id, .h = FBF_JOB_NONE, .ann = NAN, .t_submit = NAN};
    place(t->slots, t->nslots, id, i);
    *out = i;
    return 0;
}

int fbf_flux_table_link(fbf_flux_table *t, uint32_t i, fbf_job_h h)
{
    if (h >= t->nby_h) {
        uint64_t n = t->nby_h ? t->nby_h : 64;
        while (n <= h)
            n *= 2;
        if (n > UINT32_MAX)
            n = UINT32_MAX;
        uint32_t *v = realloc(t->by_h, (size_t)n * sizeof *v);
        if (!v)
            return -ENOMEM;
        for (uint64_t k = t->nby_h; k < n; k++)
            v[k] = FBF_FJ_NONE;
        t->by_h = v;
        t->nby_h = (uint32_t)n;
    }
    t->by_h[h] = i;
    t->v[i].h = h;
    return 0;
}

uint32_t fbf_flux_table_of(const fbf_flux_table *t, fbf_job_h h)
{
    return h < t->nby_h ? t->by_h[h] : FBF_FJ_NONE;
}
