/*
 * jm: the job manager (see fluxsim.h): jobs, the alloc queue, the clock,
 * each instant's requests and the answers they get, and the recovery
 * after the scheduler's restart.
 *
 * Invariants: a job in SCHED state has one live entry in `queue` (its
 * version's); `pending` counts the jobs whose alloc is in flight (ALLOC,
 * CANCELING); `busy` holds the cores of RUN and CLEANUP jobs; every
 * timed event (end, cancel, priority change, wake) sits in `heap`,
 * stale ends being skipped when they surface.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"

#define PUSH(arr, n, cap, x)                                                                    \
    (fs_grow((void **)&(arr), &(cap), (n), sizeof *(arr)) < 0 ? -ENOMEM : ((arr)[(n)++] = (x), 0))

/* ---- the handshake ---- */

static void log_line(fluxsim *fs, const char *fmt, const char *a, double t)
{
    if (fs->o.verbose) {
        fprintf(stderr, "fastbf-fluxsim: t=%.6f: ", t);
        fprintf(stderr, fmt, a);
        fputc('\n', stderr);
    }
}

static int send_free(fluxsim *fs, sjob *j, fbf_error *err)
{
    fbf_jbuf_reset(&fs->buf);
    fbf_flux_put_id(&fs->buf, j->id);
    j->free_sent = true;
    fs->frees_pending++;
    return fs_wire_send(fs, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_FREE,
                        fs->buf.p, fs->buf.len, err);
}

/* hello: the jobs that hold cores; ready: the mode. After ready, the
 * frees that a previous scheduler left unanswered go again, as
 * flux-core's job manager restarts them. */
static int handshake(fluxsim *fs, fbf_error *err)
{
    int rc = fs_wire_send(fs, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                          FBF_FLUX_ATTACH, NULL, 0, err);
    fbf_flux_msg m;
    if (rc == 0)
        rc = fs_wire_recv(fs, &m, err);
    if (rc == 0)
        rc = fs_check_request(&m, FBF_FLUX_HELLO, false, err);
    if (rc < 0)
        return rc;
    fbf_jbuf *b = &fs->buf;
    fbf_jbuf_reset(b);
    fbf_jbuf_lit(b, "{\"alloc\":[");
    size_t n = 0;
    char d[24];
    for (size_t k = 0; k < fs->njobs; k++) {
        const sjob *j = &fs->jobs[fs->order[k]];
        if (j->st != SJ_RUN && j->st != SJ_CLEANUP)
            continue;
        if (n++)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_lit(b, "{\"id\":");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, j->id));
        fbf_jbuf_lit(b, ",\"priority\":");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, j->priority));
        fbf_jbuf_lit(b, ",\"userid\":");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, 5588));
        fbf_jbuf_lit(b, "}");
    }
    fbf_jbuf_lit(b, "]}");
    if (b->oom)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    uint32_t tag = m.matchtag;
    if ((rc = fs_wire_send(fs, FBF_FLUX_RESPONSE, 0, 0, tag, FBF_FLUX_HELLO, b->p, b->len,
                           err)) < 0 ||
        (rc = fs_wire_recv(fs, &m, err)) < 0 || (rc = fs_check_ready(fs, &m, &fs->single, err)) < 0 ||
        (rc = fs_wire_send(fs, FBF_FLUX_RESPONSE, 0, 0, m.matchtag, FBF_FLUX_READY, NULL, 0,
                           err)) < 0)
        return rc;
    log_line(fs, "scheduler ready, %s mode", fs->single ? "single" : "unlimited", fs->now);
    for (size_t k = 0; k < fs->njobs && rc == 0; k++) {
        sjob *j = &fs->jobs[fs->order[k]];
        if (j->st == SJ_CLEANUP && (rc = PUSH(fs->frees, fs->nfrees, fs->fcap, fs->order[k])) < 0)
            return fbf_errorf(err, rc, "out of memory");
    }
    return 0;
}

/* The scheduler is gone: as flux-core's job manager tears the interface
 * down, pending allocs go back to the queue (a canceled job's ends), and
 * frees in flight are sent again after the next ready. */
