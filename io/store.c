/*
 * store: Batsim's Redis store through hiredis (see store.h).
 *
 * Invariants: `replies` holds the replies of the last get, whose strings
 * the caller's items point into, and nothing else; `broken` is set once
 * hiredis reported a connection error, after which every call fails
 * without touching the context (hiredis forbids further use).
 * Pipelines are cut into chunks of CHUNK commands: the whole batch of a
 * huge message would otherwise sit in hiredis's output buffer at once.
 */
#include "io/store.h"

#include <errno.h>
#include <hiredis/hiredis.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define CHUNK 4096

struct fbf_store {
    redisContext *c;
    char where[300];
    char *prefix;
    double timeout_s;
    int broken;
    char *key;  /* scratch for building keys */
    size_t key_cap;
    redisReply **replies;
    size_t nreplies, replies_cap;
};

static const char *const kind_head[] = {
    [FBF_STORE_JOB] = "job_",
    [FBF_STORE_PROFILE] = "profile_",
    [FBF_STORE_PLAIN] = "",
    [FBF_STORE_RAW] = "",
};

static struct timeval to_timeval(double s)
{
    struct timeval tv;
    tv.tv_sec = (time_t)s;
    tv.tv_usec = (suseconds_t)((s - floor(s)) * 1e6);
    return tv;
}

fbf_store *fbf_store_connect(const char *host, int port, const char *prefix,
                                     double timeout_s, fbf_error *err)
{
    if (!host || !*host)
        return fbf_errorf(err, -EINVAL, "Redis: no host name given"), NULL;
    if (port < 1 || port > 65535)
        return fbf_errorf(err, -EINVAL, "Redis at %s: port %d is not in 1..65535", host, port),
               NULL;
    if (!(timeout_s > 0) || timeout_s > 1e6)
        timeout_s = 10;
    fbf_store *r = calloc(1, sizeof *r);
    if (!r || !(r->prefix = strdup(prefix ? prefix : FBF_STORE_DEFAULT_PREFIX))) {
        free(r);
        return fbf_errorf(err, -ENOMEM, "out of memory"), NULL;
    }
    snprintf(r->where, sizeof r->where, "%s:%d", host, port);
    r->timeout_s = timeout_s;
    r->c = redisConnectWithTimeout(host, port, to_timeval(timeout_s));
    if (!r->c || r->c->err) {
        fbf_errorf(err, r->c ? -ECONNREFUSED : -ENOMEM,
                   "cannot connect to Redis at %s (host %s, port %d): %s", r->where, host, port,
                   r->c ? r->c->errstr : "out of memory");
        fbf_store_destroy(r);
        return NULL;
    }
    if (redisSetTimeout(r->c, to_timeval(timeout_s)) != REDIS_OK) {
        fbf_errorf(err, -ECONNREFUSED, "Redis at %s: cannot set a timeout: %s", r->where,
                   r->c->errstr);
        fbf_store_destroy(r);
        return NULL;
    }
    return r;
}

void fbf_store_release(fbf_store *r)
{
    for (size_t i = 0; i < r->nreplies; i++)
        freeReplyObject(r->replies[i]);
    r->nreplies = 0;
}

void fbf_store_destroy(fbf_store *r)
{
    if (!r)
        return;
    fbf_store_release(r);
    free(r->replies);
    if (r->c)
        redisFree(r->c);
    free(r->prefix);
    free(r->key);
    free(r);
}

const char *fbf_store_where(const fbf_store *r) { return r->where; }
const char *fbf_store_prefix(const fbf_store *r) { return r->prefix; }

size_t fbf_store_key(const fbf_store *r, fbf_store_kind kind, const char *name,
                         char *buf, size_t cap)
{
    int n = kind == FBF_STORE_RAW ? snprintf(buf, cap, "%s", name)
                                  : snprintf(buf, cap, "%s:%s%s", r->prefix, kind_head[kind], name);
    return n < 0 ? 0 : (size_t)n;
}

