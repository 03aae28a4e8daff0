/*
 * validate: checks every reply as strictly as Batsim does and applies its
 * decisions to the replay state, one event at a time and in order, so a
 * decision is judged against the state the earlier ones of the same reply
 * left (two EXECUTE_JOB on one resource: the second is the error).
 *
 * Checks, in order: valid JSON; an object with a number `now` >= the
 * request's now as printed; an `events` array; per event an object with a number
 * `timestamp` (<= reply now, not before the previous event), a known string
 * `type` and an object `data`; then per type:
 *   EXECUTE_JOB   job_id known, submitted, waiting (neither running,
 *                 finished nor rejected); alloc an interval set of exactly
 *                 res resources, all < nb_res and free at that moment;
 *                 an end time (start + run time) that is finite
 *   CALL_ME_LATER timestamp a number strictly after the time the event
 *                 takes effect (Batsim's "You asked to be awaken in the past!")
 *   REJECT_JOB, KILL_JOB, SET_JOB_METADATA, CHANGE_JOB_STATE  see decide.c
 *   NOTIFY        registration_finished / continue_registration change the
 *                 registration state after the reply (dynamic.c); any other
 *                 type is Batsim's "Unknown NOTIFY type received"
 *   REGISTER_PROFILE, REGISTER_JOB, ANSWER   see dynamic.c
 *   SET_RESOURCE_STATE, QUERY  with --energy, checked and applied by
 *                 machines.c (EXECUTE_JOB then also needs ON machines);
 *                 refused without it
 * The reply to SIMULATION_ENDS must have no event.
 *
 * The first violation stops the run: r->err names the message, the event
 * index, its type, the job and the field. Nothing here allocates per event
 * except cJSON's tree of the reply and the growth of the state arrays.
 */
#include "tools/replay/replay.h"
#include "tools/replay/machines.h"
#include "io/json_arena.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[] = {
    [FBF_RJ_PENDING] = "has not been submitted yet",
    [FBF_RJ_WAITING] = "is waiting",
    [FBF_RJ_RUNNING] = "is already running",
    [FBF_RJ_DONE] = "has already finished",
    [FBF_RJ_REJECTED] = "was rejected",
};

#define fail fbf_replay_fail
#define grow fbf_replay_grow

/* Fills r->err with the context prefix, then the reason. */
int fbf_replay_fail(fbf_replay *r, long ev, const char *type, const char *job, const char *fmt,
                    ...)
{
    char why[1024], now[40], ctx[160], full[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fbf_jbuf_fmt(now, sizeof now, r->req_shown);
    if (ev < 0)
        snprintf(ctx, sizeof ctx, "reply");
    else if (job)
        snprintf(ctx, sizeof ctx, "reply event %ld (%s, job %.60s)", ev, type ? type : "?", job);
    else
        snprintf(ctx, sizeof ctx, "reply event %ld (%s)", ev, type ? type : "?");
    int n = snprintf(full, sizeof full, "invalid reply to message #%zu (%s, now=%s): %s: %s",
                     r->msg_index, r->msg_kind ? r->msg_kind : "?", now, ctx, why);
    /* A reason longer than fbf_error holds (Batsim's, or a scheduler's
     * own NOTIFY text) is kept whole beside it. */
    free(r->err_long);
    r->err_long = n >= (int)sizeof r->err.text ? strdup(full) : NULL;
    return fbf_errorf(&r->err, -EPROTO, "%s", full);
}

bool fbf_replay_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 1024;
    while (c < need)
        c *= 2;
    void *n = realloc(*p, c * elem);
    if (!n)
        return false;
    *p = n;
    *cap = c;
    return true;
}

/* The job named by data.<field> as an index, or -1 after fail(). */
static int64_t job_of(fbf_replay *r, const cJSON *v, long ev, const char *type, const char *field)
{
    if (!cJSON_IsString(v))
        return fail(r, ev, type, NULL, "field data.%s is missing or not a string", field), -1;
    int64_t j = fbf_workload_find(r->wl, v->valuestring);
    if (j < 0)
        return fail(r, ev, type, v->valuestring, "unknown job id"), -1;
    return j;
}

