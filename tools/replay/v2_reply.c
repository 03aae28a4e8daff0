/*
 * v2_reply: checks a scheduler's reply in the Batsim v2 text protocol at
 * least as strictly as Batsim did (its C++ versions of 2016, which spoke
 * it), and applies its decisions one event at a time, in order, to the
 * state the v4 replay uses too (so a decision is judged against what the
 * earlier ones of the same reply left).
 *
 * A reply is "VERSION:TIME|DATE:STAMP[:CONTENT]|...". Refused, with
 * Batsim's reason where it had one:
 *   - an empty reply, a byte outside printable ASCII, no event, an empty
 *     event, a header that is not VERSION:TIME, a version above 3, TIME
 *     before the request's now (as printed)
 *   - an event date that is not a number, after TIME, or before the
 *     previous event's (the first one's: before the request's now)
 *   - a stamp longer than one character, unknown, one that only Batsim
 *     sends (S C p e A Z F f), or newer than the reply's version (J R: 2,
 *     n P E: 1, N: 0); content where the stamp has none, or none where it
 *     needs one
 *   J  WLOAD!JOB=MIDS[;...]: a known job (a bare JOB means static!JOB, as
 *      in Batsim) that waits; MIDS a comma list of ids and closed
 *      intervals a-b (a <= b), each machine existing, listed once, free
 *      (ON under --energy), exactly res of them
 *   R  WLOAD!JOB: a known job that waits
 *   n  TIME: strictly after the time the event takes effect ("You asked to
 *      be awaken in the past!"); the N wake-up comes at max(TIME, that
 *      time + 1e-5 s), as Batsim's waiter never slept less
 *   P  MIDS=PSTATE, E: only under --energy; P switches idle ON machines to
 *      the sleep pstate or OFF ones to the compute pstate (machines.c),
 *      acknowledged by one p; E is answered by one e
 *   after a message carrying Z, only N
 * A decision takes effect at max(its date, the request's true now), and
 * the reply's TIME moves the clock, as in the v4 replay (replay.h).
 */
#include "tools/replay/replay.h"
#include "tools/replay/machines.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_says[] = {
    [FBF_RJ_PENDING] = "has not been submitted yet",
    [FBF_RJ_WAITING] = "is waiting",
    [FBF_RJ_RUNNING] = "is running",
    [FBF_RJ_DONE] = "has finished",
    [FBF_RJ_REJECTED] = "was rejected",
};

/* One event being checked, for the error texts. */
typedef struct v2_ev {
    long i;
    char stamp;
    const char *text; /* the whole event, NUL-terminated */
} v2_ev;

static int efail(fbf_replay *r, const v2_ev *e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int efail(fbf_replay *r, const v2_ev *e, const char *fmt, ...)
{
    char why[768], type[2] = {e->stamp, '\0'};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return fbf_replay_fail(r, e->i, e->stamp ? type : "?", NULL,
                           "Invalid event received ('%.100s'): %s", e->text, why);
}

/* A time: digits, '.', exponent, sign; what strtod reads whole. */
static bool parse_time(const char *s, double *out)
{
    if (!*s || strlen(s) > 60 || strspn(s, "0123456789.eE+-") != strlen(s) ||
        !strpbrk(s, "0123456789"))
        return false;
    char *end;
    *out = strtod(s, &end);
    return *end == '\0' && isfinite(*out);
}

/* A machine id or pstate: decimal digits only, within max. */
static bool parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    if (n == 0 || n > 12)
        return false;
    uint64_t v = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] < '0' || s[k] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[k] - '0');
    }
    *out = v;
    return v <= max;
}

/* MIDS ("1,3-5") into r->scratch. want: the job's size to check the count
 * against as Batsim did, or -1. why gets the reason on -EPROTO. */
