/*
 * jsc_server: the control thread (see jsc_server.h and jsc.h's DESIGN).
 *
 * Invariants: the thread alone touches the sockets, the mirror and the
 * pending updates' envelopes from its start to its join; it leaves when
 * `stop` is set and its eventfd rings, after applying what was published
 * last. A pending update's envelope (the asker's routing id and, for a
 * REQ asker, the empty delimiter) is kept until its answer comes back
 * from the I/O thread.
 */
#include "io/jsc_server.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include <cjson/cJSON.h>

#include "io/job_json.h"
#include "io/jsc_int.h"

typedef struct pending {
    uint64_t token;
    unsigned char id[256];
    size_t id_len;
    bool delim;
} pending;

struct fbf_jsc_server {
    fbf_jsc *j;
    void *ctx, *rep, *pub;
    pthread_t thread;
    atomic_bool stop;
    pending *pend;
    size_t npend, cappend;
    uint64_t next_token;
    fbf_jbuf out, recs;
};

/* ---- endpoints ---- */

int fbf_jsc_endpoints(const char *control, char *req, size_t req_cap, char *pub, size_t pub_cap,
                      fbf_error *err)
{
    if (strncmp(control, "ipc://", 6) == 0 && control[6]) {
        snprintf(req, req_cap, "%s", control);
        snprintf(pub, pub_cap, "%s.pub", control);
        return 0;
    }
    static const char *const hosts[] = {"tcp://127.0.0.1:", "tcp://localhost:", "tcp://[::1]:"};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(hosts[i]);
        if (strncmp(control, hosts[i], n) != 0)
            continue;
        char *end;
        errno = 0;
        long port = strtol(control + n, &end, 10);
        if (errno || end == control + n || *end || port < 1 || port > 65534)
            return fbf_errorf(err, -EINVAL, "--control %s: the port must be a number from 1 "
                              "to 65534 (notifications go to the next one)", control);
        snprintf(req, req_cap, "%s", control);
        snprintf(pub, pub_cap, "%.*s%ld", (int)n, hosts[i], port + 1);
        return 0;
    }
    return fbf_errorf(err, -EINVAL, "--control %s: the control endpoint steers the scheduler, so "
                      "it is this machine's only: ipc://PATH or tcp://127.0.0.1:PORT", control);
}

/* ---- replies ---- */

static void reply(fbf_jsc_server *s, const void *id, size_t id_len, bool delim, const char *body,
                  size_t len)
{
    zmq_send(s->rep, id, id_len, ZMQ_SNDMORE);
    if (delim)
        zmq_send(s->rep, "", 0, ZMQ_SNDMORE);
    zmq_send(s->rep, body, len, 0);
}

static void error_reply(fbf_jsc_server *s, const void *id, size_t id_len, bool delim,
                        const char *why, size_t why_len)
{
    char *t = strndup(why, why_len);
    fbf_jbuf_reset(&s->out);
    fbf_jbuf_lit(&s->out, "{\"error\":");
    fbf_jbuf_str(&s->out, t ? t : "out of memory");
    fbf_jbuf_lit(&s->out, "}");
    free(t);
    reply(s, id, id_len, delim, s->out.p, s->out.len);
}

/* ---- the records of the I/O thread ---- */

static void drain(fbf_jsc_server *s)
{
    fbf_jsc_take_records(s->j, &s->recs);
    const uint8_t *p = (const uint8_t *)s->recs.p;
    size_t left = s->recs.len;
    while (left > 0) {
        fbf_jsc_effect eff;
        size_t used = fbf_jsc_mirror_apply(&s->j->mirror, p, left, &eff);
        if (used == 0)
            break; /* a record cut short: out of memory on the producer's side */
        p += used;
        left -= used;
        if (eff.changed) {
            fbf_jbuf_reset(&s->out);
            fbf_jsc_mirror_notice(s->j, eff.changed, &s->out);
            if (!s->out.oom)
                zmq_send(s->pub, s->out.p, s->out.len, ZMQ_DONTWAIT);
        }
        if (!eff.answer)
            continue;
        for (size_t i = 0; i < s->npend; i++) {
            if (s->pend[i].token != eff.token)
                continue;
            pending pd = s->pend[i];
            s->pend[i] = s->pend[--s->npend];
            if (eff.rc == 0)
                reply(s, pd.id, pd.id_len, pd.delim, "{\"result\":\"done\"}", 17);
            else
                error_reply(s, pd.id, pd.id_len, pd.delim, eff.text, eff.text_len);
            break;
        }
    }
}

