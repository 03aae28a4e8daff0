/*
 * bv5_edc: the batprotocol codec around the session (see bv5_edc.h): JSON
 * here, the flatbuffers binary format through io/bv5_fb.h.
 */
#include "io/bv5_edc.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_decode.h"
#include "io/bv5_fb.h"
#include "io/jbuf.h"
#include "io/json_arena.h"

/* The batprotocol revision whose JSON fastbf writes. */
#define BATPROTOCOL_VERSION "1.0.0"

struct fbf_bv5_edc {
    fbf_bv5_options opt;
    fbf_session *core;
    fbf_json_arena *arena;
    fbf_bv5_decoder dec;
    fbf_bv5_fb *fb; /* the binary format's reader and writer; NULL in JSON */
    fbf_jbuf out;
    double now;            /* the last request's */
    unsigned long nb_calls; /* names the CallMeLaterEvents */
};

fbf_bv5_edc *fbf_bv5_edc_create(const fbf_bv5_options *opt, fbf_error *err)
{
    if (opt->format != FBF_BV5_FORMAT_JSON && opt->format != FBF_BV5_FORMAT_BINARY)
        return fbf_errorf(err, -EINVAL, "format: %u is neither 0x1 (binary) nor 0x2 (json)",
                          (unsigned)opt->format), NULL;
    if (opt->session.tag_starts || opt->session.query_energy)
        return fbf_errorf(err, -ENOTSUP, "batprotocol carries no job metadata or energy query: "
                          "tag_starts and query_energy need Batsim v4"), NULL;
    fbf_bv5_edc *e = calloc(1, sizeof *e);
    if (!e) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    e->opt = *opt;
    fbf_bv5_decoder_init(&e->dec);
    const fbf_power_config *p = opt->session.power;
    if (p)
        fbf_bv5_decoder_pstates(&e->dec, p->compute_pstate, p->sleep_pstate);
    e->arena = fbf_json_arena_create();
    bool binary = opt->format == FBF_BV5_FORMAT_BINARY;
    if (binary)
        e->fb = fbf_bv5_fb_create();
    e->core = e->arena && (e->fb || !binary) ? fbf_session_create(&opt->session, err) : NULL;
    if (!e->arena || (binary && !e->fb))
        fbf_errorf(err, -ENOMEM, "out of memory");
    if (!e->core) {
        fbf_bv5_edc_destroy(e);
        return NULL;
    }
    return e;
}

void fbf_bv5_edc_destroy(fbf_bv5_edc *e)
{
    if (!e)
        return;
    fbf_session_destroy(e->core);
    fbf_json_arena_destroy(e->arena);
    fbf_bv5_fb_destroy(e->fb);
    fbf_bv5_decoder_fini(&e->dec);
    fbf_jbuf_fini(&e->out);
    free(e);
}

fbf_engine *fbf_bv5_edc_engine(fbf_bv5_edc *e) { return fbf_session_engine(e->core); }

/* ---------- writing ---------- */

typedef struct out {
    fbf_jbuf *b;
    char now[32];
    size_t count;
} out;

static void open_event(out *o, const char *type)
{
    if (o->count++)
        fbf_jbuf_lit(o->b, ",");
    fbf_jbuf_lit(o->b, "{\"timestamp\":");
    fbf_jbuf_raw(o->b, o->now, strlen(o->now));
    fbf_jbuf_lit(o->b, ",\"event_type\":\"");
    fbf_jbuf_raw(o->b, type, strlen(type));
    fbf_jbuf_lit(o->b, "\",\"event\":");
}

static void number(fbf_jbuf *b, double v)
{
    char t[32];
    fbf_jbuf_fmt_json(t, sizeof t, v);
    fbf_jbuf_raw(b, t, strlen(t));
}

static void hosts(fbf_jbuf *b, const fbf_idset *s)
{
    fbf_jbuf_lit(b, "\"");
    fbf_jbuf_ranges(b, s->r, s->n);
    fbf_jbuf_lit(b, "\"");
}

static void open_message(fbf_bv5_edc *e, out *o, double now)
{
    *o = (out){.b = &e->out};
    fbf_jbuf_fmt_json(o->now, sizeof o->now, now);
    fbf_jbuf_reset(o->b);
    fbf_jbuf_lit(o->b, "{\"now\":");
    fbf_jbuf_raw(o->b, o->now, strlen(o->now));
    fbf_jbuf_lit(o->b, ",\"events\":[");
}

static const char *job_id(fbf_bv5_edc *e, const fbf_out *d)
{
    return d->id ? d->id : fbf_engine_job_id(fbf_session_engine(e->core), d->job);
}

