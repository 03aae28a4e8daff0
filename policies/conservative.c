/*
 * conservative: unlimited reservation depth, scheduling-semantics.md D7.
 *
 * Reservations persist between decision points, are compressed in queue
 * order after a completion (a), given to new arrivals (b), started when
 * due (c), and a CALL_ME_LATER covers the earliest one when no running
 * job ends first (d). A min-heap of (rsv, job) finds due reservations
 * without a scan; its stale entries (the job started, or its reservation
 * moved) are dropped lazily and purged when they outnumber live ones.
 *
 * Compression without visiting every reservation (b->fast). The plain
 * pass re-places every reserved job J, in queue order, at earliest(J).
 * J moves only if some t < rsv_J fits it, and then the window
 * W = [t, min(t + wall_J, rsv_J)) must meet a range released since J was
 * last (re)placed: outside released ranges free() has not grown since,
 * so a fit there (free >= res on W, and beyond rsv_J J's own span frees
 * its res) would have been found then. (A fit at a non-breakpoint t
 * implies one at the breakpoint before it: free is flat in between.)
 * Capacity is released only by a completion ([now, est_end)) and by a
 * reservation that moves ([old, old + wall)); starts of due reservations
 * swap a span for the same span. So a pass only needs the ranges released
 * by the previous pass (jobs before the mover had already been visited)
 * plus this message's completions plus what this pass releases. Those
 * ranges ("holes", merged, possibly widened: a superset is always safe)
 * drive a search of the queue index (policies/qindex.h) with a monotone
 * test on (min res, min wall, min/max rsv) of a subtree: for some hole
 * [a, b) with a < max rsv, some t in [a - l, min(b, max rsv)) has free >=
 * min res over [t, t + l), l = min(min wall, min rsv - b) (0 if that is
 * negative): W has at least that length when t < b. A job that passes is
 * re-placed exactly, its earliest fit searched only near the holes (the
 * profile's earliest_before), which gives the plain answer because no fit
 * lies elsewhere. Jobs whose reservation is already in the past (a running
 * job outlived its estimate) are always visited, with a full search.
 * test_compression checks equality with the plain pass on random loads.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfill_int.h"
#include "policies/common.h"

#define MAX_HOLES 64

static int heap_push(fbf_backfill *b, double t, fbf_job_h j)
{
    if (b->heap_n == b->heap_cap) {
        size_t cap = b->heap_cap ? b->heap_cap * 2 : 256;
        fbf_bf_rsv_item *v = realloc(b->heap, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        b->heap = v;
        b->heap_cap = cap;
    }
    size_t i = b->heap_n++;
    while (i > 0 && t < b->heap[(i - 1) / 2].t) {
        b->heap[i] = b->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    b->heap[i] = (fbf_bf_rsv_item){t, j};
    return 0;
}

static void heap_sift_down(fbf_backfill *b, size_t i)
{
    fbf_bf_rsv_item x = b->heap[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= b->heap_n)
            break;
        if (c + 1 < b->heap_n && b->heap[c + 1].t < b->heap[c].t)
            c++;
        if (!(b->heap[c].t < x.t))
            break;
        b->heap[i] = b->heap[c];
        i = c;
    }
    b->heap[i] = x;
}

static void heap_pop(fbf_backfill *b)
{
    b->heap[0] = b->heap[--b->heap_n];
    if (b->heap_n)
        heap_sift_down(b, 0);
}

static bool live(fbf_sched *s, const fbf_bf_rsv_item *it)
{
    const fbf_job *j = fbf_sched_job(s, it->j);
    return j->state == FBF_JOB_WAITING && j->rsv == it->t;
}

/* Drops stale entries once they outnumber the live ones (amortised O(1)). */
static void heap_purge(fbf_backfill *b, fbf_sched *s)
{
    if (b->heap_n < 2 * b->live_rsv + 1024)
        return;
    size_t k = 0;
    for (size_t i = 0; i < b->heap_n; i++)
        if (live(s, &b->heap[i]))
            b->heap[k++] = b->heap[i];
    b->heap_n = k;
    for (size_t i = k / 2; i-- > 0;)
        heap_sift_down(b, i);
}

/* ---- the skip cache: earliest(J) from now without walking the schedule ---- */

/* Forgets, in every fact, the starts whose window [t, t + d) could meet
 * the released [x, y): t in (x - d, y). A fact may split in two; when the
 * cache is full the shorter piece goes. */
