/*
 * bv4_reply: the reply half of the Batsim v4 session (see
 * bv4_session_int.h). Every decision of the pass becomes one event in D0
 * order (REJECT, KILL, EXECUTE and its metadata tag, SET_RESOURCE_STATE,
 * CALL_ME_LATER), then fastbf's own registrations, NOTIFY and QUERY, then
 * the ANSWERs; all are stamped with the request's now, formatted once.
 *
 * The reply is written as text into the session's buffer as it is
 * decided (io/jbuf.h): a tree of a few cJSON nodes per decision, printed
 * and freed, cost more than the rest of the exchange. The events other
 * modules build as trees (registrations, answers) are printed into the
 * same text, in their place. The text is byte for byte what cJSON prints
 * for the same events.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_power.h"
#include "io/bv4_register.h"
#include "io/bv4_session_int.h"

/* The shortest text that reads back as exactly t. Every timestamp of a
 * reply is its `now`, so it is formatted once per reply and added as raw
 * text: cJSON's own number printer round-trips through sscanf each time.
 * Whole seconds, the common case of trace-driven runs, skip printf, whose
 * floating-point path costs more than the rest of a small reply. */
static void format_time(double t, char *buf, size_t cap)
{
    if (t == floor(t) && fabs(t) < 1e15 && cap >= 20) {
        long long v = (long long)t;
        size_t o = 0;
        if (v < 0)
            buf[o++] = '-';
        o += fbf_jbuf_digits(buf + o, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
        buf[o] = '\0';
        return;
    }
    snprintf(buf, cap, "%.15g", t);
    if (strtod(buf, NULL) != t)
        snprintf(buf, cap, "%.17g", t);
}

/* The reply being written: its buffer, its time text, and whether an
 * event was written yet (for the commas). */
typedef struct out {
    fbf_jbuf *b;
    const char *now;
    size_t now_len;
    size_t count; /* events written */
} out;

/* The comma before every event but the first. */
static void next_event(out *o)
{
    if (o->count++)
        fbf_jbuf_lit(o->b, ",");
}

/* The earliest time the next event may ask to be called at. */
static double earliest_call(const fbf_bv4_session *s, const out *o)
{
    return fbf_engine_now(s->engine) + FBF_BV4_CALL_MARGIN +
           FBF_BV4_CALL_PER_EVENT * (double)o->count;
}

/* Opens an event: the caller writes its data object, then closes it. */
static void open_event(out *o, const char *type, size_t type_len)
{
    next_event(o);
    fbf_jbuf_lit(o->b, "{\"timestamp\":");
    fbf_jbuf_raw(o->b, o->now, o->now_len);
    fbf_jbuf_lit(o->b, ",\"type\":\"");
    fbf_jbuf_raw(o->b, type, type_len);
    fbf_jbuf_lit(o->b, "\",\"data\":");
}
#define open_lit(o, t) open_event((o), "" t, sizeof(t) - 1)

static void close_event(out *o) { fbf_jbuf_lit(o->b, "}"); }

/* Writes every event of from (cJSON trees built by other modules),
 * stamped now. -ENOMEM. */
static int put_stamped(out *o, cJSON *from)
{
    cJSON *a;
    cJSON_ArrayForEach(a, from)
    {
        cJSON *t = cJSON_CreateRaw(o->now);
        if (!t || !cJSON_ReplaceItemInObjectCaseSensitive(a, "timestamp", t)) {
            cJSON_Delete(t);
            return -ENOMEM;
        }
        next_event(o);
        fbf_jbuf_json(o->b, a);
    }
    return 0;
}

/* tag_starts: why the job started, as SET_JOB_METADATA text. */
static void put_start_tag(fbf_bv4_session *s, out *o, fbf_job_h j)
{
    open_lit(o, "SET_JOB_METADATA");
    fbf_jbuf_lit(o->b, "{\"job_id\":");
    fbf_jbuf_str(o->b, fbf_engine_job_id(s->engine, j));
    switch (fbf_engine_job_start_reason(s->engine, j)) {
    case FBF_START_BACKFILLED: fbf_jbuf_lit(o->b, ",\"metadata\":\"reason=backfilled\"}"); break;
    case FBF_START_RESERVATION:
        fbf_jbuf_lit(o->b, ",\"metadata\":\"reason=reservation rsv=");
        fbf_jbuf_raw(o->b, o->now, o->now_len);
        fbf_jbuf_lit(o->b, "\"}");
        break;
    default: fbf_jbuf_lit(o->b, ",\"metadata\":\"reason=head\"}"); break;
    }
    close_event(o);
}

/* Every kill of the reply goes in one KILL_JOB, where the first is. */
static void put_kills(fbf_bv4_session *s, out *o, const fbf_decision *d, size_t n)
{
    open_lit(o, "KILL_JOB");
    fbf_jbuf_lit(o->b, "{\"job_ids\":[");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind != FBF_DEC_KILL)
            continue;
        if (!first)
            fbf_jbuf_lit(o->b, ",");
        first = false;
        fbf_jbuf_str(o->b, fbf_engine_job_id(s->engine, d[i].job));
    }
    fbf_jbuf_lit(o->b, "]}");
    close_event(o);
}

