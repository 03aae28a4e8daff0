/*
 * may_move: which reserved jobs may move earlier in a compression: the
 * ranges released since the last pass ("holes"), the monotone test on a
 * subtree of reserved jobs, and a mover's earliest fit searched near the
 * holes only. A job moves only if a window meeting a hole fits it, so
 * testing near the holes is exact (docs/backfilling.md gives the proof).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/may_move.h"
#include "policies/common.h"
#include "policies/backfilling/hole_runs.h"

int fbf_bf_holes_push(fbf_bf_holes *hs, double a, double bnd, int64_t mf)
{
    fbf_bf_hole *v = fbf_policy_grow(hs->v, &hs->cap, hs->n, sizeof *v, 16);
    if (!v)
        return -ENOMEM;
    hs->v = v;
    hs->v[hs->n++] = (fbf_bf_hole){a, bnd, mf};
    return 0;
}

static int hole_cmp(const void *x, const void *y)
{
    const fbf_bf_hole *a = x, *c = y;
    return a->a < c->a ? -1 : a->a > c->a;
}

/* A gap between holes; gaps are ordered by width, then by place. */
typedef struct gap {
    double w;
    size_t i; /* between holes i - 1 and i */
} gap;

static bool gap_less(gap x, gap y)
{
    return x.w < y.w || (x.w == y.w && x.i < y.i);
}

static int index_cmp(const void *x, const void *y)
{
    const gap *a = x, *c = y;
    return a->i < c->i ? -1 : a->i > c->i;
}

/* Caps sorted, apart holes at FBF_BF_MAX_HOLES by merging across the
 * narrowest gaps (the first of equal ones first). Merging two holes
 * leaves every other gap as wide as it was, so this is closing all but
 * the widest FBF_BF_MAX_HOLES - 1 gaps at once: O(n * cap), where
 * closing them one scan at a time cost O(n^2) on the tens of thousands
 * of ranges a pass at depth releases. */
static void cap_holes(fbf_bf_holes *hs)
{
    enum { KEEP = FBF_BF_MAX_HOLES - 1 };
    gap open[KEEP]; /* the widest so far, narrowest first */
    size_t n = hs->n, k = 0;
    for (size_t i = 1; i < n; i++) {
        gap x = {hs->v[i].a - hs->v[i - 1].b, i};
        size_t j;
        if (k < KEEP) { /* a free slot at the end: shift down into place */
            for (j = k++; j > 0 && gap_less(x, open[j - 1]); j--)
                open[j] = open[j - 1];
        } else if (gap_less(open[0], x)) { /* x displaces the narrowest */
            for (j = 0; j + 1 < KEEP && gap_less(open[j + 1], x); j++)
                open[j] = open[j + 1];
        } else {
            continue;
        }
        open[j] = x;
    }
    qsort(open, k, sizeof *open, index_cmp);
    size_t m = 0, o = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || (o < k && open[o].i == i)) {
            o += i > 0;
            hs->v[m++] = hs->v[i];
        } else {
            hs->v[m - 1].b = hs->v[i].b;
            hs->v[m - 1].mf = -1;
        }
    }
    hs->n = m;
}

/* Sorts, clips to now, merges overlapping ranges, bounds free() over each
 * (mf), drops those where no indexed job could fit, and caps the count by
 * merging the closest neighbours (a wider range is still a superset).
 * With keep_mf, the holes' mf are trusted as bounds (the caller pushed
 * exact ones, and free() has grown nowhere else since): a merge of
 * overlapping holes takes the larger, and only a merge across a gap is
 * measured again. */
void fbf_bf_holes_normalize(fbf_bf_compression *b, fbf_bf_holes *hs, double now, uint32_t min_res,
                            bool keep_mf)
{
    size_t k = 0;
    for (size_t i = 0; i < hs->n; i++) {
        fbf_bf_hole h = hs->v[i];
        h.a = h.a > now ? h.a : now;
        if (!keep_mf)
            h.mf = -1;
        if (h.b > h.a)
            hs->v[k++] = h;
    }
    hs->n = k;
    /* After a move only the range it released is out of place: it goes in
     * by one insertion (the sort dominated the per-move cost). */
    size_t s = 1;
    while (s + 1 < hs->n && hs->v[s - 1].a <= hs->v[s].a)
        s++;
    if (hs->n > 1 && s + 1 >= hs->n) {
        fbf_bf_hole x = hs->v[hs->n - 1];
        size_t i = hs->n - 1;
        for (; i > 0 && hs->v[i - 1].a > x.a; i--)
            hs->v[i] = hs->v[i - 1];
        hs->v[i] = x;
    } else if (hs->n > 1) {
        qsort(hs->v, hs->n, sizeof *hs->v, hole_cmp);
    }
    k = 0;
    for (size_t i = 0; i < hs->n; i++) {
        if (k && hs->v[i].a <= hs->v[k - 1].b) {
            fbf_bf_hole *p = &hs->v[k - 1];
            if (hs->v[i].b > p->b)
                p->b = hs->v[i].b;
            p->mf = p->mf < 0 || hs->v[i].mf < 0 ? -1 : p->mf > hs->v[i].mf ? p->mf : hs->v[i].mf;
        } else {
            hs->v[k++] = hs->v[i];
        }
    }
    hs->n = k;
    if (hs->n > FBF_BF_MAX_HOLES)
        cap_holes(hs);
    k = 0;
    for (size_t i = 0; i < hs->n; i++) {
        if (hs->v[i].mf < 0)
            hs->v[i].mf = fbf_profile_max_free(b->p, hs->v[i].a, hs->v[i].b);
        if (hs->v[i].mf >= (int64_t)min_res)
            hs->v[k++] = hs->v[i];
    }
    hs->n = k;
}

