/*
 * workload: SWF and Batsim JSON readers; see workload.h for the field rules.
 *
 * Layout: every string (ids, profile names) lives in an append-only arena
 * of chunks, so pointers handed out stay valid while jobs[] grows and no
 * string costs a malloc of its own. Ids and profile names are interned in
 * Concurrency Kit hash sets (ck_hs, object mode): the set stores a pointer
 * to the string, and the 4 bytes just before the string hold its index
 * (job or profile), so one lookup answers "which job is w0!17" without a
 * second table. ck_hs callbacks take no context, which is why the index
 * rides along with the key rather than living in a side array.
 */
#include "tools/lib/workload.h"

#include <cjson/cJSON.h>
#include <ck_hs.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---------- string arena ---------- */

typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t used, cap;
    char data[];
} arena_chunk;

#define ARENA_CHUNK (64u * 1024u)

typedef struct str_map {
    ck_hs_t hs;
    bool live;
} str_map;

struct fbf_wl_priv {
    arena_chunk *chunks;
    str_map ids;
    str_map profiles;
    size_t jobs_cap, profiles_cap;
};

static void *arena_alloc(fbf_wl_priv *p, size_t n)
{
    arena_chunk *c = p->chunks;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = p->chunks;
        c->used = 0;
        c->cap = cap;
        p->chunks = c;
    }
    void *r = c->data + c->used;
    c->used += n;
    return r;
}

/* ---------- interned strings: [uint32 index][chars][NUL] ---------- */

static unsigned long str_hash(const void *obj, unsigned long seed)
{
    /* FNV-1a, 64 bits: ids are short and alike ("w0!1234"), FNV mixes
     * every byte and costs a multiply per byte. */
    const unsigned char *s = obj;
    uint64_t h = 1469598103934665603ull ^ (uint64_t)seed;
    while (*s) {
        h ^= *s++;
        h *= 1099511628211ull;
    }
    return (unsigned long)(h ^ (h >> 29));
}

static bool str_eq(const void *a, const void *b)
{
    return strcmp(a, b) == 0;
}

static void *hs_malloc(size_t n)
{
    return malloc(n);
}

static void hs_free(void *p, size_t n, bool defer)
{
    (void)n;
    (void)defer;
    free(p);
}

static struct ck_malloc hs_allocator = {.malloc = hs_malloc, .free = hs_free};

static int map_init(str_map *m, unsigned long size)
{
    if (!ck_hs_init(&m->hs, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC, str_hash, str_eq,
                    &hs_allocator, size < 64 ? 64 : size, 0x5bd1e995ul))
        return -ENOMEM;
    m->live = true;
    return 0;
}

static void map_fini(str_map *m)
{
    if (m->live)
        ck_hs_destroy(&m->hs);
    m->live = false;
}

static uint32_t interned_index(const char *s)
{
    uint32_t idx;
    memcpy(&idx, s - sizeof idx, sizeof idx);
    return idx;
}

static const char *map_get(const str_map *m, const char *key)
{
    ck_hs_t *hs = (ck_hs_t *)&m->hs; /* ck_hs_get does not write */
    return ck_hs_get(hs, CK_HS_HASH(hs, str_hash, key), key);
}

/* Copies key (len bytes) into the arena with idx before it and adds it to
 * the set. Returns the interned string, or NULL on ENOMEM. */
static const char *map_put(fbf_wl_priv *p, str_map *m, const char *key, size_t len,
                           uint32_t idx)
{
    char *mem = arena_alloc(p, sizeof idx + len + 1);
    if (!mem)
        return NULL;
    memcpy(mem, &idx, sizeof idx);
    char *s = mem + sizeof idx;
    memcpy(s, key, len);
    s[len] = '\0';
    if (!ck_hs_put(&m->hs, CK_HS_HASH(&m->hs, str_hash, s), s))
        return NULL;
    return s;
}

/* ---------- workload building ---------- */