static void put_give_up(fbf_bv4_session *s, out *o, fbf_job_h j)
{
    /* Batsim 4.2.1 ends a waiting job only through REJECT_JOB (a
     * CHANGE_JOB_STATE that ends a job aborts it); metadata set just
     * before is kept in its jobs file, and says why. */
    char why[96];
    snprintf(why, sizeof why, "gave up after waiting %g s (fastbf --max-wait)",
             s->opt.engine.max_wait);
    const char *id = fbf_engine_job_id(s->engine, j);
    open_lit(o, "SET_JOB_METADATA");
    fbf_jbuf_lit(o->b, "{\"job_id\":");
    fbf_jbuf_str(o->b, id);
    fbf_jbuf_lit(o->b, ",\"metadata\":");
    fbf_jbuf_str(o->b, why);
    fbf_jbuf_lit(o->b, "}");
    close_event(o);
    open_lit(o, "REJECT_JOB");
    fbf_jbuf_lit(o->b, "{\"job_id\":");
    fbf_jbuf_str(o->b, id);
    fbf_jbuf_lit(o->b, "}");
    close_event(o);
}

static void put_call_me_later(fbf_bv4_session *s, out *o, double at)
{
    /* Batsim wakes the scheduler once per request: asking again for a
     * time still to come would only double the wake-up. */
    fbf_bv4_register *sub = s->opt.submitter;
    at = fmax(at, earliest_call(s, o));
    if ((at == s->last_call || (sub && at == fbf_bv4_register_asked(sub))) &&
        at > fbf_engine_now(s->engine))
        return;
    s->last_call = at;
    if (sub)
        fbf_bv4_register_note_call(sub, at);
    open_lit(o, "CALL_ME_LATER");
    fbf_jbuf_lit(o->b, "{\"timestamp\":");
    char t[32];
    format_time(at, t, sizeof t);
    fbf_jbuf_raw(o->b, t, strlen(t));
    fbf_jbuf_lit(o->b, "}");
    close_event(o);
}

static void put_decisions(fbf_bv4_session *s, out *o)
{
    size_t n;
    const fbf_decision *d = fbf_engine_decisions(s->engine, &n);
    bool killed = false;
    for (size_t i = 0; i < n; i++) {
        switch (d[i].kind) {
        case FBF_DEC_KILL:
            if (!killed)
                put_kills(s, o, d + i, n - i);
            killed = true;
            break;
        case FBF_DEC_SET_STATE:
            open_lit(o, "SET_RESOURCE_STATE");
            fbf_bv4_power_put_set(o->b, &d[i]);
            close_event(o);
            break;
        case FBF_DEC_GIVE_UP: put_give_up(s, o, d[i].job); break;
        case FBF_DEC_CALL_ME_LATER: put_call_me_later(s, o, d[i].at); break;
        case FBF_DEC_REJECT:
            open_lit(o, "REJECT_JOB");
            fbf_jbuf_lit(o->b, "{\"job_id\":");
            fbf_jbuf_str(o->b, fbf_engine_job_id(s->engine, d[i].job));
            fbf_jbuf_lit(o->b, "}");
            close_event(o);
            break;
        default: {
            open_lit(o, "EXECUTE_JOB");
            fbf_jbuf_lit(o->b, "{\"job_id\":");
            fbf_jbuf_str(o->b, fbf_engine_job_id(s->engine, d[i].job));
            fbf_jbuf_lit(o->b, ",\"alloc\":\"");
            const fbf_idset *a = fbf_engine_job_alloc(s->engine, d[i].job);
            fbf_jbuf_ranges(o->b, a->r, a->n);
            fbf_jbuf_lit(o->b, "\"}");
            close_event(o);
            if (s->opt.tag_starts)
                put_start_tag(s, o, d[i].job);
            break;
        }
        }
    }
}

