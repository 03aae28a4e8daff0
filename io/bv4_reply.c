/*
 * bv4_reply: the reply half of the Batsim v4 session (see
 * bv4_session_int.h). Every decision of the pass becomes one event in D0
 * order (REJECT, KILL, EXECUTE and its metadata tag, SET_RESOURCE_STATE,
 * CALL_ME_LATER), then fastbf's own registrations, NOTIFY and QUERY, then
 * the ANSWERs; all are stamped with the request's now, formatted once.
 */
#include <errno.h>
#include <limits.h>
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

/* Moves every event of from to the end of events, stamped now. */
static void append_stamped(cJSON *events, cJSON *from, const char *now)
{
    cJSON *a;
    while ((a = cJSON_DetachItemFromArray(from, 0)) != NULL) {
        cJSON_ReplaceItemInObjectCaseSensitive(a, "timestamp", cJSON_CreateRaw(now));
        cJSON_AddItemToArray(events, a);
    }
}

int fbf_bv4_reply_build(fbf_bv4_session *s, cJSON *registrations, cJSON *answers, cJSON **out)
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
    /* Registrations first: a job registered here may start below. */
    append_stamped(events, registrations, now);

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
        if (d[i].kind == FBF_DEC_GIVE_UP) {
            /* The job is over without having run: Batsim records it as
             * killed, with the reason in its kill_reason. */
            char why[96];
            snprintf(why, sizeof why, "waited %g s without starting (fastbf --max-wait)",
                     s->opt.engine.max_wait);
            data = cJSON_CreateObject();
            if (!cJSON_AddStringToObject(data, "job_id", fbf_engine_job_id(s->engine, d[i].job)) ||
                !cJSON_AddStringToObject(data, "job_state", "COMPLETED_KILLED") ||
                !cJSON_AddStringToObject(data, "kill_reason", why)) {
                cJSON_Delete(data);
                rc = -ENOMEM;
                continue;
            }
            rc = add_event(events, now, "CHANGE_JOB_STATE", data);
            continue;
        }
        if (d[i].kind == FBF_DEC_CALL_ME_LATER) {
            /* Batsim wakes the scheduler once per request: asking again
             * for a time still to come would only double the wake-up. */
            fbf_bv4_register *sub = s->opt.submitter;
            if ((d[i].at == s->last_call || (sub && d[i].at == fbf_bv4_register_asked(sub))) &&
                d[i].at > fbf_engine_now(s->engine))
                continue;
            s->last_call = d[i].at;
            if (sub)
                fbf_bv4_register_note_call(sub, d[i].at);
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
    if (rc == 0 && s->opt.submitter) {
        cJSON *after = cJSON_CreateArray();
        fbf_error e;
        if (!after || fbf_bv4_register_close(s->opt.submitter, fbf_engine_now(s->engine), after,
                                             &e) < 0)
            rc = -ENOMEM;
        else
            append_stamped(events, after, now);
        cJSON_Delete(after);
    }
    /* fastbf registers no job: tell Batsim at once so it can end. */
    if (rc == 0 && s->dynamic_jobs && !s->notified_registration && !s->opt.submitter) {
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
    if (rc == 0)
        append_stamped(events, answers, now);
    return rc;
}

/* Prints into the session's buffer, doubling it until the reply fits, so
 * that steady state allocates nothing for the text. cJSON wants 5 spare
 * bytes beyond the text when printing into a caller's buffer. */
int fbf_bv4_reply_print(fbf_bv4_session *s, cJSON *out)
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