static fbf_workload *wl_new(const char *name, fbf_wl_format fmt, fbf_error *err)
{
    fbf_workload *wl = calloc(1, sizeof *wl);
    fbf_wl_priv *p = calloc(1, sizeof *p);
    if (!wl || !p) {
        free(wl);
        free(p);
        errno = ENOMEM;
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    wl->priv = p;
    wl->format = fmt;
    const char *nm = name ? name : "w0";
    if (strlen(nm) > 256 || strchr(nm, '!')) {
        free(wl);
        free(p);
        errno = EINVAL;
        fbf_errorf(err, -EINVAL, "workload name '%.40s' is too long or contains '!'", nm);
        return NULL;
    }
    char *copy = arena_alloc(p, strlen(nm) + 1);
    if (!copy || map_init(&p->ids, 1024) || map_init(&p->profiles, 64)) {
        fbf_workload_destroy(wl);
        errno = ENOMEM;
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    strcpy(copy, nm);
    wl->name = copy;
    return wl;
}

void fbf_workload_destroy(fbf_workload *wl)
{
    if (!wl)
        return;
    int saved = errno;
    fbf_wl_priv *p = wl->priv;
    if (p) {
        map_fini(&p->ids);
        map_fini(&p->profiles);
        for (arena_chunk *c = p->chunks, *n; c; c = n) {
            n = c->next;
            free(c);
        }
        free(p);
    }
    free(wl->jobs);
    free(wl->profiles);
    free(wl);
    errno = saved;
}

fbf_workload *fbf_workload_create(const char *name, fbf_error *err)
{
    return wl_new(name, FBF_WL_MEMORY, err);
}

int64_t fbf_workload_find(const fbf_workload *wl, const char *id)
{
    const char *s = map_get(&wl->priv->ids, id);
    return s ? (int64_t)interned_index(s) : -1;
}

size_t fbf_workload_skipped_total(const fbf_workload *wl)
{
    size_t n = 0;
    for (int i = 0; i < FBF_WL_SKIP_COUNT; i++)
        n += wl->skipped[i];
    return n;
}

const char *fbf_wl_skip_reason(fbf_wl_skip reason)
{
    switch (reason) {
    case FBF_WL_SKIP_NO_PROCS: return "no processors";
    case FBF_WL_SKIP_NEG_RUNTIME: return "negative run time";
    case FBF_WL_SKIP_NEG_SUBTIME: return "negative submit time";
    case FBF_WL_SKIP_DUPLICATE_ID: return "duplicate job number";
    default: return "?";
    }
}

/* Index of the profile named name, created with delay if new; -1 on ENOMEM. */
static int64_t profile_intern(fbf_workload *wl, const char *name, double delay)
{
    fbf_wl_priv *p = wl->priv;
    const char *s = map_get(&p->profiles, name);
    if (s)
        return interned_index(s);
    if (wl->nb_profiles == p->profiles_cap) {
        size_t cap = p->profiles_cap ? 2 * p->profiles_cap : 16;
        fbf_wl_profile *np = realloc(wl->profiles, cap * sizeof *np);
        if (!np)
            return -1;
        wl->profiles = np;
        p->profiles_cap = cap;
    }
    uint32_t idx = (uint32_t)wl->nb_profiles;
    s = map_put(p, &p->profiles, name, strlen(name), idx);
    if (!s)
        return -1;
    wl->profiles[idx] = (fbf_wl_profile){.name = s, .delay = delay};
    wl->nb_profiles++;
    return idx;
}

/* Shortest decimal that reads back as v: integers plainly, others with
 * the fewest digits that round-trip (profile names stay readable). */
static void format_number(char *buf, size_t cap, double v)
{
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, cap, "%lld", (long long)v);
        return;
    }
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            return;
    }
}

/* Writes the full id ("<name>!raw" when raw has no '!') into buf. */
static int full_id(const fbf_workload *wl, const char *raw, char *buf, size_t cap,
                   fbf_error *err)
{
    int n = strchr(raw, '!') ? snprintf(buf, cap, "%s", raw)
                             : snprintf(buf, cap, "%s!%s", wl->name, raw);
    if (n < 0 || (size_t)n >= cap)
        return fbf_errorf(err, -EINVAL, "job id '%.40s...' is longer than %zu bytes", raw,
                          cap - 1);
    return 0;
}

/* Appends a job whose fields are already checked; id is the full id. */
static int add_checked(fbf_workload *wl, const char *id, double subtime, double runtime,
                       double walltime, int64_t res, uint32_t profile, fbf_error *err)
{
    fbf_wl_priv *p = wl->priv;
    if (map_get(&p->ids, id))
        return fbf_errorf(err, -EEXIST, "job id '%s' appears twice", id);
    if (wl->nb_jobs >= UINT32_MAX - 1)
        return fbf_errorf(err, -EINVAL, "more than %u jobs", UINT32_MAX - 1);
    if (wl->nb_jobs == p->jobs_cap) {
        size_t cap = p->jobs_cap ? 2 * p->jobs_cap : 1024;
        fbf_wl_job *nj = realloc(wl->jobs, cap * sizeof *nj);
        if (!nj)
            return fbf_errorf(err, -ENOMEM, "out of memory at job %zu", wl->nb_jobs);
        wl->jobs = nj;
        p->jobs_cap = cap;
    }
    const char *s = map_put(p, &p->ids, id, strlen(id), (uint32_t)wl->nb_jobs);
    if (!s)
        return fbf_errorf(err, -ENOMEM, "out of memory at job %zu", wl->nb_jobs);
    wl->jobs[wl->nb_jobs++] = (fbf_wl_job){.id = s,
                                           .subtime = subtime,
                                           .runtime = runtime,
                                           .walltime = walltime,
                                           .res = res,
                                           .profile = profile};
    return 0;
}

