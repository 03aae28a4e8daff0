/*
 * compress: the compression pass of conservative backfilling (D7 a) and
 * the released ranges it feeds on. conservative.c holds the rest of D7;
 * backfill_int.h the shared state.
 *
 * Which jobs can move. The plain pass re-places every reserved job J, in
 * queue order, at earliest(J). J moves only if some t < rsv_J fits it,
 * and then the window W = [t, min(t + wall_J, rsv_J)) must meet a range
 * released since J was last (re)placed: outside released ranges free()
 * has not grown since, so a fit there (free >= res on W, and beyond rsv_J
 * J's own span frees its res) would have been found then. (A fit at a
 * non-breakpoint t implies one at the breakpoint before it: free is flat
 * in between.) Capacity is released only by a completion ([now, est_end))
 * and by a reservation that moves ([old, old + wall)); starts of due
 * reservations swap a span for the same span. So a pass only needs the
 * ranges released by the previous pass (jobs before the mover had already
 * been visited) plus this message's completions plus what this pass
 * releases. Those ranges ("holes", merged, possibly widened: a superset is
 * always safe) drive searches of queue-order treaps (policies/qindex.h)
 * with a monotone test on (min res, min wall, min/max rsv) of a subtree:
 * for some hole [a, b) with a < max rsv, some t in [a - l, min(b, max
 * rsv)) has free >= min res over [t, t + l), l = min(min wall, min rsv -
 * b) (0 if that is negative): W has at least that length when t < b. A
 * job that passes is re-placed exactly, its earliest fit searched only
 * near the holes (the profile's earliest_before), which gives the plain
 * answer because no fit lies elsewhere. Visiting a job that then does not
 * move changes nothing. Jobs whose reservation is already in the past (a
 * running job outlived its estimate) always pass, with a full search.
 *
 * Why one tree per job size. Over all jobs, a subtree's min res and min
 * wall come from different jobs (narrow-but-long beside wide-but-short),
 * so the test passes on subtrees holding no job that can move: at 1e5
 * waiting jobs the search made ~31,000 tests of ~20 holes each to find
 * ~140 movers. In a tree holding a single res value r the test is on
 * (r, min wall, rsv range): much sharper. The pass still visits jobs in
 * queue order, so it keeps, per size r present, cand[r]: a job of size r
 * after the position p (the last job visited) such that no job of size r
 * in (p, cand[r]) passes, and takes the earliest over the sizes (a heap
 * keyed by queue order, stale entries skipped).
 *
 * What a move invalidates. When the job at p moves, the profile changes
 * (free() grows only on the released N = [max(old, now), old + wall),
 * drops where it now sits) and N joins the holes. A job x of size r in
 * (p, cand[r]) failed the test with the older holes H and profile P; say
 * it would move at its turn, through a window W fitting in the later
 * profile. If W meets no range released since (no N), free() on W was no
 * smaller in P and W meets a range of H, so x passed then: contradiction
 * (induction over the moves in between; a hole dropped because max free
 * there was below every res can only be met by a fitting W where free
 * grew, i.e. inside some N). So after a move only N can add candidates:
 * for every size r, search (p, cand[r]) of tree r with the test on N
 * alone (one profile search per node, not one per hole). The mover's own
 * size is searched from p with every hole.
 *
 * Cost. Per pass, with D sizes present, M movers, V jobs visited (movers
 * and the few that pass the test without moving), H holes (<= 64) and B
 * breakpoints: O(D) searches to start, one search with every hole per
 * visit, and D searches with one hole per mover: about
 * O((D H + V H + M D) log N) profile searches of O(log B) each, against
 * O(N) for the plain pass. The worst cases are many sizes (D up to the
 * platform's size) and many movers. To stay close to the single-tree
 * search in any case, a pass gets a budget of N/4 + 64 (D + H) log N units
 * (a test, and each profile search in it, is a unit); once spent, the
 * pass goes on from p with that search over the tree of all reserved jobs
 * (kept for this purpose), which decides the same. If the per-size trees
 * cannot be allocated, the all-jobs tree alone is used.
 */
#include <errno.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "policies/backfill_int.h"
#include "policies/common.h"
#include "policies/compress.h"

#define MAX_HOLES 64
static int dbg_oldtest = -1, dbg_call, dbg_stat;
static size_t dbg_nodes;

typedef struct cand_item {
    double subtime;
    uint64_t seq;
    fbf_job_h h;
    uint32_t r;
} cand_item;

