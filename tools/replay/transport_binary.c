/*
 * transport_binary: Batsim 5's flatbuffers binary format around another
 * transport (a process or a library EDC), so that the rest of the
 * replayer speaks batprotocol's JSON only (--format binary).
 *
 *   exchange 1 the handshake goes as it is (binary in every format); the
 *              reply's [u32 flags][hello]: with flags 0x1, the hello is
 *              verified and turned into its JSON form
 *   exchange n the JSON message (its final NUL dropped) becomes the binary
 *              Message with the same content; the binary reply is verified
 *              and turned into its JSON form
 * Both conversions are flatbuffers' own (its JSON parser and text
 * generator over the project's batprotocol schema, io/bv5_fb.h), not a
 * reading of fastbf's: a reply that does not verify is refused with
 * "flatbuffers: the message does not verify", one that has no JSON form
 * with flatbuffers' reason.
 */
#include "tools/replay/transport.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_fb.h"
#include "io/jbuf.h"

typedef struct binary_tr {
    fbf_transport base;
    fbf_transport *inner;
    fbf_bv5_fb *fb;
    fbf_jbuf out; /* the reply handed back, in JSON */
    unsigned long exchanges;
} binary_tr;

static int binary_exchange(fbf_transport *base, const char *req, size_t len, const char **reply,
                           size_t *reply_len, fbf_error *err)
{
    binary_tr *t = (binary_tr *)base;
    const char *r;
    size_t n;
    fbf_error inner;
    int rc;
    if (t->exchanges++ == 0) {
        if ((rc = fbf_transport_exchange(t->inner, req, len, &r, &n, err)) < 0)
            return rc;
        uint32_t flags;
        if (n < sizeof flags || (memcpy(&flags, r, sizeof flags), flags != 0x1u)) {
            *reply = r; /* the hello's checks say what is wrong */
            *reply_len = n;
            return 0;
        }
        const char *json;
        size_t jlen;
        if ((rc = fbf_bv5_fb_to_json(t->fb, (const uint8_t *)r + sizeof flags, n - sizeof flags,
                                     &json, &jlen, &inner)) < 0)
            return fbf_errorf(err, rc, "the EDC's hello: %s", inner.text);
        fbf_jbuf_reset(&t->out);
        fbf_jbuf_raw(&t->out, (const char *)&flags, sizeof flags);
        fbf_jbuf_raw(&t->out, json, jlen);
    } else {
        const uint8_t *bin;
        size_t blen;
        if (len && req[len - 1] == '\0')
            len--;
        if ((rc = fbf_bv5_fb_from_json(t->fb, req, len, &bin, &blen, &inner)) < 0)
            return fbf_errorf(err, rc, "the replayer's message has no binary form: %s",
                              inner.text);
        if ((rc = fbf_transport_exchange(t->inner, (const char *)bin, blen, &r, &n, err)) < 0)
            return rc;
        const char *json;
        size_t jlen;
        if ((rc = fbf_bv5_fb_to_json(t->fb, (const uint8_t *)r, n, &json, &jlen, &inner)) < 0)
            return fbf_errorf(err, rc, "the EDC's reply: %s", inner.text);
        fbf_jbuf_reset(&t->out);
        fbf_jbuf_raw(&t->out, json, jlen);
    }
    if (t->out.oom)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    *reply = t->out.p;
    *reply_len = t->out.len;
    return 0;
}

static int binary_finish(fbf_transport *base, fbf_error *err)
{
    return fbf_transport_finish(((binary_tr *)base)->inner, err);
}

static size_t binary_counters(fbf_transport *base, fbf_policy_counter *out, size_t max)
{
    return fbf_transport_counters(((binary_tr *)base)->inner, out, max);
}

static void binary_destroy(fbf_transport *base)
{
    binary_tr *t = (binary_tr *)base;
    fbf_transport_destroy(t->inner);
    fbf_bv5_fb_destroy(t->fb);
    fbf_jbuf_fini(&t->out);
    free(t);
}

static const fbf_transport_ops binary_ops = {
    .exchange = binary_exchange,
    .finish = binary_finish,
    .destroy = binary_destroy,
    .counters = binary_counters,
};

fbf_transport *fbf_transport_binary(fbf_transport *inner, fbf_error *err)
{
    binary_tr *t = calloc(1, sizeof *t);
    if (t)
        t->fb = fbf_bv5_fb_create();
    if (!t || !t->fb) {
        free(t);
        fbf_transport_destroy(inner);
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    t->base.ops = &binary_ops;
    memcpy(t->base.what, inner->what, sizeof t->base.what);
    t->inner = inner;
    return &t->base;
}
