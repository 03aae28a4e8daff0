/*
 * dynamic: Batsim's side of dynamic job registration and of the
 * estimate_waiting_time queries (time model and invariants in replay.h).
 *
 * Registration checks, as Batsim applies them (every failure stops the run
 * with exit code 2 and names the message, event, job and field):
 *   - dynamic jobs must be enabled (--dynamic-jobs) and registration open:
 *     not after NOTIFY registration_finished unless continue_registration
 *     re-opened it;
 *   REGISTER_PROFILE: workload_name and profile_name non-empty strings;
 *     profile an object of type "delay" (the only one the replayer runs)
 *     with a number delay >= 0; the pair must not exist yet (registered, or
 *     a profile of the input workload under one of its workload names);
 *   REGISTER_JOB: job_id a string "workload!name" (both parts non-empty,
 *     a single '!'), new; job an object (Batsim parses it as a workload's job) whose id
 *     is job_id or its name part (Batsim adds the workload), string or
 *     integer; profile a string naming a profile of the job's workload
 *     (registered, or from the input when the workload is one
 *     SIMULATION_BEGINS listed); res an integer in [1, 2^31 - 1] (a JSON
 *     int for Batsim); walltime, when given, -1 or > 0; subtime a number
 *     >= 0 (mandatory; Batsim then submits the job now whatever it says).
 *   Redis mode (--redis): REGISTER_JOB's description is read from
 *     <prefix>:job_<id> (data.job is not read, as Batsim reads the store),
 *     and a profile new to the replayer from <prefix>:profile_<workload>!
 *     <name>, checked as REGISTER_PROFILE's; every message about them names
 *     the key. REGISTER_PROFILE itself is refused: Batsim's Redis mode
 *     has profiles pushed to the store instead.
 *   NOTIFY: only registration_finished (needs open registration) and
 *     continue_registration (needs finished registration), both with
 *     dynamic jobs; Batsim stops on any other type from the scheduler.
 * Answers: data.estimate_waiting_time an object with job_id, a job asked
 * about in this request and not answered yet, and estimated_waiting_time a
 * number >= 0 or -1 (unknown); any other answer is refused.
 *
 * Costs: a registration or an answer costs O(1) expected (hashes), however
 * many jobs and profiles were registered before.
 */
#include "tools/replay/replay.h"

#include <ck_hs.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The workload names jobs carry before their '!': wl->name first, then any
 * other prefix a JSON workload used (a Batsim id names its workload), up to
 * FBF_REPLAY_MAX_WORKLOADS. Every listed workload gets the same profiles,
 * since the replayer's profiles are per file, not per prefix. */
size_t fbf_replay_workload_names(const fbf_workload *wl, char names[][64])
{
    size_t n = 1;
    snprintf(names[0], 64, "%s", wl->name);
    for (size_t i = 0; i < wl->nb_jobs && n < FBF_REPLAY_MAX_WORKLOADS; i++) {
        const char *id = wl->jobs[i].id, *bang = strchr(id, '!');
        size_t len = (size_t)(bang - id), k = 0;
        if (len >= 64)
            continue;
        while (k < n && (strncmp(names[k], id, len) != 0 || names[k][len] != '\0'))
            k++;
        if (k == n) {
            memcpy(names[n], id, len);
            names[n++][len] = '\0';
        }
    }
    return n;
}

/* Profiles by (workload, name): the registered ones, and the input's
 * under a NULL workload (valid for every workload SIMULATION_BEGINS
 * listed). Every REGISTER_JOB and REGISTER_PROFILE looks one up, so a scan
 * made 1e5 registrations quadratic; one hash makes each O(1).
 * fbf_replay exposes only the array r->rprof and its counters (output.c
 * counts them), so the index lives in the same block, just before the
 * array: the shared struct keeps its layout. Keys own their strings;
 * r->rprof[i] points into its key's. */
typedef struct pkey {
    const char *wl; /* NULL: a profile of the input workload */
    size_t wl_len;
    const char *name;
    double delay;
    char text[]; /* registered: "workload\0name\0" */
} pkey;

