/*
 * power_wake: the waking rule of energy saving (power.h, "Waking"): which
 * sleeping machines to wake, and when, for the jobs that wait. cand, ends
 * and moves are scratch, rebuilt at each decision point that applies the
 * rule; its cost is O(runs log runs + running log running + capacity
 * log^2), plus O(runs) for a job whose Tn lies within on_delay of being
 * worth a wake. The wakes found are applied together at the end (the
 * walk reads only what they do not change: candidates and running jobs).
 */
#include <math.h>
#include <stdlib.h>

#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/power_int.h"

static int cand_cmp(const void *a, const void *b)
{
    const power_cand *x = a, *y = b;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    if (x->back != y->back)
        return x->back < y->back ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int ending_cmp(const void *a, const void *b)
{
    const power_ending *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

typedef struct run_ctx {
    fbf_power *p;
    fbf_engine *e;
    double now, t0;
    uint64_t avail;
    int err;
} run_ctx;

static int note_cand(void *ctx, const fbf_mrun *x)
{
    run_ctx *c = ctx;
    fbf_power *p = c->p;
    if (x->st != FBF_MACHINE_OFF && x->st != FBF_MACHINE_SWITCHING_OFF)
        return 0;
    double end = fbf_sched_job(c->e, x->hold)->est_end;
    if (end <= c->t0)
        return 0;
    double back = x->st == FBF_MACHINE_OFF
                      ? c->t0
                      : fmax(c->now, x->req_at + p->cfg.off_delay) + p->cfg.on_delay;
    if (fbf_power_grow((void **)&p->cand, &p->cand_cap, p->nc, sizeof *p->cand) < 0)
        return -ENOMEM;
    p->cand[p->nc++] = (power_cand){end, back, x->lo, (uint64_t)x->hi - x->lo + 1, 0};
    return 0;
}

static void count_running(void *ctx, const fbf_job *j)
{
    run_ctx *c = ctx;
    if (j->est_end <= c->t0) {
        c->avail += j->res;
        return;
    }
    if (j->hold || c->err)
        return; /* holds ending later are candidates */
    fbf_power *p = c->p;
    if (fbf_power_grow((void **)&p->ends, &p->ne_cap, p->ne, sizeof *p->ends) < 0) {
        c->err = -ENOMEM;
        return;
    }
    p->ends[p->ne++] = (power_ending){j->est_end, j->res, 0};
}

/* The m-th smallest end of the running jobs ending after t0 (m >= 0:
 * -INFINITY for 0, INFINITY past them), by the prefix counts. */
static double run_kth(const fbf_power *p, uint64_t m)
{
    if (m == 0)
        return -INFINITY;
    size_t lo = 0, hi = p->ne;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->ends[mid].cum >= m)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < p->ne ? p->ends[lo].end : INFINITY;
}

/* The j-th smallest hold end among the candidates left (0 < j <= those
 * left; -INFINITY for j = 0): ends descend along cand, so it lies in the
 * last run from `from` whose suffix count reaches j. */
static double cand_kth(const fbf_power *p, size_t from, uint64_t j)
{
    if (j == 0)
        return -INFINITY;
    size_t lo = from, hi = p->nc - 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo + 1) / 2;
        if (p->cand[mid].suf >= j)
            lo = mid;
        else
            hi = mid - 1;
    }
    return p->cand[lo].end;
}

/* The k-th smallest end (k >= 1) among the running jobs' ends and the
 * `left` candidates from cand[from] on; INFINITY past them: the smallest
 * max(cand_kth(j), run_kth(k - j)) over the splits j, found where the
 * first (rising in j) overtakes the second (falling). */
