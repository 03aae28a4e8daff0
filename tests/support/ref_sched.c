/*
 * ref_sched: the reference scheduler (see ref_sched.h). Brute force on
 * purpose; every rule cites the paragraph of scheduling-semantics.md it
 * implements.
 */
#include "support/ref_sched.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { PENDING, WAITING, RUNNING, DONE, REJECTED };

typedef struct rjob {
    int status;
    uint64_t seq;   /* arrival order (D1 tie-break) */
    double rsv;     /* conservative reservation, NAN if none */
    double start;   /* when running */
    double est_end; /* start + walltime, INFINITY if no walltime (D4) */
    double end;     /* start + runtime: the actual end */
} rjob;

typedef struct rstate {
    ref_policy pol;
    const ref_job *in;
    rjob *j;
    size_t n;
    const uint32_t *ids;
    uint32_t nb;
    long owner[REF_MAX_RES]; /* job holding resource ids[k], or -1 */
    size_t *queue, qn;       /* waiting jobs in D1 order */
    double now;
    bool any_ended;
    ref_trace *tr;
    ref_result *out;
    char *err;
    size_t errlen;
    int failed;
} rstate;

/* ---- trace ------------------------------------------------------------ */

void ref_trace_push(ref_trace *t, ref_kind kind, double now, long job, double at)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 256;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        if (!t->v)
            abort();
    }
    t->v[t->n++] = (ref_entry){kind, now, job, at};
}

void ref_trace_fini(ref_trace *t)
{
    free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

static bool same_double(double a, double b) { return a == b || (isnan(a) && isnan(b)); }

size_t ref_trace_diff(const ref_trace *a, const ref_trace *b)
{
    size_t n = a->n < b->n ? a->n : b->n;
    for (size_t i = 0; i < n; i++) {
        const ref_entry *x = &a->v[i], *y = &b->v[i];
        if (x->kind != y->kind || !same_double(x->now, y->now) || x->job != y->job ||
            !same_double(x->at, y->at))
            return i;
    }
    return a->n == b->n ? SIZE_MAX : n;
}

void ref_trace_print(FILE *f, const ref_trace *t, size_t from, size_t to)
{
    static const char *names[] = {"DP", "REJECT", "EXECUTE", "CALL_ME_LATER"};
    for (size_t i = from; i < to && i < t->n; i++) {
        const ref_entry *e = &t->v[i];
        fprintf(f, "  [%zu] %-13s now=%.17g", i, names[e->kind], e->now);
        if (e->job >= 0)
            fprintf(f, " job=%ld", e->job);
        if (e->kind == REF_CALL_ME_LATER)
            fprintf(f, " at=%.17g", e->at);
        fputc('\n', f);
    }
}

void ref_format_ids(const uint32_t *ids, size_t n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n;) {
        size_t k = i;
        while (k + 1 < n && ids[k + 1] == ids[k] + 1)
            k++;
        int w = k == i ? snprintf(buf + len, cap - len, "%s%u", len ? " " : "", ids[i])
                       : snprintf(buf + len, cap - len, "%s%u-%u", len ? " " : "", ids[i],
                                  ids[k]);
        if (w < 0 || (size_t)w >= cap - len)
            return;
        len += (size_t)w;
        i = k + 1;
    }
}