static int64_t delay_profile(fbf_workload *wl, double runtime)
{
    char name[64] = "delay_";
    format_number(name + 6, sizeof name - 6, runtime);
    return profile_intern(wl, name, runtime);
}

int fbf_workload_add_job(fbf_workload *wl, const char *id, double subtime, double runtime,
                         double walltime, int64_t res, fbf_error *err)
{
    char buf[1024];
    int rc = full_id(wl, id, buf, sizeof buf, err);
    if (rc)
        return rc;
    if (!(runtime >= 0) || isinf(runtime))
        return fbf_errorf(err, -EINVAL, "job %s: runtime %g is not a finite value >= 0", buf,
                          runtime);
    if (!(walltime > 0 || walltime == -1) || isinf(walltime))
        return fbf_errorf(err, -EINVAL, "job %s: walltime %g is neither -1 nor > 0", buf,
                          walltime);
    if (!isfinite(subtime))
        return fbf_errorf(err, -EINVAL, "job %s: subtime is not finite", buf);
    if (map_get(&wl->priv->ids, buf))
        return fbf_errorf(err, -EEXIST, "job id '%s' appears twice", buf);
    int64_t prof = delay_profile(wl, runtime);
    if (prof < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return add_checked(wl, buf, subtime, runtime, walltime, res, (uint32_t)prof, err);
}

/* The walltime a job gets under the options; given is the file's estimate
 * (SWF field 9 or the JSON walltime, <= 0 or -1 when absent). */
static double pick_walltime(const fbf_wl_read_options *o, double given, double runtime,
                            bool json)
{
    switch (o->walltime_mode) {
    case FBF_WL_WALLTIME_RUNTIME:
        return runtime > 0 ? runtime : 1;
    case FBF_WL_WALLTIME_FACTOR: {
        double w = o->walltime_factor * runtime;
        return w >= 1 ? w : 1;
    }
    case FBF_WL_WALLTIME_FIELD9:
    default:
        if (given > 0)
            return given;
        if (json)
            return -1; /* Batsim's "no walltime" stays as it is */
        return runtime > 0 ? runtime : 1;
    }
}

/* ---------- file access ---------- */

static gzFile open_input(const char *path, fbf_error *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        fbf_errorf(err, -e, "cannot open '%s': %s", path, strerror(e));
        errno = e;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        fbf_errorf(err, -EISDIR, "cannot read '%s': it is a directory", path);
        errno = EISDIR;
        return NULL;
    }
    gzFile gz = gzdopen(fd, "rb");
    if (!gz) {
        close(fd);
        fbf_errorf(err, -ENOMEM, "cannot open '%s': out of memory", path);
        errno = ENOMEM;
        return NULL;
    }
    gzbuffer(gz, 256 * 1024);
    return gz;
}

/* NULL when the stream is fine; the zlib message otherwise. */
static const char *gz_failure(gzFile gz)
{
    int zerr = Z_OK;
    const char *msg = gzerror(gz, &zerr);
    if (zerr == Z_OK || zerr == Z_STREAM_END)
        return NULL;
    if (zerr == Z_ERRNO)
        return strerror(errno);
    return msg;
}

/* Reads one line (without its newline) into *buf, growing it. Returns 1
 * with a line, 0 at end of file. */
static int read_line(gzFile gz, char **buf, size_t *cap, size_t *len)
{
    *len = 0;
    for (;;) {
        if (*cap - *len < 2) {
            size_t ncap = *cap ? 2 * *cap : 4096;
            char *nb = realloc(*buf, ncap);
            if (!nb)
                return -ENOMEM;
            *buf = nb;
            *cap = ncap;
        }
        if (!gzgets(gz, *buf + *len, (int)(*cap - *len > INT_MAX ? INT_MAX : *cap - *len)))
            return *len > 0;
        *len += strlen(*buf + *len);
        if (*len > 0 && (*buf)[*len - 1] == '\n') {
            (*buf)[--*len] = '\0';
            if (*len > 0 && (*buf)[*len - 1] == '\r')
                (*buf)[--*len] = '\0';
            return 1;
        }
    }
}