static int do_execute(fbf_replay *r, const cJSON *data, long ev, double at)
{
    static const char T[] = "EXECUTE_JOB";
    int64_t ji = job_of(r, fbf_json_get(data, "job_id"), ev, T, "job_id");
    if (ji < 0)
        return -EPROTO;
    const fbf_rjob *j = &r->jobs[ji];
    const fbf_wl_job *wj = &r->wl->jobs[ji];
    if (j->state != FBF_RJ_WAITING) {
        char when[40] = "";
        if (j->state == FBF_RJ_RUNNING || j->state == FBF_RJ_DONE) {
            strcpy(when, " (started at ");
            fbf_jbuf_fmt(when + 13, sizeof when - 14, j->start);
            strcat(when, ")");
        }
        return fail(r, ev, T, wj->id, "the job %s%s", state_names[j->state], when);
    }
    const cJSON *alloc = fbf_json_get(data, "alloc");
    if (!cJSON_IsString(alloc))
        return fail(r, ev, T, wj->id, "field data.alloc is missing or not a string");
    fbf_error perr;
    if (fbf_idset_parse(&r->scratch, alloc->valuestring, &perr) < 0)
        return fail(r, ev, T, wj->id, "data.alloc '%.40s' is not an interval set: %s",
                    alloc->valuestring, perr.text);
    uint64_t count = fbf_idset_count(&r->scratch);
    if (count != (uint64_t)wj->res || wj->res < 1)
        return fail(r, ev, T, wj->id, "data.alloc '%.40s' has %llu resources, the job requests %lld",
                    alloc->valuestring, (unsigned long long)count, (long long)wj->res);
    const fbf_idset *s = &r->scratch;
    if (s->r[s->n - 1].hi >= r->cfg.nb_res)
        return fail(r, ev, T, wj->id,
                    "data.alloc: resource %u is out of range (the platform has %u: 0-%u)",
                    s->r[s->n - 1].hi, r->cfg.nb_res, r->cfg.nb_res - 1);
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++)
            if (r->owner[id] != FBF_NO_JOB)
                return fail(r, ev, T, wj->id, "data.alloc: resource %u is busy (held by %s)", id,
                            r->wl->jobs[r->owner[id]].id);
    char why[200];
    if (r->mach && fbf_machines_check_alloc(r, s, why, sizeof why) < 0)
        return fail(r, ev, T, wj->id, "%s", why);
    int rc = fbf_replay_start_job(r, (uint32_t)ji, s, at, why, sizeof why);
    if (rc == -ENOMEM)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory");
    return rc < 0 ? fail(r, ev, T, wj->id, "%s", why) : 0;
}

int fbf_replay_start_job(fbf_replay *r, uint32_t ji, const fbf_idset *s, double at, char *why,
                         size_t cap)
{
    fbf_rjob *j = &r->jobs[ji];
    const fbf_wl_job *wj = &r->wl->jobs[ji];
    /* Started this late, a long job would end at infinity: it would never
     * complete, and the run would stop as a deadlock that blames nobody. */
    bool cut = wj->walltime > 0 && wj->runtime > wj->walltime;
    double end = at + (cut ? wj->walltime : wj->runtime);
    if (!isfinite(end)) {
        char a[40], b[40];
        fbf_jbuf_fmt(a, sizeof a, at);
        fbf_jbuf_fmt(b, sizeof b, cut ? wj->walltime : wj->runtime);
        snprintf(why, cap, "started at %s, the job would run %s s and end past the largest "
                 "time the replayer can represent", a, b);
        return -EPROTO;
    }
    if (!grow((void **)&r->ranges, &r->ranges_cap, r->nranges + s->n, sizeof *r->ranges))
        return -ENOMEM;
    memcpy(r->ranges + r->nranges, s->r, s->n * sizeof *s->r);
    for (uint32_t k = 0; k < s->n; k++)
        for (uint32_t id = s->r[k].lo; id <= s->r[k].hi; id++)
            r->owner[id] = ji;
    j->ranges = r->nranges;
    j->nranges = s->n;
    r->nranges += s->n;
    j->state = FBF_RJ_RUNNING;
    j->start = at;
    j->start_seq = r->starts++;
    j->end = end;
    j->end_kind = cut ? FBF_END_WALLTIME : FBF_END_SUCCESS;
    r->waiting--;
    r->running++;
    fbf_replay_heap_push(r, j->end, FBF_EV_COMPLETED, ji, j->start_seq);
    return 0;
}

