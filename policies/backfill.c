/*
 * backfill: the backfilling family, one base with a reservation depth k
 * (scheduling-semantics.md D6, D7, D8).
 *
 * Finite k (k = 1 is EASY): every pass recomputes the reservations. The
 * queue is walked in D1 order; each of the first k jobs that cannot start
 * now gets a reservation at its earliest fit in the profile of the running
 * jobs plus the reservations already made in this pass; jobs that fit now
 * start. Past the k-th reservation, a job starts iff it fits now for its
 * whole walltime in that profile, which for k = 1 is exactly D6's rule
 * (`now + walltime <= shadow` or `res <= extra`), since free() only grows
 * after now except for the head's reservation. A reserved head of walltime
 * 0 holds its resources for an instant ([t, nextafter(t))) so that `extra`
 * still counts it, as D6 does. Reservations of the pass are taken back out
 * of the profile at its end.
 *
 * Unlimited k is conservative backfilling (D7): reservations persist
 * between decision points, are compressed in queue order after a
 * completion (a), given to new arrivals (b), started when due (c), and a
 * CALL_ME_LATER covers the earliest one when no running job ends first
 * (d). A min-heap of (rsv, job) finds due reservations without a scan;
 * its stale entries (the job started, or its reservation moved) are
 * dropped lazily and purged when they outnumber live ones.
 *
 * Invariant between passes: the profile holds exactly the running jobs'
 * spans [start, est_end), plus, when persistent, every waiting job's
 * reservation span [rsv, rsv + walltime) (walltime > 0 only).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "engine/policy_api.h"
#include "engine/profile.h"
#include "policies/common.h"
#include "policies/policies.h"

typedef struct rsv_item {
    double t;
    fbf_job_h j;
} rsv_item;

typedef struct sort_item {
    double subtime;
    uint64_t seq;
    fbf_job_h j;
} sort_item;

typedef struct backfill {
    int64_t depth;
    bool persistent;
    fbf_profile *p;
    fbf_hvec arrivals; /* persistent: submitted since the last pass */
    fbf_hvec tmp;      /* per-pass scratch */
    sort_item *sorted;
    size_t sorted_cap;
    rsv_item *heap;
    size_t heap_n, heap_cap, live_rsv;
    size_t zero_waiting; /* persistent: waiting jobs of walltime 0 */
} backfill;

static int bf_create(fbf_sched *s, int64_t depth, void **state, fbf_error *err)
{
    backfill *b = calloc(1, sizeof *b);
    if (!b || !(b->p = fbf_profile_create(fbf_sched_capacity(s) ? fbf_sched_capacity(s) : 1))) {
        free(b);
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    }
    b->depth = depth;
    b->persistent = depth == FBF_DEPTH_UNLIMITED;
    *state = b;
    return 0;
}

static void bf_destroy(void *state)
{
    backfill *b = state;
    fbf_profile_destroy(b->p);
    fbf_hvec_fini(&b->arrivals);
    fbf_hvec_fini(&b->tmp);
    free(b->sorted);
    free(b->heap);
    free(b);
}

/* The profile was created before the platform size was known. */
static int ensure_profile(backfill *b, fbf_sched *s)
{
    if (fbf_profile_capacity(b->p) == fbf_sched_capacity(s))
        return 0;
    fbf_profile *np = fbf_profile_create(fbf_sched_capacity(s));
    if (!np)
        return -ENOMEM;
    fbf_profile_destroy(b->p);
    b->p = np;
    return 0;
}

static void bf_submitted(void *state, fbf_sched *s, fbf_job_h j)
{
    backfill *b = state;
    if (b->persistent && fbf_hvec_push(&b->arrivals, j) < 0)
        b->arrivals.n = SIZE_MAX; /* reported by the next decide */
}

static void bf_ended(void *state, fbf_sched *s, fbf_job_h h)
{
    backfill *b = state;
    const fbf_job *j = fbf_sched_job(s, h);
    fbf_policy_release(b->p, j->start, j);
}

static int start_job(backfill *b, fbf_sched *s, fbf_job_h h, fbf_start_reason why,
                     fbf_error *err)
{
    int rc = fbf_sched_start(s, h, why, err);
    if (rc < 0)
        return rc;
    if (fbf_policy_hold(b->p, fbf_sched_now(s), fbf_sched_job(s, h)) < 0)
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    return 0;
}

