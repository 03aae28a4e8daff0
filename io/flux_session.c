/*
 * flux_session: the RFC 27 service's receipt half (see flux_session.h):
 * every message is decoded and checked against the job's protocol state
 * as it arrives; the handshake (hello, then ready) runs here; requests
 * are kept for the instant that sim.instant closes (flux_instant.c).
 *
 * Invariants: reqs holds this instant's alloc, free and cancel requests
 * that passed the checks, in arrival order; a record is NEW or FREEING
 * only while a request of this instant names it; the outbox's messages
 * are sent in order after each receive.
 */
#include "io/flux_session.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_job.h"
#include "io/flux_session_int.h"

/* How long a Redis command may take before the store is called dead. */
#define STORE_TIMEOUT_S 30.0

int fbf_flux_grow(void **v, size_t *cap, size_t n, size_t sz)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 64;
    void *p = realloc(*v, c * sz);
    if (!p)
        return -ENOMEM;
    *v = p;
    *cap = c;
    return 0;
}

fbf_flux_session *fbf_flux_session_create(const fbf_flux_options *opt, fbf_error *err)
{
    if (opt->nranks < 1 || opt->cores_per_rank < 1 ||
        (uint64_t)opt->nranks * opt->cores_per_rank > (uint64_t)FBF_IDSET_MAX_ID + 1) {
        fbf_errorf(err, -EINVAL, "a platform of %u ranks of %u cores: both must be >= 1, %s",
                   opt->nranks, opt->cores_per_rank, "and at most 2^31 cores in all");
        return NULL;
    }
    fbf_flux_session *s = calloc(1, sizeof *s);
    if (!s) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->opt = *opt;
    s->warn = opt->warn ? opt->warn : stderr;
    s->last_now = -INFINITY;
    fbf_flux_table_init(&s->jobs);
    s->codec = fbf_flux_codec_create();
    if (!s->codec) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        fbf_flux_session_destroy(s);
        return NULL;
    }
    s->core = fbf_session_create(&opt->session, err);
    if (!s->core) {
        fbf_flux_session_destroy(s);
        return NULL;
    }
    if (opt->annotate)
        fbf_engine_track_reservations(fbf_session_engine(s->core), true);
    s->kvs = opt->kvs;
    if (!s->kvs) {
        s->own_kvs = true;
        s->kvs = fbf_flux_kvs_redis(opt->redis_host ? opt->redis_host : "127.0.0.1",
                                    opt->redis_port ? opt->redis_port : 6379, STORE_TIMEOUT_S,
                                    err);
    }
    if (!s->kvs) {
        fbf_flux_session_destroy(s);
        return NULL;
    }
    return s;
}

void fbf_flux_session_destroy(fbf_flux_session *s)
{
    if (!s)
        return;
    fbf_session_destroy(s->core);
    fbf_flux_codec_destroy(s->codec);
    if (s->own_kvs)
        fbf_flux_kvs_destroy(s->kvs);
    fbf_flux_table_fini(&s->jobs);
    free(s->reqs);
    for (size_t i = 0; i < s->nadopt; i++)
        fbf_idset_fini(&s->adopt[i].cores);
    free(s->adopt);
    free(s->outs);
    free(s->outbox);
    fbf_jbuf_fini(&s->text);
    free(s->ev);
    free(s->ids);
    free(s->arrivals);
    free(s->reserved);
    fbf_jbuf_fini(&s->rtext);
    free(s);
}

fbf_engine *fbf_flux_session_engine(fbf_flux_session *s) { return fbf_session_engine(s->core); }
fbf_session *fbf_flux_session_core(fbf_flux_session *s) { return s->core; }
bool fbf_flux_session_ready(const fbf_flux_session *s) { return s->phase == PHASE_READY; }
bool fbf_flux_session_attached(const fbf_flux_session *s) { return s->phase != PHASE_DETACHED; }
const char *fbf_flux_session_last_refusal(const fbf_flux_session *s) { return s->refusal; }
unsigned long fbf_flux_session_refusals(const fbf_flux_session *s) { return s->refusals; }

/* ---- the outbox ---- */

