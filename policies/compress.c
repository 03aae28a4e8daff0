/*
 * compress: the compression pass of conservative backfilling (D7 a) and
 * the queue indexes of reserved jobs it searches. conservative.c holds
 * the rest of D7; backfill_int.h the shared state.
 *
 * Which jobs can move, the test on a subtree of reserved jobs and the
 * search of a mover's new place: policies/holes.c, with the run tables of
 * policies/runs.c, which replace() keeps told of what each move changes. Visiting a job that
 * then does not move changes nothing, so a pass is exact as long as it
 * visits, in queue order, every job the plain pass would move.
 *
 * Why one tree per job size. Over all reserved jobs (qi), a subtree's min
 * res and min wall come from different jobs (narrow-but-long beside
 * wide-but-short), so the test passes on subtrees holding no job that can
 * move: at 1e5 waiting jobs the search made ~31,000 tests of ~20 holes
 * each to find ~140 movers. In a tree holding one res value r the test
 * is on (r, min wall, rsv range): much sharper, and with r fixed, the
 * answer for a hole and a window length is memoised (holes.c). The pass
 * still visits jobs in queue order: it keeps, per size r present,
 * cand[r], a job of size r after the position p (the last job visited)
 * such that no job of size r in (p, cand[r]) passes, and takes the
 * earliest over the sizes (a heap keyed by queue order; stale entries are
 * skipped, and a candidate is tested again when it comes out).
 *
 * What a move invalidates. When the job at p moves, the profile changes
 * (free() grows only on the released N = [max(old, now), old + wall),
 * drops where the job now sits) and N joins the holes. A job x of size r
 * in (p, cand[r]) failed the test at some earlier state; say it would
 * move at its turn through a window W. Take the last range N_m released
 * since that W meets: after it, free() on W only dropped, so W fitted
 * right after move m too, and meets N_m (whose max free then was >= r).
 * If there is none, W fitted at the earlier state and met one of its
 * holes (a hole dropped for its low max free can only be met where free
 * grew, i.e. inside some N): x passed then, a contradiction. So testing
 * x against the ranges released since, each on its own, at any later
 * state (before x's turn), finds it. Hence a log of the ranges each move
 * releases, and per size the log position applied so far: after a move,
 * each size r <= max free over N gets a "dirty" heap entry keyed by its
 * next job after p (its new candidates cannot come earlier); when that
 * entry comes out first, (p, cand[r]) of tree r is searched with the log
 * entries not yet applied (no memo). Sizes whose next job lies past the
 * next candidate wait, and take several moves in one search. The
 * mover's own size is searched from p with every hole.
 *
 * Cost. Per pass, with D sizes present, M moves, V jobs visited (movers,
 * and rarely a job that passes without moving), H holes (<= 64) and B
 * breakpoints: D searches to start, one search per visit, and per move
 * one O(log N) step per size (the dirty entry) plus the searches of the
 * sizes whose turn comes: O((D + V + M D) log N) tree nodes, each test
 * O(H) memo lookups and a few profile searches of O(log B), against N
 * profile searches for the plain pass. The weak spots are the D terms:
 * many sizes with few jobs each, and a short queue after a big completion
 * (it moves a good share of its jobs, M D grows past N). A pass therefore
 * uses the per-size trees only when N >= 16 D and the previous pass had
 * M D <= N / 4, and gets a budget of 2 N + 8 D log N units (a test, or a
 * profile search in it); once spent, the pass goes on from p with the
 * single-tree search over qi (kept for this), which decides the same. So
 * a pass costs at most the single-tree pass plus the budget. If the
 * per-size trees cannot be allocated, qi alone is used.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfill_int.h"
#include "policies/common.h"
#include "policies/compress.h"
#include "policies/holes.h"
#include "policies/runs.h"

typedef struct cand_item {
    double subtime;
    uint64_t seq;
    fbf_job_h h;
    uint32_t r;
    bool dirty; /* not a candidate: size r has holes to apply from h on */
} cand_item;

#define MEMO_MAX_SIZES 256

