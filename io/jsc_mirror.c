/*
 * jsc_mirror: the control thread's copy of every job's JCB, built from
 * the I/O thread's records, and its JSON (see jsc.h for the JCB).
 *
 * Jobs are found by id through open addressing (load <= 1/2). A Batsim
 * allocation is kept as its interval set and turned into R_lite when
 * asked for: machines as ranks of one core; a Flux one with its cores
 * per rank.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_job.h"
#include "io/jsc_int.h"

void fbf_jsc_mirror_fini(fbf_jsc_mirror *m)
{
    for (size_t i = 0; i < m->n; i++) {
        free(m->v[i].id);
        free(m->v[i].alloc);
    }
    free(m->v);
    free(m->slots);
    free(m->est_list);
    bool flux = m->flux;
    uint32_t cpr = m->cpr;
    memset(m, 0, sizeof *m);
    m->flux = flux;
    m->cpr = cpr;
}

static uint64_t hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

static uint32_t *slot_of(const fbf_jsc_mirror *m, const char *id, size_t n)
{
    size_t mask = m->nslots - 1;
    for (size_t k = hash(id, n) & mask;; k = (k + 1) & mask) {
        uint32_t s = m->slots[k];
        if (!s)
            return &m->slots[k];
        const char *x = m->v[s - 1].id;
        if (strncmp(x, id, n) == 0 && x[n] == '\0')
            return &m->slots[k];
    }
}

fbf_jcb *fbf_jsc_mirror_find(const fbf_jsc_mirror *m, const char *id)
{
    if (!m->nslots)
        return NULL;
    uint32_t s = *slot_of(m, id, strlen(id));
    return s ? &m->v[s - 1] : NULL;
}

/* The job of id (n bytes), added when new; NULL when out of memory. */
static fbf_jcb *get(fbf_jsc_mirror *m, const char *id, size_t n)
{
    if ((m->n + 1) * 2 > m->nslots) {
        size_t ns = m->nslots ? 2 * m->nslots : 1024;
        uint32_t *s = calloc(ns, sizeof *s);
        if (!s)
            return NULL;
        free(m->slots);
        m->slots = s;
        m->nslots = ns;
        for (size_t i = 0; i < m->n; i++)
            *slot_of(m, m->v[i].id, strlen(m->v[i].id)) = (uint32_t)i + 1;
    }
    uint32_t *s = slot_of(m, id, n);
    if (*s)
        return &m->v[*s - 1];
    if (m->n == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 1024;
        fbf_jcb *v = realloc(m->v, cap * sizeof *v);
        if (!v)
            return NULL;
        m->v = v;
        m->cap = cap;
    }
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, id, n);
    copy[n] = '\0';
    fbf_jcb *c = &m->v[m->n];
    *c = (fbf_jcb){.id = copy, .walltime = -1, .subtime = NAN, .est = NAN, .seq = m->n};
    *s = (uint32_t)++m->n;
    return c;
}

static void set_state(fbf_jcb *c, uint8_t st, fbf_jsc_effect *eff)
{
    c->ostate = c->state;
    c->state = st;
    if (st != FBF_J_SCHEDREQ)
        c->est = NAN;
    eff->changed = c;
}

static void set_est(fbf_jsc_mirror *m, fbf_jcb *c, double t)
{
    c->est = c->state == FBF_J_SCHEDREQ ? t : NAN;
    if (isnan(c->est) || c->estimated)
        return;
    if (m->nest == m->estcap) {
        size_t cap = m->estcap ? 2 * m->estcap : 64;
        uint32_t *v = realloc(m->est_list, cap * sizeof *v);
        if (!v)
            return; /* the estimate stays; only a later reset may miss it */
        m->est_list = v;
        m->estcap = cap;
    }
    m->est_list[m->nest++] = (uint32_t)(c - m->v);
    c->estimated = true;
}

#define TAKE(v)                                                                                   \
    do {                                                                                          \
        if (left < sizeof(v))                                                                     \
            return 0;                                                                             \
        memcpy(&(v), p, sizeof(v));                                                               \
        p += sizeof(v);                                                                           \
        left -= sizeof(v);                                                                        \
    } while (0)