int fbf_flux_out_add(fbf_flux_session *s, uint8_t type, uint8_t flags, uint32_t aux1,
                     uint32_t matchtag, const char *topic, size_t pay_off)
{
    if (fbf_flux_grow((void **)&s->outs, &s->outs_cap, s->nouts, sizeof *s->outs) < 0)
        return -ENOMEM;
    fbf_flux_outrec *o = &s->outs[s->nouts];
    *o = (fbf_flux_outrec){0};
    o->has_payload = pay_off != SIZE_MAX;
    if (o->has_payload) {
        o->pay_off = pay_off;
        o->pay_len = s->text.len - pay_off;
        fbf_jbuf_raw(&s->text, "", 1); /* Flux's strings carry their NUL */
    }
    o->topic_off = s->text.len;
    o->topic_len = strlen(topic);
    fbf_jbuf_raw(&s->text, topic, o->topic_len);
    if (s->text.oom)
        return -ENOMEM;
    o->msg = (fbf_flux_msg){.type = type,
                            .flags = flags,
                            .userid = FBF_FLUX_USERID_UNKNOWN,
                            .rolemask = FBF_FLUX_ROLE_OWNER,
                            .aux1 = aux1,
                            .matchtag = matchtag};
    s->nouts++;
    return 0;
}

const fbf_flux_out *fbf_flux_session_outbox(fbf_flux_session *s, size_t *n)
{
    *n = 0;
    if (s->nouts > s->outbox_cap) {
        fbf_flux_out *v = realloc(s->outbox, s->nouts * sizeof *v);
        if (!v)
            return NULL;
        s->outbox = v;
        s->outbox_cap = s->nouts;
    }
    for (size_t i = 0; i < s->nouts; i++) {
        fbf_flux_outrec *o = &s->outs[i];
        fbf_flux_msg m = o->msg;
        m.topic = s->text.p + o->topic_off;
        m.topic_len = o->topic_len;
        if (o->has_payload) {
            m.payload = s->text.p + o->pay_off;
            m.payload_len = o->pay_len + 1; /* with its NUL */
        }
        m.flags = fbf_flux_msg_flags(&m);
        s->outbox[i].msg = m;
    }
    *n = s->nouts;
    return s->outbox;
}

fbf_flux_msg fbf_flux_disconnect_msg(void)
{
    return (fbf_flux_msg){.type = FBF_FLUX_REQUEST,
                          .flags = FBF_FLUX_F_TOPIC | FBF_FLUX_F_NORESPONSE,
                          .userid = FBF_FLUX_USERID_UNKNOWN,
                          .rolemask = FBF_FLUX_ROLE_OWNER,
                          .aux1 = FBF_FLUX_NODEID_ANY,
                          .topic = FBF_FLUX_DISCONNECT,
                          .topic_len = sizeof FBF_FLUX_DISCONNECT - 1};
}

/* A request of fastbf's to the job manager. */
static int ask(fbf_flux_session *s, const char *topic, uint32_t tag, const char *payload)
{
    size_t off = SIZE_MAX;
    if (payload) {
        off = s->text.len;
        fbf_jbuf_raw(&s->text, payload, strlen(payload));
    }
    return fbf_flux_out_add(s, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, tag, topic, off);
}

/* A refused message: one line on warn, and an error response when the
 * message is a request that wants one. Nothing of it is applied. */
static int refuse(fbf_flux_session *s, const fbf_flux_msg *m, int code, const char *why)
{
    snprintf(s->refusal, sizeof s->refusal, "%s", why);
    s->refusals++;
    fprintf(s->warn, "fastbf: refused a message from the job manager: %s\n", why);
    if (!m || m->type != FBF_FLUX_REQUEST || (m->flags & FBF_FLUX_F_NORESPONSE) || !m->topic)
        return 0;
    char topic[FBF_FLUX_TOPIC_MAX + 1];
    memcpy(topic, m->topic, m->topic_len);
    topic[m->topic_len] = '\0';
    size_t off = s->text.len;
    fbf_jbuf_raw(&s->text, why, strlen(why));
    return fbf_flux_out_add(s, FBF_FLUX_RESPONSE, 0, (uint32_t)(code < 0 ? -code : code),
                            m->matchtag, topic, off);
}

/* ---- the handshake ---- */

static int on_attach(fbf_flux_session *s, const fbf_flux_in *in, const fbf_flux_msg *m)
{
    if (s->phase != PHASE_DETACHED)
        return refuse(s, m, -EINVAL, "sim.attach: the job manager is attached already");
    s->hello_tag = 1;
    s->ready_tag = 2;
    s->phase = PHASE_HELLO;
    if (s->opt.session.log)
        fprintf(s->opt.session.log, "fastbf: the job manager attached: sending %s\n",
                FBF_FLUX_HELLO);
    return ask(s, FBF_FLUX_HELLO, s->hello_tag, NULL);
}

/* Every job hello says holds cores: its R, read now, kept for the first
 * instant (the platform and the engine's clock start there). */
