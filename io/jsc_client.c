/*
 * jsc_client: a DEALER for requests, a SUB for notifications (see
 * jsc_client.h). Requests are answered in order, one at a time.
 */
#include "io/jsc_client.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include <cjson/cJSON.h>

#include "io/jbuf.h"
#include "io/jsc_server.h"

typedef struct handler {
    fbf_jsc_handler_f cb;
    void *arg;
} handler;

struct fbf_jsc_client {
    void *ctx, *req, *sub;
    char pub[512];
    int timeout_ms;
    handler *h;
    size_t nh;
    bool welcomed;
};

fbf_jsc_client *fbf_jsc_client_open(const char *control, int timeout_ms, fbf_error *err)
{
    char req[512];
    fbf_jsc_client *c = calloc(1, sizeof *c);
    if (!c) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    if (fbf_jsc_endpoints(control, req, sizeof req, c->pub, sizeof c->pub, err) < 0) {
        free(c);
        return NULL;
    }
    c->timeout_ms = timeout_ms > 0 ? timeout_ms : 30000;
    c->ctx = zmq_ctx_new();
    c->req = c->ctx ? zmq_socket(c->ctx, ZMQ_DEALER) : NULL;
    int zero = 0, ivl = 10; /* a fastbf that starts after its watcher is found soon */
    if (!c->req || zmq_setsockopt(c->req, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
        zmq_setsockopt(c->req, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) != 0 ||
        zmq_connect(c->req, req) != 0) {
        fbf_errorf(err, -EINVAL, "cannot connect to %s: %s", req, zmq_strerror(errno));
        fbf_jsc_client_close(c);
        return NULL;
    }
    return c;
}

void fbf_jsc_client_close(fbf_jsc_client *c)
{
    if (!c)
        return;
    if (c->req)
        zmq_close(c->req);
    if (c->sub)
        zmq_close(c->sub);
    if (c->ctx)
        zmq_ctx_term(c->ctx);
    free(c->h);
    free(c);
}

int fbf_jsc_notify_status(fbf_jsc_client *c, fbf_jsc_handler_f cb, void *arg, fbf_error *err)
{
    if (!c->sub) {
        int zero = 0, ivl = 10;
        c->sub = zmq_socket(c->ctx, ZMQ_SUB);
        if (!c->sub || zmq_setsockopt(c->sub, ZMQ_LINGER, &zero, sizeof zero) != 0 ||
            zmq_setsockopt(c->sub, ZMQ_RECONNECT_IVL, &ivl, sizeof ivl) != 0 ||
            zmq_setsockopt(c->sub, ZMQ_RCVHWM, &zero, sizeof zero) != 0 ||
            zmq_setsockopt(c->sub, ZMQ_SUBSCRIBE, "", 0) != 0 || zmq_connect(c->sub, c->pub) != 0)
            return fbf_errorf(err, -EINVAL, "cannot subscribe to %s: %s", c->pub,
                              zmq_strerror(errno));
    }
    handler *h = realloc(c->h, (c->nh + 1) * sizeof *h);
    if (!h)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    c->h = h;
    c->h[c->nh++] = (handler){cb, arg};
    return 0;
}

int fbf_jsc_dispatch(fbf_jsc_client *c, int timeout_ms)
{
    if (!c->sub)
        return -EINVAL;
    int handled = 0;
    zmq_pollitem_t it = {.socket = c->sub, .events = ZMQ_POLLIN};
    int wait = timeout_ms;
    for (;;) {
        int r = zmq_poll(&it, 1, wait);
        if (r < 0)
            return errno == EINTR ? handled : -errno;
        if (r == 0)
            return handled;
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, c->sub, 0) < 0) {
            zmq_msg_close(&m);
            return -errno;
        }
        bool welcome = zmq_msg_size(&m) == sizeof FBF_JSC_WELCOME - 1 &&
                       memcmp(zmq_msg_data(&m), FBF_JSC_WELCOME, sizeof FBF_JSC_WELCOME - 1) == 0;
        char *text = welcome ? NULL : strndup(zmq_msg_data(&m), zmq_msg_size(&m));
        zmq_msg_close(&m);
        if (welcome) {
            c->welcomed = true;
            wait = 0;
            continue;
        }
        if (!text)
            return -ENOMEM;
        int rc = 0;
        for (size_t i = 0; i < c->nh && rc == 0; i++)
            rc = c->h[i].cb(text, c->h[i].arg, 0);
        free(text);
        handled++;
        if (rc != 0)
            return rc;
        wait = 0; /* what is queued already, then back */
    }
}

