/*
 * power: machine states, holds and energy saving (see power.h).
 *
 * Invariants: a machine is ON iff it belongs to no hold; every machine
 * that is not ON belongs to exactly one live hold (its run's hold) and
 * counts in `held`; an ON machine is free or allocated to a real job.
 * States live in runs of consecutive ids (machine_runs.h) and a hold may
 * cover many machines: the machines switched off together, or woken for
 * the same start. When some machines leave a hold, the hold ends and the
 * rest are held again at once with the same start and length, so that
 * their end is the same to the last bit. wake_at is the time to send the
 * switch-on of a sleeping machine (INFINITY: only on demand, when jobs
 * wait). The waking rule is in power_wake.c.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/jobs.h"
#include "engine/policy_api.h"
#include "engine/power_int.h"

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
    fbf_idset_init(&p->set);
    fbf_idset_init(&p->rest);
    return p;
}

void fbf_power_destroy(fbf_power *p)
{
    if (!p)
        return;
    fbf_idset_fini(&p->compute);
    fbf_idset_fini(&p->wake);
    fbf_idset_fini(&p->sleep);
    fbf_idset_fini(&p->set);
    fbf_idset_fini(&p->rest);
    fbf_mruns_fini(&p->runs);
    free(p->cand);
    free(p->ends);
    free(p->moves);
    free(p->leave);
    free(p->map);
    free(p);
}

int fbf_power_set_platform(fbf_power *p, const fbf_idset *compute)
{
    if (fbf_idset_copy(&p->compute, compute) < 0)
        return -ENOMEM;
    fbf_mruns_fini(&p->runs);
    return fbf_mruns_init(&p->runs, compute);
}

fbf_machine_state fbf_power_state(const fbf_power *p, uint32_t id)
{
    const fbf_mrun *x = fbf_mruns_find(&p->runs, id);
    return x ? (fbf_machine_state)x->st : FBF_MACHINE_ON;
}

uint32_t fbf_power_nb_held(const fbf_power *p) { return (uint32_t)p->held; }

bool fbf_power_is_compute(const fbf_power *p, uint32_t m)
{
    return fbf_idset_contains(&p->compute, m);
}

/* ---- holds that lose machines ---- */

static int note_leaving(void *ctx, const fbf_mrun *x)
{
    fbf_power *p = ctx;
    if (fbf_power_grow((void **)&p->leave, &p->leave_cap, p->nl, sizeof *p->leave) < 0)
        return -ENOMEM;
    p->leave[p->nl++] = (power_leaving){x->lo, x->hi, x->hold};
    return 0;
}

