/*
 * event_list: a message's typed events (see event_list.h).
 */
#include "io/event_list.h"

#include <stdlib.h>
#include <string.h>

void fbf_event_list_fini(fbf_event_list *l)
{
    free(l->ev);
    free(l->types);
    *l = (fbf_event_list){0};
}

fbf_event *fbf_event_list_push(fbf_event_list *l, fbf_event_kind kind, double time, long origin,
                               const char *type)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        fbf_event *ev = realloc(l->ev, cap * sizeof *ev);
        if (ev)
            l->ev = ev;
        const char **t = realloc(l->types, cap * sizeof *t);
        if (t)
            l->types = t;
        if (!ev || !t)
            return NULL;
        l->cap = cap;
    }
    l->types[l->n] = type;
    fbf_event *e = &l->ev[l->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->time = time;
    e->origin = origin;
    return e;
}

const char *fbf_event_list_type(const fbf_event_list *l, long origin, const char *none)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->ev[i].origin == origin)
            return l->types[i];
    return none;
}
