/*
 * event_list: the typed events a codec read from one message (or one
 * streamed event), each beside the name of the wire event it came from,
 * so that an error the session reports by origin can be worded with it.
 *
 * Ownership: the list owns its arrays; type names are borrowed (a codec's
 * static table, or its parsed message while the events are used).
 * fbf_event_list_push() returns NULL when out of memory, the list intact.
 */
#ifndef FBF_EVENT_LIST_H
#define FBF_EVENT_LIST_H

#include <stddef.h>

#include "io/session.h"

typedef struct fbf_event_list {
    fbf_event *ev;
    const char **types;
    size_t n, cap;
} fbf_event_list;

void fbf_event_list_fini(fbf_event_list *l);
static inline void fbf_event_list_clear(fbf_event_list *l) { l->n = 0; }

/* A new event, zeroed but for its kind, time and origin. */
fbf_event *fbf_event_list_push(fbf_event_list *l, fbf_event_kind kind, double time, long origin,
                               const char *type);

/* The type of the event of that origin, `none` when no such event. */
const char *fbf_event_list_type(const fbf_event_list *l, long origin, const char *none);

#endif
