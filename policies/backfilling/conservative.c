/*
 * conservative: unlimited reservation depth, scheduling-semantics.md D7.
 *
 * Reservations persist between decision points, are compressed in queue
 * order after a completion (a), given to new arrivals (b), started when
 * due (c), and a CALL_ME_LATER covers the earliest one when no running
 * job ends first (d). Due reservations are found without a scan: on the
 * fast path by qi, whose subtree minima of the reservations already
 * answer "which are due, in queue order" (so no second structure holds
 * 16 bytes per job for it); on the plain path by a min-heap of
 * (rsv, job), whose stale entries (the job started, or its reservation
 * moved) are dropped lazily and purged when they outnumber live ones.
 *
 * Compression (D7 a) lives in policies/backfilling/move_earlier.c (the pass and the
 * queue indexes of reserved jobs it searches) and policies/backfilling/may_move.c (the
 * released ranges and the test of which jobs can move).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"
#include "policies/backfilling/no_fit_before.h"

int fbf_bf_due_note(fbf_backfill *b, double t, fbf_job_h j)
{
    if (b->fast)
        return 0; /* qi holds it; see the top of this file */
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
void fbf_bf_skip_release(fbf_backfill *b, double x, double y)
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
static double search_from(fbf_backfill *b, double now, double from, uint32_t res,
                          double walltime)
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
        r = fbf_profile_earliest_before(b->p, t, res, walltime, next);
        if (r < INFINITY || next == INFINITY)
            break;
        t = next;
    }
    if (walltime > 0)
        skip_learn(b, res, walltime, now, r);
    return r;
}

static double search_from_now(fbf_backfill *b, double now, uint32_t res, double walltime)
{
    return search_from(b, now, now, res, walltime);
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

static double earliest_in_batch(fbf_backfill *b, fbf_sched *s, uint32_t res, double walltime)
{
    double now = fbf_sched_now(s);
    if (!b->corner || !(walltime >= 1) || !(walltime < 0x1p63))
        return earliest_from_now(b, s, res, walltime);
    double r0, w0;
    size_t ri = corner_of((double)res, &r0), wi = corner_of(walltime, &w0);
    double *c = &b->corner[ri * CORNER_WALL + wi];
    *c = search_from(b, now, *c > now ? *c : now, (uint32_t)r0, w0);
    double from = *c, x = b->fits ? fbf_bf_fits_bound(b->fits, res, walltime) : -INFINITY;
    if (x > from) {
        from = x;
        b->stats.fit_starts++;
    }
    double t = search_from(b, now, from, res, walltime);
    if (b->fits)
        fbf_bf_fits_learn(b->fits, res, walltime, t); /* -ENOMEM: learns nothing */
    return t;
}

static int place(fbf_backfill *b, fbf_sched *s, fbf_job_h h)
{
    const fbf_job *j = fbf_sched_job(s, h);
    double t = earliest_in_batch(b, s, j->res, j->walltime);
    if (fbf_policy_hold(b->p, t, j) < 0 || fbf_bf_due_note(b, t, h) < 0)
        return -ENOMEM;
    fbf_sched_set_rsv(s, h, t);
    b->n_placed++;
    if (b->fast && fbf_bf_index_add(b, s, h) < 0)
        return -ENOMEM;
    return 0;
}

static int sort_cmp(const void *x, const void *y)
{
    const fbf_bf_sort_item *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Sorts handles into queue order (fbf_job_key_cmp). */
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
        b->sorted[i] = (fbf_bf_sort_item){j->qkey, j->subtime, j->seq, v->v[i]};
    }
    qsort(b->sorted, v->n, sizeof *b->sorted, sort_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = b->sorted[i].j;
    return 0;
}

static bool is_due(void *ctx, const fbf_qagg *agg) { return agg->min_rsv <= *(double *)ctx; }

/* The waiting jobs whose reservation is due by now, in queue order, into
 * b->tmp. */
static int collect_due(fbf_backfill *b, fbf_sched *s, double now)
{
    b->tmp.n = 0;
    if (b->fast) {
        for (fbf_job_h h = FBF_JOB_NONE;
             (h = fbf_qindex_next(b->qi, s, h, is_due, &now)) != FBF_JOB_NONE;)
            if (fbf_hvec_push(&b->tmp, h) < 0)
                return -ENOMEM;
        return 0;
    }
    while (b->heap_n && b->heap[0].t <= now) {
        if (live(s, &b->heap[0]) && fbf_hvec_push(&b->tmp, b->heap[0].j) < 0)
            return -ENOMEM;
        heap_pop(b);
    }
    if (sort_queue_order(b, s, &b->tmp) < 0)
        return -ENOMEM;
    /* A reservation D10's repair moved later and compression brought back
     * has two live entries. */
    size_t k = 0;
    for (size_t i = 0; i < b->tmp.n; i++)
        if (k == 0 || b->tmp.v[k - 1] != b->tmp.v[i])
            b->tmp.v[k++] = b->tmp.v[i];
    b->tmp.n = k;
    return 0;
}

/* The earliest live reservation, INFINITY if none. */
static double earliest_rsv(fbf_backfill *b, fbf_sched *s)
{
    if (b->fast)
        return fbf_qindex_all(b->qi).min_rsv;
    heap_purge(b, s);
    while (b->heap_n && !live(s, &b->heap[0]))
        heap_pop(b);
    return b->heap_n ? b->heap[0].t : INFINITY;
}

/* A burst of arrivals leaves its scratch as large as the burst; what is
 * held between decisions should be the queue, not the largest message
 * ever received. */
static void shrink_scratch(fbf_backfill *b)
{
    if (b->sorted_cap > b->tune.scratch_keep) {
        free(b->sorted);
        b->sorted = NULL;
        b->sorted_cap = 0;
        b->stats.scratch_frees++;
    }
    fbf_hvec *v[] = {&b->arrivals, &b->tmp}; /* both dead between passes */
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i]->cap > b->tune.scratch_keep) {
            fbf_hvec_fini(v[i]);
            b->stats.scratch_frees++;
        }
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

