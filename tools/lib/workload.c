/*
 * workload: the workload store, file access and fbf_workload_read(); the
 * formats live in workload_swf.c and workload_json.c, which reach the
 * store only through workload_priv.h. See workload.h for the field rules.
 *
 * Layout: every string (ids, profile names) lives in an append-only arena
 * of chunks, so pointers handed out stay valid while jobs[] grows and no
 * string costs a malloc of its own. Ids and profile names are interned in
 * Concurrency Kit hash sets (ck_hs, object mode): the set stores a pointer
 * to the string, and the 4 bytes just before the string hold its index
 * (job or profile), so one lookup answers "which job is w0!17" without a
 * second table. ck_hs callbacks take no context, which is why the index
 * rides along with the key rather than living in a side array.
 *
 * Invariants: every job and profile enters through fbf_wl_add_checked()
 * or fbf_wl_profile_intern(), so jobs[i].id and profiles[i].name are
 * always the interned strings whose stored index is i, and ids stay
 * unique. The dispatcher alone opens and closes the file and owns the
 * cleanup: a reader that fails leaves the workload to be destroyed here.
 */
#include "tools/lib/workload_priv.h"

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

#include "io/jbuf.h"

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
    case FBF_WL_SKIP_SHORT_LINE: return "fewer than 18 fields";
    default: return "?";
    }
}

/* Index of the profile named name, created with delay if new; -1 on ENOMEM. */
int64_t fbf_wl_profile_intern(fbf_workload *wl, const char *name, double delay)
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

int64_t fbf_wl_profile_index(const fbf_workload *wl, const char *name)
{
    const char *s = map_get(&wl->priv->profiles, name);
    return s ? (int64_t)interned_index(s) : -1;
}

