/*
 * bv4_session: the Batsim v4 JSON protocol, scheduler side (see
 * bv4_session.h).
 *
 * A request is handled in two passes so that a bad message never reaches
 * the engine half-applied by accident of field order: check() validates
 * the envelope and every event's fields and types (io/bv4_check.c); only
 * then apply() feeds the events, in message order, to the engine, which
 * may still refuse one (an unknown or not-running job) — that error ends
 * the session. Replies are built with cJSON, decisions in D0 order
 * followed by any ANSWER.
 *
 * Both the nested config of the protocol text (config.redis.enabled,
 * config.job_submission...) and the flat one real Batsim 4.2.1 sends
 * (redis-enabled, dynamic-jobs-enabled...) are understood.
 */
#include "io/bv4_session.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_check.h"
#include "io/bv4_power.h"

struct fbf_bv4_session {
    fbf_bv4_options opt;
    fbf_engine *engine;
    bool begun, ended;
    bool dynamic_jobs;  /* Batsim waits for registration_finished */
    bool notified_registration;
    bool no_more_static, no_more_external;
    double last_call; /* the latest CALL_ME_LATER sent, NAN before any */
    fbf_json_arena *arena; /* holds the request being handled */
    char *reply; /* reused across messages; grows when a reply outgrows it */
    size_t reply_cap;
    unsigned long nb_messages;
    bool query_due, final_query; /* query_energy */
    double energy; /* the last consumed_energy answered, NAN before */
};

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
    if (!s->arena) {
        free(s);
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    s->engine = fbf_engine_create(&opt->engine, err);
    if (s->engine && opt->power && fbf_engine_set_power(s->engine, opt->power, err) < 0) {
        fbf_engine_destroy(s->engine);
        s->engine = NULL;
    }
    if (!s->engine) {
        fbf_json_arena_destroy(s->arena);
        free(s);
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
    free(s->reply);
    free(s);
}

fbf_engine *fbf_bv4_session_engine(fbf_bv4_session *s) { return s->engine; }

static bool config_flag(const cJSON *config, const char *flat, const char *group,
                        const char *sub, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(config, flat);
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(config, group);
    if (sub)
        g = cJSON_GetObjectItemCaseSensitive(g, sub);
    return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, key));
}

static int on_begins(fbf_bv4_session *s, const cJSON *data, fbf_error *err)
{
    const cJSON *config = cJSON_GetObjectItemCaseSensitive(data, "config");
    if (config_flag(config, "redis-enabled", "redis", NULL, "enabled"))
        return fbf_errorf(err, -ENOTSUP,
                          "data.config: Redis is enabled, which this fastbf does not support; "
                          "run Batsim without --enable-redis");
    s->dynamic_jobs =
        config_flag(config, "dynamic-jobs-enabled", "job_submission", "from_scheduler", "enabled");

    fbf_idset compute;
    fbf_idset_init(&compute);
    int rc = fbf_bv4_compute_set(data, &compute, err);
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
    const char *id = cJSON_GetObjectItemCaseSensitive(data, "job_id")->valuestring;
    const cJSON *job = cJSON_GetObjectItemCaseSensitive(data, "job");
    const cJSON *res = cJSON_GetObjectItemCaseSensitive(job, "res");
    const cJSON *wall = cJSON_GetObjectItemCaseSensitive(job, "walltime");
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(job, "subtime");
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
    int rc = fbf_engine_complete(s->engine, id, &inner);
    return rc < 0 ? fbf_errorf(err, rc, "%s: %s", field, inner.text) : 0;
}

/* --verbose: how far a killed job got, down its nested sequences, e.g.
 * "task 2 > task 3 > 75%". */
