/*
 * bv2_codec: the Batsim v2 text protocol's syntax (see bv2_codec.h).
 */
#include "io/bv2_codec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The text protocol's last version. */
#define VERSION 3

typedef struct ctx {
    fbf_bv2_decoder *d;
    int index; /* of the event; -1 for the message's header */
    char stamp;
    double ts;
    fbf_error *err;
} ctx;

static int bad(const ctx *c, const char *fmt, const char *what)
{
    char text[200];
    snprintf(text, sizeof text, fmt, what);
    if (c->index < 0)
        return fbf_errorf(c->err, -EPROTO, "message %lu: %s", c->d->nb_messages, text);
    return fbf_errorf(c->err, -EPROTO, "message %lu: event %d (%c): %s", c->d->nb_messages,
                      c->index, c->stamp, text);
}

/* A whole token as a finite number. */
static bool read_number(const char *s, double *out)
{
    if (!*s || strchr(" \t+", *s))
        return false;
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    return !*end && errno == 0 && isfinite(*out) && !strpbrk(s, "xXnNiI");
}

static bool read_uint(const char *s, const char **end, uint32_t *out)
{
    if (*s < '0' || *s > '9')
        return false;
    unsigned long long v = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (unsigned long long)(*s - '0');
        if (v > FBF_IDSET_MAX_ID)
            return false;
    }
    *end = s;
    *out = (uint32_t)v;
    return true;
}

/* MID1,MID2,MIDa-MIDb into set. */
static int read_machines(const ctx *c, const char *s, fbf_idset *set)
{
    fbf_idset_clear(set);
    const char *p = s;
    for (;;) {
        uint32_t lo, hi;
        if (!read_uint(p, &p, &lo))
            return bad(c, "machines \"%s\": expected ids or intervals a-b separated by commas",
                       s);
        hi = lo;
        if (*p == '-' && (!read_uint(p + 1, &p, &hi) || hi < lo))
            return bad(c, "machines \"%s\": expected ids or intervals a-b (a <= b) separated "
                       "by commas", s);
        if (fbf_idset_add_range(set, lo, hi) < 0)
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
        if (*p == '\0')
            return 0;
        if (*p++ != ',')
            return bad(c, "machines \"%s\": expected ids or intervals a-b separated by commas",
                       s);
    }
}

/* The events decoded so far point into d->sets: when it grows, they are
 * moved along (copied, not realloc'ed, so that the old block is still
 * there to be measured against). */
static fbf_idset *next_set(fbf_bv2_decoder *d)
{
    if (d->nsets == d->sets_cap) {
        size_t cap = d->sets_cap ? 2 * d->sets_cap : 8;
        fbf_idset *s = malloc(cap * sizeof *s);
        if (!s)
            return NULL;
        if (d->sets_cap)
            memcpy(s, d->sets, d->sets_cap * sizeof *s);
        for (size_t i = d->sets_cap; i < cap; i++)
            fbf_idset_init(&s[i]);
        for (size_t i = 0; i < d->n; i++) {
            fbf_event *e = &d->ev[i];
            const fbf_idset **set = e->kind == FBF_EV_STATE_CHANGED ? &e->u.state.machines
                                    : e->kind == FBF_EV_MACHINES_FAILED ||
                                            e->kind == FBF_EV_MACHINES_RESTORED
                                        ? &e->u.machines
                                        : NULL;
            if (set)
                *set = s + (*set - d->sets);
        }
        free(d->sets);
        d->sets = s;
        d->sets_cap = cap;
    }
    return &d->sets[d->nsets++];
}

static fbf_event *push(const ctx *c, fbf_event_kind kind)
{
    fbf_bv2_decoder *d = c->d;
    if (d->n == d->cap) {
        size_t cap = d->cap ? 2 * d->cap : 64;
        fbf_event *ev = realloc(d->ev, cap * sizeof *ev);
        if (ev)
            d->ev = ev;
        char *st = realloc(d->stamps, cap);
        if (st)
            d->stamps = st;
        if (!ev || !st)
            return NULL;
        d->cap = cap;
    }
    d->stamps[d->n] = c->stamp;
    fbf_event *e = &d->ev[d->n++];
    memset(e, 0, sizeof *e);
    e->kind = kind;
    e->time = c->ts;
    e->origin = c->index;
    return e;
}