/* Start of the search for windows of length l that reach into [a, ...):
 * the breakpoint at or before a - l (a little before, so that rounding of
 * t + l can never hide a window), or now. Starting on a breakpoint keeps
 * the answers among the plain search's candidates. */
static double window_from(const fbf_profile *p, double now, double a, double l)
{
    double x = a - l;
    x -= 1e-9 * (fabs(a) + l);
    double k = fbf_profile_key_floor(p, x);
    return k > now ? k : now;
}

/* The earliest t < stop, from window_from on, where a window of l seconds
 * with free >= r starts and meets a range released inside hole i; INFINITY
 * if none. A hole merged from ranges far apart is searched only near
 * them: a window that meets none of them cannot be a move's (see the top
 * comment). Stretches that overlap are searched as one. */
static double search_hole(fbf_bf_compression *b, double now, size_t i, uint32_t r, double l, double stop,
                          double kept)
{
    const fbf_profile *p = b->p;
    const fbf_bf_hole *h = &b->holes.v[i];
    size_t k = b->runs ? fbf_bf_runs_first(b->runs, h->a) : SIZE_MAX;
    stop = fmin(h->b, stop);
    if (k == SIZE_MAX)
        return fbf_profile_earliest_before(p, window_from(p, now, h->a, l), r, l, stop);
    double from = 0, to = 0, x, y;
    bool open = false;
    /* Ranges where no run is long enough are left out. The tables count
     * the profile with every reservation in it, so they speak only for
     * windows that end before a span taken out since (kept: its start). */
    while (fbf_bf_runs_next(b->runs, p, now, &k, stop, r, l, kept, &x, &y)) {
        double f = window_from(p, now, x, l), e = fmin(y, stop);
        if (open && f > to) {
            double u = fbf_profile_earliest_before(p, from, r, l, to);
            if (u < INFINITY)
                return u;
            open = false;
        }
        if (!open)
            from = f, to = e, open = true;
        else if (e > to)
            to = e;
    }
    return open ? fbf_profile_earliest_before(p, from, r, l, to) : INFINITY;
}

/* The test for one hole h = [a, b) (hs->v[i]). A job J (res r, walltime
 * w, reservation R) moves through h only by a window [t, min(t + w, R))
 * with free >= r, now <= t < min(b, R), reaching past a. Either
 *   (1) t + w <= R: free >= r on [t, t + w), which holds a window of the
 *       subtree's min walltime starting in [a - min wall, min(b, max
 *       rsv)) (shifted right to end at a if it starts earlier); or
 *   (2) t + w > R: free >= r on [t, R). When min rsv > b this covers
 *       [b, min rsv), and when min rsv - b >= min wall it holds a window
 *       of kind (1) anyway. When min rsv <= b, free >= r just before R:
 *       somewhere in [the breakpoint before min rsv, max rsv), the same
 *       for every hole, so *before_rsv keeps the answer (-1: unknown). */