static int read_held(fbf_flux_session *s, const fbf_flux_in *in, fbf_error *err)
{
    size_t n = in->nheld;
    if (n == 0)
        return 0;
    char (*keys)[64] = calloc(n, sizeof *keys);
    fbf_store_item *items = calloc(n, sizeof *items);
    s->adopt = calloc(n, sizeof *s->adopt);
    int rc = 0;
    if (!keys || !items || !s->adopt) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        uint32_t k;
        if (fbf_flux_table_find(&s->jobs, in->held[i].id) != FBF_FJ_NONE) {
            rc = fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": alloc[%zu].id: job %llu is listed "
                            "twice", i, (unsigned long long)in->held[i].id);
            break;
        }
        if (fbf_flux_table_add(&s->jobs, in->held[i].id, &k) < 0) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            break;
        }
        fbf_flux_job *j = &s->jobs.v[k];
        j->st = FBF_FJ_HOLDING;
        j->priority = in->held[i].priority;
        j->userid = in->held[i].userid;
        fbf_flux_key(keys[i], sizeof keys[i], in->held[i].id, "R");
        items[i].name = keys[i];
        s->adopt[i].job = k;
        fbf_idset_init(&s->adopt[i].cores);
        s->nadopt = i + 1;
    }
    fbf_error inner;
    if (rc == 0 && (rc = fbf_flux_kvs_get(s->kvs, items, n, &inner)) < 0)
        rc = fbf_errorf(err, rc, "%s", inner.text);
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (!items[i].value) {
            rc = fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": job %llu holds cores but Redis key "
                            "\"%s\" does not exist (its R)", (unsigned long long)in->held[i].id,
                            keys[i]);
            break;
        }
        cJSON *R = cJSON_ParseWithLength(items[i].value, items[i].len);
        fbf_flux_R r;
        rc = R ? fbf_flux_R_read(R, s->opt.nranks, s->opt.cores_per_rank, &s->adopt[i].cores,
                                 &r, &inner)
               : fbf_errorf(&inner, -EPROTO, "malformed JSON");
        cJSON_Delete(R);
        if (rc < 0) {
            rc = fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": job %llu: Redis key \"%s\": %s",
                            (unsigned long long)in->held[i].id, keys[i], inner.text);
            break;
        }
        s->adopt[i].end = r.expiration > 0 ? r.expiration : INFINITY;
        s->jobs.v[s->adopt[i].job].nnodes = r.nnodes;
    }
    fbf_flux_kvs_release(s->kvs);
out:
    free(keys);
    free(items);
    return rc;
}

static int on_hello(fbf_flux_session *s, const fbf_flux_in *in, fbf_error *err)
{
    if (in->errnum)
        return fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": the job manager answered error %u "
                          "(%s)%s%s", in->errnum, strerror((int)in->errnum),
                          *in->errtext ? ": " : "", in->errtext);
    int rc = read_held(s, in, err);
    if (rc < 0)
        return rc;
    if (s->opt.session.log)
        fprintf(s->opt.session.log, "fastbf: hello: %zu jobs hold cores; sending %s\n",
                in->nheld, FBF_FLUX_READY);
    s->phase = PHASE_READYING;
    return ask(s, FBF_FLUX_READY, s->ready_tag,
               s->opt.mode == FBF_FLUX_MODE_SINGLE ? "{\"mode\":\"single\"}"
                                                   : "{\"mode\":\"unlimited\"}") < 0
               ? fbf_errorf(err, -ENOMEM, "out of memory")
               : 0;
}

static int on_response(fbf_flux_session *s, const fbf_flux_in *in, const fbf_flux_msg *m,
                       fbf_error *err)
{
    bool hello = in->kind == FBF_FLUX_IN_HELLO;
    int want = hello ? PHASE_HELLO : PHASE_READYING;
    uint32_t tag = hello ? s->hello_tag : s->ready_tag;
    char why[200];
    if (s->phase != want || m->matchtag != tag) {
        snprintf(why, sizeof why, "%s: a response fastbf did not ask for (matchtag %u%s)",
                 in->topic, m->matchtag, s->phase == want ? "" : ", none pending");
        return refuse(s, m, -EPROTO, why);
    }
    if (hello)
        return on_hello(s, in, err);
    if (in->errnum)
        return fbf_errorf(err, -EPROTO, FBF_FLUX_READY ": the job manager answered error %u "
                          "(%s)%s%s", in->errnum, strerror((int)in->errnum),
                          *in->errtext ? ": " : "", in->errtext);
    s->phase = PHASE_READY;
    if (s->opt.session.log)
        fprintf(s->opt.session.log, "fastbf: ready (%s mode)\n",
                s->opt.mode == FBF_FLUX_MODE_SINGLE ? "single" : "unlimited");
    return 0;
}