static int parse_mids(fbf_replay *r, const char *mids, int64_t want, const char *job, char *why,
                      size_t cap)
{
    fbf_idset *s = &r->scratch;
    fbf_idset_clear(s);
    uint64_t listed = 0;
    for (const char *p = mids;;) {
        size_t n = strcspn(p, ",");
        const char *dash = memchr(p, '-', n);
        uint64_t a, b;
        bool num = dash ? parse_uint(p, (size_t)(dash - p), UINT64_MAX, &a) &&
                              parse_uint(dash + 1, n - (size_t)(dash - p) - 1, UINT64_MAX, &b)
                        : parse_uint(p, n, UINT64_MAX, &a);
        if (!dash)
            b = a;
        if (!num) {
            snprintf(why, cap, "the MIDk '%.*s' should either be a single machine ID (syntax: "
                     "MID to represent the machine ID MID) or a closed interval (syntax: "
                     "MIDa-MIDb to represent the machine interval [MIDA,MIDb])", (int)n, p);
            return -EPROTO;
        }
        if (a > b) {
            snprintf(why, cap, "the MIDk '%.*s' is composed of two parts (1:%llu and 2:%llu) "
                     "but the first value must be lesser than or equal to the second one",
                     (int)n, p, (unsigned long long)a, (unsigned long long)b);
            return -EPROTO;
        }
        if (b >= r->cfg.nb_res) {
            snprintf(why, cap, "the machine %llu does not exist (the platform has %u: 0-%u)",
                     (unsigned long long)(a >= r->cfg.nb_res ? a : r->cfg.nb_res),
                     r->cfg.nb_res, r->cfg.nb_res - 1);
            return -EPROTO;
        }
        fbf_range one = {(uint32_t)a, (uint32_t)b};
        const fbf_idset part = {&one, 1, 1};
        if (fbf_idset_intersects(s, &part)) {
            uint64_t id = a;
            while (!fbf_idset_contains(s, (uint32_t)id))
                id++;
            snprintf(why, cap, "machine %llu is listed twice", (unsigned long long)id);
            return -EPROTO;
        }
        listed += b - a + 1;
        if (want >= 0 && listed > (uint64_t)want) {
            snprintf(why, cap, "the job %s size is %lld but at least %llu machines were "
                     "allocated", job, (long long)want, (unsigned long long)listed);
            return -EPROTO;
        }
        if (fbf_idset_add_range(s, (uint32_t)a, (uint32_t)b) < 0)
            return -ENOMEM;
        if (!p[n])
            return 0;
        p += n + 1;
    }
}

/* The job named id, or -1: Batsim read a bare JOB as static!JOB. */
static int64_t find_job(const fbf_replay *r, const char *id)
{
    int64_t j = fbf_workload_find(r->wl, id);
    if (j >= 0 || strchr(id, '!') || strlen(id) > 200)
        return j;
    char full[256];
    snprintf(full, sizeof full, "static!%s", id);
    return fbf_workload_find(r->wl, full);
}

static int unknown_job(fbf_replay *r, const v2_ev *e, const char *what, const char *id)
{
    return efail(r, e, "%s: The job identifier '%.80s' is not valid. Job identifiers must be of "
                 "the form [WORKLOAD_NAME!]JOB_ID. If WORKLOAD_NAME! is omitted, "
                 "WORKLOAD_NAME='static' is used. Furthermore, the corresponding job must exist.",
                 what, id);
}