size_t fbf_jsc_mirror_apply(fbf_jsc_mirror *m, const uint8_t *start, size_t len,
                            fbf_jsc_effect *eff)
{
    *eff = (fbf_jsc_effect){0};
    const uint8_t *p = start;
    size_t left = len;
    uint8_t kind;
    uint16_t idlen;
    TAKE(kind);
    TAKE(idlen);
    if (left < idlen)
        return 0;
    const char *id = (const char *)p;
    p += idlen;
    left -= idlen;
    if (kind == REC_EST_RESET) {
        for (size_t i = 0; i < m->nest; i++) {
            m->v[m->est_list[i]].est = NAN;
            m->v[m->est_list[i]].estimated = false;
        }
        m->nest = 0;
        return (size_t)(p - start);
    }
    if (kind == REC_ANSWER) {
        uint16_t tl;
        TAKE(eff->token);
        TAKE(eff->rc);
        TAKE(tl);
        if (left < tl)
            return 0;
        eff->answer = true;
        eff->text = (const char *)p;
        eff->text_len = tl;
        return (size_t)(p + tl - start);
    }
    fbf_jcb *c = idlen ? get(m, id, idlen) : NULL;
    if (!c)
        return 0;
    switch (kind) {
    case REC_QUEUED:
        TAKE(c->ncores);
        TAKE(c->walltime);
        TAKE(c->subtime);
        c->nnodes = c->ntasks = c->ncores > UINT32_MAX ? UINT32_MAX
                                : c->ncores < 0   ? 0
                                                  : (uint32_t)c->ncores;
        set_state(c, FBF_J_SCHEDREQ, eff);
        break;
    case REC_DESCRIBED:
        TAKE(c->nnodes);
        TAKE(c->ntasks);
        break;
    case REC_STARTED:
    case REC_ADOPTED: {
        uint32_t al;
        TAKE(al);
        if (left < al)
            return 0;
        free(c->alloc);
        if ((c->alloc = malloc(al + 1))) {
            memcpy(c->alloc, p, al);
            c->alloc[al] = '\0';
        }
        p += al;
        fbf_idset s;
        fbf_idset_init(&s);
        if (c->alloc && fbf_idset_parse(&s, c->alloc, NULL) == 0) {
            if (c->ncores == 0)
                c->ncores = (int64_t)fbf_idset_count(&s);
            if (m->flux && c->nnodes == 0) /* its ranks */
                for (uint32_t i = 0, last = UINT32_MAX; i < s.n; i++)
                    for (uint64_t r = s.r[i].lo / m->cpr; r <= s.r[i].hi / m->cpr; r++)
                        if (r != last) {
                            c->nnodes++;
                            last = (uint32_t)r;
                        }
        }
        fbf_idset_fini(&s);
        set_state(c, kind == REC_STARTED && !m->flux ? FBF_J_RUNNING : FBF_J_ALLOCATED, eff);
        break;
    }
    case REC_FAILED: set_state(c, FBF_J_FAILED, eff); break;
    case REC_COMPLETED: set_state(c, FBF_J_COMPLETE, eff); break;
    case REC_CANCELLED: set_state(c, FBF_J_CANCELLED, eff); break;
    case REC_REQUEUED: set_state(c, FBF_J_SCHEDREQ, eff); break;
    case REC_WALLTIME: TAKE(c->walltime); break;
    case REC_ESTIMATE: {
        double t;
        TAKE(t);
        set_est(m, c, t);
        break;
    }
    default: return 0;
    }
    return (size_t)(p - start);
}

/* ---- JSON ---- */

static void put_id(const fbf_jsc *j, const fbf_jcb *c, fbf_jbuf *b)
{
    if (j->life == FBF_JSC_FLUX)
        fbf_jbuf_raw(b, c->id, strlen(c->id));
    else
        fbf_jbuf_str(b, c->id);
}

static void put_state_pair(const fbf_jcb *c, fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"ostate\":");
    fbf_jbuf_int(b, c->ostate);
    fbf_jbuf_lit(b, ",\"nstate\":");
    fbf_jbuf_int(b, c->state);
    fbf_jbuf_lit(b, "}");
}

static void put_rdesc(const fbf_jcb *c, fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"nnodes\":");
    fbf_jbuf_int(b, c->nnodes);
    fbf_jbuf_lit(b, ",\"ntasks\":");
    fbf_jbuf_int(b, c->ntasks);
    fbf_jbuf_lit(b, ",\"ncores\":");
    fbf_jbuf_int(b, c->ncores);
    fbf_jbuf_lit(b, ",\"ngpus\":0,\"walltime\":");
    fbf_jbuf_num(b, c->walltime < 0 ? -1 : c->walltime);
    fbf_jbuf_lit(b, "}");
}

/* R_lite, as a JSON string holding its JSON text. */
static void put_rlite(const fbf_jsc *j, const fbf_jcb *c, fbf_jbuf *b)
{
    fbf_idset s;
    fbf_idset_init(&s);
    if (!c->alloc || fbf_idset_parse(&s, c->alloc, NULL) < 0) {
        fbf_jbuf_lit(b, "null");
        fbf_idset_fini(&s);
        return;
    }
    fbf_jbuf r = {0};
    fbf_flux_R_put(&r, &s, j->cpr, 0, 0);
    fbf_idset_fini(&s);
    /* R's text is {"version":1,"execution":{"R_lite":[...],...}}: the array. */
    const char *a = r.p ? strchr(r.p, '[') : NULL, *e = r.p ? strrchr(r.p, ']') : NULL;
    if (a && e && e > a) {
        char *text = strndup(a, (size_t)(e - a + 1));
        if (text)
            fbf_jbuf_str(b, text);
        else
            b->oom = true;
        free(text);
    } else {
        fbf_jbuf_lit(b, "null");
    }
    fbf_jbuf_fini(&r);
}

