/*
 * machines: machine states and energy for fastbf-replay --energy (see
 * machines.h).
 *
 * Invariants: st[i] is ON for a machine that runs a job; a switching
 * machine belongs to exactly one pending group, whose FBF_EV_STATE heap
 * entry fires at its completion; since[i] is when machine i entered its
 * current state (used for OFF and switching, which accumulate into
 * asleep_done / switching_done when left). Busy time is not tracked here:
 * it is exact from the jobs' start and end.
 */
#include "tools/replay/machines.h"
#include "tools/replay/v5.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { M_ON = FBF_RM_ON, M_SWITCHING_OFF = FBF_RM_SWITCHING_OFF, M_OFF = FBF_RM_OFF,
       M_SWITCHING_ON = FBF_RM_SWITCHING_ON };
static const char *const st_names[] = {"ON", "SWITCHING_OFF", "OFF", "SWITCHING_ON"};

typedef struct group {
    size_t first; /* in ranges */
    uint32_t n;
    uint32_t pstate;
    bool on;
    bool now; /* batsim5's ChangeHostsPStateEvent: no switch delay */
    uint32_t machines; /* how many */
    double t0, t1;     /* when the switch began and ended (INFINITY: not yet) */
} group;

typedef struct fbf_machines fbf_machines;
struct fbf_machines {
    fbf_energy_config cfg;
    uint8_t *st;
    double *since;
    double asleep_done, switching_done;
    /* Batsim's out_schedule.csv figures: closed intervals per state, in
     * Batsim's precision, and SET_RESOURCE_STATE's machines. */
    long double sleeping_ld, switching_on_ld, switching_off_ld;
    unsigned long long switched_machines;
    group *groups;
    size_t ngroups, groups_cap;
    fbf_range *ranges;
    size_t nranges, ranges_cap;
    double *answers;
    size_t nanswers, answers_cap;
    fbf_idset scratch;
};

fbf_energy_config fbf_energy_config_default(void)
{
    return (fbf_energy_config){.p_idle = 95, .p_busy = 190, .p_sleep = 9.75, .p_switch = 95,
                               .compute_pstate = 0, .sleep_pstate = 1};
}

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *n = realloc(*p, c * elem);
    if (!n)
        return false;
    *p = n;
    *cap = c;
    return true;
}

int fbf_machines_create(fbf_replay *r, const fbf_energy_config *cfg)
{
    fbf_machines *m = calloc(1, sizeof *m);
    if (!m)
        return -ENOMEM;
    m->cfg = *cfg;
    fbf_idset_init(&m->scratch);
    m->st = calloc(r->cfg.nb_res, 1);
    m->since = calloc(r->cfg.nb_res, sizeof *m->since);
    r->mach = m;
    return m->st && m->since ? 0 : -ENOMEM;
}

void fbf_machines_destroy(fbf_replay *r)
{
    fbf_machines *m = r->mach;
    if (!m)
        return;
    free(m->st);
    free(m->since);
    free(m->groups);
    free(m->ranges);
    free(m->answers);
    fbf_idset_fini(&m->scratch);
    free(m);
    r->mach = NULL;
}

static int whyf(char *why, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int whyf(char *why, size_t cap, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, cap, fmt, ap);
    va_end(ap);
    return -EPROTO;
}

