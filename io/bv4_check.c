/*
 * bv4_check: Batsim v4 request validation (see bv4_check.h).
 *
 * Each event type has a small checker listing its mandatory fields and
 * their types; optional fields are type-checked when present. Real Batsim
 * prints every float with six decimals but keeps workload integers as
 * integers, so "an integer" means a JSON number with an integral value.
 */
#include "io/bv4_check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct ctx {
    int index;
    const char *type;
    fbf_error *err;
} ctx;

static const char *describe(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble) ? "a number" : "an infinite number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    return "an object";
}

static int bad(const ctx *c, const char *field, const char *want, const cJSON *got)
{
    if (!c->type) /* fbf_bv4_check_job(): the caller names the event */
        return fbf_errorf(c->err, -EPROTO, "%s: expected %s, got %s", field, want,
                          describe(got));
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s: expected %s, got %s", c->index,
                      c->type, field, want, describe(got));
}

static const cJSON *get(const cJSON *o, const char *k)
{
    return fbf_json_get(o, k);
}

static bool is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
           v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9e15;
}

#define NEED(cond, field, want, got)                                                           \
    do {                                                                                       \
        if (!(cond))                                                                           \
            return bad(c, field, want, got);                                                   \
    } while (0)

#define OPTIONAL(obj, key, pred, field, want)                                                  \
    do {                                                                                       \
        const cJSON *v_ = get(obj, key);                                                       \
        if (v_ && !pred(v_))                                                                   \
            return bad(c, field, want, v_);                                                    \
    } while (0)

static int check_begins(const ctx *c, const cJSON *d)
{
    const cJSON *nb = get(d, "nb_resources");
    NEED(is_int(nb) && nb->valuedouble >= 1 && nb->valuedouble <= (double)FBF_IDSET_MAX_ID + 1,
         "data.nb_resources", "an integer in [1, 2^31]", nb);
    const cJSON *nc = get(d, "nb_compute_resources");
    if (nc)
        NEED(is_int(nc) && nc->valuedouble >= 1 && nc->valuedouble <= nb->valuedouble,
             "data.nb_compute_resources", "an integer in [1, nb_resources]", nc);
    OPTIONAL(d, "config", cJSON_IsObject, "data.config", "an object");
    const cJSON *cr = get(d, "compute_resources");
    if (!cr)
        return 0;
    NEED(cJSON_IsArray(cr), "data.compute_resources", "an array", cr);
    int n = 0;
    const cJSON *r;
    cJSON_ArrayForEach(r, cr)
    {
        const cJSON *id = get(r, "id");
        NEED(cJSON_IsObject(r) && is_int(id) && id->valuedouble >= 0 &&
                 id->valuedouble < nb->valuedouble,
             "data.compute_resources[].id", "a resource number below nb_resources",
             cJSON_IsObject(r) ? id : r);
        n++;
    }
    if (n == 0)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): data.compute_resources: empty",
                          c->index, c->type);
    double want = nc ? nc->valuedouble : nb->valuedouble;
    if (nc ? n != (int)want : n > (int)want)
        return fbf_errorf(c->err, -EPROTO,
                          "event %d (%s): data.compute_resources: %d entries for %s %d",
                          c->index, c->type, n, nc ? "nb_compute_resources" : "nb_resources",
                          (int)want);
    return 0;
}

/* Field names are spelled out only on the error path: this runs for
 * every submission, and formatting them eagerly showed in profiles. */
static int bad_job_field(const ctx *c, const char *where, const char *field, const char *want,
                         const cJSON *got)
{
    char f[96];
    snprintf(f, sizeof f, "%s%s%s", where, *where ? "." : "", field);
    return bad(c, f, want, got);
}

