/*
 * bv5_process: the Batsim 5 EDC process's handshake and exchanges (see
 * bv5_process.h).
 */
#include "io/bv5_process.h"

#include <errno.h>
#include <string.h>

void fbf_bv5_process_init(fbf_bv5_process *p, const fbf_bv5_options *base,
                          fbf_bv5_configure_fn configure, void *ctx)
{
    *p = (fbf_bv5_process){.base = *base, .configure = configure, .configure_ctx = ctx};
}

void fbf_bv5_process_fini(fbf_bv5_process *p)
{
    fbf_bv5_edc_destroy(p->edc);
    fbf_jbuf_fini(&p->hello);
    p->edc = NULL;
}

static int handshake(fbf_bv5_process *p, const uint8_t *req, size_t len, const void **reply,
                     size_t *reply_len, fbf_error *err)
{
    uint32_t size;
    if (len < sizeof size)
        return fbf_errorf(err, -EPROTO, "handshake: %zu bytes, expected a 4-byte size then "
                          "the init string", len);
    memcpy(&size, req, sizeof size);
    if ((size_t)size != len - sizeof size)
        return fbf_errorf(err, -EPROTO, "handshake: the init string's size says %lu bytes, "
                          "%zu came", (unsigned long)size, len - sizeof size);
    fbf_bv5_options o = p->base;
    int rc = p->configure ? p->configure(p->configure_ctx, (const char *)req + sizeof size,
                                         size, &o, err)
                          : 0;
    if (rc < 0)
        return rc;
    if (!(p->edc = fbf_bv5_edc_create(&o, err)))
        return -EINVAL;
    const uint8_t *hello;
    size_t n;
    if ((rc = fbf_bv5_edc_hello(p->edc, &hello, &n, err)) < 0)
        return rc;
    uint32_t flags = o.format;
    fbf_jbuf_reset(&p->hello);
    fbf_jbuf_raw(&p->hello, (const char *)&flags, sizeof flags);
    fbf_jbuf_raw(&p->hello, (const char *)hello, n);
    if (p->hello.oom)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    *reply = p->hello.p;
    *reply_len = p->hello.len;
    return 0;
}

static int handle(void *ctx, const void *req, size_t len, const void **reply,
                  size_t *reply_len, fbf_error *err)
{
    fbf_bv5_process *p = ctx;
    if (!p->edc)
        return handshake(p, req, len, reply, reply_len, err);
    const uint8_t *r;
    int rc = fbf_bv5_edc_take(p->edc, req, len, &r, reply_len, err);
    *reply = r;
    return rc;
}

static const void *refusal(void *ctx, const void *req, size_t len, const char *why,
                           size_t *reply_len)
{
    fbf_bv5_process *p = ctx;
    return p->edc ? fbf_bv5_edc_refusal(p->edc, reply_len) : NULL;
}

fbf_zmq_handler fbf_bv5_process_handler(fbf_bv5_process *p)
{
    return (fbf_zmq_handler){.ctx = p, .handle = handle, .refusal = refusal};
}