int fbf_machines_set(fbf_replay *r, const cJSON *data, double at, char *why, size_t cap)
{
    fbf_machines *m = r->mach;
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(data, "resources");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(data, "state");
    if (!cJSON_IsString(res))
        return whyf(why, cap, "field data.resources is missing or not a string");
    fbf_error perr;
    if (fbf_idset_parse(&m->scratch, res->valuestring, &perr) < 0)
        return whyf(why, cap, "data.resources '%.40s' is not an interval set: %s",
                    res->valuestring, perr.text);
    const fbf_idset *s = &m->scratch;
    if (s->n == 0)
        return whyf(why, cap, "data.resources is empty");
    if (s->r[s->n - 1].hi >= r->cfg.nb_res)
        return whyf(why, cap, "data.resources: machine %u is out of range (the platform has %u: "
                    "0-%u)", s->r[s->n - 1].hi, r->cfg.nb_res, r->cfg.nb_res - 1);
    char *end = NULL;
    double p = cJSON_IsString(st) ? strtod(st->valuestring, &end)
                                  : cJSON_IsNumber(st) ? st->valuedouble : NAN;
    if ((end && (end == st->valuestring || *end)) || !(p == m->cfg.compute_pstate ||
                                                      p == m->cfg.sleep_pstate))
        return whyf(why, cap, "data.state %s%.20s%s is not a known pstate (%u: compute, %u: "
                    "sleep)", cJSON_IsString(st) ? "'" : "",
                    cJSON_IsString(st) ? st->valuestring : "(not a string)",
                    cJSON_IsString(st) ? "'" : "", m->cfg.compute_pstate, m->cfg.sleep_pstate);
    bool on = p == m->cfg.compute_pstate;
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            if (r->owner[id] != FBF_NO_JOB)
                return whyf(why, cap, "data.resources: machine %u is running job %s", id,
                            r->wl->jobs[r->owner[id]].id);
            if (m->st[id] == M_SWITCHING_OFF || m->st[id] == M_SWITCHING_ON)
                return whyf(why, cap, "data.resources: machine %u is already switching (%s)",
                            id, st_names[m->st[id]]);
            if (m->st[id] == (on ? M_ON : M_OFF))
                return whyf(why, cap, "data.resources: machine %u is already %s", id,
                            st_names[m->st[id]]);
        }
    return fbf_machines_apply(r, s, (uint32_t)p, at);
}

int fbf_machines_apply(fbf_replay *r, const fbf_idset *s, uint32_t pstate, double at)
{
    return fbf_machines_apply_at_once(r, s, pstate, at, false);
}

int fbf_machines_apply_at_once(fbf_replay *r, const fbf_idset *s, uint32_t pstate, double at,
                               bool now)
{
    fbf_machines *m = r->mach;
    bool on = pstate == m->cfg.compute_pstate;
    if (!grow((void **)&m->groups, &m->groups_cap, m->ngroups + 1, sizeof *m->groups) ||
        !grow((void **)&m->ranges, &m->ranges_cap, m->nranges + s->n, sizeof *m->ranges))
        return -ENOMEM;
    uint32_t count = 0;
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            if (m->st[id] == M_OFF) {
                m->asleep_done += at - m->since[id];
                m->sleeping_ld += (long double)at - m->since[id];
            }
            m->st[id] = on ? M_SWITCHING_ON : M_SWITCHING_OFF;
            m->since[id] = at;
            count++;
        }
    m->switched_machines += count;
    memcpy(m->ranges + m->nranges, s->r, s->n * sizeof *s->r);
    m->groups[m->ngroups] = (group){m->nranges, s->n, pstate, on, now, count, at, INFINITY};
    m->nranges += s->n;
    double delay = now ? 0 : on ? m->cfg.on_delay : m->cfg.off_delay;
    fbf_replay_heap_push(r, at + delay, FBF_EV_STATE,
                         (uint32_t)m->ngroups, r->seq++);
    m->ngroups++;
    return 0;
}

int fbf_machines_state_of(const fbf_replay *r, uint32_t id)
{
    return r->mach->st[id];
}

const char *fbf_machines_state_name(int state)
{
    return st_names[state];
}

const fbf_energy_config *fbf_machines_config(const fbf_replay *r)
{
    return &r->mach->cfg;
}

int fbf_machines_ask_energy(fbf_replay *r, double at)
{
    fbf_machines *m = r->mach;
    if (!grow((void **)&m->answers, &m->answers_cap, m->nanswers + 1, sizeof *m->answers))
        return -ENOMEM;
    fbf_energy_totals t;
    fbf_machines_totals(r, at, &t);
    m->answers[m->nanswers] = t.joules;
    fbf_replay_heap_push(r, at, FBF_EV_ANSWER, (uint32_t)m->nanswers++, r->seq++);
    return 0;
}

int fbf_machines_query(fbf_replay *r, const cJSON *data, double at, char *why, size_t cap)
{
    const cJSON *reqs = cJSON_GetObjectItemCaseSensitive(data, "requests");
    if (!cJSON_IsObject(reqs))
        return whyf(why, cap, "field data.requests is missing or not an object");
    for (const cJSON *q = reqs->child; q; q = q->next) {
        if (strcmp(q->string, "consumed_energy") != 0)
            return whyf(why, cap, "data.requests: unknown request '%.40s' (fastbf-replay "
                        "answers consumed_energy)", q->string);
        if (fbf_machines_ask_energy(r, at) < 0)
            return -ENOMEM;
    }
    return 0;
}