static int teardown(fluxsim *fs, fbf_error *err)
{
    fs->pending = fs->frees_pending = 0;
    fs->nfrees = fs->ncancels = fs->nallocs = fs->nprio = fs->nsucc = 0;
    for (size_t i = 0; i < fs->njobs; i++) {
        sjob *j = &fs->jobs[i];
        if (j->st == SJ_ALLOC || j->st == SJ_CANCELING) {
            cJSON_Delete(j->ann); /* annotations are volatile until SUCCESS */
            j->ann = NULL;
            j->last_est = NAN;
        }
        if (j->st == SJ_ALLOC) {
            j->st = SJ_SCHED;
            j->requeue = false;
            if (fs_q_push(fs, (uint32_t)i) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
        } else if (j->st == SJ_CANCELING) {
            j->st = SJ_INACTIVE;
            j->end_kind = END_CANCELED;
            fs->canceled++;
        } else if (j->st == SJ_CLEANUP) {
            j->free_sent = false;
        }
    }
    return 0;
}

/* ---- one instant ---- */

static int job_ends(fluxsim *fs, uint32_t i, uint8_t kind)
{
    sjob *j = &fs->jobs[i];
    j->st = SJ_CLEANUP;
    j->end_kind = kind;
    j->end = fs->now;
    j->free_sent = false;
    return PUSH(fs->frees, fs->nfrees, fs->fcap, i);
}

/* The events at fs->now: ends, cancels, priority changes, wakes, then
 * submissions (their jobspecs written to Redis first). */
static int collect(fluxsim *fs, fbf_error *err)
{
    int rc = 0;
    while (rc == 0 && fs->nheap && fs->heap[0].t == fs->now) {
        tev e = fs_heap_pop(fs);
        sjob *j = &fs->jobs[e.job];
        switch (e.kind) {
        case EV_END:
            if (j->st == SJ_RUN && j->end == fs->now)
                rc = job_ends(fs, e.job, e.arg ? END_WALLTIME : END_DONE);
            break;
        case EV_CANCEL:
            if (j->st == SJ_SCHED) {
                j->st = SJ_INACTIVE;
                j->end_kind = END_CANCELED;
                fs->canceled++;
            } else if (j->st == SJ_ALLOC) {
                /* A cancel already in flight (single mode's) will do. */
                bool sent = j->requeue;
                j->st = SJ_CANCELING;
                j->cancel_asked = true;
                if (!sent)
                    rc = PUSH(fs->cancels, fs->ncancels, fs->ccap, e.job);
            } else if (j->st == SJ_RUN) {
                rc = job_ends(fs, e.job, END_CANCELED);
            }
            break;
        case EV_PRIO:
            if (j->st == SJ_FUTURE) { /* not submitted yet: it comes with that priority */
                j->priority = e.arg;
            } else if (j->st == SJ_SCHED) {
                j->priority = e.arg;
                rc = fs_q_push(fs, e.job);
            } else if (j->st == SJ_ALLOC) {
                j->priority = e.arg;
                struct prio_pair p = {j->id, e.arg};
                rc = PUSH(fs->prio, fs->nprio, fs->pcap, p);
            }
            break;
        default: break; /* a wake: the instant itself is what was asked */
        }
    }
    fs->nsubs = 0;
    while (rc == 0 && fs->next_sub < fs->njobs &&
           fs->jobs[fs->order[fs->next_sub]].t_submit == fs->now) {
        uint32_t i = fs->order[fs->next_sub++];
        fs->jobs[i].st = SJ_SCHED;
        fs->submitted++;
        if ((rc = fs_q_push(fs, i)) == 0)
            rc = PUSH(fs->subs, fs->nsubs, fs->subcap, i);
    }
    if (rc < 0)
        return fbf_errorf(err, rc, "out of memory");
    if (fs->nsubs == 0)
        return 0;
    /* The jobspecs, and no R left from another run under the same ids. */
    char (*keys)[64] = calloc(2 * fs->nsubs, sizeof *keys);
    fbf_store_item *items = calloc(2 * fs->nsubs, sizeof *items);
    size_t *offs = calloc(fs->nsubs + 1, sizeof *offs);
    fbf_jbuf *b = &fs->buf;
    fbf_jbuf_reset(b);
    if (!keys || !items || !offs)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t k = 0; k < fs->nsubs && rc == 0; k++) {
        const sjob *j = &fs->jobs[fs->subs[k]];
        offs[k] = b->len;
        fbf_flux_jobspec_put(b, j->ncores, j->duration, "fastbf-fluxsim");
        fbf_flux_key(keys[k], sizeof keys[k], j->id, "jobspec");
        fbf_flux_key(keys[fs->nsubs + k], sizeof keys[k], j->id, "R");
        items[k].name = keys[k];
        items[fs->nsubs + k].name = keys[fs->nsubs + k];
    }
    if (rc == 0 && b->oom)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    if (rc == 0) {
        offs[fs->nsubs] = b->len;
        for (size_t k = 0; k < fs->nsubs; k++) {
            items[k].value = b->p + offs[k];
            items[k].len = offs[k + 1] - offs[k];
        }
        fbf_error inner;
        if ((rc = fbf_store_del(fs->store, FBF_STORE_RAW, items + fs->nsubs, fs->nsubs,
                                &inner)) < 0 ||
            (rc = fbf_store_set(fs->store, FBF_STORE_RAW, items, fs->nsubs, &inner)) < 0)
            rc = fbf_errorf(err, rc, "writing jobspecs: %s", inner.text);
    }
    free(keys);
    free(items);
    free(offs);
    return rc;
}