/* ---- finite depth ---- */

/* A reservation of walltime 0 still claims its resources for an instant. */
static int hold_rsv(fbf_profile *p, double t, const fbf_job *j, bool add)
{
    if (j->walltime > 0)
        return add ? fbf_policy_hold(p, t, j) : fbf_policy_release(p, t, j);
    double end = nextafter(t, INFINITY);
    return add ? fbf_profile_add(p, t, end, j->res) : fbf_profile_remove(p, t, end, j->res);
}

typedef struct keep_ctx {
    const fbf_profile *p;
    const fbf_job *boundary;
    double now;
    uint32_t free;
} keep_ctx;

/* Whether j fits now for its whole walltime. A job of walltime 0 holds
 * nothing over time and delays nobody: it fits iff its resources are free
 * (D6: now + 0 <= shadow), even when a reservation starts right now. */
static bool fits_now(const fbf_profile *p, double now, uint32_t nb_free, const fbf_job *j)
{
    return j->res <= nb_free &&
           (j->walltime == 0 || fbf_profile_min_free(p, now, j->walltime) >= j->res);
}

/* Runs on the workers: may this job backfill? (necessary condition; the
 * owner re-checks in queue order as resources get taken). */
static bool may_backfill(const void *arg, const fbf_job *j)
{
    const keep_ctx *c = arg;
    return fbf_job_key_cmp(j, c->boundary) >= 0 && fits_now(c->p, c->now, c->free, j);
}

/* Walks the queue making up to `depth` reservations (kept in b->tmp);
 * starts jobs that fit now when `start` is set. Returns the first job past
 * the depth in *boundary. */
static int reserve_phase(backfill *b, fbf_sched *s, bool start, fbf_job_h *boundary,
                         fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    b->tmp.n = 0;
    *boundary = FBF_JOB_NONE;
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        if ((int64_t)b->tmp.n >= b->depth) {
            *boundary = h;
            break;
        }
        const fbf_job *j = fbf_sched_job(s, h);
        double t = fbf_profile_earliest(b->p, now, j->res, j->walltime);
        if (start && (t <= now || j->walltime == 0) && j->res <= fbf_sched_free(s)) {
            int rc = start_job(b, s, h, b->tmp.n ? FBF_START_BACKFILLED : FBF_START_HEAD, err);
            if (rc < 0)
                return rc;
            continue;
        }
        if (hold_rsv(b->p, t, j, true) < 0 || fbf_hvec_push(&b->tmp, h) < 0)
            return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
        fbf_sched_set_rsv(s, h, t);
    }
    return 0;
}

static void release_phase(backfill *b, fbf_sched *s)
{
    for (size_t i = 0; i < b->tmp.n; i++) {
        const fbf_job *j = fbf_sched_job(s, b->tmp.v[i]);
        hold_rsv(b->p, j->rsv, j, false);
    }
    b->tmp.n = 0;
}

static int decide_finite(backfill *b, fbf_sched *s, fbf_error *err)
{
    fbf_job_h boundary;
    int rc = reserve_phase(b, s, true, &boundary, err);
    if (rc == 0 && boundary != FBF_JOB_NONE) {
        double now = fbf_sched_now(s);
        keep_ctx c = {b->p, fbf_sched_job(s, boundary), now, fbf_sched_free(s)};
        fbf_hvec cand = {0};
        rc = fbf_sched_scan(s, may_backfill, &c, &cand);
        if (rc < 0)
            fbf_errorf(err, rc, "backfill: out of memory");
        for (size_t i = 0; rc == 0 && i < cand.n; i++) {
            if (fits_now(b->p, now, fbf_sched_free(s), fbf_sched_job(s, cand.v[i])))
                rc = start_job(b, s, cand.v[i], FBF_START_BACKFILLED, err);
        }
        fbf_hvec_fini(&cand);
    }
    release_phase(b, s);
    return rc;
}

/* ---- unlimited depth (conservative) ---- */

