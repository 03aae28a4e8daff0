/*
 * session: the protocol-neutral conversation (see session.h), its events
 * half: each typed event goes to the engine (or to the register, the
 * store, the queries) in the order the peer sent them, so that a job that
 * ends or is killed at this decision point is gone before the pass (D2).
 * The pass and the reply's decisions: session_reply.c.
 */
#include "io/session.h"
#include "io/json_strict.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/session_int.h"

/* How long a Redis command may take before the store is called dead. */
#define STORE_TIMEOUT_S 30.0

fbf_session *fbf_session_create(const fbf_session_options *opt, fbf_error *err)
{
    fbf_session *s = calloc(1, sizeof *s);
    if (!s) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->opt = *opt;
    s->last_call = s->energy = NAN;
    s->t0 = NAN;
    fbf_decisions_init(&s->outs);
    s->engine = fbf_engine_create(&opt->engine, err);
    if (!s->engine ||
        (opt->power && fbf_engine_set_power(s->engine, opt->power, err) < 0)) {
        fbf_session_destroy(s);
        return NULL;
    }
    if (opt->jsc)
        fbf_engine_track_reservations(s->engine, true);
    return s;
}

static void drop_queries(fbf_session *s)
{
    for (size_t i = 0; i < s->nqueries; i++)
        free(s->queries[i].id);
    s->nqueries = 0;
}

/* The prefetched descriptions' JSON, once no desc points into it. */
static void drop_docs(fbf_prefetch *p)
{
    for (size_t i = 0; i < p->n; i++) {
        cJSON_Delete(p->docs[i]);
        p->docs[i] = NULL;
    }
}

void fbf_session_destroy(fbf_session *s)
{
    if (!s)
        return;
    fbf_engine_destroy(s->engine);
    fbf_store_destroy(s->store);
    fbf_session_jsc_fini(s);
    drop_docs(&s->pre);
    free(s->pre.items);
    free(s->pre.origins);
    free(s->pre.descs);
    free(s->pre.docs);
    drop_queries(s);
    free(s->queries);
    fbf_decisions_fini(&s->outs);
    free(s);
}

fbf_engine *fbf_session_engine(fbf_session *s) { return s->engine; }
bool fbf_session_begun(const fbf_session *s) { return s->begun; }
bool fbf_session_ended(const fbf_session *s) { return s->ended; }
bool fbf_session_uses_store(const fbf_session *s) { return s->store != NULL; }
unsigned long fbf_session_nb_decision_points(const fbf_session *s) { return s->nb_points; }
fbf_session_fault fbf_session_last_fault(const fbf_session *s) { return s->fault; }

/* Records where the error is, and returns rc. */
static int fault(fbf_session *s, long origin, fbf_session_field field, int rc)
{
    s->fault = (fbf_session_fault){.index = origin, .field = field};
    return rc;
}

int fbf_session_open(fbf_session *s, double now, fbf_error *err)
{
    s->fault = (fbf_session_fault){.index = -1, .field = FBF_FIELD_NONE};
    if (s->ended)
        return fbf_errorf(err, -EPROTO, "message received after SIMULATION_ENDS");
    fbf_decisions_reset(&s->outs);
    drop_queries(s);
    drop_docs(&s->pre);
    s->pre.n = s->pre.next = 0;
    if (s->store)
        fbf_store_release(s->store);
    fbf_error inner;
    int rc = fbf_engine_begin(s->engine, now, &inner);
    if (rc < 0)
        return fault(s, -1, FBF_FIELD_TIME, fbf_errorf(err, rc, "%s", inner.text));
    s->open = true;
    s->nb_points++;
    return s->opt.jsc ? fbf_session_jsc_updates(s, err) : 0;
}

/* ---------- SIMULATION_BEGINS ---------- */

