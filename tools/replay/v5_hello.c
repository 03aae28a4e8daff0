/*
 * v5_hello: the batsim5 mode's state, and the handshake that opens a
 * Batsim 5 run, as Batsim 5.0.0-rc2 does it (src/edc.cpp, server.cpp):
 *
 *   to the EDC     [u32 size, native byte order][size bytes of init data]
 *                  (--edc-init, unchanged, no NUL)
 *   from the EDC   [u32 flags][one message holding exactly one
 *                  EDCHelloEvent]; flags 0x2: JSON, 0x1: flatbuffers binary
 *
 * A library EDC gets the same through batsim_edc_init() (transport_edc.c
 * wraps its answer in the same layout). Refused, each with one line: a
 * reply shorter than the flags (Batsim's own text), flags other than 0x2
 * (binary is not supported yet; unknown bits), a message that is not one
 * EDCHelloEvent (Batsim's text), and a hello without one of
 * batprotocol_version, decision_component_name, decision_component_version
 * (strings), decision_component_commit (a string, may be "") and
 * requested_simulation_features (an object, may be {}) whose members are
 * booleans: Batsim 5.0.0-rc2 dies of a segmentation fault without the last
 * two, so they are named here instead. The features requested set what the
 * run sends (forwarded profiles) and takes (dynamic_registration, with
 * acknowledge_dynamic_jobs and profile_reuse: v5_register.c).
 */
#include "tools/replay/v5.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/json_arena.h"

int fbf_v5_create(fbf_replay *r)
{
    r->v5 = calloc(1, sizeof *r->v5);
    return r->v5 ? 0 : -ENOMEM;
}

void fbf_v5_destroy(fbf_replay *r)
{
    fbf_v5 *v = r->v5;
    if (!v)
        return;
    for (size_t i = 0; i < v->ncalls; i++)
        free(v->calls[i].id);
    free(v->calls);
    fbf_jbuf_fini(&v->scratch);
    free(v);
    r->v5 = NULL;
}

int fbf_v5_string(fbf_replay *r, long ev, const char *type, const cJSON *o, const char *path,
                  const char *name, const char **out)
{
    const cJSON *v = fbf_json_get(o, name);
    if (!cJSON_IsString(v))
        return fbf_replay_fail(r, ev, type, NULL, "%s%s%s is missing or not a string", path,
                               *path ? "." : "", name);
    *out = v->valuestring;
    return 0;
}

static int hfail(fbf_replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int hfail(fbf_replay *r, const char *fmt, ...)
{
    char why[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    fbf_errorf(&r->err, -EPROTO, "invalid reply to the init message (%s): %s", r->v5->edc[0]
               ? r->v5->edc : "the EDC's hello", why);
    return FBF_EXIT_INVALID;
}

static const char *const features[] = {
    "dynamic_registration", "profile_reuse", "acknowledge_dynamic_jobs",
    "forward_profiles_on_job_submission", "forward_profiles_on_jobs_killed",
    "forward_profiles_on_simulation_begins", "forward_unknown_external_events",
};
enum { F_DYN, F_REUSE, F_ACK, F_SUB, F_KILLED, F_BEGINS, F_EXTERNAL, F_COUNT };

/* The EDCHelloEvent's members; 0 or an FBF_EXIT_* code. */
static int hello_event(fbf_replay *r, const cJSON *h)
{
    static const char *const strings[] = {"batprotocol_version", "decision_component_name",
                                          "decision_component_version"};
    const char *s[3];
    for (int k = 0; k < 3; k++) {
        const cJSON *v = fbf_json_get(h, strings[k]);
        if (!cJSON_IsString(v))
            return hfail(r, "EDCHelloEvent.%s is missing or not a string", strings[k]);
        s[k] = v->valuestring;
    }
    snprintf(r->v5->edc, sizeof r->v5->edc, "%.80s %.60s", s[1], s[2]);
    const cJSON *commit = fbf_json_get(h, "decision_component_commit");
    if (!cJSON_IsString(commit))
        return hfail(r, "EDCHelloEvent.decision_component_commit is %s (it may be \"\"): "
                     "Batsim 5.0.0-rc2 dies of a segmentation fault without it",
                     commit ? "not a string" : "missing");
    const cJSON *feat = fbf_json_get(h, "requested_simulation_features");
    if (!cJSON_IsObject(feat))
        return hfail(r, "EDCHelloEvent.requested_simulation_features is %s (it may be {}): "
                     "Batsim 5.0.0-rc2 dies of a segmentation fault without it",
                     feat ? "not an object" : "missing");
    bool on[F_COUNT] = {false};
    for (int k = 0; k < F_COUNT; k++) {
        const cJSON *v = fbf_json_get(feat, features[k]);
        if (v && !cJSON_IsBool(v))
            return hfail(r, "EDCHelloEvent.requested_simulation_features.%s is not a boolean",
                         features[k]);
        on[k] = cJSON_IsTrue(v);
    }
    /* As Batsim's server_on_edc_hello: acknowledgements and profile reuse
     * only mean something with registration. */
    r->cfg.dyn_jobs = r->reg_open = on[F_DYN];
    r->cfg.dyn_acks = on[F_DYN] && on[F_ACK];
    r->cfg.profile_reuse = on[F_DYN] && on[F_REUSE];
    r->v5->fwd_submission = on[F_SUB];
    r->v5->fwd_killed = on[F_KILLED];
    r->v5->fwd_begins = on[F_BEGINS];
    r->cfg.forward_profiles = on[F_SUB];
    return FBF_EXIT_OK;
}

/* The hello message (flags stripped): one EDCHelloEvent. */
static int hello_message(fbf_replay *r, const char *text, size_t len)
{
    char why[300];
    cJSON *root = fbf_v5_parse(text, len, why, sizeof why);
    if (!root)
        return hfail(r, "%s", why);
    int rc = FBF_EXIT_OK;
    const cJSON *now = fbf_json_get(root, "now"), *events = fbf_json_get(root, "events");
    const cJSON *e = cJSON_IsArray(events) ? events->child : NULL;
    const cJSON *type = fbf_json_get(e, "event_type"), *ts = fbf_json_get(e, "timestamp");
    if (!cJSON_IsObject(root))
        rc = hfail(r, "the message is not a JSON object");
    else if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble))
        rc = hfail(r, "field now is missing or not a number");
    else if (!cJSON_IsArray(events))
        rc = hfail(r, "field events is missing or not an array");
    else if (!e || e->next || !cJSON_IsString(type) ||
             strcmp(type->valuestring, "EDCHelloEvent") != 0)
        rc = hfail(r, "Batsim did not receive an answer to its Hello message. Please fix your "
                   "EDC so that it sends an EDCHello back to Batsim. (the message holds %d "
                   "events, the first one '%.60s')", cJSON_GetArraySize(events),
                   cJSON_IsString(type) ? type->valuestring : "");
    else if (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble))
        rc = hfail(r, "EDCHelloEvent: field timestamp is missing or not a number");
    else if (ts->valuedouble > now->valuedouble)
        rc = hfail(r, "invalid event 0 (type='EDCHelloEvent') in message: event timestamp (%g) "
                   "is after message's now (%g)", ts->valuedouble, now->valuedouble);
    else if (!cJSON_IsObject(fbf_json_get(e, "event")))
        rc = hfail(r, "EDCHelloEvent: field event is missing or not an object");
    else
        rc = hello_event(r, fbf_json_get(e, "event"));
    cJSON_Delete(root);
    return rc;
}