static int check_job_desc(const ctx *c, const cJSON *job, const char *where, const char *id)
{
    const cJSON *res = get(job, "res");
    if (!is_int(res))
        return bad_job_field(c, where, "res", "an integer", res);
    const cJSON *v = get(job, "walltime");
    if (v && !cJSON_IsNumber(v))
        return bad_job_field(c, where, "walltime", "a number", v);
    v = get(job, "subtime");
    if (v && !cJSON_IsNumber(v))
        return bad_job_field(c, where, "subtime", "a number", v);
    const cJSON *jid = get(job, "id");
    if (jid && id) {
        if (!cJSON_IsString(jid))
            return bad_job_field(c, where, "id", "a string", jid);
        if (strcmp(jid->valuestring, id) != 0 && !c->type)
            return fbf_errorf(c->err, -EPROTO, "%s%sid: \"%s\" differs from job_id \"%s\"",
                              where, *where ? "." : "", jid->valuestring, id);
        if (strcmp(jid->valuestring, id) != 0)
            return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s.id: \"%s\" differs from "
                              "job_id \"%s\"", c->index, c->type, where, jid->valuestring, id);
    }
    return 0;
}

static int check_submitted(const ctx *c, const cJSON *d)
{
    const cJSON *id = get(d, "job_id");
    NEED(cJSON_IsString(id), "data.job_id", "a string", id);
    OPTIONAL(d, "profile", cJSON_IsObject, "data.profile", "an object");
    /* No job: Batsim's Redis form, which the session accepts only with
     * Redis enabled (io/bv4_fetch.h). */
    const cJSON *job = get(d, "job");
    if (!job)
        return 0;
    NEED(cJSON_IsObject(job), "data.job", "an object (fastbf needs job descriptions)", job);
    return check_job_desc(c, job, "data.job", id->valuestring);
}

int fbf_bv4_check_job(const cJSON *job, const char *id, fbf_error *err)
{
    ctx c = {.index = -1, .type = NULL, .err = err};
    return check_job_desc(&c, job, "", id);
}

static int check_completed(const ctx *c, const cJSON *d)
{
    static const char *const states[] = {
        "NOT_SUBMITTED",        "SUBMITTED",          "RUNNING",
        "COMPLETED_SUCCESSFULLY", "COMPLETED_FAILED", "COMPLETED_WALLTIME_REACHED",
        "COMPLETED_KILLED",     "COMPLETED_RESOURCE_FAILED", "REJECTED"};
    const cJSON *id = get(d, "job_id");
    NEED(cJSON_IsString(id), "data.job_id", "a string", id);
    const cJSON *st = get(d, "job_state");
    NEED(cJSON_IsString(st), "data.job_state", "a string", st);
    bool known = false;
    for (size_t i = 0; i < sizeof states / sizeof *states; i++)
        known = known || strcmp(st->valuestring, states[i]) == 0;
    if (!known)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): data.job_state: unknown state \"%s\"",
                          c->index, c->type, st->valuestring);
    OPTIONAL(d, "return_code", is_int, "data.return_code", "an integer");
    OPTIONAL(d, "alloc", cJSON_IsString, "data.alloc", "an interval set string");
    return 0;
}

/* Sequence profiles nest; deeper than this is taken for garbage rather
 * than recursed into. */
#define MAX_PROGRESS_DEPTH 64

/* One job's progress, as Batsim 4.2.1 reports it: {"profile_name",
 * "progress" in [0, 1]} for a simple profile; {"profile_name",
 * "current_task_index" >= 0, "current_task": <the same, recursively>} for
 * a composed one; {"profile_name", "current_task_index": -1} and no
 * progress when Batsim cannot tell (a task that has not started, a recv
 * profile). Older texts of the protocol say "profile": accepted too.
 * `path` names the object in errors. */
static int check_progress(const ctx *c, const cJSON *p, char *path, size_t cap, int depth)
{
    size_t len = strlen(path);
    if (!cJSON_IsObject(p))
        return bad(c, path, "an object", p);
    if (depth > MAX_PROGRESS_DEPTH)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s: sequences nested deeper than %d",
                          c->index, c->type, path, MAX_PROGRESS_DEPTH);
    const cJSON *v = get(p, "profile_name");
    if (!v)
        v = get(p, "profile");
    if (!cJSON_IsString(v)) {
        snprintf(path + len, cap - len, ".profile_name");
        return bad(c, path, "a string", v);
    }
    const cJSON *task = get(p, "current_task");
    const cJSON *idx = get(p, "current_task_index");
    if (!task && is_int(idx) && idx->valuedouble == -1)
        return 0; /* progress unknown */
    if (!task) {
        v = get(p, "progress");
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 1)) {
            snprintf(path + len, cap - len, ".progress");
            return bad(c, path, "a number in [0, 1]", v);
        }
        return 0;
    }
    if (!is_int(idx) || idx->valuedouble < 0) {
        snprintf(path + len, cap - len, ".current_task_index");
        return bad(c, path, "an integer >= 0", idx);
    }
    snprintf(path + len, cap - len, ".current_task");
    return check_progress(c, task, path, cap, depth + 1);
}