static void log_progress(fbf_bv4_session *s, const char *id, const cJSON *p)
{
    char text[256];
    size_t len = 0;
    for (; p && len < sizeof text - 32; p = cJSON_GetObjectItemCaseSensitive(p, "current_task")) {
        const cJSON *idx = cJSON_GetObjectItemCaseSensitive(p, "current_task_index");
        const cJSON *pr = cJSON_GetObjectItemCaseSensitive(p, "progress");
        if (idx)
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
        cJSON_ArrayForEach(p, cJSON_GetObjectItemCaseSensitive(data, "job_progress"))
            log_progress(s, p->string, p);
    }
    const cJSON *id;
    cJSON_ArrayForEach(id, cJSON_GetObjectItemCaseSensitive(data, "job_ids"))
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
    const char *what = cJSON_GetObjectItemCaseSensitive(data, "type")->valuestring;
    if (strcmp(what, "no_more_static_job_to_submit") == 0)
        s->no_more_static = s->query_due = true;
    else if (strcmp(what, "no_more_external_event_to_occur") == 0)
        s->no_more_external = true;
    else
        return fbf_errorf(err, -EPROTO, "data.type: unknown notification \"%s\"", what);
    return 0;
}

static int apply(fbf_bv4_session *s, const cJSON *events, cJSON *answers, fbf_error *err)
{
    const cJSON *ev;
    int index = 0;
    cJSON_ArrayForEach(ev, events)
    {
        double ts = cJSON_GetObjectItemCaseSensitive(ev, "timestamp")->valuedouble;
        const char *type = cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
        int rc = 0;
        switch (fbf_bv4_event_of(ev)) {
        case FBF_BV4_SIMULATION_BEGINS: rc = on_begins(s, data, err); break;
        case FBF_BV4_JOB_SUBMITTED: rc = on_submitted(s, ts, data, err); break;
        case FBF_BV4_JOB_COMPLETED:
            rc = on_completed(s, "data.job_id",
                              cJSON_GetObjectItemCaseSensitive(data, "job_id")->valuestring,
                              cJSON_GetObjectItemCaseSensitive(data, "alloc"), err);
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
    return 0;
}

/* Fills each pending estimate_waiting_time answer from the engine, now
 * that the pass has run, so it reflects the policy's current reservations. */
static void fill_answers(fbf_bv4_session *s, cJSON *answers)
{
    double now = fbf_engine_now(s->engine);
    cJSON *a;
    cJSON_ArrayForEach(a, answers)
    {
        cJSON *est = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(a, "data"), "estimate_waiting_time");
        cJSON *res = cJSON_DetachItemFromObjectCaseSensitive(est, "res");
        cJSON *wall = cJSON_DetachItemFromObjectCaseSensitive(est, "walltime");
        double t = fbf_engine_estimate_start(s->engine, (int64_t)res->valuedouble,
                                             wall->valuedouble);
        /* -1: never, or the policy cannot tell (JSON has no infinity). */
        cJSON_AddNumberToObject(est, "estimated_waiting_time", isfinite(t) ? t - now : -1.0);
        cJSON_Delete(res);
        cJSON_Delete(wall);
    }
}

/* The shortest text that reads back as exactly t. Every timestamp of a
 * reply is its `now`, so it is formatted once per reply and added as raw
 * text: cJSON's own number printer round-trips through sscanf each time.
 * Whole seconds, the common case of trace-driven runs, skip printf, whose
 * floating-point path costs more than the rest of a small reply. */
static void format_time(double t, char *buf, size_t cap)
{
    if (t == floor(t) && fabs(t) < 1e15 && cap >= 20) {
        long long v = (long long)t;
        unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
        char tmp[20];
        size_t n = 0;
        do {
            tmp[n++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        size_t o = 0;
        if (v < 0)
            buf[o++] = '-';
        while (n)
            buf[o++] = tmp[--n];
        buf[o] = '\0';
        return;
    }
    snprintf(buf, cap, "%.15g", t);
    if (strtod(buf, NULL) != t)
        snprintf(buf, cap, "%.17g", t);
}

static int add_event(cJSON *events, const char *now, const char *type, cJSON *data)
{
    cJSON *ev = cJSON_CreateObject();
    if (!ev || !data) {
        cJSON_Delete(ev);
        cJSON_Delete(data);
        return -ENOMEM;
    }
    cJSON_AddRawToObject(ev, "timestamp", now);
    cJSON_AddStringToObject(ev, "type", type);
    cJSON_AddItemToObject(ev, "data", data);
    cJSON_AddItemToArray(events, ev);
    return 0;
}

/* tag_starts: why the job started, as SET_JOB_METADATA text. */
static int add_start_tag(fbf_bv4_session *s, cJSON *events, const char *now, fbf_job_h j)
{
    char meta[64];
    switch (fbf_engine_job_start_reason(s->engine, j)) {
    case FBF_START_BACKFILLED: snprintf(meta, sizeof meta, "reason=backfilled"); break;
    case FBF_START_RESERVATION: snprintf(meta, sizeof meta, "reason=reservation rsv=%s", now); break;
    default: snprintf(meta, sizeof meta, "reason=head"); break;
    }
    cJSON *data = cJSON_CreateObject();
    if (data && (!cJSON_AddStringToObject(data, "job_id", fbf_engine_job_id(s->engine, j)) ||
                 !cJSON_AddStringToObject(data, "metadata", meta))) {
        cJSON_Delete(data);
        return -ENOMEM;
    }
    return add_event(events, now, "SET_JOB_METADATA", data);
}

static int build_reply(fbf_bv4_session *s, cJSON *answers, cJSON **out)
{
    char now[32];
    format_time(fbf_engine_now(s->engine), now, sizeof now);
    cJSON *root = cJSON_CreateObject();
    cJSON *events = cJSON_CreateArray();
    if (!root || !events) {
        cJSON_Delete(root);
        cJSON_Delete(events);
        return -ENOMEM;
    }
    cJSON_AddRawToObject(root, "now", now);
    cJSON_AddItemToObject(root, "events", events);
    *out = root;
    if (s->ended)
        return 0; /* SIMULATION_ENDS: a reply with no events */

    size_t n;
    const fbf_decision *d = fbf_engine_decisions(s->engine, &n);
    int rc = 0;
    cJSON *kill_ids = NULL; /* every kill of the reply goes in one KILL_JOB */
    for (size_t i = 0; i < n && rc == 0; i++) {
        cJSON *data;
        if (d[i].kind == FBF_DEC_KILL) {
            if (!kill_ids) {
                data = cJSON_CreateObject();
                kill_ids = cJSON_AddArrayToObject(data, "job_ids");
                rc = add_event(events, now, "KILL_JOB", data);
                if (rc < 0 || !kill_ids)
                    break;
            }
            cJSON *id = cJSON_CreateString(fbf_engine_job_id(s->engine, d[i].job));
            if (!id || !cJSON_AddItemToArray(kill_ids, id))
                rc = -ENOMEM;
            continue;
        }
        if (d[i].kind == FBF_DEC_SET_STATE) {
            rc = fbf_bv4_power_add_set(events, now, &d[i]);
            continue;
        }
        if (d[i].kind == FBF_DEC_CALL_ME_LATER) {
            /* Batsim wakes the scheduler once per request: asking again
             * for a time still to come would only double the wake-up. */
            if (d[i].at == s->last_call && d[i].at > fbf_engine_now(s->engine))
                continue;
            s->last_call = d[i].at;
            data = cJSON_CreateObject();
            cJSON_AddNumberToObject(data, "timestamp", d[i].at);
            rc = add_event(events, now, "CALL_ME_LATER", data);
            continue;
        }
        data = cJSON_CreateObject();
        cJSON_AddStringToObject(data, "job_id", fbf_engine_job_id(s->engine, d[i].job));
        if (d[i].kind == FBF_DEC_REJECT) {
            rc = add_event(events, now, "REJECT_JOB", data);
            continue;
        }
        char *alloc = fbf_idset_to_string(fbf_engine_job_alloc(s->engine, d[i].job));
        if (!alloc || !cJSON_AddStringToObject(data, "alloc", alloc))
            rc = -ENOMEM;
        free(alloc);
        if (rc == 0)
            rc = add_event(events, now, "EXECUTE_JOB", data);
        else
            cJSON_Delete(data);
        if (rc == 0 && s->opt.tag_starts)
            rc = add_start_tag(s, events, now, d[i].job);
    }
    /* fastbf registers no job: tell Batsim at once so it can end. */
    if (rc == 0 && s->dynamic_jobs && !s->notified_registration) {
        cJSON *data = cJSON_CreateObject();
        cJSON_AddStringToObject(data, "type", "registration_finished");
        rc = add_event(events, now, "NOTIFY", data);
        s->notified_registration = true;
    }
    bool idle = s->no_more_static && !fbf_engine_nb_waiting(s->engine) &&
                !fbf_engine_nb_running(s->engine) && !s->final_query;
    if (rc == 0 && s->opt.query_energy && (s->query_due || idle)) {
        rc = fbf_bv4_power_add_query(events, now);
        s->query_due = false;
        s->final_query |= idle;
    }
    cJSON *a;
    while (rc == 0 && (a = cJSON_DetachItemFromArray(answers, 0)) != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(a, "timestamp", cJSON_CreateRaw(now));
        cJSON_AddItemToArray(events, a);
    }
    return rc;
}

/* Prints into the session's buffer, doubling it until the reply fits, so
 * that steady state allocates nothing for the text. cJSON wants 5 spare
 * bytes beyond the text when printing into a caller's buffer. */
static int print_reply(fbf_bv4_session *s, cJSON *out)
{
    for (;;) {
        if (s->reply_cap &&
            cJSON_PrintPreallocated(out, s->reply, (int)s->reply_cap, 0))
            return 0;
        size_t cap = s->reply_cap ? s->reply_cap * 2 : 4096;
        if (cap > INT_MAX)
            return -ENOMEM;
        char *b = realloc(s->reply, cap);
        if (!b)
            return -ENOMEM;
        s->reply = b;
        s->reply_cap = cap;
    }
}

int fbf_bv4_session_handle(fbf_bv4_session *s, const char *req, size_t len,
                           const char **reply, size_t *reply_len, fbf_error *err)
{
    if (s->ended)
        return fbf_errorf(err, -EPROTO, "message received after SIMULATION_ENDS");
    cJSON *root = NULL;
    int rc = fbf_bv4_check(s->arena, req, len, s->begun, &root, err);
    if (rc < 0)
        return rc;
    s->begun = true;
    s->nb_messages++;
    double now = cJSON_GetObjectItemCaseSensitive(root, "now")->valuedouble;
    cJSON *answers = cJSON_CreateArray();
    cJSON *out = NULL;
    fbf_error inner;
    if (!answers)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    else if ((rc = fbf_engine_begin(s->engine, now, &inner)) < 0)
        fbf_errorf(err, rc, "now: %s", inner.text);
    else if ((rc = apply(s, cJSON_GetObjectItemCaseSensitive(root, "events"), answers, err)) ==
                 0 &&
             (rc = fbf_engine_decide(s->engine, err)) == 0) {
        fill_answers(s, answers);
        if (build_reply(s, answers, &out) < 0)
            rc = fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    }
    fbf_json_arena_release(s->arena); /* root is dead from here */
    cJSON_Delete(answers);
    if (rc == 0) {
        rc = print_reply(s, out);
        if (rc < 0)
            fbf_errorf(err, rc, "out of memory printing the reply");
    }
    cJSON_Delete(out);
    if (rc < 0)
        return rc;
    if (s->opt.log) {
        size_t n;
        fbf_engine_decisions(s->engine, &n);
        fprintf(s->opt.log, "fastbf: now %.6f: %zu decisions, %zu waiting, %zu running\n", now,
                n, fbf_engine_nb_waiting(s->engine), fbf_engine_nb_running(s->engine));
    }
    *reply = s->reply;
    *reply_len = strlen(s->reply);
    return s->ended ? FBF_BV4_ENDED : 0;
}