static bool listed(const uint32_t *v, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* The pstates are the platform's to say: the sleep pstate is its first
 * unless the command line named one of its sleep pstates, and the compute
 * pstate must be one a machine computes in. */
static int choose_pstates(fbf_session *s, const fbf_begins *b, fbf_power_config *cfg,
                          fbf_error *err)
{
    if (!b->pstates.found)
        return 0;
    const char *F = b->pstates.field;
    uint32_t m = b->pstates.machine;
    const uint32_t *sleep = b->pstates.sleep, *virt = b->pstates.virt;
    uint32_t nsleep = b->pstates.nsleep, nvirt = b->pstates.nvirt, count = b->pstates.count;
    bool sleep_given = s->opt.sleep_pstate_given;
    if (!sleep_given || !listed(sleep, nsleep, cfg->sleep_pstate)) {
        if (sleep_given)
            return fbf_errorf(err, -EINVAL, "%s: machine %u sleeps in pstate %u, not %u: "
                              "drop --sleep-pstate or set it to one of the platform's sleep "
                              "pstates", F, m, sleep[0], cfg->sleep_pstate);
        cfg->sleep_pstate = sleep[0];
    }
    uint32_t c = cfg->compute_pstate;
    const char *why = listed(sleep, nsleep, c)  ? "a sleep pstate"
                      : listed(virt, nvirt, c)  ? "a virtual pstate of a switch"
                      : count && c >= count     ? "not one of its pstates"
                                                : NULL;
    if (why)
        return fbf_errorf(err, -EINVAL, "%s: pstate %u of machine %u is %s, so machines "
                          "cannot compute in it: %s --compute-pstate to a computing pstate",
                          F, c, m, why, s->opt.compute_pstate_given ? "set" : "give");
    return 0;
}

static int connect_store(fbf_session *s, const fbf_begins *b, fbf_error *err)
{
    s->store = fbf_store_connect(b->store.host ? b->store.host : "127.0.0.1",
                                     b->store.port ? b->store.port : 6379, b->store.prefix,
                                     STORE_TIMEOUT_S, err);
    if (!s->store)
        return -ECONNREFUSED;
    if (s->opt.log)
        fprintf(s->opt.log, "fastbf: Redis mode: job descriptions from %s, prefix \"%s\"\n",
                fbf_store_where(s->store), fbf_store_prefix(s->store));
    return 0;
}

/* The platform's size as the store says (Batsim's nb_res key): machines
 * 0..n-1. */
static int store_platform(fbf_session *s, fbf_idset *out, fbf_error *err)
{
    fbf_store_item it = {.name = "nb_res"};
    fbf_error inner;
    int rc = fbf_store_get(s->store, FBF_STORE_PLAIN, &it, 1, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "%s", inner.text);
    char key[160];
    fbf_store_key(s->store, FBF_STORE_PLAIN, "nb_res", key, sizeof key);
    if (!it.value)
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\" does not exist (the platform's size)",
                          key);
    char text[24];
    unsigned long long n = 0;
    size_t len = it.len < sizeof text ? it.len : sizeof text - 1;
    memcpy(text, it.value, len);
    text[len] = '\0';
    bool ok = it.len > 0 && it.len < sizeof text;
    for (size_t i = 0; ok && i < len; i++) {
        ok = text[i] >= '0' && text[i] <= '9' && n <= (unsigned long long)FBF_IDSET_MAX_ID + 1;
        n = n * 10 + (unsigned long long)(text[i] - '0'); /* < 2^35: no wrap */
    }
    fbf_store_release(s->store);
    if (!ok || n < 1 || n > (unsigned long long)FBF_IDSET_MAX_ID + 1)
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\": expected a number of machines in "
                          "[1, 2^31], got \"%s%s\"", key, text, it.len >= sizeof text ? "..." : "");
    return fbf_idset_add_range(out, 0, (uint32_t)(n - 1)) < 0
               ? fbf_errorf(err, -ENOMEM, "out of memory")
               : 0;
}

