/*
 * json_arena: cJSON trees parsed into one region and dropped all at once.
 *
 * A Batsim request becomes a few dozen cJSON nodes and strings per event;
 * allocating and freeing each one separately cost about a fifth of a
 * small exchange. Parsing through an arena turns those into pointer bumps,
 * and the whole tree goes away when the next message is parsed.
 *
 * Contract:
 *  - fbf_json_arena_parse() returns a tree that stays valid until the next
 *    parse into the same arena or its destruction. Never pass it, or any
 *    node of it, to cJSON_Delete(); detach nothing from it either.
 *  - The arena holds cJSON's allocation hooks (process-wide, its
 *    library's) only while one of its parses runs; they are cJSON's own
 *    malloc and free otherwise, so another user of cJSON in the process
 *    (a host that loads libfastbf-edc, another copy of this code) keeps
 *    its own allocations.
 *  - One arena belongs to one thread at a time; different arenas may parse
 *    on different threads at once.
 *  - Memory: the arena keeps one block sized to the largest recent
 *    message, but gives back blocks above FBF_JSON_ARENA_KEEP bytes after
 *    each parse, so a single huge message does not stay resident.
 */
#ifndef FBF_JSON_ARENA_H
#define FBF_JSON_ARENA_H

#include <cjson/cJSON.h>
#include <stddef.h>
#include <string.h>

#define FBF_JSON_ARENA_KEEP ((size_t)4 << 20)

typedef struct fbf_json_arena fbf_json_arena;

/* NULL when out of memory. */
fbf_json_arena *fbf_json_arena_create(void);
void fbf_json_arena_destroy(fbf_json_arena *a);

/* Parses exactly len bytes of text (not NUL-terminated) into the arena,
 * dropping the previous tree. As cJSON_ParseWithLengthOpts without the
 * NUL requirement: NULL with errno EINVAL on malformed JSON (then
 * cJSON_GetErrorPtr() tells where) or ENOMEM; *end, when end is not NULL,
 * is set just past the parsed value. */
cJSON *fbf_json_arena_parse(fbf_json_arena *a, const char *text, size_t len, const char **end);

/* As fbf_json_arena_parse(), but the trees parsed before stay valid: the
 * arena holds every tree parsed since the last fbf_json_arena_clear() (or
 * fbf_json_arena_parse()). On failure the earlier trees stay valid too. */
cJSON *fbf_json_arena_parse_more(fbf_json_arena *a, const char *text, size_t len,
                                 const char **end);

/* Drops every tree, keeping one block sized for what they needed (below
 * the keep limit), for the next run of fbf_json_arena_parse_more(). */
void fbf_json_arena_clear(fbf_json_arena *a);

/* Ends the current tree's life early, giving back blocks above the keep
 * limit; the arena stays usable. */
void fbf_json_arena_release(fbf_json_arena *a);

/* Bytes of blocks the arena holds now. */
size_t fbf_json_arena_footprint(const fbf_json_arena *a);

/* cJSON_GetObjectItemCaseSensitive(o, key), for the hot paths that look
 * up several keys per event: the first byte rules most members out
 * before a call to strcmp. */
static inline cJSON *fbf_json_get(const cJSON *o, const char *key)
{
    if (!o)
        return NULL;
    for (cJSON *c = o->child; c; c = c->next)
        if (c->string && c->string[0] == key[0] && strcmp(c->string, key) == 0)
            return c;
    return NULL;
}

#endif
