/*
 * dynamic: Batsim's side of dynamic job registration and of the
 * estimate_waiting_time queries (time model and invariants in replay.h).
 *
 * Registration, as Batsim 4.2.1 checks it, with its abort texts (each
 * stops the run with exit code 2):
 *   - dynamic jobs must be enabled (--dynamic-jobs) and registration open
 *     as it was before the reply: a NOTIFY registration_finished or
 *     continue_registration takes effect after the reply that holds it
 *     (Batsim sets a flag then; a repeated NOTIFY is no error), and any
 *     other NOTIFY type aborts;
 *   REGISTER_PROFILE: the (workload, name) pair must never have existed
 *     (a dropped profile's name stays taken); it creates the workload; a
 *     delay profile only (the one type the replayer runs); also in Redis
 *     mode, where Batsim does not read profiles from the store;
 *   REGISTER_JOB: job_id "workload!name"; data.job given without Redis,
 *     absent with Redis (then read from <prefix>:job_<id>); the workload
 *     must exist (listed in SIMULATION_BEGINS or made by REGISTER_PROFILE);
 *     the id new; then Batsim's Job::from_json: id, subtime (mandatory, then
 *     ignored: the job is submitted now), walltime, res, and a profile of
 *     the workload that was not dropped.
 * Profiles: without --profile-reuse, Batsim drops a job's profile when it
 *   deletes the job (once its JOB_COMPLETED is out, or the message after
 *   its rejection), for the input's workloads too; jobs queued with it
 *   still run, but no REGISTER_JOB can name it again.
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

/* The delay of profile name in workload wl (len bytes), -1 if none,
 * DROPPED if Batsim dropped it. The index exists (ensure_index()). */
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


/* Keys whose delay is not a profile's: a dropped profile (its name stays
 * taken), and a workload that REGISTER_PROFILE created (name ""). */
#define DROPPED (-2.0)
#define WORKLOAD (-3.0)

/* A new key of its own (workload, name); NULL when out of memory. */
static pkey *put_key(fbf_replay *r, const char *wl, size_t lw, const char *name, double delay)
{
    size_t ln = strlen(name);
    pkey *k = malloc(sizeof *k + lw + ln + 2);
    if (!k)
        return NULL;
    memcpy(k->text, wl, lw);
    k->text[lw] = '\0';
    memcpy(k->text + lw + 1, name, ln + 1);
    k->wl = k->text;
    k->wl_len = lw;
    k->name = k->text + lw + 1;
    k->delay = delay;
    if (!pkey_put(r, k)) {
        free(k);
        return NULL;
    }
    return k;
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
    pkey *k = put_key(r, wl, strlen(wl), name, delay);
    if (!k)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    r->rprof[r->nrprof++] = (fbf_rprofile){.workload = k->text, .name = k->text + k->wl_len + 1,
                                           .delay = delay};
    return 0;
}

/* Batsim knows workload wl: one of the input's, or made by REGISTER_PROFILE. */
static bool workload_exists(const fbf_replay *r, const char *wl, size_t len)
{
    pkey probe = {.wl = wl, .wl_len = len, .name = ""};
    return listed(r, wl, len) || (r->rprof && pkey_get(r, &probe));
}

void fbf_replay_drop_profile(fbf_replay *r, uint32_t job)
{
    if (r->cfg.profile_reuse || !r->cfg.dyn_jobs)
        return;
    if (ensure_index(r) < 0) {
        r->oom = true; /* stops the run before the next send */
        return;
    }
    const char *id = r->wl->jobs[job].id, *bang = strchr(id, '!');
    const char *name = r->wl->profiles[r->wl->jobs[job].profile].name;
    pkey probe = {.wl = id, .wl_len = (size_t)(bang - id), .name = name};
    pkey *k = (pkey *)pkey_get(r, &probe);
    if (k)
        k->delay = DROPPED;
    else if (!put_key(r, id, (size_t)(bang - id), name, DROPPED)) /* shadows the input's */
        r->oom = true;
}

/* Batsim checks a registration against the state before the reply: a
 * NOTIFY of the same reply takes effect after it. */
static int need_open(fbf_replay *r, long ev, const char *type, const char *what)
{
    if (!r->cfg.dyn_jobs)
        return fbf_replay_fail(r, ev, type, NULL, "Invalid JSON message: dynamic %s "
                               "registration received but the option seems disabled... It can "
                               "be activated with the '--enable-dynamic-jobs' command line "
                               "option.", what);
    if (!r->reg_open)
        return fbf_replay_fail(r, ev, type, NULL, "Invalid JSON message: dynamic %s "
                               "registration received but the option has been disabled (a "
                               "registration_finished message have already been received)", what);
    return 0;
}

