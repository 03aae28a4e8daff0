/*
 * bf_scan: the scan of finite-depth backfilling (EASY is depth 1) past
 * the k-th reservation, without walking the queue (b->fast). See
 * policy.c for the pass around it and state.h for the state.
 *
 * The rule. A job J past the boundary starts iff fits(J): J.res <= free
 * and (J.walltime == 0 or minfree(J.walltime) >= J.res), minfree(w) being
 * the profile's minimum of free() over [now, now + w), computed by the
 * very call the plain scan makes (fbf_profile_min_free, same IEEE sum
 * now + w). Starting a job only lowers free and the profile, so a job that
 * failed stays failed for the rest of the pass: the jobs started are, in
 * the backfill order (D9; the queue order by default), the first job after
 * the boundary that fits, then the first after that one that fits, and so
 * on. Each is found by searches, over trees kept in that order (an order
 * whose keys change with time has no index: policy.c scans plainly).
 *
 * Let floor = min free() over [now, inf) (D6's `extra` for EASY: the
 * profile never dips below it) and A = min(free, floor). Every job with
 * res <= A fits whatever its walltime. Every other job that fits has res
 * in (A, free], and for a FIXED res r the test is monotone in the
 * walltime alone: minfree(w) is non-increasing in w (now + w rounds
 * monotonically and the window only grows). Hence two kinds of search,
 * both exact prunings of a treap over queue order (policies/backfilling/queue_index.h):
 *   - `all`, every waiting job, aggregates min res: the first job after p
 *     with res <= A (skip a subtree iff min res > A);
 *   - `byres`, one tree per res value r present in (A, free]: the first
 *     job after p with walltime 0 or minfree(w) >= r (skip a subtree iff
 *     its min walltime w0 > 0 and minfree(w0) < r: then every job inside
 *     has w >= w0 and minfree(w) <= minfree(w0) < r).
 * The earliest of their answers in queue order is the next job to start.
 * A single tree pruned on (min res, min walltime) together would not be
 * exact: res and walltime can pass on different jobs of a subtree, and
 * on queues mixing narrow-but-long with wide-but-short jobs (common: the
 * decision benchmark's random queue) such searches visit a fixed share of
 * the queue, i.e. O(N).
 *
 * Cost. Submitting and starting a job: O(log N) expected in each of the
 * two treaps. A pass: O((starts + 1) (1 + D) log N log B), D the number
 * of distinct res values in (A, free] among the waiting jobs, B the
 * profile's breakpoints (each node test past the res check is one
 * minfree, O(log B)). D <= free <= capacity, whatever N. Where D is large
 * (a big completion on a platform with many job sizes) this can cost more
 * than the plain O(N) scan on a short queue, so a pass gets a budget of
 * N/8 + 16 log N node tests, plus 16 log N per start; once spent, the rest
 * of the pass (after the last job started) runs the plain scan over the
 * engine's workers, which decides the same. A pass thus costs at most
 * about the plain scan plus N/8 node tests.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"
#include "policies/policies.h"

/* The res values of waiting jobs, sorted, each with its tree: sized by
 * the distinct sizes that wait, not by the largest a peer may send. A
 * class whose tree empties stays (root 0) until empties outnumber the
 * live ones, so that sizes that come and go cost no moves. */
typedef struct res_class {
    uint32_t res;
    uint32_t root; /* tree of the waiting jobs of this res (0: none) */
} res_class;

struct fbf_bf_windex {
    fbf_qindex *all;   /* every waiting job */
    fbf_qindex *byres; /* the same jobs, one tree per res value */
    res_class *cls;    /* sorted by res */
    size_t n, cap, empty;
};

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

/* The first class with res >= r (w->n if none). */
static size_t lower_bound(const fbf_bf_windex *w, uint32_t r)
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
    size_t i = lower_bound(w, r);
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
    size_t i = lower_bound(w, fbf_sched_job(s, h)->res);
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
    size_t i = lower_bound(w, fbf_sched_job(s, h)->res);
    fbf_qindex_update_at(w->byres, s, w->cls[i].root, h);
}

typedef struct fit_ctx {
    const fbf_profile *p;
    double now;
    uint32_t free;
    int64_t floor;  /* min free() over [now, inf) */
    uint32_t any;   /* min(free, floor): such a res fits any walltime */
    size_t visits, budget;
    bool spent;
} fit_ctx;

static bool charge(fit_ctx *c)
{
    if (++c->visits <= c->budget)
        return true;
    c->spent = true;
    return false;
}

/* `all`: may the subtree hold a job of res <= any? */
static bool small_enough(void *arg, const fbf_qagg *a)
{
    fit_ctx *c = arg;
    return charge(c) && a->min_res <= c->any;
}

/* `byres` (one res value per tree): may the subtree hold a job that fits?
 * On a job's own values this is fits() itself. */
static bool may_fit(void *arg, const fbf_qagg *a)
{
    fit_ctx *c = arg;
    if (!charge(c) || a->min_res > c->free)
        return false;
    if (a->min_wall == 0 || (int64_t)a->min_res <= c->floor)
        return true;
    return fbf_profile_min_free(c->p, c->now, a->min_wall) >= (int64_t)a->min_res;
}

int fbf_bf_indexed_scan(fbf_backfill *b, fbf_sched *s, fbf_job_h last, fbf_error *err)
{
    fbf_bf_windex *w = b->wq;
    size_t n = fbf_sched_nb_waiting(s), lg = 1;
    while ((size_t)1 << lg < n)
        lg++;
    fit_ctx c = {.p = b->p, .now = fbf_sched_now(s), .budget = n / 8 + 16 * lg};
    /* Where the scan is, kept as a place: the job there has started, and
     * its record no longer gives every order's key. */
    fbf_qindex_probe at, *after = NULL;
    if (last != FBF_JOB_NONE) {
        at = fbf_qindex_probe_of(w->all, s, last);
        after = &at;
    }
    for (;;) {
        c.free = fbf_sched_free(s);
        if (c.free == 0)
            return 0;
        c.floor = fbf_profile_min_free(b->p, c.now, INFINITY);
        c.any = c.floor <= 0 ? 0 : c.floor < c.free ? (uint32_t)c.floor : c.free;
        fbf_job_h best = FBF_JOB_NONE;
        if (c.any > 0)
            best = fbf_qindex_next_after(w->all, s, fbf_qindex_root(w->all), after, small_enough,
                                         &c);
        for (size_t i = lower_bound(w, c.any + 1);
             i < w->n && w->cls[i].res <= c.free && !c.spent; i++) {
            if (!w->cls[i].root)
                continue;
            fbf_job_h h = fbf_qindex_next_after(w->byres, s, w->cls[i].root, after, may_fit, &c);
            if (h != FBF_JOB_NONE &&
                (best == FBF_JOB_NONE || fbf_qindex_cmp(w->all, s, h, best) < 0))
                best = h;
        }
        if (c.spent) { /* too many classes for this queue: finish plainly */
            b->stats.plain_fallbacks++;
            return fbf_backfill_plain_scan(b, s, after, true, err);
        }
        if (best == FBF_JOB_NONE)
            return 0;
        at = fbf_qindex_probe_of(w->all, s, best);
        after = &at;
        int rc = fbf_backfill_start_job(b, s, best, FBF_START_BACKFILLED, err);
        if (rc < 0)
            return rc;
        c.budget += 16 * lg;
    }
}
