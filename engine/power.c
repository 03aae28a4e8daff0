/*
 * power: machine states, holds and energy saving (see power.h).
 *
 * Invariants: a machine is ON iff it holds no hold; every machine that is
 * not ON has exactly one live hold (m[id].hold) and counts in `held`; an
 * ON machine is free or allocated to a real job. m[] is allocated at the
 * platform when saving is on, else lazily when a machine is first
 * reported not ON (until then every machine is ON and nothing here runs).
 * wake_at is the time to send the switch-on of a sleeping machine
 * (INFINITY: only on demand, when jobs wait). cand and ends are scratch
 * of the waking rule, rebuilt at each decision point that applies it; its
 * cost is O(machines + running log running + capacity log^2), plus O(w)
 * for a job whose Tn lies within off_delay of being worth a wake.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>

#include "engine/engine_int.h"
#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/power.h"


typedef struct machine {
    double idle_since; /* ON: free since (saving only) */
    double req_at;     /* switching: when the switch was requested */
    double wake_at;
    fbf_job_h hold;
    uint8_t st; /* fbf_machine_state */
} machine;

typedef struct cand {
    double end, back;
    uint32_t id;
} cand;

typedef struct ending {
    double end;
    uint64_t n, cum; /* machines; of this and the earlier ends */
} ending;

struct fbf_power {
    fbf_power_config cfg;
    fbf_idset compute;
    uint32_t nb_ids; /* max compute id + 1 */
    machine *m;
    uint32_t held;
    fbf_idset wake, sleep; /* this decision point's requests */
    bool replanned;        /* this decision point re-planned a wake */
    struct cand *cand;     /* nb_ids, scratch of the waking rule */
    size_t nc;
    struct ending *ends;   /* running jobs ending after now + on_delay */
    size_t ne, ne_cap;
};

fbf_power_config fbf_power_config_default(void)
{
    return (fbf_power_config){.sleep_pstate = 1, .compute_pstate = 0};
}

const char *fbf_machine_state_name(fbf_machine_state s)
{
    switch (s) {
    case FBF_MACHINE_ON: return "ON";
    case FBF_MACHINE_SWITCHING_OFF: return "SWITCHING_OFF";
    case FBF_MACHINE_OFF: return "OFF";
    case FBF_MACHINE_SWITCHING_ON: return "SWITCHING_ON";
    }
    return "unknown";
}

fbf_power *fbf_power_create(const fbf_power_config *cfg)
{
    fbf_power *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->cfg = *cfg;
    fbf_idset_init(&p->compute);
    fbf_idset_init(&p->wake);
    fbf_idset_init(&p->sleep);
    return p;
}

void fbf_power_destroy(fbf_power *p)
{
    if (!p)
        return;
    fbf_idset_fini(&p->compute);
    fbf_idset_fini(&p->wake);
    fbf_idset_fini(&p->sleep);
    free(p->m);
    free(p->cand);
    free(p->ends);
    free(p);
}

static int ensure_machines(fbf_power *p)
{
    if (p->m && p->cand)
        return 0;
    free(p->m);
    if (p->nb_ids > FBF_POWER_MAX_MACHINES)
        return -E2BIG;
    if (p->nb_ids == 0)
        return -ENOMEM;
    p->m = calloc(p->nb_ids, sizeof *p->m);
    p->cand = calloc(p->nb_ids, sizeof *p->cand);
    if (!p->m || !p->cand)
        return -ENOMEM;
    for (uint32_t i = 0; i < p->nb_ids; i++)
        p->m[i] = (machine){.wake_at = INFINITY, .hold = FBF_JOB_NONE, .st = FBF_MACHINE_ON};
    return 0;
}

int fbf_power_set_platform(fbf_power *p, const fbf_idset *compute)
{
    if (fbf_idset_copy(&p->compute, compute) < 0)
        return -ENOMEM;
    p->nb_ids = compute->n ? compute->r[compute->n - 1].hi + 1 : 0;
    return p->cfg.saving ? ensure_machines(p) : 0;
}

fbf_machine_state fbf_power_state(const fbf_power *p, uint32_t id)
{
    return p->m && id < p->nb_ids ? (fbf_machine_state)p->m[id].st : FBF_MACHINE_ON;
}

uint32_t fbf_power_nb_held(const fbf_power *p) { return p->held; }

bool fbf_power_is_compute(const fbf_power *p, uint32_t m)
{
    return fbf_idset_contains(&p->compute, m);
}