typedef struct rprof_block {
    ck_hs_t index;
    fbf_rprofile items[];
} rprof_block;

static void *hs_malloc(size_t n) { return malloc(n); }
static void hs_free(void *p, size_t n, bool defer)
{
    (void)n;
    (void)defer;
    free(p);
}
static struct ck_malloc hs_alloc = {.malloc = hs_malloc, .free = hs_free};

static unsigned long pkey_hash(const void *obj, unsigned long seed)
{
    const pkey *k = obj;
    uint64_t h = 1469598103934665603ull ^ seed;
    const unsigned char *s = (const unsigned char *)k->wl;
    for (size_t i = 0; s && i < k->wl_len; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    h = (h ^ (s ? 0x21u : 0x01u)) * 1099511628211ull; /* the input's apart */
    for (s = (const unsigned char *)k->name; *s; s++)
        h = (h ^ *s) * 1099511628211ull;
    return (unsigned long)(h ^ (h >> 29));
}

static bool pkey_eq(const void *a, const void *b)
{
    const pkey *x = a, *y = b;
    if (!x->wl != !y->wl || x->wl_len != y->wl_len)
        return false;
    return (!x->wl || memcmp(x->wl, y->wl, x->wl_len) == 0) && strcmp(x->name, y->name) == 0;
}

static rprof_block *block_of(const fbf_replay *r)
{
    return r->rprof ? (rprof_block *)(void *)((char *)r->rprof - offsetof(rprof_block, items))
                    : NULL;
}

static const pkey *pkey_get(const fbf_replay *r, const pkey *probe)
{
    ck_hs_t *hs = &block_of(r)->index; /* ck_hs_get does not modify */
    return ck_hs_get(hs, CK_HS_HASH(hs, pkey_hash, probe), probe);
}

static bool pkey_put(fbf_replay *r, const pkey *k)
{
    ck_hs_t *hs = &block_of(r)->index;
    return ck_hs_put(hs, CK_HS_HASH(hs, pkey_hash, k), k);
}

/* Creates the block and indexes the input's profiles, at the first
 * registration only: runs without one pay nothing. */
static int ensure_index(fbf_replay *r)
{
    if (r->rprof)
        return 0;
    size_t cap = 16;
    rprof_block *b = malloc(sizeof *b + cap * sizeof b->items[0]);
    if (!b)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (!ck_hs_init(&b->index, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC, pkey_hash, pkey_eq,
                    &hs_alloc, 64 + 2 * r->nb_static_profiles, 0x9e3779b9u)) {
        free(b);
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    }
    r->rprof = b->items;
    r->rprof_cap = cap;
    for (size_t p = 0; p < r->nb_static_profiles; p++) {
        pkey *k = malloc(sizeof *k);
        if (!k)
            return fbf_errorf(&r->err, -ENOMEM, "out of memory");
        *k = (pkey){.name = r->wl->profiles[p].name, .delay = r->wl->profiles[p].delay};
        if (!pkey_put(r, k)) {
            free(k);
            return fbf_errorf(&r->err, -ENOMEM, "out of memory");
        }
    }
    return 0;
}

void fbf_replay_dynamic_fini(fbf_replay *r)
{
    rprof_block *b = block_of(r);
    if (b) {
        ck_hs_iterator_t it = CK_HS_ITERATOR_INITIALIZER;
        void *k;
        while (ck_hs_next(&b->index, &it, &k))
            free(k);
        ck_hs_destroy(&b->index);
        free(b);
    }
    r->rprof = NULL;
    free(r->queries);
}

static bool listed(const fbf_replay *r, const char *wl, size_t len)
{
    for (size_t k = 0; k < r->nwl_names; k++)
        if (strlen(r->wl_names[k]) == len && memcmp(r->wl_names[k], wl, len) == 0)
            return true;
    return false;
}

/* The delay of profile name in workload wl (len bytes), or -1 if none.
 * The index exists (ensure_index()). */
static double find_profile(const fbf_replay *r, const char *wl, size_t len, const char *name)
{
    pkey probe = {.wl = wl, .wl_len = len, .name = name};
    const pkey *k = pkey_get(r, &probe);
    if (!k && listed(r, wl, len)) {
        probe = (pkey){.name = name};
        k = pkey_get(r, &probe);
    }
    return k ? k->delay : -1;
}

/* Records a registered profile; the caller checked it is new. */
static int add_profile(fbf_replay *r, const char *wl, const char *name, double delay)
{
    rprof_block *b = block_of(r);
    if (r->nrprof == r->rprof_cap) {
        size_t cap = 2 * r->rprof_cap;
        rprof_block *nb = realloc(b, sizeof *nb + cap * sizeof nb->items[0]);
        if (!nb)
            return fbf_errorf(&r->err, -ENOMEM, "out of memory");
        /* ck_hs_t holds no pointer to itself: moving it is safe. */
        r->rprof = nb->items;
        r->rprof_cap = cap;
    }
    size_t lw = strlen(wl), ln = strlen(name);
    pkey *k = malloc(sizeof *k + lw + ln + 2);
    if (!k)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    memcpy(k->text, wl, lw + 1);
    memcpy(k->text + lw + 1, name, ln + 1);
    k->wl = k->text;
    k->wl_len = lw;
    k->name = k->text + lw + 1;
    k->delay = delay;
    if (!pkey_put(r, k)) {
        free(k);
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    }
    r->rprof[r->nrprof++] = (fbf_rprofile){.workload = k->text, .name = k->text + lw + 1,
                                           .delay = delay};
    return 0;
}

static int need_open(fbf_replay *r, long ev, const char *type, const char *job)
{
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, type, job, "dynamic jobs are disabled (the replayer runs "
                               "with them only under --dynamic-jobs)");
    if (!r->reg_open)
        return fbf_replay_fail(r, ev, type, job, "registration is finished (NOTIFY "
                               "registration_finished) and was not re-opened with NOTIFY "
                               "continue_registration");
    return 0;
}

