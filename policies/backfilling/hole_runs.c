/*
 * hole_runs: see hole_runs.h. Each range the pass released keeps its own
 * table over its own region; a hole's table merges its members' steps;
 * past FBF_RUNS_CELLS_FROM ranges, cell_runs.c indexes them. Why, and the
 * invariants: docs/backfilling.md.
 */
#include "policies/backfilling/hole_runs.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/cell_runs.h"
#include "policies/backfilling/runs_over_holes.h"
#include "policies/backfilling/level_runs.h"

typedef fbf_bf_stair stair;

typedef struct table {
    double a, b, lo, hi;
    bool valid;
    bool wide; /* valid, but over too wide a region to build: searches */
    stair *v;
    size_t n, cap;
} table;

/* A member: its range, also in its table, and the table on its own, so
 * that keeping members sorted moves 24 bytes a member, not a table. */
typedef struct member {
    double a, b;
    table *t;
} member;

struct fbf_bf_runs {
    table t[FBF_BF_MAX_HOLES + 1]; /* per hole: the merge of its members' */
    size_t n;
    member *m; /* the pass's released ranges: sorted, apart (not touching) */
    size_t mn, mcap;
    bool broken; /* a range could not be recorded: no table answers */
    double reach;
    uint32_t min_res;
    fbf_bf_stairs *st; /* scratch of the builds and merges */
    double horizon; /* this pass: the last breakpoint */
    unsigned span_share; /* see fbf_bf_runs_reset */
    fbf_bf_cells *cells; /* over the members, once there are cells_from */
    size_t cells_from;
    bool cells_failed;
    fbf_bf_hsum *hsum; /* over t[]: told of every change of a hole table */
    uint64_t cell_jumps; /* see fbf_bf_runs_cell_jumps */
};

static int hole_leaf(void *ctx, size_t i, const fbf_bf_stair **v, size_t *n);

fbf_bf_runs *fbf_bf_runs_create(void)
{
    fbf_bf_runs *r = calloc(1, sizeof(fbf_bf_runs));
    if (r && (!(r->st = fbf_bf_stairs_create()) || !(r->hsum = fbf_bf_hsum_create(hole_leaf)))) {
        fbf_bf_stairs_destroy(r->st);
        free(r);
        return NULL;
    }
    if (r)
        r->cells_from = FBF_RUNS_CELLS_FROM;
    return r;
}

void fbf_bf_runs_set_cells_from(fbf_bf_runs *r, size_t n)
{
    r->cells_from = n ? n : FBF_RUNS_CELLS_FROM;
}

static void free_table(table *t)
{
    if (t)
        free(t->v);
    free(t);
}

static void drop_members(fbf_bf_runs *r)
{
    for (size_t i = 0; i < r->mn; i++)
        free_table(r->m[i].t);
    free(r->m);
    r->m = NULL;
    r->mn = r->mcap = 0;
}

void fbf_bf_runs_destroy(fbf_bf_runs *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < FBF_BF_MAX_HOLES + 1; i++)
        free(r->t[i].v);
    drop_members(r);
    fbf_bf_stairs_destroy(r->st);
    fbf_bf_cells_destroy(r->cells);
    fbf_bf_hsum_destroy(r->hsum);
    free(r);
}

void fbf_bf_runs_reset(fbf_bf_runs *r, double reach, uint32_t min_res, unsigned span_share)
{
    r->span_share = span_share;
    for (size_t i = 0; i < r->n; i++)
        r->t[i].valid = false;
    fbf_bf_hsum_reset(r->hsum);
    r->reach = reach > 0 ? reach : 0;
    r->min_res = min_res > 0 ? min_res : 1;
    r->horizon = -INFINITY;
    /* Members are the pass's own: storage goes with them, so that nothing
     * grows with the queue between passes. */
    drop_members(r);
    r->broken = false;
    fbf_bf_cells_destroy(r->cells);
    r->cells = NULL;
    r->cells_failed = false;
}

/* Members from lo to hi (inclusive) changed: their cells are computed
 * again on demand. */