/* Single mode: a queued job that outranks the pending one takes its
 * place, as flux-core's job manager does in its limited mode. */
static int recalc_pending(fluxsim *fs)
{
    if (!fs->single || fs->pending != 1)
        return 0;
    uint32_t head = fs_q_head(fs), i = fs->last_alloc;
    sjob *j = &fs->jobs[i];
    if (head == UINT32_MAX || j->st != SJ_ALLOC || j->requeue ||
        !fs_q_less(fs, (qent){head, 0}, (qent){i, 0}))
        return 0;
    j->requeue = true;
    return PUSH(fs->cancels, fs->ncancels, fs->ccap, i);
}

static int send_requests(fluxsim *fs, fbf_error *err)
{
    int rc = 0;
    for (size_t k = 0; k < fs->nfrees && rc == 0; k++)
        rc = send_free(fs, &fs->jobs[fs->frees[k]], err);
    fs->nfrees = 0;
    fbf_jbuf *b = &fs->buf;
    for (size_t k = 0; k < fs->ncancels && rc == 0; k++) {
        fbf_jbuf_reset(b);
        fbf_flux_put_id(b, fs->jobs[fs->cancels[k]].id);
        rc = fs_wire_send(fs, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE, FBF_FLUX_NODEID_ANY, 0,
                          FBF_FLUX_CANCEL, b->p, b->len, err);
    }
    fs->ncancels = 0;
    char d[24];
    if (rc == 0 && fs->nprio) {
        fbf_jbuf_reset(b);
        fbf_jbuf_lit(b, "{\"jobs\":[");
        for (size_t k = 0; k < fs->nprio; k++) {
            if (k)
                fbf_jbuf_lit(b, ",");
            fbf_jbuf_lit(b, "[");
            fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, fs->prio[k].id));
            fbf_jbuf_lit(b, ",");
            fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, fs->prio[k].priority));
            fbf_jbuf_lit(b, "]");
        }
        fbf_jbuf_lit(b, "]}");
        rc = b->oom ? fbf_errorf(err, -ENOMEM, "out of memory")
                    : fs_wire_send(fs, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE,
                                   FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_PRIORITIZE, b->p, b->len, err);
    }
    fs->nprio = 0;
    for (uint32_t h; rc == 0 && (!fs->single || fs->pending == 0) &&
                     (h = fs_q_head(fs)) != UINT32_MAX;) {
        fs_q_pop(fs);
        sjob *j = &fs->jobs[h];
        j->st = SJ_ALLOC;
        fs->pending++;
        fs->last_alloc = h;
        fbf_jbuf_reset(b);
        fbf_jbuf_lit(b, "{\"id\":");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, j->id));
        fbf_jbuf_lit(b, ",\"priority\":");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, j->priority));
        fbf_jbuf_lit(b, ",\"userid\":5588,\"t_submit\":");
        fbf_jbuf_num(b, j->t_submit);
        fbf_jbuf_lit(b, "}");
        rc = fs_wire_send(fs, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ALLOC, b->p,
                          b->len, err);
    }
    if (rc == 0) {
        fbf_jbuf_reset(b);
        fbf_jbuf_lit(b, "{\"now\":");
        fbf_jbuf_num(b, fs->now);
        fbf_jbuf_lit(b, "}");
        rc = fs_wire_send(fs, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, ++fs->next_tag,
                          FBF_FLUX_INSTANT, b->p, b->len, err);
    }
    return rc;
}

