/*
 * flux_kvs: where the RFC 27 service reads jobspecs and writes R (Flux's
 * key-value store, RFC 16's keys): a Redis server (io/store.h) in every
 * real run, or a table in memory, for the fuzz target and for the
 * benchmark that measures the service without Redis's round trips.
 *
 * Batches: get and put take n keys at once (Redis: one pipeline).
 *
 * Ownership: _redis() and _memory() return a store the caller destroys
 * (NULL accepted). Values from a get are the store's, valid until the
 * next get, put or release. Keys and values put are copied (memory) or
 * sent (Redis).
 *
 * Errors: as io/store.h (-ECONNREFUSED, -EIO, -EPROTO with one line);
 * -ENOMEM. A missing key is no error: its value is NULL.
 */
#ifndef FBF_FLUX_KVS_H
#define FBF_FLUX_KVS_H

#include <stddef.h>

#include "engine/error.h"
#include "io/store.h"

typedef struct fbf_flux_kvs fbf_flux_kvs;

fbf_flux_kvs *fbf_flux_kvs_redis(const char *host, int port, double timeout_s, fbf_error *err);
fbf_flux_kvs *fbf_flux_kvs_memory(void);
void fbf_flux_kvs_destroy(fbf_flux_kvs *k);

int fbf_flux_kvs_get(fbf_flux_kvs *k, fbf_store_item *items, size_t n, fbf_error *err);
int fbf_flux_kvs_put(fbf_flux_kvs *k, const fbf_store_item *items, size_t n, fbf_error *err);
void fbf_flux_kvs_release(fbf_flux_kvs *k);

/* "Redis at HOST:PORT" or "memory", for messages. */
const char *fbf_flux_kvs_where(const fbf_flux_kvs *k);

#endif