struct fbf_bf_sizes {
    fbf_qindex *q;   /* one tree per res value, sharing q's nodes */
    uint32_t *root;  /* root[r]: tree of the reserved jobs of res r (0: none) */
    fbf_job_h *cand; /* per pass, see the top comment */
    uint64_t *bits;  /* bit r set iff root[r] != 0 */
    size_t cap;      /* entries of root and cand (a multiple of 64) */
    cand_item *heap; /* per pass: candidates, earliest in queue order first */
    size_t heap_n, heap_cap;
    uint32_t *slot;  /* per pass: rank of size r among those present */
    uint32_t *seen;  /* per pass: log entries applied to size r's cand */
    uint8_t *pending; /* per pass: size r has a dirty entry in the heap */
    fbf_bf_holes log; /* per pass: the ranges released by each move */
    fbf_bf_memo *memo;    /* per pass: FBF_BF_MAX_HOLES entries per size present */
    size_t memo_cap; /* entries */
    uint64_t gen;
    size_t moves; /* moves made by the last pass */
};

static size_t budget_override;
static unsigned runs_share = FBF_RUNS_SPAN_SHARE;

void fbf_backfill_set_runs_share(unsigned span_share)
{
    runs_share = span_share;
}

static bool force_sizes, memo_off;
static atomic_ulong sized_passes, fallbacks;

void fbf_backfill_set_compress_tuning(size_t budget, bool always_sizes, bool no_memo)
{
    budget_override = budget;
    force_sizes = always_sizes;
    memo_off = no_memo;
}

void fbf_backfill_compress_stats(unsigned long *sized, unsigned long *fell_back)
{
    *sized = atomic_load(&sized_passes);
    *fell_back = atomic_load(&fallbacks);
}

/* ---- the per-size trees ---- */

static void sizes_destroy(fbf_bf_sizes *z)
{
    if (!z)
        return;
    fbf_qindex_destroy(z->q);
    free(z->root);
    free(z->cand);
    free(z->bits);
    free(z->heap);
    free(z->slot);
    free(z->seen);
    free(z->pending);
    free(z->log.v);
    free(z->memo);
    free(z);
}

static int sizes_grow(fbf_bf_sizes *z, uint32_t r)
{
    if (r < z->cap)
        return 0;
    size_t cap = z->cap ? z->cap : 64;
    while (cap <= r)
        cap *= 2;
    uint32_t *root = realloc(z->root, cap * sizeof *root);
    if (!root)
        return -ENOMEM;
    z->root = root;
    fbf_job_h *cand = realloc(z->cand, cap * sizeof *cand);
    if (!cand)
        return -ENOMEM;
    z->cand = cand;
    uint32_t *slot = realloc(z->slot, cap * sizeof *slot);
    if (!slot)
        return -ENOMEM;
    z->slot = slot;
    uint32_t *seen = realloc(z->seen, cap * sizeof *seen);
    if (!seen)
        return -ENOMEM;
    z->seen = seen;
    uint8_t *pending = realloc(z->pending, cap);
    if (!pending)
        return -ENOMEM;
    z->pending = pending;
    uint64_t *bits = realloc(z->bits, cap / 64 * sizeof *bits);
    if (!bits)
        return -ENOMEM;
    z->bits = bits;
    memset(root + z->cap, 0, (cap - z->cap) * sizeof *root);
    memset(bits + z->cap / 64, 0, (cap - z->cap) / 64 * sizeof *bits);
    z->cap = cap;
    return 0;
}

/* The per-size trees are an optimisation: when they cannot be allocated
 * or kept, they go for good and the all-jobs tree does the work. */
static void sizes_drop(fbf_backfill *b)
{
    sizes_destroy(b->sizes);
    b->sizes = NULL;
    b->sizes_off = true;
}

int fbf_bf_index_add(fbf_backfill *b, fbf_sched *s, fbf_job_h h)
{
    if (fbf_qindex_insert(b->qi, s, h) < 0)
        return -ENOMEM;
    if (fbf_sched_job(s, h)->walltime > b->max_wall)
        b->max_wall = fbf_sched_job(s, h)->walltime;
    if (b->sizes_off)
        return 0;
    fbf_bf_sizes *z = b->sizes;
    if (!z && (!(z = b->sizes = calloc(1, sizeof *z)) ||
               !(z->q = fbf_qindex_create(FBF_QINDEX_RSV)))) {
        sizes_drop(b);
        return 0;
    }
    uint32_t r = fbf_sched_job(s, h)->res;
    if (sizes_grow(z, r) < 0 || fbf_qindex_insert_at(z->q, s, &z->root[r], h) < 0) {
        sizes_drop(b);
        return 0;
    }
    z->bits[r / 64] |= 1ull << (r % 64);
    return 0;
}

