/*
 * bv4_reply: the reply half of the Batsim v4 codec (see
 * bv4_session_int.h): the session's decisions (io/decisions.h), in their
 * order, as v4 events, all stamped with the request's now, formatted once.
 *
 * The reply is written as text into the codec's buffer (io/jbuf.h): a
 * tree of a few cJSON nodes per decision, printed and freed, cost more
 * than the rest of the exchange. The text is byte for byte what cJSON
 * prints for the same events; the numbers of registrations and answers
 * are printed by cJSON itself, whose rounding differs from the exact one
 * of times (fbf_jbuf_fmt_json()) in the last digits.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_power.h"
#include "io/bv4_session_int.h"


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

/* A number as cJSON prints it. */
static void put_cjson_number(out *o, double v)
{
    cJSON *n = cJSON_CreateNumber(v);
    if (!n) {
        o->b->oom = true;
        return;
    }
    fbf_jbuf_json(o->b, n);
    cJSON_Delete(n);
}

static void put_job_id(fbf_bv4_session *s, out *o, const fbf_out *d)
{
    fbf_jbuf_lit(o->b, "{\"job_id\":");
    fbf_jbuf_str(o->b, d->id ? d->id : fbf_engine_job_id(fbf_session_engine(s->core), d->job));
}

/* Every kill of the reply goes in one KILL_JOB, where the first is. */
static void put_kills(fbf_bv4_session *s, out *o, const fbf_out *d, size_t n)
{
    open_lit(o, "KILL_JOB");
    fbf_jbuf_lit(o->b, "{\"job_ids\":[");
    bool first = true;
    for (size_t i = 0; i < n; i++) {
        if (d[i].kind != FBF_OUT_KILL)
            continue;
        if (!first)
            fbf_jbuf_lit(o->b, ",");
        first = false;
        fbf_jbuf_str(o->b, fbf_engine_job_id(fbf_session_engine(s->core), d[i].job));
    }
    fbf_jbuf_lit(o->b, "]}");
    close_event(o);
}

static void put_register_profile(out *o, const fbf_out *d)
{
    open_lit(o, "REGISTER_PROFILE");
    fbf_jbuf_lit(o->b, "{\"workload_name\":");
    fbf_jbuf_str(o->b, d->workload);
    fbf_jbuf_lit(o->b, ",\"profile_name\":");
    fbf_jbuf_str(o->b, d->profile);
    fbf_jbuf_lit(o->b, ",\"profile\":{\"type\":\"delay\",\"delay\":");
    put_cjson_number(o, d->at);
    fbf_jbuf_lit(o->b, "}}");
    close_event(o);
}

/* Batsim parses a registered job as a workload job: id, subtime, res and
 * profile are mandatory there. In Redis mode the job is in the store. */
static void put_register_job(out *o, const fbf_out *d)
{
    open_lit(o, "REGISTER_JOB");
    fbf_jbuf_lit(o->b, "{\"job_id\":");
    fbf_jbuf_str(o->b, d->id);
    if (d->described) {
        fbf_jbuf_lit(o->b, ",\"job\":{\"id\":");
        fbf_jbuf_str(o->b, d->id);
        fbf_jbuf_lit(o->b, ",\"subtime\":");
        put_cjson_number(o, d->at);
        fbf_jbuf_lit(o->b, ",\"res\":");
        put_cjson_number(o, (double)d->res);
        fbf_jbuf_lit(o->b, ",\"walltime\":");
        put_cjson_number(o, d->walltime);
        fbf_jbuf_lit(o->b, ",\"profile\":");
        fbf_jbuf_str(o->b, d->profile);
        fbf_jbuf_lit(o->b, "}");
    }
    fbf_jbuf_lit(o->b, "}");
    close_event(o);
}

static void put_answer(out *o, const fbf_out *d)
{
    open_lit(o, "ANSWER");
    fbf_jbuf_lit(o->b, "{\"estimate_waiting_time\":{\"job_id\":");
    fbf_jbuf_str(o->b, d->id);
    fbf_jbuf_lit(o->b, ",\"estimated_waiting_time\":");
    put_cjson_number(o, d->at);
    fbf_jbuf_lit(o->b, "}}");
    close_event(o);
}