static void skip_release(fbf_backfill *b, double x, double y)
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
static void skip_learn(fbf_backfill *b, uint32_t h, double d, double lo, double hi)
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
static double search_from_now(fbf_backfill *b, double now, uint32_t res, double walltime)
{
    double t = now, r;
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
        r = fbf_profile_earliest_before(b->p, t, res, walltime, next);
        if (r < INFINITY || next == INFINITY)
            break;
        t = next;
    }
    if (walltime > 0)
        skip_learn(b, res, walltime, now, r);
    return r;
}

/*
 * A fact about the smallest job seen (least res, least walltime) applies
 * to every query; keeping it current after each search means a search
 * jumps straight to where the smallest job would go (in a packed schedule,
 * near its end) and walks only from there. Keeping it current costs the
 * walk from its old end to its new one.
 */
static double earliest_from_now(fbf_backfill *b, fbf_sched *s, uint32_t res, double walltime)
{
    double now = fbf_sched_now(s);
    if (!b->fast)
        return fbf_profile_earliest(b->p, now, res, walltime);
    if (walltime > 0 && (res < b->floor_h || walltime < b->floor_d || b->floor_d == 0)) {
        b->floor_h = res < b->floor_h || b->floor_d == 0 ? res : b->floor_h;
        b->floor_d = walltime < b->floor_d || b->floor_d == 0 ? walltime : b->floor_d;
    }
    double r = search_from_now(b, now, res, walltime);
    if (b->floor_d > 0 && (res != b->floor_h || walltime != b->floor_d))
        search_from_now(b, now, b->floor_h, b->floor_d);
    return r;
}

/* ---- released ranges ---- */