int fbf_power_initial(fbf_power *p, fbf_engine *e, uint32_t id, fbf_machine_state st,
                      fbf_error *err)
{
    if (!fbf_idset_contains(&p->compute, id))
        return fbf_errorf(err, -EINVAL, "machine %u is not a compute resource", id);
    if (st == FBF_MACHINE_ON)
        return 0;
    int rc = ensure_machines(p);
    if (rc == -E2BIG)
        return fbf_errorf(err, rc, "machine states are modelled one by one, for ids below %u: "
                          "machine %u is beyond", FBF_POWER_MAX_MACHINES, p->nb_ids - 1);
    if (rc < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory for %u machine states", p->nb_ids);
    machine *x = &p->m[id];
    if (x->st != FBF_MACHINE_ON || !fbf_idset_contains(fbf_engine_free_set(e), id))
        return fbf_errorf(err, -EINVAL, "machine %u: initial state set twice or machine in use",
                          id);
    double now = fbf_engine_now(e);
    double end = st == FBF_MACHINE_SWITCHING_ON ? now + p->cfg.on_delay : INFINITY;
    if (fbf_engine_hold_machine(e, id, end, true, &x->hold) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    x->st = (uint8_t)st;
    x->req_at = now;
    x->wake_at = INFINITY;
    p->held++;
    return 0;
}

int fbf_power_changed(fbf_power *p, fbf_engine *e, const fbf_idset *set, uint32_t pstate,
                      fbf_error *err)
{
    bool on = pstate == p->cfg.compute_pstate;
    if (!on && pstate != p->cfg.sleep_pstate)
        return fbf_errorf(err, -EINVAL,
                          "state %u is not a known pstate (compute %u, sleep %u)", pstate,
                          p->cfg.compute_pstate, p->cfg.sleep_pstate);
    fbf_machine_state want = on ? FBF_MACHINE_SWITCHING_ON : FBF_MACHINE_SWITCHING_OFF;
    for (uint32_t k = 0; k < set->n; k++)
        for (uint32_t id = set->r[k].lo; id <= set->r[k].hi; id++) {
            if (!fbf_idset_contains(&p->compute, id))
                return fbf_errorf(err, -EINVAL, "machine %u is not a compute resource", id);
            fbf_machine_state st = fbf_power_state(p, id);
            if (st != want)
                return fbf_errorf(err, -EINVAL, "machine %u reached pstate %u but was not %s "
                                  "(it is %s)", id, pstate, on ? "switching on" : "switching off",
                                  fbf_machine_state_name(st));
        }
    double now = fbf_engine_now(e);
    for (uint32_t k = 0; k < set->n; k++)
        for (uint32_t id = set->r[k].lo; id <= set->r[k].hi; id++) {
            machine *x = &p->m[id];
            if (!on) {
                x->st = FBF_MACHINE_OFF;
                continue;
            }
            if (fbf_engine_unhold_machine(e, x->hold, true) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
            x->st = FBF_MACHINE_ON;
            x->hold = FBF_JOB_NONE;
            x->idle_since = now;
            x->wake_at = INFINITY;
            p->held--;
        }
    return 0;
}

void fbf_power_freed(fbf_power *p, const fbf_idset *alloc, double now)
{
    if (!p->m || !p->cfg.saving)
        return;
    for (uint32_t k = 0; k < alloc->n; k++)
        for (uint32_t id = alloc->r[k].lo; id <= alloc->r[k].hi && id < p->nb_ids; id++)
            p->m[id].idle_since = now;
}

/* The machine's hold now ends at `end` instead (it stays held). */
static int replan(fbf_engine *e, machine *x, uint32_t id, double end)
{
    if (fbf_engine_unhold_machine(e, x->hold, false) < 0)
        return -ENOMEM;
    return fbf_engine_hold_machine(e, id, end, false, &x->hold);
}

/* ---- waking (power.h, "Waking") ---- */

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->end != y->end)
        return x->end > y->end ? -1 : 1;
    if (x->back != y->back)
        return x->back < y->back ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int ending_cmp(const void *a, const void *b)
{
    const ending *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

typedef struct run_ctx {
    fbf_power *p;
    double t0;
    uint64_t avail;
    int err;
} run_ctx;

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
    if (p->ne == p->ne_cap) {
        size_t cap = p->ne_cap ? 2 * p->ne_cap : 64;
        ending *v = realloc(p->ends, cap * sizeof *v);
        if (!v) {
            c->err = -ENOMEM;
            return;
        }
        p->ends = v;
        p->ne_cap = cap;
    }
    p->ends[p->ne++] = (ending){j->est_end, j->res, 0};
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

/* The j-th smallest hold end among the candidates left (j >= 0). */
static double cand_kth(const fbf_power *p, size_t j)
{
    return j == 0 ? -INFINITY : p->cand[p->nc - j].end;
}

/* The k-th smallest end (k >= 1) among the running jobs' ends and the
 * candidates cand[from..nc) (whose ends are descending); INFINITY past
 * them: the smallest max(cand_kth(j), run_kth(k - j)) over the splits j,
 * found where the first (rising in j) overtakes the second (falling). */
static double kth_end(const fbf_power *p, size_t from, uint64_t k)
{
    size_t left = p->nc - from, jmax = k < left ? (size_t)k : left, lo = 0, hi = jmax + 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cand_kth(p, mid) >= run_kth(p, k - mid))
            hi = mid;
        else
            lo = mid + 1;
    }
    double best = lo <= jmax ? cand_kth(p, lo) : INFINITY;
    return lo > 0 ? fmin(best, run_kth(p, k - (lo - 1))) : best;
}

/* The hold of x now ends at end; woken now when its wake is due. */
static int plan_wake(fbf_power *p, fbf_engine *e, machine *x, uint32_t id, double end, double now)
{
    if (replan(e, x, id, end) < 0)
        return -ENOMEM;
    x->wake_at = end - p->cfg.on_delay;
    p->replanned = true;
    if (x->st == FBF_MACHINE_OFF && x->wake_at <= now) {
        if (fbf_idset_add_range(&p->wake, id, id) < 0)
            return -ENOMEM;
        x->st = FBF_MACHINE_SWITCHING_ON;
        x->req_at = now;
    }
    return 0;
}

static int wake_for_waiting(fbf_power *p, fbf_engine *e, double now)
{
    double t0 = now + p->cfg.on_delay;
    p->nc = 0;
    for (uint32_t id = 0; id < p->nb_ids; id++) {
        const machine *x = &p->m[id];
        if (x->st != FBF_MACHINE_OFF && x->st != FBF_MACHINE_SWITCHING_OFF)
            continue;
        double end = fbf_sched_job(e, x->hold)->est_end;
        if (end <= t0)
            continue;
        double back = x->st == FBF_MACHINE_OFF
                          ? t0 : fmax(now, x->req_at + p->cfg.off_delay) + p->cfg.on_delay;
        p->cand[p->nc++] = (cand){end, back, id};
    }
    if (!p->nc)
        return 0;
    qsort(p->cand, p->nc, sizeof *p->cand, cand_cmp);
    run_ctx rc = {.p = p, .t0 = t0, .avail = fbf_engine_nb_free(e)};
    p->ne = 0;
    fbf_sched_foreach_running(e, count_running, &rc);
    if (rc.err)
        return rc.err;
    if (p->ne)
        qsort(p->ends, p->ne, sizeof *p->ends, ending_cmp);
    for (size_t i = 0; i < p->ne; i++)
        p->ends[i].cum = p->ends[i].n + (i ? p->ends[i - 1].cum : 0);
    uint64_t avail = rc.avail, walked = 0, cap = fbf_sched_capacity(e);
    size_t next = 0; /* candidates [next, nc) are left */
    fbf_sched_iter it;
    fbf_sched_iter_init(e, &it);
    for (fbf_job_h h; next < p->nc && (h = fbf_sched_iter_next(e, &it)) != FBF_JOB_NONE;) {
        uint64_t r = fbf_sched_job(e, h)->res;
        if (++walked > cap)
            break; /* bounds the cost */
        if (r <= avail) {
            avail -= r;
            continue;
        }
        uint64_t w = r - avail;
        if (w > p->nc - next) { /* it needs running jobs to end too */
            avail = 0;
            continue;
        }
        avail = 0;
        /* t0 <= Tw <= max_back: the O(w) max is taken only when needed */
        double tn = kth_end(p, next, w), tw = t0;
        if (!(tn - t0 > p->cfg.on_delay))
            continue;
        for (size_t k = next; k < next + w; k++)
            tw = fmax(tw, p->cand[k].back);
        if (!(tn - tw > p->cfg.on_delay))
            continue;
        for (size_t k = next; k < next + w; k++)
            if (tw < p->cand[k].end &&
                plan_wake(p, e, &p->m[p->cand[k].id], p->cand[k].id, tw, now) < 0)
                return -ENOMEM;
        next += w;
    }
    return 0;
}

int fbf_power_before(fbf_power *p, fbf_engine *e)
{
    fbf_idset_clear(&p->wake);
    fbf_idset_clear(&p->sleep);
    p->replanned = false;
    if (!p->cfg.saving || !p->held)
        return 0;
    double now = fbf_engine_now(e);
    for (uint32_t id = 0; id < p->nb_ids; id++) {
        machine *x = &p->m[id];
        if (x->st == FBF_MACHINE_OFF && x->wake_at <= now) {
            if (fbf_idset_add_range(&p->wake, id, id) < 0)
                return -ENOMEM;
            x->st = FBF_MACHINE_SWITCHING_ON;
            x->req_at = now;
        }
    }
    return fbf_engine_nb_waiting(e) > 0 ? wake_for_waiting(p, e, now) : 0;
}

/* Whether idle machines may sleep now, and until when (*until: INFINITY
 * for an empty queue, else the smallest reservation). */
static bool may_sleep(fbf_power *p, fbf_engine *e, double now, double *until)
{
    *until = INFINITY;
    size_t n = fbf_engine_nb_waiting(e);
    if (n == 0)
        return true;
    if ((int64_t)n > fbf_engine_depth(e))
        return false;
    fbf_sched_iter it;
    fbf_sched_iter_init(e, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(e, &it)) != FBF_JOB_NONE;) {
        double rsv = fbf_sched_job(e, h)->rsv;
        if (isnan(rsv))
            return false;
        *until = fmin(*until, rsv);
    }
    return isinf(*until) || (*until > now && *until - now >= p->cfg.off_delay + p->cfg.on_delay);
}

