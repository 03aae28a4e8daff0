/*
 * bv4_session: the Batsim v4 JSON protocol's codec, scheduler side (see
 * bv4_session.h): bytes to the session's typed events (io/bv4_decode.h),
 * the session (io/session.h) decides, its decisions back to bytes
 * (io/bv4_reply.c). Nothing here decides anything.
 *
 * A request is read whole before any of it is applied, so that a bad
 * message never reaches the engine half-applied by accident of field
 * order. A request of FBF_BV4_STREAM_MIN bytes or more is the exception:
 * its events are parsed, read and applied one at a time
 * (io/json_stream.h), because its whole tree would cost several times the
 * memory of the jobs it submits; a bad event there ends the session too.
 * The session's errors are phrased here in v4 terms: the event (index and
 * type) and its field.
 */
#include "io/bv4_session.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_session_int.h"
#include "io/json_pipe.h"
#include "io/json_stream.h"


fbf_bv4_session *fbf_bv4_session_create(const fbf_bv4_options *opt, fbf_error *err)
{
    fbf_bv4_session *s = calloc(1, sizeof *s);
    if (!s) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->opt = *opt;
    fbf_bv4_decoder_init(&s->dec, opt->log != NULL);
    s->arena = fbf_json_arena_create();
    if (!s->arena) {
        fbf_bv4_session_destroy(s);
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    fbf_session_options so = {
        .engine = opt->engine,
        .log = opt->log,
        .tag_starts = opt->tag_starts,
        .submitter = opt->submitter,
        .power = opt->power,
        .sleep_pstate_given = opt->sleep_pstate_given,
        .compute_pstate_given = opt->compute_pstate_given,
        .query_energy = opt->query_energy,
        .call_margin = FBF_BV4_CALL_MARGIN,
        .call_per_event = FBF_BV4_CALL_PER_EVENT,
        .jsc = opt->jsc,
    };
    s->core = fbf_session_create(&so, err);
    if (!s->core) {
        fbf_bv4_session_destroy(s);
        return NULL;
    }
    return s;
}

void fbf_bv4_session_destroy(fbf_bv4_session *s)
{
    if (!s)
        return;
    fbf_session_destroy(s->core);
    fbf_json_arena_destroy(s->arena);
    fbf_bv4_decoder_fini(&s->dec);
    fbf_jbuf_fini(&s->out);
    free(s);
}

fbf_engine *fbf_bv4_session_engine(fbf_bv4_session *s) { return fbf_session_engine(s->core); }

/* A session error in v4 terms: its event and the field's v4 name. */
static int phrase(fbf_bv4_session *s, int rc, fbf_error *err)
{
    fbf_session_fault f = fbf_session_last_fault(s->core);
    fbf_error inner = *err;
    if (f.field == FBF_FIELD_TIME)
        return fbf_errorf(err, rc, "now: %s", inner.text);
    if (f.index < 0)
        return rc;
    const char *type = fbf_bv4_decoded_type(&s->dec, f.index);
    const char *field = NULL;
    switch (f.field) {
    case FBF_FIELD_JOB_ID:
        field = strcmp(type, "JOB_KILLED") == 0 ? "data.job_ids" : "data.job_id";
        break;
    case FBF_FIELD_JOB: field = "data.job"; break;
    case FBF_FIELD_ALLOC: field = "data.alloc"; break;
    case FBF_FIELD_MACHINES: field = "data.resources"; break;
    case FBF_FIELD_PSTATE: field = "data.state"; break;
    case FBF_FIELD_STATES: field = "data.compute_resources[].state"; break;
    case FBF_FIELD_PSTATES: field = "data.compute_resources[].properties"; break;
    case FBF_FIELD_CONFIG: field = "data.config"; break;
    default: break;
    }
    if (field)
        return fbf_errorf(err, rc, "event %ld (%s): %s: %s", f.index, type, field, inner.text);
    return fbf_errorf(err, rc, "event %ld (%s): %s", f.index, type, inner.text);
}

/* The members of a streamed message: now must come before events. */
typedef struct envelope {
    double now;
    bool has_now;
} envelope;

static int on_member(void *ctx, const char *key, const cJSON *v, fbf_error *err)
{
    envelope *env = ctx;
    if (strcmp(key, "now") != 0)
        return 0;
    int rc = fbf_bv4_check_now(v, err);
    if (rc == 0) {
        env->now = v->valuedouble;
        env->has_now = true;
    }
    return rc;
}

/* The helper thread of a streamed message only parses: each event is read
 * where it is applied. */
static int parse_only(void *ctx, const cJSON *ev, fbf_error *err) { return 0; }

/* Reads and applies a streamed message's events one at a time. */
static int apply_streamed(fbf_bv4_session *s, fbf_json_stream *stream, fbf_json_pipe *pipe,
                          fbf_error *err)
{
    int more;
    for (;;) {
        const cJSON *ev;
        cJSON *e;
        if (pipe) {
            more = fbf_json_pipe_next(pipe, &ev, err);
        } else {
            more = fbf_json_stream_next(stream, &e, err);
            ev = e;
        }
        if (more <= 0)
            break;
        fbf_bv4_decoder_drop(&s->dec);
        int rc = fbf_bv4_decode_event(&s->dec, ev, err);
        if (rc == 0 && (rc = fbf_session_apply(s->core, s->dec.events.ev, s->dec.events.n, err)) < 0)
            rc = phrase(s, rc, err);
        if (rc < 0)
            return rc;
    }
    return more < 0 ? more : fbf_bv4_decoder_end(&s->dec, err);
}

/* A large message (a deep queue's submissions) is read one event at a
 * time, so that its parse tree never exists whole. The stream needs now
 * before events, as Batsim writes it; the store's pipelined look-ups need
 * the whole message, and so does the first one (it may turn the store
 * on). 1: streamed (rc in *rc); 0: read it whole. */
static int try_stream(fbf_bv4_session *s, const char *req, size_t len, double *now, int *rc,
                      fbf_error *err)
{
    size_t min = s->opt.stream_min ? s->opt.stream_min : FBF_BV4_STREAM_MIN;
    if (len < min || !fbf_session_begun(s->core) ||
        fbf_session_uses_store(s->core))
        return 0;
    fbf_json_stream stream;
    envelope env = {0};
    *rc = fbf_json_stream_open(&stream, s->arena, req, len, "events", on_member, &env, err);
    /* A message that is not an object with an events array fails in its
     * first bytes: the whole parse words that as it does for any size. */
    if (*rc == -EPROTO && stream.cur - req < 4096)
        return 0;
    if (*rc < 0)
        return 1;
    if (*rc == 0 || !env.has_now)
        return 0; /* events absent, or before now: the whole parse says what is wrong */
    /* env is the helper's from here: a "now" after the events would reach
     * it there (and change nothing, as unstreamed). */
    *now = env.now;
    fbf_bv4_decoder_start(&s->dec, env.now, true);
    if ((*rc = fbf_session_open(s->core, env.now, err)) < 0) {
        *rc = phrase(s, *rc, err);
        return 1;
    }
    /* With workers to spare, the events are parsed on a helper thread
     * while this one applies them (io/json_pipe.h); without, as before. */
    fbf_json_pipe *pipe = NULL;
    fbf_error perr;
    if (s->opt.engine.workers > 1 &&
        fbf_json_pipe_start(&pipe, &stream, parse_only, NULL, &perr) < 0 && s->opt.log)
        fprintf(s->opt.log, "fastbf: %s; parsing on the I/O thread\n", perr.text);
    *rc = apply_streamed(s, &stream, pipe, err);
    /* The helper is stopped and joined, whatever happened, so that the
     * stream is this thread's again. */
    fbf_json_pipe_destroy(pipe);
    return 1;
}

int fbf_bv4_session_handle(fbf_bv4_session *s, const char *req, size_t len,
                           const char **reply, size_t *reply_len, fbf_error *err)
{
    if (fbf_session_ended(s->core))
        return fbf_errorf(err, -EPROTO, "message received after SIMULATION_ENDS");
    double now = 0;
    int rc = 0;
    if (!try_stream(s, req, len, &now, &rc, err)) {
        cJSON *root = NULL;
        rc = fbf_bv4_decode(&s->dec, s->arena, req, len, fbf_session_begun(s->core), &root,
                            err);
        if (rc == 0) {
            now = fbf_json_get(root, "now")->valuedouble;
            if ((rc = fbf_session_open(s->core, now, err)) < 0 ||
                (rc = fbf_session_apply(s->core, s->dec.events.ev, s->dec.events.n, err)) < 0)
                rc = phrase(s, rc, err);
        }
    }
    const fbf_out *outs;
    size_t n;
    if (rc == 0 && (rc = fbf_session_decide(s->core, &outs, &n, err)) == 0 &&
        fbf_bv4_reply_build(s, now, outs, n) < 0)
        rc = fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    fbf_bv4_decoder_drop(&s->dec);
    fbf_json_arena_release(s->arena); /* the tree is dead from here */
    if (rc < 0)
        return rc;
    *reply = s->out.p;
    *reply_len = s->out.len;
    return fbf_session_ended(s->core) ? FBF_BV4_ENDED : 0;
}