static bool nonempty_string(const cJSON *v)
{
    return cJSON_IsString(v) && v->valuestring[0];
}

int fbf_replay_register_profile(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "REGISTER_PROFILE";
    if (need_open(r, ev, T, NULL))
        return -EPROTO;
    /* Batsim's Redis mode has no REGISTER_PROFILE: a profile Batsim does
     * not know is read from the store when a REGISTER_JOB names it. */
    if (r->cfg.redis)
        return fbf_replay_fail(r, ev, T, NULL, "with Redis, profiles go to the store (key "
                               "%s:profile_<workload>!<name>, before the REGISTER_JOB that "
                               "needs them), not through REGISTER_PROFILE",
                               fbf_bv4_redis_prefix(r->cfg.redis));
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(data, "workload_name");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(data, "profile_name");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(data, "profile");
    if (!nonempty_string(wl))
        return fbf_replay_fail(r, ev, T, NULL, "field data.workload_name is missing or not a "
                               "non-empty string");
    if (!nonempty_string(name))
        return fbf_replay_fail(r, ev, T, NULL, "field data.profile_name is missing or not a "
                               "non-empty string");
    if (!cJSON_IsObject(prof))
        return fbf_replay_fail(r, ev, T, NULL, "field data.profile is missing or not an object");
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(prof, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.type is not "
                               "\"delay\" (the only profile type the replayer runs)",
                               wl->valuestring, name->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(prof, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.delay is missing "
                               "or not a number >= 0", wl->valuestring, name->valuestring);
    if (ensure_index(r) < 0)
        return -ENOMEM;
    if (find_profile(r, wl->valuestring, strlen(wl->valuestring), name->valuestring) >= 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s of workload %s already exists",
                               name->valuestring, wl->valuestring);
    return add_profile(r, wl->valuestring, name->valuestring, delay->valuedouble);
}

/* Batsim prefixes a job.id that lacks the workload name with it, then
 * requires the result to be job_id: the full id, or the bare name (a
 * string, or an integer for a numeric name). */
static bool same_job(const cJSON *v, const char *id, const char *bang)
{
    if (cJSON_IsString(v))
        return strcmp(v->valuestring, id) == 0 || strcmp(v->valuestring, bang + 1) == 0;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
        fabs(v->valuedouble) > INT32_MAX)
        return false;
    char buf[16];
    snprintf(buf, sizeof buf, "%d", (int)v->valuedouble);
    return strcmp(buf, bang + 1) == 0;
}

