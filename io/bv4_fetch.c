/*
 * bv4_fetch: job descriptions from Redis for the session (see
 * bv4_fetch.h).
 *
 * Invariants: descs[0..n) are the parsed descriptions of the message
 * prepared last, in the order of its JOB_SUBMITTED events without `job`;
 * cursor <= n counts those already handed out. They are parsed with the
 * plain cJSON allocator (outside any arena), so they outlive the request's
 * own tree handling and are freed here, at the next prepare.
 */
#include "io/bv4_fetch.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_check.h"

/* Seconds to connect, and to wait for any reply of the server. */
#define FETCH_TIMEOUT_S 30.0

typedef struct pending {
    int index;      /* the event's index in the message */
    const char *id; /* its job_id (in the request's tree) */
} pending;

struct fbf_bv4_fetch {
    fbf_bv4_redis *redis;
    pending *pend;
    fbf_bv4_redis_item *items;
    cJSON **descs;
    size_t n, cap, cursor;
};

fbf_bv4_fetch *fbf_bv4_fetch_create(void) { return calloc(1, sizeof(fbf_bv4_fetch)); }

static void drop_descs(fbf_bv4_fetch *f)
{
    for (size_t i = 0; i < f->n; i++)
        cJSON_Delete(f->descs[i]);
    f->n = f->cursor = 0;
}

void fbf_bv4_fetch_destroy(fbf_bv4_fetch *f)
{
    if (!f)
        return;
    drop_descs(f);
    fbf_bv4_redis_destroy(f->redis);
    free(f->pend);
    free(f->items);
    free(f->descs);
    free(f);
}

fbf_bv4_redis *fbf_bv4_fetch_store(fbf_bv4_fetch *f) { return f->redis; }

const cJSON *fbf_bv4_fetch_next(fbf_bv4_fetch *f)
{
    return f->cursor < f->n ? f->descs[f->cursor++] : NULL;
}

/* A member of the Redis config in either form: the flat "redis-<name>"
 * first, else "redis": {<name>}. *field names what was found. */
static const cJSON *member(const cJSON *config, const char *name, char *field, size_t cap)
{
    char flat[32];
    snprintf(flat, sizeof flat, "redis-%s", name);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, flat);
    if (v) {
        snprintf(field, cap, "data.config.%s", flat);
        return v;
    }
    snprintf(field, cap, "data.config.redis.%s", name);
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(config, "redis"),
                                            name);
}

static const char *kind_of(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return "a number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    return cJSON_IsArray(v) ? "an array" : "an object";
}

static int on_begins(fbf_bv4_fetch *f, const cJSON *data, FILE *log, fbf_error *err)
{
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(data, "config");
    char field[64];
    const cJSON *on = member(config, "enabled", field, sizeof field);
    if (!cJSON_IsTrue(on))
        return 0;
    const cJSON *host = member(config, "hostname", field, sizeof field);
    if (host && (!cJSON_IsString(host) || !host->valuestring[0]))
        return fbf_errorf(err, -EPROTO, "%s: expected a host name, got %s", field,
                          cJSON_IsString(host) ? "an empty string" : kind_of(host));
    const cJSON *port = member(config, "port", field, sizeof field);
    if (port && !(cJSON_IsNumber(port) && port->valuedouble >= 1 &&
                  port->valuedouble <= 65535 && port->valuedouble == floor(port->valuedouble)))
        return fbf_errorf(err, -EPROTO, "%s: expected an integer in [1, 65535], got %s", field,
                          kind_of(port));
    const cJSON *prefix = member(config, "prefix", field, sizeof field);
    if (prefix && !cJSON_IsString(prefix))
        return fbf_errorf(err, -EPROTO, "%s: expected a string, got %s", field,
                          kind_of(prefix));
    f->redis = fbf_bv4_redis_connect(host ? host->valuestring : "127.0.0.1",
                                     port ? (int)port->valuedouble : 6379,
                                     prefix ? prefix->valuestring : NULL, FETCH_TIMEOUT_S, err);
    if (!f->redis)
        return -ECONNREFUSED;
    if (log)
        fprintf(log, "fastbf: Redis mode: job descriptions from %s, prefix \"%s\"\n",
                fbf_bv4_redis_where(f->redis), fbf_bv4_redis_prefix(f->redis));
    return 0;
}