/* ---- requests of an instant ---- */

static int keep(fbf_flux_session *s, uint8_t kind, uint32_t job)
{
    if (fbf_flux_grow((void **)&s->reqs, &s->reqs_cap, s->nreqs, sizeof *s->reqs) < 0)
        return -ENOMEM;
    s->reqs[s->nreqs++] = (fbf_flux_req){.kind = kind, .job = job};
    return 0;
}

static const char *state_text(uint8_t st)
{
    switch (st) {
    case FBF_FJ_NEW:
    case FBF_FJ_WAITING: return "its alloc is pending";
    case FBF_FJ_WITHDRAWN: return "its alloc was canceled";
    case FBF_FJ_HOLDING: return "it holds cores";
    case FBF_FJ_FREEING: return "its free is pending";
    case FBF_FJ_DONE: return "it was freed";
    case FBF_FJ_DENIED: return "its alloc was denied";
    }
    return "unknown";
}

static int on_alloc(fbf_flux_session *s, const fbf_flux_in *in, const fbf_flux_msg *m)
{
    char why[200];
    uint32_t k = fbf_flux_table_find(&s->jobs, in->id);
    if (k != FBF_FJ_NONE && s->jobs.v[k].st != FBF_FJ_WITHDRAWN) {
        uint8_t st = s->jobs.v[k].st;
        snprintf(why, sizeof why, "sched.alloc: id: job %llu: %s: %s",
                 (unsigned long long)in->id, state_text(st),
                 st == FBF_FJ_NEW || st == FBF_FJ_WAITING
                     ? "RFC 27 allows one alloc in flight per job"
                     : "an alloc is for a job in SCHED state");
        return refuse(s, m, st == FBF_FJ_NEW || st == FBF_FJ_WAITING ? -EEXIST : -EINVAL, why);
    }
    if (s->opt.mode == FBF_FLUX_MODE_SINGLE && s->pending > 0) {
        snprintf(why, sizeof why, "sched.alloc: id: job %llu: an alloc is pending already, and "
                 "fastbf asked for single mode (one alloc at a time)",
                 (unsigned long long)in->id);
        return refuse(s, m, -EPROTO, why);
    }
    if (k == FBF_FJ_NONE && fbf_flux_table_add(&s->jobs, in->id, &k) < 0)
        return -ENOMEM;
    fbf_flux_job *j = &s->jobs.v[k];
    j->st = FBF_FJ_NEW;
    s->pending++;
    j->cancel = 0;
    j->priority = in->priority;
    j->userid = in->userid;
    if (!isnan(in->t_submit))
        j->t_submit = in->t_submit;
    return keep(s, FBF_FLUX_IN_ALLOC, k);
}

static int on_free(fbf_flux_session *s, const fbf_flux_in *in, const fbf_flux_msg *m)
{
    char why[200];
    uint32_t k = fbf_flux_table_find(&s->jobs, in->id);
    if (k == FBF_FJ_NONE || s->jobs.v[k].st != FBF_FJ_HOLDING) {
        uint8_t st = k == FBF_FJ_NONE ? 0 : s->jobs.v[k].st;
        if (k == FBF_FJ_NONE)
            snprintf(why, sizeof why, "sched.free: id: unknown job %llu: it holds nothing",
                     (unsigned long long)in->id);
        else
            snprintf(why, sizeof why, "sched.free: id: job %llu holds nothing: %s%s",
                     (unsigned long long)in->id, state_text(st),
                     st == FBF_FJ_FREEING ? " (RFC 27 allows one free in flight per job)" : "");
        return refuse(s, m, k == FBF_FJ_NONE ? -ENOENT : -EINVAL, why);
    }
    s->jobs.v[k].st = FBF_FJ_FREEING;
    return keep(s, FBF_FLUX_IN_FREE, k);
}

static int on_cancel(fbf_flux_session *s, const fbf_flux_in *in)
{
    uint32_t k = fbf_flux_table_find(&s->jobs, in->id);
    fbf_flux_job *j = k == FBF_FJ_NONE ? NULL : &s->jobs.v[k];
    if (!j || (j->st != FBF_FJ_NEW && j->st != FBF_FJ_WAITING) || j->cancel) {
        /* RFC 27: no pending alloc, nothing to do. */
        if (s->opt.session.log)
            fprintf(s->opt.session.log, "fastbf: sched.cancel of job %llu ignored: no alloc "
                    "pending\n", (unsigned long long)in->id);
        return 0;
    }
    j->cancel = 1;
    return keep(s, FBF_FLUX_IN_CANCEL, k);
}