int fbf_replay_register_profile(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "REGISTER_PROFILE";
    if (need_open(r, ev, T, "profile"))
        return -EPROTO;
    const cJSON *wl = cJSON_GetObjectItemCaseSensitive(data, "workload_name");
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(data, "profile_name");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(data, "profile");
    if (!cJSON_IsString(wl))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['workload_name'] should be a "
                               "string", ev);
    if (!cJSON_IsString(name))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['profile_name'] should be a "
                               "string", ev);
    if (!cJSON_IsObject(prof))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_PROFILE): ['data']['profile'] should be an object", ev);
    if (!wl->valuestring[0] || !name->valuestring[0] || strchr(wl->valuestring, '!'))
        return fbf_replay_fail(r, ev, T, NULL, "data.workload_name and data.profile_name must "
                               "be non-empty (and the workload name without '!') for "
                               "fastbf-replay");
    if (ensure_index(r) < 0)
        return -ENOMEM;
    size_t lw = strlen(wl->valuestring);
    if (find_profile(r, wl->valuestring, lw, name->valuestring) != -1)
        return fbf_replay_fail(r, ev, T, NULL, "Invalid new profile registration: profile '%s' "
                               "already existed in workload '%s'", name->valuestring,
                               wl->valuestring);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(prof, "type");
    if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0)
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.type is not "
                               "\"delay\" (the only profile type the replayer runs)",
                               wl->valuestring, name->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(prof, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_replay_fail(r, ev, T, NULL, "profile %s!%s: data.profile.delay is missing "
                               "or not a number >= 0", wl->valuestring, name->valuestring);
    /* Batsim creates the workload with its first profile. */
    if (!workload_exists(r, wl->valuestring, lw) && !put_key(r, wl->valuestring, lw, "", WORKLOAD))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return add_profile(r, wl->valuestring, name->valuestring, delay->valuedouble);
}

#define JOB_PREFIX "Invalid JSON job submitted by the scheduler"

/* Batsim's reading of a registered job's description (Job::from_json),
 * whose texts it keeps, then the registration. */