/* ---- requests ---- */

static const char *member_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Checks an update and passes it to the I/O thread; NULL, or why not. */
static const char *ask_update(fbf_jsc_server *s, const fbf_jcb *c, const char *key,
                              const cJSON *value, uint64_t token, char *why, size_t cap)
{
    const cJSON *inner = cJSON_IsObject(value) ? cJSON_GetObjectItemCaseSensitive(value, key)
                                               : NULL;
    if (!inner || cJSON_GetArraySize(value) != 1) {
        snprintf(why, cap, "value: expected {\"%s\": ...}: JSC's update names its key at the "
                 "top", key);
        return why;
    }
    fbf_jsc_life life = s->j->life;
    if (strcmp(key, "rdesc") == 0) {
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(inner, "walltime");
        if (!cJSON_IsObject(inner) || !cJSON_IsNumber(w) || cJSON_GetArraySize(inner) != 1 ||
            !(w->valuedouble >= 0) || isinf(w->valuedouble)) {
            snprintf(why, cap, "value.rdesc: expected {\"walltime\": W}, W a number of seconds "
                     ">= 0: only the walltime of rdesc can change");
            return why;
        }
        if (c->state != FBF_J_SCHEDREQ) {
            snprintf(why, cap, "job %s is %s: only a waiting job's walltime can change", c->id,
                     fbf_jsc_state_name(c->state));
            return why;
        }
        return fbf_jsc_ask(s->j, FBF_JSC_WALLTIME, c->id, w->valuedouble, token) < 0
                   ? "out of memory"
                   : NULL;
    }
    if (strcmp(key, "state-pair") == 0) {
        const cJSON *ns = cJSON_GetObjectItemCaseSensitive(inner, "nstate");
        if (!fbf_job_json_is_int(ns) || ns->valuedouble != FBF_J_CANCELLED) {
            snprintf(why, cap, "value.state-pair.nstate: fastbf takes J_CANCELLED (%d) only",
                     FBF_J_CANCELLED);
            return why;
        }
        bool running = c->state == FBF_J_RUNNING || c->state == FBF_J_ALLOCATED;
        if (c->state != FBF_J_SCHEDREQ && !running) {
            snprintf(why, cap, "job %s is %s: only a waiting or running job can be cancelled",
                     c->id, fbf_jsc_state_name(c->state));
            return why;
        }
        if (running && life != FBF_JSC_BATSIM) {
            snprintf(why, cap, "job %s runs: %s", c->id,
                     life == FBF_JSC_FLUX ? "a Flux job that runs is the job manager's to cancel "
                                            "(RFC 27 gives the scheduler no kill)"
                                          : "the Batsim v2 protocol has no kill");
            return why;
        }
        return fbf_jsc_ask(s->j, FBF_JSC_CANCEL, c->id, NAN, token) < 0 ? "out of memory" : NULL;
    }
    if (strcmp(key, "priority") == 0) {
        if (!cJSON_IsNumber(inner) || !isfinite(inner->valuedouble)) {
            snprintf(why, cap, "value.priority: expected a finite number");
            return why;
        }
        if (c->state != FBF_J_SCHEDREQ) {
            snprintf(why, cap, "job %s is %s: only a waiting job's priority can change", c->id,
                     fbf_jsc_state_name(c->state));
            return why;
        }
        return fbf_jsc_ask(s->j, FBF_JSC_PRIORITY, c->id, inner->valuedouble, token) < 0
                   ? "out of memory"
                   : NULL;
    }
    snprintf(why, cap, "key \"%.60s\" cannot be updated: rdesc (its walltime), priority and "
             "state-pair (a cancel) can", key);
    return why;
}