static double kth_end(const fbf_power *p, size_t from, uint64_t left, uint64_t k)
{
    uint64_t jmax = k < left ? k : left, lo = 0, hi = jmax + 1;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (cand_kth(p, from, mid) >= run_kth(p, k - mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    double best = lo <= jmax ? cand_kth(p, from, lo) : INFINITY;
    return lo > 0 ? fmin(best, run_kth(p, k - (lo - 1))) : best;
}

static int tw_cmp(const void *a, const void *b)
{
    const power_move *x = a, *y = b;
    return x->tw < y->tw ? -1 : x->tw > y->tw;
}

/* A change of runs: the machines of one tw group of moves. */
typedef struct plan_ctx {
    fbf_power *p;
    double now, tw;
    fbf_job_h hold;
} plan_ctx;

/* A machine whose hold now ends at tw: woken now when due. */
static int set_planned(void *ctx, fbf_mrun *x)
{
    const plan_ctx *c = ctx;
    fbf_power *p = c->p;
    x->hold = c->hold;
    x->wake_at = c->tw - p->cfg.on_delay;
    if (x->st == FBF_MACHINE_OFF && x->wake_at <= c->now) {
        if (fbf_idset_add_range(&p->wake, x->lo, x->hi) < 0)
            return -ENOMEM;
        x->st = FBF_MACHINE_SWITCHING_ON;
        x->req_at = c->now;
    }
    return 0;
}

/* The moves' machines leave their holds for new ones ending at their tw,
 * one per tw (moves of different tw may touch: each group is its own
 * change), their wakes planned accordingly. */
static int plan_wakes(fbf_power *p, fbf_engine *e, double now)
{
    fbf_idset_clear(&p->sleep); /* scratch until after the pass */
    for (size_t i = 0; i < p->nm; i++)
        if (fbf_idset_add_range(&p->sleep, p->moves[i].lo, p->moves[i].hi) < 0)
            return -ENOMEM;
    int rc = fbf_power_leave_holds(p, e, &p->sleep, false);
    fbf_idset_clear(&p->sleep);
    if (rc < 0)
        return rc;
    qsort(p->moves, p->nm, sizeof *p->moves, tw_cmp);
    for (size_t i = 0; i < p->nm;) {
        plan_ctx c = {.p = p, .now = now, .tw = p->moves[i].tw};
        fbf_idset_clear(&p->set);
        for (; i < p->nm && p->moves[i].tw == c.tw; i++)
            if (fbf_idset_add_range(&p->set, p->moves[i].lo, p->moves[i].hi) < 0)
                return -ENOMEM;
        if (fbf_engine_hold(e, &p->set, now, c.tw - now, false, &c.hold) < 0 ||
            fbf_mruns_change(&p->runs, &p->set, set_planned, &c) < 0)
            return -ENOMEM;
    }
    p->replanned = true;
    return fbf_power_rehold_runs(p);
}

int fbf_power_wake_for_waiting(fbf_power *p, fbf_engine *e, double now)
{
    run_ctx rc = {
        .p = p, .e = e, .now = now, .t0 = now + p->cfg.on_delay, .avail = fbf_engine_nb_free(e)};
    double t0 = rc.t0;
    p->nc = p->nm = 0;
    if (fbf_mruns_each(&p->runs, NULL, note_cand, &rc) < 0)
        return -ENOMEM;
    if (!p->nc)
        return 0;
    qsort(p->cand, p->nc, sizeof *p->cand, cand_cmp);
    for (size_t i = p->nc; i-- > 0;)
        p->cand[i].suf = p->cand[i].n + (i + 1 < p->nc ? p->cand[i + 1].suf : 0);
    p->ne = 0;
    fbf_sched_foreach_running(e, count_running, &rc);
    if (rc.err)
        return rc.err;
    if (p->ne)
        qsort(p->ends, p->ne, sizeof *p->ends, ending_cmp);
    for (size_t i = 0; i < p->ne; i++)
        p->ends[i].cum = p->ends[i].n + (i ? p->ends[i - 1].cum : 0);
    uint64_t avail = rc.avail, walked = 0, cap = fbf_sched_capacity(e);
    size_t next = 0; /* candidates from cand[next], off machines into it, are left */
    uint64_t off = 0;
    fbf_sched_iter it;
    fbf_sched_iter_init(e, &it);
    for (fbf_job_h h; next < p->nc && (h = fbf_sched_iter_next(e, &it)) != FBF_JOB_NONE;) {
        uint64_t r = fbf_sched_job(e, h)->res, left = p->cand[next].suf - off;
        if (++walked > cap)
            break; /* bounds the cost */
        if (r <= avail) {
            avail -= r;
            continue;
        }
        uint64_t w = r - avail;
        avail = 0;
        if (w > left) /* it needs running jobs to end too */
            continue;
        /* t0 <= Tw <= max_back: the O(runs) max is taken only when needed */
        double tn = kth_end(p, next, left, w), tw = t0;
        if (!(tn - t0 > p->cfg.on_delay))
            continue;
        size_t i = next;
        for (uint64_t o = off, need = w; need; i++, o = 0) {
            uint64_t take = p->cand[i].n - o < need ? p->cand[i].n - o : need;
            tw = fmax(tw, p->cand[i].back);
            need -= take;
        }
        if (!(tn - tw > p->cfg.on_delay))
            continue;
        for (uint64_t need = w; need;) {
            const power_cand *x = &p->cand[next];
            uint64_t take = x->n - off < need ? x->n - off : need;
            if (tw < x->end) {
                if (fbf_power_grow((void **)&p->moves, &p->moves_cap, p->nm, sizeof *p->moves) < 0)
                    return -ENOMEM;
                uint32_t lo = (uint32_t)(x->lo + off);
                p->moves[p->nm++] = (power_move){lo, (uint32_t)(lo + take - 1), tw};
            }
            need -= take;
            off += take;
            if (off == x->n) {
                next++;
                off = 0;
            }
        }
    }
    return p->nm ? plan_wakes(p, e, now) : 0;
}
