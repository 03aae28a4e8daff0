/*
 * flux_instant: one instant of the RFC 27 service (see flux_session.h):
 * the instant's requests become the session's events (io/session.h), one
 * pass decides, and every request and decision gets its answer.
 *
 * Answers go out in this order: the instant's requests in arrival order
 * (free responses, CANCEL for a cancelled alloc, DENY for a jobspec fastbf
 * cannot use), then the pass's decisions (DENY for a job that can never
 * run, SUCCESS for each start once every R is written), then ANNOTATE for
 * each waiting job whose estimate or reason changed, then the answer to
 * sim.instant.
 *
 * Annotations: a waiting job holds a reservation when the pass set one
 * (finite depths: set at this instant; the unlimited depth: set at this
 * instant or kept from before). Its sched.t_estimate is that reservation
 * (absent without one) and its sched.reason_pending says whether it holds
 * one; each is sent when it changes only, and SUCCESS clears those sent.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_job.h"
#include "io/flux_session_int.h"
#include "io/job_json.h"
#include "io/json_strict.h"

enum { REASON_NONE, REASON_RESERVED, REASON_QUEUED };

static const char *const reason_text[] = {
    [REASON_RESERVED] = "insufficient resources: reserved at its t_estimate",
    [REASON_QUEUED] = "insufficient resources: no reservation",
};

/* The instant's scratch for the jobspecs of new jobs. */
typedef struct specs {
    char (*keys)[64];
    fbf_store_item *items;
    uint32_t *req; /* the request each item is for */
    size_t n;
    char (*note)[200]; /* per request: why its job is denied ("" if not) */
    fbf_job_desc *desc; /* per request */
} specs;

static void specs_fini(specs *p)
{
    free(p->keys);
    free(p->items);
    free(p->req);
    free(p->note);
    free(p->desc);
}

static uint32_t cores(const fbf_flux_session *s)
{
    return s->opt.nranks * s->opt.cores_per_rank;
}

/* Reads one jobspec into the request's description, or its denial note. */
static void take_spec(fbf_flux_session *s, specs *p, size_t i, double now)
{
    size_t r = p->req[i];
    fbf_flux_job *j = &s->jobs.v[s->reqs[r].job];
    const fbf_store_item *it = &p->items[i];
    char *note = p->note[r];
    if (!it->value) {
        snprintf(note, 200, "no jobspec: Redis key \"%s\" does not exist", p->keys[i]);
        return;
    }
    cJSON *js = cJSON_ParseWithLength(it->value, it->len);
    fbf_error inner;
    fbf_flux_jobspec spec;
    int rc = js ? fbf_json_strict(it->value, it->len, js, &inner)
                : fbf_errorf(&inner, -EPROTO, "malformed JSON");
    if (rc == 0)
        rc = fbf_flux_jobspec_read(js, &spec, &inner);
    cJSON_Delete(js);
    if (rc < 0) {
        snprintf(note, 200, "jobspec (Redis key \"%s\"): %.140s", p->keys[i], inner.text);
        return;
    }
    if (spec.gpus_per_slot > 0) {
        snprintf(note, 200, "the jobspec asks for gpus: fastbf's platform has cores only");
        return;
    }
    j->duration = spec.duration;
    j->nnodes = spec.nnodes > UINT32_MAX ? UINT32_MAX : (uint32_t)spec.nnodes;
    j->ntasks = spec.ntasks > UINT32_MAX ? UINT32_MAX : (uint32_t)spec.ntasks;
    p->desc[r] = (fbf_job_desc){.res = spec.ncores,
                                .walltime = spec.duration > 0 ? spec.duration : -1,
                                .subtime = isnan(j->t_submit) ? now : j->t_submit,
                                .priority = j->priority,
                                .delay = NAN};
}

/* The jobspec of every job that reaches the engine for the first time at
 * this instant, in one pipeline. */
