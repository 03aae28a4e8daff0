/*
 * waiting_index: the waiting jobs in the backfill order, for the finite
 * depths' scan (may_backfill.c): every job in one tree, and the same jobs
 * in one tree per res value; see state.h for the contract.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"

fbf_bf_windex *fbf_bf_windex_create(const fbf_order_ops *order)
{
    fbf_bf_windex *w = calloc(1, sizeof *w);
    if (!w || !(w->all = fbf_qindex_create_ordered(0, order)) ||
        !(w->byres = fbf_qindex_create_ordered(0, order))) {
        fbf_bf_windex_destroy(w);
        return NULL;
    }
    return w;
}

void fbf_bf_windex_destroy(fbf_bf_windex *w)
{
    if (!w)
        return;
    fbf_qindex_destroy(w->all);
    fbf_qindex_destroy(w->byres);
    free(w->cls);
    free(w);
}

size_t fbf_bf_windex_class_from(const fbf_bf_windex *w, uint32_t r)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->cls[mid].res < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The class of res r, made if new; NULL when out of memory. */
static res_class *class_of(fbf_bf_windex *w, uint32_t r)
{
    size_t i = fbf_bf_windex_class_from(w, r);
    if (i < w->n && w->cls[i].res == r)
        return &w->cls[i];
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 16;
        res_class *c = realloc(w->cls, cap * sizeof *c);
        if (!c)
            return NULL;
        w->cls = c;
        w->cap = cap;
    }
    memmove(&w->cls[i + 1], &w->cls[i], (w->n - i) * sizeof *w->cls);
    w->cls[i] = (res_class){.res = r};
    w->n++;
    w->empty++; /* until its first job */
    return &w->cls[i];
}

/* Drops the empty classes once they outnumber the others. */
static void compact(fbf_bf_windex *w)
{
    if (w->empty <= w->n / 2 + 64)
        return;
    size_t k = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->cls[i].root)
            w->cls[k++] = w->cls[i];
    w->n = k;
    w->empty = 0;
}

int fbf_bf_windex_add(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h)
{
    res_class *c = class_of(w, fbf_sched_job(s, h)->res);
    if (!c || fbf_qindex_insert(w->all, s, h) < 0)
        return -ENOMEM;
    bool was_empty = c->root == 0;
    if (fbf_qindex_insert_at(w->byres, s, &c->root, h) < 0) {
        fbf_qindex_remove(w->all, s, h);
        return -ENOMEM;
    }
    w->empty -= was_empty;
    return 0;
}

void fbf_bf_windex_remove(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h)
{
    if (!fbf_qindex_contains(w->all, h))
        return;
    size_t i = fbf_bf_windex_class_from(w, fbf_sched_job(s, h)->res);
    fbf_qindex_remove(w->all, s, h);
    fbf_qindex_remove_at(w->byres, s, &w->cls[i].root, h);
    if (!w->cls[i].root) {
        w->empty++;
        compact(w);
    }
}

void fbf_bf_windex_update(fbf_bf_windex *w, fbf_sched *s, fbf_job_h h)
{
    if (!fbf_qindex_contains(w->all, h))
        return;
    fbf_qindex_update(w->all, s, h);
    size_t i = fbf_bf_windex_class_from(w, fbf_sched_job(s, h)->res);
    fbf_qindex_update_at(w->byres, s, w->cls[i].root, h);
}