static int check_killed(const ctx *c, const cJSON *d)
{
    const cJSON *ids = get(d, "job_ids");
    NEED(cJSON_IsArray(ids), "data.job_ids", "an array", ids);
    const cJSON *id;
    cJSON_ArrayForEach(id, ids) NEED(cJSON_IsString(id), "data.job_ids[]", "a string", id);
    const cJSON *prog = get(d, "job_progress");
    if (!prog)
        return 0;
    NEED(cJSON_IsObject(prog), "data.job_progress", "an object", prog);
    const cJSON *p, *cursor = ids->child;
    cJSON_ArrayForEach(p, prog)
    {
        /* Batsim lists progress in job_ids order: searching on from the
         * last match (wrapping around once) keeps that case linear. */
        bool listed = false;
        for (const cJSON *start = cursor; cursor && !listed;) {
            listed = strcmp(cursor->valuestring, p->string) == 0;
            cursor = cursor->next ? cursor->next : ids->child;
            if (cursor == start)
                break;
        }
        if (!listed)
            return fbf_errorf(c->err, -EPROTO,
                              "event %d (%s): data.job_progress: job %s is not in data.job_ids",
                              c->index, c->type, p->string);
        char path[512];
        snprintf(path, sizeof path, "data.job_progress.%.100s", p->string);
        int rc = check_progress(c, p, path, sizeof path, 0);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int check_state_changed(const ctx *c, const cJSON *d)
{
    const cJSON *res = get(d, "resources");
    NEED(cJSON_IsString(res), "data.resources", "an interval set string", res);
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_error e;
    int rc = fbf_idset_parse(&s, res->valuestring, &e);
    fbf_idset_fini(&s);
    if (rc < 0)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): data.resources: %s", c->index,
                          c->type, e.text);
    const cJSON *st = get(d, "state");
    NEED(cJSON_IsString(st) || cJSON_IsNumber(st), "data.state", "a string", st);
    return 0;
}

static int check_notify(const ctx *c, const cJSON *d)
{
    NEED(cJSON_IsString(get(d, "type")), "data.type", "a string", get(d, "type"));
    return 0;
}