static int read_specs(fbf_flux_session *s, specs *p, double now, fbf_error *err)
{
    size_t n = s->nreqs;
    *p = (specs){0};
    if (n == 0)
        return 0;
    p->keys = calloc(n, sizeof *p->keys);
    p->items = calloc(n, sizeof *p->items);
    p->req = calloc(n, sizeof *p->req);
    p->note = calloc(n, sizeof *p->note);
    p->desc = calloc(n, sizeof *p->desc);
    if (!p->keys || !p->items || !p->req || !p->note || !p->desc)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t r = 0; r < n; r++) {
        const fbf_flux_job *j = &s->jobs.v[s->reqs[r].job];
        if (s->reqs[r].kind != FBF_FLUX_IN_ALLOC || j->cancel || j->h != FBF_JOB_NONE)
            continue;
        fbf_flux_key(p->keys[p->n], sizeof p->keys[0], j->id, "jobspec");
        p->items[p->n].name = p->keys[p->n];
        p->req[p->n++] = (uint32_t)r;
    }
    fbf_error inner;
    int rc = fbf_flux_kvs_get(s->kvs, p->items, p->n, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "sched.alloc: reading jobspecs: %s", inner.text);
    for (size_t i = 0; i < p->n; i++)
        take_spec(s, p, i, now);
    fbf_flux_kvs_release(s->kvs);
    return 0;
}

/* ---- events ---- */