/* One WLOAD!JOB=MIDS of a J (a is modified: '=' becomes NUL). */
static int allocate(fbf_replay *r, const v2_ev *e, char *a, double at)
{
    char *eq = strchr(a, '=');
    if (!eq || strchr(eq + 1, '='))
        return efail(r, e, "Invalid job allocation received ('%.80s'): it must be composed of "
                     "two parts separated by a '='", a);
    *eq = '\0';
    const char *mids = eq + 1;
    int64_t ji = find_job(r, a);
    if (ji < 0)
        return unknown_job(r, e, "Invalid job allocation received", a);
    const fbf_wl_job *wj = &r->wl->jobs[ji];
    const fbf_rjob *j = &r->jobs[ji];
    if (j->state != FBF_RJ_WAITING)
        return efail(r, e, "Invalid static job allocation received: the job %s state indicates "
                     "it cannot be executed now (it %s)", wj->id, state_says[j->state]);
    char why[400];
    int rc = parse_mids(r, mids, wj->res, wj->id, why, sizeof why);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return efail(r, e, "Invalid job allocation received ('%s=%.60s'): %s", wj->id, mids, why);
    const fbf_idset *s = &r->scratch;
    uint64_t count = fbf_idset_count(s);
    if (count != (uint64_t)wj->res)
        return efail(r, e, "Invalid job allocation received ('%s=%.60s'): the job %s size is "
                     "%lld but %llu machines were allocated", wj->id, mids, wj->id,
                     (long long)wj->res, (unsigned long long)count);
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            if (r->owner[id] != FBF_NO_JOB)
                return efail(r, e, "Invalid job allocation: machine %u is currently computing "
                             "jobs (these ones: {%s}) whereas space sharing is forbidden", id,
                             r->wl->jobs[r->owner[id]].id);
            if (r->mach && fbf_machines_state_of(r, id) != FBF_RM_ON)
                return efail(r, e, "Invalid job allocation: machine %u cannot compute jobs now "
                             "(it is %s, not in a computation pstate)", id,
                             fbf_machines_state_name(fbf_machines_state_of(r, id)));
        }
    rc = fbf_replay_start_job(r, (uint32_t)ji, s, at, why, sizeof why);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return rc < 0 ? efail(r, e, "job %s: %s", wj->id, why) : 0;
}

static int do_reject(fbf_replay *r, const v2_ev *e, const char *id, double at)
{
    int64_t ji = find_job(r, id);
    if (ji < 0)
        return unknown_job(r, e, "Invalid job rejection received", id);
    if (r->jobs[ji].state != FBF_RJ_WAITING)
        return efail(r, e, "job %s cannot be rejected now (it %s). For being rejected, a job "
                     "must be submitted and not allocated yet.", r->wl->jobs[ji].id,
                     state_says[r->jobs[ji].state]);
    fbf_replay_reject_job_at(r, (uint32_t)ji, at);
    return 0;
}

static int do_call(fbf_replay *r, const v2_ev *e, const char *when, double at)
{
    double w;
    if (!parse_time(when, &w))
        return efail(r, e, "the time to be awaken ('%.40s') is not a number", when);
    if (!(w > at))
        return efail(r, e, "You asked to be awaken in the past! (you ask: %f, it is: %f)", w, at);
    /* arg 1: a call that came at the waiter's minimum (livelock guard, sim.c) */
    bool soon = w - at < FBF_REPLAY_MIN_SLEEP;
    fbf_replay_heap_push(r, soon ? at + FBF_REPLAY_MIN_SLEEP : w, FBF_EV_CALL, soon, r->seq++);
    return 0;
}