/* Where a REGISTER_JOB's description came from: the message, or in Redis
 * mode the store, whose key every message about it then names. */
typedef struct job_src {
    fbf_replay *r;
    long ev;
    const char *id;
    char key[200]; /* "" when the description is data.job */
} job_src;

static int jfail(const job_src *js, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jfail(const job_src *js, const char *fmt, ...)
{
    char why[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!js->key[0])
        return fbf_replay_fail(js->r, js->ev, "REGISTER_JOB", js->id, "%s", why);
    return fbf_replay_fail(js->r, js->ev, "REGISTER_JOB", js->id, "%s (data.job is Redis key "
                           "\"%s\")", why, js->key);
}

/* Redis mode: the profile the job names, new to the replayer, from the
 * store, checked as REGISTER_PROFILE's would be, then recorded; its
 * delay in *delay. 0, or -EPROTO / -ENOMEM (r->err set). */
static int store_profile(const job_src *js, const char *wl, size_t len, const char *name,
                         double *delay_out)
{
    fbf_replay *r = js->r;
    char pname[256], key[300];
    snprintf(pname, sizeof pname, "%.*s!%s", (int)len, wl, name);
    fbf_bv4_redis_key(r->cfg.redis, FBF_BV4_REDIS_PROFILE, pname, key, sizeof key);
    fbf_error e;
    fbf_bv4_redis_item it = {.name = pname};
    if (fbf_bv4_redis_get(r->cfg.redis, FBF_BV4_REDIS_PROFILE, &it, 1, &e) < 0)
        return jfail(js, "reading profile '%.60s': %s", name, e.text);
    if (!it.value)
        return jfail(js, "unknown profile '%.60s' in workload %.*s: Redis key \"%s\" does not "
                     "exist (with Redis, profiles go to the store before REGISTER_JOB)", name,
                     (int)len, wl, key);
    cJSON *p = cJSON_ParseWithLength(it.value, it.len);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
    double d = -1;
    int rc = -EPROTO;
    if (!cJSON_IsObject(p))
        jfail(js, "Redis key \"%s\": not a JSON object (a profile description)", key);
    else if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0)
        jfail(js, "Redis key \"%s\": type is not \"delay\" (the only profile type the "
              "replayer runs)", key);
    else if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        jfail(js, "Redis key \"%s\": delay is missing or not a number >= 0", key);
    else
        d = delay->valuedouble;
    cJSON_Delete(p);
    if (d >= 0) {
        char wname[256];
        snprintf(wname, sizeof wname, "%.*s", (int)len, wl);
        rc = add_profile(r, wname, name, d);
        *delay_out = d;
    }
    return rc;
}
/* The checks of a REGISTER_JOB's description, wherever it came from, and
 * the registration. */