static void put_call_me_later(out *o, const fbf_out *d)
{
    open_lit(o, "CALL_ME_LATER");
    fbf_jbuf_lit(o->b, "{\"timestamp\":");
    char t[32];
    fbf_jbuf_fmt_json(t, sizeof t, d->at);
    if (d->rounded)
        put_cjson_number(o, d->at);
    else
        fbf_jbuf_raw(o->b, t, strlen(t));
    fbf_jbuf_lit(o->b, "}");
    close_event(o);
}

static void put_one(fbf_bv4_session *s, out *o, const fbf_out *d, size_t left, bool *killed)
{
    switch (d->kind) {
    case FBF_OUT_REGISTER_PROFILE: put_register_profile(o, d); break;
    case FBF_OUT_REGISTER_JOB: put_register_job(o, d); break;
    case FBF_OUT_KILL:
        if (!*killed)
            put_kills(s, o, d, left);
        *killed = true;
        break;
    case FBF_OUT_SET_STATE:
        open_lit(o, "SET_RESOURCE_STATE");
        fbf_bv4_power_put_set(o->b, d);
        close_event(o);
        break;
    case FBF_OUT_METADATA:
        open_lit(o, "SET_JOB_METADATA");
        put_job_id(s, o, d);
        fbf_jbuf_lit(o->b, ",\"metadata\":");
        fbf_jbuf_str(o->b, d->text);
        fbf_jbuf_lit(o->b, "}");
        close_event(o);
        break;
    case FBF_OUT_CALL_ME_LATER: put_call_me_later(o, d); break;
    case FBF_OUT_REJECT:
        open_lit(o, "REJECT_JOB");
        put_job_id(s, o, d);
        fbf_jbuf_lit(o->b, "}");
        close_event(o);
        break;
    case FBF_OUT_EXECUTE:
        open_lit(o, "EXECUTE_JOB");
        put_job_id(s, o, d);
        fbf_jbuf_lit(o->b, ",\"alloc\":\"");
        fbf_jbuf_ranges(o->b, d->machines->r, d->machines->n);
        fbf_jbuf_lit(o->b, "\"}");
        close_event(o);
        break;
    case FBF_OUT_NOTIFY:
        open_lit(o, "NOTIFY");
        fbf_jbuf_lit(o->b, "{\"type\":");
        fbf_jbuf_str(o->b, d->text);
        fbf_jbuf_lit(o->b, "}");
        close_event(o);
        break;
    case FBF_OUT_QUERY_ENERGY:
        open_lit(o, "QUERY");
        fbf_bv4_power_put_query(o->b);
        close_event(o);
        break;
    case FBF_OUT_ANSWER_WAIT: put_answer(o, d); break;
    }
}

int fbf_bv4_reply_build(fbf_bv4_session *s, double now_t, const fbf_out *outs, size_t n)
{
    char now[32];
    fbf_jbuf_fmt_json(now, sizeof now, now_t);
    out o = {.b = &s->out, .now = now, .now_len = strlen(now)};
    fbf_jbuf_reset(o.b);
    fbf_jbuf_lit(o.b, "{\"now\":");
    fbf_jbuf_raw(o.b, now, o.now_len);
    fbf_jbuf_lit(o.b, ",\"events\":[");
    bool killed = false;
    for (size_t i = 0; i < n; i++)
        put_one(s, &o, &outs[i], n - i, &killed);
    fbf_jbuf_lit(o.b, "]}");
    return o.b->oom ? -ENOMEM : 0;
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
    return fbf_engine_now(fbf_session_engine(s->core));
}

const char *fbf_bv4_session_refusal(fbf_bv4_session *s, const char *req, size_t len,
                                    const char *why, size_t *reply_len)
{
    char now[32];
    fbf_jbuf_fmt_json(now, sizeof now, request_now(s, req, len));
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
