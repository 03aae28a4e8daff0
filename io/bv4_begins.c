/*
 * bv4_begins: what Batsim v4's SIMULATION_BEGINS says to a scheduler (see
 * bv4_begins.h).
 */
#include "io/bv4_begins.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "io/bv4_power.h"
#include "io/job_json.h"

static const cJSON *get(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

/* A boolean of the config, flat or nested (a flat member wins); absent
 * is false, any other type an error: "yes" must not read as false. */
static int flag(const cJSON *config, const char *flat, const char *group, const char *sub,
                const char *key, bool *out, fbf_error *err)
{
    char field[96];
    const cJSON *v = get(config, flat);
    if (v) {
        snprintf(field, sizeof field, "data.config.%s", flat);
    } else if (group) {
        const cJSON *g = get(config, group);
        if (sub)
            g = get(g, sub);
        v = get(g, key);
        snprintf(field, sizeof field, "data.config.%s.%s%s%s", group, sub ? sub : "",
                 sub ? "." : "", key);
    }
    if (v && !cJSON_IsBool(v))
        return fbf_errorf(err, -EPROTO, "%s: expected true or false, got %s", field,
                          fbf_job_json_kind(v));
    *out = cJSON_IsTrue(v);
    return 0;
}

/* A member of the Redis config in either form: the flat "redis-<name>"
 * first, else "redis": {<name>}. *field names what was found. */
static const cJSON *member(const cJSON *config, const char *name, char *field, size_t cap)
{
    char flat[32];
    snprintf(flat, sizeof flat, "redis-%s", name);
    const cJSON *v = get(config, flat);
    if (v) {
        snprintf(field, cap, "data.config.%s", flat);
        return v;
    }
    snprintf(field, cap, "data.config.redis.%s", name);
    return get(get(config, "redis"), name);
}

static int read_store(const cJSON *config, fbf_begins *b, fbf_error *err)
{
    char field[64];
    const cJSON *on = member(config, "enabled", field, sizeof field);
    if (on && !cJSON_IsBool(on))
        return fbf_errorf(err, -EPROTO, "%s: expected true or false, got %s", field,
                          fbf_job_json_kind(on));
    if (!cJSON_IsTrue(on))
        return 0;
    const cJSON *host = member(config, "hostname", field, sizeof field);
    if (host && (!cJSON_IsString(host) || !host->valuestring[0]))
        return fbf_errorf(err, -EPROTO, "%s: expected a host name, got %s", field,
                          cJSON_IsString(host) ? "an empty string" : fbf_job_json_kind(host));
    const cJSON *port = member(config, "port", field, sizeof field);
    if (port && !(cJSON_IsNumber(port) && port->valuedouble >= 1 &&
                  port->valuedouble <= 65535 && port->valuedouble == floor(port->valuedouble)))
        return fbf_errorf(err, -EPROTO, "%s: expected an integer in [1, 65535], got %s", field,
                          fbf_job_json_kind(port));
    const cJSON *prefix = member(config, "prefix", field, sizeof field);
    if (prefix && !cJSON_IsString(prefix))
        return fbf_errorf(err, -EPROTO, "%s: expected a string, got %s", field,
                          fbf_job_json_kind(prefix));
    b->store.enabled = true;
    b->store.host = host ? host->valuestring : NULL;
    b->store.port = port ? (int)port->valuedouble : 0;
    b->store.prefix = prefix ? prefix->valuestring : NULL;
    return 0;
}

static int read_config(const cJSON *config, fbf_begins *b, fbf_error *err)
{
    int rc = flag(config, "dynamic-jobs-enabled", "job_submission", "from_scheduler", "enabled",
                  &b->dynamic_jobs, err);
    if (rc == 0)
        rc = flag(config, "dynamic-jobs-acknowledged", "job_submission", "from_scheduler",
                  "acknowledge", &b->dynamic_acks, err);
    if (rc == 0)
        rc = flag(config, "profile-reuse-enabled", NULL, NULL, NULL, &b->profile_reuse, err);
    return rc < 0 ? rc : read_store(config, b, err);
}

static int bad(fbf_error *err, const char *field, const char *want, const cJSON *got)
{
    return fbf_errorf(err, -EPROTO, "%s: expected %s, got %s", field, want,
                      fbf_job_json_kind(got));
}

#define NEED(cond, field, want, got)                                                           \
    do {                                                                                       \
        if (!(cond))                                                                           \
            return bad(err, field, want, got);                                                 \
    } while (0)

/* The compute machines: the ids of compute_resources when given, else
 * 0..nb_compute_resources-1 (else 0..nb_resources-1). */
static int compute_set(fbf_idset *out, const cJSON *data, const cJSON *nb, const cJSON *nc,
                       fbf_error *err)
{
    fbf_idset_clear(out);
    const cJSON *cr = get(data, "compute_resources");
    int rc = 0;
    if (!cr) {
        double n = (nc ? nc : nb)->valuedouble;
        rc = fbf_idset_add_range(out, 0, (uint32_t)n - 1);
        return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
    }
    NEED(cJSON_IsArray(cr), "data.compute_resources", "an array", cr);
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cr)
    {
        const cJSON *id = get(r, "id");
        NEED(cJSON_IsObject(r) && fbf_job_json_is_int(id) && id->valuedouble >= 0 &&
                 id->valuedouble < nb->valuedouble,
             "data.compute_resources[].id", "a resource number below nb_resources",
             cJSON_IsObject(r) ? id : r);
        n++;
    }
    if (n == 0)
        return fbf_errorf(err, -EPROTO, "data.compute_resources: empty");
    double want = nc ? nc->valuedouble : nb->valuedouble;
    if (nc ? n != (int)want : n > (int)want)
        return fbf_errorf(err, -EPROTO, "data.compute_resources: %d entries for %s %d", n,
                          nc ? "nb_compute_resources" : "nb_resources", (int)want);
    cJSON_ArrayForEach(r, cr)
    {
        uint32_t id = (uint32_t)get(r, "id")->valuedouble;
        if (fbf_idset_contains(out, id))
            return fbf_errorf(err, -EPROTO, "data.compute_resources: id %u listed twice", id);
        if ((rc = fbf_idset_add_range(out, id, id)) < 0)
            return fbf_errorf(err, rc, "out of memory");
    }
    return 0;
}