static int put_one(fbf_bv5_edc *e, out *o, const fbf_out *d, size_t left, bool *killed,
                   fbf_error *err)
{
    fbf_jbuf *b = o->b;
    switch (d->kind) {
    case FBF_OUT_EXECUTE:
        open_event(o, "ExecuteJobEvent");
        fbf_jbuf_lit(b, "{\"job_id\":");
        fbf_jbuf_str(b, job_id(e, d));
        fbf_jbuf_lit(b, ",\"allocation\":{\"host_allocation\":");
        hosts(b, d->machines);
        fbf_jbuf_lit(b, ",\"executor_placement_type\":\"PredefinedExecutorPlacementStrategyWrapper"
                        "\",\"executor_placement\":{\"strategy\":\"SpreadOverHostsFirst\"}}}}");
        return 0;
    case FBF_OUT_REJECT:
        open_event(o, "RejectJobEvent");
        fbf_jbuf_lit(b, "{\"job_id\":");
        fbf_jbuf_str(b, job_id(e, d));
        fbf_jbuf_lit(b, "}}");
        return 0;
    case FBF_OUT_METADATA: return 0; /* a give-up is its RejectJobEvent */
    case FBF_OUT_KILL:
        if (*killed)
            return 0;
        *killed = true;
        open_event(o, "KillJobsEvent");
        fbf_jbuf_lit(b, "{\"job_ids\":[");
        for (size_t i = 0, n = 0; i < left; i++)
            if (d[i].kind == FBF_OUT_KILL) {
                if (n++)
                    fbf_jbuf_lit(b, ",");
                fbf_jbuf_str(b, job_id(e, &d[i]));
            }
        fbf_jbuf_lit(b, "]}}");
        return 0;
    case FBF_OUT_SET_STATE:
        open_event(o, "ChangeHostsPStateEvent");
        fbf_jbuf_lit(b, "{\"host_ids\":");
        hosts(b, d->machines);
        fbf_jbuf_lit(b, ",\"pstate\":");
        fbf_jbuf_int(b, d->pstate);
        fbf_jbuf_lit(b, "}}");
        return 0;
    case FBF_OUT_CALL_ME_LATER: {
        char id[40];
        snprintf(id, sizeof id, "fastbf-%lu", ++e->nb_calls);
        open_event(o, "CallMeLaterEvent");
        fbf_jbuf_lit(b, "{\"call_me_later_id\":");
        fbf_jbuf_str(b, id);
        /* batprotocol's time is a whole number of its unit (flatbuffers'
         * JSON parser, which Batsim reads JSON with, refuses a fraction). */
        fbf_jbuf_lit(b, ",\"when_type\":\"OneShot\",\"when\":{\"time\":");
        char t[24];
        fbf_jbuf_raw(b, t, fbf_jbuf_digits(t, fbf_bv5_call_ms(d->at)));
        fbf_jbuf_lit(b, ",\"time_unit\":\"Millisecond\"}}}");
        return 0;
    }
    case FBF_OUT_REGISTER_PROFILE:
        open_event(o, "RegisterProfileEvent");
        fbf_jbuf_lit(b, "{\"profile\":{\"id\":\"");
        fbf_jbuf_raw(b, d->workload, strlen(d->workload));
        fbf_jbuf_lit(b, "!");
        fbf_jbuf_raw(b, d->profile, strlen(d->profile));
        fbf_jbuf_lit(b, "\",\"profile_type\":\"DelayProfile\",\"profile\":{\"delay\":");
        number(b, d->at);
        fbf_jbuf_lit(b, "}}}}");
        return 0;
    case FBF_OUT_REGISTER_JOB: {
        const char *bang = strchr(d->id, '!');
        open_event(o, "RegisterJobEvent");
        fbf_jbuf_lit(b, "{\"job_id\":");
        fbf_jbuf_str(b, d->id);
        fbf_jbuf_lit(b, ",\"job\":{\"resource_request\":");
        fbf_jbuf_int(b, d->res);
        fbf_jbuf_lit(b, ",\"walltime\":");
        number(b, d->walltime);
        fbf_jbuf_lit(b, ",\"extra_data\":\"\",\"rigid\":true,\"profile_id\":\"");
        fbf_jbuf_raw(b, d->id, bang ? (size_t)(bang - d->id) : 0);
        fbf_jbuf_lit(b, "!");
        fbf_jbuf_raw(b, d->profile, strlen(d->profile));
        fbf_jbuf_lit(b, "\"}}}");
        return 0;
    }
    case FBF_OUT_NOTIFY:
        if (strcmp(d->text, "registration_finished") == 0) {
            open_event(o, "FinishRegistrationEvent");
            fbf_jbuf_lit(b, "{}}");
            return 0;
        }
        break;
    default: break;
    }
    return fbf_errorf(err, -ENOTSUP, "batprotocol cannot carry a decision of kind %d",
                      (int)d->kind);
}

uint64_t fbf_bv5_call_ms(double at)
{
    double ms = ceil(at * 1000.0 - 1e-6);
    return !(ms > 0) ? 0 : ms >= 1.8e19 ? UINT64_MAX : (uint64_t)ms;
}

/* ---------- the exchanges ---------- */

