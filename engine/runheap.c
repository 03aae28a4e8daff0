/*
 * runheap: the engine's min-heap of running ends (see runheap.h).
 */
#include "engine/runheap.h"

#include <errno.h>
#include <stdlib.h>

void fbf_runheap_pop(fbf_runheap *h)
{
    fbf_runheap_item last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->v[c + 1].end < h->v[c].end)
            c++;
        if (!(h->v[c].end < last.end))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
}

int fbf_runheap_push(fbf_runheap *h, double end, fbf_job_h j)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 256;
        fbf_runheap_item *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        h->v = v;
        h->cap = cap;
    }
    size_t i = h->n++;
    while (i > 0 && end < h->v[(i - 1) / 2].end) {
        h->v[i] = h->v[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->v[i] = (fbf_runheap_item){end, j};
    return 0;
}

void fbf_runheap_fini(fbf_runheap *h)
{
    free(h->v);
    h->v = NULL;
    h->n = h->cap = 0;
}