/* Writes the full id ("<name>!raw" when raw has no '!') into buf. */
int fbf_wl_full_id(const fbf_workload *wl, const char *raw, char *buf, size_t cap,
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
int fbf_wl_add_checked(fbf_workload *wl, const char *id, double subtime, double runtime,
                       double walltime, int64_t res, uint32_t profile, fbf_error *err)
{
    fbf_wl_priv *p = wl->priv;
    if (map_get(&p->ids, id))
        return fbf_errorf(err, -EEXIST, "job id '%s' appears twice", id);
    /* The readers check the file's fields, but a walltime derived from
     * them (factor x runtime) can still overflow to infinity. */
    if (!(walltime == -1 || (walltime > 0 && isfinite(walltime))))
        return fbf_errorf(err, -EINVAL, "job %s: walltime %g (runtime %g) is neither -1 nor "
                          "a finite number > 0", id, walltime, runtime);
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

int fbf_wl_set_extra(fbf_workload *wl, const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = arena_alloc(wl->priv, n);
    if (!copy)
        return -ENOMEM;
    memcpy(copy, text, n);
    wl->jobs[wl->nb_jobs - 1].extra = copy;
    return 0;
}

int64_t fbf_wl_delay_profile(fbf_workload *wl, double runtime)
{
    char name[64] = "delay_";
    fbf_jbuf_fmt(name + 6, sizeof name - 6, runtime); /* names stay readable */
    return fbf_wl_profile_intern(wl, name, runtime);
}

int fbf_workload_add_job(fbf_workload *wl, const char *id, double subtime, double runtime,
                         double walltime, int64_t res, fbf_error *err)
{
    return fbf_workload_add_job_profile(wl, id, subtime, runtime, walltime, res, NULL, err);
}

int fbf_workload_add_job_profile(fbf_workload *wl, const char *id, double subtime,
                                 double runtime, double walltime, int64_t res,
                                 const char *profile, fbf_error *err)
{
    char buf[1024];
    int rc = fbf_wl_full_id(wl, id, buf, sizeof buf, err);
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
    int64_t prof = profile ? fbf_wl_profile_intern(wl, profile, runtime)
                           : fbf_wl_delay_profile(wl, runtime);
    if (prof < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return fbf_wl_add_checked(wl, buf, subtime, runtime, walltime, res, (uint32_t)prof, err);
}

/* The walltime a job gets under the options; given is the file's estimate
 * (SWF field 9 or the JSON walltime, <= 0 or -1 when absent). */
double fbf_wl_pick_walltime(const fbf_wl_read_options *o, double given, double runtime,
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
    bool known = fstat(fd, &st) == 0;
    if (known && S_ISDIR(st.st_mode)) {
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
    /* zlib's buffers are this and twice this: 256 KiB reads a large trace
     * in few calls, and a small file (a test's, a generated one's) gets one
     * its size, since allocating and touching 768 KiB per file was most of
     * the cost of reading it. zlib refills whatever the size (gzip files
     * included, whose text is larger than the file). */
    size_t want = 256 * 1024;
    if (known && S_ISREG(st.st_mode) && st.st_size >= 0 && (uintmax_t)st.st_size < want)
        want = st.st_size < 8192 ? 8192 : (size_t)st.st_size;
    gzbuffer(gz, (unsigned)want);
    return gz;
}

/* NULL when the stream is fine; the zlib message otherwise. */
const char *fbf_wl_gz_failure(gzFile gz)
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
 * with a line, 0 at end of file, -ENOMEM. */
int fbf_wl_read_line(gzFile gz, char **buf, size_t *cap, size_t *len)
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
        /* gzgets stops at a newline, not at a NUL it copies: only the
         * stream position tells how many bytes it really took. */
        z_off_t before = gztell(gz);
        if (!gzgets(gz, *buf + *len, (int)(*cap - *len > INT_MAX ? INT_MAX : *cap - *len)))
            return *len > 0;
        size_t got = strlen(*buf + *len);
        if (before >= 0 && gztell(gz) - before != (z_off_t)got)
            return -EILSEQ;
        *len += got;
        if (*len > 0 && (*buf)[*len - 1] == '\n') {
            (*buf)[--*len] = '\0';
            if (*len > 0 && (*buf)[*len - 1] == '\r')
                (*buf)[--*len] = '\0';
            return 1;
        }
    }
}

/* The rest of gz into one NUL-terminated buffer, for parsers that need
 * the whole text. */
int fbf_wl_read_all(gzFile gz, const char *path, char **out, size_t *out_len, fbf_error *err)
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
        if (n < 0 || (n == 0 && fbf_wl_gz_failure(gz))) {
            const char *m = fbf_wl_gz_failure(gz);
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

/* ---------- dispatch ---------- */

/* An empty workload replays nothing: say so, and why for SWF. */
static int no_jobs(const fbf_workload *wl, const fbf_wl_read_options *o, fbf_error *err)
{
    if (o->max_jobs == 0)
        return fbf_errorf(err, -EINVAL, "%s: no jobs (--max-jobs 0 keeps none)", wl->path);
    if (wl->format == FBF_WL_JSON)
        return fbf_errorf(err, -EINVAL, "%s: no jobs: the \"jobs\" array is empty", wl->path);
    size_t skipped = fbf_workload_skipped_total(wl);
    if (!skipped)
        return fbf_errorf(err, -EINVAL, "%s: no jobs: no job line among %zu line%s", wl->path,
                          wl->lines, wl->lines == 1 ? "" : "s");
    char why[256] = "";
    size_t used = 0;
    for (int k = 0; k < FBF_WL_SKIP_COUNT && used < sizeof why; k++)
        if (wl->skipped[k])
            used += (size_t)snprintf(why + used, sizeof why - used, "%s%zu %s", used ? ", " : "",
                                     wl->skipped[k], fbf_wl_skip_reason(k));
    return fbf_errorf(err, -EINVAL, "%s: no jobs: every job line was skipped (%s)", wl->path, why);
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
    while (c != -1 && fbf_wl_is_space((char)c));
    bool json = c == '{';
    const char *zmsg = c == -1 ? fbf_wl_gz_failure(gz) : NULL;
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
        rc = json ? fbf_wl_read_json(wl, gz, o, err) : fbf_wl_read_swf(wl, gz, o, err);
    } else {
        fbf_errorf(err, rc, "out of memory");
    }
    gzclose(gz);
    if (!rc && wl->nb_jobs == 0 && !o->allow_empty)
        rc = no_jobs(wl, o, err);
    if (rc) {
        fbf_workload_destroy(wl);
        errno = -rc;
        return NULL;
    }
    return wl;
}