static bool is_job_id(const char *s)
{
    const char *bang = strchr(s, '!');
    /* ':' would split the J that starts it, as ',' ';' '=' would. */
    return bang && bang != s && bang[1] && !strchr(bang + 1, '!') && !strpbrk(s, ",;=:");
}

/* The minimal version of a stamp from Batsim; -1: not one of those. */
static int from_batsim(char st)
{
    switch (st) {
    case 'N': return 0;
    case 'p': case 'e': return 1;
    case 'S': case 'C': return 2;
    case 'A': case 'Z': case 'F': case 'f': return 3;
    default: return -1;
    }
}

static int read_event(ctx *c, char *text, unsigned version)
{
    fbf_bv2_decoder *d = c->d;
    char *colon = strchr(text, ':');
    if (!colon || colon[1] == '\0')
        return bad(c, "\"%s\": expected TIME:STAMP[:CONTENT]", text);
    *colon = '\0';
    char *stamp = colon + 1, *content = NULL;
    bool one = stamp[1] == ':' || stamp[1] == '\0';
    c->stamp = one ? stamp[0] : '?'; /* so that a bad time names its event */
    if (!read_number(text, &c->ts) || c->ts < 0)
        return bad(c, "time \"%s\": expected a number >= 0", text);
    if (!one) {
        stamp[strcspn(stamp, ":")] = '\0';
        return bad(c, "stamp \"%s\": expected one character", stamp);
    }
    if (stamp[1] == ':')
        content = stamp + 2;
    int need = from_batsim(c->stamp);
    if (need < 0 && strchr("JPRnE", c->stamp))
        return bad(c, "%s", "this stamp goes from the scheduler to Batsim, not the other way");
    if (need < 0)
        return bad(c, "%s", "unknown stamp");
    if ((unsigned)need > version) {
        char t[80];
        snprintf(t, sizeof t, "this stamp needs protocol version %d, the message says %u",
                 need, version);
        return bad(c, "%s", t);
    }
    if (c->ts > d->now || (d->n && c->ts < d->ev[d->n - 1].time)) {
        char t[120];
        snprintf(t, sizeof t, "time %.6f is %s %.6f", c->ts,
                 c->ts > d->now ? "after the message's" : "before the previous event's",
                 c->ts > d->now ? d->now : d->ev[d->n - 1].time);
        return bad(c, "%s", t);
    }
    if (d->ended)
        return bad(c, "%s", "comes after Z (the simulation ended)");
    if ((c->stamp == 'A') == d->begun)
        return bad(c, "%s", d->begun ? "the simulation already began (A twice)"
                                     : "comes before A (the simulation's beginning)");
    bool wants = strchr("SCFfpe", c->stamp) != NULL;
    if (wants && (!content || !*content))
        return bad(c, "%s", "expected content after the stamp");
    if (!wants && content)
        return bad(c, "unexpected content \"%s\" after this stamp", content);
    fbf_event *e;
    fbf_idset *set;
    double v;
    switch (c->stamp) {
    case 'A':
        d->begun = true;
        if (!(e = push(c, FBF_EV_SIMULATION_BEGINS)))
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
        e->u.begins = &d->begins;
        return 0;
    case 'Z':
        d->ended = true;
        return (e = push(c, FBF_EV_SIMULATION_ENDS)) ? 0 : fbf_errorf(c->err, -ENOMEM, "oom");
    case 'N':
        return (e = push(c, FBF_EV_CALL_DUE)) ? 0 : fbf_errorf(c->err, -ENOMEM, "oom");
    case 'S':
    case 'C':
        if (!is_job_id(content))
            return bad(c, "job \"%s\": expected WORKLOAD!JOB_ID", content);
        if (!(e = push(c, c->stamp == 'S' ? FBF_EV_JOB_SUBMITTED : FBF_EV_JOB_ENDED)))
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
        if (c->stamp == 'S')
            e->u.submitted.id = content; /* described by the store */
        else
            e->u.ended.id = content;
        return 0;
    case 'e':
        if (!read_number(content, &v) || v < 0)
            return bad(c, "energy \"%s\": expected a number of joules >= 0", content);
        if (!(e = push(c, FBF_EV_ENERGY)))
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
        e->u.joules = v;
        return 0;
    default: /* F f p */
        break;
    }
    char *eq = c->stamp == 'p' ? strrchr(content, '=') : NULL;
    uint32_t pstate = 0;
    const char *end;
    if (c->stamp == 'p') {
        if (!eq || !read_uint(eq + 1, &end, &pstate) || *end)
            return bad(c, "\"%s\": expected MACHINES=PSTATE", content);
        *eq = '\0';
    }
    if (!(set = next_set(d)))
        return fbf_errorf(c->err, -ENOMEM, "out of memory");
    int rc = read_machines(c, content, set);
    if (rc < 0)
        return rc;
    fbf_event_kind k = c->stamp == 'p'   ? FBF_EV_STATE_CHANGED
                       : c->stamp == 'F' ? FBF_EV_MACHINES_FAILED
                                         : FBF_EV_MACHINES_RESTORED;
    if (!(e = push(c, k)))
        return fbf_errorf(c->err, -ENOMEM, "out of memory");
    if (k == FBF_EV_STATE_CHANGED) {
        e->u.state.machines = set;
        e->u.state.pstate = pstate;
    } else {
        e->u.machines = set;
    }
    return 0;
}