int fbf_power_after(fbf_power *p, fbf_engine *e, double *cml)
{
    *cml = NAN;
    if (!p->cfg.saving)
        return 0;
    double now = fbf_engine_now(e), next = INFINITY;
    const fbf_idset *fs = fbf_engine_free_set(e);
    for (uint32_t k = 0; k < fs->n; k++)
        for (uint32_t id = fs->r[k].lo; id <= fs->r[k].hi; id++) {
            double t = p->m[id].idle_since + p->cfg.timeout;
            if (now >= t) {
                if (fbf_idset_add_range(&p->sleep, id, id) < 0)
                    return -ENOMEM;
            } else {
                next = fmin(next, t);
            }
        }
    double until = INFINITY;
    if (p->sleep.n && (p->wake.n || p->replanned || !may_sleep(p, e, now, &until)))
        fbf_idset_clear(&p->sleep);
    for (uint32_t k = 0; k < p->sleep.n; k++)
        for (uint32_t id = p->sleep.r[k].lo; id <= p->sleep.r[k].hi; id++) {
            machine *x = &p->m[id];
            if (fbf_engine_hold_machine(e, id, until, true, &x->hold) < 0)
                return -ENOMEM;
            x->st = FBF_MACHINE_SWITCHING_OFF;
            x->req_at = now;
            x->wake_at = isinf(until) ? INFINITY : until - p->cfg.on_delay;
            p->held++;
        }
    for (uint32_t id = 0; p->held && id < p->nb_ids; id++) {
        const machine *x = &p->m[id];
        if ((x->st == FBF_MACHINE_OFF || x->st == FBF_MACHINE_SWITCHING_OFF) &&
            x->wake_at > now)
            next = fmin(next, x->wake_at);
    }
    if (isfinite(next))
        *cml = next;
    return 0;
}

