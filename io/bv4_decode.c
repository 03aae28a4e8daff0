/*
 * bv4_decode: Batsim v4 requests into typed events (see bv4_decode.h).
 *
 * Each event type has a small reader that checks its mandatory fields and
 * their types (optional fields when present) and fills the typed events.
 * Real Batsim prints every float with six decimals but keeps workload
 * integers as integers, so "an integer" means a JSON number with an
 * integral value.
 */
#include "io/bv4_decode.h"
#include "io/json_strict.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_begins.h"
#include "io/bv4_power.h"
#include "io/job_json.h"

typedef struct ctx {
    fbf_bv4_decoder *d;
    int index;
    const char *type;
    double ts;
    fbf_error *err;
} ctx;

#define describe fbf_job_json_kind
#define is_int fbf_job_json_is_int

static int bad(const ctx *c, const char *field, const char *want, const cJSON *got)
{
    return fbf_errorf(c->err, -EPROTO, "event %d (%s): %s: expected %s, got %s", c->index,
                      c->type, field, want, describe(got));
}

/* An error of a helper that names its field itself, put in its event. */
static int within(const ctx *c, int rc, const fbf_error *inner)
{
    return fbf_errorf(c->err, rc, "event %d (%s): %s", c->index, c->type, inner->text);
}

static const cJSON *get(const cJSON *o, const char *k) { return fbf_json_get(o, k); }

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

/* A new event of the message, or NULL when out of memory. */
static fbf_event *push(const ctx *c, fbf_event_kind kind)
{
    return fbf_event_list_push(&c->d->events, kind, c->ts, c->index, c->type);
}

#define PUSH(e, kind)                                                                          \
    do {                                                                                       \
        if (!((e) = push(c, (kind))))                                                          \
            return fbf_errorf(c->err, -ENOMEM, "out of memory");                               \
    } while (0)

static int read_begins(const ctx *c, const cJSON *d)
{
    fbf_error inner;
    int rc = fbf_bv4_begins_read(d, c->d, &inner);
    if (rc < 0)
        return within(c, rc, &inner);
    fbf_event *e;
    PUSH(e, FBF_EV_SIMULATION_BEGINS);
    e->u.begins = &c->d->begins;
    return 0;
}

/* ---------- jobs ---------- */

static int read_submitted(const ctx *c, const cJSON *d)
{
    const cJSON *id = get(d, "job_id");
    NEED(cJSON_IsString(id), "data.job_id", "a string", id);
    OPTIONAL(d, "profile", cJSON_IsObject, "data.profile", "an object");
    fbf_event *e;
    PUSH(e, FBF_EV_JOB_SUBMITTED);
    e->u.submitted.id = id->valuestring;
    /* No job: Batsim's Redis form; the session reads the store. */
    const cJSON *job = get(d, "job");
    e->u.submitted.described = job != NULL;
    if (!job)
        return 0;
    NEED(cJSON_IsObject(job), "data.job", "an object (fastbf needs job descriptions)", job);
    fbf_error inner;
    int rc = fbf_job_json_read(job, "data.job", id->valuestring, false, &e->u.submitted.desc,
                               &inner);
    if (rc < 0)
        return within(c, rc, &inner);
    /* A forwarded delay profile's delay: what --estimate exact reads. */
    const cJSON *prof = get(d, "profile"), *type = get(prof, "type"), *delay = get(prof, "delay");
    if (cJSON_IsString(type) && strcmp(type->valuestring, "delay") == 0 &&
        cJSON_IsNumber(delay))
        e->u.submitted.desc.delay = delay->valuedouble;
    return 0;
}

static int read_completed(const ctx *c, const cJSON *d)
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
    const cJSON *alloc = get(d, "alloc");
    OPTIONAL(d, "alloc", cJSON_IsString, "data.alloc", "an interval set string");
    fbf_event *e;
    PUSH(e, FBF_EV_JOB_ENDED);
    e->u.ended.id = id->valuestring;
    e->u.ended.alloc = alloc ? alloc->valuestring : NULL;
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

