/*
 * earliest: the earliest start for r resources during d from now, as the
 * profile's own search gives it, found faster with facts learnt by earlier
 * searches ("no such window starts in [lo, hi)"): a skip cache, kept
 * exact by forgetting what released ranges touch, and, within one batch
 * of arrivals, corner and fit facts. Why each holds: docs/backfilling.md.
 */
#include <math.h>
#include <stdlib.h>

#include "policies/backfilling/no_fit_before.h"
#include "policies/backfilling/state.h"

/* ---- the skip cache: earliest(J) from now without walking the schedule ---- */

/* Forgets, in every fact, the starts whose window [t, t + d) could meet
 * the released [x, y): t in (x - d, y). A fact may split in two; when the
 * cache is full the shorter piece goes. */
void fbf_bf_search_release(fbf_bf_search *b, double x, double y)
{
    size_t n = b->skip_n;
    for (size_t i = 0; i < n; i++) {
        fbf_bf_skip *f = &b->skip[i];
        double cut = x - f->d - 1e-9 * (fabs(x) + f->d); /* t + d <= x even rounded */
        if (!(f->lo < y) || !(cut < f->hi))
            continue;
        fbf_bf_skip near = *f, far = *f;
        near.hi = cut;
        far.lo = y;
        bool has_near = near.lo < near.hi, has_far = far.lo < far.hi;
        if (has_near && has_far && b->skip_n < FBF_BF_SKIP_MAX) {
            *f = near;
            b->skip[b->skip_n++] = far;
        } else if (has_near && has_far) {
            *f = near.hi - near.lo > far.hi - far.lo ? near : far;
        } else if (has_near || has_far) {
            *f = has_near ? near : far;
        } else {
            /* Refill the slot from the end; a piece appended above may be
             * looked at again, which changes nothing. */
            *f = b->skip[--b->skip_n];
            if (n > b->skip_n)
                n = b->skip_n;
            i--;
        }
    }
}

/* Records "no window (h, d) starts in [lo, hi)", dropping facts it makes
 * useless (a fact helps queries with res >= h and walltime >= d). */
static void skip_learn(fbf_bf_search *b, uint32_t h, double d, double lo, double hi)
{
    if (!(lo < hi))
        return;
    size_t k = 0;
    for (size_t i = 0; i < b->skip_n; i++) {
        const fbf_bf_skip *f = &b->skip[i];
        bool dominated = f->h >= h && f->d >= d && f->lo >= lo && f->hi <= hi;
        if (!dominated)
            b->skip[k++] = *f;
    }
    b->skip_n = k;
    if (b->skip_n == FBF_BF_SKIP_MAX) {
        /* Evict the shortest fact, never one about the smallest job. */
        size_t worst = SIZE_MAX;
        for (size_t i = 0; i < b->skip_n; i++) {
            const fbf_bf_skip *f = &b->skip[i];
            if (f->h == b->floor_h && f->d == b->floor_d)
                continue;
            if (worst == SIZE_MAX || f->hi - f->lo < b->skip[worst].hi - b->skip[worst].lo)
                worst = i;
        }
        if (worst == SIZE_MAX || b->skip[worst].hi - b->skip[worst].lo > hi - lo)
            return;
        b->skip[worst] = b->skip[--b->skip_n];
    }
    b->skip[b->skip_n++] = (fbf_bf_skip){h, d, lo, hi};
}

/*
 * earliest(res, walltime) from now, the plain answer: candidates inside a
 * fact that applies are jumped over (none of them fits), and the search
 * between facts is cut off where the next one starts. Restarting at a
 * fact's end (not a breakpoint) cannot return that point itself: a fit
 * there would make the breakpoint before it, or the fact's start, fit too,
 * as free() is flat in between. The answer teaches a new fact.
 */
static double search_from(fbf_bf_search *b, const fbf_profile *p, double now, double from,
                          uint32_t res, double walltime)
{
    double t = from, r;
    for (;;) {
        bool moved = true;
        double next = INFINITY;
        while (moved) {
            moved = false;
            next = INFINITY;
            for (size_t i = 0; i < b->skip_n; i++) {
                const fbf_bf_skip *f = &b->skip[i];
                if (f->h > res || f->d > walltime || !(f->hi > t))
                    continue;
                if (f->lo <= t) {
                    t = f->hi;
                    moved = true;
                } else if (f->lo < next) {
                    next = f->lo;
                }
            }
        }
        r = fbf_profile_earliest_before(p, t, res, walltime, next);
        if (r < INFINITY || next == INFINITY)
            break;
        t = next;
    }
    if (walltime > 0)
        skip_learn(b, res, walltime, now, r);
    return r;
}