void fbf_bf_index_remove(fbf_backfill *b, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_remove(b->qi, s, h);
    fbf_bf_sizes *z = b->sizes;
    if (!z)
        return;
    uint32_t r = fbf_sched_job(s, h)->res;
    fbf_qindex_remove_at(z->q, s, &z->root[r], h);
    if (!z->root[r])
        z->bits[r / 64] &= ~(1ull << (r % 64));
}

static void index_update(fbf_backfill *b, fbf_sched *s, fbf_job_h h)
{
    fbf_qindex_update(b->qi, s, h);
    if (b->sizes)
        fbf_qindex_update_at(b->sizes->q, s, b->sizes->root[fbf_sched_job(s, h)->res], h);
}

void fbf_bf_index_fini(fbf_backfill *b)
{
    sizes_destroy(b->sizes);
    b->sizes = NULL;
    fbf_bf_runs_destroy(b->runs);
    b->runs = NULL;
}

/* The smallest r >= from with a tree, or z->cap. */
static size_t next_size(const fbf_bf_sizes *z, size_t from)
{
    if (from >= z->cap)
        return z->cap;
    size_t i = from / 64;
    uint64_t m = z->bits[i] & (~0ull << (from % 64));
    while (!m) {
        if (++i == z->cap / 64)
            return z->cap;
        m = z->bits[i];
    }
    return i * 64 + (size_t)__builtin_ctzll(m);
}

static bool item_less(const cand_item *a, const cand_item *c)
{
    return a->subtime < c->subtime || (a->subtime == c->subtime && a->seq < c->seq);
}

