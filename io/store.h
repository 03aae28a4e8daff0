/*
 * store: Batsim's Redis store of job data (v4's Redis mode, and the v2
 * text protocol's only store), behind a small contract (hiredis
 * underneath; nothing else in fastbf sees hiredis).
 *
 * Batsim's conventions (its "Using Redis" documentation and its
 * RedisStorage): every key is the instance prefix (--redis-prefix,
 * "default" unless set), a colon, then
 *   job_<job id>                  the job's JSON description, e.g.
 *                                 "default:job_w0!1" -> {"id":"w0!1","res":2,...}
 *   profile_<workload>!<profile>  the profile's JSON description, e.g.
 *                                 "default:profile_w0!delay10" -> {"type":"delay",...}
 *   nb_res                        the platform's number of machines, in decimal
 * Values are the JSON texts, stored with plain SET / read with GET.
 *
 * Batches: fbf_store_get() and fbf_store_set() pipeline their
 * commands (a few thousand at a time), so a message submitting many jobs
 * costs a handful of round trips, not one per job.
 *
 * Ownership: fbf_store_connect() returns a handle the caller frees
 * with fbf_store_destroy() (NULL accepted). Values returned by a get
 * are owned by the handle and valid until the next get, set or release.
 * One handle belongs to one thread.
 *
 * Errors: 0 or a negative errno code with one line in err:
 *   -ECONNREFUSED  the server cannot be reached: host, port and hiredis's
 *                  own message ("Connection refused", a name that does not
 *                  resolve...)
 *   -EIO           the connection failed later (closed, no reply within the
 *                  timeout; a write names the key whose reply never came);
 *                  the handle is then unusable but for destroy
 *   -EPROTO        the server answered a command with an error (the key and
 *                  the server's text are named)
 *   -ENOMEM, -EINVAL (a bad argument: port out of range, empty host)
 * A key that does not exist is no error: its value is NULL.
 */
#ifndef FBF_STORE_H
#define FBF_STORE_H

#include <stddef.h>

#include "engine/error.h"

typedef struct fbf_store fbf_store;

/* What a name designates, i.e. the key's form after "<prefix>:". */
typedef enum fbf_store_kind {
    FBF_STORE_JOB,     /* job_<name>; name is the job id, "w0!1" */
    FBF_STORE_PROFILE, /* profile_<name>; name is "<workload>!<profile>" */
    FBF_STORE_PLAIN,   /* <name> itself, e.g. "nb_res" */
    FBF_STORE_RAW,     /* the name alone, without the prefix: Flux's RFC 16
                        * keys, "job.0000.0004.b200.0000.R" */
} fbf_store_kind;

typedef struct fbf_store_item {
    const char *name;  /* see fbf_store_kind */
    const char *value; /* set: the text stored; get: the text read, NULL when no such key */
    size_t len;        /* of value */
} fbf_store_item;

/* Batsim's default prefix. */
#define FBF_STORE_DEFAULT_PREFIX "default"

/* Connects within timeout_s seconds, which also bounds every later wait
 * for a reply. prefix NULL means Batsim's default. */
fbf_store *fbf_store_connect(const char *host, int port, const char *prefix,
                                     double timeout_s, fbf_error *err);
void fbf_store_destroy(fbf_store *r);

/* "host:port", for messages. */
const char *fbf_store_where(const fbf_store *r);
const char *fbf_store_prefix(const fbf_store *r);

/* The full key of (kind, name) into buf, as snprintf: the return value is
 * the key's length even when it did not fit. */
size_t fbf_store_key(const fbf_store *r, fbf_store_kind kind, const char *name,
                         char *buf, size_t cap);

/* Reads the n keys of items[].name (one pipeline) into items[].value and
 * .len. */
int fbf_store_get(fbf_store *r, fbf_store_kind kind, fbf_store_item *items,
                      size_t n, fbf_error *err);

/* Stores items[].value under each items[].name (one pipeline). */
int fbf_store_set(fbf_store *r, fbf_store_kind kind,
                      const fbf_store_item *items, size_t n, fbf_error *err);

/* Stores items[i].value under the key of (kinds[i], items[i].name), all n
 * in one pipeline: a batch that mixes jobs and profiles (a scheduler
 * registering jobs). */
int fbf_store_set_kinds(fbf_store *r, const fbf_store_kind *kinds,
                            const fbf_store_item *items, size_t n, fbf_error *err);

/* Deletes the n keys of items[].name (one pipeline); a key that does not
 * exist is no error. */
int fbf_store_del(fbf_store *r, fbf_store_kind kind, const fbf_store_item *items, size_t n,
                  fbf_error *err);

/* Gives back the values of the last get early. */
void fbf_store_release(fbf_store *r);

/* One-key conveniences: a job by id, a profile by workload and name (as
 * REGISTER_JOB / REGISTER_PROFILE name them). *json is NULL when absent. */
int fbf_store_get_job(fbf_store *r, const char *job_id, const char **json, size_t *len,
                          fbf_error *err);
int fbf_store_get_profile(fbf_store *r, const char *workload, const char *profile,
                              const char **json, size_t *len, fbf_error *err);
int fbf_store_set_job(fbf_store *r, const char *job_id, const char *json,
                          fbf_error *err);
int fbf_store_set_profile(fbf_store *r, const char *workload, const char *profile,
                              const char *json, fbf_error *err);

#endif