static double search_from_now(fbf_bf_search *b, const fbf_profile *p, double now, uint32_t res,
                              double walltime)
{
    return search_from(b, p, now, now, res, walltime);
}

/*
 * A fact about the smallest job seen (least res, least walltime) applies
 * to every query; keeping it current after each search means a search
 * jumps straight to where the smallest job would go (in a packed schedule,
 * near its end) and walks only from there. Keeping it current costs the
 * walk from its old end to its new one.
 */
double fbf_bf_earliest(fbf_bf_search *b, const fbf_profile *p, double now, uint32_t res,
                       double walltime)
{
    if (walltime > 0 && (res < b->floor_h || walltime < b->floor_d || b->floor_d == 0)) {
        b->floor_h = res < b->floor_h || b->floor_d == 0 ? res : b->floor_h;
        b->floor_d = walltime < b->floor_d || b->floor_d == 0 ? walltime : b->floor_d;
    }
    double r = search_from_now(b, p, now, res, walltime);
    if (b->floor_d > 0 && (res != b->floor_h || walltime != b->floor_d))
        search_from_now(b, p, now, b->floor_h, b->floor_d);
    return r;
}

/*
 * Corner facts, for a burst of arrivals. Within one batch of arrivals the
 * profile only fills up, so "no window (r0, w0) starts in [now, x)" stays
 * true, and holds for every job with res >= r0 and walltime >= w0. The
 * corners are a grid of such (r0, w0), two per octave of each; a job
 * first brings its corner's fact up to date (the corner's own earliest
 * fit, searched from where the fact ended: each corner walks the schedule
 * once per batch), then searches from there. In a packed schedule this
 * replaces a walk over every short gap since now by a walk from a nearby
 * corner's fit. The grid is forgotten between batches (completions free
 * capacity).
 *
 * A corner's fit is only a floor for the jobs of its cell: those with
 * more res or a longer walltime still walk every run of free() too short
 * for them, and in a million-job burst that walk grew with the schedule.
 * So each placement also teaches its exact (res, walltime) fact
 * (policies/backfilling/no_fit_before.h), and a job starts from the later of its corner's fit
 * and the fit of the longest walltime of its own res placed before it.
 */
#define CORNER_RES 64   /* res in [1, 2^32) */
#define CORNER_WALL 128 /* walltimes in [1, 2^64) */

/* The corner below x >= 1: 2^k or 3 * 2^(k-1), and its index. */
static size_t corner_of(double x, double *base)
{
    int k = ilogb(x);
    double p = ldexp(1.0, k);
    if (k > 0 && x >= 1.5 * p) {
        *base = 1.5 * p;
        return 2 * (size_t)k + 1;
    }
    *base = p;
    return 2 * (size_t)k;
}

bool fbf_bf_batch_begin(fbf_bf_search *b)
{
    if (!b->corner)
        b->corner = malloc(CORNER_RES * CORNER_WALL * sizeof *b->corner);
    if (!b->corner)
        return false;
    for (size_t i = 0; i < CORNER_RES * CORNER_WALL; i++)
        b->corner[i] = -INFINITY;
    if (!b->fits)
        b->fits = fbf_bf_fits_create(); /* NULL: corners alone */
    if (b->fits)
        fbf_bf_fits_reset(b->fits); /* a batch cut short left facts */
    b->corner_batches++;
    b->in_batch = true;
    return true;
}

void fbf_bf_batch_end(fbf_bf_search *b)
{
    if (!b->in_batch)
        return;
    b->in_batch = false;
    fbf_bf_fits_destroy(b->fits); /* nothing held between bursts */
    b->fits = NULL;
}

double fbf_bf_earliest_in_batch(fbf_bf_search *b, const fbf_profile *p, double now,
                                uint32_t res, double walltime)
{
    if (!b->in_batch || !(walltime >= 1) || !(walltime < 0x1p63))
        return fbf_bf_earliest(b, p, now, res, walltime);
    double r0, w0;
    size_t ri = corner_of((double)res, &r0), wi = corner_of(walltime, &w0);
    double *c = &b->corner[ri * CORNER_WALL + wi];
    *c = search_from(b, p, now, *c > now ? *c : now, (uint32_t)r0, w0);
    double from = *c, x = b->fits ? fbf_bf_fits_bound(b->fits, res, walltime) : -INFINITY;
    if (x > from) {
        from = x;
        b->fit_starts++;
    }
    double t = search_from(b, p, now, from, res, walltime);
    if (b->fits)
        fbf_bf_fits_learn(b->fits, res, walltime, t); /* -ENOMEM: learns nothing */
    return t;
}

void fbf_bf_search_fini(fbf_bf_search *b)
{
    free(b->corner);
    fbf_bf_fits_destroy(b->fits);
}