static void fail(rstate *s, const char *fmt, ...)
{
    if (s->failed++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
}

/* ---- resources and the queue ------------------------------------------ */

static uint32_t nb_free(const rstate *s)
{
    uint32_t f = 0;
    for (uint32_t k = 0; k < s->nb; k++)
        f += s->owner[k] < 0;
    return f;
}

/* D1: subtime, then arrival. */
static bool before(const rstate *s, size_t a, size_t b)
{
    if (s->in[a].subtime != s->in[b].subtime)
        return s->in[a].subtime < s->in[b].subtime;
    return s->j[a].seq < s->j[b].seq;
}

static void enqueue(rstate *s, size_t i)
{
    size_t pos = s->qn;
    while (pos > 0 && before(s, i, s->queue[pos - 1]))
        pos--;
    memmove(s->queue + pos + 1, s->queue + pos, (s->qn - pos) * sizeof *s->queue);
    s->queue[pos] = i;
    s->qn++;
}

/* D3: the res lowest-numbered free resources, in start order. */
static void start(rstate *s, size_t qpos)
{
    size_t i = s->queue[qpos];
    uint32_t taken[REF_MAX_RES], nt = 0;
    for (uint32_t k = 0; k < s->nb && nt < s->in[i].res; k++)
        if (s->owner[k] < 0) {
            s->owner[k] = (long)i;
            taken[nt++] = s->ids[k];
        }
    if (nt < s->in[i].res)
        fail(s, "job %zu started at %.17g without room", i, s->now);
    ref_format_ids(taken, nt, s->out[i].alloc, sizeof s->out[i].alloc);
    rjob *j = &s->j[i];
    j->status = RUNNING;
    j->start = s->now;
    j->est_end = s->in[i].walltime < 0 ? INFINITY : s->now + s->in[i].walltime;
    j->end = s->now + s->in[i].runtime;
    j->rsv = NAN;
    s->out[i].start = s->now;
    memmove(s->queue + qpos, s->queue + qpos + 1, (s->qn - qpos - 1) * sizeof *s->queue);
    s->qn--;
    ref_trace_push(s->tr, REF_EXECUTE, s->now, (long)i, NAN);
}

/* ---- FCFS (D5) and EASY (D6) ------------------------------------------ */

static void fcfs(rstate *s)
{
    while (s->qn > 0 && s->in[s->queue[0]].res <= nb_free(s))
        start(s, 0);
}

static void easy(rstate *s)
{
    fcfs(s);
    if (s->qn == 0)
        return;
    size_t h = s->queue[0];
    int64_t free = nb_free(s);
    /* shadow: the smallest est_end E such that free + sum(res of running
     * jobs with est_end <= E) >= H.res. */
    double shadow = INFINITY;
    for (size_t r = 0; r < s->n; r++) {
        if (s->j[r].status != RUNNING)
            continue;
        double e = s->j[r].est_end;
        int64_t avail = free;
        for (size_t q = 0; q < s->n; q++)
            if (s->j[q].status == RUNNING && s->j[q].est_end <= e)
                avail += s->in[q].res;
        if (avail >= s->in[h].res && e < shadow)
            shadow = e;
    }
    int64_t extra = free - s->in[h].res;
    for (size_t q = 0; q < s->n; q++)
        if (s->j[q].status == RUNNING && s->j[q].est_end <= shadow)
            extra += s->in[q].res;
    for (size_t pos = 1; pos < s->qn;) {
        const ref_job *J = &s->in[s->queue[pos]];
        bool short_enough = s->now + J->walltime <= shadow;
        if (J->res <= free && (short_enough || J->res <= extra)) {
            free -= J->res;
            if (!short_enough)
                extra -= J->res;
            start(s, pos);
        } else {
            pos++;
        }
    }
}

/* ---- conservative (D7) ------------------------------------------------- */

static bool holds_rsv(const rstate *s, size_t i)
{
    return s->j[i].status == WAITING && s->in[i].walltime > 0 && !isnan(s->j[i].rsv);
}

/* A span of the profile: res resources busy over [from, to). */
typedef struct span {
    double from, to;
    int64_t res;
} span;

/* The profile of D7: every running job holds res over [now, est_end),
 * every reservation but excl's over [rsv, rsv + walltime). */
static size_t profile(const rstate *s, size_t excl, span *sp)
{
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (s->j[i].status == RUNNING)
            sp[k++] = (span){s->now, s->j[i].est_end, s->in[i].res};
        else if (i != excl && holds_rsv(s, i))
            sp[k++] = (span){s->j[i].rsv, s->j[i].rsv + s->in[i].walltime, s->in[i].res};
    return k;
}

/* free(u), by summing over every span. */
static int64_t free_at(const rstate *s, const span *sp, size_t nsp, double u)
{
    int64_t f = s->nb;
    for (size_t k = 0; k < nsp; k++)
        if (sp[k].from <= u && u < sp[k].to)
            f -= sp[k].res;
    return f;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* earliest(J): the smallest t >= now among now and the breakpoints such
 * that free(u) >= res on [t, t + walltime), J's own reservation left out. */
static double earliest(const rstate *s, size_t jid)
{
    span *sp = malloc((s->n + 1) * sizeof *sp);
    double *bp = malloc((2 * s->n + 1) * sizeof *bp);
    if (!sp || !bp)
        abort();
    size_t nsp = profile(s, jid, sp), nbp = 0;
    bp[nbp++] = s->now;
    for (size_t k = 0; k < nsp; k++) {
        if (sp[k].from > s->now)
            bp[nbp++] = sp[k].from;
        if (sp[k].to > s->now)
            bp[nbp++] = sp[k].to;
    }
    qsort(bp, nbp, sizeof *bp, cmp_double);
    double res = INFINITY;
    const ref_job *J = &s->in[jid];
    for (size_t c = 0; c < nbp && isinf(res); c++) {
        double t = bp[c];
        if (c > 0 && bp[c - 1] == t)
            continue;
        /* free is constant between breakpoints: check t and those inside */
        bool ok = free_at(s, sp, nsp, t) >= J->res;
        for (size_t k = c + 1; ok && k < nbp && bp[k] < t + J->walltime; k++)
            ok = free_at(s, sp, nsp, bp[k]) >= J->res;
        if (ok)
            res = t;
    }
    free(sp);
    free(bp);
    return res;
}

static void conservative(rstate *s)
{
    /* (a) compression, in queue order, every other reservation in place. */
    if (s->any_ended)
        for (size_t q = 0; q < s->qn; q++) {
            size_t i = s->queue[q];
            if (!holds_rsv(s, i))
                continue;
            double old = s->j[i].rsv;
            double t = earliest(s, i);
            if (t > old)
                fail(s, "compression moved job %zu later at %.17g: %.17g -> %.17g", i,
                     s->now, old, t);
            s->j[i].rsv = t;
        }
    /* (b) new arrivals (walltime > 0, no reservation yet), in queue order. */
    for (size_t q = 0; q < s->qn; q++) {
        size_t i = s->queue[q];
        if (s->in[i].walltime > 0 && isnan(s->j[i].rsv))
            s->j[i].rsv = earliest(s, i);
    }
    /* (c) due reservations, then jobs of walltime 0 that fit. */
    for (size_t q = 0; q < s->qn;) {
        size_t i = s->queue[q];
        if (s->in[i].walltime > 0 && s->j[i].rsv == s->now) {
            if (s->in[i].res > nb_free(s)) {
                fail(s, "job %zu reserved at %.17g does not fit", i, s->now);
                q++;
                continue;
            }
            start(s, q);
        } else {
            q++;
        }
    }
    for (size_t q = 0; q < s->qn;) {
        size_t i = s->queue[q];
        if (s->in[i].walltime == 0 && s->in[i].res <= nb_free(s))
            start(s, q);
        else
            q++;
    }
    /* (d) */
    double x = INFINITY;
    bool waiting = false;
    for (size_t q = 0; q < s->qn; q++) {
        size_t i = s->queue[q];
        if (s->in[i].walltime > 0) {
            waiting = true;
            if (s->j[i].rsv < x)
                x = s->j[i].rsv;
        }
    }
    if (!waiting)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->j[i].status == RUNNING && s->j[i].est_end <= x)
            return;
    ref_trace_push(s->tr, REF_CALL_ME_LATER, s->now, -1, x);
}

/* ---- the event loop ----------------------------------------------------- */

int ref_simulate(ref_policy pol, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                 size_t n, ref_result *out, ref_trace *trace, char *err, size_t errlen)
{
    rstate st = {.pol = pol, .in = jobs, .n = n, .ids = ids, .nb = nb, .tr = trace,
                 .out = out, .err = err, .errlen = errlen, .now = 0};
    st.j = calloc(n ? n : 1, sizeof *st.j);
    st.queue = calloc(n ? n : 1, sizeof *st.queue);
    size_t wcap = 16;
    double *wake = calloc(wcap, sizeof *wake);
    if (!st.j || !st.queue || !wake)
        abort();
    size_t nwake = 0, next = 0;
    for (uint32_t k = 0; k < nb; k++)
        st.owner[k] = -1;
    for (size_t i = 0; i < n; i++) {
        st.j[i] = (rjob){.status = PENDING, .rsv = NAN};
        out[i].rejected = false;
        out[i].start = NAN;
        out[i].alloc[0] = '\0';
    }
    uint64_t seq = 0;
    size_t steps = 0;
    while (!st.failed) {
        double t = next < n ? jobs[next].arrival : INFINITY;
        for (size_t i = 0; i < n; i++)
            if (st.j[i].status == RUNNING && st.j[i].end < t)
                t = st.j[i].end;
        for (size_t w = 0; w < nwake; w++)
            if (wake[w] < t)
                t = wake[w];
        if (isinf(t))
            break;
        if (t < st.now || ++steps > 100 * (n + 10)) {
            fail(&st, "event loop stuck at %.17g", t);
            break;
        }
        st.now = t;
        size_t kept = 0;
        for (size_t w = 0; w < nwake; w++)
            if (wake[w] > t)
                wake[kept++] = wake[w];
        nwake = kept;
        /* D0: apply the message's events first. */
        ref_trace_push(trace, REF_DP, t, -1, NAN);
        st.any_ended = false;
        for (size_t i = 0; i < n; i++)
            if (st.j[i].status == RUNNING && st.j[i].end <= t) {
                st.j[i].status = DONE;
                for (uint32_t k = 0; k < nb; k++)
                    if (st.owner[k] == (long)i)
                        st.owner[k] = -1;
                st.any_ended = true;
            }
        for (; next < n && jobs[next].arrival <= t; next++) {
            const ref_job *J = &jobs[next];
            st.j[next].seq = seq++;
            /* D2 */
            if (J->res < 1 || J->res > (int64_t)nb || (pol != REF_FCFS && J->walltime < 0)) {
                st.j[next].status = REJECTED;
                out[next].rejected = true;
                ref_trace_push(trace, REF_REJECT, t, (long)next, NAN);
                continue;
            }
            st.j[next].status = WAITING;
            enqueue(&st, next);
        }
        /* One pass. */
        size_t before_pass = trace->n;
        if (pol == REF_FCFS)
            fcfs(&st);
        else if (pol == REF_EASY)
            easy(&st);
        else
            conservative(&st);
        if (trace->n > before_pass && trace->v[trace->n - 1].kind == REF_CALL_ME_LATER) {
            double at = trace->v[trace->n - 1].at;
            if (!(at > t))
                fail(&st, "CALL_ME_LATER(%.17g) at %.17g", at, t);
            bool known = false;
            for (size_t w = 0; w < nwake; w++)
                known |= wake[w] == at;
            if (!known) {
                if (nwake == wcap && !(wake = realloc(wake, (wcap *= 2) * sizeof *wake)))
                    abort();
                wake[nwake++] = at;
            }
        }
    }
    free(st.j);
    free(st.queue);
    free(wake);
    return st.failed ? -1 : 0;
}

/* ---- workloads ---------------------------------------------------------- */

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x >> 12;
    *x ^= *x << 25;
    *x ^= *x >> 27;
    return *x * 2685821657736338717ull;
}

