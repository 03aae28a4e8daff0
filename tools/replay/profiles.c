/*
 * profiles: the profiles and workloads Batsim knows during a run with
 * dynamic registration (v4's REGISTER_PROFILE, Batsim 5's
 * RegisterProfileEvent), by (workload, name), and the ones it dropped.
 * See replay.h for the API; dynamic.c and v5_register.c use it.
 */
#include "tools/replay/replay.h"

#include <ck_hs.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

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
int fbf_replay_profiles_ready(fbf_replay *r)
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

void fbf_replay_profiles_fini(fbf_replay *r)
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
}

static bool listed(const fbf_replay *r, const char *wl, size_t len)
{
    for (size_t k = 0; k < r->nwl_names; k++)
        if (strlen(r->wl_names[k]) == len && memcmp(r->wl_names[k], wl, len) == 0)
            return true;
    return false;
}

/* The delay of profile name in workload wl (len bytes), -1 if none,
 * FBF_REPLAY_PROFILE_DROPPED if Batsim dropped it. The index exists (fbf_replay_profiles_ready()). */
double fbf_replay_profile_delay(const fbf_replay *r, const char *wl, size_t len, const char *name)
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

/* Records a registered profile; the caller checked it is new. Batsim
 * creates the workload with its first profile. */
int fbf_replay_profile_add(fbf_replay *r, const char *wl, const char *name, double delay)
{
    size_t lw = strlen(wl);
    if (!fbf_replay_workload_known(r, wl, lw) && fbf_replay_workload_add(r, wl, lw) < 0)
        return -ENOMEM;
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
    pkey *k = put_key(r, wl, lw, name, delay);
    if (!k)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    r->rprof[r->nrprof++] = (fbf_rprofile){.workload = k->text, .name = k->text + k->wl_len + 1,
                                           .delay = delay};
    return 0;
}

int fbf_replay_workload_add(fbf_replay *r, const char *wl, size_t lw)
{
    if (!put_key(r, wl, lw, "", WORKLOAD))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return 0;
}

/* Batsim knows workload wl: one of the input's, or made by REGISTER_PROFILE. */
bool fbf_replay_workload_known(const fbf_replay *r, const char *wl, size_t len)
{
    pkey probe = {.wl = wl, .wl_len = len, .name = ""};
    return listed(r, wl, len) || (r->rprof && pkey_get(r, &probe));
}

void fbf_replay_drop_profile(fbf_replay *r, uint32_t job)
{
    if (r->cfg.profile_reuse || !r->cfg.dyn_jobs)
        return;
    if (fbf_replay_profiles_ready(r) < 0) {
        r->oom = true; /* stops the run before the next send */
        return;
    }
    const char *id = r->wl->jobs[job].id, *bang = strchr(id, '!');
    const char *name = r->wl->profiles[r->wl->jobs[job].profile].name;
    /* Batsim 5 drops a profile from its own workload, which a registered
     * job names before a '!' when it is not the job's. */
    const char *pbang = r->v5 && job >= r->nb_static ? strchr(name, '!') : NULL;
    if (pbang) {
        id = name;
        bang = pbang;
        name = pbang + 1;
    }
    pkey probe = {.wl = id, .wl_len = (size_t)(bang - id), .name = name};
    pkey *k = (pkey *)pkey_get(r, &probe);
    if (k)
        k->delay = FBF_REPLAY_PROFILE_DROPPED;
    else if (!put_key(r, id, (size_t)(bang - id), name, FBF_REPLAY_PROFILE_DROPPED)) /* shadows the input's */
        r->oom = true;
}