int fbf_bv5_edc_hello(fbf_bv5_edc *e, const uint8_t **msg, size_t *len, fbf_error *err)
{
    bool dyn = e->opt.session.submitter != NULL;
    if (e->fb)
        return fbf_bv5_fb_hello(e->fb, BATPROTOCOL_VERSION, FBF_VERSION, dyn, msg, len, err);
    out o;
    open_message(e, &o, 0);
    open_event(&o, "EDCHelloEvent");
    fbf_jbuf *b = o.b;
    fbf_jbuf_lit(b, "{\"batprotocol_version\":\"" BATPROTOCOL_VERSION "\","
                    "\"decision_component_name\":\"fastbf\","
                    "\"decision_component_version\":\"" FBF_VERSION "\","
                    "\"decision_component_commit\":\"\",\"requested_simulation_features\":{");
    if (dyn)
        fbf_jbuf_lit(b, "\"dynamic_registration\":true,\"acknowledge_dynamic_jobs\":false,"
                        "\"profile_reuse\":false");
    fbf_jbuf_lit(b, "}}}]}");
    if (b->oom)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    *msg = (const uint8_t *)b->p;
    *len = b->len;
    return 0;
}

/* A session error in batprotocol terms: its event and the field. */
static int phrase(fbf_bv5_edc *e, int rc, fbf_error *err)
{
    fbf_session_fault f = fbf_session_last_fault(e->core);
    fbf_error inner = *err;
    if (f.field == FBF_FIELD_TIME)
        return fbf_errorf(err, rc, "now: %s", inner.text);
    if (f.index < 0)
        return rc;
    const char *type = fbf_bv5_decoded_type(&e->dec, f.index);
    const char *field = f.field == FBF_FIELD_JOB_ID ? (strcmp(type, "JobsKilledEvent") == 0
                                                           ? "event.job_ids"
                                                           : "event.job_id")
                        : f.field == FBF_FIELD_MACHINES ? "event.host_ids"
                        : f.field == FBF_FIELD_PSTATE   ? "event.pstate"
                        : f.field == FBF_FIELD_STATES   ? "event.computation_hosts[].state"
                                                        : NULL;
    if (field)
        return fbf_errorf(err, rc, "event %ld (%s): %s: %s", f.index, type, field, inner.text);
    return fbf_errorf(err, rc, "event %ld (%s): %s", f.index, type, inner.text);
}

int fbf_bv5_edc_take(fbf_bv5_edc *e, const uint8_t *req, size_t len, const uint8_t **reply,
                     size_t *reply_len, fbf_error *err)
{
    bool begun = fbf_session_begun(e->core);
    int rc = e->fb ? fbf_bv5_fb_decode(e->fb, &e->dec, req, len, begun, err)
                   : fbf_bv5_decode(&e->dec, e->arena, (const char *)req, len, begun, err);
    const fbf_out *outs = NULL;
    size_t n = 0;
    if (rc == 0) {
        e->now = e->dec.now;
        /* Batsim 5 registers what the hello requested (never acknowledged,
         * profiles never reused): SimulationBegins does not say it. */
        e->dec.begins.dynamic_jobs = e->opt.session.submitter != NULL;
        if ((rc = fbf_session_open(e->core, e->dec.now, err)) < 0 ||
            (rc = fbf_session_apply(e->core, e->dec.events.ev, e->dec.events.n, err)) < 0)
            rc = phrase(e, rc, err);
        else
            rc = fbf_session_decide(e->core, &outs, &n, err);
    }
    if (rc == 0 && e->fb) {
        rc = fbf_bv5_fb_reply(e->fb, e->dec.now, outs, n, fbf_session_engine(e->core),
                              &e->nb_calls, reply, reply_len, err);
        return rc < 0 ? rc : fbf_session_ended(e->core) ? FBF_BV5_ENDED : 0;
    }
    if (rc == 0) {
        out o;
        open_message(e, &o, e->dec.now);
        bool killed = false;
        for (size_t i = 0; i < n && rc == 0; i++)
            rc = put_one(e, &o, &outs[i], n - i, &killed, err);
        fbf_jbuf_lit(o.b, "]}");
        if (rc == 0 && o.b->oom)
            rc = fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    }
    fbf_json_arena_release(e->arena);
    if (rc < 0)
        return rc;
    *reply = (const uint8_t *)e->out.p;
    *reply_len = e->out.len;
    return fbf_session_ended(e->core) ? FBF_BV5_ENDED : 0;
}

const uint8_t *fbf_bv5_edc_refusal(fbf_bv5_edc *e, size_t *len)
{
    if (e->fb)
        return fbf_bv5_fb_refusal(e->fb, e->now, len);
    out o;
    open_message(e, &o, e->now);
    open_event(&o, "ForceSimulationStopEvent");
    fbf_jbuf_lit(o.b, "{}}]}");
    if (o.b->oom)
        return NULL;
    *len = o.b->len;
    return (const uint8_t *)o.b->p;
}