static int on_alloc(fluxsim *fs, const fbf_flux_msg *m, fbf_error *err)
{
    cJSON *tree = NULL;
    fs_alloc_resp r;
    int rc = fs_check_alloc(fs, m, &tree, &r, err);
    sjob *j = rc == 0 ? fs_job_by_id(fs, r.id) : NULL;
    static const char *const tn[] = {"SUCCESS", "ANNOTATE", "DENY", "CANCEL"};
    if (rc == 0 && (!j || (j->st != SJ_ALLOC && j->st != SJ_CANCELING)))
        rc = fbf_errorf(err, -EPROTO, "sched.alloc: a %s for job %llu, whose alloc is not "
                        "pending (%s)", tn[r.type], (unsigned long long)r.id,
                        !j ? "no such job" : j->st == SJ_RUN || j->st == SJ_CLEANUP
                                                 ? "it holds cores already: flux-core answers "
                                                   "EEXIST to a second SUCCESS"
                                                 : "it was answered before");
    if (rc == 0 && r.type == FBF_FLUX_SUCCESS && j->st == SJ_CANCELING)
        rc = fbf_errorf(err, -EPROTO, "sched.alloc: SUCCESS for job %llu after its sched.cancel "
                        "of this instant: RFC 27 wants a CANCEL for a pending alloc",
                        (unsigned long long)r.id);
    bool changed = false;
    if (rc == 0 && r.type == FBF_FLUX_SUCCESS && j->est_announced && !isnan(j->last_est) &&
        fs->now > j->last_est)
        fs->est_late++;
    if (rc == 0 && r.annotations)
        rc = fs_annotate(fs, j, r.annotations, &changed, err);
    if (rc == 0) {
        uint32_t i = (uint32_t)(j - fs->jobs);
        switch (r.type) {
        case FBF_FLUX_SUCCESS:
            j->st = SJ_RUN;
            j->start = fs->now;
            fs->pending--;
            rc = PUSH(fs->succ, fs->nsucc, fs->scap, i);
            break;
        case FBF_FLUX_ANNOTATE:
            fs->annotates++;
            fs->redundant += !changed;
            break;
        case FBF_FLUX_DENY:
            j->st = SJ_DENIED;
            j->end_kind = END_DENIED;
            fs->pending--;
            fs->denied++;
            j->note = r.note ? strdup(r.note) : NULL;
            break;
        default: /* CANCEL */
            fs->pending--;
            if (j->st == SJ_CANCELING) { /* the job was canceled */
                j->st = SJ_INACTIVE;
                j->end_kind = END_CANCELED;
                fs->canceled++;
            } else { /* to make room, or by the scheduler itself: it goes again */
                fs->requeued += !j->requeue;
                j->st = SJ_SCHED;
                rc = fs_q_push(fs, i);
            }
            j->requeue = false;
            cJSON_Delete(j->ann); /* volatile annotations are discarded */
            j->ann = NULL;
            j->last_est = NAN;
            break;
        }
        if (rc == -ENOMEM)
            rc = fbf_errorf(err, rc, "out of memory");
    }
    cJSON_Delete(tree);
    return rc;
}