/*
 * D10's repair, under predict (plain path only): running jobs that
 * outlived their estimate now hold their resources longer, so every
 * reservation that has passed or no longer fits, in queue order, goes to
 * its earliest fit, later if need be.
 */
static int repair(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        double rsv = j->rsv;
        if (!(j->walltime > 0) || isnan(rsv))
            continue;
        if (fbf_policy_release(b->p, rsv, j) < 0)
            return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
        double t = rsv;
        if (rsv < now || fbf_profile_min_free(b->p, rsv, j->walltime) < (int64_t)j->res)
            t = fbf_profile_earliest(b->p, now, j->res, j->walltime);
        if (fbf_policy_hold(b->p, t, j) < 0 || (t != rsv && fbf_bf_due_note(b, t, h) < 0))
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        fbf_sched_set_rsv(s, h, t);
    }
    return 0;
}

int fbf_backfill_decide_persistent(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    int rc;
    if (fbf_sched_estimate(s) == FBF_ESTIMATE_PREDICT && (rc = repair(b, s, err)) < 0)
        return rc;
    if (fbf_sched_any_ended(s) && (rc = fbf_bf_compress(b, s, err)) < 0) /* (a) */
        return rc;

    /* (b) new arrivals, in queue order; walltime 0 never holds one. */
    uint64_t first_new_seq = UINT64_MAX;
    for (size_t i = 0; i < b->arrivals.n; i++) {
        uint64_t q = fbf_sched_job(s, b->arrivals.v[i])->seq;
        first_new_seq = q < first_new_seq ? q : first_new_seq;
    }
    if (sort_queue_order(b, s, &b->arrivals) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    bool corners = b->fast && b->arrivals.n >= b->tune.corner_min_batch;
    if (corners && !b->corner)
        b->corner = malloc(CORNER_RES * CORNER_WALL * sizeof *b->corner);
    corners = corners && b->corner;
    if (corners) {
        for (size_t i = 0; i < CORNER_RES * CORNER_WALL; i++)
            b->corner[i] = -INFINITY;
        if (!b->fits)
            b->fits = fbf_bf_fits_create(); /* NULL: corners alone */
        if (b->fits)
            fbf_bf_fits_reset(b->fits); /* a batch cut short left facts */
        b->stats.corner_batches++;
    }
    double *keep = b->corner;
    if (!corners)
        b->corner = NULL;
    for (size_t i = 0; i < b->arrivals.n; i++) {
        fbf_job_h h = b->arrivals.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        if (j->state != FBF_JOB_WAITING)
            continue;
        if (j->walltime == 0) {
            b->zero_waiting++;
            continue;
        }
        if (place(b, s, h) < 0) {
            b->corner = keep;
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        }
        b->live_rsv++;
    }
    b->corner = keep;
    if (corners) { /* nothing held between bursts */
        fbf_bf_fits_destroy(b->fits);
        b->fits = NULL;
    }

    /* (c) due reservations, in queue order. */
    if (collect_due(b, s, now) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    for (size_t i = 0; i < b->tmp.n; i++) {
        fbf_job_h h = b->tmp.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        double rsv = j->rsv;
        if (j->res > fbf_sched_free(s)) {
            /* Only when a running job outlived its walltime estimate: wait
             * for its completion, which compresses this reservation. */
            if (fbf_bf_due_note(b, rsv, h) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            continue;
        }
        /* seq is arrival order: this message's arrivals come last. */
        bool placed_before = b->arrivals.n == 0 || j->seq < first_new_seq;
        fbf_policy_release(b->p, rsv, j);
        if (b->fast)
            fbf_bf_index_remove(b, s, h);
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
    shrink_scratch(b);

    /* (d) make sure something wakes us by the earliest reservation. */
    double x = earliest_rsv(b, s);
    /* x <= now only behind a job that outlived its estimate: its
     * completion will wake us, and a call in the past is invalid. */
    if (x < INFINITY && x > now && !(fbf_sched_min_running_end(s) <= x))
        fbf_sched_call_me_later(s, x);
    return 0;
}

double fbf_backfill_estimate_persistent(fbf_backfill *b, fbf_sched *s, uint32_t res,
                                        double walltime)
{
    return earliest_from_now(b, s, res, walltime);
}

void fbf_backfill_fini_persistent(fbf_backfill *b)
{
    fbf_bf_index_fini(b);
    fbf_qindex_destroy(b->qi);
    free(b->heap);
    free(b->corner);
    fbf_bf_fits_destroy(b->fits);
    free(b->sorted);
    free(b->pending.v);
    free(b->holes.v);
}
