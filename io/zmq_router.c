/*
 * zmq_router: the bound ROUTER socket of one session (see zmq_router.h).
 */
#include "io/zmq_router.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "io/endpoint.h"

int fbf_zmq_router_open(fbf_zmq_router *r, const fbf_zmq_options *o, const char *first,
                        bool mandatory, fbf_error *err)
{
    *r = (fbf_zmq_router){
        .endpoint = o->endpoint ? o->endpoint : FBF_ZMQ_DEFAULT_ENDPOINT,
        .warn = o->warn ? o->warn : stderr,
        .max_message = o->max_message ? o->max_message : FBF_ZMQ_MAX_MESSAGE_DEFAULT};
    int reach = fbf_endpoint_check_bind(r->endpoint, o->allow_remote, err);
    if (reach < 0)
        return reach;
    r->ctx = zmq_ctx_new();
    r->sock = r->ctx ? zmq_socket(r->ctx, ZMQ_ROUTER) : NULL;
    int rc;
    if (!r->sock) {
        rc = fbf_errorf(err, -errno, "cannot create a ZeroMQ socket: %s", zmq_strerror(errno));
        goto fail;
    }
    int linger = 1000, on = 1;
    int64_t max = (int64_t)r->max_message;
    zmq_setsockopt(r->sock, ZMQ_LINGER, &linger, sizeof linger);
    if (mandatory)
        zmq_setsockopt(r->sock, ZMQ_ROUTER_MANDATORY, &on, sizeof on);
    if (zmq_setsockopt(r->sock, ZMQ_MAXMSGSIZE, &max, sizeof max) != 0) {
        rc = fbf_errorf(err, -errno, "cannot limit messages to %zu bytes: %s", r->max_message,
                        zmq_strerror(errno));
        goto fail;
    }
    if ((rc = fbf_zmq_watch_start(&r->watch, r->ctx, r->sock, r->warn, r->max_message, err)) < 0)
        goto fail; /* said as it is */
    if (zmq_bind(r->sock, r->endpoint) != 0) {
        rc = fbf_errorf(err, -errno, "cannot bind %s: %s", r->endpoint, zmq_strerror(errno));
        goto fail;
    }
    if (reach > 0)
        fprintf(r->warn, "fastbf: warning: %s is reachable from other machines "
                         "(--allow-remote): the first %s drives this fastbf\n",
                r->endpoint, first);
    if (o->announce) {
        fprintf(r->warn, "%s listening on %s\n", o->announce, r->endpoint);
        fflush(r->warn);
    }
    return 0;
fail:
    fbf_zmq_router_close(r);
    return rc;
}

void fbf_zmq_router_close(fbf_zmq_router *r)
{
    if (r->sock) {
        fbf_zmq_watch_stop(&r->watch, r->sock);
        zmq_close(r->sock);
        r->sock = NULL;
    }
    if (r->ctx) {
        zmq_ctx_term(r->ctx);
        r->ctx = NULL;
    }
}

int fbf_zmq_router_recv(fbf_zmq_router *r, zmq_msg_t *f, size_t n, size_t *total)
{
    /* zmq_msg_recv() releases what a frame held before. */
    for (*total = 0;;) {
        zmq_msg_t *slot = &f[*total < n ? *total : n - 1];
        if (zmq_msg_recv(slot, r->sock, 0) < 0)
            return -errno;
        ++*total;
        if (!zmq_msg_more(slot))
            return 0;
    }
}

void fbf_zmq_router_pin(fbf_zmq_router *r, zmq_msg_t *id)
{
    r->pinned = true;
    r->peer_len = zmq_msg_size(id);
    memcpy(r->peer, zmq_msg_data(id), r->peer_len);
    fbf_zmq_watch_pin(&r->watch, zmq_msg_get(id, ZMQ_SRCFD));
}

bool fbf_zmq_router_is_peer(const fbf_zmq_router *r, zmq_msg_t *id)
{
    return zmq_msg_size(id) == r->peer_len && memcmp(zmq_msg_data(id), r->peer, r->peer_len) == 0;
}

fbf_zmq_watch_loss fbf_zmq_router_loss(fbf_zmq_router *r, int e)
{
    return e == ETERM ? fbf_zmq_watch_lost(&r->watch) : FBF_ZMQ_WATCH_HELD;
}