static int apply_event(fbf_replay *r, const cJSON *e, long i, double now, double *prev)
{
    if (!cJSON_IsObject(e))
        return fail(r, i, NULL, NULL, "the event is not an object");
    const cJSON *type = fbf_json_get(e, "type");
    if (!cJSON_IsString(type))
        return fail(r, i, NULL, NULL, "field type is missing or not a string");
    const char *t = type->valuestring;
    const cJSON *ts = fbf_json_get(e, "timestamp");
    if (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble))
        return fail(r, i, t, NULL, "field timestamp is missing or not a number");
    char a[40], b[40];
    if (ts->valuedouble > now) {
        fbf_jbuf_fmt(a, sizeof a, ts->valuedouble);
        fbf_jbuf_fmt(b, sizeof b, now);
        return fail(r, i, t, NULL, "timestamp %s is after the reply's now %s", a, b);
    }
    if (ts->valuedouble < *prev) {
        fbf_jbuf_fmt(a, sizeof a, ts->valuedouble);
        fbf_jbuf_fmt(b, sizeof b, *prev);
        return fail(r, i, t, NULL, "timestamp %s is before the previous event's %s "
                    "(timestamps must not decrease)", a, b);
    }
    *prev = ts->valuedouble;
    const cJSON *data = fbf_json_get(e, "data");
    if (!cJSON_IsObject(data))
        return fail(r, i, t, NULL, "field data is missing or not an object");
    /* A decision takes effect when it is made, but not before the request
     * it answers: the scheduler cannot change the past. */
    double at = ts->valuedouble > r->req_now ? ts->valuedouble : r->req_now;
    if (strcmp(t, "EXECUTE_JOB") == 0)
        return do_execute(r, data, i, at);
    if (strcmp(t, "REJECT_JOB") == 0)
        return fbf_replay_reject(r, data, i, at);
    if (strcmp(t, "CALL_ME_LATER") == 0) {
        const cJSON *when = fbf_json_get(data, "timestamp");
        if (!cJSON_IsNumber(when) || !isfinite(when->valuedouble))
            return fail(r, i, t, NULL, "Invalid JSON message: the 'timestamp' value in the "
                        "'data' value of event %ld (CALL_ME_LATER) should be a number.", i);
        /* Batsim applies the event at its time, which may be past the now
         * the request printed, and wants a time strictly after that. */
        double w = when->valuedouble;
        if (!(w > at))
            return fail(r, i, t, NULL, "You asked to be awaken in the past! (you ask: %f, it "
                        "is: %f)", w, at);
        /* Its waiter sleeps at least FBF_REPLAY_MIN_SLEEP; arg 1 marks a
         * call that came at that minimum (livelock guard, sim.c). */
        bool soon = w - at < FBF_REPLAY_MIN_SLEEP;
        fbf_replay_heap_push(r, soon ? at + FBF_REPLAY_MIN_SLEEP : w, FBF_EV_CALL, soon,
                             r->seq++);
        return 0;
    }
    if (strcmp(t, "KILL_JOB") == 0)
        return fbf_replay_kill(r, data, i, at);
    if (strcmp(t, "SET_JOB_METADATA") == 0)
        return fbf_replay_metadata(r, data, i, at);
    if (strcmp(t, "CHANGE_JOB_STATE") == 0)
        return fbf_replay_change_state(r, data, i, at);
    if (strcmp(t, "NOTIFY") == 0)
        return fbf_replay_notify(r, data, i);
    if (strcmp(t, "REGISTER_JOB") == 0)
        return fbf_replay_register_job(r, data, i, at);
    if (strcmp(t, "REGISTER_PROFILE") == 0)
        return fbf_replay_register_profile(r, data, i);
    if (strcmp(t, "ANSWER") == 0)
        return fbf_replay_answer(r, data, i);
    if (strcmp(t, "SET_RESOURCE_STATE") == 0 || strcmp(t, "QUERY") == 0) {
        if (!r->mach)
            return fail(r, i, t, NULL, "event type not supported by fastbf-replay without "
                        "--energy (Batsim handles %s only in its energy mode)",
                        t[0] == 'Q' ? "consumed_energy queries" : "machine states");
        char why[200];
        int rc = t[0] == 'Q' ? fbf_machines_query(r, data, at, why, sizeof why)
                             : fbf_machines_set(r, data, at, why, sizeof why);
        if (rc == -ENOMEM)
            return fbf_errorf(&r->err, -ENOMEM, "out of memory");
        return rc < 0 ? fail(r, i, t, NULL, "%s", why) : 0;
    }
    return fail(r, i, t, NULL, "unknown event type '%.40s'", t);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* True when text is exactly {"now":N,"events":[]} with N a JSON number
 * (RFC 8259 grammar), the reply most messages get: it is then valid and
 * eventless, and cJSON's node-per-field allocations can be skipped. Any
 * other text, however valid, takes the general path below. */