static int on_free(fluxsim *fs, const fbf_flux_msg *m, fbf_error *err)
{
    cJSON *tree = NULL;
    uint64_t id;
    int rc = fs_check_free(fs, m, &tree, &id, err);
    cJSON_Delete(tree);
    sjob *j = rc == 0 ? fs_job_by_id(fs, id) : NULL;
    if (rc == 0 && (!j || j->st != SJ_CLEANUP || !j->free_sent))
        rc = fbf_errorf(err, -EPROTO, "sched.free: a response for job %llu, whose free is not "
                        "pending", (unsigned long long)id);
    if (rc < 0)
        return rc;
    j->st = SJ_INACTIVE;
    j->free_sent = false;
    fs->frees_pending--;
    fs->done++;
    fs->walltime += j->end_kind == END_WALLTIME;
    return fbf_idset_subtract(&fs->busy, &j->cores) < 0
               ? fbf_errorf(err, -ENOMEM, "out of memory")
               : 0;
}

/* The R of every job started at this instant, checked in start order
 * against the cores still held, then the job's end. */
static int take_starts(fluxsim *fs, fbf_error *err)
{
    size_t n = fs->nsucc;
    if (!n)
        return 0;
    char (*keys)[64] = calloc(n, sizeof *keys);
    fbf_store_item *items = calloc(n, sizeof *items);
    int rc = 0;
    if (!keys || !items)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t k = 0; k < n && rc == 0; k++) {
        fbf_flux_key(keys[k], sizeof keys[k], fs->jobs[fs->succ[k]].id, "R");
        items[k].name = keys[k];
    }
    fbf_error inner;
    if (rc == 0 && (rc = fbf_store_get(fs->store, FBF_STORE_RAW, items, n, &inner)) < 0)
        rc = fbf_errorf(err, rc, "reading R: %s", inner.text);
    for (size_t k = 0; k < n && rc == 0; k++) {
        sjob *j = &fs->jobs[fs->succ[k]];
        if ((rc = fs_check_R(fs, j, items[k].value, items[k].len, err)) < 0)
            break;
        if (fbf_idset_union(&fs->busy, &j->cores) < 0) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            break;
        }
        fs->started++;
        double limit = j->duration > 0 ? j->duration : INFINITY;
        bool killed = j->runtime > limit;
        j->end = fs->now + (killed ? limit : j->runtime);
        rc = fs_heap_push(fs, (tev){j->end, EV_END, fs->start_seq++, fs->succ[k], killed});
        if (rc < 0)
            rc = fbf_errorf(err, rc, "out of memory");
    }
    fbf_store_release(fs->store);
    free(keys);
    free(items);
    fs->nsucc = 0;
    return rc;
}

/* Every answer up to sim.instant's. */
static int read_answers(fluxsim *fs, fbf_error *err)
{
    for (;;) {
        fbf_flux_msg m;
        int rc = fs_wire_recv(fs, &m, err);
        if (rc < 0)
            return rc;
        if (m.type == FBF_FLUX_REQUEST && fbf_flux_msg_is(&m, FBF_FLUX_DISCONNECT))
            return fbf_errorf(err, -EPROTO, "the scheduler disconnected (%s): RFC 27: the job "
                              "manager suspends scheduling", FBF_FLUX_DISCONNECT);
        if (m.type == FBF_FLUX_RESPONSE && fbf_flux_msg_is(&m, FBF_FLUX_ALLOC))
            rc = on_alloc(fs, &m, err);
        else if (m.type == FBF_FLUX_RESPONSE && fbf_flux_msg_is(&m, FBF_FLUX_FREE))
            rc = on_free(fs, &m, err);
        else if (m.type == FBF_FLUX_RESPONSE && fbf_flux_msg_is(&m, FBF_FLUX_INSTANT) &&
                 m.matchtag == fs->next_tag) {
            double wake;
            if ((rc = fs_check_instant(fs, &m, &wake, err)) < 0)
                return rc;
            if (fs->frees_pending)
                return fbf_errorf(err, -EPROTO, "sim.instant answered while %zu frees are not: "
                                  "every free of an instant is answered before it",
                                  fs->frees_pending);
            if (!isnan(wake) && (rc = fs_heap_push(fs, (tev){wake, EV_WAKE, fs->seq++, 0, 0})) < 0)
                return fbf_errorf(err, rc, "out of memory");
            return take_starts(fs, err);
        } else {
            char tb[16];
            rc = fbf_errorf(err, -EPROTO, "an unexpected %s \"%.*s\" (matchtag %u): the "
                            "scheduler sends alloc, free and sim.instant responses, and "
                            "disconnect", fbf_flux_type_name(m.type, tb),
                            m.topic ? (int)m.topic_len : 0, m.topic ? m.topic : "", m.matchtag);
        }
        if (rc < 0)
            return rc;
    }
}

