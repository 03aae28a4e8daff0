/*
 * json_strict: one reading per JSON text (see json_strict.h).
 */
#include "io/json_strict.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fbf_json_strict_text(const char *text, size_t len, fbf_error *err)
{
    const char *p = text, *end = text + len;
    while ((p = memchr(p, '\\', (size_t)(end - p))) != NULL) {
        /* p starts a run of backslashes: pairs are escaped backslashes, an
         * odd one escapes what follows. */
        const char *q = p;
        while (q < end && *q == '\\')
            q++;
        if ((q - p) % 2 == 1 && end - q >= 5 && q[0] == 'u' && memcmp(q + 1, "0000", 4) == 0)
            return fbf_errorf(err, -EPROTO, "a string holds \\u0000 (a NUL byte) near byte %ld",
                              (long)(q - 1 - text));
        p = q;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const cJSON *const *)a)->string, (*(const cJSON *const *)b)->string);
}

static int duplicate(const cJSON *o, const char *key, fbf_error *err)
{
    if (o->string)
        return fbf_errorf(err, -EPROTO, "duplicate key \"%.60s\" in \"%.60s\" (one member named "
                          "twice)", key, o->string);
    return fbf_errorf(err, -EPROTO, "duplicate key \"%.60s\" (one member named twice)", key);
}

/* Repeated names among o's members (n of them). */
static int object_names(const cJSON *o, size_t n, fbf_error *err)
{
    if (n <= 16) {
        for (const cJSON *a = o->child; a; a = a->next)
            for (const cJSON *b = a->next; b; b = b->next)
                if (a->string[0] == b->string[0] && strcmp(a->string, b->string) == 0)
                    return duplicate(o, a->string, err);
        return 0;
    }
    const cJSON **v = malloc(n * sizeof *v);
    if (!v)
        return fbf_errorf(err, -ENOMEM, "out of memory checking an object of %zu members", n);
    size_t k = 0;
    for (const cJSON *c = o->child; c; c = c->next)
        v[k++] = c;
    qsort(v, n, sizeof *v, by_name);
    int rc = 0;
    for (size_t i = 1; i < n && rc == 0; i++)
        if (strcmp(v[i - 1]->string, v[i]->string) == 0)
            rc = duplicate(o, v[i]->string, err);
    free(v);
    return rc;
}

/* cJSON's type tests are library calls: these run once per node. */
#define KIND(n) ((n)->type & 0xFF)

int fbf_json_strict_tree(const cJSON *root, fbf_error *err)
{
    /* Recursion is bounded by cJSON's nesting limit (1000 levels). */
    if (!root || !root->child || (KIND(root) != cJSON_Object && KIND(root) != cJSON_Array))
        return 0;
    size_t n = 0;
    for (const cJSON *c = root->child; c; c = c->next) {
        n++;
        if (c->child && (KIND(c) == cJSON_Object || KIND(c) == cJSON_Array)) {
            int rc = fbf_json_strict_tree(c, err);
            if (rc < 0)
                return rc;
        }
    }
    return KIND(root) == cJSON_Object && n > 1 ? object_names(root, n, err) : 0;
}

int fbf_json_strict(const char *text, size_t len, const cJSON *root, fbf_error *err)
{
    int rc = fbf_json_strict_text(text, len, err);
    return rc < 0 ? rc : fbf_json_strict_tree(root, err);
}