static int grow(fbf_bv4_fetch *f)
{
    size_t cap = f->cap ? 2 * f->cap : 64;
    pending *p = realloc(f->pend, cap * sizeof *p);
    if (p)
        f->pend = p;
    fbf_bv4_redis_item *it = realloc(f->items, cap * sizeof *it);
    if (it)
        f->items = it;
    cJSON **d = realloc(f->descs, cap * sizeof *d);
    if (d)
        f->descs = d;
    if (!p || !it || !d)
        return -ENOMEM;
    f->cap = cap;
    return 0;
}

/* Parses and checks the description of pending entry i. */
static int take(fbf_bv4_fetch *f, size_t i, fbf_error *err)
{
    const fbf_bv4_redis_item *it = &f->items[i];
    char key[160];
    fbf_bv4_redis_key(f->redis, FBF_BV4_REDIS_JOB, it->name, key, sizeof key);
    if (!it->value)
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\" does not exist (job %s has no "
                          "description)", key, it->name);
    cJSON *d = cJSON_ParseWithLength(it->value, it->len);
    if (!d) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= it->value && at <= it->value + it->len ? (long)(at - it->value)
                                                                      : -1;
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\": malformed JSON near byte %ld", key,
                          off);
    }
    f->descs[f->n++] = d;
    if (!cJSON_IsObject(d))
        return fbf_errorf(err, -EPROTO, "Redis key \"%s\": expected a JSON object (the job's "
                          "description), got %s", key, kind_of(d));
    fbf_error inner;
    int rc = fbf_bv4_check_job(d, it->name, &inner);
    return rc < 0 ? fbf_errorf(err, rc, "Redis key \"%s\": %s", key, inner.text) : 0;
}

static int fetch_all(fbf_bv4_fetch *f, size_t npend, fbf_error *err)
{
    fbf_error inner;
    int rc = fbf_bv4_redis_get(f->redis, FBF_BV4_REDIS_JOB, f->items, npend, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "event %d (JOB_SUBMITTED): %s", f->pend[0].index,
                          inner.text);
    for (size_t i = 0; i < npend && rc == 0; i++)
        if ((rc = take(f, i, &inner)) < 0)
            fbf_errorf(err, rc, "event %d (JOB_SUBMITTED): %s", f->pend[i].index, inner.text);
    fbf_bv4_redis_release(f->redis);
    return rc;
}

int fbf_bv4_fetch_prepare(fbf_bv4_fetch *f, const cJSON *events, FILE *log, fbf_error *err)
{
    drop_descs(f);
    size_t npend = 0;
    int index = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
        int rc = 0;
        fbf_error inner;
        switch (fbf_bv4_event_of(ev)) {
        case FBF_BV4_SIMULATION_BEGINS:
            if ((rc = on_begins(f, data, log, &inner)) < 0)
                return fbf_errorf(err, rc, "event %d (SIMULATION_BEGINS): %s", index,
                                  inner.text);
            break;
        case FBF_BV4_JOB_SUBMITTED:
            if (cJSON_GetObjectItemCaseSensitive(data, "job"))
                break;
            if (!f->redis)
                return fbf_errorf(err, -EPROTO, "event %d (JOB_SUBMITTED): data.job: expected "
                                  "an object (fastbf needs job descriptions), got nothing",
                                  index);
            if (npend == f->cap && grow(f) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
            f->pend[npend].index = index;
            f->pend[npend].id =
                cJSON_GetObjectItemCaseSensitive(data, "job_id")->valuestring;
            f->items[npend] = (fbf_bv4_redis_item){.name = f->pend[npend].id};
            npend++;
            break;
        default: break;
        }
        index++;
    }
    return npend ? fetch_all(f, npend, err) : 0;
}