/* ---------- SWF ---------- */

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* Parses the next whitespace-separated number at *pp. 1: parsed; 0: no
 * more tokens; -1: a token that is not a number (*pp left at it). The
 * integer path avoids strtod, which dominates reading otherwise. */
static int next_number(const char **pp, double *out)
{
    const char *s = *pp;
    while (is_space(*s))
        s++;
    if (!*s) {
        *pp = s;
        return 0;
    }
    const char *t = s;
    bool neg = *t == '-';
    if (neg || *t == '+')
        t++;
    uint64_t v = 0;
    int digits = 0;
    while (*t >= '0' && *t <= '9' && digits < 18) {
        v = v * 10 + (uint64_t)(*t - '0');
        t++;
        digits++;
    }
    if (digits > 0 && (!*t || is_space(*t))) {
        *out = neg ? -(double)v : (double)v;
        *pp = t;
        return 1;
    }
    char *end;
    double d = strtod(s, &end);
    if (end == s || (*end && !is_space(*end)) || isnan(d)) {
        *pp = s;
        return -1;
    }
    *out = d;
    *pp = end;
    return 1;
}

/* "; MaxProcs: 338 (batch ...)" -> 338 in *val; other header lines ignored. */
static void swf_header(const char *s, int64_t *maxprocs, int64_t *maxnodes)
{
    while (is_space(*s))
        s++;
    int64_t *dst = NULL;
    if (strncmp(s, "MaxProcs:", 9) == 0)
        dst = maxprocs;
    else if (strncmp(s, "MaxNodes:", 9) == 0)
        dst = maxnodes;
    if (!dst || *dst > 0)
        return; /* the first valid occurrence wins */
    char *end;
    long long v = strtoll(s + 9, &end, 10);
    if (end != s + 9 && v > 0 && v <= UINT32_MAX)
        *dst = v;
}

static void note_skip(fbf_workload *wl, fbf_wl_skip why, size_t line)
{
    if (wl->skipped[why]++ == 0)
        wl->first_skipped_line[why] = line;
}

static int read_swf(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o, fbf_error *err)
{
    char *buf = NULL, idbuf[320];
    size_t cap = 0, len = 0, line = 0;
    int64_t maxprocs = 0, maxnodes = 0;
    int rc = 0, got;
    while ((got = read_line(gz, &buf, &cap, &len)) > 0) {
        line++;
        const char *s = buf;
        while (is_space(*s))
            s++;
        if (!*s)
            continue;
        if (*s == ';') {
            swf_header(s + 1, &maxprocs, &maxnodes);
            continue;
        }
        if (o->max_jobs >= 0 && (int64_t)wl->nb_jobs >= o->max_jobs)
            break; /* SWF headers come first: nothing more to learn */
        double f[10];
        for (int k = 1; k <= 9; k++)
            f[k] = -1; /* a missing field is unknown, as SWF writes -1 */
        for (int k = 1; k <= 9; k++) {
            int r = next_number(&s, &f[k]);
            if (r == 0)
                break;
            if (r < 0) {
                const char *e = s;
                while (*e && !is_space(*e))
                    e++;
                rc = fbf_errorf(err, -EINVAL, "%s: line %zu: field %d '%.*s' is not a number",
                                wl->path, line, k, (int)(e - s > 40 ? 40 : e - s), s);
                goto out;
            }
        }
        if (f[1] < 0 || f[1] != floor(f[1]) || f[1] > 9e15) {
            rc = fbf_errorf(err, -EINVAL,
                            "%s: line %zu: job number (field 1) %g is not an integer >= 0",
                            wl->path, line, f[1]);
            goto out;
        }
        double res = f[5] > 0 ? f[5] : f[8];
        if (!(res >= 1)) {
            note_skip(wl, FBF_WL_SKIP_NO_PROCS, line);
            continue;
        }
        if (f[4] < 0) {
            note_skip(wl, FBF_WL_SKIP_NEG_RUNTIME, line);
            continue;
        }
        if (f[2] < 0) {
            note_skip(wl, FBF_WL_SKIP_NEG_SUBTIME, line);
            continue;
        }
        snprintf(idbuf, sizeof idbuf, "%s!%lld", wl->name, (long long)f[1]);
        if (map_get(&wl->priv->ids, idbuf)) {
            note_skip(wl, FBF_WL_SKIP_DUPLICATE_ID, line);
            continue;
        }
        int64_t prof = delay_profile(wl, f[4]);
        if (prof < 0) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            goto out;
        }
        rc = add_checked(wl, idbuf, f[2], f[4], pick_walltime(o, f[9], f[4], false),
                         (int64_t)res, (uint32_t)prof, err);
        if (rc)
            goto out;
    }
    if (got < 0) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory reading line %zu", line + 1);
        goto out;
    }
    const char *zmsg = gz_failure(gz);
    if (zmsg) {
        rc = fbf_errorf(err, -EIO, "%s: read error after line %zu: %s", wl->path, line, zmsg);
        goto out;
    }
    wl->lines = line;
    wl->nb_res = (uint32_t)(maxprocs > 0 ? maxprocs : maxnodes);