/* How far a killed job got, down its nested sequences, e.g. "task 2 >
 * task 3 > 75.0%"; NULL when out of memory. */
static const char *progress_text(const ctx *c, const cJSON *p)
{
    fbf_bv4_decoder *d = c->d;
    char text[256];
    size_t len = 0;
    for (; p && len < sizeof text - 32; p = get(p, "current_task")) {
        const cJSON *idx = get(p, "current_task_index");
        const cJSON *pr = get(p, "progress");
        if (idx && idx->valuedouble < 0)
            len += (size_t)snprintf(text + len, sizeof text - len, "an unknown point");
        else if (idx)
            len += (size_t)snprintf(text + len, sizeof text - len, "task %.0f > ",
                                    idx->valuedouble);
        else if (pr)
            len += (size_t)snprintf(text + len, sizeof text - len, "%.1f%%",
                                    pr->valuedouble * 100);
    }
    if (d->ntexts == d->texts_cap) {
        size_t cap = d->texts_cap ? 2 * d->texts_cap : 16;
        char **t = realloc(d->texts, cap * sizeof *t);
        if (!t)
            return NULL;
        d->texts = t;
        d->texts_cap = cap;
    }
    char *copy = strdup(len ? text : "an unknown point");
    if (copy)
        d->texts[d->ntexts++] = copy;
    return copy;
}

static int read_killed(const ctx *c, const cJSON *d)
{
    const cJSON *ids = get(d, "job_ids");
    NEED(cJSON_IsArray(ids), "data.job_ids", "an array", ids);
    const cJSON *id;
    cJSON_ArrayForEach(id, ids) NEED(cJSON_IsString(id), "data.job_ids[]", "a string", id);
    const cJSON *prog = get(d, "job_progress");
    if (prog)
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
    /* One event per job: a job the kill came after (it completed first)
     * is the session's to skip. */
    cJSON_ArrayForEach(id, ids)
    {
        fbf_event *e;
        PUSH(e, FBF_EV_JOB_KILLED);
        e->u.killed.id = id->valuestring;
        e->u.killed.progress = NULL;
        const cJSON *pr = c->d->progress_text ? get(prog, id->valuestring) : NULL;
        if (pr && !(e->u.killed.progress = progress_text(c, pr)))
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
    }
    return 0;
}

/* ---------- machines, notifications, queries ---------- */

static int read_state_changed(const ctx *c, const cJSON *d)
{
    fbf_bv4_decoder *k = c->d;
    const cJSON *res = get(d, "resources");
    NEED(cJSON_IsString(res), "data.resources", "an interval set string", res);
    if (k->nsets == k->sets_cap) {
        size_t cap = k->sets_cap ? 2 * k->sets_cap : 8;
        fbf_idset *s = realloc(k->sets, cap * sizeof *s);
        if (!s)
            return fbf_errorf(c->err, -ENOMEM, "out of memory");
        for (size_t i = k->sets_cap; i < cap; i++)
            fbf_idset_init(&s[i]);
        k->sets = s;
        k->sets_cap = cap;
    }
    fbf_idset *set = &k->sets[k->nsets++];
    fbf_idset_clear(set);
    fbf_error e;
    int rc = fbf_idset_parse(set, res->valuestring, &e);
    if (rc < 0)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): data.resources: %s", c->index,
                          c->type, e.text);
    const cJSON *st = get(d, "state");
    NEED(cJSON_IsString(st) || cJSON_IsNumber(st), "data.state", "a string", st);
    uint32_t pstate;
    if ((rc = fbf_bv4_power_pstate(st, &pstate, &e)) < 0)
        return within(c, rc, &e);
    fbf_event *ev;
    PUSH(ev, FBF_EV_STATE_CHANGED);
    ev->u.state.machines = set;
    ev->u.state.pstate = pstate;
    return 0;
}