static int register_desc(fbf_replay *r, long ev, const char *id, const cJSON *job, double at)
{
    static const char T[] = "REGISTER_JOB";
    const char *bang = strchr(id, '!');
    size_t lw = (size_t)(bang - id);
    if (!cJSON_IsObject(job))
        return fbf_replay_fail(r, ev, T, id, "%s: one job is not an object", JOB_PREFIX);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(job, "id");
    if (!v)
        return fbf_replay_fail(r, ev, T, id, "%s: one job has no 'id' field", JOB_PREFIX);
    bool is_int = cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
                  fabs(v->valuedouble) <= INT32_MAX;
    if (!cJSON_IsString(v) && !is_int)
        return fbf_replay_fail(r, ev, T, id, "%s: on job id field is invalid, it should be a "
                               "string or an integer", JOB_PREFIX);
    /* Batsim prefixes an id that lacks the workload's name, then wants
     * the job_id back. */
    char num[16];
    if (is_int)
        snprintf(num, sizeof num, "%d", (int)v->valuedouble);
    const char *s = is_int ? num : v->valuestring;
    char wl[256];
    snprintf(wl, sizeof wl, "%.*s", (int)lw, id);
    bool same = strstr(s, wl) ? strcmp(s, id) == 0 : strcmp(s, bang + 1) == 0;
    if (!same)
        return fbf_replay_fail(r, ev, T, id, "Internal error (data.job.id '%.60s' names another "
                               "job than data.job_id)", s);
    v = cJSON_GetObjectItemCaseSensitive(job, "subtime");
    if (!v)
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has no 'subtime' field", JOB_PREFIX,
                               id);
    if (!cJSON_IsNumber(v))
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has a non-number 'subtime' field",
                               JOB_PREFIX, id);
    double walltime = -1;
    v = cJSON_GetObjectItemCaseSensitive(job, "walltime");
    if (v && !cJSON_IsNumber(v))
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-number 'walltime' field",
                               JOB_PREFIX, id);
    if (v)
        walltime = v->valuedouble;
    if (!(walltime == -1 || walltime > 0) || isinf(walltime))
        return fbf_replay_fail(r, ev, T, id, "%s: job '%s' has an invalid walltime (%g). It "
                               "should either be -1 (no walltime) or a strictly positive number.",
                               JOB_PREFIX, id, walltime);
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(job, "res");
    if (!res)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has no 'res' field", JOB_PREFIX, id);
    if (!cJSON_IsNumber(res) || res->valuedouble != floor(res->valuedouble) ||
        fabs(res->valuedouble) > INT32_MAX)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-number 'res' field",
                               JOB_PREFIX, id);
    if (res->valuedouble < 0)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a negative 'res' field (%d)",
                               JOB_PREFIX, id, (int)res->valuedouble);
    if (res->valuedouble < 1)
        return fbf_replay_fail(r, ev, T, id, "data.job.res is 0: fastbf-replay runs jobs of "
                               "1 resource or more");
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(job, "profile");
    if (!prof)
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has no 'profile' field", JOB_PREFIX, id);
    if (!cJSON_IsString(prof))
        return fbf_replay_fail(r, ev, T, id, "%s: job %s has a non-string 'profile' field",
                               JOB_PREFIX, id);
    if (ensure_index(r) < 0)
        return -ENOMEM;
    double delay = find_profile(r, id, lw, prof->valuestring);
    if (delay == -1)
        return fbf_replay_fail(r, ev, T, id, "%s: the profile %s for job %s does not exist",
                               JOB_PREFIX, prof->valuestring, id);
    if (delay == DROPPED)
        return fbf_replay_fail(r, ev, T, id, "Cannot get profile '%s': it existed some time ago "
                               "but is no longer accessible", prof->valuestring);
    if (!fbf_replay_grow((void **)&r->jobs, &r->jobs_cap, r->wl->nb_jobs + 1, sizeof *r->jobs))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    fbf_error werr;
    int rc = fbf_workload_add_job_profile(r->wl, id, at, delay, walltime,
                                          (int64_t)res->valuedouble, prof->valuestring, &werr);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return fbf_replay_fail(r, ev, T, id, "%s", werr.text);
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
    if (need_open(r, ev, T, "job"))
        return -EPROTO;
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(data, "job_id");
    if (!cJSON_IsString(jid))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld "
                               "(REGISTER_JOB): ['data']['job_id'] should be a string", ev);
    const char *id = jid->valuestring;
    /* Batsim splits job_id at '!' into exactly two parts (a run of '!'
     * counts as one). */
    const char *bang = strchr(id, '!'), *end = bang;
    while (end && *end == '!')
        end++;
    if (!bang || bang == id || !*end || strchr(end, '!') || end != bang + 1)
        return fbf_replay_fail(r, ev, T, id, "Invalid string job identifier '%s': should be "
                               "formatted as two '!'-separated parts, the second one being any "
                               "string without '!'. Example: 'some_text!42'.", id);
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(data, "job");
    if (job && r->cfg.redis)
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "'job' object is given but redis seems enabled...", ev);
    if (job && !cJSON_IsObject(job))
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "['data']['job'] should be an object", ev);
    if (!job && !r->cfg.redis)
        return fbf_replay_fail(r, ev, T, id, "Invalid JSON message: in event %ld (REGISTER_JOB): "
                               "['data']['job'] is unset but redis seems disabled...", ev);
    cJSON *stored = NULL;
    if (!job) { /* Redis mode: Batsim reads the description from the store */
        const char *text;
        size_t len;
        fbf_error e;
        char key[300];
        fbf_store_key(r->cfg.redis, FBF_STORE_JOB, id, key, sizeof key);
        if (fbf_store_get_job(r->cfg.redis, id, &text, &len, &e) < 0)
            return fbf_replay_fail(r, ev, T, id, "reading the job's description: %s", e.text);
        if (!text)
            return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\" does not exist (with Redis, "
                                   "the job's description goes to the store before "
                                   "REGISTER_JOB)", key);
        stored = cJSON_ParseWithLength(text, len);
        if (!stored)
            return fbf_replay_fail(r, ev, T, id, "Redis key \"%s\": malformed JSON", key);
        job = stored;
    }
    int rc;
    if (!workload_exists(r, id, (size_t)(bang - id)))
        rc = fbf_replay_fail(r, ev, T, id, "Internal error: Workload '%.*s' should exist.",
                             (int)(bang - id), id);
    else if (fbf_workload_find(r->wl, id) >= 0)
        rc = fbf_replay_fail(r, ev, T, id, "Cannot register new job '%s', it already exists in "
                             "the workload.", id);
    else
        rc = register_desc(r, ev, id, job, at);
    cJSON_Delete(stored);
    return rc;
}

int fbf_replay_notify(fbf_replay *r, const cJSON *data, long ev)
{
    static const char T[] = "NOTIFY";
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(data, "type");
    if (!cJSON_IsString(type))
        return fbf_replay_fail(r, ev, T, NULL, "Invalid JSON message: in event %ld (NOTIFY): "
                               "['data']['type'] should be a string", ev);
    bool fin = strcmp(type->valuestring, "registration_finished") == 0;
    bool cont = strcmp(type->valuestring, "continue_registration") == 0;
    if (!fin && !cont)
        return fbf_replay_fail(r, ev, T, NULL, "Unknown NOTIFY type received ('%s').",
                               type->valuestring);
    /* Batsim only sets a flag, after the reply: a repeated or useless
     * NOTIFY is no error. */
    r->reg_next = cont;
    return 0;
}

void fbf_replay_notify_apply(fbf_replay *r)
{
    if (r->reg_next < 0)
        return;
    bool open = r->cfg.dyn_jobs && r->reg_next;
    r->continues += open && !r->reg_open;
    r->reg_open = open;
    r->reg_next = -1;
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