out:
    free(buf);
    return rc;
}

/* ---------- Batsim JSON ---------- */

static int read_all(gzFile gz, const char *path, char **out, size_t *out_len, fbf_error *err)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (;;) {
        if (cap - len < (1 << 15)) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return fbf_errorf(err, -ENOMEM, "out of memory reading '%s'", path);
            }
            buf = nb;
            cap *= 2;
        }
        int n = gzread(gz, buf + len, (unsigned)(cap - len - 1));
        if (n < 0 || (n == 0 && gz_failure(gz))) {
            const char *m = gz_failure(gz);
            free(buf);
            return fbf_errorf(err, -EIO, "cannot read '%s': %s", path, m ? m : "read error");
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    buf[len] = '\0';
    *out = buf;
    *out_len = len;
    return 0;
}

/* Line and column (1-based) of byte offset off in text, for parse errors. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* A JSON number that is an integer, into *v. */
static bool json_int(const cJSON *n, int64_t *v)
{
    if (!cJSON_IsNumber(n))
        return false;
    double d = n->valuedouble;
    if (d != floor(d) || fabs(d) > 9e15)
        return false;
    *v = (int64_t)d;
    return true;
}

/* Resolves profile name for job `jid`: must exist and be a delay. */
static int64_t json_profile(fbf_workload *wl, const cJSON *profiles, const char *pname,
                            const char *jid, fbf_error *err)
{
    const char *known = map_get(&wl->priv->profiles, pname);
    if (known)
        return interned_index(known);
    const cJSON *p = cJSON_IsObject(profiles) ? cJSON_GetObjectItemCaseSensitive(profiles, pname)
                                              : NULL;
    if (!cJSON_IsObject(p))
        return fbf_errorf(err, -EINVAL, "%s: job %s: profile '%s' is not defined in \"profiles\"",
                          wl->path, jid, pname);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
    if (!cJSON_IsString(type))
        return fbf_errorf(err, -EINVAL, "%s: profile '%s': field \"type\" missing or not a string",
                          wl->path, pname);
    if (strcmp(type->valuestring, "delay") != 0)
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s: profile '%s' has type '%s'; only \"delay\" profiles "
                          "can be replayed",
                          wl->path, jid, pname, type->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_errorf(err, -EINVAL,
                          "%s: profile '%s': field \"delay\" missing or not a number >= 0",
                          wl->path, pname);
    int64_t idx = profile_intern(wl, pname, delay->valuedouble);
    if (idx < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return idx;
}

static int json_job(fbf_workload *wl, const cJSON *j, size_t i, const cJSON *profiles,
                    const fbf_wl_read_options *o, fbf_error *err)
{
    char raw[64], id[1024];
    if (!cJSON_IsObject(j))
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu] is not an object", wl->path, i);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
    int64_t num;
    const char *rawid;
    if (cJSON_IsString(jid)) {
        rawid = jid->valuestring;
    } else if (json_int(jid, &num)) {
        snprintf(raw, sizeof raw, "%lld", (long long)num);
        rawid = raw;
    } else {
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu]: field \"id\" missing or not a string",
                          wl->path, i);
    }
    int rc = full_id(wl, rawid, id, sizeof id, err);
    if (rc)
        return rc;
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(j, "subtime");
    if (!cJSON_IsNumber(sub) || !(sub->valuedouble >= 0) || isinf(sub->valuedouble))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"subtime\" missing or not a number >= 0",
                          wl->path, id, i);
    int64_t res;
    if (!json_int(cJSON_GetObjectItemCaseSensitive(j, "res"), &res))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"res\" missing or not an integer",
                          wl->path, id, i);
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(j, "walltime");
    double walltime = -1;
    if (wt) {
        if (!cJSON_IsNumber(wt) || !(wt->valuedouble > 0 || wt->valuedouble == -1) ||
            isinf(wt->valuedouble))
            return fbf_errorf(err, -EINVAL,
                              "%s: job %s (jobs[%zu]): field \"walltime\" must be -1 or a "
                              "number > 0",
                              wl->path, id, i);
        walltime = wt->valuedouble;
    }
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
    if (!cJSON_IsString(prof))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"profile\" missing or not a string",
                          wl->path, id, i);
    int64_t pidx = json_profile(wl, profiles, prof->valuestring, id, err);
    if (pidx < 0)
        return (int)pidx;
    double runtime = wl->profiles[pidx].delay;
    rc = add_checked(wl, id, sub->valuedouble, runtime, pick_walltime(o, walltime, runtime, true),
                     res, (uint32_t)pidx, err);
    if (rc == -EEXIST)
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu]: job id '%s' appears twice", wl->path, i,
                          id);
    return rc;
}