static int check_query(const ctx *c, const cJSON *d)
{
    const cJSON *reqs = get(d, "requests");
    NEED(cJSON_IsObject(reqs), "data.requests", "an object", reqs);
    const cJSON *r;
    cJSON_ArrayForEach(r, reqs)
    {
        if (strcmp(r->string, "estimate_waiting_time") != 0)
            return fbf_errorf(c->err, -EPROTO,
                              "event %d (%s): data.requests: unknown request \"%s\" (fastbf "
                              "answers estimate_waiting_time)",
                              c->index, c->type, r->string);
        NEED(cJSON_IsObject(r), "data.requests.estimate_waiting_time", "an object", r);
        const cJSON *id = get(r, "job_id");
        NEED(cJSON_IsString(id), "data.requests.estimate_waiting_time.job_id", "a string", id);
        const cJSON *job = get(r, "job");
        NEED(cJSON_IsObject(job), "data.requests.estimate_waiting_time.job", "an object", job);
        int rc = check_job_desc(c, job, "data.requests.estimate_waiting_time.job", NULL);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int check_nothing(const ctx *c, const cJSON *d) { return 0; }

typedef struct checker {
    const char *type;
    int (*check)(const ctx *c, const cJSON *data);
} checker;

/* Indexed by fbf_bv4_event; the most frequent first. */
static const checker checkers[] = {
    [FBF_BV4_JOB_SUBMITTED] = {"JOB_SUBMITTED", check_submitted},
    [FBF_BV4_JOB_COMPLETED] = {"JOB_COMPLETED", check_completed},
    [FBF_BV4_REQUESTED_CALL] = {"REQUESTED_CALL", check_nothing},
    [FBF_BV4_NOTIFY] = {"NOTIFY", check_notify},
    [FBF_BV4_JOB_KILLED] = {"JOB_KILLED", check_killed},
    [FBF_BV4_RESOURCE_STATE_CHANGED] = {"RESOURCE_STATE_CHANGED", check_state_changed},
    [FBF_BV4_QUERY] = {"QUERY", check_query},
    [FBF_BV4_ANSWER] = {"ANSWER", check_nothing},
    [FBF_BV4_SIMULATION_BEGINS] = {"SIMULATION_BEGINS", check_begins},
    [FBF_BV4_SIMULATION_ENDS] = {"SIMULATION_ENDS", check_nothing},
};

static const char *const scheduler_only[] = {
    "REJECT_JOB",       "EXECUTE_JOB",        "CALL_ME_LATER",    "KILL_JOB",
    "REGISTER_JOB",     "REGISTER_PROFILE",   "SET_RESOURCE_STATE", "SET_JOB_METADATA",
    "CHANGE_JOB_STATE",
};

static int check_event(ctx *c, const cJSON *ev, double now, double *prev, bool *begun,
                       bool *ended)
{
    if (!cJSON_IsObject(ev))
        return fbf_errorf(c->err, -EPROTO, "event %d: expected an object, got %s", c->index,
                          describe(ev));
    const cJSON *type = get(ev, "type");
    if (!cJSON_IsString(type))
        return fbf_errorf(c->err, -EPROTO, "event %d: type: expected a string, got %s",
                          c->index, describe(type));
    c->type = type->valuestring;
    const cJSON *ts = get(ev, "timestamp");
    NEED(cJSON_IsNumber(ts) && isfinite(ts->valuedouble), "timestamp", "a finite number", ts);
    if (ts->valuedouble > now)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): timestamp: %.6f is after now %.6f",
                          c->index, c->type, ts->valuedouble, now);
    if (ts->valuedouble < *prev)
        return fbf_errorf(c->err, -EPROTO,
                          "event %d (%s): timestamp: %.6f is before the previous event's %.6f",
                          c->index, c->type, ts->valuedouble, *prev);
    *prev = ts->valuedouble;
    const cJSON *data = get(ev, "data");
    NEED(cJSON_IsObject(data), "data", "an object", data);

    if (*ended)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): comes after SIMULATION_ENDS",
                          c->index, c->type);
    for (size_t i = 0; i < sizeof checkers / sizeof *checkers; i++) {
        if (strcmp(c->type, checkers[i].type) != 0)
            continue;
        bool is_begin = i == FBF_BV4_SIMULATION_BEGINS;
        if (is_begin && *begun)
            return fbf_errorf(c->err, -EPROTO, "event %d (%s): the simulation already began",
                              c->index, c->type);
        if (!is_begin && !*begun)
            return fbf_errorf(c->err, -EPROTO,
                              "event %d (%s): received before SIMULATION_BEGINS", c->index,
                              c->type);
        *begun = true;
        *ended = i == FBF_BV4_SIMULATION_ENDS;
        ((cJSON *)type)->valueint = (int)i; /* see fbf_bv4_event_of() */
        return checkers[i].check(c, data);
    }
    for (size_t i = 0; i < sizeof scheduler_only / sizeof *scheduler_only; i++)
        if (strcmp(c->type, scheduler_only[i]) == 0)
            return fbf_errorf(c->err, -EPROTO,
                              "event %d (%s): type: this event goes from the scheduler to "
                              "Batsim, not the other way",
                              c->index, c->type);
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): type: unknown event type", c->index,
                      c->type);
}

void fbf_bv4_checker_init(fbf_bv4_checker *k, double now, bool begun)
{
    *k = (fbf_bv4_checker){.now = now, .prev = -INFINITY, .begun = begun, .index = -1};
}

int fbf_bv4_check_event(fbf_bv4_checker *k, const cJSON *ev, fbf_error *err)
{
    ctx c = {.index = ++k->index, .type = "message", .err = err};
    return check_event(&c, ev, k->now, &k->prev, &k->begun, &k->ended);
}

int fbf_bv4_checker_end(const fbf_bv4_checker *k, fbf_error *err)
{
    if (!k->begun)
        return fbf_errorf(err, -EPROTO, "message: the first message must hold SIMULATION_BEGINS");
    return 0;
}