static void handle(fbf_jsc_server *s, zmq_msg_t *id, bool delim, const char *body, size_t len)
{
    const void *pid = zmq_msg_data(id);
    size_t plen = zmq_msg_size(id);
    char why[300];
    cJSON *req = cJSON_ParseWithLength(body, len);
    const char *op = member_str(req, "op");
    const char *jobid = member_str(req, "jobid"), *key = member_str(req, "key");
    if (!cJSON_IsObject(req) || !op) {
        snprintf(why, sizeof why, "a request is a JSON object with \"op\": query, list or update");
        goto refuse;
    }
    if (strcmp(op, "list") == 0) {
        fbf_jbuf_reset(&s->out);
        fbf_jbuf_lit(&s->out, "{\"result\":");
        fbf_jsc_mirror_list(s->j, &s->out);
        fbf_jbuf_lit(&s->out, "}");
        if (s->out.oom) {
            snprintf(why, sizeof why, "out of memory");
            goto refuse;
        }
        reply(s, pid, plen, delim, s->out.p, s->out.len);
        cJSON_Delete(req);
        return;
    }
    if (strcmp(op, "query") != 0 && strcmp(op, "update") != 0) {
        snprintf(why, sizeof why, "op \"%.40s\": expected query, list or update", op);
        goto refuse;
    }
    if (!jobid || !key) {
        snprintf(why, sizeof why, "%s: \"jobid\" and \"key\" are strings", op);
        goto refuse;
    }
    const fbf_jcb *c = fbf_jsc_mirror_find(&s->j->mirror, jobid);
    if (!c) {
        snprintf(why, sizeof why, "unknown job %.100s", jobid);
        goto refuse;
    }
    if (strcmp(op, "query") == 0) {
        fbf_jbuf_reset(&s->out);
        fbf_jbuf_lit(&s->out, "{\"result\":");
        fbf_error err;
        if (fbf_jsc_mirror_key(s->j, c, key, &s->out, &err) < 0) {
            snprintf(why, sizeof why, "%s", err.text);
            goto refuse;
        }
        fbf_jbuf_lit(&s->out, "}");
        reply(s, pid, plen, delim, s->out.p, s->out.len);
        cJSON_Delete(req);
        return;
    }
    if (s->npend == s->cappend) {
        size_t cap = s->cappend ? 2 * s->cappend : 8;
        pending *p = realloc(s->pend, cap * sizeof *p);
        if (!p) {
            snprintf(why, sizeof why, "out of memory");
            goto refuse;
        }
        s->pend = p;
        s->cappend = cap;
    }
    uint64_t token = ++s->next_token;
    const char *no = ask_update(s, c, key, cJSON_GetObjectItemCaseSensitive(req, "value"), token,
                                why, sizeof why);
    if (no) {
        if (no != why)
            snprintf(why, sizeof why, "%s", no);
        goto refuse;
    }
    pending *p = &s->pend[s->npend++];
    p->token = token;
    p->id_len = plen < sizeof p->id ? plen : sizeof p->id;
    memcpy(p->id, pid, p->id_len);
    p->delim = delim;
    cJSON_Delete(req);
    return;
refuse:
    cJSON_Delete(req);
    error_reply(s, pid, plen, delim, why, strlen(why));
}

static void on_request(fbf_jsc_server *s)
{
    zmq_msg_t f[4];
    size_t n = 0;
    for (;;) {
        zmq_msg_t t;
        zmq_msg_init(&t);
        if (zmq_msg_recv(&t, s->rep, ZMQ_DONTWAIT) < 0) {
            zmq_msg_close(&t);
            break;
        }
        bool more = zmq_msg_more(&t);
        if (n < 4) {
            zmq_msg_init(&f[n]);
            zmq_msg_move(&f[n++], &t);
        }
        zmq_msg_close(&t);
        if (!more)
            break;
    }
    /* [id][body] from a DEALER, [id][""][body] from a REQ. */
    bool delim = n == 3 && zmq_msg_size(&f[1]) == 0;
    if (n == 2 || delim)
        handle(s, &f[0], delim, zmq_msg_data(&f[n - 1]), zmq_msg_size(&f[n - 1]));
    else if (n >= 1)
        error_reply(s, zmq_msg_data(&f[0]), zmq_msg_size(&f[0]), false,
                    "a request is one frame of JSON", 30);
    for (size_t i = 0; i < n; i++)
        zmq_msg_close(&f[i]);
}