size_t fbf_power_requests(const fbf_power *p, const fbf_idset **sets, uint32_t *pstates)
{
    size_t n = 0;
    if (p->wake.n) {
        sets[n] = &p->wake;
        pstates[n++] = p->cfg.compute_pstate;
    }
    if (p->sleep.n) {
        sets[n] = &p->sleep;
        pstates[n++] = p->cfg.sleep_pstate;
    }
    return n;
}

/* ---- the engine's public machine-state API (engine.h) ---- */

int fbf_engine_set_power(fbf_engine *e, const fbf_power_config *cfg, fbf_error *err)
{
    fbf_power *p = fbf_engine_power(e);
    if (fbf_engine_has_platform(e))
        return fbf_errorf(err, -EINVAL, "power settings after the platform");
    if (!(cfg->timeout >= 0) || !(cfg->off_delay >= 0) || !(cfg->on_delay >= 0) ||
        isinf(cfg->timeout) || isinf(cfg->off_delay) || isinf(cfg->on_delay))
        return fbf_errorf(err, -EINVAL, "power: timeout and switch delays must be finite "
                          "numbers of seconds >= 0");
    if (cfg->sleep_pstate == cfg->compute_pstate)
        return fbf_errorf(err, -EINVAL, "power: the sleep and compute pstates must differ "
                          "(both %u)", cfg->sleep_pstate);
    p->cfg = *cfg;
    return 0;
}

int fbf_engine_set_machine_state(fbf_engine *e, uint32_t id, fbf_machine_state st,
                                 fbf_error *err)
{
    return fbf_power_initial(fbf_engine_power(e), e, id, st, err);
}

int fbf_engine_state_changed(fbf_engine *e, const fbf_idset *set, uint32_t pstate,
                             fbf_error *err)
{
    return fbf_power_changed(fbf_engine_power(e), e, set, pstate, err);
}

fbf_machine_state fbf_engine_machine_state(const fbf_engine *e, uint32_t id)
{
    return fbf_power_state(fbf_engine_power(e), id);
}

uint32_t fbf_engine_nb_held(const fbf_engine *e) { return fbf_power_nb_held(fbf_engine_power(e)); }