static bool empty_reply(const char *t, size_t len, double req_now, double *now)
{
    static const char head[] = "{\"now\":", tail[] = ",\"events\":[]}";
    const size_t hl = sizeof head - 1, tl = sizeof tail - 1;
    if (len <= hl + tl || len - hl - tl >= 40 || memcmp(t, head, hl) != 0 ||
        memcmp(t + len - tl, tail, tl) != 0)
        return false;
    const char *p = t + hl, *end = t + len - tl, *q = p;
    if (*q == '-')
        q++;
    if (q < end && *q == '0')
        q++;
    else if (q < end && *q >= '1' && *q <= '9')
        while (q < end && is_digit(*q))
            q++;
    else
        return false;
    if (q < end && *q == '.') {
        if (++q >= end || !is_digit(*q))
            return false;
        while (q < end && is_digit(*q))
            q++;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        if (++q < end && (*q == '+' || *q == '-'))
            q++;
        if (q >= end || !is_digit(*q))
            return false;
        while (q < end && is_digit(*q))
            q++;
    }
    if (q != end)
        return false;
    /* Most schedulers answer at the request's own time, in whole seconds
     * on trace-driven runs: recognising its digits spares strtod, which
     * costs ten times as much. */
    if (req_now >= 0 && req_now == floor(req_now) && req_now < 1e15) {
        char own[24];
        size_t n = fbf_jbuf_digits(own, (uint64_t)req_now);
        if ((size_t)(end - p) == n && memcmp(p, own, n) == 0) {
            *now = req_now;
            return true;
        }
    }
    char buf[48];
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    *now = strtod(buf, NULL);
    return true;
}

int fbf_replay_apply_reply(fbf_replay *r, const char *text, size_t len)
{
    double fast_now;
    if (empty_reply(text, len, r->req_shown, &fast_now) && isfinite(fast_now) &&
        fast_now >= r->req_shown) {
        r->clock = fast_now > r->req_now ? fast_now : r->req_now;
        return r->nqueries ? fbf_replay_answers_done(r) : 0;
    }
    /* The tree lives in the arena until the next reply: a malloc and a
     * free per node cost a sixth of the replayer's time. */
    if (!r->arena && !(r->arena = fbf_json_arena_create()))
        return fail(r, -1, NULL, NULL, "out of memory parsing the reply");
    cJSON *root = fbf_json_arena_parse(r->arena, text, len, NULL);
    if (!root && errno == ENOMEM)
        return fail(r, -1, NULL, NULL, "out of memory parsing the reply");
    if (!root) {
        const char *at = cJSON_GetErrorPtr();
        size_t off = at && at >= text && at <= text + len ? (size_t)(at - text) : 0;
        size_t show = len - off < 40 ? len - off : 40;
        return fail(r, -1, NULL, NULL, "malformed JSON at byte %zu of %zu: '%.*s'", off, len,
                    (int)show, text + off);
    }
    int rc = 0;
    const cJSON *now = fbf_json_get(root, "now");
    const cJSON *events = fbf_json_get(root, "events");
    char a[40], b[40];
    if (!cJSON_IsObject(root)) {
        rc = fail(r, -1, NULL, NULL, "the reply is not a JSON object");
    } else if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble)) {
        rc = fail(r, -1, NULL, NULL, "field now is missing or not a number");
    } else if (now->valuedouble < r->req_shown) {
        fbf_jbuf_fmt(a, sizeof a, now->valuedouble);
        fbf_jbuf_fmt(b, sizeof b, r->req_shown);
        rc = fail(r, -1, NULL, NULL, "now %s is before the request's now %s", a, b);
    } else if (!cJSON_IsArray(events)) {
        rc = fail(r, -1, NULL, NULL, "field events is missing or not an array");
    } else if (r->ending && events->child) {
        rc = fail(r, -1, NULL, NULL, "the reply to SIMULATION_ENDS must have no events (it has %d)",
                  cJSON_GetArraySize(events));
    } else {
        double prev = -INFINITY;
        long i = 0;
        for (const cJSON *e = events->child; e && !rc; e = e->next, i++)
            rc = apply_event(r, e, i, now->valuedouble, &prev);
        if (!rc && r->nqueries)
            rc = fbf_replay_answers_done(r);
        if (!rc) {
            fbf_replay_notify_apply(r);
            r->clock = now->valuedouble > r->req_now ? now->valuedouble : r->req_now;
        }
    }
    fbf_json_arena_release(r->arena);
    return rc;
}
