/*
 * level_runs: see level_runs.h. One sweep with a stack of rising levels
 * pops every maximal run once as a rectangle (h, start, end); those that
 * meet the range, ordered by level, are the staircase (docs/backfilling.md).
 */
#include "policies/backfilling/level_runs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL_SLOTS 65536

typedef struct bar {
    double start;
    int64_t h;
} bar;

struct fbf_bf_stairs {
    bar *stk; /* sweep stack */
    size_t stk_cap;
    fbf_bf_stair *rect;
    size_t rect_n, rect_cap;
    int64_t rect_top;
    fbf_bf_stair *lv; /* per level, for staircase(); .h flags a used slot */
};

fbf_bf_stairs *fbf_bf_stairs_create(void)
{
    return calloc(1, sizeof(fbf_bf_stairs));
}

void fbf_bf_stairs_destroy(fbf_bf_stairs *s)
{
    if (!s)
        return;
    free(s->stk);
    free(s->rect);
    free(s->lv);
    free(s);
}

void fbf_bf_stairs_clear(fbf_bf_stairs *s)
{
    s->rect_n = 0;
    s->rect_top = 0;
}

/* v (n elements of `size` bytes, *cap allocated) with room for one more:
 * v itself, or a doubled copy; NULL on allocation failure (v unchanged). */
static void *room(void *v, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return v;
    size_t c = *cap ? 2 * *cap : 256;
    void *x = realloc(v, c * size);
    if (x)
        *cap = c;
    return x;
}

static int push(fbf_bf_stairs *s, fbf_bf_stair x)
{
    fbf_bf_stair *v = room(s->rect, s->rect_n, &s->rect_cap, sizeof *v);
    if (!v)
        return -ENOMEM;
    s->rect = v;
    s->rect[s->rect_n++] = x;
    s->rect_top = x.h > s->rect_top ? x.h : s->rect_top;
    return 0;
}

int fbf_bf_stairs_gather(fbf_bf_stairs *s, const fbf_bf_stair *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (push(s, v[i]) < 0)
            return -ENOMEM;
    return 0;
}

typedef struct sweep {
    fbf_bf_stairs *s;
    const fbf_bf_region *g;
    int64_t cap;
    double x;  /* start of the segment in progress */
    int64_t f; /* its free() */
    size_t sn;
    bool oom;
} sweep;

static void emit(sweep *w, int64_t h, double s, double e)
{
    const fbf_bf_region *g = w->g;
    if (h < 1 || !(s <= g->hb && e >= g->ha))
        return;
    bool cut_hi = g->cut_hi && e >= g->hi;
    bool cut = (g->cut_lo && s <= g->lo) || cut_hi;
    if (push(w->s, (fbf_bf_stair){h, cut ? INFINITY : e - s, cut_hi ? INFINITY : e}) < 0)
        w->oom = true;
}

/* The segment [x, end) at level f: pops the higher levels it ends. */
static void segment(sweep *w, double x, int64_t f)
{
    fbf_bf_stairs *s = w->s;
    double start = x;
    while (w->sn && s->stk[w->sn - 1].h >= f) {
        bar top = s->stk[--w->sn];
        if (top.h > f)
            emit(w, top.h, top.start, x);
        start = top.start;
    }
    bar *v = room(s->stk, w->sn, &s->stk_cap, sizeof *v);
    if (!v) {
        w->oom = true;
        return;
    }
    s->stk = v;
    s->stk[w->sn++] = (bar){start, f};
}

static void on_key(double t, int64_t used_after, void *ctx)
{
    sweep *w = ctx;
    if (w->oom)
        return;
    segment(w, w->x, w->f);
    w->x = t;
    w->f = w->cap - used_after;
}

int fbf_bf_stairs_sweep(fbf_bf_stairs *s, const fbf_profile *p, const fbf_bf_region *g)
{
    sweep w = {.s = s, .g = g, .cap = fbf_profile_capacity(p), .x = g->lo,
               .f = fbf_profile_free_at(p, g->lo)};
    fbf_profile_foreach_between(p, g->lo, g->hi, on_key, &w);
    if (!w.oom)
        segment(&w, w.x, w.f);
    while (!w.oom && w.sn) {
        bar top = s->stk[--w.sn];
        emit(&w, top.h, top.start, g->hi);
    }
    return w.oom ? -ENOMEM : 0;
}

