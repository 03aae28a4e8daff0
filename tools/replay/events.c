/*
 * events: the replayer's pending events, a binary min-heap keyed by
 * (time, kind, seq) (see message.h for what goes in it and replay.h for the
 * fields).
 *
 * Also the number format of everything Batsim writes itself (fbf_replay_put_f).
 *
 * Invariants: heap[0 .. heap_n) is a heap under ev_less; a push that
 * cannot grow the array sets r->oom and drops nothing already queued (the
 * run loop stops before the next send); pop needs heap_n > 0.
 */
#include "tools/replay/replay.h"

#include <math.h>
#include <stdio.h>


static bool ev_less(const fbf_rev *a, const fbf_rev *b)
{
    if (a->t != b->t)
        return a->t < b->t;
    if (a->kind != b->kind)
        return a->kind < b->kind;
    return a->seq < b->seq;
}

void fbf_replay_heap_push(fbf_replay *r, double t, uint32_t kind, uint32_t arg, uint64_t seq)
{
    if (!fbf_replay_grow((void **)&r->heap, &r->heap_cap, r->heap_n + 1, sizeof *r->heap)) {
        /* Out of memory mid-run: flagged, and the run loop stops before
         * the next send rather than lose an event. */
        r->oom = true;
        return;
    }
    fbf_rev e = {.t = t, .kind = kind, .arg = arg, .seq = seq};
    size_t i = r->heap_n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &r->heap[p]))
            break;
        r->heap[i] = r->heap[p];
        i = p;
    }
    r->heap[i] = e;
}

fbf_rev fbf_replay_heap_pop(fbf_replay *r)
{
    fbf_rev top = r->heap[0];
    fbf_rev last = r->heap[--r->heap_n];
    size_t i = 0, n = r->heap_n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ev_less(&r->heap[c + 1], &r->heap[c]))
            c++;
        if (!ev_less(&r->heap[c], &last))
            break;
        r->heap[i] = r->heap[c];
        i = c;
    }
    if (n)
        r->heap[i] = last;
    return top;
}

void fbf_replay_put_f(fbf_jbuf *b, double v)
{
    /* Whole seconds, the common case on traces, skip printf. */
    if (v == floor(v) && fabs(v) < 9e15) {
        fbf_jbuf_int(b, (int64_t)v);
        fbf_jbuf_lit(b, ".000000");
        return;
    }
    if (!isfinite(v)) { /* never a time Batsim sends; keeps the JSON valid */
        fbf_jbuf_lit(b, "null");
        return;
    }
    char t[352];
    int n = snprintf(t, sizeof t, "%f", v);
    fbf_jbuf_raw(b, t, n > 0 && (size_t)n < sizeof t ? (size_t)n : 0);
}
