/*
 * transport_edc: a Batsim 5 External Decision Component built as a shared
 * library (--edc-library PATH), behind the transport interface, called
 * exactly as Batsim 5.0.0-rc2 calls one (src/edc.cpp; the C API of its
 * test/edc-lib/batsim_edc.h):
 *
 *   loading    dlopen(PATH, RTLD_NOW | RTLD_LOCAL), then batsim_edc_init,
 *              batsim_edc_take_decisions and batsim_edc_deinit by name
 *   exchange 1 the request is the process EDC's init message, [u32 size]
 *              [init data]; batsim_edc_init(data, size, &flags, &reply,
 *              &reply_size) answers, handed back as [u32 flags][reply], the
 *              process EDC's layout, so that v5_hello.c sees one format
 *   exchange n batsim_edc_take_decisions(request, size, &decisions,
 *              &decisions_size); the request's size counts its final NUL
 *   finish     batsim_edc_deinit(), once; destroy() calls it if finish did
 *              not, then dlclose()
 * A non-zero return is Batsim's "Error while calling ... on the EDC
 * library: returned N"; the buffers an EDC hands back stay its own and are
 * read before the next call. Library calls run on the caller's thread, so
 * --timeout cannot stop one that never returns, nor survive one that
 * crashes (Batsim cannot either).
 *
 * Invariant: after a failed call the library is not called again, except
 * for deinit at destroy().
 */
#include "tools/replay/transport.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t (*edc_init_fn)(const uint8_t *, uint32_t, uint32_t *, uint8_t **, uint32_t *);
typedef uint8_t (*edc_take_fn)(const uint8_t *, uint32_t, uint8_t **, uint32_t *);
typedef uint8_t (*edc_deinit_fn)(void);

typedef struct edc_tr {
    fbf_transport base;
    void *lib;
    edc_init_fn init;
    edc_take_fn take;
    edc_deinit_fn deinit;
    bool inited, deinited, broken;
    char *hello; /* [flags][reply] of the init call */
} edc_tr;

static int broken(edc_tr *t, fbf_error *err, int code, const char *fmt, const char *what,
                  unsigned v)
{
    t->broken = true;
    char text[200];
    snprintf(text, sizeof text, fmt, what, v);
    return fbf_errorf(err, code, "%s (%s)", text, t->base.what);
}

static int edc_exchange(fbf_transport *base, const char *req, size_t len, const char **reply,
                        size_t *reply_len, fbf_error *err)
{
    edc_tr *t = (edc_tr *)base;
    if (t->broken)
        return fbf_errorf(err, -EPROTO, "the EDC library failed earlier");
    if (len > UINT32_MAX)
        return broken(t, err, -EMSGSIZE, "%s: the message is above 4 GiB (%u)", "take_decisions",
                      0);
    uint8_t *out = NULL;
    uint32_t out_len = 0;
    if (!t->inited) {
        uint32_t size, flags = 0;
        if (len < sizeof size)
            return broken(t, err, -EINVAL, "%s: the init message is shorter than its size (%u)",
                          "init", (unsigned)len);
        memcpy(&size, req, sizeof size);
        if (size != len - sizeof size)
            return broken(t, err, -EINVAL, "%s: the init message's size is wrong (%u)", "init",
                          size);
        t->inited = true;
        uint8_t rc = t->init((const uint8_t *)req + sizeof size, size, &flags, &out, &out_len);
        if (rc != 0)
            return broken(t, err, -EPROTO, "Error while calling %s on the EDC library: "
                          "returned %u", "init", rc);
        if (!out && out_len)
            return broken(t, err, -EPROTO, "%s returned no buffer for a reply of %u bytes",
                          "batsim_edc_init", out_len);
        free(t->hello);
        t->hello = malloc(sizeof flags + (size_t)out_len);
        if (!t->hello)
            return broken(t, err, -ENOMEM, "%s: out of memory (%u)", "init", out_len);
        memcpy(t->hello, &flags, sizeof flags);
        if (out_len)
            memcpy(t->hello + sizeof flags, out, out_len);
        *reply = t->hello;
        *reply_len = sizeof flags + (size_t)out_len;
        return 0;
    }
    uint8_t rc = t->take((const uint8_t *)req, (uint32_t)len, &out, &out_len);
    if (rc != 0)
        return broken(t, err, -EPROTO, "Error while calling %s on the EDC library: returned %u",
                      "take_decisions", rc);
    if (!out && out_len)
        return broken(t, err, -EPROTO, "%s returned no buffer for decisions of %u bytes",
                      "batsim_edc_take_decisions", out_len);
    *reply = out ? (const char *)out : "";
    *reply_len = out_len;
    return 0;
}

static int edc_finish(fbf_transport *base, fbf_error *err)
{
    edc_tr *t = (edc_tr *)base;
    if (!t->inited || t->deinited)
        return 0;
    t->deinited = true;
    uint8_t rc = t->deinit();
    if (rc != 0) /* Batsim does not look at it: a warning */
        return fbf_errorf(err, 0, "batsim_edc_deinit returned %u (%s)", rc, t->base.what), 1;
    return 0;
}

static void edc_destroy(fbf_transport *base)
{
    edc_tr *t = (edc_tr *)base;
    if (t->inited && !t->deinited) {
        t->deinited = true;
        t->deinit();
    }
    if (t->lib)
        dlclose(t->lib);
    free(t->hello);
    free(t);
}

static const fbf_transport_ops edc_ops = {edc_exchange, edc_finish, edc_destroy, NULL};

/* dlsym into a function pointer (POSIX guarantees the conversion). */
static void *symbol(edc_tr *t, const char *name, fbf_error *err)
{
    dlerror();
    void *p = dlsym(t->lib, name);
    if (!p) {
        const char *why = dlerror();
        fbf_errorf(err, -ENOENT, "Could not load symbol '%s': %s", name,
                   why ? why : "it is NULL");
    }
    return p;
}

fbf_transport *fbf_transport_edc_library(const char *path, fbf_error *err)
{
    edc_tr *t = calloc(1, sizeof *t);
    if (!t) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    t->base.ops = &edc_ops;
    snprintf(t->base.what, sizeof t->base.what, "EDC library %s", path);
    t->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!t->lib) {
        const char *why = dlerror();
        fbf_errorf(err, -ENOENT, "dynamic loader failed while loading external decision "
                   "component library: %s", why ? why : path);
        free(t);
        return NULL;
    }
    void *i = symbol(t, "batsim_edc_init", err), *k = i ? symbol(t, "batsim_edc_take_decisions", err)
                                                        : NULL;
    void *d = k ? symbol(t, "batsim_edc_deinit", err) : NULL;
    if (!d) {
        dlclose(t->lib);
        free(t);
        return NULL;
    }
    *(void **)&t->init = i;
    *(void **)&t->take = k;
    *(void **)&t->deinit = d;
    return &t->base;
}
