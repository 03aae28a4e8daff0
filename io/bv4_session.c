/*
 * bv4_session: the Batsim v4 JSON protocol, scheduler side (see
 * bv4_session.h).
 *
 * A request is handled in two passes so that a bad message never reaches
 * the engine half-applied by accident of field order: check() validates
 * the envelope and every event's fields and types (io/bv4_check.c); only
 * then apply() feeds the events, in message order, to the engine, which
 * may still refuse one (an unknown or not-running job) — that error ends
 * the session. A request of FBF_BV4_STREAM_MIN bytes or more is the
 * exception: its events are parsed, checked and applied one at a time
 * (io/json_stream.h), because its whole tree would cost several times the
 * memory of the jobs it submits; a bad event there also ends the session.
 * Replies are assembled by io/bv4_reply.c.
 *
 * Both the nested config of the protocol text (config.redis.enabled,
 * config.job_submission...) and the flat one real Batsim 4.2.1 sends
 * (redis-enabled, dynamic-jobs-enabled...) are understood. In Redis mode
 * a pass between the two (io/bv4_fetch.c) reads the job descriptions that
 * JOB_SUBMITTED leaves out, so apply() sees every job described.
 */
#include "io/bv4_session.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/bv4_check.h"
#include "io/json_pipe.h"
#include "io/json_stream.h"
#include "io/bv4_fetch.h"
#include "io/bv4_power.h"
#include "io/bv4_session_int.h"