void fbf_bv2_decoder_init(fbf_bv2_decoder *d, const char *host, int port, const char *prefix)
{
    *d = (fbf_bv2_decoder){.last_now = -INFINITY};
    d->begins.store.enabled = true;
    d->begins.store.host = host;
    d->begins.store.port = port;
    d->begins.store.prefix = prefix;
}

void fbf_bv2_decoder_fini(fbf_bv2_decoder *d)
{
    free(d->ev);
    free(d->stamps);
    for (size_t i = 0; i < d->sets_cap; i++)
        fbf_idset_fini(&d->sets[i]);
    free(d->sets);
}

char fbf_bv2_decoded_stamp(const fbf_bv2_decoder *d, long origin)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->ev[i].origin == origin)
            return d->stamps[i];
    return '?';
}

int fbf_bv2_decode(fbf_bv2_decoder *d, char *content, size_t len, fbf_error *err)
{
    d->n = d->nsets = 0;
    d->nb_messages++;
    ctx c = {.d = d, .index = -1, .err = err};
    if (d->ended)
        return bad(&c, "%s", "received after Z (the simulation ended)");
    for (size_t i = 0; i < len; i++) {
        unsigned char b = (unsigned char)content[i];
        if (b < 0x20 || b > 0x7e) {
            char t[64];
            snprintf(t, sizeof t, "byte %zu is not printable ASCII (0x%02x)", i, b);
            return bad(&c, "%s", t);
        }
    }
    char *bar = strchr(content, '|');
    if (!bar)
        return bad(&c, "\"%.60s\": expected VERSION:TIME|TIME:STAMP...", content);
    *bar = '\0';
    char *colon = strchr(content, ':');
    uint32_t version;
    const char *end;
    if (!colon || !read_uint(content, &end, &version) || end != colon)
        return bad(&c, "header \"%.60s\": expected VERSION:TIME", content);
    if (version > VERSION) {
        char t[80];
        snprintf(t, sizeof t, "version %lu: the text protocol's versions are 0 to 3",
                 (unsigned long)version);
        return bad(&c, "%s", t);
    }
    /* Simulated time starts at 0: a negative one is no time of Batsim's. */
    if (!read_number(colon + 1, &d->now) || d->now < 0)
        return bad(&c, "time \"%.40s\": expected a number >= 0", colon + 1);
    if (d->now < d->last_now) {
        char t[120];
        snprintf(t, sizeof t, "time %.6f is before the previous message's %.6f", d->now,
                 d->last_now);
        return bad(&c, "%s", t);
    }
    d->last_now = d->now;
    int index = 0;
    for (char *ev = bar + 1; ev; index++) {
        char *next = strchr(ev, '|');
        if (next)
            *next++ = '\0';
        c.index = index;
        c.stamp = '?';
        int rc = read_event(&c, ev, version);
        if (rc < 0)
            return rc;
        ev = next;
    }
    c.index = -1;
    if (!d->begun)
        return bad(&c, "%s", "the first message must hold A (the simulation's beginning)");
    return 0;
}