int fbf_machines_check_alloc(const fbf_replay *r, const fbf_idset *s, char *why, size_t cap)
{
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++)
            if (r->mach->st[id] != M_ON)
                return whyf(why, cap, "data.alloc: machine %u is %s, not ON", id,
                            st_names[r->mach->st[id]]);
    return 0;
}

void fbf_machines_emit(fbf_replay *r, size_t *count, const fbf_rev *e)
{
    fbf_machines *m = r->mach;
    fbf_jbuf *b = &r->msg;
    bool v2 = r->cfg.protocol == FBF_PROTO_BV2;
    if (e->kind == FBF_EV_ANSWER && v2) {
        fbf_v2_event(r, count, e->t, 'e'); /* Batsim v2 printed the joules "%f" too */
        fbf_jbuf_lit(b, ":");
        fbf_replay_put_f(b, m->answers[e->arg]);
        return;
    }
    if (e->kind == FBF_EV_ANSWER) {
        fbf_replay_ev_open(r, count, e->t, "ANSWER");
        fbf_jbuf_lit(b, "{\"consumed_energy\":");
        fbf_replay_put_f(b, m->answers[e->arg]); /* Batsim prints "%f" */
        fbf_jbuf_lit(b, "}}");
        return;
    }
    group *g = &m->groups[e->arg];
    g->t1 = e->t;
    for (uint32_t k = 0; k < g->n; k++)
        for (uint32_t id = m->ranges[g->first + k].lo; id <= m->ranges[g->first + k].hi; id++) {
            m->switching_done += e->t - m->since[id];
            *(g->on ? &m->switching_on_ld : &m->switching_off_ld) +=
                (long double)e->t - m->since[id];
            m->st[id] = g->on ? M_ON : M_OFF;
            m->since[id] = e->t;
        }
    if (r->cfg.protocol == FBF_PROTO_BV5) { /* HostsTurnedOnOffEvent */
        fbf_v5_switched(r, count, e->t, m->ranges + g->first, g->n, g->pstate, g->now);
        return;
    }
    if (v2) { /* p:MIDS=PSTATE, one per P */
        fbf_v2_event(r, count, e->t, 'p');
        fbf_jbuf_lit(b, ":");
        fbf_v2_ranges(b, m->ranges + g->first, g->n);
        fbf_jbuf_lit(b, "=");
        fbf_jbuf_int(b, g->pstate);
        return;
    }
    fbf_replay_ev_open(r, count, e->t, "RESOURCE_STATE_CHANGED");
    fbf_jbuf_lit(b, "{\"resources\":\"");
    fbf_jbuf_ranges(b, m->ranges + g->first, g->n);
    fbf_jbuf_lit(b, "\",\"state\":\"");
    fbf_jbuf_int(b, g->pstate);
    fbf_jbuf_lit(b, "\"}}");
}

void fbf_machines_totals(const fbf_replay *r, double t, fbf_energy_totals *out)
{
    const fbf_machines *m = r->mach;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->wl->nb_jobs; i++) {
        const fbf_rjob *j = &r->jobs[i];
        if ((j->state == FBF_RJ_RUNNING || j->state == FBF_RJ_DONE) && j->nranges && t > j->start)
            out->busy_s += (double)r->wl->jobs[i].res * ((j->end < t ? j->end : t) - j->start);
    }
    out->asleep_s = m->asleep_done;
    out->switching_s = m->switching_done;
    for (uint32_t id = 0; id < r->cfg.nb_res; id++) {
        if (m->st[id] == M_OFF)
            out->asleep_s += t - m->since[id];
        else if (m->st[id] != M_ON)
            out->switching_s += t - m->since[id];
    }
    out->idle_s = (double)r->cfg.nb_res * t - out->busy_s - out->asleep_s - out->switching_s;
    out->joules = m->cfg.p_idle * out->idle_s + m->cfg.p_busy * out->busy_s +
                  m->cfg.p_sleep * out->asleep_s + m->cfg.p_switch * out->switching_s;
}