static int heap_push(backfill *b, double t, fbf_job_h j)
{
    if (b->heap_n == b->heap_cap) {
        size_t cap = b->heap_cap ? b->heap_cap * 2 : 256;
        rsv_item *v = realloc(b->heap, cap * sizeof *v);
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
    b->heap[i] = (rsv_item){t, j};
    return 0;
}

static void heap_sift_down(backfill *b, size_t i)
{
    rsv_item x = b->heap[i];
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

static void heap_pop(backfill *b)
{
    b->heap[0] = b->heap[--b->heap_n];
    if (b->heap_n)
        heap_sift_down(b, 0);
}

static bool live(fbf_sched *s, const rsv_item *it)
{
    const fbf_job *j = fbf_sched_job(s, it->j);
    return j->state == FBF_JOB_WAITING && j->rsv == it->t;
}

/* Drops stale entries once they outnumber the live ones (amortised O(1)). */
static void heap_purge(backfill *b, fbf_sched *s)
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

static int place(backfill *b, fbf_sched *s, fbf_job_h h, double from)
{
    const fbf_job *j = fbf_sched_job(s, h);
    double t = fbf_profile_earliest(b->p, from, j->res, j->walltime);
    if (fbf_policy_hold(b->p, t, j) < 0 || heap_push(b, t, h) < 0)
        return -ENOMEM;
    fbf_sched_set_rsv(s, h, t);
    return 0;
}

static int sort_cmp(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

/* Sorts handles into D1 order. */
static int sort_queue_order(backfill *b, fbf_sched *s, fbf_hvec *v)
{
    if (v->n < 2)
        return 0;
    if (v->n > b->sorted_cap) {
        sort_item *n = realloc(b->sorted, v->n * sizeof *n);
        if (!n)
            return -ENOMEM;
        b->sorted = n;
        b->sorted_cap = v->n;
    }
    for (size_t i = 0; i < v->n; i++) {
        const fbf_job *j = fbf_sched_job(s, v->v[i]);
        b->sorted[i] = (sort_item){j->subtime, j->seq, v->v[i]};
    }
    qsort(b->sorted, v->n, sizeof *b->sorted, sort_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = b->sorted[i].j;
    return 0;
}

/* D7 (a): every reservation, in queue order, moves to its earliest fit
 * with all the others in place; it never moves later. */
static int compress(backfill *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        if (!(j->walltime > 0) || isnan(j->rsv))
            continue;
        double old = j->rsv;
        if (fbf_policy_release(b->p, old, j) < 0)
            return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
        double t = fbf_profile_earliest(b->p, now, j->res, j->walltime);
        if (t > old && old >= now)
            return fbf_errorf(err, -EPROTO,
                              "conservative: compression moved job %s later (%.17g -> %.17g)",
                              j->id, old, t);
        if (fbf_policy_hold(b->p, t, j) < 0 || (t != old && heap_push(b, t, h) < 0))
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        fbf_sched_set_rsv(s, h, t);
    }
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

static int decide_persistent(backfill *b, fbf_sched *s, fbf_error *err)
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
        if (place(b, s, h, now) < 0)
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
        if ((rc = start_job(b, s, h, reason_for(s, h, placed_before), err)) < 0)
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
            if ((rc = start_job(b, s, h, reason_for(s, h, false), err)) < 0)
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

static int bf_decide(void *state, fbf_sched *s, fbf_error *err)
{
    backfill *b = state;
    if (ensure_profile(b, s) < 0)
        return fbf_errorf(err, -ENOMEM, "backfill: out of memory");
    return b->persistent ? decide_persistent(b, s, err) : decide_finite(b, s, err);
}

static double bf_estimate(void *state, fbf_sched *s, uint32_t res, double walltime)
{
    backfill *b = state;
    double now = fbf_sched_now(s);
    if (ensure_profile(b, s) < 0)
        return NAN;
    if (b->persistent)
        return fbf_profile_earliest(b->p, now, res, walltime);
    /* The start it would get holding a reservation behind the first k. */
    fbf_job_h boundary;
    if (reserve_phase(b, s, false, &boundary, NULL) < 0) {
        release_phase(b, s);
        return NAN;
    }
    double t = fbf_profile_earliest(b->p, now, res, walltime);
    release_phase(b, s);
    return t;
}

const fbf_policy_ops fbf_policy_backfill = {
    .name = "backfill",
    .needs_walltime = true,
    .create = bf_create,
    .destroy = bf_destroy,
    .job_submitted = bf_submitted,
    .job_ended = bf_ended,
    .decide = bf_decide,
    .estimate = bf_estimate,
};