/* ---------- replies ---------- */

static void put_machines(fbf_jbuf *b, const fbf_idset *s)
{
    char t[24];
    for (uint32_t i = 0; i < s->n; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_raw(b, t, fbf_jbuf_digits(t, s->r[i].lo));
        if (s->r[i].hi != s->r[i].lo) {
            fbf_jbuf_lit(b, "-");
            fbf_jbuf_raw(b, t, fbf_jbuf_digits(t, s->r[i].hi));
        }
    }
}

static void open_event(fbf_jbuf *b, const char *now, char stamp)
{
    fbf_jbuf_lit(b, "|");
    fbf_jbuf_raw(b, now, strlen(now));
    char st[3] = {':', stamp, '\0'};
    fbf_jbuf_raw(b, st, 2);
}

int fbf_bv2_encode(fbf_jbuf *b, double now_t, const fbf_engine *e, const fbf_out *outs, size_t n,
                   fbf_error *err)
{
    char now[32];
    fbf_jbuf_fmt_json(now, sizeof now, now_t);
    fbf_jbuf_reset(b);
    fbf_jbuf_lit(b, "3:");
    fbf_jbuf_raw(b, now, strlen(now));
    size_t events = 0;
    for (size_t i = 0; i < n; i++) {
        const fbf_out *o = &outs[i];
        switch (o->kind) {
        case FBF_OUT_METADATA: continue; /* no metadata in v2: a give-up is its R */
        case FBF_OUT_REJECT:
            open_event(b, now, 'R');
            fbf_jbuf_lit(b, ":");
            fbf_jbuf_raw(b, fbf_engine_job_id(e, o->job), strlen(fbf_engine_job_id(e, o->job)));
            break;
        case FBF_OUT_EXECUTE: {
            /* The starts that follow each other share one J. */
            bool first = i == 0 || outs[i - 1].kind != FBF_OUT_EXECUTE;
            if (first)
                open_event(b, now, 'J');
            fbf_jbuf_raw(b, first ? ":" : ";", 1);
            const char *id = fbf_engine_job_id(e, o->job);
            fbf_jbuf_raw(b, id, strlen(id));
            fbf_jbuf_lit(b, "=");
            put_machines(b, o->machines);
            break;
        }
        case FBF_OUT_SET_STATE: {
            open_event(b, now, 'P');
            fbf_jbuf_lit(b, ":");
            put_machines(b, o->machines);
            char t[24];
            fbf_jbuf_lit(b, "=");
            fbf_jbuf_raw(b, t, fbf_jbuf_digits(t, o->pstate));
            break;
        }
        case FBF_OUT_CALL_ME_LATER: {
            char t[32];
            fbf_jbuf_fmt_json(t, sizeof t, o->at);
            open_event(b, now, 'n');
            fbf_jbuf_lit(b, ":");
            fbf_jbuf_raw(b, t, strlen(t));
            break;
        }
        case FBF_OUT_QUERY_ENERGY: open_event(b, now, 'E'); break;
        default:
            return fbf_errorf(err, -ENOTSUP, "the v2 text protocol cannot carry a decision of "
                              "kind %d (kills, registrations and answers are Batsim v4's)",
                              (int)o->kind);
        }
        events++;
    }
    if (!events)
        open_event(b, now, 'N');
    return b->oom ? fbf_errorf(err, -ENOMEM, "out of memory building the reply") : 0;
}