static void *run(void *arg)
{
    fbf_jsc_server *s = arg;
    zmq_pollitem_t items[3] = {{.socket = s->rep, .events = ZMQ_POLLIN},
                               {.fd = s->j->efd, .events = ZMQ_POLLIN},
                               {.socket = s->pub, .events = ZMQ_POLLIN}};
    for (;;) {
        if (zmq_poll(items, 3, -1) < 0 && errno != EINTR)
            break;
        if (items[2].revents & ZMQ_POLLIN) { /* subscriptions: nothing to do with them */
            zmq_msg_t m;
            zmq_msg_init(&m);
            while (zmq_msg_recv(&m, s->pub, ZMQ_DONTWAIT) >= 0)
                ;
            zmq_msg_close(&m);
        }
        if (items[1].revents & ZMQ_POLLIN) {
            uint64_t v;
            ssize_t r = read(s->j->efd, &v, sizeof v);
            (void)r;
            drain(s);
        }
        if (atomic_load(&s->stop)) {
            drain(s);
            break;
        }
        if (items[0].revents & ZMQ_POLLIN)
            on_request(s);
    }
    return NULL;
}

fbf_jsc_server *fbf_jsc_server_start(fbf_jsc *j, const char *control, fbf_error *err)
{
    char req[512], pub[512];
    if (fbf_jsc_endpoints(control, req, sizeof req, pub, sizeof pub, err) < 0)
        return NULL;
    fbf_jsc_server *s = calloc(1, sizeof *s);
    if (!s) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->j = j;
    atomic_init(&s->stop, false);
    s->ctx = zmq_ctx_new();
    s->rep = s->ctx ? zmq_socket(s->ctx, ZMQ_ROUTER) : NULL;
    s->pub = s->ctx ? zmq_socket(s->ctx, ZMQ_XPUB) : NULL;
    int zero = 0;
    const char *bad = NULL;
    if (!s->rep || !s->pub)
        bad = "a socket";
    else if (zmq_setsockopt(s->pub, ZMQ_SNDHWM, &zero, sizeof zero) != 0 ||
             zmq_setsockopt(s->pub, ZMQ_XPUB_WELCOME_MSG, FBF_JSC_WELCOME,
                            sizeof FBF_JSC_WELCOME - 1) != 0 ||
             zmq_setsockopt(s->rep, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
             zmq_setsockopt(s->pub, ZMQ_LINGER, &zero, sizeof zero) != 0)
        bad = "socket options";
    else if (zmq_bind(s->rep, req) != 0)
        bad = req;
    else if (zmq_bind(s->pub, pub) != 0)
        bad = pub;
    if (bad) {
        fbf_errorf(err, -errno, "control endpoint: cannot bind %s: %s", bad, zmq_strerror(errno));
    } else if (pthread_create(&s->thread, NULL, run, s) != 0) {
        fbf_errorf(err, -EAGAIN, "control endpoint: cannot start its thread");
        bad = "thread";
    }
    if (bad) {
        if (s->rep)
            zmq_close(s->rep);
        if (s->pub)
            zmq_close(s->pub);
        if (s->ctx)
            zmq_ctx_term(s->ctx);
        free(s);
        return NULL;
    }
    return s;
}

void fbf_jsc_server_stop(fbf_jsc_server *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, true);
    uint64_t one = 1;
    ssize_t w = write(s->j->efd, &one, sizeof one);
    (void)w;
    pthread_join(s->thread, NULL);
    zmq_close(s->rep);
    zmq_close(s->pub);
    zmq_ctx_term(s->ctx);
    free(s->pend);
    fbf_jbuf_fini(&s->out);
    fbf_jbuf_fini(&s->recs);
    free(s);
}