static void cells_dirty(fbf_bf_runs *r, double lo, double hi)
{
    if (r->cells)
        fbf_bf_cells_dirty(r->cells, fbf_bf_cells_of(r->cells, lo), fbf_bf_cells_of(r->cells, hi));
}

/* The first member whose end (by_start: whose start) is at or after x.
 * Members are apart, so both their starts and their ends are sorted. */
static size_t member_search(const fbf_bf_runs *r, double x, bool by_start)
{
    size_t lo = 0, hi = r->mn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((by_start ? r->m[mid].a : r->m[mid].b) < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The first member whose range ends at or after x. */
static size_t member_from(const fbf_bf_runs *r, double x)
{
    return member_search(r, x, false);
}

bool fbf_bf_runs_released_at(const fbf_bf_runs *r, double t)
{
    if (r->broken)
        return true;
    size_t k = member_from(r, nextafter(t, INFINITY)); /* the first that ends after t */
    return k < r->mn && r->m[k].a <= t;
}

size_t fbf_bf_runs_first(const fbf_bf_runs *r, double a)
{
    return r->broken ? SIZE_MAX : member_from(r, a);
}

static bool build(fbf_bf_runs *r, table *t, const fbf_profile *p, double now);
static double longest_at(const table *t, uint32_t res);

/* Member m's table, built first where needed: false when it cannot
 * answer (wide, or an allocation failed). */
static bool member_ready(fbf_bf_runs *r, table *m, const fbf_profile *p, double now)
{
    if (!m->valid && !build(r, m, p, now))
        m->valid = false;
    return m->valid && !m->wide;
}

/* The first member in cell c or a later one. */
static size_t member_of_cell(const fbf_bf_runs *r, size_t c)
{
    size_t lo = 0, hi = r->mn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fbf_bf_cells_of(r->cells, r->m[mid].a) < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

uint64_t fbf_bf_runs_cell_jumps(const fbf_bf_runs *r)
{
    return r->cell_jumps;
}

typedef struct fill_ctx {
    fbf_bf_runs *r;
    const fbf_profile *p;
    double now;
} fill_ctx;

/* A cell's summary: the steps of its members' tables; wide when one of
 * them cannot answer. */
static int fill_cell(void *arg, size_t c, fbf_bf_stairs *st, double *maxb, double *minb,
                     bool *wide)
{
    fill_ctx *x = arg;
    fbf_bf_runs *r = x->r;
    for (size_t k = member_of_cell(r, c); k < r->mn && fbf_bf_cells_of(r->cells, r->m[k].a) == c;
         k++) {
        table *m = r->m[k].t;
        if (!member_ready(r, m, x->p, x->now))
            *wide = true;
        else if (fbf_bf_stairs_gather(st, m->v, m->n) < 0)
            return -ENOMEM;
        *maxb = m->b > *maxb ? m->b : *maxb;
        *minb = fabs(m->b) < *minb ? fabs(m->b) : *minb;
    }
    return 0;
}

/* The cells are made once a pass has released cells_from ranges (fewer
 * are cheaper to visit one by one), over the schedule ahead, with a few
 * ranges per cell; again, larger, when the ranges outgrow them. */
static void cells_update(fbf_bf_runs *r, const fbf_profile *p, double now)
{
    if (r->cells_failed || r->broken || r->mn < r->cells_from ||
        (r->cells && r->mn <= 16 * fbf_bf_cells_count(r->cells)))
        return;
    fbf_bf_cells_destroy(r->cells);
    double end = fbf_profile_key_floor(p, INFINITY);
    r->cells = fbf_bf_cells_create(r->mn / 4 + 1, now, end > now ? end : now + 1,
                                   fbf_profile_capacity(p), fill_cell);
    r->cells_failed = !r->cells;
}

bool fbf_bf_runs_next(fbf_bf_runs *r, const fbf_profile *p, double now, size_t *k, double b,
                      uint32_t res, double l, double kept, double *x, double *y)
{
    cells_update(r, p, now);
    fill_ctx ctx = {r, p, now};
    size_t seen = SIZE_MAX; /* the last cell found worth visiting */
    while (*k < r->mn && r->m[*k].a < b) {
        table *m = r->m[*k].t;
        if (r->cells) {
            size_t c = fbf_bf_cells_of(r->cells, m->a);
            if (c != seen) {
                size_t to = fbf_bf_cells_of(r->cells, b) + 1;
                int err;
                size_t d = fbf_bf_cells_next(r->cells, &ctx, c, to, res, l, kept, &err);
                if (err < 0)
                    d = c; /* no summary: this range is visited on its own */
                if (d >= to)
                    return false;
                seen = d;
                if (d != c) {
                    r->cell_jumps++;
                    *k = member_of_cell(r, d);
                    continue;
                }
            }
        }
        (*k)++;
        /* Skipped: no run long enough meets it, and every window it
         * could hold ends before kept. */
        if (member_ready(r, m, p, now) && longest_at(m, res) < l - 1e-9 * (fabs(m->b) + l) &&
            m->b <= kept - l)
            continue;
        *x = m->a;
        *y = m->b;
        return true;
    }
    return false;
}

/* The hole tables that meet [x, y] (closed) are dropped. */
static void drop_holes(fbf_bf_runs *r, double x, double y)
{
    for (size_t k = 0; k < r->n; k++)
        if (r->t[k].a <= y && r->t[k].b >= x) {
            r->t[k].valid = false;
            fbf_bf_hsum_changed(r->hsum, k);
        }
}

void fbf_bf_runs_add(fbf_bf_runs *r, double now, double x, double y)
{
    x = x > now ? x : now;
    if (r->broken || !(y > x))
        return;
    drop_holes(r, x, y);
    /* Members that overlap or touch [x, y] become one, as holes merge. */
    size_t i = member_from(r, x), j = i;
    while (j < r->mn && r->m[j].a <= y)
        j++;
    if (i == j) {
        if (r->mn == r->mcap) {
            size_t c = r->mcap ? 2 * r->mcap : 64;
            member *v = realloc(r->m, c * sizeof *v);
            if (!v) {
                r->broken = true;
                return;
            }
            r->m = v;
            r->mcap = c;
        }
        table *t = calloc(1, sizeof *t);
        if (!t) {
            r->broken = true;
            return;
        }
        *t = (table){.a = x, .b = y};
        memmove(&r->m[i + 1], &r->m[i], (r->mn - i) * sizeof *r->m);
        r->m[i] = (member){x, y, t};
        r->mn++;
        cells_dirty(r, x, x);
        return;
    }
    cells_dirty(r, fmin(r->m[i].a, x), fmax(r->m[j - 1].a, x));
    table *m = r->m[i].t;
    m->a = r->m[i].a = fmin(r->m[i].a, x);
    m->b = r->m[i].b = fmax(r->m[j - 1].b, y);
    m->valid = false;
    for (size_t k = i + 1; k < j; k++)
        free_table(r->m[k].t);
    memmove(&r->m[i + 1], &r->m[j], (r->mn - j) * sizeof *r->m);
    r->mn -= j - i - 1;
}

void fbf_bf_runs_changed(fbf_bf_runs *r, double x, double y)
{
    /* A member's region lies within reach of its range, so only members
     * from member_from(x - reach) on can meet [x, y]. Closed at hi: where
     * the region ends on a blocking step, growth that starts right there
     * can lengthen a run that ends there. A hole table is a merge of its
     * members' and goes with any of them. */
    for (size_t i = member_from(r, x - r->reach); i < r->mn && r->m[i].a - r->reach <= y; i++) {
        table *m = r->m[i].t;
        if (m->valid && x <= m->hi && y > m->lo) {
            m->valid = false;
            drop_holes(r, m->a, m->b);
            cells_dirty(r, m->a, m->a);
        }
    }
}

void fbf_bf_runs_remap(fbf_bf_runs *r, const fbf_bf_holes *hs)
{
    enum { N = FBF_BF_MAX_HOLES + 1 };
    size_t m = hs->n < N ? hs->n : N, n = r->n;
    size_t span = m > n ? m : n; /* slots past both keep spare buffers as they are */
    table old[N];
    bool taken[N] = {false};
    memcpy(old, r->t, span * sizeof *old);
    for (size_t i = 0; i < span; i++)
        r->t[i].valid = false, r->t[i].v = NULL, r->t[i].cap = 0;
    /* Both lists are sorted by start: match unchanged holes in one pass. */
    for (size_t i = 0, j = 0; i < m; i++) {
        while (j < n && old[j].a < hs->v[i].a)
            j++;
        bool same = false;
        if (j < n && old[j].valid && old[j].a == hs->v[i].a && old[j].b == hs->v[i].b) {
            r->t[i] = old[j];
            taken[j] = true;
            same = j == i;
        }
        if (!same)
            fbf_bf_hsum_changed(r->hsum, i);
    }
    for (size_t i = m; i < span; i++)
        fbf_bf_hsum_changed(r->hsum, i);
    /* The other buffers go to the other slots, for the next builds. */
    size_t k = 0;
    for (size_t i = 0; i < span; i++) {
        if (r->t[i].valid)
            continue;
        while (k < span && (taken[k] || !old[k].v))
            k++;
        if (k == span)
            break;
        r->t[i] = (table){.v = old[k].v, .cap = old[k].cap};
        taken[k] = true;
    }
    r->n = m;
}

/* Builds t's staircase; false on allocation failure. When the region is
 * a large share of the schedule ahead (a short queue: every move would
 * invalidate it, and a search costs less than the sweep), t is marked
 * wide instead and left empty. */
static bool build(fbf_bf_runs *r, table *t, const fbf_profile *p, double now)
{
    /* The region: as far as a window can reach, but no further than where
     * every run that matters (free() >= min res) is cut anyway. */
    t->lo = fmax(now, t->a - r->reach);
    t->hi = t->b + r->reach;
    fbf_bf_region g = {.ha = t->a, .hb = t->b, .cut_lo = t->lo > now, .cut_hi = true};
    double k = fbf_profile_last_below(p, t->lo, t->a, r->min_res);
    if (k > t->lo) {
        t->lo = k;
        g.cut_lo = false;
    }
    k = fbf_profile_first_below(p, t->b, r->min_res);
    if (k < t->hi) {
        t->hi = k;
        g.cut_hi = false;
    }
    g.lo = t->lo;
    g.hi = t->hi;
    if (r->horizon == -INFINITY)
        r->horizon = fbf_profile_key_floor(p, INFINITY);
    t->valid = true;
    t->wide = r->span_share &&
              (fmin(t->hi, r->horizon) - t->lo) * r->span_share > r->horizon - now;
    t->n = 0;
    if (t->wide)
        return true;
    fbf_bf_stairs_clear(r->st);
    return fbf_bf_stairs_sweep(r->st, p, &g) == 0 &&
           fbf_bf_stairs_take(r->st, fbf_profile_capacity(p), &t->v, &t->n, &t->cap) == 0;
}

/* One past the last step at level >= res (0: none). */
static size_t step_at(const table *t, uint32_t res)
{
    return fbf_bf_stairs_at(t->v, t->n, res);
}

static double longest_at(const table *t, uint32_t res)
{
    size_t n = step_at(t, res);
    return n ? t->v[n - 1].w : 0;
}

/* Hole table t from its members' tables (built first where needed): the
 * staircase of all their steps, which holds, per level, the widest run
 * and latest end over runs meeting any member. Runs that meet only the
 * gaps between members are left out: no range was released there. A wide
 * member makes the hole wide. */
static bool merge(fbf_bf_runs *r, table *t, const fbf_profile *p, double now)
{
    cells_update(r, p, now);
    size_t lo = member_from(r, t->a), hi = member_search(r, t->b, true);
    /* With the index, the members of the cells strictly between those of
     * the first and the last member come merged by the tree; the members
     * of those two cells one by one. */
    size_t mid_lo = hi, mid_hi = hi, ca = 0, cb = 0;
    if (r->cells && hi > lo) {
        ca = fbf_bf_cells_of(r->cells, r->m[lo].a);
        cb = fbf_bf_cells_of(r->cells, r->m[hi - 1].a);
        if (cb > ca + 1) {
            for (mid_lo = lo; fbf_bf_cells_of(r->cells, r->m[mid_lo].a) == ca;)
                mid_lo++;
            for (mid_hi = hi; fbf_bf_cells_of(r->cells, r->m[mid_hi - 1].a) == cb;)
                mid_hi--;
        }
    }
    bool wide = false;
    for (size_t k = lo; k < hi; k = k + 1 == mid_lo ? mid_hi : k + 1) {
        table *m = r->m[k].t;
        if (!m->valid && !build(r, m, p, now)) {
            m->valid = false;
            return false;
        }
        wide |= m->wide;
    }
    fbf_bf_stairs_clear(r->st);
    if (mid_lo < mid_hi) {
        fill_ctx ctx = {r, p, now};
        /* It clears st once its fills (and their builds) are done. */
        if (fbf_bf_cells_gather(r->cells, &ctx, ca + 1, cb, r->st, &wide) < 0)
            return false;
    }
    t->valid = true;
    t->wide = wide;
    t->n = 0;
    if (wide)
        return true;
    for (size_t k = lo; k < hi; k = k + 1 == mid_lo ? mid_hi : k + 1)
        if (fbf_bf_stairs_gather(r->st, r->m[k].t->v, r->m[k].t->n) < 0)
            return false;
    return fbf_bf_stairs_take(r->st, fbf_profile_capacity(p), &t->v, &t->n, &t->cap) == 0;
}

/* Hole i's table, merged first where needed; NULL when it cannot answer
 * (see fbf_bf_runs_query). */
static const table *hole_table(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs,
                               size_t i, double now)
{
    if (r->broken || i >= r->n || i >= hs->n)
        return NULL;
    table *t = &r->t[i];
    if (!t->valid || t->a != hs->v[i].a || t->b != hs->v[i].b) {
        fbf_bf_hsum_changed(r->hsum, i);
        t->a = hs->v[i].a;
        t->b = hs->v[i].b;
        if (!merge(r, t, p, now)) {
            t->valid = false;
            return NULL;
        }
    }
    return t->wide ? NULL : t;
}

int fbf_bf_runs_query(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs, size_t i,
                      double now, uint32_t res, fbf_bf_run_info *out)
{
    const table *t = hole_table(r, p, hs, i, now);
    if (!t)
        return -1;
    size_t n = step_at(t, res);
    *out = n ? (fbf_bf_run_info){t->v[n - 1].w, t->v[n - 1].e} : (fbf_bf_run_info){0, -INFINITY};
    return 0;
}

/* The query under way, for hole_leaf. */
typedef struct leaf_ctx {
    fbf_bf_runs *r;
    const fbf_profile *p;
    const fbf_bf_holes *hs;
    double now;
} leaf_ctx;

static int hole_leaf(void *ctx, size_t i, const fbf_bf_stair **v, size_t *n)
{
    leaf_ctx *x = ctx;
    if (i >= x->hs->n) {
        *n = 0; /* no hole: nothing to test */
        return 0;
    }
    const table *t = hole_table(x->r, x->p, x->hs, i, x->now);
    if (!t)
        return -1;
    *v = t->v;
    *n = t->n;
    return 0;
}

size_t fbf_bf_runs_candidate(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs,
                             double now, size_t from, size_t to, uint32_t res, double l,
                             double end)
{
    /* Past the tree's leaves (more holes than it covers), no summary. */
    if (r->broken || to > FBF_BF_HSUM_LEAVES)
        return from;
    leaf_ctx x = {r, p, hs, now};
    /* Past the last hole the leaves are empty: a range that runs to it
     * may as well run to the end, where the root answers for it. */
    size_t i = fbf_bf_hsum_first(r->hsum, &x, from, to < hs->n ? to : FBF_BF_HSUM_LEAVES, res, l,
                                 end);
    return i < to ? i : to;
}

double fbf_bf_runs_longest(fbf_bf_runs *r, const fbf_profile *p, const fbf_bf_holes *hs,
                           size_t i, double now, uint32_t res)
{
    fbf_bf_run_info x;
    return fbf_bf_runs_query(r, p, hs, i, now, res, &x) < 0 ? -1 : x.longest;
}