int fbf_bv4_reply_build(fbf_bv4_session *s, cJSON *registrations, cJSON *answers)
{
    char now[32];
    format_time(fbf_engine_now(s->engine), now, sizeof now);
    out o = {.b = &s->out, .now = now, .now_len = strlen(now)};
    fbf_jbuf_reset(o.b);
    fbf_jbuf_lit(o.b, "{\"now\":");
    fbf_jbuf_raw(o.b, now, o.now_len);
    fbf_jbuf_lit(o.b, ",\"events\":[");
    int rc = 0;
    if (!s->ended) { /* SIMULATION_ENDS: a reply with no events */
        /* Registrations first: a job registered here may start below. */
        rc = put_stamped(&o, registrations);
        if (rc == 0)
            put_decisions(s, &o);
        if (rc == 0 && s->opt.submitter) {
            cJSON *after = cJSON_CreateArray();
            fbf_error e;
            if (!after || fbf_bv4_register_close(s->opt.submitter, fbf_engine_now(s->engine),
                                                 earliest_call(s, &o), after, &e) < 0)
                rc = -ENOMEM;
            else
                rc = put_stamped(&o, after);
            cJSON_Delete(after);
        }
        /* fastbf registers no job: tell Batsim at once so it can end. */
        if (rc == 0 && s->dynamic_jobs && !s->notified_registration && !s->opt.submitter) {
            open_lit(&o, "NOTIFY");
            fbf_jbuf_lit(o.b, "{\"type\":\"registration_finished\"}");
            close_event(&o);
            s->notified_registration = true;
        }
        bool idle = s->no_more_static && !fbf_engine_nb_waiting(s->engine) &&
                    !fbf_engine_nb_running(s->engine) && !s->final_query;
        if (rc == 0 && s->opt.query_energy && (s->query_due || idle)) {
            open_lit(&o, "QUERY");
            fbf_bv4_power_put_query(o.b);
            close_event(&o);
            s->query_due = false;
            s->final_query |= idle;
        }
        if (rc == 0)
            rc = put_stamped(&o, answers);
    }
    fbf_jbuf_lit(o.b, "]}");
    return rc < 0 || o.b->oom ? -ENOMEM : 0;
}

/* req's now, read as cheaply as a message that failed to parse allows:
 * the number after its first "now" key; the engine's otherwise. */
static double request_now(const fbf_bv4_session *s, const char *req, size_t len)
{
    static const char key[] = "\"now\":";
    char num[40];
    for (size_t i = 0; i + sizeof key - 1 < len; i++) {
        if (memcmp(req + i, key, sizeof key - 1) != 0)
            continue;
        size_t from = i + sizeof key - 1, n = 0;
        while (from + n < len && n < sizeof num - 1 && strchr("+-.0123456789eE", req[from + n]))
            n++;
        memcpy(num, req + from, n);
        num[n] = '\0';
        char *end;
        double v = strtod(num, &end);
        if (n && *end == '\0' && isfinite(v))
            return v;
        break;
    }
    return fbf_engine_now(s->engine);
}

const char *fbf_bv4_session_refusal(fbf_bv4_session *s, const char *req, size_t len,
                                    const char *why, size_t *reply_len)
{
    char now[32];
    format_time(request_now(s, req, len), now, sizeof now);
    out o = {.b = &s->out, .now = now, .now_len = strlen(now)};
    fbf_jbuf_reset(o.b);
    fbf_jbuf_lit(o.b, "{\"now\":");
    fbf_jbuf_raw(o.b, now, o.now_len);
    fbf_jbuf_lit(o.b, ",\"events\":[");
    open_lit(&o, "NOTIFY");
    size_t cap = strlen(why) + 32;
    char *text = malloc(cap);
    bool ok = text != NULL;
    if (ok) {
        snprintf(text, cap, "fastbf stopped: %s", why);
        fbf_jbuf_lit(o.b, "{\"type\":");
        fbf_jbuf_str(o.b, text);
        fbf_jbuf_lit(o.b, "}");
    }
    free(text);
    close_event(&o);
    fbf_jbuf_lit(o.b, "]}");
    if (!ok || o.b->oom)
        return NULL;
    *reply_len = o.b->len;
    return o.b->p;
}