int fbf_jsc_subscribed(fbf_jsc_client *c, int timeout_ms)
{
    if (!c->sub)
        return -EINVAL;
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (c->welcomed)
            return 0;
        clock_gettime(CLOCK_MONOTONIC, &t);
        long ms = (t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms >= timeout_ms)
            return -ETIMEDOUT;
        int rc = fbf_jsc_dispatch(c, (int)(timeout_ms - ms < 50 ? timeout_ms - ms : 50));
        if (rc < 0)
            return rc;
    }
}

/* One request, its answer's "result" as JSON text into *out. */
static int ask(fbf_jsc_client *c, const char *body, char **out, fbf_error *err)
{
    *out = NULL;
    if (zmq_send(c->req, body, strlen(body), 0) < 0)
        return fbf_errorf(err, -errno, "sending: %s", zmq_strerror(errno));
    zmq_pollitem_t it = {.socket = c->req, .events = ZMQ_POLLIN};
    int r = zmq_poll(&it, 1, c->timeout_ms);
    if (r <= 0)
        return fbf_errorf(err, -ETIMEDOUT, "no answer from fastbf within %d ms", c->timeout_ms);
    zmq_msg_t m;
    zmq_msg_init(&m);
    if (zmq_msg_recv(&m, c->req, 0) < 0) {
        zmq_msg_close(&m);
        return fbf_errorf(err, -errno, "receiving: %s", zmq_strerror(errno));
    }
    const char *text = zmq_msg_data(&m);
    size_t len = zmq_msg_size(&m);
    cJSON *a = cJSON_ParseWithLength(text, len);
    const cJSON *bad = cJSON_GetObjectItemCaseSensitive(a, "error");
    static const char head[] = "{\"result\":";
    int rc = 0;
    if (cJSON_IsString(bad))
        rc = fbf_errorf(err, -EINVAL, "%s", bad->valuestring);
    else if (!cJSON_GetObjectItemCaseSensitive(a, "result") || len < sizeof head ||
             memcmp(text, head, sizeof head - 1) != 0 || text[len - 1] != '}')
        rc = fbf_errorf(err, -EPROTO, "an answer that is not fastbf's");
    /* The result's own text: Flux's 64-bit ids stay exact. */
    else if (!(*out = strndup(text + sizeof head - 1, len - sizeof head)))
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    cJSON_Delete(a);
    zmq_msg_close(&m);
    return rc;
}

static char *request(const char *op, const char *jobid, const char *key, const cJSON *value)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    if (jobid)
        cJSON_AddStringToObject(o, "jobid", jobid);
    if (key)
        cJSON_AddStringToObject(o, "key", key);
    if (value)
        cJSON_AddItemToObject(o, "value", cJSON_Duplicate(value, true));
    char *s = cJSON_PrintUnformatted(o);
    cJSON_Delete(o);
    return s;
}

int fbf_jsc_query_jcb(fbf_jsc_client *c, const char *jobid, const char *key, char **jcb,
                      fbf_error *err)
{
    char *r = request("query", jobid, key, NULL);
    if (!r)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = ask(c, r, jcb, err);
    free(r);
    return rc;
}

int fbf_jsc_update_jcb(fbf_jsc_client *c, const char *jobid, const char *key, const char *jcb,
                       fbf_error *err)
{
    cJSON *v = cJSON_Parse(jcb);
    if (!v)
        return fbf_errorf(err, -EINVAL, "the JCB to update is not JSON: %.60s", jcb);
    char *r = request("update", jobid, key, v);
    cJSON_Delete(v);
    if (!r)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char *out = NULL;
    int rc = ask(c, r, &out, err);
    free(r);
    free(out);
    return rc;
}

int fbf_jsc_list(fbf_jsc_client *c, char **json, fbf_error *err)
{
    char *r = request("list", NULL, NULL, NULL);
    if (!r)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = ask(c, r, json, err);
    free(r);
    return rc;
}