static int leaving_cmp(const void *a, const void *b)
{
    const power_leaving *x = a, *y = b;
    if (x->hold != y->hold)
        return x->hold < y->hold ? -1 : 1;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int remap_cmp(const void *a, const void *b)
{
    const power_remap *x = a, *y = b;
    return x->from < y->from ? -1 : x->from > y->from;
}

static int apply_remap(void *ctx, fbf_mrun *x)
{
    const fbf_power *p = ctx;
    power_remap key = {.from = x->hold};
    const power_remap *m = bsearch(&key, p->map, p->nmap, sizeof *p->map, remap_cmp);
    if (m)
        x->hold = m->to;
    return 0;
}

int fbf_power_leave_holds(fbf_power *p, fbf_engine *e, const fbf_idset *set, bool to_free)
{
    p->nl = p->nmap = 0;
    int rc = fbf_mruns_each(&p->runs, set, note_leaving, p);
    if (rc < 0)
        return rc;
    if (p->nl > 1)
        qsort(p->leave, p->nl, sizeof *p->leave, leaving_cmp);
    for (size_t i = 0; i < p->nl;) {
        fbf_job_h h = p->leave[i].hold;
        fbf_idset_clear(&p->set);
        for (; i < p->nl && p->leave[i].hold == h; i++)
            if (fbf_idset_add_range(&p->set, p->leave[i].lo, p->leave[i].hi) < 0)
                return -ENOMEM;
        const fbf_job *j = fbf_sched_job(e, h);
        double start = j->start, walltime = j->walltime;
        if (fbf_idset_copy(&p->rest, &j->alloc) < 0 || fbf_idset_subtract(&p->rest, &p->set) < 0 ||
            fbf_engine_unhold(e, h, to_free ? &p->set : NULL) < 0)
            return -ENOMEM;
        if (!p->rest.n)
            continue;
        fbf_job_h nh;
        if (fbf_power_grow((void **)&p->map, &p->map_cap, p->nmap, sizeof *p->map) < 0 ||
            fbf_engine_hold(e, &p->rest, start, walltime, false, &nh) < 0)
            return -ENOMEM;
        p->map[p->nmap++] = (power_remap){h, nh};
    }
    return 0;
}

int fbf_power_rehold_runs(fbf_power *p)
{
    return p->nmap ? fbf_mruns_change(&p->runs, NULL, apply_remap, p) : 0;
}

/* ---- the peer's reports ---- */

typedef struct report {
    fbf_power *p;
    fbf_engine *e;
    fbf_machine_state st, want;
    double now;
    uint32_t bad; /* the first machine not in the state wanted */
    fbf_job_h hold;
} report;

static int set_initial(void *ctx, fbf_mrun *x)
{
    const report *r = ctx;
    x->st = (uint8_t)r->st;
    x->req_at = r->now;
    x->wake_at = INFINITY;
    x->hold = r->hold;
    return 0;
}

int fbf_power_initial(fbf_power *p, fbf_engine *e, uint32_t id, fbf_machine_state st,
                      fbf_error *err)
{
    if (!fbf_idset_contains(&p->compute, id))
        return fbf_errorf(err, -EINVAL, "machine %u is not a compute resource", id);
    if (st == FBF_MACHINE_ON)
        return 0;
    if (fbf_power_state(p, id) != FBF_MACHINE_ON || !fbf_idset_contains(fbf_engine_free_set(e), id))
        return fbf_errorf(err, -EINVAL, "machine %u: initial state set twice or machine in use",
                          id);
    double now = fbf_engine_now(e);
    double end = st == FBF_MACHINE_SWITCHING_ON ? now + p->cfg.on_delay : INFINITY;
    fbf_range one_r = {id, id};
    fbf_idset one = {.r = &one_r, .n = 1, .cap = 1};
    report r = {.st = st, .now = now};
    if (fbf_engine_hold(e, &one, now, end - now, true, &r.hold) < 0 ||
        fbf_mruns_change(&p->runs, &one, set_initial, &r) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    p->held++;
    return 0;
}

static int first_not_wanted(void *ctx, const fbf_mrun *x)
{
    report *r = ctx;
    if (x->st == r->want)
        return 0;
    r->bad = x->lo;
    r->st = (fbf_machine_state)x->st;
    return 1;
}

static int set_off(void *ctx, fbf_mrun *x)
{
    (void)ctx;
    x->st = FBF_MACHINE_OFF;
    return 0;
}

static int set_on(void *ctx, fbf_mrun *x)
{
    const report *r = ctx;
    x->st = FBF_MACHINE_ON;
    x->idle_since = r->now;
    return 0;
}

int fbf_power_changed(fbf_power *p, fbf_engine *e, const fbf_idset *set, uint32_t pstate,
                      fbf_error *err)
{
    bool on = pstate == p->cfg.compute_pstate;
    if (!on && pstate != p->cfg.sleep_pstate)
        return fbf_errorf(err, -EINVAL, "state %u is not a known pstate (compute %u, sleep %u)",
                          pstate, p->cfg.compute_pstate, p->cfg.sleep_pstate);
    /* The first machine, in id order, that is not a compute one or not in
     * the state this change ends. */
    report r = {.p = p,
                .e = e,
                .want = on ? FBF_MACHINE_SWITCHING_ON : FBF_MACHINE_SWITCHING_OFF,
                .now = fbf_engine_now(e)};
    bool bad_state = fbf_mruns_each(&p->runs, set, first_not_wanted, &r) > 0;
    if (fbf_idset_copy(&p->rest, set) < 0 || fbf_idset_subtract(&p->rest, &p->compute) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    if (p->rest.n && (!bad_state || p->rest.r[0].lo < r.bad))
        return fbf_errorf(err, -EINVAL, "machine %u is not a compute resource", p->rest.r[0].lo);
    if (bad_state)
        return fbf_errorf(err, -EINVAL,
                          "machine %u reached pstate %u but was not %s "
                          "(it is %s)",
                          r.bad, pstate, on ? "switching on" : "switching off",
                          fbf_machine_state_name(r.st));
    if (!on)
        return fbf_mruns_change(&p->runs, set, set_off, &r) < 0
                   ? fbf_errorf(err, -ENOMEM, "out of memory")
                   : 0;
    if (fbf_power_leave_holds(p, e, set, true) < 0 ||
        fbf_mruns_change(&p->runs, set, set_on, &r) < 0 || fbf_power_rehold_runs(p) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    p->held -= fbf_idset_count(set);
    return 0;
}

static int set_idle(void *ctx, fbf_mrun *x)
{
    x->idle_since = *(const double *)ctx;
    return 0;
}

int fbf_power_freed(fbf_power *p, const fbf_idset *alloc, double now)
{
    return p->cfg.saving ? fbf_mruns_change(&p->runs, alloc, set_idle, &now) : 0;
}

static int wake_due(void *ctx, fbf_mrun *x)
{
    power_wake_ctx *c = ctx;
    if (x->st != FBF_MACHINE_OFF || x->wake_at > c->now)
        return 0;
    if (fbf_idset_add_range(&c->p->wake, x->lo, x->hi) < 0)
        return -ENOMEM;
    x->st = FBF_MACHINE_SWITCHING_ON;
    x->req_at = c->now;
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
    power_wake_ctx c = {.p = p, .now = now};
    if (fbf_mruns_change(&p->runs, NULL, wake_due, &c) < 0)
        return -ENOMEM;
    return fbf_engine_nb_waiting(e) > 0 ? fbf_power_wake_for_waiting(p, e, now) : 0;
}

/* ---- switching off, after the pass ---- */

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

typedef struct sleep_ctx {
    fbf_power *p;
    double now, next, until;
    fbf_job_h hold;
} sleep_ctx;

/* A free machine idle for the timeout may sleep; the others' timeouts
 * make the next call. */
static int note_idle(void *ctx, const fbf_mrun *x)
{
    sleep_ctx *c = ctx;
    double t = x->idle_since + c->p->cfg.timeout;
    if (c->now < t) {
        c->next = fmin(c->next, t);
        return 0;
    }
    return fbf_idset_add_range(&c->p->sleep, x->lo, x->hi) < 0 ? -ENOMEM : 0;
}

static int set_switching_off(void *ctx, fbf_mrun *x)
{
    const sleep_ctx *c = ctx;
    x->st = FBF_MACHINE_SWITCHING_OFF;
    x->req_at = c->now;
    x->wake_at = isinf(c->until) ? INFINITY : c->until - c->p->cfg.on_delay;
    x->hold = c->hold;
    return 0;
}

static int note_wake(void *ctx, const fbf_mrun *x)
{
    sleep_ctx *c = ctx;
    if ((x->st == FBF_MACHINE_OFF || x->st == FBF_MACHINE_SWITCHING_OFF) && x->wake_at > c->now)
        c->next = fmin(c->next, x->wake_at);
    return 0;
}

int fbf_power_after(fbf_power *p, fbf_engine *e, double *cml)
{
    *cml = NAN;
    if (!p->cfg.saving)
        return 0;
    double now = fbf_engine_now(e);
    sleep_ctx c = {.p = p, .now = now, .next = INFINITY, .until = INFINITY};
    if (fbf_mruns_each(&p->runs, fbf_engine_free_set(e), note_idle, &c) < 0)
        return -ENOMEM;
    if (p->sleep.n && (p->wake.n || p->replanned || !may_sleep(p, e, now, &c.until)))
        fbf_idset_clear(&p->sleep);
    if (p->sleep.n) {
        if (fbf_engine_hold(e, &p->sleep, now, c.until - now, true, &c.hold) < 0 ||
            fbf_mruns_change(&p->runs, &p->sleep, set_switching_off, &c) < 0)
            return -ENOMEM;
        p->held += fbf_idset_count(&p->sleep);
    }
    if (p->held)
        fbf_mruns_each(&p->runs, NULL, note_wake, &c);
    if (isfinite(c.next))
        *cml = c.next;
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
        return fbf_errorf(err, -EINVAL,
                          "power: timeout and switch delays must be finite "
                          "numbers of seconds >= 0");
    if (cfg->sleep_pstate == cfg->compute_pstate)
        return fbf_errorf(err, -EINVAL,
                          "power: the sleep and compute pstates must differ "
                          "(both %u)",
                          cfg->sleep_pstate);
    p->cfg = *cfg;
    return 0;
}

int fbf_engine_set_machine_state(fbf_engine *e, uint32_t id, fbf_machine_state st, fbf_error *err)
{
    return fbf_power_initial(fbf_engine_power(e), e, id, st, err);
}

int fbf_engine_state_changed(fbf_engine *e, const fbf_idset *set, uint32_t pstate, fbf_error *err)
{
    return fbf_power_changed(fbf_engine_power(e), e, set, pstate, err);
}

fbf_machine_state fbf_engine_machine_state(const fbf_engine *e, uint32_t id)
{
    return fbf_power_state(fbf_engine_power(e), id);
}

uint32_t fbf_engine_nb_held(const fbf_engine *e) { return fbf_power_nb_held(fbf_engine_power(e)); }