static int read_json(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o, fbf_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = read_all(gz, wl->path, &text, &len, err);
    if (rc)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        size_t line, col;
        line_col(text, end ? (size_t)(end - text) : 0, &line, &col);
        free(text);
        return fbf_errorf(err, -EINVAL, "%s: invalid JSON at line %zu, column %zu", wl->path,
                          line, col);
    }
    free(text);
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(root, "nb_res");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    int64_t nb_res = 0;
    if (!cJSON_IsObject(root)) {
        rc = fbf_errorf(err, -EINVAL, "%s: the top level is not a JSON object", wl->path);
    } else if (nb && (!json_int(nb, &nb_res) || nb_res < 1 || nb_res > UINT32_MAX)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"nb_res\" is not an integer >= 1", wl->path);
    } else if (!cJSON_IsArray(jobs)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"jobs\" missing or not an array", wl->path);
    } else if (profiles && !cJSON_IsObject(profiles)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"profiles\" is not an object", wl->path);
    } else {
        wl->nb_res = (uint32_t)nb_res;
        size_t i = 0;
        for (const cJSON *j = jobs->child; j && !rc; j = j->next, i++) {
            if (o->max_jobs >= 0 && (int64_t)wl->nb_jobs >= o->max_jobs)
                break;
            rc = json_job(wl, j, i, profiles, o, err);
        }
    }
    cJSON_Delete(root);
    return rc;
}

fbf_workload *fbf_workload_read(const char *path, const fbf_wl_read_options *opt, fbf_error *err)
{
    static const fbf_wl_read_options defaults = FBF_WL_READ_DEFAULTS;
    const fbf_wl_read_options *o = opt ? opt : &defaults;
    if (o->walltime_mode == FBF_WL_WALLTIME_FACTOR &&
        (!(o->walltime_factor > 0) || isinf(o->walltime_factor))) {
        fbf_errorf(err, -EINVAL, "walltime factor %g is not a finite number > 0",
                   o->walltime_factor);
        errno = EINVAL;
        return NULL;
    }
    gzFile gz = open_input(path, err);
    if (!gz)
        return NULL;
    int c;
    do
        c = gzgetc(gz);
    while (c != -1 && is_space((char)c));
    bool json = c == '{';
    const char *zmsg = c == -1 ? gz_failure(gz) : NULL;
    if (zmsg) {
        fbf_errorf(err, -EIO, "cannot read '%s': %s", path, zmsg);
        gzclose(gz);
        errno = EIO;
        return NULL;
    }
    gzrewind(gz);
    fbf_workload *wl = wl_new(o->name, json ? FBF_WL_JSON : FBF_WL_SWF, err);
    if (!wl) {
        gzclose(gz);
        return NULL;
    }
    char *abs = realpath(path, NULL);
    const char *shown = abs ? abs : path;
    char *copy = arena_alloc(wl->priv, strlen(shown) + 1);
    if (copy)
        strcpy(copy, shown);
    free(abs);
    int rc = -ENOMEM;
    if (copy) {
        wl->path = copy;
        rc = json ? read_json(wl, gz, o, err) : read_swf(wl, gz, o, err);
    } else {
        fbf_errorf(err, rc, "out of memory");
    }
    gzclose(gz);
    if (rc) {
        fbf_workload_destroy(wl);
        errno = -rc;
        return NULL;
    }
    return wl;
}