static int on_begins(fbf_session *s, const fbf_event *ev, fbf_error *err)
{
    const fbf_begins *b = ev->u.begins;
    long o = ev->origin;
    s->begun = true;
    int rc;
    if (b->store.enabled && (rc = connect_store(s, b, err)) < 0)
        return fault(s, o, FBF_FIELD_NONE, rc);
    s->dynamic_jobs = b->dynamic_jobs;
    fbf_submitter *sub = s->opt.submitter;
    if (sub) {
        /* Registered jobs' descriptions go to the store when there is one. */
        fbf_submitter_use_store(sub, s->store);
        rc = fbf_submitter_configure(sub, b->dynamic_jobs, b->dynamic_acks,
                                        b->profile_reuse, err);
        if (rc == 0)
            rc = fbf_submitter_known_profiles(sub, b->known_profiles, err);
        if (rc < 0)
            return fault(s, o, FBF_FIELD_NONE, rc);
    }
    fbf_power_config power = s->opt.power ? *s->opt.power : fbf_power_config_default();
    fbf_idset sized;
    fbf_idset_init(&sized);
    const fbf_idset *compute = b->compute;
    if (!compute) {
        if (!s->store)
            rc = fbf_errorf(err, -EINVAL, "no platform: its size is the store's, and there is "
                            "no store");
        else
            rc = store_platform(s, &sized, err);
        compute = &sized;
    } else {
        rc = 0;
    }
    if (rc < 0 || (rc = choose_pstates(s, b, &power, err)) < 0 ||
        (rc = fbf_engine_set_power(s->engine, &power, err)) < 0 ||
        (rc = fbf_engine_set_platform(s->engine, compute, err)) < 0) {
        fbf_idset_fini(&sized);
        return fault(s, o, FBF_FIELD_NONE, rc);
    }
    fbf_idset_fini(&sized);
    for (size_t i = 0; i < b->nb_states; i++) {
        fbf_error inner;
        rc = fbf_engine_set_machine_state(s->engine, b->state_machines[i], b->states[i],
                                          &inner);
        if (rc < 0)
            return fault(s, o, FBF_FIELD_STATES, fbf_errorf(err, rc, "%s", inner.text));
    }
    if (s->opt.log)
        fprintf(s->opt.log, "fastbf: platform of %u compute resources\n",
                fbf_engine_nb_compute(s->engine));
    return 0;
}

/* ---------- descriptions from the store ---------- */

static int prefetch_grow(fbf_prefetch *p)
{
    size_t cap = p->cap ? 2 * p->cap : 64;
    fbf_store_item *it = realloc(p->items, cap * sizeof *it);
    if (it)
        p->items = it;
    long *o = realloc(p->origins, cap * sizeof *o);
    if (o)
        p->origins = o;
    fbf_job_desc *d = realloc(p->descs, cap * sizeof *d);
    if (d)
        p->descs = d;
    cJSON **j = realloc(p->docs, cap * sizeof *j);
    if (j)
        p->docs = j;
    if (!it || !o || !d || !j)
        return -ENOMEM;
    p->cap = cap;
    return 0;
}

/* Reads and checks the description of prefetched job i. */
static int take(fbf_session *s, size_t i, fbf_error *err)
{
    const fbf_store_item *it = &s->pre.items[i];
    char key[160];
    fbf_store_key(s->store, FBF_STORE_JOB, it->name, key, sizeof key);
    if (!it->value)
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\" does not exist (job %s has no "
                          "description)", key, it->name);
    const char *end = NULL;
    cJSON *d = cJSON_ParseWithLengthOpts(it->value, it->len, &end, 0);
    if (!d) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= it->value && at <= it->value + it->len ? (long)(at - it->value)
                                                                      : -1;
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\": malformed JSON near byte %ld", key,
                          off);
    }
    /* As on the socket: one JSON value, then whitespace at most. */
    while (end && end < it->value + it->len && strchr(" \t\r\n", *end) && *end)
        end++;
    fbf_error inner;
    int rc = end && end < it->value + it->len
                 ? fbf_errorf(&inner, -EPROTO, "unexpected bytes after the JSON value at byte %ld",
                              (long)(end - it->value))
                 : fbf_json_strict(it->value, it->len, d, &inner);
    if (rc == 0)
        rc = cJSON_IsObject(d) ? fbf_job_json_read(d, "", it->name, true, &s->pre.descs[i], &inner)
                               : fbf_errorf(&inner, -EPROTO, "expected a JSON object (the "
                                            "job's description), got %s",
                                            fbf_job_json_kind(d));
    if (rc < 0) {
        cJSON_Delete(d);
        return fbf_errorf(err, rc, "Redis key \"%s\": %s", key, inner.text);
    }
    s->pre.docs[i] = d; /* the desc's user points into it */
    return 0;
}

