/*
 * flux_kvs: Redis through io/store.h, or an open-addressing table of
 * copied strings (see flux_kvs.h).
 */
#include "io/flux_kvs.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
    char *key, *value;
    size_t len;
} entry;

struct fbf_flux_kvs {
    fbf_store *redis; /* NULL: the memory table */
    char where[320];
    entry *t;
    size_t n, cap; /* cap a power of two, load <= 1/2 */
};

fbf_flux_kvs *fbf_flux_kvs_redis(const char *host, int port, double timeout_s, fbf_error *err)
{
    fbf_flux_kvs *k = calloc(1, sizeof *k);
    if (!k) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    if (!(k->redis = fbf_store_connect(host, port, NULL, timeout_s, err))) {
        free(k);
        return NULL;
    }
    snprintf(k->where, sizeof k->where, "Redis at %s", fbf_store_where(k->redis));
    return k;
}

fbf_flux_kvs *fbf_flux_kvs_memory(void)
{
    fbf_flux_kvs *k = calloc(1, sizeof *k);
    if (k)
        snprintf(k->where, sizeof k->where, "memory");
    return k;
}

void fbf_flux_kvs_destroy(fbf_flux_kvs *k)
{
    if (!k)
        return;
    fbf_store_destroy(k->redis);
    for (size_t i = 0; i < k->cap; i++) {
        free(k->t[i].key);
        free(k->t[i].value);
    }
    free(k->t);
    free(k);
}

const char *fbf_flux_kvs_where(const fbf_flux_kvs *k) { return k->where; }

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static entry *slot(const fbf_flux_kvs *k, const char *key)
{
    size_t mask = k->cap - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask)
        if (!k->t[i].key || strcmp(k->t[i].key, key) == 0)
            return &k->t[i];
}

static int grow(fbf_flux_kvs *k)
{
    size_t cap = k->cap ? 2 * k->cap : 64;
    entry *old = k->t;
    size_t ocap = k->cap;
    if (!(k->t = calloc(cap, sizeof *k->t))) {
        k->t = old;
        return -ENOMEM;
    }
    k->cap = cap;
    for (size_t i = 0; i < ocap; i++)
        if (old[i].key)
            *slot(k, old[i].key) = old[i];
    free(old);
    return 0;
}

int fbf_flux_kvs_get(fbf_flux_kvs *k, fbf_store_item *items, size_t n, fbf_error *err)
{
    if (k->redis)
        return fbf_store_get(k->redis, FBF_STORE_RAW, items, n, err);
    for (size_t i = 0; i < n; i++) {
        entry *e = k->cap ? slot(k, items[i].name) : NULL;
        items[i].value = e && e->key ? e->value : NULL;
        items[i].len = e && e->key ? e->len : 0;
    }
    return 0;
}

int fbf_flux_kvs_put(fbf_flux_kvs *k, const fbf_store_item *items, size_t n, fbf_error *err)
{
    if (k->redis)
        return fbf_store_set(k->redis, FBF_STORE_RAW, items, n, err);
    for (size_t i = 0; i < n; i++) {
        if ((k->n + 1) * 2 > k->cap && grow(k) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        entry *e = slot(k, items[i].name);
        char *v = malloc(items[i].len + 1);
        if (!v || (!e->key && !(e->key = strdup(items[i].name)))) {
            free(v);
            return fbf_errorf(err, -ENOMEM, "out of memory");
        }
        if (!e->value)
            k->n++;
        memcpy(v, items[i].value, items[i].len);
        v[items[i].len] = '\0';
        free(e->value);
        e->value = v;
        e->len = items[i].len;
    }
    return 0;
}

void fbf_flux_kvs_release(fbf_flux_kvs *k)
{
    if (k->redis)
        fbf_store_release(k->redis);
}