static int do_pstate(fbf_replay *r, const v2_ev *e, char *c, double at)
{
    char *eq = strchr(c, '=');
    uint64_t ps;
    if (!eq || !parse_uint(eq + 1, strlen(eq + 1), UINT32_MAX, &ps))
        return efail(r, e, "invalid pstate modification message content ('%.60s'): it must be "
                     "formated like M=P where M is a machine range (1,2,3,6,7 or 1-3,6-7 for "
                     "example) and P a pstate number of machines M", c);
    *eq = '\0';
    char why[400];
    int rc = parse_mids(r, c, -1, NULL, why, sizeof why);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    if (rc < 0)
        return efail(r, e, "Invalid pstate modification message content: %s", why);
    const fbf_energy_config *cfg = fbf_machines_config(r);
    bool on = ps == cfg->compute_pstate;
    if (!on && ps != cfg->sleep_pstate)
        return efail(r, e, "machines have no pstate %llu that fastbf-replay models (compute "
                     "pstate %u, sleep pstate %u)", (unsigned long long)ps, cfg->compute_pstate,
                     cfg->sleep_pstate);
    const fbf_idset *s = &r->scratch;
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++) {
            int st = fbf_machines_state_of(r, id);
            if (r->owner[id] != FBF_NO_JOB || st == FBF_RM_SWITCHING_OFF ||
                st == FBF_RM_SWITCHING_ON)
                return efail(r, e, "machine %u's pstate can only be changed while the machine "
                             "is idle or sleeping, which is not the case now (%s)", id,
                             r->owner[id] != FBF_NO_JOB ? "it computes a job"
                                                        : fbf_machines_state_name(st));
            if (st == FBF_RM_OFF && !on)
                return efail(r, e, "asked to switch machine %u from pstate %u (a sleep pstate) "
                             "to pstate %llu (not a computation pstate), which is forbidden",
                             id, cfg->sleep_pstate, (unsigned long long)ps);
            if (st == FBF_RM_ON && on)
                return efail(r, e, "machine %u is already in pstate %llu", id,
                             (unsigned long long)ps);
        }
    return fbf_machines_apply(r, s, (uint32_t)ps, at) < 0
               ? fbf_errorf(&r->err, -ENOMEM, "out of memory")
               : 0;
}

/* The version each stamp a scheduler may send needs; -1 for the others. */
static int needs(char stamp)
{
    switch (stamp) {
    case 'N': return 0;
    case 'n': case 'P': case 'E': return 1;
    case 'J': case 'R': return 2;
    default: return -1;
    }
}

/* One event ev (NUL-terminated, modified in place). */
static int apply_event(fbf_replay *r, long i, char *ev, long version, double msg_t, double *prev)
{
    v2_ev e = {i, '\0', ev};
    char copy[128];
    snprintf(copy, sizeof copy, "%s", ev); /* the parts below cut ev */
    e.text = copy;
    char *c1 = strchr(ev, ':');
    if (!c1)
        return efail(r, &e, "it should be composed of at least 2 parts separated by a ':'");
    *c1 = '\0';
    char *stamp = c1 + 1, *content = strchr(stamp, ':');
    if (content)
        *content++ = '\0';
    e.stamp = stamp[0];
    if (strlen(stamp) != 1)
        return efail(r, &e, "network stamp ('%.20s') should be of length 1", stamp);
    double date;
    if (!parse_time(ev, &date))
        return efail(r, &e, "its date ('%.40s') is not a number", ev);
    if (date > msg_t)
        return efail(r, &e, "its date (%f) is after the time of the message (%f)", date, msg_t);
    if (date < *prev)
        return efail(r, &e, "its date (%f) cannot be before the previous event date (%f)", date,
                     *prev);
    *prev = date;
    char sc = stamp[0];
    if (strchr("SCpeAZFf", sc))
        return efail(r, &e, "stamp '%c' is one Batsim sends to the scheduler, never one it "
                     "receives", sc);
    int need = needs(sc);
    if (need < 0)
        return efail(r, &e, "unhandled network stamp received ('%c')", sc);
    if (version < need)
        return efail(r, &e, "stamp '%c' needs protocol version %d or later, the message says %ld",
                     sc, need, version);
    if (r->ending && sc != 'N')
        return efail(r, &e, "the simulation is over (Z was sent): its reply may hold N events "
                     "only");
    bool has = sc != 'N' && sc != 'E';
    if (content && (!has || strchr(content, ':')))
        return efail(r, &e, "'%c' events must be composed of %d parts separated by ':'", sc,
                     has ? 3 : 2);
    if (!content && has)
        return efail(r, &e, "'%c' events must be composed of 3 parts separated by ':'", sc);
    double at = date > r->req_now ? date : r->req_now;
    switch (sc) {
    case 'N':
        return 0;
    case 'n':
        return do_call(r, &e, content, at);
    case 'R':
        return do_reject(r, &e, content, at);
    case 'J':
        for (char *a = content;;) {
            char *semi = strchr(a, ';');
            if (semi)
                *semi = '\0';
            if (!*a)
                return efail(r, &e, "an empty job allocation (';' at an end or twice in a row)");
            int rc = allocate(r, &e, a, at);
            if (rc < 0)
                return rc;
            if (!semi)
                return 0;
            a = semi + 1;
        }
    default: /* 'P', 'E' */
        if (!r->mach)
            return efail(r, &e, "A %s message has been received whereas energy is not currently "
                         "used by Batsim (fastbf-replay --energy)",
                         sc == 'P' ? "pstate modification" : "consumed energy");
        if (sc == 'P')
            return do_pstate(r, &e, content, at);
        return fbf_machines_ask_energy(r, at) < 0 ? fbf_errorf(&r->err, -ENOMEM, "out of memory")
                                                   : 0;
    }
}