static int register_desc(job_src *js, const cJSON *job, double at)
{
    fbf_replay *r = js->r;
    const char *id = js->id, *bang = strchr(id, '!');
    if (!cJSON_IsObject(job))
        return jfail(js, "field data.job is missing or not an object");
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job, "id");
    if (!v)
        return jfail(js, "field data.job.id is missing (Batsim parses the job as a workload's, "
                     "where id is mandatory)");
    if (!same_job(v, id, bang))
        return jfail(js, "data.job.id names another job than data.job_id (it must be the "
                     "job_id, or its name after the '!')");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(job, "profile");
    if (!cJSON_IsString(prof))
        return jfail(js, "field data.job.profile is missing or not a string");
    if (ensure_index(r) < 0)
        return -ENOMEM;
    double delay = find_profile(r, id, (size_t)(bang - id), prof->valuestring);
    if (delay < 0 && r->cfg.redis) {
        int rc = store_profile(js, id, (size_t)(bang - id), prof->valuestring, &delay);
        if (rc < 0)
            return rc;
    } else if (delay < 0)
        return jfail(js, "unknown profile '%.60s' in workload %.*s (register it first with "
                     "REGISTER_PROFILE)", prof->valuestring, (int)(bang - id), id);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(job, "res");
    if (!cJSON_IsNumber(res) || res->valuedouble != floor(res->valuedouble) ||
        !(res->valuedouble >= 1) || res->valuedouble > INT32_MAX)
        return jfail(js, "field data.job.res is missing or not an integer in [1, %d]",
                     INT32_MAX);
    double walltime = -1;
    v = cJSON_GetObjectItemCaseSensitive(job, "walltime");
    if (v) {
        if (!cJSON_IsNumber(v) || !(v->valuedouble == -1 || v->valuedouble > 0) ||
            isinf(v->valuedouble))
            return jfail(js, "data.job.walltime is not -1 nor a number > 0");
        walltime = v->valuedouble;
    }
    v = cJSON_GetObjectItemCaseSensitive(job, "subtime");
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || isinf(v->valuedouble))
        return jfail(js, "field data.job.subtime is missing or not a number >= 0 (Batsim "
                     "requires it, then submits the job now)");
    if (!fbf_replay_grow((void **)&r->jobs, &r->jobs_cap, r->wl->nb_jobs + 1, sizeof *r->jobs))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_error werr;
    int rc = fbf_workload_add_job_profile(r->wl, id, at, delay, walltime,
                                          (int64_t)res->valuedouble, prof->valuestring, &werr);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return jfail(js, "%s", werr.text);
    uint32_t ji = (uint32_t)(r->wl->nb_jobs - 1);
    r->jobs[ji] = (fbf_rjob){.state = FBF_RJ_WAITING};
    r->submitted++;
    r->waiting++;
    r->registered++;
    if (r->cfg.dyn_acks)
        fbf_replay_heap_push(r, at, FBF_EV_ACK, ji, r->seq++);
    return 0;
}

int fbf_replay_register_job(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "REGISTER_JOB";
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(data, "job_id");
    const char *id = cJSON_IsString(jid) ? jid->valuestring : NULL;
    if (need_open(r, ev, T, id))
        return -EPROTO;
    if (!id)
        return fbf_replay_fail(r, ev, T, NULL, "field data.job_id is missing or not a string");
    /* Batsim splits job_id at '!' into exactly two parts. */
    const char *bang = strchr(id, '!');
    if (!bang || bang == id || !bang[1] || strchr(bang + 1, '!'))
        return fbf_replay_fail(r, ev, T, id, "data.job_id is not of the form workload!name "
                               "(both parts non-empty, one '!')");
    if (fbf_workload_find(r->wl, id) >= 0)
        return fbf_replay_fail(r, ev, T, id, "job id already exists (duplicate job ids are "
                               "forbidden)");
    job_src js = {.r = r, .ev = ev, .id = id};
    if (!r->cfg.redis)
        return register_desc(&js, cJSON_GetObjectItemCaseSensitive(data, "job"), at);
    /* Redis mode: Batsim reads the description from the store (a data.job
     * in the message is not read). */
    fbf_bv4_redis_key(r->cfg.redis, FBF_BV4_REDIS_JOB, id, js.key, sizeof js.key);
    const char *text;
    size_t len;
    fbf_error e;
    if (fbf_bv4_redis_get_job(r->cfg.redis, id, &text, &len, &e) < 0)
        return fbf_replay_fail(r, ev, T, id, "reading the job's description: %s", e.text);
    if (!text)
        return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\" does not exist (with Redis, the "
                               "job's description goes to the store before REGISTER_JOB)",
                               js.key);
    cJSON *job = cJSON_ParseWithLength(text, len);
    if (!job)
        return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\": malformed JSON", js.key);
    int rc = register_desc(&js, job, at);
    cJSON_Delete(job);
    return rc;
}

