/*
 * decisions: the typed decisions of one reply (see decisions.h). Strings
 * go to blocks that are kept across replies: a reply of registrations
 * costs no allocation once the first has sized them.
 */
#include "io/decisions.h"

#include <stdlib.h>
#include <string.h>

struct fbf_text_block {
    fbf_text_block *next;
    size_t used, cap;
    char data[];
};

#define BLOCK_MIN 4096

void fbf_decisions_init(fbf_decisions *d) { *d = (fbf_decisions){0}; }

void fbf_decisions_fini(fbf_decisions *d)
{
    free(d->v);
    for (fbf_text_block *b = d->texts, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    *d = (fbf_decisions){0};
}

void fbf_decisions_reset(fbf_decisions *d)
{
    d->n = 0;
    d->oom = false;
    for (fbf_text_block *b = d->texts; b; b = b->next)
        b->used = 0;
}

fbf_out *fbf_decisions_add(fbf_decisions *d, fbf_out_kind kind)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        fbf_out *v = realloc(d->v, cap * sizeof *v);
        if (!v) {
            d->oom = true;
            return NULL;
        }
        d->v = v;
        d->cap = cap;
    }
    fbf_out *o = &d->v[d->n++];
    *o = (fbf_out){.kind = kind, .job = FBF_JOB_NONE};
    return o;
}

const char *fbf_decisions_text(fbf_decisions *d, const char *s, size_t n)
{
    fbf_text_block *b = d->texts;
    for (; b && b->cap - b->used < n + 1; b = b->next)
        ;
    if (!b) {
        size_t cap = n + 1 > BLOCK_MIN ? n + 1 : BLOCK_MIN;
        b = malloc(sizeof *b + cap);
        if (!b) {
            d->oom = true;
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = d->texts;
        d->texts = b;
    }
    char *t = b->data + b->used;
    memcpy(t, s, n);
    t[n] = '\0';
    b->used += n + 1;
    return t;
}