int fbf_v2_apply_reply(fbf_replay *r, const char *text, size_t len)
{
    if (len == 0)
        return fbf_replay_fail(r, -1, NULL, NULL, "Invalid message received (size=0)");
    for (size_t k = 0; k < len; k++) {
        unsigned char ch = (unsigned char)text[k];
        if (ch < 0x20 || ch > 0x7e)
            return fbf_replay_fail(r, -1, NULL, NULL, "byte 0x%02x at offset %zu of %zu is not "
                                   "printable ASCII (messages are ASCII text)", ch, k, len);
    }
    if (!fbf_replay_grow((void **)&r->v2_buf, &r->v2_cap, len + 1, 1))
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    char *buf = r->v2_buf;
    memcpy(buf, text, len);
    buf[len] = '\0';
    char *bar = strchr(buf, '|');
    if (!bar)
        return fbf_replay_fail(r, -1, NULL, NULL, "Invalid message received ('%.100s'): it "
                               "should be composed of at least 2 parts separated by a '|'", buf);
    *bar = '\0';
    char *colon = strchr(buf, ':');
    double t;
    if (!colon || strchr(colon + 1, ':'))
        return fbf_replay_fail(r, -1, NULL, NULL, "the header '%.60s' is not VERSION:TIME", buf);
    *colon = '\0';
    uint64_t version;
    if (!parse_uint(buf, strlen(buf), UINT32_MAX, &version))
        return fbf_replay_fail(r, -1, NULL, NULL, "the protocol version '%.20s' is not a number",
                               buf);
    if (version > FBF_V2_VERSION)
        return fbf_replay_fail(r, -1, NULL, NULL, "protocol version %llu is newer than this "
                               "Batsim's (%d)", (unsigned long long)version, FBF_V2_VERSION);
    if (!parse_time(colon + 1, &t))
        return fbf_replay_fail(r, -1, NULL, NULL, "the message time '%.40s' is not a number",
                               colon + 1);
    if (t < r->req_shown) {
        char a[40], b[40];
        fbf_jbuf_fmt(a, sizeof a, t);
        fbf_jbuf_fmt(b, sizeof b, r->req_shown);
        return fbf_replay_fail(r, -1, NULL, NULL, "the message time %s is before the request's "
                               "time %s", a, b);
    }
    /* Batsim's first "previous event date" was the request's, as printed. */
    double prev = r->req_shown;
    long i = 0;
    for (char *ev = bar + 1;; i++) {
        char *next = strchr(ev, '|');
        if (next)
            *next = '\0';
        if (!*ev)
            return fbf_replay_fail(r, i, NULL, NULL, "an empty event ('|' at the end or twice "
                                   "in a row)");
        int rc = apply_event(r, i, ev, (long)version, t, &prev);
        if (rc < 0)
            return rc;
        if (!next)
            break;
        ev = next + 1;
    }
    r->clock = t > r->req_now ? t : r->req_now;
    return 0;
}