/* RFC 27: new priorities for jobs, never answered; a waiting job takes
 * its new place in the queue at the next decision. Jobs fastbf does not
 * know, or that no longer wait, keep the priority for a later alloc. */
static int on_prioritize(fbf_flux_session *s, const fbf_flux_in *in)
{
    fbf_engine *e = fbf_session_engine(s->core);
    for (size_t i = 0; i < in->nprio; i++) {
        uint32_t k = fbf_flux_table_find(&s->jobs, in->prio[i].id);
        if (k == FBF_FJ_NONE)
            continue;
        fbf_flux_job *j = &s->jobs.v[k];
        j->priority = in->prio[i].priority;
        fbf_error inner;
        if (j->h != FBF_JOB_NONE && fbf_engine_job_state(e, j->h) == FBF_JOB_WAITING &&
            fbf_engine_set_priority(e, j->h, j->priority, &inner) < 0 && s->opt.session.log)
            fprintf(s->opt.session.log, "fastbf: sched.prioritize of job %llu: %s\n",
                    (unsigned long long)in->prio[i].id, inner.text);
    }
    return 0;
}

static int dispatch(fbf_flux_session *s, const fbf_flux_in *in, const fbf_flux_msg *m,
                    fbf_error *err)
{
    char why[200];
    if (in->kind == FBF_FLUX_IN_ATTACH)
        return on_attach(s, in, m);
    if (in->kind == FBF_FLUX_IN_HELLO || in->kind == FBF_FLUX_IN_READY)
        return on_response(s, in, m, err);
    if (s->phase != PHASE_READY) {
        snprintf(why, sizeof why, "%s: before the handshake is done (sim.attach, then "
                 "fastbf's %s and %s answered)", in->topic, FBF_FLUX_HELLO, FBF_FLUX_READY);
        return refuse(s, m, -EAGAIN, why);
    }
    if ((in->kind == FBF_FLUX_IN_ALLOC || in->kind == FBF_FLUX_IN_FREE) && m->matchtag != 0) {
        snprintf(why, sizeof why, "%s: matchtag %u: RFC 27 matches its requests and responses "
                 "by job id, with matchtag 0", in->topic, m->matchtag);
        return refuse(s, m, -EPROTO, why);
    }
    int rc = 0;
    switch (in->kind) {
    case FBF_FLUX_IN_ALLOC: rc = on_alloc(s, in, m); break;
    case FBF_FLUX_IN_FREE: rc = on_free(s, in, m); break;
    case FBF_FLUX_IN_CANCEL: rc = on_cancel(s, in); break;
    case FBF_FLUX_IN_PRIORITIZE: return on_prioritize(s, in);
    case FBF_FLUX_IN_INSTANT:
        if (!(in->now >= s->last_now)) {
            snprintf(why, sizeof why, "sim.instant: now: %.17g is before the last instant's "
                     "%.17g", in->now, s->last_now);
            return refuse(s, m, -EINVAL, why);
        }
        s->last_now = in->now;
        return fbf_flux_instant(s, in->now, in->matchtag, err);
    case FBF_FLUX_IN_END: {
        s->phase = PHASE_ENDED;
        size_t off = s->text.len;
        fbf_jbuf_lit(&s->text, "{}");
        rc = fbf_flux_out_add(s, FBF_FLUX_RESPONSE, 0, 0, in->matchtag, FBF_FLUX_END, off);
        return rc < 0 ? fbf_errorf(err, rc, "out of memory") : FBF_FLUX_ENDED;
    }
    default: break;
    }
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}

int fbf_flux_session_receive(fbf_flux_session *s, const void *const *frames, const size_t *lens,
                             size_t n, fbf_error *err)
{
    s->nouts = 0;
    fbf_jbuf_reset(&s->text);
    if (s->phase == PHASE_ENDED)
        return fbf_errorf(err, -EPROTO, "a message after sim.end");
    fbf_flux_msg m;
    fbf_error inner;
    if (fbf_flux_msg_decode(&m, frames, lens, n, &inner) < 0) {
        fbf_flux_msg pm;
        bool answer = fbf_flux_msg_answerable(frames, lens, n, &pm);
        int rc = refuse(s, answer ? &pm : NULL, -EPROTO, inner.text);
        return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
    }
    fbf_flux_in in;
    int rc = fbf_flux_codec_read(s->codec, &m, &in, &inner);
    if (rc == -ENOMEM)
        return fbf_errorf(err, rc, "out of memory");
    if (rc < 0)
        rc = refuse(s, &m, rc, inner.text);
    else
        rc = dispatch(s, &in, &m, err);
    if (rc == -ENOMEM)
        return fbf_errorf(err, rc, "out of memory");
    return rc;
}