/* What a pass learnt about the first kind of window for one (size, hole):
 * windows of length <= pass fit, none of length >= fail does. Valid while
 * gen matches: every move changes the profile and the holes. */
typedef struct a_memo {
    uint64_t gen;
    double pass, fail;
} a_memo;

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
    a_memo *memo;    /* per pass: MAX_HOLES entries per size present */
    size_t memo_cap; /* entries */
    uint64_t gen;
};

static size_t budget_override;
static atomic_ulong fallbacks;

void fbf_backfill_set_compress_budget(size_t units) { budget_override = units; }

unsigned long fbf_backfill_compress_fallbacks(void) { return atomic_load(&fallbacks); }

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
    if (b->sizes_off)
        return 0;
    fbf_bf_sizes *z = b->sizes;
    if (!z && (!(z = b->sizes = calloc(1, sizeof *z)) || !(z->q = fbf_qindex_create()))) {
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

size_t fbf_bf_index_bytes(const fbf_backfill *b)
{
    const fbf_bf_sizes *z = b->sizes;
    size_t n = b->qi ? fbf_qindex_bytes(b->qi) : 0;
    if (z)
        n += sizeof *z + fbf_qindex_bytes(z->q) +
             z->cap * (sizeof *z->root + sizeof *z->cand + sizeof *z->slot) + z->cap / 8 +
             z->heap_cap * sizeof *z->heap + z->memo_cap * sizeof *z->memo;
    return n;
}

void fbf_bf_index_fini(fbf_backfill *b)
{
    sizes_destroy(b->sizes);
    b->sizes = NULL;
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

static int cand_push(fbf_bf_sizes *z, fbf_sched *s, uint32_t r, fbf_job_h h)
{
    z->cand[r] = h;
    if (h == FBF_JOB_NONE)
        return 0;
    if (z->heap_n == z->heap_cap) {
        size_t cap = z->heap_cap ? z->heap_cap * 2 : 64;
        cand_item *v = realloc(z->heap, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        z->heap = v;
        z->heap_cap = cap;
    }
    const fbf_job *j = fbf_sched_job(s, h);
    cand_item x = {j->subtime, j->seq, h, r};
    size_t i = z->heap_n++;
    while (i > 0 && item_less(&x, &z->heap[(i - 1) / 2])) {
        z->heap[i] = z->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    z->heap[i] = x;
    return 0;
}

/* Pops the earliest live candidate (FBF_JOB_NONE when none is left). */
static fbf_job_h cand_pop(fbf_bf_sizes *z, uint32_t *r)
{
    while (z->heap_n) {
        cand_item top = z->heap[0], x = z->heap[--z->heap_n];
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
        if (z->cand[top.r] == top.h) {
            *r = top.r;
            return top.h;
        }
    }
    return FBF_JOB_NONE;
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
    fbf_bf_skip_release(b, a, end);
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
    const fbf_bf_holes *hs; /* the holes tested (sorted by a) */
    size_t work, budget;
    bool spent;
    a_memo *row; /* memo of the tree searched, by hole (NULL: none) */
    uint64_t gen;
} move_ctx;

/* The monotone test of the top comment for one hole h = [a, b). A job J
 * (res r, walltime w, reservation R) moves through h only by a window
 * [t, min(t + w, R)) with free >= r, t < min(b, R), reaching past a.
 * Either t + w <= R: then a window of the subtree's min walltime fits,
 * starting in [a - min wall, min(b, max rsv)) (shift it right to end at a
 * if it starts earlier); or t + w > R: then, when R > b, the window
 * covers [b, R) and so [b, min rsv). When min rsv <= b, only "free >= r
 * somewhere in [a, min(b, max rsv))" is tested. Lengths are shortened by
 * a relative 1e-9 so that rounding never makes a window longer than the
 * exact one. */
static bool hole_may_move(move_ctx *c, size_t i, const fbf_qagg *g, int *before_rsv)
{
    const fbf_profile *p = c->b->p;
    const fbf_bf_hole *h = &c->hs->v[i];
    double stop = fmin(h->b, g->max_rsv), l = 0;
    if (g->min_rsv > h->b) {
        /* When min rsv - b >= min wall, a window of the second kind holds
         * one of the first: no need to test it. */
        if (g->min_rsv - h->b < g->min_wall) {
            c->work++;
            if (fbf_profile_min_free(p, h->b, (g->min_rsv - h->b) * (1 - 1e-9)) >= g->min_res)
                return true;
        }
    } else if (*before_rsv < 0) {
        /* min rsv <= b: a window of the second kind has free >= r just
         * before its R, in [the breakpoint before min rsv, max rsv): the
         * same for every hole, so tested once per subtree. */
        double k = fbf_profile_key_floor(p, nextafter(g->min_rsv, -INFINITY));
        c->work++;
        *before_rsv = fbf_profile_max_free(p, k > c->now ? k : c->now, g->max_rsv) >= g->min_res;
    }
    if (*before_rsv > 0 && !(g->min_rsv > h->b))
        return true;
    l = g->min_wall * (1 - 1e-9);
    /* The first kind is monotone in l (a longer window that fits holds a
     * shorter one that fits, shifted to reach a): memoised per hole for
     * the tree's size, when stop is the hole's end. */
    a_memo *m = c->row && !(g->max_rsv < h->b) ? &c->row[i] : NULL;
    if (m) {
        if (m->gen != c->gen)
            *m = (a_memo){c->gen, -INFINITY, INFINITY};
        if (l <= m->pass)
            return true;
        if (l >= m->fail)
            return false;
    }
    c->work++;
    bool fits = fbf_profile_earliest_before(p, window_from(p, c->now, h->a, l), g->min_res, l,
                                            stop) < INFINITY;
    if (m && fits)
        m->pass = l;
    else if (m)
        m->fail = l;
    return fits;
}

/* The test over every hole, on a subtree or one job. Once the budget is
 * spent it answers false: the caller then drops the answer. */
static bool may_move(void *arg, const fbf_qagg *g)
{
    move_ctx *c = arg;
    if (c->spent || ++c->work > c->budget) {
        c->spent = true;
        return false;
    }
    if (g->min_rsv < c->now)
        return true;
    const fbf_bf_holes *hs = c->hs;
    int before_rsv = -1;
    for (size_t i = 0; i < hs->n; i++) {
        const fbf_bf_hole *h = &hs->v[i];
        if (!(h->a < g->max_rsv))
            break; /* sorted by a */
        if ((int64_t)g->min_res <= h->mf && hole_may_move(c, i, g, &before_rsv))
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

/* Re-places one reservation (D7 a). When it moves in the fast pass, *freed
 * is the range it released after now (empty otherwise: a >= b). */
static int replace(fbf_backfill *b, fbf_sched *s, fbf_job_h h, bool fast, fbf_bf_hole *freed,
                   fbf_error *err)
{
    double now = fbf_sched_now(s);
    const fbf_job *j = fbf_sched_job(s, h);
    double old = j->rsv;
    *freed = (fbf_bf_hole){0, 0, 0};
    if (fbf_policy_release(b->p, old, j) < 0)
        return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
    double t = fast ? earliest_near_holes(b, now, j, old)
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
            if (holes_push(&b->holes, a, end, mf) < 0 || holes_push(&b->pending, a, end, 0) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            holes_normalize(b, &b->holes, now, 1);
        }
    }
    return 0;
}

/* The single-tree search (the fallback), from just after `after`. */
static int compress_all(fbf_backfill *b, fbf_sched *s, fbf_job_h after, fbf_error *err)
{
    move_ctx c = {b, fbf_sched_now(s), &b->holes, 0, SIZE_MAX, false};
    fbf_bf_hole freed;
    int rc;
    size_t v = 0, m = 0;
    for (fbf_job_h h; (h = fbf_qindex_next(b->qi, s, after, may_move, &c)) != FBF_JOB_NONE;
         after = h) {
        if ((rc = replace(b, s, h, true, &freed, err)) < 0)
            return rc;
        v++; m += freed.a < freed.b;
    }
    if (dbg_stat)
        fprintf(stderr, "CALL nodes=%zu work=%zu visits=%zu moves=%zu holes=%zu\n", dbg_nodes, c.work, v, m, b->holes.n);
    return 0;
}

#define ROW(r) (memo ? &z->memo[(size_t)z->slot[r] * MAX_HOLES] : NULL)

/* The per-size search of the top comment; on a spent budget it hands
 * over to compress_all from the last job visited. */
static int compress_sizes(fbf_backfill *b, fbf_sched *s, fbf_error *err)
{
    fbf_bf_sizes *z = b->sizes;
    size_t n = fbf_qindex_count(b->qi), lg = 1;
    while ((size_t)1 << lg < n)
        lg++;
    size_t d = 0;
    for (size_t r = next_size(z, 0); r < z->cap; r = next_size(z, r + 1))
        d++;
    move_ctx c = {b, fbf_sched_now(s), &b->holes, 0, n / 4 + 64 * (d + MAX_HOLES) * lg, false,
                  NULL, ++z->gen};
    bool memo = d <= MEMO_MAX_SIZES;
    if (memo && z->memo_cap < d * MAX_HOLES) {
        a_memo *v = realloc(z->memo, d * MAX_HOLES * sizeof *v);
        if (v) {
            z->memo = v;
            z->memo_cap = d * MAX_HOLES;
            memset(v, 0, z->memo_cap * sizeof *v);
        }
        memo = v != NULL;
    }
    d = 0;
    for (size_t r = next_size(z, 0); r < z->cap; r = next_size(z, r + 1))
        z->slot[r] = (uint32_t)d++;
    if (getenv("FBF_B")) c.budget = strtoul(getenv("FBF_B"), 0, 10);
    if (budget_override)
        c.budget = budget_override;
    fbf_bf_holes one = {.n = 1, .cap = 1};
    move_ctx c1 = c;
    c1.hs = &one; /* no memo: N is not among the holes */
    z->heap_n = 0;
    size_t dbg_visits = 0, dbg_moves = 0, dbg_rq = 0;
    fbf_job_h after = FBF_JOB_NONE;
    for (size_t r = next_size(z, 0); r < z->cap && !c.spent; r = next_size(z, r + 1))
        if (cand_push(z, s, (uint32_t)r, fbf_qindex_next_at(z->q, s, z->root[r], after, may_move, (c.row = ROW(r), &c))) < 0)
            goto oom;
    uint32_t r;
    for (fbf_job_h h; !c.spent && (h = cand_pop(z, &r)) != FBF_JOB_NONE;) {
        fbf_bf_hole freed;
        /* A candidate found through one hole may fail the test by now. */
        const fbf_job *j = fbf_sched_job(s, h);
        fbf_qagg own = {j->res, j->walltime, j->rsv, j->rsv};
        c.row = ROW(r);
        if (!may_move(&c, &own)) {
            if (cand_push(z, s, r, fbf_qindex_next_at(z->q, s, z->root[r], h, may_move, (c.row = ROW(r), &c))) < 0)
                goto oom;
            continue;
        }
        dbg_visits++;
        double old = j->rsv;
        int rc = replace(b, s, h, true, &freed, err);
        if (rc < 0)
            return rc;
        after = h;
        if (fbf_sched_job(s, h)->rsv != old)
            c.gen = c1.gen = ++z->gen; /* the profile and the holes changed */
        if (cand_push(z, s, r, fbf_qindex_next_at(z->q, s, z->root[r], h, may_move, (c.row = ROW(r), &c))) < 0)
            goto oom;
        if (!(freed.a < freed.b))
            continue;
        dbg_moves++;
        one.v = &freed;
        c1.work = c.work;
        /* A job of res above N's max free cannot fit through N; nor can one
         * reserved in the past pass only now (it passed from the start). */
        size_t top = freed.mf < 0 ? 0 : (size_t)freed.mf;
        for (size_t q = next_size(z, 0); q <= top && q < z->cap && !c1.spent;
             q = next_size(z, q + 1)) {
            if (q == r)
                continue;
            dbg_rq++;
            fbf_job_h x = fbf_qindex_next_before_at(z->q, s, z->root[q], h, z->cand[q],
                                                    may_move, &c1);
            if (x != FBF_JOB_NONE && cand_push(z, s, (uint32_t)q, x) < 0)
                goto oom;
        }
        c.work = c1.work;
        c.spent = c1.spent;
    }
    if (dbg_stat)
        fprintf(stderr, "CSTAT nodes=%zu n=%zu d=%zu holes=%zu work=%zu budget=%zu spent=%d visits=%zu moves=%zu rq=%zu\n", dbg_nodes, n, d, b->holes.n, c.work, c.budget, c.spent, dbg_visits, dbg_moves, dbg_rq);
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
    if (dbg_oldtest < 0) { dbg_oldtest = !!getenv("FBF_OLDTEST"); dbg_call = !!getenv("FBF_CALL"); dbg_stat = !!getenv("FBF_CSTAT"); }
    if (b->fast) {
        double now = fbf_sched_now(s);
        fbf_bf_holes t = b->holes;
        b->holes = b->pending; /* the previous pass's and this message's releases */
        b->pending = t;
        b->pending.n = 0;
        holes_normalize(b, &b->holes, now, fbf_qindex_all(b->qi).min_res);
        dbg_nodes = 0;
        rc = b->sizes && b->holes.n && !dbg_call ? compress_sizes(b, s, err)
                                     : compress_all(b, s, FBF_JOB_NONE, err);
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