int fbf_bv4_check_now(const cJSON *now, fbf_error *err)
{
    if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble))
        return fbf_errorf(err, -EPROTO, "message: now: expected a finite number, got %s",
                          describe(now));
    return 0;
}

int fbf_bv4_check(fbf_json_arena *arena, const char *text, size_t len, bool begun, cJSON **root,
                  fbf_error *err)
{
    *root = NULL;
    const char *end = NULL;
    cJSON *r = fbf_json_arena_parse(arena, text, len, &end);
    if (!r && errno == ENOMEM)
        return fbf_errorf(err, -ENOMEM, "out of memory parsing a message of %zu bytes", len);
    if (!r) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= text && at <= text + len ? (long)(at - text) : -1;
        return fbf_errorf(err, -EPROTO, "malformed JSON message near byte %ld", off);
    }
    while (end && end < text + len && (*end == ' ' || *end == '\n' || *end == '\r' ||
                                       *end == '\t'))
        end++;
    if (end && end < text + len && *end)
        return fbf_errorf(err, -EPROTO, "malformed JSON message: unexpected bytes after the "
                          "message at byte %ld", (long)(end - text));
    int rc = 0;
    const cJSON *now = get(r, "now"), *events = get(r, "events");
    if (!cJSON_IsObject(r))
        rc = fbf_errorf(err, -EPROTO, "message: expected a JSON object, got %s", describe(r));
    else if ((rc = fbf_bv4_check_now(now, err)) < 0)
        ;
    else if (!cJSON_IsArray(events))
        rc = fbf_errorf(err, -EPROTO, "message: events: expected an array, got %s",
                        describe(events));
    fbf_bv4_checker k;
    if (rc == 0) {
        fbf_bv4_checker_init(&k, now->valuedouble, begun);
        const cJSON *ev;
        cJSON_ArrayForEach(ev, events)
        {
            if ((rc = fbf_bv4_check_event(&k, ev, err)) < 0)
                break;
        }
    }
    if (rc == 0)
        rc = fbf_bv4_checker_end(&k, err);
    if (rc < 0)
        return rc;
    *root = r;
    return 0;
}

int fbf_bv4_compute_set(const cJSON *data, fbf_idset *out, fbf_error *err)
{
    fbf_idset_clear(out);
    const cJSON *cr = get(data, "compute_resources");
    int rc = 0;
    if (cr) {
        const cJSON *r;
        cJSON_ArrayForEach(r, cr)
        {
            uint32_t id = (uint32_t)get(r, "id")->valuedouble;
            if (fbf_idset_contains(out, id))
                return fbf_errorf(err, -EPROTO,
                                  "data.compute_resources: id %u listed twice", id);
            if ((rc = fbf_idset_add_range(out, id, id)) < 0)
                break;
        }
    } else {
        const cJSON *nc = get(data, "nb_compute_resources");
        double n = (nc ? nc : get(data, "nb_resources"))->valuedouble;
        rc = fbf_idset_add_range(out, 0, (uint32_t)n - 1);
    }
    return rc < 0 ? fbf_errorf(err, rc, "out of memory") : 0;
}

int fbf_bv4_queue_answers(const cJSON *data, cJSON *answers, fbf_error *err)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, get(data, "requests"))
    {
        const cJSON *job = get(r, "job");
        const cJSON *wall = get(job, "walltime");
        cJSON *ev = cJSON_CreateObject();
        cJSON *d = cJSON_AddObjectToObject(ev, "data");
        cJSON *est = cJSON_AddObjectToObject(d, "estimate_waiting_time");
        if (!est || !cJSON_AddNumberToObject(ev, "timestamp", 0) ||
            !cJSON_AddStringToObject(ev, "type", "ANSWER") ||
            !cJSON_AddStringToObject(est, "job_id", get(r, "job_id")->valuestring) ||
            !cJSON_AddNumberToObject(est, "res", get(job, "res")->valuedouble) ||
            !cJSON_AddNumberToObject(est, "walltime", wall ? wall->valuedouble : -1.0)) {
            cJSON_Delete(ev);
            return fbf_errorf(err, -ENOMEM, "out of memory");
        }
        cJSON_AddItemToArray(answers, ev);
    }
    return 0;
}