static bool hole_may_move(fbf_bf_move_ctx *c, size_t i, const fbf_qagg *g, int *before_rsv)
{
    const fbf_profile *p = c->b->p;
    const fbf_bf_hole *h = &c->b->holes.v[i];
    double stop = fmin(h->b, g->max_rsv), l = g->min_wall * (1 - 1e-9);
    /* Over the pass's own holes, the hole's run table (policies/backfilling/hole_runs.c)
     * bounds both kinds. A window that fits lies in a run of free() >=
     * min res meeting the hole: for the first kind, one at least l long
     * (the slack covers the rounding of the run's length); for the
     * second, [t, R) with R >= min rsv, so one that ends at min rsv or
     * later (ends are breakpoints: compared exactly). */
    fbf_bf_run_info ri = {INFINITY, INFINITY};
    bool table = c->b->runs &&
                 fbf_bf_runs_query(c->b->runs, p, &c->b->holes, i, c->now, g->min_res, &ri) == 0;
    bool long_run = table && !(ri.longest < l - 1e-9 * (fabs(h->b) + l));
    /* The test is an or of both kinds: the table's answer for the first
     * costs nothing, the second may walk the profile, so the first goes
     * first. */
    if (long_run && !(g->max_rsv < h->b))
        return true;
    if (ri.latest_end >= g->min_rsv) {
        if (g->min_rsv > h->b) {
            /* When min rsv - b >= min wall, a window of the second kind
             * holds one of the first: no need to test it. */
            if (g->min_rsv - h->b < g->min_wall) {
                if (fbf_profile_min_free(p, h->b, (g->min_rsv - h->b) * (1 - 1e-9)) >= g->min_res)
                    return true;
            }
        } else if (*before_rsv < 0) {
            /* min rsv <= b: a window of the second kind has free >= r just
             * before its R, in [the breakpoint before min rsv, max rsv):
             * the same for every hole, so tested once per subtree. Over
             * a subtree's span of reservations that nearly always holds
             * (more than 99% of the time in deep queues), and costs two
             * searches of the profile: it is taken as true, which only
             * lets more through. For one job the span is the flat stretch
             * before R (R >= now here), whose free() is free(R-). That was
             * below r when J was last found unable to move (else J would
             * fit earlier), and only a release since (a range of this
             * pass's) can have raised it: outside them the profile is not
             * asked. */
            double at = g->min_rsv > c->now ? nextafter(g->min_rsv, -INFINITY) : c->now;
            if (g->min_rsv != g->max_rsv)
                *before_rsv = 1;
            else if (at < g->min_rsv && c->b->runs && !fbf_bf_runs_released_at(c->b->runs, at))
                *before_rsv = 0;
            else
                *before_rsv = fbf_profile_free_at(p, at) >= g->min_res;
        }
        if (*before_rsv > 0 && !(g->min_rsv > h->b))
            return true;
    }
    /* With a long enough run, it may start too late for a window that
     * must start before max rsv: only then is the profile searched. */
    if (table && !long_run)
        return false;
    return search_hole(c->b, c->now, i, g->min_res, l, stop, INFINITY) < INFINITY;
}

/* The test over every hole, on a subtree or one job. */
bool fbf_bf_may_move(void *arg, const fbf_qagg *g)
{
    fbf_bf_move_ctx *c = arg;
    if (g->min_rsv < c->now)
        return true;
    const fbf_bf_holes *hs = &c->b->holes;
    size_t m = 0, hi = hs->n; /* m: the holes that start before max rsv */
    while (m < hi) {
        size_t mid = m + (hi - m) / 2;
        if (hs->v[mid].a < g->max_rsv)
            m = mid + 1;
        else
            hi = mid;
    }
    /* A hole whose table rules out both kinds of window is passed over
     * by hole_may_move without a walk: the runs' summary passes over
     * whole ranges of them at once. Its bound on the first kind is the
     * loosest over the holes (the slack grows with |b|; holes are sorted
     * and apart, so the largest |b| is at either end). */
    double l = g->min_wall * (1 - 1e-9);
    double bmax = m ? fmax(fabs(hs->v[0].b), fabs(hs->v[m - 1].b)) : 0;
    int before_rsv = -1;
    for (size_t i = 0; i < m; i++) {
        if (c->b->runs &&
            (i = fbf_bf_runs_candidate(c->b->runs, c->b->p, hs, c->now, i, m, g->min_res,
                                       l - 1e-9 * (bmax + l), g->min_rsv)) >= m)
            break;
        if ((int64_t)g->min_res <= hs->v[i].mf && hole_may_move(c, i, g, &before_rsv))
            return true;
    }
    return false;
}

uint64_t fbf_bf_holes_unfit(fbf_bf_compression *b, double now, const fbf_job *j)
{
    uint64_t out = 0;
    double old = j->rsv, w = j->walltime;
    if (!b->runs || old < now)
        return 0;
    for (size_t i = 0; i < b->holes.n && i < 64; i++) {
        const fbf_bf_hole *h = &b->holes.v[i];
        /* Only windows that end before old: J's own span is not in them. */
        if (!(h->b <= old - w))
            break;
        double run = fbf_bf_runs_longest(b->runs, b->p, &b->holes, i, now, j->res);
        if (run >= 0 && run < w - 1e-9 * (fabs(h->b) + w))
            out |= 1ull << i;
    }
    return out;
}

/* The plain earliest(J) (J's span out of the profile), searched only where
 * the top comment says a fit below old can be, and not in the holes of
 * `unfit`. */
double fbf_bf_earliest_near_holes(fbf_bf_compression *b, double now, const fbf_job *j, double old,
                                  uint64_t unfit)
{
    if (old < now)
        return fbf_profile_earliest(b->p, now, j->res, j->walltime);
    double t = old;
    for (size_t i = 0; i < b->holes.n; i++) {
        const fbf_bf_hole *h = &b->holes.v[i];
        if (!(h->a < t))
            break;
        if (i < 64 && (unfit >> i & 1))
            continue;
        double u = search_hole(b, now, i, j->res, j->walltime, t, old);
        if (u < t)
            t = u;
    }
    return t;
}

