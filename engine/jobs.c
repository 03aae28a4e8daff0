/*
 * jobs: the job store (see jobs.h).
 *
 * Invariants: chunks are allocated on demand and never moved or freed
 * before destroy. The handles below CHUNK_SIZE live in chunks that double
 * (chunk 0: handles 0-63, chunk k in 1..8: 2^(k+5) to 2^(k+6) - 1), the
 * rest in chunks of CHUNK_SIZE (handle h >= CHUNK_SIZE: chunk
 * (h >> CHUNK_BITS) + SMALL_CHUNKS - 1, slot h & mask), so a store of a few
 * jobs holds a few KiB rather than a 1.5 MiB chunk, and a large one is laid
 * out, and read, as with fixed chunks only. The array of chunk pointers
 * grows with the jobs too, only in fbf_jobs_add, which no reader runs beside;
 * every record with handle < count is initialised. Key entries and id
 * strings come from an arena of large blocks, so adding a job costs one
 * hash insert and two bump allocations.
 */
#include "engine/jobs.h"

#include <ck_hs.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_BITS 14
#define CHUNK_SIZE (1u << CHUNK_BITS)
#define FIRST_BITS 6 /* the first chunk: 64 records, 6 KiB */
#define SMALL_CHUNKS (CHUNK_BITS - FIRST_BITS + 1) /* those below CHUNK_SIZE */
#define MAX_CHUNKS ((1u << (32 - CHUNK_BITS)) + SMALL_CHUNKS - 1)
#define ARENA_BLOCK (1u << 20)

typedef struct key_entry {
    const char *id;
    fbf_job_h h;
} key_entry;

typedef struct arena_block {
    struct arena_block *prev;
    size_t used, cap;
    char data[];
} arena_block;

struct fbf_jobs {
    ck_hs_t map;
    fbf_job **chunks; /* nchunks pointers, NULL past the last chunk made */
    size_t nchunks;
    size_t count;
    arena_block *arena;
};

static void *hs_malloc(size_t n) { return malloc(n); }
static void hs_free(void *p, size_t n, bool defer) { free(p); }
static struct ck_malloc hs_alloc = {.malloc = hs_malloc, .free = hs_free};

/* FNV-1a: ids are short and mostly share a prefix; good enough spread. */
static unsigned long id_hash(const char *s, unsigned long seed)
{
    uint64_t h = 1469598103934665603ull ^ seed;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return (unsigned long)(h ^ (h >> 29));
}

static unsigned long entry_hash(const void *obj, unsigned long seed)
{
    return id_hash(((const key_entry *)obj)->id, seed);
}

static bool entry_eq(const void *a, const void *b)
{
    return strcmp(((const key_entry *)a)->id, ((const key_entry *)b)->id) == 0;
}

static void *arena_alloc(fbf_jobs *js, size_t n, size_t align)
{
    arena_block *b = js->arena;
    size_t off = b ? (b->used + align - 1) & ~(align - 1) : 0;
    if (!b || off + n > b->cap) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->prev = b;
        nb->used = 0;
        nb->cap = cap;
        js->arena = b = nb;
        off = 0;
    }
    b->used = off + n;
    return b->data + off;
}

/* Where handle h lives: its chunk, the chunk's first handle and size. */
typedef struct slot_at {
    size_t chunk;
    uint32_t base, cap;
} slot_at;

static slot_at locate(fbf_job_h h)
{
    if (h >= CHUNK_SIZE)
        return (slot_at){(h >> CHUNK_BITS) + SMALL_CHUNKS - 1, h & ~(CHUNK_SIZE - 1),
                         CHUNK_SIZE};
    if (h < (1u << FIRST_BITS))
        return (slot_at){0, 0, 1u << FIRST_BITS};
    unsigned top = 31u - (unsigned)__builtin_clz(h); /* FIRST_BITS..CHUNK_BITS-1 */
    return (slot_at){top - FIRST_BITS + 1, 1u << top, 1u << top};
}

/* The range of handles chunk c holds (the inverse of locate). */
static slot_at chunk_range(size_t c)
{
    if (c == 0)
        return (slot_at){0, 0, 1u << FIRST_BITS};
    if (c < SMALL_CHUNKS)
        return (slot_at){c, 1u << (c + FIRST_BITS - 1), 1u << (c + FIRST_BITS - 1)};
    return (slot_at){c, (uint32_t)(c - SMALL_CHUNKS + 1) << CHUNK_BITS, CHUNK_SIZE};
}

