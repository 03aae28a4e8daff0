/*
 * ref_sched: the reference scheduler's event loop, estimates and
 * workloads (see ref_sched.h); the pass itself is in ref_policies.c.
 * Brute force on purpose; every rule cites the paragraph of
 * scheduling-semantics.md it implements.
 */
#include "support/ref_sched_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

const char *const ref_order_names[REF_NB_ORDERS] = {"submit", "sjf",  "saf",
                                                     "lxf",    "wfp3", "priority"};
const char *const ref_estimate_names[REF_NB_ESTIMATES] = {"walltime", "exact", "predict"};

void ref_fail(rstate *s, const char *fmt, ...)
{
    if (s->failed++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, s->errlen, fmt, ap);
    va_end(ap);
}

uint32_t ref_nb_free(const rstate *s)
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
void ref_start(rstate *s, size_t i)
{
    size_t qpos = 0;
    while (qpos < s->qn && s->queue[qpos] != i)
        qpos++;
    if (qpos == s->qn) {
        ref_fail(s, "job %zu started at %.17g but it does not wait", i, s->now);
        return;
    }
    uint32_t taken[REF_MAX_RES], nt = 0;
    for (uint32_t k = 0; k < s->nb && nt < s->in[i].res; k++)
        if (s->owner[k] < 0) {
            s->owner[k] = (long)i;
            taken[nt++] = s->ids[k];
        }
    if (nt < s->in[i].res)
        ref_fail(s, "job %zu started at %.17g without room", i, s->now);
    ref_format_ids(taken, nt, s->out[i].alloc, sizeof s->out[i].alloc);
    rjob *j = &s->j[i];
    j->status = RUNNING;
    j->start = s->now;
    j->est_end = isinf(j->est) ? INFINITY : s->now + j->est; /* D4, D10 */
    j->end = s->now + s->in[i].runtime;
    j->rsv = NAN;
    s->out[i].start = s->now;
    memmove(s->queue + qpos, s->queue + qpos + 1, (s->qn - qpos - 1) * sizeof *s->queue);
    s->qn--;
    ref_trace_push(s->tr, REF_EXECUTE, s->now, (long)i, NAN);
}

/* ---- D10: estimates ------------------------------------------------------ */

/* At submission. */
static double estimate(const rstate *s, size_t i)
{
    const ref_job *J = &s->in[i];
    double wall = J->walltime < 0 ? INFINITY : J->walltime; /* D9: none is +inf */
    switch (s->opt.estimate) {
    case REF_EXACT:
        return J->has_delay && J->delay >= 0 ? fmin(J->delay, wall) : wall;
    case REF_PREDICT: {
        const ruser *u = &s->users[J->user];
        return u->n >= 2 ? fmin((u->last[0] + u->last[1]) / 2, wall) : wall;
    }
    default:
        return wall;
    }
}

/* A JOB_COMPLETED applied: its run time counts for its user. */
static void completed(rstate *s, size_t i)
{
    ruser *u = &s->users[s->in[i].user];
    u->last[1] = u->last[0];
    u->last[0] = s->now - s->j[i].start;
    u->n += u->n < 2;
}

/* After the events: a running job that outlived its prediction gets its
 * walltime back. */
static void correct(rstate *s)
{
    for (size_t i = 0; i < s->n; i++) {
        rjob *j = &s->j[i];
        if (j->status == RUNNING && j->start + j->est <= s->now) {
            j->est = j->limit;
            j->est_end = isinf(j->limit) ? INFINITY : j->start + j->limit;
        }
    }
}

/* ---- the event loop ----------------------------------------------------- */

int ref_simulate(ref_policy pol, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                 size_t n, ref_result *out, ref_trace *trace, char *err, size_t errlen)
{
    ref_options o = {.policy = pol};
    return ref_simulate_opts(&o, ids, nb, jobs, n, out, trace, err, errlen);
}

int ref_simulate_opts(const ref_options *o, const uint32_t *ids, uint32_t nb,
                      const ref_job *jobs, size_t n, ref_result *out, ref_trace *trace,
                      char *err, size_t errlen)
{
    rstate st = {.opt = *o, .in = jobs, .n = n, .ids = ids, .nb = nb, .tr = trace,
                 .out = out, .err = err, .errlen = errlen, .now = 0};
    ref_policy pol = o->policy;
    int max_user = 0;
    for (size_t i = 0; i < n; i++)
        max_user = jobs[i].user > max_user ? jobs[i].user : max_user;
    st.users = calloc((size_t)max_user + 1, sizeof *st.users);
    st.j = calloc(n ? n : 1, sizeof *st.j);
    st.queue = calloc(n ? n : 1, sizeof *st.queue);
    size_t wcap = 16;
    double *wake = calloc(wcap, sizeof *wake);
    if (!st.j || !st.queue || !wake || !st.users)
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
            ref_fail(&st, "event loop stuck at %.17g", t);
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
                completed(&st, i);
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
            st.j[next].limit = J->walltime < 0 ? INFINITY : J->walltime;
            st.j[next].est = estimate(&st, next);
            enqueue(&st, next);
        }
        if (o->estimate == REF_PREDICT)
            correct(&st);
        /* One pass. */
        size_t before_pass = trace->n;
        ref_pass(&st);
        if (trace->n > before_pass && trace->v[trace->n - 1].kind == REF_CALL_ME_LATER) {
            double at = trace->v[trace->n - 1].at;
            if (!(at > t))
                ref_fail(&st, "CALL_ME_LATER(%.17g) at %.17g", at, t);
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
    free(st.users);
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
        *J = (ref_job){0}; /* no priority, user or delay: ref_random_extras() */
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

void ref_random_extras(uint64_t seed, ref_job *jobs, size_t n)
{
    uint64_t x = seed * 0xd1b54a32d192ed03ull + 0x8cb92ba72f3d8dd7ull;
    for (int i = 0; i < 4; i++)
        rnd(&x);
    int users = 1 + (int)(rnd(&x) % 5);
    for (size_t i = 0; i < n; i++) {
        ref_job *J = &jobs[i];
        unsigned p = (unsigned)(rnd(&x) % 10);
        J->priority = p < 3 ? 0 : p < 8 ? (double)(rnd(&x) % 4) : -1.5 * (double)(rnd(&x) % 3);
        J->user = (int)(rnd(&x) % (uint64_t)(users + 1)); /* 0: anonymous */
        /* Batsim forwards a delay profile of the job's own run time. */
        J->has_delay = rnd(&x) % 5 != 0;
        J->delay = J->runtime;
    }
}

void ref_print_workload(FILE *f, const uint32_t *ids, uint32_t nb, const ref_job *jobs,
                        size_t n)
{
    char buf[REF_ALLOC_LEN];
    ref_format_ids(ids, nb, buf, sizeof buf);
    fprintf(f, "platform \"%s\" (%u resources), %zu jobs {arrival, subtime, res, "
               "walltime, runtime, priority, user, has_delay, delay}:\n",
            buf, nb, n);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "  /* %zu */ {%.17g, %.17g, %lld, %.17g, %.17g, %.17g, %d, %d, %.17g},\n", i,
                jobs[i].arrival, jobs[i].subtime, (long long)jobs[i].res, jobs[i].walltime,
                jobs[i].runtime, jobs[i].priority, jobs[i].user, (int)jobs[i].has_delay,
                jobs[i].delay);
}