static int by_level_desc(const void *x, const void *y)
{
    const fbf_bf_stair *a = x, *b = y;
    return a->h > b->h ? -1 : a->h < b->h;
}

/* Turns the rectangles into the staircase, in place; returns its steps.
 * Levels are free() values in [1, capacity]: when the capacity is small
 * enough, one slot per level replaces the sort (which dominated the
 * build on short queues). */
static size_t staircase(fbf_bf_stairs *r, int64_t cap)
{
    size_t n = 0;
    double best = -1, last = -INFINITY;
    if (r->rect_top <= cap && cap <= LEVEL_SLOTS &&
        (r->lv || (r->lv = calloc(LEVEL_SLOTS + 1, sizeof *r->lv)))) {
        int64_t top = 0, bottom = cap;
        for (size_t i = 0; i < r->rect_n; i++) {
            fbf_bf_stair x = r->rect[i];
            fbf_bf_stair *l = &r->lv[x.h];
            if (!l->h) {
                *l = (fbf_bf_stair){1, x.w, x.e};
            } else {
                l->w = fmax(l->w, x.w);
                l->e = fmax(l->e, x.e);
            }
            top = x.h > top ? x.h : top;
            bottom = x.h < bottom ? x.h : bottom;
        }
        for (int64_t h = top; h >= bottom && top > 0; h--) {
            fbf_bf_stair *l = &r->lv[h];
            if (!l->h)
                continue;
            l->h = 0; /* the slots are left clear for the next build */
            if (!(l->w > best || l->e > last))
                continue;
            best = fmax(l->w, best);
            last = fmax(l->e, last);
            r->rect[n++] = (fbf_bf_stair){h, best, last};
        }
        return n;
    }
    qsort(r->rect, r->rect_n, sizeof *r->rect, by_level_desc);
    for (size_t i = 0; i < r->rect_n; i++) {
        fbf_bf_stair x = r->rect[i];
        x.w = fmax(x.w, best);
        x.e = fmax(x.e, last);
        if (!(x.w > best || x.e > last))
            continue;
        best = x.w;
        last = x.e;
        if (n && r->rect[n - 1].h == x.h)
            n--; /* same level: the later step holds both maxima */
        r->rect[n++] = x;
    }
    return n;
}

int fbf_bf_stairs_take(fbf_bf_stairs *s, int64_t cap, fbf_bf_stair **v, size_t *n, size_t *vcap)
{
    size_t k = staircase(s, cap);
    s->rect_n = 0;
    s->rect_top = 0;
    if (k > *vcap) {
        fbf_bf_stair *x = realloc(*v, k * sizeof *x);
        if (!x)
            return -ENOMEM;
        *v = x;
        *vcap = k;
    }
    if (k)
        memcpy(*v, s->rect, k * sizeof **v);
    *n = k;
    return 0;
}

size_t fbf_bf_stairs_at(const fbf_bf_stair *v, size_t n, uint32_t res)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].h >= (int64_t)res)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int fbf_bf_stairs_merge2(const fbf_bf_stair *a, size_t na, const fbf_bf_stair *b, size_t nb,
                         fbf_bf_stair **v, size_t *n, size_t *vcap)
{
    if (na + nb > *vcap) {
        fbf_bf_stair *x = realloc(*v, (na + nb) * sizeof *x);
        if (!x)
            return -ENOMEM;
        *v = x;
        *vcap = na + nb;
    }
    /* Both fall in level: walk them together, the higher level first; at
     * each level the maxima so far of both hold for it. */
    size_t i = 0, j = 0, k = 0;
    double best = -1, last = -INFINITY;
    while (i < na || j < nb) {
        int64_t h = i < na && (j >= nb || a[i].h >= b[j].h) ? a[i].h : b[j].h;
        for (; i < na && a[i].h == h; i++) {
            best = a[i].w > best ? a[i].w : best;
            last = a[i].e > last ? a[i].e : last;
        }
        for (; j < nb && b[j].h == h; j++) {
            best = b[j].w > best ? b[j].w : best;
            last = b[j].e > last ? b[j].e : last;
        }
        if (k && (*v)[k - 1].w == best && (*v)[k - 1].e == last)
            continue;
        (*v)[k++] = (fbf_bf_stair){h, best, last};
    }
    *n = k;
    return 0;
}