static int heap_add(fbf_bf_sizes *z, fbf_sched *s, uint32_t r, fbf_job_h h, bool dirty)
{
    if (z->heap_n == z->heap_cap) {
        size_t cap = z->heap_cap ? z->heap_cap * 2 : 64;
        cand_item *v = realloc(z->heap, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        z->heap = v;
        z->heap_cap = cap;
    }
    const fbf_job *j = fbf_sched_job(s, h);
    cand_item x = {j->subtime, j->seq, h, r, dirty};
    size_t i = z->heap_n++;
    while (i > 0 && item_less(&x, &z->heap[(i - 1) / 2])) {
        z->heap[i] = z->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    z->heap[i] = x;
    return 0;
}

static int cand_push(fbf_bf_sizes *z, fbf_sched *s, uint32_t r, fbf_job_h h)
{
    z->cand[r] = h;
    return h == FBF_JOB_NONE ? 0 : heap_add(z, s, r, h, false);
}

/* Pops the earliest entry; false when none is left. */
static bool heap_pop(fbf_bf_sizes *z, cand_item *top)
{
    if (!z->heap_n)
        return false;
    *top = z->heap[0];
    cand_item x = z->heap[--z->heap_n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= z->heap_n)
            break;
        if (c + 1 < z->heap_n && item_less(&z->heap[c + 1], &z->heap[c]))
            c++;
        if (!item_less(&z->heap[c], &x))
            break;
        z->heap[i] = z->heap[c];
        i = c;
    }
    if (z->heap_n)
        z->heap[i] = x;
    return true;
}

/* Re-places one reservation (D7 a). When it moves in the fast pass, *freed
 * is the range it released after now (empty otherwise: a >= b). */
static int replace(fbf_backfill *b, fbf_sched *s, fbf_job_h h, bool fast, fbf_bf_hole *freed,
                   fbf_error *err)
{
    double now = fbf_sched_now(s);
    const fbf_job *j = fbf_sched_job(s, h);
    double old = j->rsv;
    *freed = (fbf_bf_hole){0, 0, 0};
    uint64_t unfit = fast ? fbf_bf_holes_unfit(b, now, j) : 0;
    if (fbf_policy_release(b->p, old, j) < 0)
        return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
    double t = fast ? fbf_bf_earliest_near_holes(b, now, j, old, unfit)
                    : fbf_profile_earliest(b->p, now, j->res, j->walltime);
    if (t > old && old >= now)
        return fbf_errorf(err, -EPROTO,
                          "conservative: compression moved job %s later (%.17g -> %.17g)",
                          j->id, old, t);
    if (fbf_policy_hold(b->p, t, j) < 0 || (t != old && fbf_bf_heap_push(b, t, h) < 0))
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    fbf_sched_set_rsv(s, h, t);
    if (fast && t != old) {
        index_update(b, s, h);
        double end = old + j->walltime;
        fbf_bf_skip_release(b, old, end);
        if (end > now) {
            double a = old > now ? old : now;
            int64_t mf = fbf_profile_max_free(b->p, a, end);
            *freed = (fbf_bf_hole){a, end, mf};
            if (b->runs) {
                /* Tables over the released range are wrong; those over the
                 * job's new place are only loose, but would let through
                 * jobs that do not move. */
                fbf_bf_runs_changed(b->runs, a, end);
                fbf_bf_runs_changed(b->runs, t, t + j->walltime);
            }
            if (fbf_bf_holes_push(&b->holes, a, end, mf) < 0 ||
                fbf_bf_holes_push(&b->pending, a, end, 0) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            fbf_bf_holes_normalize(b, &b->holes, now, 1, true);
            if (b->runs)
                fbf_bf_runs_remap(b->runs, &b->holes);
        }
    }
    return 0;
}

/* The single-tree search (the fallback), from just after `after`. */
static int compress_all(fbf_backfill *b, fbf_sched *s, fbf_job_h after, fbf_error *err)
{
    fbf_bf_move_ctx c = {.b = b, .now = fbf_sched_now(s), .hs = &b->holes, .budget = SIZE_MAX};
    fbf_bf_hole freed;
    int rc;
    for (fbf_job_h h; (h = fbf_qindex_next(b->qi, s, after, fbf_bf_may_move, &c)) != FBF_JOB_NONE;
         after = h) {
        double old = fbf_sched_job(s, h)->rsv;
        if ((rc = replace(b, s, h, true, &freed, err)) < 0)
            return rc;
        if (b->sizes && fbf_sched_job(s, h)->rsv != old)
            b->sizes->moves++;
    }
    return 0;
}

/* The per-size pass costs at least a search per size, and each move
 * about one O(log N) step per size: with few jobs per size, or when the
 * last pass moved many jobs for the queue's length (a short queue after a
 * big completion), the single tree is the cheaper way to the same
 * answer. */
static bool use_sizes(fbf_backfill *b)
{
    fbf_bf_sizes *z = b->sizes;
    if (!z)
        return false;
    size_t d = 0;
    for (size_t r = next_size(z, 0); r < z->cap; r = next_size(z, r + 1))
        d++;
    size_t n = fbf_qindex_count(b->qi);
    bool yes = b->holes.n && (force_sizes || (16 * d <= n && z->moves * d <= n / 4));
    z->moves = 0;
    return yes;
}

static bool any_job(void *ctx, const fbf_qagg *a)
{
    (void)ctx;
    (void)a;
    return true;
}

#define ROW(r) (memo ? &z->memo[(size_t)z->slot[r] * FBF_BF_MAX_HOLES] : NULL)

/* The per-size search of the top comment; on a spent budget it hands
 * over to compress_all from the last job visited. */
static int compress_sizes(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    fbf_bf_sizes *z = b->sizes;
    size_t n = fbf_qindex_count(b->qi), lg = 1;
    while ((size_t)1 << lg < n)
        lg++;
    size_t d = 0;
    for (size_t r = next_size(z, 0); r < z->cap; r = next_size(z, r + 1)) {
        z->slot[r] = (uint32_t)d++;
        z->seen[r] = 0;
        z->pending[r] = 0;
    }
    fbf_bf_move_ctx c = {.b = b,
                         .now = fbf_sched_now(s),
                         .hs = &b->holes,
                         .gen = ++z->gen,
                         .budget = budget_override ? budget_override : 2 * n + 8 * d * lg};
    bool memo = d <= MEMO_MAX_SIZES && !memo_off;
    atomic_fetch_add(&sized_passes, 1);
    if (memo && z->memo_cap < d * FBF_BF_MAX_HOLES) {
        fbf_bf_memo *v = realloc(z->memo, d * FBF_BF_MAX_HOLES * sizeof *v);
        if (v) {
            z->memo = v;
            z->memo_cap = d * FBF_BF_MAX_HOLES;
            memset(v, 0, z->memo_cap * sizeof *v);
        }
        memo = v != NULL;
    }
    z->heap_n = 0;
    z->log.n = 0;
    fbf_job_h after = FBF_JOB_NONE;
    for (size_t r = next_size(z, 0); r < z->cap && !c.spent; r = next_size(z, r + 1)) {
        c.row = ROW(r);
        fbf_job_h x = fbf_qindex_next_at(z->q, s, z->root[r], after, fbf_bf_may_move, &c);
        if (cand_push(z, s, (uint32_t)r, x) < 0)
            goto oom;
    }
    cand_item it;
    while (!c.spent && heap_pop(z, &it)) {
        uint32_t r = it.r;
        fbf_job_h h = it.h;
        if (it.dirty) {
            /* Size r's next job comes before every other candidate: apply
             * the ranges released since its candidate was searched. */
            if (!z->pending[r])
                continue;
            z->pending[r] = 0;
            fbf_bf_holes seg = {z->log.v + z->seen[r], z->log.n - z->seen[r], 0};
            z->seen[r] = (uint32_t)z->log.n;
            fbf_bf_move_ctx cl = c;
            cl.hs = &seg;
            cl.unsorted = true;
            cl.row = NULL; /* the memo is for the holes */
            fbf_job_h x = fbf_qindex_next_before_at(z->q, s, z->root[r], after, z->cand[r],
                                                    fbf_bf_may_move, &cl);
            c.work = cl.work;
            c.spent = cl.spent;
            if (x != FBF_JOB_NONE && cand_push(z, s, r, x) < 0)
                goto oom;
            continue;
        }
        if (z->cand[r] != h)
            continue; /* stale */
        /* A candidate found through a few holes may fail the test by now. */
        const fbf_job *j = fbf_sched_job(s, h);
        fbf_qagg own = {j->res, j->walltime, j->rsv, j->rsv};
        c.row = ROW(r);
        if (!fbf_bf_may_move(&c, &own)) {
            fbf_job_h x = fbf_qindex_next_at(z->q, s, z->root[r], h, fbf_bf_may_move, &c);
            if (cand_push(z, s, r, x) < 0)
                goto oom;
            continue;
        }
        double old = j->rsv;
        fbf_bf_hole freed;
        int rc = replace(b, s, h, true, &freed, err);
        if (rc < 0)
            return rc;
        after = h;
        if (fbf_sched_job(s, h)->rsv != old) {
            c.gen = ++z->gen; /* the profile and the holes changed */
            z->moves++;
        }
        if (freed.a < freed.b && fbf_bf_holes_push(&z->log, freed.a, freed.b, freed.mf) < 0)
            goto oom;
        /* Size r, searched again with every hole, needs no log entry. */
        z->seen[r] = (uint32_t)z->log.n;
        z->pending[r] = 0;
        fbf_job_h next = fbf_qindex_next_at(z->q, s, z->root[r], h, fbf_bf_may_move, &c);
        if (cand_push(z, s, r, next) < 0)
            goto oom;
        if (!(freed.a < freed.b))
            continue;
        /* Only sizes up to N's max free can fit through N; one that waits
         * for its holes already keeps its place in the heap. */
        size_t top = freed.mf < 0 ? 0 : (size_t)freed.mf;
        for (size_t q = next_size(z, 0); q <= top && q < z->cap; q = next_size(z, q + 1)) {
            if (q == r || z->pending[q])
                continue;
            fbf_job_h x = fbf_qindex_next_at(z->q, s, z->root[q], h, any_job, NULL);
            c.work++;
            if (x == FBF_JOB_NONE)
                continue;
            if (heap_add(z, s, (uint32_t)q, x, true) < 0)
                goto oom;
            z->pending[q] = 1;
        }
    }
    if (!c.spent)
        return 0;
    atomic_fetch_add(&fallbacks, 1);
    return compress_all(b, s, after, err);
oom:
    return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
}

int fbf_bf_compress(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    int rc;
    if (b->fast) {
        double now = fbf_sched_now(s);
        fbf_bf_holes t = b->holes;
        b->holes = b->pending; /* the previous pass's and this message's releases */
        b->pending = t;
        b->pending.n = 0;
        fbf_bf_holes_normalize(b, &b->holes, now, fbf_qindex_all(b->qi).min_res, false);
        if (!b->runs && !b->runs_failed && !(b->runs = fbf_bf_runs_create()))
            b->runs_failed = true;
        if (b->runs) {
            fbf_bf_runs_reset(b->runs, b->max_wall, fbf_qindex_all(b->qi).min_res, runs_share);
            fbf_bf_runs_remap(b->runs, &b->holes);
        }
        rc = use_sizes(b) ? compress_sizes(b, s, err) : compress_all(b, s, FBF_JOB_NONE, err);
        b->holes.n = 0;
        return rc;
    }
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    fbf_bf_hole freed;
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        if (!(j->walltime > 0) || isnan(j->rsv))
            continue;
        if ((rc = replace(b, s, h, false, &freed, err)) < 0)
            return rc;
    }
    return 0;
}