static const char *reason(const fbf_jcb *c)
{
    if (c->state != FBF_J_SCHEDREQ)
        return NULL;
    return isnan(c->est) ? "insufficient resources: no reservation"
                         : "insufficient resources: reserved at its t_estimate";
}

static void put_sched(const fbf_jcb *c, fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"t_estimate\":");
    if (isnan(c->est))
        fbf_jbuf_lit(b, "null");
    else
        fbf_jbuf_num(b, c->est);
    fbf_jbuf_lit(b, ",\"reason_pending\":");
    if (reason(c))
        fbf_jbuf_str(b, reason(c));
    else
        fbf_jbuf_lit(b, "null");
    fbf_jbuf_lit(b, "}");
}

int fbf_jsc_mirror_key(const fbf_jsc *j, const fbf_jcb *c, const char *key, fbf_jbuf *b,
                       fbf_error *err)
{
    bool all = strcmp(key, "jcb") == 0;
    if (strcmp(key, "rdl") == 0 || strcmp(key, "pdesc") == 0)
        return fbf_errorf(err, -EINVAL, "key \"%s\": a scheduler knows no %s", key,
                          key[0] == 'r' ? "RDL" : "processes");
    static const char *const keys[] = {"jobid", "state-pair", "rdesc", "R_lite", "sched"};
    int k = -1;
    for (int i = 0; i < 5 && k < 0; i++)
        if (strcmp(key, keys[i]) == 0)
            k = i;
    if (k < 0 && !all)
        return fbf_errorf(err, -ENOENT, "unknown key \"%.60s\": the JCB's keys are jobid, "
                          "state-pair, rdesc, R_lite, sched (and jcb for all)", key);
    fbf_jbuf_lit(b, "{");
    bool first = true;
    for (int i = 0; i < 5; i++) {
        if (!all && i != k)
            continue;
        if (!first)
            fbf_jbuf_lit(b, ",");
        first = false;
        fbf_jbuf_str(b, keys[i]);
        fbf_jbuf_lit(b, ":");
        switch (i) {
        case 0: put_id(j, c, b); break;
        case 1: put_state_pair(c, b); break;
        case 2: put_rdesc(c, b); break;
        case 3: put_rlite(j, c, b); break;
        default: put_sched(c, b); break;
        }
    }
    fbf_jbuf_lit(b, "}");
    return b->oom ? fbf_errorf(err, -ENOMEM, "out of memory") : 0;
}

void fbf_jsc_mirror_notice(const fbf_jsc *j, const fbf_jcb *c, fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"jobid\":");
    put_id(j, c, b);
    fbf_jbuf_lit(b, ",\"state-pair\":");
    put_state_pair(c, b);
    fbf_jbuf_lit(b, "}");
}

static void list_state(const fbf_jsc *j, fbf_jbuf *b, bool running, bool *first)
{
    const fbf_jsc_mirror *m = &j->mirror;
    for (size_t i = 0; i < m->n; i++) {
        const fbf_jcb *c = &m->v[i];
        bool run = c->state == FBF_J_RUNNING || c->state == FBF_J_ALLOCATED;
        if (run != running || (!run && c->state != FBF_J_SCHEDREQ))
            continue;
        if (!*first)
            fbf_jbuf_lit(b, ",");
        *first = false;
        fbf_jbuf_lit(b, "{\"jobid\":");
        put_id(j, c, b);
        fbf_jbuf_lit(b, ",\"state\":");
        fbf_jbuf_str(b, fbf_jsc_state_name(c->state));
        fbf_jbuf_lit(b, ",\"ncores\":");
        fbf_jbuf_int(b, c->ncores);
        fbf_jbuf_lit(b, ",\"walltime\":");
        fbf_jbuf_num(b, c->walltime < 0 ? -1 : c->walltime);
        fbf_jbuf_lit(b, ",\"sched\":");
        put_sched(c, b);
        fbf_jbuf_lit(b, "}");
    }
}

void fbf_jsc_mirror_list(const fbf_jsc *j, fbf_jbuf *b)
{
    bool first = true;
    fbf_jbuf_lit(b, "{\"jobs\":[");
    list_state(j, b, false, &first);
    list_state(j, b, true, &first);
    fbf_jbuf_lit(b, "]}");
}