static int read_notify(const ctx *c, const cJSON *d)
{
    const cJSON *type = get(d, "type");
    NEED(cJSON_IsString(type), "data.type", "a string", type);
    fbf_notice what;
    if (strcmp(type->valuestring, "no_more_static_job_to_submit") == 0)
        what = FBF_NOTICE_NO_MORE_STATIC_JOBS;
    else if (strcmp(type->valuestring, "no_more_external_event_to_occur") == 0)
        what = FBF_NOTICE_NO_MORE_EXTERNAL_EVENTS;
    else
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): data.type: unknown notification "
                          "\"%s\"", c->index, c->type, type->valuestring);
    fbf_event *e;
    PUSH(e, FBF_EV_NOTIFY);
    e->u.notice = what;
    return 0;
}

static int read_query(const ctx *c, const cJSON *d)
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
        fbf_job_desc desc;
        fbf_error inner;
        int rc = fbf_job_json_read(job, "data.requests.estimate_waiting_time.job", NULL, false,
                                   &desc, &inner);
        if (rc < 0)
            return within(c, rc, &inner);
        fbf_event *e;
        PUSH(e, FBF_EV_QUERY_WAIT);
        e->u.query.id = id->valuestring;
        e->u.query.res = desc.res;
        e->u.query.walltime = desc.walltime;
    }
    return 0;
}

static int read_answer(const ctx *c, const cJSON *d)
{
    fbf_event *e;
    PUSH(e, FBF_EV_ENERGY);
    fbf_error inner;
    int rc = fbf_bv4_power_energy(d, &e->u.joules, &inner);
    return rc < 0 ? within(c, rc, &inner) : 0;
}

static int read_call(const ctx *c, const cJSON *d)
{
    fbf_event *e;
    PUSH(e, FBF_EV_CALL_DUE);
    return 0;
}

static int read_ends(const ctx *c, const cJSON *d)
{
    fbf_event *e;
    PUSH(e, FBF_EV_SIMULATION_ENDS);
    return 0;
}

typedef struct reader {
    const char *type;
    int (*read)(const ctx *c, const cJSON *data);
} reader;

/* The most frequent first. */
static const reader readers[] = {
    {"JOB_SUBMITTED", read_submitted},
    {"JOB_COMPLETED", read_completed},
    {"REQUESTED_CALL", read_call},
    {"NOTIFY", read_notify},
    {"JOB_KILLED", read_killed},
    {"RESOURCE_STATE_CHANGED", read_state_changed},
    {"QUERY", read_query},
    {"ANSWER", read_answer},
    {"SIMULATION_BEGINS", read_begins},
    {"SIMULATION_ENDS", read_ends},
};

static const char *const scheduler_only[] = {
    "REJECT_JOB",       "EXECUTE_JOB",        "CALL_ME_LATER",    "KILL_JOB",
    "REGISTER_JOB",     "REGISTER_PROFILE",   "SET_RESOURCE_STATE", "SET_JOB_METADATA",
    "CHANGE_JOB_STATE",
};