fbf_bv4_session *fbf_bv4_session_create(const fbf_bv4_options *opt, fbf_error *err)
{
    fbf_bv4_session *s = calloc(1, sizeof *s);
    if (!s) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->opt = *opt;
    s->last_call = s->energy = NAN;
    s->arena = fbf_json_arena_create();
    s->fetch = fbf_bv4_fetch_create();
    s->answers = cJSON_CreateArray();
    s->registrations = cJSON_CreateArray();
    /* fbf_bv4_session_destroy() takes a half-made session: each part it
     * frees may still be NULL. */
    if (!s->arena || !s->fetch || !s->answers || !s->registrations) {
        fbf_bv4_session_destroy(s);
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->engine = fbf_engine_create(&opt->engine, err);
    if (!s->engine ||
        (opt->power && fbf_engine_set_power(s->engine, opt->power, err) < 0)) {
        fbf_bv4_session_destroy(s);
        return NULL;
    }
    return s;
}

void fbf_bv4_session_destroy(fbf_bv4_session *s)
{
    if (!s)
        return;
    fbf_engine_destroy(s->engine);
    fbf_json_arena_destroy(s->arena);
    fbf_bv4_fetch_destroy(s->fetch);
    cJSON_Delete(s->answers);
    cJSON_Delete(s->registrations);
    fbf_jbuf_fini(&s->out);
    free(s);
}

fbf_engine *fbf_bv4_session_engine(fbf_bv4_session *s) { return s->engine; }

static bool config_flag(const cJSON *config, const char *flat, const char *group,
                        const char *sub, const char *key)
{
    const cJSON *v = fbf_json_get(config, flat);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    const cJSON *g = fbf_json_get(config, group);
    if (sub)
        g = fbf_json_get(g, sub);
    return cJSON_IsTrue(fbf_json_get(g, key));
}

static int on_begins(fbf_bv4_session *s, const cJSON *data, fbf_error *err)
{
    /* Redis (config.redis-*) was set up by fbf_bv4_fetch_prepare(). */
    const cJSON *config = fbf_json_get(data, "config");
    s->dynamic_jobs =
        config_flag(config, "dynamic-jobs-enabled", "job_submission", "from_scheduler", "enabled");
    if (s->opt.submitter) {
        /* Redis mode: registered jobs' descriptions go to the store. */
        fbf_bv4_register_use_store(s->opt.submitter, fbf_bv4_fetch_store(s->fetch));
        bool acks = config_flag(config, "dynamic-jobs-acknowledged", "job_submission",
                                "from_scheduler", "acknowledge");
        /* Batsim 4.2.1's flat config only; absent means no reuse, which
         * each job's own profile serves as well. */
        bool reuse = cJSON_IsTrue(fbf_json_get(config, "profile-reuse-enabled"));
        int rc = fbf_bv4_register_configure(s->opt.submitter, s->dynamic_jobs, acks, reuse,
                                            err);
        if (rc == 0)
            rc = fbf_bv4_register_known_profiles(
                s->opt.submitter, fbf_json_get(data, "profiles"), err);
        if (rc < 0)
            return rc;
    }

    /* The pstates are the platform's to say, before the platform is set. */
    fbf_power_config power = s->opt.power ? *s->opt.power : fbf_power_config_default();
    int rc = fbf_bv4_power_pstates(data, &power, s->opt.sleep_pstate_given,
                                   s->opt.compute_pstate_given, err);
    if (rc < 0 || (rc = fbf_engine_set_power(s->engine, &power, err)) < 0)
        return rc;

    fbf_idset compute;
    fbf_idset_init(&compute);
    rc = fbf_bv4_compute_set(data, &compute, err);
    if (rc == 0)
        rc = fbf_engine_set_platform(s->engine, &compute, err);
    fbf_idset_fini(&compute);
    if (rc == 0)
        rc = fbf_bv4_power_begins(s->engine, data, err);
    if (rc == 0 && s->opt.log)
        fprintf(s->opt.log, "fastbf: platform of %u compute resources\n",
                fbf_engine_nb_compute(s->engine));
    return rc;
}

static int on_submitted(fbf_bv4_session *s, double ts, const cJSON *data, fbf_error *err)
{
    const char *id = fbf_json_get(data, "job_id")->valuestring;
    const cJSON *job = fbf_json_get(data, "job");
    if (!job) /* Redis mode: read before the message was applied */
        job = fbf_bv4_fetch_next(s->fetch);
    if (!job)
        return fbf_errorf(err, -EPROTO, "data.job: expected an object (fastbf needs job "
                                        "descriptions), got nothing");
    const cJSON *res = fbf_json_get(job, "res");
    const cJSON *wall = fbf_json_get(job, "walltime");
    const cJSON *sub = fbf_json_get(job, "subtime");
    double walltime = cJSON_IsNumber(wall) ? wall->valuedouble : -1.0;
    double subtime = cJSON_IsNumber(sub) ? sub->valuedouble : ts;
    fbf_error inner;
    int rc = fbf_engine_submit(s->engine, id, subtime, (int64_t)res->valuedouble, walltime,
                               &inner);
    return rc < 0 ? fbf_errorf(err, rc, "data.job_id: %s", inner.text) : 0;
}

static int on_completed(fbf_bv4_session *s, const char *field, const char *id,
                        const cJSON *alloc, fbf_error *err)
{
    fbf_job_h h = fbf_engine_find(s->engine, id);
    if (h == FBF_JOB_NONE)
        return fbf_errorf(err, -ENOENT, "%s: unknown job %s", field, id);
    if (cJSON_IsString(alloc)) {
        fbf_idset got;
        fbf_idset_init(&got);
        int rc = fbf_idset_parse(&got, alloc->valuestring, err);
        bool same = rc == 0 && fbf_idset_equal(&got, fbf_engine_job_alloc(s->engine, h));
        fbf_idset_fini(&got);
        if (rc < 0 || (!same && fbf_engine_job_state(s->engine, h) == FBF_JOB_RUNNING)) {
            char want[64];
            fbf_idset_format(fbf_engine_job_alloc(s->engine, h), want, sizeof want);
            return fbf_errorf(err, -EPROTO, "data.alloc: job %s ran on \"%s\", not \"%s\"",
                              id, want, alloc->valuestring);
        }
    }
    fbf_error inner;
    int rc = fbf_engine_complete_job(s->engine, h, &inner);
    return rc < 0 ? fbf_errorf(err, rc, "%s: %s", field, inner.text) : 0;
}

/* --verbose: how far a killed job got, down its nested sequences, e.g.
 * "task 2 > task 3 > 75%". */
static void log_progress(fbf_bv4_session *s, const char *id, const cJSON *p)
{
    char text[256];
    size_t len = 0;
    for (; p && len < sizeof text - 32; p = fbf_json_get(p, "current_task")) {
        const cJSON *idx = fbf_json_get(p, "current_task_index");
        const cJSON *pr = fbf_json_get(p, "progress");
        if (idx && idx->valuedouble < 0)
            len += (size_t)snprintf(text + len, sizeof text - len, "an unknown point");
        else if (idx)
            len += (size_t)snprintf(text + len, sizeof text - len, "task %.0f > ",
                                    idx->valuedouble);
        else if (pr)
            len += (size_t)snprintf(text + len, sizeof text - len, "%.1f%%",
                                    pr->valuedouble * 100);
    }
    fprintf(s->opt.log, "fastbf: job %s killed at %s\n", id, len ? text : "an unknown point");
}

static int on_killed(fbf_bv4_session *s, const cJSON *data, fbf_error *err)
{
    if (s->opt.log) {
        const cJSON *p;
        cJSON_ArrayForEach(p, fbf_json_get(data, "job_progress"))
            log_progress(s, p->string, p);
    }
    const cJSON *id;
    cJSON_ArrayForEach(id, fbf_json_get(data, "job_ids"))
    {
        fbf_job_h h = fbf_engine_find(s->engine, id->valuestring);
        if (h == FBF_JOB_NONE)
            return fbf_errorf(err, -ENOENT, "data.job_ids: unknown job %s", id->valuestring);
        /* A job that completed before the kill was already reported. */
        if (fbf_engine_job_state(s->engine, h) == FBF_JOB_DONE)
            continue;
        int rc = on_completed(s, "data.job_ids", id->valuestring, NULL, err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int on_notify(fbf_bv4_session *s, const cJSON *data, fbf_error *err)
{
    const char *what = fbf_json_get(data, "type")->valuestring;
    if (strcmp(what, "no_more_static_job_to_submit") == 0)
        s->no_more_static = s->query_due = true;
    else if (strcmp(what, "no_more_external_event_to_occur") == 0)
        s->no_more_external = true;
    else
        return fbf_errorf(err, -EPROTO, "data.type: unknown notification \"%s\"", what);
    if (s->opt.log)
        fprintf(s->opt.log, "fastbf: NOTIFY %s\n", what);
    return 0;
}

/* Where apply() takes its events from: the checked tree of a whole
 * message, or a stream that parses and checks one event at a time. */
typedef struct event_source {
    const cJSON *next;       /* whole message: the next event */
    fbf_json_stream *stream; /* NULL for a whole message */
    fbf_bv4_checker *checker;
    fbf_json_pipe *pipe; /* the stream, parsed and checked on a helper thread */
} event_source;

static int check_streamed(void *checker, const cJSON *ev, fbf_error *err)
{
    return fbf_bv4_check_event(checker, ev, err);
}

/* 1 and *ev, 0 at the end, or a checking error (already worded). */
static int next_event(event_source *src, const cJSON **ev, fbf_error *err)
{
    if (src->pipe)
        return fbf_json_pipe_next(src->pipe, ev, err);
    if (!src->stream) {
        *ev = src->next;
        if (*ev)
            src->next = (*ev)->next;
        return *ev != NULL;
    }
    cJSON *e;
    int rc = fbf_json_stream_next(src->stream, &e, err);
    if (rc == 1 && (rc = fbf_bv4_check_event(src->checker, e, err)) == 0)
        rc = 1;
    *ev = e;
    return rc;
}

static int apply(fbf_bv4_session *s, event_source *src, cJSON *answers, fbf_error *err)
{
    const cJSON *ev;
    int index = 0, more;
    while ((more = next_event(src, &ev, err)) == 1) {
        double ts = fbf_json_get(ev, "timestamp")->valuedouble;
        const char *type = fbf_json_get(ev, "type")->valuestring;
        const cJSON *data = fbf_json_get(ev, "data");
        int rc = 0;
        switch (fbf_bv4_event_of(ev)) {
        case FBF_BV4_SIMULATION_BEGINS: rc = on_begins(s, data, err); break;
        case FBF_BV4_JOB_SUBMITTED: rc = on_submitted(s, ts, data, err); break;
        case FBF_BV4_JOB_COMPLETED:
            rc = on_completed(s, "data.job_id",
                              fbf_json_get(data, "job_id")->valuestring,
                              fbf_json_get(data, "alloc"), err);
            break;
        case FBF_BV4_JOB_KILLED: rc = on_killed(s, data, err); break;
        case FBF_BV4_NOTIFY: rc = on_notify(s, data, err); break;
        case FBF_BV4_QUERY: rc = fbf_bv4_queue_answers(data, answers, err); break;
        case FBF_BV4_SIMULATION_ENDS: s->ended = true; break;
        case FBF_BV4_RESOURCE_STATE_CHANGED: rc = fbf_bv4_power_changed(s->engine, data, err); break;
        case FBF_BV4_ANSWER: rc = fbf_bv4_power_answer(data, s->opt.log, &s->energy, err); break;
        case FBF_BV4_REQUESTED_CALL:
            if (s->opt.log)
                fprintf(s->opt.log, "fastbf: %s at %.6f\n", type, ts);
            break;
        }
        if (rc < 0) {
            fbf_error inner = *err;
            return fbf_errorf(err, rc, "event %d (%s): %s", index, type, inner.text);
        }
        index++;
    }
    return more;
}

/* apply(), then the helper thread (if any) is stopped and joined, so that
 * the stream and the checker are this thread's again, whatever happened. */
static int apply_all(fbf_bv4_session *s, event_source *src, cJSON *answers, fbf_error *err)
{
    int rc = apply(s, src, answers, err);
    fbf_json_pipe_destroy(src->pipe);
    src->pipe = NULL;
    return rc;
}

/* Fills each pending estimate_waiting_time answer from the engine, now
 * that the pass has run, so it reflects the policy's current reservations. */
static void fill_answers(fbf_bv4_session *s, cJSON *answers)
{
    double now = fbf_engine_now(s->engine);
    cJSON *a;
    cJSON_ArrayForEach(a, answers)
    {
        cJSON *est = fbf_json_get(
            fbf_json_get(a, "data"), "estimate_waiting_time");
        cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(est, "res");
        cJSON *wall = cJSON_DetachItemFromObjectCaseSensitive(est, "walltime");
        double t = NAN;
        /* A job the engine knows needs no hypothesis: a started job waits
         * no more, a waiting one starts at its reservation when it holds
         * one. Otherwise, a potential job (res, walltime) submitted now. */
        const cJSON *id = fbf_json_get(est, "job_id");
        fbf_job_h h = fbf_engine_find(s->engine, id->valuestring);
        if (h != FBF_JOB_NONE && fbf_engine_job_state(s->engine, h) == FBF_JOB_RUNNING)
            t = fmax(fbf_engine_job_start(s->engine, h), now);
        else if (h != FBF_JOB_NONE)
            t = fbf_engine_job_reservation(s->engine, h);
        if (isnan(t))
            t = fbf_engine_estimate_start(s->engine, (int64_t)res->valuedouble,
                                          wall->valuedouble);
        /* -1: never, or the policy cannot tell (JSON has no infinity). */
        cJSON_AddNumberToObject(est, "estimated_waiting_time", isfinite(t) ? t - now : -1.0);
        cJSON_Delete(res);
        cJSON_Delete(wall);
    }
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

/* cJSON_Delete() frees an item and every sibling after it. */
static void empty(cJSON *array)
{
    cJSON_Delete(array->child);
    array->child = NULL;
}

int fbf_bv4_session_handle(fbf_bv4_session *s, const char *req, size_t len,
                           const char **reply, size_t *reply_len, fbf_error *err)
{
    if (s->ended)
        return fbf_errorf(err, -EPROTO, "message received after SIMULATION_ENDS");
    /* A large message (a deep queue's submissions) is read one event at a
     * time, so that its parse tree never exists whole; it is checked and
     * applied event by event (an error still ends the session). The
     * stream needs now before events, as Batsim writes it; otherwise the
     * message is parsed whole. */
    fbf_json_stream stream;
    fbf_bv4_checker checker;
    envelope env = {0};
    event_source src = {0};
    double now = 0;
    int rc = 0;
    /* Redis mode needs the whole message (one pipelined fetch), and so
     * does the first one (it may turn Redis on). */
    if (len >= FBF_BV4_STREAM_MIN && s->begun && !fbf_bv4_fetch_store(s->fetch)) {
        rc = fbf_json_stream_open(&stream, s->arena, req, len, "events", on_member, &env, err);
        if (rc < 0)
            return rc;
        if (rc == 0 || !env.has_now)
            rc = 0; /* events absent, or before now: the whole parse says what is wrong */
        else {
            /* env is the helper's from here: a "now" after the events
             * would reach it there (and change nothing, as unstreamed). */
            now = env.now;
            fbf_bv4_checker_init(&checker, now, s->begun);
            src.stream = &stream;
            src.checker = &checker;
            /* With workers to spare, the events are parsed and checked on
             * a helper thread while this one applies them (io/json_pipe.h);
             * without a thread, as before. */
            fbf_error perr;
            if (s->opt.engine.workers > 1 &&
                fbf_json_pipe_start(&src.pipe, &stream, check_streamed, &checker, &perr) < 0 &&
                s->opt.log)
                fprintf(s->opt.log, "fastbf: %s; parsing on the I/O thread\n", perr.text);
        }
    }
    if (!src.stream) {
        cJSON *root = NULL;
        rc = fbf_bv4_check(s->arena, req, len, s->begun, &root, err);
        /* Redis mode: the descriptions JOB_SUBMITTED leaves out, before
         * any event is applied. Only the first message (its
         * SIMULATION_BEGINS may turn Redis on) and Redis mode need the
         * extra walk over the events. */
        if (rc == 0 && (!s->begun || fbf_bv4_fetch_store(s->fetch)))
            rc = fbf_bv4_fetch_prepare(s->fetch,
                                       fbf_json_get(root, "events"),
                                       s->opt.log, err);
        if (rc < 0)
            return rc;
        s->begun = true;
        now = fbf_json_get(root, "now")->valuedouble;
        src.next = fbf_json_get(root, "events")->child;
    }
    s->nb_messages++;
    cJSON *answers = s->answers, *registrations = s->registrations;
    fbf_error inner;
    fbf_bv4_register *sub = s->opt.submitter;
    if ((rc = fbf_engine_begin(s->engine, now, &inner)) < 0)
        fbf_errorf(err, rc, "now: %s", inner.text);
    else if ((rc = apply_all(s, &src, answers, err)) == 0 &&
             (!src.stream || (rc = fbf_bv4_checker_end(&checker, err)) == 0) &&
             (!sub || s->ended ||
              (rc = fbf_bv4_register_due(sub, now, registrations,
                                         fbf_bv4_register_acks(sub) ? NULL : s->engine, err)) ==
                  0) &&
             (rc = fbf_engine_decide(s->engine, err)) == 0) {
        s->begun = true;
        fill_answers(s, answers);
        if (fbf_bv4_reply_build(s, registrations, answers) < 0)
            rc = fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    }
    fbf_json_pipe_destroy(src.pipe); /* when apply_all() did not run */
    fbf_json_arena_release(s->arena); /* root is dead from here */
    empty(answers);
    empty(registrations);
    if (rc < 0)
        return rc;
    if (s->opt.log) {
        /* +T: monotonic seconds since the first of these lines in this
         * process, so that per-exchange times are exact differences
         * (tools/bench.sh). One thread drives a session. */
        static struct timespec t0;
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (t0.tv_sec == 0 && t0.tv_nsec == 0)
            t0 = t;
        size_t n;
        fbf_engine_decisions(s->engine, &n);
        fprintf(s->opt.log, "fastbf: +%.6f s now %.6f: %zu decisions, %zu waiting, %zu running\n",
                (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9, now,
                n, fbf_engine_nb_waiting(s->engine), fbf_engine_nb_running(s->engine));
    }
    *reply = s->out.p;
    *reply_len = s->out.len;
    return s->ended ? FBF_BV4_ENDED : 0;
}
