/*
 * transport_inproc: the fastbf session linked into the replayer, behind
 * the transport interface. The request text is exactly what would go over
 * the socket, so --inproc measures the scheduler's own cost (JSON parse,
 * engine, reply) without ZeroMQ, and the replies are validated the same way.
 *
 * Invariant: after the session returns an error it is never called again
 * (bv4_session.h: the request may have been applied in part).
 */
#include "tools/replay/transport.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct inproc_tr {
    fbf_transport base;
    fbf_bv4_session *s;
    bool broken;
} inproc_tr;

static int inproc_exchange(fbf_transport *base, const char *req, size_t len, const char **reply,
                           size_t *reply_len, fbf_error *err)
{
    inproc_tr *t = (inproc_tr *)base;
    if (t->broken)
        return fbf_errorf(err, -EPROTO, "the in-process session failed earlier");
    fbf_error e;
    fbf_error_clear(&e);
    int rc = fbf_bv4_session_handle(t->s, req, len, reply, reply_len, &e);
    if (rc < 0) {
        t->broken = true;
        return fbf_errorf(err, -EPROTO, "the in-process scheduler refused the request: %s",
                          e.text);
    }
    return 0;
}

static void inproc_destroy(fbf_transport *base)
{
    inproc_tr *t = (inproc_tr *)base;
    fbf_bv4_session_destroy(t->s);
    free(t);
}

static size_t inproc_counters(fbf_transport *base, fbf_policy_counter *out, size_t max)
{
    inproc_tr *t = (inproc_tr *)base;
    return fbf_engine_policy_counters(fbf_bv4_session_engine(t->s), out, max);
}

static const fbf_transport_ops inproc_ops = {inproc_exchange, NULL, inproc_destroy,
                                             inproc_counters};

fbf_transport *fbf_transport_inproc(const fbf_bv4_options *opt, const char *what,
                                    fbf_error *err)
{
    inproc_tr *t = calloc(1, sizeof *t);
    if (!t) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    t->base.ops = &inproc_ops;
    snprintf(t->base.what, sizeof t->base.what, "%s", what);
    fbf_error e;
    fbf_error_clear(&e);
    t->s = fbf_bv4_session_create(opt, &e);
    if (!t->s) {
        fbf_errorf(err, -EINVAL, "cannot create the in-process scheduler: %s", e.text);
        free(t);
        return NULL;
    }
    return &t->base;
}