static int read_event(ctx *c, const cJSON *ev)
{
    fbf_bv4_decoder *d = c->d;
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
    if (ts->valuedouble > d->now)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): timestamp: %.6f is after now %.6f",
                          c->index, c->type, ts->valuedouble, d->now);
    if (ts->valuedouble < d->prev)
        return fbf_errorf(c->err, -EPROTO,
                          "event %d (%s): timestamp: %.6f is before the previous event's %.6f",
                          c->index, c->type, ts->valuedouble, d->prev);
    d->prev = c->ts = ts->valuedouble;
    const cJSON *data = get(ev, "data");
    NEED(cJSON_IsObject(data), "data", "an object", data);

    if (d->ended)
        return fbf_errorf(c->err, -EPROTO, "event %d (%s): comes after SIMULATION_ENDS",
                          c->index, c->type);
    for (size_t i = 0; i < sizeof readers / sizeof *readers; i++) {
        if (strcmp(c->type, readers[i].type) != 0)
            continue;
        bool is_begin = readers[i].read == read_begins;
        if (is_begin && d->begun)
            return fbf_errorf(c->err, -EPROTO, "event %d (%s): the simulation already began",
                              c->index, c->type);
        if (!is_begin && !d->begun)
            return fbf_errorf(c->err, -EPROTO,
                              "event %d (%s): received before SIMULATION_BEGINS", c->index,
                              c->type);
        d->begun = true;
        d->ended = readers[i].read == read_ends;
        /* The type's text lives as long as the tree; the table's is kept
         * for messages after the tree is gone. */
        c->type = readers[i].type;
        return readers[i].read(c, data);
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

void fbf_bv4_decoder_init(fbf_bv4_decoder *d, bool progress_text)
{
    *d = (fbf_bv4_decoder){.progress_text = progress_text};
    fbf_idset_init(&d->compute);
}

void fbf_bv4_decoder_drop(fbf_bv4_decoder *d)
{
    fbf_event_list_clear(&d->events);
    d->nsets = 0;
    for (size_t i = 0; i < d->ntexts; i++)
        free(d->texts[i]);
    d->ntexts = 0;
}

void fbf_bv4_decoder_fini(fbf_bv4_decoder *d)
{
    fbf_bv4_decoder_drop(d);
    fbf_event_list_fini(&d->events);
    fbf_idset_fini(&d->compute);
    free(d->state_machines);
    free(d->states);
    for (size_t i = 0; i < d->sets_cap; i++)
        fbf_idset_fini(&d->sets[i]);
    free(d->sets);
    free(d->texts);
}

void fbf_bv4_decoder_start(fbf_bv4_decoder *d, double now, bool begun)
{
    fbf_bv4_decoder_drop(d);
    d->now = now;
    d->prev = -INFINITY;
    d->begun = begun;
    d->ended = false;
    d->index = -1;
}

int fbf_bv4_decode_event(fbf_bv4_decoder *d, const cJSON *ev, fbf_error *err)
{
    ctx c = {.d = d, .index = ++d->index, .type = "message", .err = err};
    return read_event(&c, ev);
}

int fbf_bv4_decoder_end(const fbf_bv4_decoder *d, fbf_error *err)
{
    if (!d->begun)
        return fbf_errorf(err, -EPROTO, "message: the first message must hold SIMULATION_BEGINS");
    return 0;
}

const char *fbf_bv4_decoded_type(const fbf_bv4_decoder *d, long origin)
{
    return fbf_event_list_type(&d->events, origin, "message");
}

int fbf_bv4_check_now(const cJSON *now, fbf_error *err)
{
    if (!cJSON_IsNumber(now) || !isfinite(now->valuedouble))
        return fbf_errorf(err, -EPROTO, "message: now: expected a finite number, got %s",
                          describe(now));
    return 0;
}

int fbf_bv4_decode(fbf_bv4_decoder *d, fbf_json_arena *arena, const char *text, size_t len,
                   bool begun, cJSON **root, fbf_error *err)
{
    *root = NULL;
    fbf_bv4_decoder_drop(d);
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
    int rc = fbf_json_strict(text, len, r, err);
    if (rc < 0)
        return rc;
    const cJSON *now = get(r, "now"), *events = get(r, "events");
    if (!cJSON_IsObject(r))
        rc = fbf_errorf(err, -EPROTO, "message: expected a JSON object, got %s", describe(r));
    else if ((rc = fbf_bv4_check_now(now, err)) < 0)
        ;
    else if (!cJSON_IsArray(events))
        rc = fbf_errorf(err, -EPROTO, "message: events: expected an array, got %s",
                        describe(events));
    if (rc == 0) {
        fbf_bv4_decoder_start(d, now->valuedouble, begun);
        const cJSON *ev;
        cJSON_ArrayForEach(ev, events)
        {
            if ((rc = fbf_bv4_decode_event(d, ev, err)) < 0)
                break;
        }
    }
    if (rc == 0)
        rc = fbf_bv4_decoder_end(d, err);
    if (rc < 0)
        return rc;
    *root = r;
    return 0;
}