double fbf_machines_energy_at(const fbf_replay *r, double t)
{
    const fbf_machines *m = r->mach;
    fbf_energy_totals now;
    fbf_machines_totals(r, t, &now); /* its busy time holds for any t */
    /* Sleep and switches from the groups' times, so that t may be past:
     * a machine sleeps from the end of its switch-off to the start of its
     * switch-on, and each switch adds its machines while it lasts. */
    double asleep = 0, switching = 0;
    for (size_t i = 0; i < m->ngroups; i++) {
        const group *g = &m->groups[i];
        double n = g->machines;
        if (t > g->t0)
            switching += n * ((g->t1 < t ? g->t1 : t) - g->t0);
        if (!g->on && t > g->t1)
            asleep += n * (t - g->t1);
        if (g->on && t > g->t0)
            asleep -= n * (t - g->t0);
    }
    double idle = (double)r->cfg.nb_res * t - now.busy_s - asleep - switching;
    return m->cfg.p_idle * idle + m->cfg.p_busy * now.busy_s + m->cfg.p_sleep * asleep +
           m->cfg.p_switch * switching;
}

void fbf_machines_batsim_figures(const fbf_replay *r, fbf_machines_figures *out)
{
    const fbf_machines *m = r->mach;
    out->grouped_switches = m->ngroups;
    out->machine_switches = m->switched_machines;
    out->sleeping = m->sleeping_ld;
    out->switching_on = m->switching_on_ld;
    out->switching_off = m->switching_off_ld;
    out->since = m->since;
}

double fbf_machines_job_energy(const fbf_replay *r, uint32_t job)
{
    const fbf_rjob *j = &r->jobs[job];
    return r->mach->cfg.p_busy * (double)r->wl->jobs[job].res * (j->end - j->start);
}

void fbf_machines_print(const fbf_replay *r, FILE *out)
{
    fbf_energy_totals t;
    fbf_machines_totals(r, r->clock, &t);
    fprintf(out, "energy       %.6g J up to %.0f s (machine-seconds: %.0f busy, %.0f idle, "
            "%.0f asleep, %.0f switching)\n", t.joules, r->clock, t.busy_s, t.idle_s,
            t.asleep_s, t.switching_s);
}

void fbf_machines_json(const fbf_replay *r, cJSON *o)
{
    fbf_energy_totals t;
    fbf_machines_totals(r, r->clock, &t);
    cJSON *e = cJSON_AddObjectToObject(o, "energy");
    cJSON_AddNumberToObject(e, "joules", t.joules);
    cJSON_AddNumberToObject(e, "until", r->clock);
    cJSON_AddNumberToObject(e, "busy_s", t.busy_s);
    cJSON_AddNumberToObject(e, "idle_s", t.idle_s);
    cJSON_AddNumberToObject(e, "asleep_s", t.asleep_s);
    cJSON_AddNumberToObject(e, "switching_s", t.switching_s);
}

/* The pstates of the modelled machine, numbered as on Batsim's energy
 * platforms: every pstate below the virtual ones computes but the sleep
 * pstate, then the switch-off and switch-on virtual pstates. */
static uint32_t nb_pstates(const fbf_energy_config *c)
{
    return (c->compute_pstate > c->sleep_pstate ? c->compute_pstate : c->sleep_pstate) + 3;
}

static void put_watts(fbf_jbuf *b, double w, int times)
{
    char t[40];
    fbf_jbuf_fmt(t, sizeof t, w);
    for (int i = 0; i < times; i++) {
        if (i)
            fbf_jbuf_lit(b, ":");
        fbf_jbuf_raw(b, t, strlen(t));
    }
}

void fbf_machines_properties(const fbf_replay *r, fbf_jbuf *b)
{
    const fbf_energy_config *c = &r->mach->cfg;
    uint32_t n = nb_pstates(c);
    fbf_jbuf_lit(b, ",\"wattage_per_state\":\"");
    for (uint32_t k = 0; k < n; k++) {
        if (k)
            fbf_jbuf_lit(b, ", ");
        if (k == c->sleep_pstate) {
            put_watts(b, c->p_sleep, 3);
        } else if (k >= n - 2) {
            put_watts(b, c->p_switch, 3);
        } else {
            put_watts(b, c->p_idle, 2);
            fbf_jbuf_lit(b, ":");
            put_watts(b, c->p_busy, 1);
        }
    }
    fbf_jbuf_lit(b, "\",\"wattage_off\":\"");
    put_watts(b, c->p_sleep, 1);
    fbf_jbuf_lit(b, "\",\"sleep_pstates\":\"");
    fbf_jbuf_int(b, c->sleep_pstate);
    fbf_jbuf_lit(b, ":");
    fbf_jbuf_int(b, n - 2);
    fbf_jbuf_lit(b, ":");
    fbf_jbuf_int(b, n - 1);
    fbf_jbuf_lit(b, "\"");
}