int fbf_replay_notify(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "NOTIFY";
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "type");
    if (!cJSON_IsString(type))
        return fbf_replay_fail(r, ev, T, NULL, "field data.type is missing or not a string");
    bool fin = strcmp(type->valuestring, "registration_finished") == 0;
    bool cont = strcmp(type->valuestring, "continue_registration") == 0;
    if (!fin && !cont)
        return fbf_replay_fail(r, ev, T, NULL, "unknown NOTIFY type '%.40s' (a scheduler "
                               "notifies registration_finished or continue_registration only; "
                               "Batsim stops on any other)", type->valuestring);
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, T, NULL, "%s while dynamic jobs are disabled (the "
                               "replayer runs with them only under --dynamic-jobs)",
                               type->valuestring);
    if (fin && !r->reg_open)
        return fbf_replay_fail(r, ev, T, NULL, "registration_finished while registration is "
                               "already finished");
    if (cont && r->reg_open)
        return fbf_replay_fail(r, ev, T, NULL, "continue_registration while registration is "
                               "open (it follows a registration_finished)");
    r->reg_open = cont;
    r->continues += cont;
    return 0;
}

void fbf_replay_emit_queries(fbf_replay *r, size_t *count)
{
    fbf_jbuf *b = &r->msg;
    for (size_t i = 0; i < r->nqueries; i++) {
        uint32_t ji = r->queries[i];
        const fbf_wl_job *wj = &r->wl->jobs[ji];
        fbf_replay_ev_open(r, count, r->req_now, "QUERY");
        fbf_jbuf_lit(b, "{\"requests\":{\"estimate_waiting_time\":{\"job_id\":");
        fbf_jbuf_str(b, wj->id);
        fbf_jbuf_lit(b, ",\"job\":{\"res\":");
        fbf_jbuf_int(b, wj->res);
        fbf_jbuf_lit(b, ",\"walltime\":");
        fbf_jbuf_num(b, wj->walltime);
        fbf_jbuf_lit(b, "}}}}}");
        r->jobs[ji].pred = FBF_PRED_PENDING;
    }
}

int fbf_replay_answer(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "ANSWER";
    const cJSON *est = cJSON_GetObjectItemCaseSensitive(data, "estimate_waiting_time");
    if (!cJSON_IsObject(est) || cJSON_GetArraySize(data) != 1)
        return fbf_replay_fail(r, ev, T, NULL, "data must hold exactly one object "
                               "estimate_waiting_time (the only query the replayer asks)");
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(est, "job_id");
    if (!cJSON_IsString(jid))
        return fbf_replay_fail(r, ev, T, NULL, "field data.estimate_waiting_time.job_id is "
                               "missing or not a string");
    int64_t ji = fbf_workload_find(r->wl, jid->valuestring);
    if (ji < 0 || r->jobs[ji].pred != FBF_PRED_PENDING)
        return fbf_replay_fail(r, ev, T, jid->valuestring, "no QUERY about this job is waiting "
                               "for an answer (%s)", ji < 0 ? "unknown job"
                               : r->jobs[ji].pred == FBF_PRED_NONE ? "never asked"
                                                                    : "already answered");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(est, "estimated_waiting_time");
    if (!cJSON_IsNumber(w) || !(w->valuedouble >= 0 || w->valuedouble == -1) ||
        isinf(w->valuedouble))
        return fbf_replay_fail(r, ev, T, jid->valuestring, "data.estimate_waiting_time."
                               "estimated_waiting_time is missing or not a number >= 0 or -1");
    fbf_rjob *j = &r->jobs[ji];
    if (w->valuedouble < 0) {
        j->pred = FBF_PRED_UNKNOWN;
        r->answered_unknown++;
    } else {
        j->pred = FBF_PRED_VALUE;
        j->pred_start = r->req_now + w->valuedouble;
    }
    r->answered++;
    return 0;
}

int fbf_replay_answers_done(fbf_replay *r)
{
    for (size_t i = 0; i < r->nqueries; i++) {
        uint32_t ji = r->queries[i];
        if (r->jobs[ji].pred == FBF_PRED_PENDING)
            return fbf_replay_fail(r, -1, NULL, NULL, "no ANSWER to the QUERY "
                                   "estimate_waiting_time about job %s (the request asked %zu)",
                                   r->wl->jobs[ji].id, r->nqueries);
    }
    r->nqueries = 0;
    return 0;
}