/* The key of (kind, name) in r->key; its length, or 0 when out of memory. */
static size_t build_key(fbf_store *r, fbf_store_kind kind, const char *name)
{
    size_t need = fbf_store_key(r, kind, name, r->key, r->key_cap);
    if (need >= r->key_cap) {
        size_t cap = need + 64;
        char *k = realloc(r->key, cap);
        if (!k)
            return 0;
        r->key = k;
        r->key_cap = cap;
        fbf_store_key(r, kind, name, r->key, r->key_cap);
    }
    return need;
}

/* hiredis failed on the connection: say why and refuse any later use. */
static int io_error(fbf_store *r, const char *what, fbf_error *err)
{
    r->broken = 1;
    int timeout = r->c->err == REDIS_ERR_IO && (errno == EAGAIN || errno == EWOULDBLOCK);
    if (timeout)
        return fbf_errorf(err, -EIO, "Redis at %s: %s: no reply within %g s", r->where, what,
                          r->timeout_s);
    return fbf_errorf(err, -EIO, "Redis at %s: %s: %s", r->where, what,
                      r->c->errstr[0] ? r->c->errstr : "connection lost");
}

static int usable(fbf_store *r, fbf_error *err)
{
    if (r->broken)
        return fbf_errorf(err, -EIO, "Redis at %s: the connection failed earlier", r->where);
    return 0;
}

static int append(fbf_store *r, const char *cmd, fbf_store_kind kind,
                  const fbf_store_item *it, bool with_value, fbf_error *err)
{
    size_t klen = build_key(r, kind, it->name);
    if (!klen)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    const char *argv[3] = {cmd, r->key, it->value};
    size_t lens[3] = {strlen(cmd), klen, it->len};
    if (redisAppendCommandArgv(r->c, with_value ? 3 : 2, argv, lens) != REDIS_OK)
        return fbf_errorf(err, -ENOMEM, "Redis: out of memory queueing %s %s", cmd, r->key);
    return 0;
}

static int reply_error(fbf_store *r, const char *cmd, fbf_store_kind kind,
                       const char *name, const redisReply *rep, fbf_error *err)
{
    build_key(r, kind, name);
    return fbf_errorf(err, -EPROTO, "Redis at %s: %s %s: %s", r->where, cmd,
                      r->key ? r->key : name,
                      rep->type == REDIS_REPLY_ERROR ? rep->str : "unexpected reply type");
}

int fbf_store_get(fbf_store *r, fbf_store_kind kind, fbf_store_item *items,
                      size_t n, fbf_error *err)
{
    fbf_store_release(r);
    int rc = usable(r, err);
    if (rc < 0)
        return rc;
    if (n > r->replies_cap) {
        redisReply **p = realloc(r->replies, n * sizeof *p);
        if (!p)
            return fbf_errorf(err, -ENOMEM, "out of memory for %zu Redis replies", n);
        r->replies = p;
        r->replies_cap = n;
    }
    for (size_t base = 0; base < n; base += CHUNK) {
        size_t end = n - base > CHUNK ? base + CHUNK : n;
        for (size_t i = base; i < end; i++)
            if ((rc = append(r, "GET", kind, &items[i], false, err)) < 0)
                return rc;
        for (size_t i = base; i < end; i++) {
            void *rep = NULL;
            if (redisGetReply(r->c, &rep) != REDIS_OK || !rep)
                return io_error(r, "GET", err);
            redisReply *p = rep;
            r->replies[r->nreplies++] = p;
            if (p->type == REDIS_REPLY_NIL) {
                items[i].value = NULL;
                items[i].len = 0;
            } else if (p->type == REDIS_REPLY_STRING) {
                items[i].value = p->str;
                items[i].len = p->len;
            } else {
                /* Drain the rest of the chunk so the connection stays in step. */
                reply_error(r, "GET", kind, items[i].name, p, err);
                for (size_t k = i + 1; k < end; k++) {
                    void *rest = NULL;
                    if (redisGetReply(r->c, &rest) != REDIS_OK)
                        r->broken = 1;
                    if (rest)
                        freeReplyObject(rest);
                }
                return -EPROTO;
            }
        }
    }
    return 0;
}

/* One pipelined write of n items, cmd with or without the item's value,
 * each reply expected of type want: the kind is kinds[i], or `kind` for
 * all when kinds is NULL. */