int fbf_v5_hello(fbf_replay *r)
{
    const fbf_v5_config *c = r->cfg.v5;
    const char *init = c && c->init ? c->init : "";
    size_t n = c ? c->init_len : 0;
    if (n > UINT32_MAX)
        return fbf_errorf(&r->err, -EINVAL, "--edc-init: %zu bytes do not fit the init "
                          "message's 32-bit size", n), FBF_EXIT_INVALID;
    uint32_t size = (uint32_t)n;
    fbf_jbuf_reset(&r->msg);
    fbf_jbuf_raw(&r->msg, (const char *)&size, sizeof size);
    fbf_jbuf_raw(&r->msg, init, n);
    if (r->msg.oom)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory"), FBF_EXIT_INTERNAL;
    if (r->cfg.record && !fbf_replay_record_message(r, "> ", init, n))
        return fbf_errorf(&r->err, -EIO, "--record: cannot write the init message"),
               FBF_EXIT_INTERNAL;
    const char *reply;
    size_t len;
    fbf_error terr;
    fbf_error_clear(&terr);
    int rc = fbf_transport_exchange(r->tr, r->msg.p, r->msg.len, &reply, &len, &terr);
    if (rc)
        return fbf_errorf(&r->err, rc, "the init message: %s", terr.text), FBF_EXIT_INVALID;
    uint32_t flags;
    if (len < sizeof flags)
        return hfail(r, "An EDC replied an invalid message to the init sequence: received message "
                     "should contain at least 4 bytes for the serialization flags (got %zu)", len);
    memcpy(&flags, reply, sizeof flags);
    r->v5->flags = flags;
    size_t rec = len - 4 - (len > 4 && reply[len - 1] == '\0'); /* without its terminator */
    if (r->cfg.record && !fbf_replay_record_message(r, "< ", reply + 4, rec))
        return fbf_errorf(&r->err, -EIO, "--record: cannot write the EDC's hello"),
               FBF_EXIT_INTERNAL;
    uint32_t want = r->cfg.v5->format;
    if ((flags == FBF_V5_FORMAT_BINARY || flags == FBF_V5_FORMAT_JSON) && flags != want)
        return hfail(r, "flags 0x%x: the EDC chose %s, and this run expects %s (--format %s)",
                     flags, flags == FBF_V5_FORMAT_BINARY ? "flatbuffers binary" : "JSON",
                     want == FBF_V5_FORMAT_BINARY ? "flatbuffers binary" : "JSON",
                     want == FBF_V5_FORMAT_BINARY ? "binary" : "json");
    if (flags != want)
        return hfail(r, "flags 0x%x: expected 0x%x (0x2 is JSON, 0x1 flatbuffers binary, and "
                     "no other bit is defined)", flags, want);
    return hello_message(r, reply + 4, len - 4);
}