static int add_event(fbf_flux_session *s, fbf_event ev, uint64_t id, fbf_error *err)
{
    if (fbf_flux_grow((void **)&s->ev, &s->ev_cap, s->nev, sizeof *s->ev) < 0 ||
        fbf_flux_grow((void **)&s->ids, &s->ids_cap, s->nev, sizeof *s->ids) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char *text = s->ids[s->nev];
    text[fbf_jbuf_digits(text, id)] = '\0';
    ev.origin = (long)s->nev;
    s->ev[s->nev++] = ev;
    return 0;
}

/* The engine ids point into s->ids, which may move while events are
 * added: they are set once all are in. */
static void point_ids(fbf_flux_session *s)
{
    for (size_t i = 0; i < s->nev; i++) {
        fbf_event *e = &s->ev[i];
        const char *id = s->ids[i];
        switch (e->kind) {
        case FBF_EV_JOB_SUBMITTED: e->u.submitted.id = id; break;
        case FBF_EV_JOB_ENDED: e->u.ended.id = id; break;
        case FBF_EV_JOB_ADOPTED: e->u.adopted.id = id; break;
        case FBF_EV_JOB_WITHDRAWN:
        case FBF_EV_JOB_REQUEUED: e->u.job = id; break;
        default: break;
        }
    }
}

static int build_events(fbf_flux_session *s, const specs *p, double now, fbf_idset *platform,
                        fbf_begins *begins, fbf_error *err)
{
    s->nev = 0;
    int rc = 0;
    if (!s->begun) {
        if (fbf_idset_add_range(platform, 0, cores(s) - 1) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        begins->compute = platform;
        rc = add_event(s, (fbf_event){.kind = FBF_EV_SIMULATION_BEGINS, .time = now,
                                      .u.begins = begins}, 0, err);
        for (size_t i = 0; i < s->nadopt && rc == 0; i++) {
            const fbf_flux_adopt *a = &s->adopt[i];
            fbf_event e = {.kind = FBF_EV_JOB_ADOPTED, .time = now};
            e.u.adopted.alloc = &a->cores;
            e.u.adopted.end = a->end;
            rc = add_event(s, e, s->jobs.v[a->job].id, err);
        }
    }
    for (size_t r = 0; r < s->nreqs && rc == 0; r++) {
        const fbf_flux_job *j = &s->jobs.v[s->reqs[r].job];
        fbf_event e = {.time = now};
        switch (s->reqs[r].kind) {
        case FBF_FLUX_IN_FREE: e.kind = FBF_EV_JOB_ENDED; break;
        case FBF_FLUX_IN_CANCEL:
            if (j->h == FBF_JOB_NONE || j->st == FBF_FJ_NEW)
                continue; /* its alloc came at this instant: the engine never sees it */
            e.kind = FBF_EV_JOB_WITHDRAWN;
            break;
        default:
            if (j->cancel || p->note[r][0])
                continue;
            if (j->h != FBF_JOB_NONE) {
                e.kind = FBF_EV_JOB_REQUEUED;
            } else {
                e.kind = FBF_EV_JOB_SUBMITTED;
                e.u.submitted.described = true;
                e.u.submitted.desc = p->desc[r];
            }
            break;
        }
        rc = add_event(s, e, j->id, err);
    }
    point_ids(s);
    return rc;
}

/* Links every job the engine learnt of at this instant to its record. */
static int link_jobs(fbf_flux_session *s, fbf_error *err)
{
    fbf_engine *e = fbf_session_engine(s->core);
    for (size_t i = 0; i < s->nev; i++) {
        fbf_event_kind k = s->ev[i].kind;
        if (k != FBF_EV_JOB_SUBMITTED && k != FBF_EV_JOB_ADOPTED)
            continue;
        fbf_job_h h = fbf_engine_find(e, s->ids[i]);
        uint64_t id = strtoull(s->ids[i], NULL, 10);
        uint32_t k2 = fbf_flux_table_find(&s->jobs, id);
        if (h == FBF_JOB_NONE || k2 == FBF_FJ_NONE || fbf_flux_table_link(&s->jobs, k2, h) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory linking job %s", s->ids[i]);
        if (s->opt.session.jsc) /* what the jobspec (or R) says */
            fbf_jsc_described(s->opt.session.jsc, s->ids[i], s->jobs.v[k2].nnodes,
                              s->jobs.v[k2].ntasks);
    }
    return 0;
}

/* ---- answers ---- */

static int alloc_answer(fbf_flux_session *s, uint64_t id, int type, const char *note,
                        const char *annotations)
{
    size_t off = s->text.len;
    char d[24];
    fbf_jbuf_lit(&s->text, "{\"id\":");
    fbf_jbuf_raw(&s->text, d, fbf_jbuf_digits(d, id));
    fbf_jbuf_lit(&s->text, ",\"type\":");
    fbf_jbuf_int(&s->text, type);
    if (note) {
        fbf_jbuf_lit(&s->text, ",\"note\":");
        fbf_jbuf_str(&s->text, note);
    }
    if (annotations) {
        fbf_jbuf_lit(&s->text, ",\"annotations\":");
        fbf_jbuf_raw(&s->text, annotations, strlen(annotations));
    }
    fbf_jbuf_lit(&s->text, "}");
    return fbf_flux_out_add(s, FBF_FLUX_RESPONSE, 0, 0, 0, FBF_FLUX_ALLOC, off);
}

static int free_answer(fbf_flux_session *s, uint64_t id)
{
    size_t off = s->text.len;
    fbf_flux_put_id(&s->text, id);
    return fbf_flux_out_add(s, FBF_FLUX_RESPONSE, 0, 0, 0, FBF_FLUX_FREE, off);
}

/* Forgets what was announced of a job leaving the queue. */
static void forget(fbf_flux_job *j)
{
    j->ann = NAN;
    j->reason = REASON_NONE;
}

static int answer_requests(fbf_flux_session *s, const specs *p, fbf_error *err)
{
    int rc = 0;
    for (size_t r = 0; r < s->nreqs && rc == 0; r++) {
        uint32_t k = s->reqs[r].job;
        fbf_flux_job *j = &s->jobs.v[k];
        switch (s->reqs[r].kind) {
        case FBF_FLUX_IN_FREE:
            j->st = FBF_FJ_DONE;
            rc = free_answer(s, j->id);
            break;
        case FBF_FLUX_IN_CANCEL:
            j->st = FBF_FJ_WITHDRAWN;
            j->cancel = 0;
            s->pending--;
            forget(j);
            rc = alloc_answer(s, j->id, FBF_FLUX_CANCELED, NULL, NULL);
            break;
        default:
            if (j->cancel)
                break; /* its CANCEL answers it */
            if (p->note[r][0]) {
                j->st = FBF_FJ_DENIED;
                s->pending--;
                rc = alloc_answer(s, j->id, FBF_FLUX_DENY, p->note[r], NULL);
                break;
            }
            j->st = FBF_FJ_WAITING;
            if (fbf_flux_grow((void **)&s->arrivals, &s->arrivals_cap, s->narrivals,
                              sizeof *s->arrivals) < 0)
                rc = -ENOMEM;
            else
                s->arrivals[s->narrivals++] = k;
            break;
        }
    }
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}

/* Why the engine rejected a job (D2). */
static void deny_note(fbf_flux_session *s, fbf_job_h h, char *note, size_t cap)
{
    fbf_engine *e = fbf_session_engine(s->core);
    uint32_t res = fbf_engine_job_res(e, h);
    if (res < 1 || res > cores(s))
        snprintf(note, cap, "the job asks for more cores than the platform's %u (%u ranks of %u "
                 "cores)", cores(s), s->opt.nranks, s->opt.cores_per_rank);
    else if (fbf_engine_needs_walltime(e) && fbf_engine_job_walltime(e, h) < 0)
        snprintf(note, cap, "the job has no duration (attributes.system.duration): "
                 "backfilling needs one");
    else /* the only other way: an update of its state (io/jsc_server.h) */
        snprintf(note, cap, "canceled through fastbf's control endpoint");
}

static int answer_decisions(fbf_flux_session *s, const fbf_out *outs, size_t n, double *wake,
                            fbf_error *err)
{
    fbf_engine *e = fbf_session_engine(s->core);
    double now = fbf_engine_now(e);
    *wake = NAN;
    /* Every R first, in one pipeline: RFC 27 wants R committed before
     * SUCCESS. */
    fbf_jbuf_reset(&s->rtext);
    size_t nstart = 0;
    for (size_t i = 0; i < n; i++)
        nstart += outs[i].kind == FBF_OUT_EXECUTE;
    fbf_store_item *items = nstart ? calloc(nstart, sizeof *items) : NULL;
    size_t *offs = nstart ? calloc(nstart + 1, sizeof *offs) : NULL;
    char (*keys)[64] = nstart ? calloc(nstart, sizeof *keys) : NULL;
    int rc = 0;
    if (nstart && (!items || !offs || !keys))
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    size_t k = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (outs[i].kind != FBF_OUT_EXECUTE)
            continue;
        const fbf_flux_job *j = &s->jobs.v[fbf_flux_table_of(&s->jobs, outs[i].job)];
        offs[k] = s->rtext.len;
        fbf_flux_R_put(&s->rtext, outs[i].machines, s->opt.cores_per_rank, now,
                       j->duration > 0 ? now + j->duration : 0);
        fbf_flux_key(keys[k], sizeof keys[k], j->id, "R");
        items[k].name = keys[k];
        k++;
    }
    if (rc == 0 && s->rtext.oom)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    if (rc == 0 && nstart) {
        offs[nstart] = s->rtext.len;
        for (k = 0; k < nstart; k++) {
            items[k].value = s->rtext.p + offs[k];
            items[k].len = offs[k + 1] - offs[k];
        }
        fbf_error inner;
        if ((rc = fbf_flux_kvs_put(s->kvs, items, nstart, &inner)) < 0)
            rc = fbf_errorf(err, rc, "sched.alloc: writing R: %s", inner.text);
    }
    free(items);
    free(offs);
    free(keys);
    fbf_jbuf sched = {0};
    for (size_t i = 0; i < n && rc == 0; i++) {
        const fbf_out *o = &outs[i];
        if (o->kind == FBF_OUT_CALL_ME_LATER) {
            *wake = o->at;
            continue;
        }
        if (o->kind != FBF_OUT_REJECT && o->kind != FBF_OUT_EXECUTE)
            continue;
        fbf_flux_job *j = &s->jobs.v[fbf_flux_table_of(&s->jobs, o->job)];
        if (o->kind == FBF_OUT_REJECT) {
            char note[200];
            deny_note(s, o->job, note, sizeof note);
            j->st = FBF_FJ_DENIED;
            s->pending--;
            forget(j);
            rc = alloc_answer(s, j->id, FBF_FLUX_DENY, note, NULL);
            continue;
        }
        fbf_jbuf_reset(&sched);
        fbf_jbuf_lit(&sched, "{\"sched\":{\"resource_summary\":\"");
        fbf_flux_summary_put(&sched, o->machines, s->opt.cores_per_rank);
        fbf_jbuf_lit(&sched, "\"");
        if (!isnan(j->ann))
            fbf_jbuf_lit(&sched, ",\"t_estimate\":null");
        if (j->reason)
            fbf_jbuf_lit(&sched, ",\"reason_pending\":null");
        fbf_jbuf_lit(&sched, "}}");
        j->st = FBF_FJ_HOLDING;
        s->pending--;
        forget(j);
        rc = sched.oom ? -ENOMEM : alloc_answer(s, j->id, FBF_FLUX_SUCCESS, NULL, sched.p);
        if (rc < 0)
            rc = fbf_errorf(err, rc, "out of memory");
    }
    fbf_jbuf_fini(&sched);
    return rc;
}

/* ---- annotations ---- */

/* One waiting job's annotations, sent when they changed; once per
 * instant. A finite depth keeps the jobs announced with an estimate in
 * `reserved`, to take the estimate back when the next pass sets none. */
static int annotate(fbf_flux_session *s, uint32_t k, fbf_jbuf *tmp)
{
    fbf_flux_job *j = &s->jobs.v[k];
    if (j->st != FBF_FJ_WAITING || j->seen == s->instants)
        return 0;
    j->seen = s->instants;
    fbf_engine *e = fbf_session_engine(s->core);
    bool persist = fbf_engine_reservations_persist(e);
    double rsv = fbf_engine_job_reservation(e, j->h);
    bool held = !isnan(rsv) && (persist || j->touched == s->instants);
    double t = held ? rsv : NAN;
    uint8_t reason = held ? REASON_RESERVED : REASON_QUEUED;
    bool t_changed = !(isnan(t) && isnan(j->ann)) && t != j->ann;
    bool r_changed = reason != j->reason;
    if (held && !persist) {
        if (fbf_flux_grow((void **)&s->reserved, &s->reserved_cap, s->nreserved,
                          sizeof *s->reserved) < 0)
            return -ENOMEM;
        s->reserved[s->nreserved++] = k;
    }
    if (!t_changed && !r_changed)
        return 0;
    fbf_jbuf_reset(tmp);
    fbf_jbuf_lit(tmp, "{\"sched\":{");
    if (t_changed) {
        fbf_jbuf_lit(tmp, "\"t_estimate\":");
        if (held)
            fbf_jbuf_num(tmp, t);
        else
            fbf_jbuf_lit(tmp, "null");
    }
    if (r_changed) {
        if (t_changed)
            fbf_jbuf_lit(tmp, ",");
        fbf_jbuf_lit(tmp, "\"reason_pending\":");
        fbf_jbuf_str(tmp, reason_text[reason]);
    }
    fbf_jbuf_lit(tmp, "}}");
    j->ann = t;
    j->reason = reason;
    return tmp->oom ? -ENOMEM : alloc_answer(s, j->id, FBF_FLUX_ANNOTATE, NULL, tmp->p);
}

/* The jobs whose annotations may have changed: those announced with an
 * estimate before (finite depths), those whose reservation the pass set,
 * and the arrivals. Everything else kept its reservation or has none. */
static int annotate_all(fbf_flux_session *s, fbf_error *err)
{
    fbf_engine *e = fbf_session_engine(s->core);
    const fbf_job_h *set;
    size_t nset;
    if (fbf_engine_reservations_set(e, &set, &nset) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory tracking reservations");
    for (size_t i = 0; i < nset; i++) {
        uint32_t k = fbf_flux_table_of(&s->jobs, set[i]);
        if (k != FBF_FJ_NONE)
            s->jobs.v[k].touched = s->instants;
    }
    size_t nold = s->nreserved;
    uint32_t *old = nold ? malloc(nold * sizeof *old) : NULL;
    if (nold && !old)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    if (nold)
        memcpy(old, s->reserved, nold * sizeof *old);
    s->nreserved = 0;
    fbf_jbuf tmp = {0};
    int rc = 0;
    for (size_t i = 0; i < nold && rc == 0; i++)
        rc = annotate(s, old[i], &tmp);
    for (size_t i = 0; i < nset && rc == 0; i++) {
        uint32_t k = fbf_flux_table_of(&s->jobs, set[i]);
        if (k != FBF_FJ_NONE)
            rc = annotate(s, k, &tmp);
    }
    for (size_t i = 0; i < s->narrivals && rc == 0; i++)
        rc = annotate(s, s->arrivals[i], &tmp);
    free(old);
    fbf_jbuf_fini(&tmp);
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}

int fbf_flux_instant(fbf_flux_session *s, double now, uint32_t matchtag, fbf_error *err)
{
    s->instants++;
    s->narrivals = 0;
    fbf_error inner;
    int rc = fbf_session_open(s->core, now, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "sim.instant: %s", inner.text);
    specs p;
    fbf_idset platform;
    fbf_idset_init(&platform);
    fbf_begins begins = {0};
    rc = read_specs(s, &p, now, err);
    if (rc == 0)
        rc = build_events(s, &p, now, &platform, &begins, err);
    if (rc == 0 && (rc = fbf_session_apply(s->core, s->ev, s->nev, &inner)) < 0) {
        fbf_session_fault f = fbf_session_last_fault(s->core);
        rc = fbf_errorf(err, rc, "sim.instant at %.17g: job %s: %s", now,
                        f.index >= 0 && (size_t)f.index < s->nev ? s->ids[f.index] : "?",
                        inner.text);
    }
    fbf_idset_fini(&platform);
    if (rc == 0) {
        s->begun = true;
        for (size_t i = 0; i < s->nadopt; i++)
            fbf_idset_fini(&s->adopt[i].cores);
        s->nadopt = 0;
        rc = link_jobs(s, err);
    }
    if (rc == 0)
        rc = answer_requests(s, &p, err);
    specs_fini(&p);
    s->nreqs = 0;
    if (rc < 0)
        return rc;
    const fbf_out *outs;
    size_t n;
    if ((rc = fbf_session_decide(s->core, &outs, &n, &inner)) < 0)
        return fbf_errorf(err, rc, "sim.instant at %.17g: %s", now, inner.text);
    double wake;
    if ((rc = answer_decisions(s, outs, n, &wake, err)) < 0)
        return rc;
    if (s->opt.annotate && (rc = annotate_all(s, err)) < 0)
        return rc;
    size_t off = s->text.len;
    fbf_jbuf_lit(&s->text, "{\"now\":");
    fbf_jbuf_num(&s->text, now);
    if (!isnan(wake)) {
        fbf_jbuf_lit(&s->text, ",\"wake\":");
        fbf_jbuf_num(&s->text, wake);
    }
    fbf_jbuf_lit(&s->text, "}");
    rc = fbf_flux_out_add(s, FBF_FLUX_RESPONSE, 0, 0, matchtag, FBF_FLUX_INSTANT, off);
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}