static int instant(fluxsim *fs, fbf_error *err)
{
    fs->instants++;
    int rc = recalc_pending(fs);
    if (rc < 0)
        return fbf_errorf(err, rc, "out of memory");
    if ((rc = send_requests(fs, err)) < 0)
        return rc;
    if ((long)fs->instants == fs->o.kill_at) {
        /* The scheduler dies with this instant's requests unanswered. */
        log_line(fs, "killing the scheduler (%s)", "--kill-at", fs->now);
        fs->restarts++;
        if ((rc = fs_wire_restart(fs, err)) < 0 || (rc = teardown(fs, err)) < 0 ||
            (rc = handshake(fs, err)) < 0 || (rc = send_requests(fs, err)) < 0)
            return rc;
    }
    return read_answers(fs, err);
}

static double next_time(fluxsim *fs)
{
    double t = INFINITY;
    while (fs->nheap) { /* stale ends never make an instant */
        const tev *e = &fs->heap[0];
        const sjob *j = &fs->jobs[e->job];
        if (e->kind == EV_END && !(j->st == SJ_RUN && j->end == e->t)) {
            fs_heap_pop(fs);
            continue;
        }
        t = e->t;
        break;
    }
    if (fs->next_sub < fs->njobs)
        t = fmin(t, fs->jobs[fs->order[fs->next_sub]].t_submit);
    return t;
}

int fs_run(fluxsim *fs, fbf_error *err)
{
    int rc = fs_wire_start(fs, err);
    if (rc < 0 || (rc = handshake(fs, err)) < 0)
        return rc;
    for (double t; isfinite(t = next_time(fs));) {
        if (t < fs->now)
            t = fs->now; /* an event drawn in the past (a cancel at its submission) */
        fs->now = t;
        if ((rc = collect(fs, err)) < 0 || (rc = instant(fs, err)) < 0)
            return rc;
        /* Single mode: a retired alloc lets the next one go at once. */
        while (fs->single && fs->pending == 0 && fs_q_head(fs) != UINT32_MAX)
            if ((rc = instant(fs, err)) < 0)
                return rc;
    }
    size_t stuck = 0;
    for (size_t i = 0; i < fs->njobs; i++)
        stuck += fs->jobs[i].st == SJ_SCHED || fs->jobs[i].st == SJ_ALLOC ||
                 fs->jobs[i].st == SJ_CANCELING;
    if (stuck)
        return fbf_errorf(err, -EDEADLK, "deadlock at t=%.6f: %zu jobs wait with nothing left "
                          "to happen (no end, no submission, no wake asked)", fs->now, stuck);
    fbf_flux_msg m;
    if ((rc = fs_wire_send(fs, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, ++fs->next_tag,
                           FBF_FLUX_END, NULL, 0, err)) < 0 ||
        (rc = fs_wire_recv(fs, &m, err)) < 0 || (rc = fs_check_response(&m, FBF_FLUX_END, err)) < 0)
        return rc;
    return 0;
}