static int holes_push(fbf_bf_holes *hs, double a, double bnd, int64_t mf)
{
    if (hs->n == hs->cap) {
        size_t cap = hs->cap ? hs->cap * 2 : 16;
        fbf_bf_hole *v = realloc(hs->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        hs->v = v;
        hs->cap = cap;
    }
    hs->v[hs->n++] = (fbf_bf_hole){a, bnd, mf};
    return 0;
}

/* Records that [start, end) was released (only its part after now can
 * ever matter). On allocation failure the fast paths are switched off for
 * good: the plain ones need no record. */
void fbf_backfill_released(fbf_backfill *b, double now, double start, double end)
{
    double a = start > now ? start : now;
    if (!b->fast || !(end > a))
        return;
    if (holes_push(&b->pending, a, end, 0) < 0)
        b->fast = false;
    skip_release(b, a, end);
}

static int hole_cmp(const void *x, const void *y)
{
    const fbf_bf_hole *a = x, *c = y;
    return a->a < c->a ? -1 : a->a > c->a;
}

/* Sorts, clips to now, merges overlapping ranges, bounds free() over each
 * (mf), drops those where no indexed job could fit, and caps the count by
 * merging the closest neighbours (a wider range is still a superset). */
static void holes_normalize(fbf_backfill *b, fbf_bf_holes *hs, double now, uint32_t min_res)
{
    size_t k = 0;
    for (size_t i = 0; i < hs->n; i++) {
        fbf_bf_hole h = hs->v[i];
        h.a = h.a > now ? h.a : now;
        if (h.b > h.a)
            hs->v[k++] = h;
    }
    hs->n = k;
    if (hs->n > 1)
        qsort(hs->v, hs->n, sizeof *hs->v, hole_cmp);
    k = 0;
    for (size_t i = 0; i < hs->n; i++) {
        if (k && hs->v[i].a <= hs->v[k - 1].b) {
            if (hs->v[i].b > hs->v[k - 1].b)
                hs->v[k - 1].b = hs->v[i].b;
        } else {
            hs->v[k++] = hs->v[i];
        }
    }
    hs->n = k;
    while (hs->n > MAX_HOLES) {
        size_t best = 1;
        for (size_t i = 2; i < hs->n; i++)
            if (hs->v[i].a - hs->v[i - 1].b < hs->v[best].a - hs->v[best - 1].b)
                best = i;
        hs->v[best - 1].b = hs->v[best].b;
        memmove(&hs->v[best], &hs->v[best + 1], (hs->n - best - 1) * sizeof *hs->v);
        hs->n--;
    }
    k = 0;
    for (size_t i = 0; i < hs->n; i++) {
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

typedef struct move_ctx {
    fbf_backfill *b;
    double now;
} move_ctx;

/* The monotone test of the top comment, on a subtree or one job. */
static bool may_move(void *arg, const fbf_qagg *g)
{
    move_ctx *c = arg;
    if (g->min_rsv < c->now)
        return true;
    const fbf_bf_holes *hs = &c->b->holes;
    for (size_t i = 0; i < hs->n; i++) {
        const fbf_bf_hole *h = &hs->v[i];
        if (!(h->a < g->max_rsv))
            break; /* sorted by a */
        if ((int64_t)g->min_res > h->mf)
            continue;
        double l = g->min_rsv > h->b ? fmin(g->min_wall, g->min_rsv - h->b) : 0;
        l *= 1 - 1e-9; /* never longer than the exact bound */
        double stop = fmin(h->b, g->max_rsv);
        double from = window_from(c->b->p, c->now, h->a, l);
        if (fbf_profile_earliest_before(c->b->p, from, g->min_res, l, stop) < INFINITY)
            return true;
    }
    return false;
}

/* The plain earliest(J) (J's span out of the profile), searched only where
 * the top comment says a fit below old can be. */
static double earliest_near_holes(fbf_backfill *b, double now, const fbf_job *j, double old)
{
    if (old < now)
        return fbf_profile_earliest(b->p, now, j->res, j->walltime);
    double t = old;
    for (size_t i = 0; i < b->holes.n; i++) {
        const fbf_bf_hole *h = &b->holes.v[i];
        if (!(h->a < t))
            break;
        double from = window_from(b->p, now, h->a, j->walltime);
        double stop = fmin(h->b, t);
        double u = fbf_profile_earliest_before(b->p, from, j->res, j->walltime, stop);
        if (u < t)
            t = u;
    }
    return t;
}

/* Re-places one reservation (D7 a). */
static int replace(fbf_backfill *b, fbf_sched *s, fbf_job_h h, bool fast, fbf_error *err)
{
    double now = fbf_sched_now(s);
    const fbf_job *j = fbf_sched_job(s, h);
    double old = j->rsv;
    if (fbf_policy_release(b->p, old, j) < 0)
        return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
    double t = fast ? earliest_near_holes(b, now, j, old)
                    : fbf_profile_earliest(b->p, now, j->res, j->walltime);
    if (t > old && old >= now)
        return fbf_errorf(err, -EPROTO,
                          "conservative: compression moved job %s later (%.17g -> %.17g)",
                          j->id, old, t);
    if (fbf_policy_hold(b->p, t, j) < 0 || (t != old && heap_push(b, t, h) < 0))
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    fbf_sched_set_rsv(s, h, t);
    if (fast && t != old) {
        fbf_qindex_update(b->qi, s, h);
        double end = old + j->walltime;
        skip_release(b, old, end);
        if (end > now) {
            double a = old > now ? old : now;
            int64_t mf = fbf_profile_max_free(b->p, a, end);
            if (holes_push(&b->holes, a, end, mf) < 0 || holes_push(&b->pending, a, end, 0) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            holes_normalize(b, &b->holes, now, 1);
        }
    }
    return 0;
}

/* D7 (a): every reservation, in queue order, moves to its earliest fit
 * with all the others in place; it never moves later. */
static int compress(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    int rc;
    if (b->fast) {
        double now = fbf_sched_now(s);
        fbf_bf_holes t = b->holes;
        b->holes = b->pending; /* the previous pass's and this message's releases */
        b->pending = t;
        b->pending.n = 0;
        holes_normalize(b, &b->holes, now, fbf_qindex_all(b->qi).min_res);
        move_ctx c = {b, now};
        fbf_job_h after = FBF_JOB_NONE;
        for (fbf_job_h h; (h = fbf_qindex_next(b->qi, s, after, may_move, &c)) != FBF_JOB_NONE;
             after = h)
            if ((rc = replace(b, s, h, true, err)) < 0)
                return rc;
        b->holes.n = 0;
        return 0;
    }
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        if (!(j->walltime > 0) || isnan(j->rsv))
            continue;
        if ((rc = replace(b, s, h, false, err)) < 0)
            return rc;
    }
    return 0;
}

static int place(fbf_backfill *b, fbf_sched *s, fbf_job_h h)
{
    const fbf_job *j = fbf_sched_job(s, h);
    double t = earliest_from_now(b, s, j->res, j->walltime);
    if (fbf_policy_hold(b->p, t, j) < 0 || heap_push(b, t, h) < 0)
        return -ENOMEM;
    fbf_sched_set_rsv(s, h, t);
    if (b->fast && fbf_qindex_insert(b->qi, s, h) < 0)
        return -ENOMEM;
    return 0;
}

static int sort_cmp(const void *x, const void *y)
{
    const fbf_bf_sort_item *a = x, *b = y;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Sorts handles into D1 order. */
static int sort_queue_order(fbf_backfill *b, fbf_sched *s, fbf_hvec *v)
{
    if (v->n < 2)
        return 0;
    if (v->n > b->sorted_cap) {
        fbf_bf_sort_item *n = realloc(b->sorted, v->n * sizeof *n);
        if (!n)
            return -ENOMEM;
        b->sorted = n;
        b->sorted_cap = v->n;
    }
    for (size_t i = 0; i < v->n; i++) {
        const fbf_job *j = fbf_sched_job(s, v->v[i]);
        b->sorted[i] = (fbf_bf_sort_item){j->subtime, j->seq, v->v[i]};
    }
    qsort(b->sorted, v->n, sizeof *b->sorted, sort_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = b->sorted[i].j;
    return 0;
}

static bool is_zero_walltime(const void *ctx, const fbf_job *j) { return j->walltime == 0; }

static fbf_start_reason reason_for(fbf_sched *s, fbf_job_h h, bool placed_before)
{
    if (placed_before)
        return FBF_START_RESERVATION;
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    return fbf_sched_iter_next(s, &it) == h ? FBF_START_HEAD : FBF_START_BACKFILLED;
}

int fbf_backfill_decide_persistent(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    int rc;
    if (b->arrivals.n == SIZE_MAX)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory recording arrivals");
    if (fbf_sched_any_ended(s) && (rc = compress(b, s, err)) < 0) /* (a) */
        return rc;

    /* (b) new arrivals, in queue order; walltime 0 never holds one. */
    uint64_t first_new_seq = UINT64_MAX;
    for (size_t i = 0; i < b->arrivals.n; i++) {
        uint64_t q = fbf_sched_job(s, b->arrivals.v[i])->seq;
        first_new_seq = q < first_new_seq ? q : first_new_seq;
    }
    if (sort_queue_order(b, s, &b->arrivals) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    for (size_t i = 0; i < b->arrivals.n; i++) {
        fbf_job_h h = b->arrivals.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        if (j->state != FBF_JOB_WAITING)
            continue;
        if (j->walltime == 0) {
            b->zero_waiting++;
            continue;
        }
        if (place(b, s, h) < 0)
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        b->live_rsv++;
    }

    /* (c) due reservations, in queue order. */
    b->tmp.n = 0;
    while (b->heap_n && b->heap[0].t <= now) {
        if (live(s, &b->heap[0]) && fbf_hvec_push(&b->tmp, b->heap[0].j) < 0)
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        heap_pop(b);
    }
    if (sort_queue_order(b, s, &b->tmp) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    for (size_t i = 0; i < b->tmp.n; i++) {
        fbf_job_h h = b->tmp.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        double rsv = j->rsv;
        if (j->res > fbf_sched_free(s)) {
            /* Only when a running job outlived its walltime estimate: wait
             * for its completion, which compresses this reservation. */
            if (heap_push(b, rsv, h) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            continue;
        }
        /* seq is arrival order: this message's arrivals come last. */
        bool placed_before = b->arrivals.n == 0 || j->seq < first_new_seq;
        fbf_policy_release(b->p, rsv, j);
        if (b->fast)
            fbf_qindex_remove(b->qi, s, h);
        if ((rc = fbf_backfill_start_job(b, s, h, reason_for(s, h, placed_before), err)) < 0)
            return rc;
        b->live_rsv--;
    }
    b->tmp.n = 0;
    if (b->zero_waiting > 0) {
        if (fbf_sched_scan(s, is_zero_walltime, NULL, &b->tmp) < 0)
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        for (size_t i = 0; i < b->tmp.n; i++) {
            fbf_job_h h = b->tmp.v[i];
            if (fbf_sched_job(s, h)->res > fbf_sched_free(s))
                continue;
            if ((rc = fbf_backfill_start_job(b, s, h, reason_for(s, h, false), err)) < 0)
                return rc;
            b->zero_waiting--;
        }
    }
    b->arrivals.n = 0;

    /* (d) make sure something wakes us by the earliest reservation. */
    heap_purge(b, s);
    while (b->heap_n && !live(s, &b->heap[0]))
        heap_pop(b);
    if (b->heap_n) {
        double x = b->heap[0].t;
        /* x <= now only behind a job that outlived its estimate: its
         * completion will wake us, and a call in the past is invalid. */
        if (x > now && !(fbf_sched_min_running_end(s) <= x))
            fbf_sched_call_me_later(s, x);
    }
    return 0;
}

double fbf_backfill_estimate_persistent(fbf_backfill *b, fbf_sched *s, uint32_t res,
                                        double walltime)
{
    return earliest_from_now(b, s, res, walltime);
}

void fbf_backfill_fini_persistent(fbf_backfill *b)
{
    fbf_qindex_destroy(b->qi);
    free(b->heap);
    free(b->sorted);
    free(b->pending.v);
    free(b->holes.v);
}