/* compute_resources[].state, where given. */
static int initial_states(fbf_bv4_decoder *d, const cJSON *data, fbf_error *err)
{
    fbf_begins *b = &d->begins;
    const cJSON *r;
    cJSON_ArrayForEach(r, get(data, "compute_resources"))
    {
        const cJSON *st = get(r, "state");
        if (!st)
            continue;
        if (b->nb_states == d->states_cap) {
            size_t cap = d->states_cap ? 2 * d->states_cap : 64;
            uint32_t *m = realloc(d->state_machines, cap * sizeof *m);
            if (m)
                d->state_machines = m;
            fbf_machine_state *s = realloc(d->states, cap * sizeof *s);
            if (s)
                d->states = s;
            if (!m || !s)
                return fbf_errorf(err, -ENOMEM, "out of memory");
            d->states_cap = cap;
        }
        uint32_t id = (uint32_t)get(r, "id")->valuedouble;
        int rc = fbf_bv4_power_state(st, id, &d->states[b->nb_states], err);
        if (rc < 0)
            return rc;
        d->state_machines[b->nb_states++] = id;
    }
    b->state_machines = d->state_machines;
    b->states = d->states;
    return 0;
}

int fbf_bv4_begins_read(const cJSON *d, fbf_bv4_decoder *k, fbf_error *err)
{
    const cJSON *nb = get(d, "nb_resources");
    NEED(fbf_job_json_is_int(nb) && nb->valuedouble >= 1 &&
             nb->valuedouble <= (double)FBF_IDSET_MAX_ID + 1,
         "data.nb_resources", "an integer in [1, 2^31]", nb);
    const cJSON *nc = get(d, "nb_compute_resources");
    if (nc)
        NEED(fbf_job_json_is_int(nc) && nc->valuedouble >= 1 &&
                 nc->valuedouble <= nb->valuedouble,
             "data.nb_compute_resources", "an integer in [1, nb_resources]", nc);
    const cJSON *config = get(d, "config");
    if (config)
        NEED(cJSON_IsObject(config), "data.config", "an object", config);
    fbf_begins *b = &k->begins;
    *b = (fbf_begins){.compute = &k->compute};
    int rc;
    if ((rc = compute_set(&k->compute, d, nb, nc, err)) < 0 ||
        (rc = read_config(config, b, err)) < 0 || (rc = fbf_bv4_power_pstates(d, b, err)) < 0 ||
        (rc = initial_states(k, d, err)) < 0)
        return rc;
    b->known_profiles = get(d, "profiles");
    return 0;
}