static int write_all(fbf_store *r, const char *cmd, bool with_value, int want,
                     fbf_store_kind kind, const fbf_store_kind *kinds,
                     const fbf_store_item *items, size_t n, fbf_error *err)
{
    fbf_store_release(r);
    int rc = usable(r, err);
    if (rc < 0)
        return rc;
    for (size_t base = 0; base < n; base += CHUNK) {
        size_t end = n - base > CHUNK ? base + CHUNK : n;
        for (size_t i = base; i < end; i++)
            if ((rc = append(r, cmd, kinds ? kinds[i] : kind, &items[i], with_value, err)) < 0)
                return rc;
        /* Every reply is read, even after a refusal, to keep in step. */
        for (size_t i = base; i < end; i++) {
            fbf_store_kind k = kinds ? kinds[i] : kind;
            void *rep = NULL;
            if (redisGetReply(r->c, &rep) != REDIS_OK || !rep) {
                /* Name the key whose reply never came; errno says whether
                 * it was a timeout, so keep it across the key's building. */
                int saved = errno;
                char what[320];
                snprintf(what, sizeof what, "%s %s", cmd,
                         build_key(r, k, items[i].name) ? r->key : items[i].name);
                errno = saved;
                return io_error(r, what, err);
            }
            redisReply *p = rep;
            if (rc == 0 && p->type != want)
                rc = reply_error(r, cmd, k, items[i].name, p, err);
            freeReplyObject(p);
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

int fbf_store_set(fbf_store *r, fbf_store_kind kind, const fbf_store_item *items, size_t n,
                  fbf_error *err)
{
    return write_all(r, "SET", true, REDIS_REPLY_STATUS, kind, NULL, items, n, err);
}

int fbf_store_del(fbf_store *r, fbf_store_kind kind, const fbf_store_item *items, size_t n,
                  fbf_error *err)
{
    return write_all(r, "DEL", false, REDIS_REPLY_INTEGER, kind, NULL, items, n, err);
}

int fbf_store_set_kinds(fbf_store *r, const fbf_store_kind *kinds, const fbf_store_item *items,
                        size_t n, fbf_error *err)
{
    return write_all(r, "SET", true, REDIS_REPLY_STATUS, 0, kinds, items, n, err);
}

int fbf_store_get_job(fbf_store *r, const char *job_id, const char **json, size_t *len,
                          fbf_error *err)
{
    fbf_store_item it = {.name = job_id};
    int rc = fbf_store_get(r, FBF_STORE_JOB, &it, 1, err);
    *json = rc == 0 ? it.value : NULL;
    if (len)
        *len = rc == 0 ? it.len : 0;
    return rc;
}

/* "<workload>!<profile>", malloc'ed. */
static char *profile_name(const char *workload, const char *profile)
{
    size_t n = strlen(workload) + strlen(profile) + 2;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%s!%s", workload, profile);
    return s;
}

int fbf_store_get_profile(fbf_store *r, const char *workload, const char *profile,
                              const char **json, size_t *len, fbf_error *err)
{
    *json = NULL;
    if (len)
        *len = 0;
    char *name = profile_name(workload, profile);
    if (!name)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    fbf_store_item it = {.name = name};
    int rc = fbf_store_get(r, FBF_STORE_PROFILE, &it, 1, err);
    free(name);
    if (rc == 0) {
        *json = it.value;
        if (len)
            *len = it.len;
    }
    return rc;
}

int fbf_store_set_job(fbf_store *r, const char *job_id, const char *json,
                          fbf_error *err)
{
    fbf_store_item it = {.name = job_id, .value = json, .len = strlen(json)};
    return fbf_store_set(r, FBF_STORE_JOB, &it, 1, err);
}

int fbf_store_set_profile(fbf_store *r, const char *workload, const char *profile,
                              const char *json, fbf_error *err)
{
    char *name = profile_name(workload, profile);
    if (!name)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    fbf_store_item it = {.name = name, .value = json, .len = strlen(json)};
    int rc = fbf_store_set(r, FBF_STORE_PROFILE, &it, 1, err);
    free(name);
    return rc;
}
