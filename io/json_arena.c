/*
 * json_arena: bump allocation for cJSON parse trees (see json_arena.h).
 *
 * Invariants: `head` is the block being filled, older blocks follow it;
 * tl_filling is set only for the duration of one parse (parse_into())
 * on this thread, so the hooks route to the arena exactly while cJSON
 * builds that tree. A free() that cJSON issues meanwhile (it discards a
 * half-built tree on malformed input) targets arena memory, and is a
 * no-op: the whole block is recycled at the next parse.
 */
#include "io/json_arena.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define FIRST_BLOCK ((size_t)64 << 10)
#define ALIGN 16

typedef struct block {
    struct block *next;
    size_t cap, used;
    _Alignas(ALIGN) unsigned char data[];
} block;

struct fbf_json_arena {
    block *head;
    size_t total; /* capacity of every block, for sizing the next reset */
    int failed;   /* an allocation failed during the current parse */
};

static _Thread_local fbf_json_arena *tl_filling;

static block *block_new(size_t cap)
{
    block *b = malloc(sizeof *b + cap);
    if (b) {
        b->next = NULL;
        b->cap = cap;
        b->used = 0;
    }
    return b;
}

/* The rare path of hook_malloc(): a new block, twice the last one. Kept
 * out of line so that the bump below compiles to a handful of
 * instructions (cJSON calls it for every node and string). */
static __attribute__((noinline)) void *grow_and_take(fbf_json_arena *a, size_t n)
{
    block *b = a->head;
    size_t cap = b ? b->cap * 2 : FIRST_BLOCK;
    if (cap < n)
        cap = n;
    block *nb = block_new(cap);
    if (!nb) {
        a->failed = 1;
        return NULL;
    }
    nb->next = b;
    a->head = nb;
    a->total += cap;
    nb->used = n;
    return nb->data;
}

static __attribute__((noinline)) void *plain_malloc(size_t n) { return malloc(n); }

static void *hook_malloc(size_t n)
{
    fbf_json_arena *a = tl_filling;
    if (__builtin_expect(!a, 0))
        return plain_malloc(n);
    n = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    block *b = a->head;
    if (__builtin_expect(!b || b->cap - b->used < n, 0))
        return grow_and_take(a, n);
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

static void hook_free(void *p)
{
    if (!tl_filling)
        free(p);
}

/* cJSON's hooks belong to its library, process-wide, and another copy of
 * this code (libfastbf-edc in a host that uses cJSON too) may want them:
 * they are ours only while a parse runs, counted so that a helper
 * thread's parse and this thread's can overlap. Outside a parse cJSON
 * allocates with malloc, as hook_malloc would. */
static pthread_mutex_t hooks_lock = PTHREAD_MUTEX_INITIALIZER;
static int parses;

static void hooks_take(void)
{
    pthread_mutex_lock(&hooks_lock);
    if (parses++ == 0) {
        cJSON_Hooks h = {.malloc_fn = hook_malloc, .free_fn = hook_free};
        cJSON_InitHooks(&h);
    }
    pthread_mutex_unlock(&hooks_lock);
}

static void hooks_give_back(void)
{
    pthread_mutex_lock(&hooks_lock);
    if (--parses == 0)
        cJSON_InitHooks(NULL);
    pthread_mutex_unlock(&hooks_lock);
}

fbf_json_arena *fbf_json_arena_create(void) { return calloc(1, sizeof(fbf_json_arena)); }

static void drop_blocks(fbf_json_arena *a)
{
    for (block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
    a->total = 0;
}

void fbf_json_arena_destroy(fbf_json_arena *a)
{
    if (!a)
        return;
    drop_blocks(a);
    free(a);
}

/* Empties the arena for the next tree: one block big enough for what the
 * last message needed, unless that was over the keep limit. */
static void reset(fbf_json_arena *a)
{
    if (a->head && !a->head->next && a->head->cap <= FBF_JSON_ARENA_KEEP) {
        a->head->used = 0;
        return;
    }
    size_t want = a->total;
    drop_blocks(a);
    if (want > FIRST_BLOCK && want <= FBF_JSON_ARENA_KEEP) {
        a->head = block_new(want);
        if (a->head)
            a->total = want;
    }
}

void fbf_json_arena_release(fbf_json_arena *a)
{
    if (a->total > FBF_JSON_ARENA_KEEP)
        drop_blocks(a);
}

static cJSON *parse_into(fbf_json_arena *a, const char *text, size_t len, const char **end)
{
    a->failed = 0;
    hooks_take();
    tl_filling = a;
    const char *stop = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &stop, 0);
    tl_filling = NULL;
    hooks_give_back();
    if (end)
        *end = stop;
    if (!root)
        errno = a->failed ? ENOMEM : EINVAL;
    return root;
}

cJSON *fbf_json_arena_parse(fbf_json_arena *a, const char *text, size_t len, const char **end)
{
    reset(a);
    cJSON *root = parse_into(a, text, len, end);
    if (!root) {
        int e = errno;
        fbf_json_arena_release(a);
        errno = e;
    }
    return root;
}

cJSON *fbf_json_arena_parse_more(fbf_json_arena *a, const char *text, size_t len,
                                 const char **end)
{
    return parse_into(a, text, len, end);
}

void fbf_json_arena_clear(fbf_json_arena *a) { reset(a); }

size_t fbf_json_arena_footprint(const fbf_json_arena *a) { return a->total; }