/* Integer-valued times mostly (ties happen), some halves and thousandths. */
size_t ref_random_workload(uint64_t seed, size_t min_jobs, size_t max_jobs, uint32_t min_res,
                           uint32_t max_res, ref_job *jobs, uint32_t *ids, uint32_t *nb)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    for (int i = 0; i < 4; i++)
        rnd(&x);
    size_t n = min_jobs + rnd(&x) % (max_jobs - min_jobs + 1);
    *nb = min_res + (uint32_t)(rnd(&x) % (max_res - min_res + 1));
    uint32_t id = (uint32_t)(rnd(&x) % 3);
    bool gaps = rnd(&x) % 2;
    for (uint32_t k = 0; k < *nb; k++) {
        ids[k] = id;
        id += 1 + (gaps && rnd(&x) % 4 == 0 ? (uint32_t)(rnd(&x) % 3) : 0);
    }
    unsigned gap_max = 1 + (unsigned)(rnd(&x) % 30); /* load: small gaps, deep queues */
    unsigned wall_max = 5 + (unsigned)(rnd(&x) % 100);
    static const unsigned zero_pcts[] = {2, 7, 15, 30};
    unsigned zero_pct = zero_pcts[rnd(&x) % 4];    /* walltime 0 */
    unsigned tie_pct = 30 + (unsigned)(rnd(&x) % 50); /* same arrival as the previous job */
    double t = 0;
    for (size_t i = 0; i < n; i++) {
        ref_job *J = &jobs[i];
        if (rnd(&x) % 100 >= tie_pct)
            t += (double)(rnd(&x) % gap_max);
        J->arrival = t;
        J->subtime = t;
        if (rnd(&x) % 10 == 0) /* arrives late: it queues ahead of others */
            J->subtime = fmax(0, t - (double)(rnd(&x) % 15));
        unsigned r = (unsigned)(rnd(&x) % 100);
        uint32_t quarter = *nb / 4 ? *nb / 4 : 1;
        if (r < 60)
            J->res = 1 + (int64_t)(rnd(&x) % quarter);
        else if (r < 90)
            J->res = 1 + (int64_t)(rnd(&x) % *nb);
        else if (r < 95)
            J->res = *nb;
        else if (r < 97)
            J->res = -(int64_t)(rnd(&x) % 2); /* 0 or -1: rejected */
        else
            J->res = *nb + 1 + (int64_t)(rnd(&x) % 3); /* too big: rejected */
        unsigned w = (unsigned)(rnd(&x) % 100);
        if (w < zero_pct)
            J->walltime = 0;
        else if (w < zero_pct + 3)
            J->walltime = -1; /* none: FCFS only */
        else
            J->walltime = 1 + (double)(rnd(&x) % wall_max) + (rnd(&x) % 5 == 0 ? 0.5 : 0);
        if (J->walltime < 0)
            J->runtime = 1 + (double)(rnd(&x) % wall_max);
        else if (rnd(&x) % 2)
            J->runtime = J->walltime;
        else if (rnd(&x) % 2)
            J->runtime = floor(J->walltime * (double)(rnd(&x) % 1000)) / 1000;
        else
            J->runtime = floor(J->walltime * (double)(rnd(&x) % 1000) / 1000);
    }
    return n;
}

void ref_print_workload(FILE *f, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                        size_t n)
{
    char buf[REF_ALLOC_LEN];
    ref_format_ids(ids, nb, buf, sizeof buf);
    fprintf(f, "platform \"%s\" (%u resources), %zu jobs {arrival, subtime, res, "
               "walltime, runtime}:\n",
            buf, nb, n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  /* %zu */ {%.17g, %.17g, %lld, %.17g, %.17g},\n", i, jobs[i].arrival,
                jobs[i].subtime, (long long)jobs[i].res, jobs[i].walltime, jobs[i].runtime);
}