/* The descriptions of every undescribed submission of ev[0..n), from the
 * store in one pipeline. */
static int prefetch(fbf_session *s, const fbf_event *ev, size_t n, fbf_error *err)
{
    fbf_prefetch *p = &s->pre;
    drop_docs(p);
    p->n = p->next = 0;
    for (size_t i = 0; i < n; i++) {
        if (ev[i].kind != FBF_EV_JOB_SUBMITTED || ev[i].u.submitted.described)
            continue;
        if (p->n == p->cap && prefetch_grow(p) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        p->docs[p->n] = NULL;
        p->origins[p->n] = ev[i].origin;
        p->items[p->n++] = (fbf_store_item){.name = ev[i].u.submitted.id};
    }
    fbf_error inner;
    int rc = fbf_store_get(s->store, FBF_STORE_JOB, p->items, p->n, &inner);
    if (rc < 0)
        return fault(s, p->origins[0], FBF_FIELD_NONE, fbf_errorf(err, rc, "%s", inner.text));
    for (size_t i = 0; i < p->n; i++)
        if ((rc = take(s, i, &inner)) < 0)
            return fault(s, p->origins[i], FBF_FIELD_NONE,
                         fbf_errorf(err, rc, "%s", inner.text));
    fbf_store_release(s->store);
    return 0;
}

/* ---------- jobs ---------- */

static int on_submitted(fbf_session *s, const fbf_event *ev, size_t left, fbf_error *err)
{
    const char *id = ev->u.submitted.id;
    fbf_job_desc d = ev->u.submitted.desc;
    if (!ev->u.submitted.described) {
        if (!s->store)
            return fault(s, ev->origin, FBF_FIELD_JOB,
                         fbf_errorf(err, -EPROTO, "expected an object (fastbf needs job "
                                    "descriptions), got nothing"));
        int rc;
        if (s->pre.next == s->pre.n && (rc = prefetch(s, ev, left, err)) < 0)
            return rc;
        d = s->pre.descs[s->pre.next++];
    }
    s->jobs_since_query = true;
    fbf_submission sub = {.id = id,
                          .subtime = isnan(d.subtime) ? ev->time : d.subtime,
                          .res = d.res,
                          .walltime = d.walltime,
                          .priority = d.priority,
                          .delay = d.delay};
    /* D10: users are equal when their JSON values are: their canonical
     * text, printed only where predict reads it. */
    char *user = NULL;
    if (d.user && s->opt.engine.estimate == FBF_ESTIMATE_PREDICT &&
        !(user = cJSON_PrintUnformatted(d.user)))
        return fbf_errorf(err, -ENOMEM, "out of memory");
    sub.user = user;
    fbf_error inner;
    int rc = fbf_engine_submit_job(s->engine, &sub, &inner);
    free(user);
    if (rc < 0)
        return fault(s, ev->origin, FBF_FIELD_JOB_ID, fbf_errorf(err, rc, "%s", inner.text));
    if (s->opt.jsc)
        fbf_jsc_queued(s->opt.jsc, id, d.res, d.walltime, sub.subtime);
    return 0;
}

static int complete(fbf_session *s, const fbf_event *ev, const char *id, const char *alloc,
                    fbf_error *err)
{
    fbf_job_h h = fbf_engine_find(s->engine, id);
    if (h == FBF_JOB_NONE)
        return fault(s, ev->origin, FBF_FIELD_JOB_ID,
                     fbf_errorf(err, -ENOENT, "unknown job %s", id));
    if (ev->kind == FBF_EV_JOB_KILLED && fbf_engine_job_state(s->engine, h) == FBF_JOB_DONE)
        return 0; /* it completed before the kill, and was reported then */
    if (alloc) {
        fbf_idset got;
        fbf_idset_init(&got);
        int rc = fbf_idset_parse(&got, alloc, err);
        bool same = rc == 0 && fbf_idset_equal(&got, fbf_engine_job_alloc(s->engine, h));
        fbf_idset_fini(&got);
        if (rc < 0 || (!same && fbf_engine_job_state(s->engine, h) == FBF_JOB_RUNNING)) {
            char want[64];
            fbf_idset_format(fbf_engine_job_alloc(s->engine, h), want, sizeof want);
            return fault(s, ev->origin, FBF_FIELD_ALLOC,
                         fbf_errorf(err, -EPROTO, "job %s ran on \"%s\", not \"%s\"", id, want,
                                    alloc));
        }
    }
    fbf_error inner;
    /* D10: a JOB_COMPLETED's run time counts for predict, a kill's not. */
    int rc = fbf_engine_end_job(s->engine, h, ev->time, ev->kind == FBF_EV_JOB_KILLED, &inner);
    if (rc < 0)
        return fault(s, ev->origin, FBF_FIELD_JOB_ID, fbf_errorf(err, rc, "%s", inner.text));
    if (s->opt.jsc)
        fbf_session_jsc_ended(s, h, ev->kind == FBF_EV_JOB_KILLED);
    return 0;
}

static int on_query(fbf_session *s, const fbf_event *ev, fbf_error *err)
{
    if (s->nqueries == s->qcap) {
        size_t cap = s->qcap ? 2 * s->qcap : 16;
        fbf_wait_query *q = realloc(s->queries, cap * sizeof *q);
        if (!q)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        s->queries = q;
        s->qcap = cap;
    }
    char *id = strdup(ev->u.query.id);
    if (!id)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    s->queries[s->nqueries++] =
        (fbf_wait_query){.id = id, .res = ev->u.query.res, .walltime = ev->u.query.walltime};
    return 0;
}

static int on_state_changed(fbf_session *s, const fbf_event *ev, fbf_error *err)
{
    fbf_error inner;
    int rc = fbf_engine_state_changed(s->engine, ev->u.state.machines, ev->u.state.pstate,
                                      &inner);
    if (rc < 0)
        return fault(s, ev->origin,
                     strstr(inner.text, "pstate (") ? FBF_FIELD_PSTATE : FBF_FIELD_MACHINES,
                     fbf_errorf(err, rc, "%s", inner.text));
    return 0;
}

static int on_notify(fbf_session *s, const fbf_event *ev)
{
    const char *what = "no_more_external_event_to_occur";
    if (ev->u.notice == FBF_NOTICE_NO_MORE_STATIC_JOBS) {
        s->no_more_static = s->query_due = true;
        what = "no_more_static_job_to_submit";
    } else {
        s->no_more_external = true;
    }
    if (s->opt.log)
        fprintf(s->opt.log, "fastbf: NOTIFY %s\n", what);
    return 0;
}

/* Jobs steered by the peer outside its submissions and ends. */
static int on_jobctl(fbf_session *s, const fbf_event *ev, fbf_error *err)
{
    fbf_error inner;
    int rc;
    fbf_jsc *j = s->opt.jsc;
    if (ev->kind == FBF_EV_JOB_ADOPTED) {
        rc = fbf_engine_adopt(s->engine, ev->u.adopted.id, ev->u.adopted.alloc,
                              ev->u.adopted.end, &inner);
        if (rc < 0)
            return fault(s, ev->origin, rc == -EEXIST ? FBF_FIELD_JOB_ID : FBF_FIELD_ALLOC,
                         fbf_errorf(err, rc, "%s", inner.text));
        if (j)
            fbf_jsc_adopted(j, ev->u.adopted.id, ev->u.adopted.alloc);
        return 0;
    }
    fbf_job_h h = fbf_engine_find(s->engine, ev->u.job);
    if (h == FBF_JOB_NONE)
        return fault(s, ev->origin, FBF_FIELD_JOB_ID,
                     fbf_errorf(err, -ENOENT, "unknown job %s", ev->u.job));
    bool withdraw = ev->kind == FBF_EV_JOB_WITHDRAWN;
    rc = withdraw ? fbf_engine_withdraw(s->engine, h, &inner)
                  : fbf_engine_requeue(s->engine, h, &inner);
    if (rc < 0)
        return fault(s, ev->origin, FBF_FIELD_JOB_ID, fbf_errorf(err, rc, "%s", inner.text));
    if (j && withdraw)
        fbf_jsc_cancelled(j, ev->u.job);
    else if (j)
        fbf_jsc_requeued(j, ev->u.job);
    return 0;
}

static int apply_one(fbf_session *s, const fbf_event *ev, size_t left, fbf_error *err)
{
    switch (ev->kind) {
    case FBF_EV_JOB_SUBMITTED: return on_submitted(s, ev, left, err);
    case FBF_EV_JOB_ENDED: return complete(s, ev, ev->u.ended.id, ev->u.ended.alloc, err);
    case FBF_EV_JOB_KILLED:
        if (s->opt.log && ev->u.killed.progress)
            fprintf(s->opt.log, "fastbf: job %s killed at %s\n", ev->u.killed.id,
                    ev->u.killed.progress);
        return complete(s, ev, ev->u.killed.id, NULL, err);
    case FBF_EV_CALL_DUE:
        if (s->opt.log)
            fprintf(s->opt.log, "fastbf: REQUESTED_CALL at %.6f\n", ev->time);
        return 0;
    case FBF_EV_NOTIFY: return on_notify(s, ev);
    case FBF_EV_STATE_CHANGED: return on_state_changed(s, ev, err);
    case FBF_EV_MACHINES_FAILED:
    case FBF_EV_MACHINES_RESTORED: {
        fbf_error inner;
        int rc = fbf_engine_set_failed(s->engine, ev->u.machines,
                                       ev->kind == FBF_EV_MACHINES_FAILED, &inner);
        return rc < 0 ? fault(s, ev->origin, FBF_FIELD_MACHINES,
                              fbf_errorf(err, rc, "%s", inner.text))
                      : 0;
    }
    case FBF_EV_QUERY_WAIT: return on_query(s, ev, err);
    case FBF_EV_ENERGY:
        s->energy = ev->u.joules;
        if (s->opt.log)
            fprintf(s->opt.log, "fastbf: consumed energy %.6f J\n", s->energy);
        return 0;
    case FBF_EV_SIMULATION_BEGINS: return on_begins(s, ev, err);
    case FBF_EV_SIMULATION_ENDS: s->ended = true; return 0;
    case FBF_EV_JOB_ADOPTED:
    case FBF_EV_JOB_WITHDRAWN:
    case FBF_EV_JOB_REQUEUED: return on_jobctl(s, ev, err);
    }
    return fbf_errorf(err, -EINVAL, "unknown event kind %d", (int)ev->kind);
}

int fbf_session_apply(fbf_session *s, const fbf_event *ev, size_t n, fbf_error *err)
{
    if (!s->open)
        return fbf_errorf(err, -EINVAL, "events applied outside a decision point");
    for (size_t i = 0; i < n; i++) {
        int rc = apply_one(s, &ev[i], n - i, err);
        if (rc < 0) {
            if (s->fault.index < 0)
                s->fault.index = ev[i].origin;
            return rc;
        }
    }
    return 0;
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

double fbf_serve_stats_clock(const fbf_serve_stats *st) { return st ? mono_s() : 0; }

void fbf_serve_stats_add(fbf_serve_stats *st, double t0)
{
    if (!st)
        return;
    double dt = mono_s() - t0;
    st->handling_s += dt;
    if (st->messages++ == 0)
        st->first_s = dt;
}