/* Room for at least n chunk pointers (n <= MAX_CHUNKS), the new ones NULL. */
static int grow_chunks(fbf_jobs *js, size_t n)
{
    size_t cap = js->nchunks ? js->nchunks : 4;
    while (cap < n)
        cap *= 2;
    if (cap > MAX_CHUNKS)
        cap = MAX_CHUNKS;
    fbf_job **v = realloc(js->chunks, cap * sizeof *v);
    if (!v)
        return -ENOMEM;
    memset(v + js->nchunks, 0, (cap - js->nchunks) * sizeof *v);
    js->chunks = v;
    js->nchunks = cap;
    return 0;
}

fbf_jobs *fbf_jobs_create(void)
{
    fbf_jobs *js = calloc(1, sizeof *js);
    if (!js)
        return NULL;
    if (!ck_hs_init(&js->map, CK_HS_MODE_OBJECT | CK_HS_MODE_SPMC, entry_hash, entry_eq,
                    &hs_alloc, 1024, 0x9e3779b9u)) {
        free(js);
        errno = ENOMEM;
        return NULL;
    }
    return js;
}

void fbf_jobs_destroy(fbf_jobs *js)
{
    if (!js)
        return;
    for (size_t c = 0; c < js->nchunks && js->chunks[c]; c++) {
        slot_at r = chunk_range(c);
        for (size_t i = 0; i < r.cap && r.base + i < js->count; i++)
            fbf_idset_fini(&js->chunks[c][i].alloc);
        free(js->chunks[c]);
    }
    free(js->chunks);
    ck_hs_destroy(&js->map);
    while (js->arena) {
        arena_block *p = js->arena->prev;
        free(js->arena);
        js->arena = p;
    }
    free(js);
}

fbf_job_h fbf_jobs_find(const fbf_jobs *js, const char *id)
{
    key_entry probe = {.id = id, .h = FBF_JOB_NONE};
    ck_hs_t *map = (ck_hs_t *)&js->map; /* ck_hs_get does not modify */
    const key_entry *e = ck_hs_get(map, CK_HS_HASH(map, entry_hash, &probe), &probe);
    return e ? e->h : FBF_JOB_NONE;
}

int fbf_jobs_add(fbf_jobs *js, const char *id, fbf_job_h *out)
{
    if (js->count >= (size_t)FBF_JOB_NONE - 1)
        return -E2BIG;
    key_entry probe = {.id = id, .h = FBF_JOB_NONE};
    unsigned long hv = CK_HS_HASH(&js->map, entry_hash, &probe);

    fbf_job_h h = (fbf_job_h)js->count;
    slot_at at = locate(h);
    size_t c = at.chunk;
    if (c >= js->nchunks && grow_chunks(js, c + 1) < 0)
        return -ENOMEM;
    if (!js->chunks[c] && !(js->chunks[c] = malloc((size_t)at.cap * sizeof(fbf_job))))
        return -ENOMEM;

    /* ck_hs_put() refuses a key already present, so one probe both checks
     * and inserts; a refusal gives the two bump allocations back. */
    arena_block *was = js->arena;
    size_t was_used = was ? was->used : 0;
    size_t len = strlen(id) + 1;
    char *copy = arena_alloc(js, len, 1);
    key_entry *e = copy ? arena_alloc(js, sizeof *e, _Alignof(key_entry)) : NULL;
    if (e) {
        memcpy(copy, id, len);
        e->id = copy;
        e->h = h;
    }
    if (!e || !ck_hs_put(&js->map, hv, e)) {
        while (js->arena != was) {
            arena_block *nb = js->arena;
            js->arena = nb->prev;
            free(nb);
        }
        if (was)
            was->used = was_used;
        if (e && ck_hs_get(&js->map, hv, &probe))
            return -EEXIST;
        return -ENOMEM;
    }

    fbf_job *j = &js->chunks[c][h - at.base];
    memset(j, 0, sizeof *j);
    j->id = copy;
    j->seq = h; /* handles are given in arrival order */
    j->rsv = NAN;
    j->prev = j->next = FBF_JOB_NONE;
    fbf_idset_init(&j->alloc);
    js->count++;
    *out = h;
    return 0;
}

size_t fbf_jobs_count(const fbf_jobs *js) { return js->count; }

fbf_job *fbf_jobs_get(const fbf_jobs *js, fbf_job_h h)
{
    /* The common case of a large store first, as with fixed chunks. */
    if (h >= CHUNK_SIZE)
        return &js->chunks[(h >> CHUNK_BITS) + SMALL_CHUNKS - 1][h & (CHUNK_SIZE - 1)];
    slot_at at = locate(h);
    return &js->chunks[at.chunk][h - at.base];
}
