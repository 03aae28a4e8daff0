/*
 * v5_edc: the decision core of the tests' Batsim 5 EDC (v5_edc.h). It
 * reads each message with cJSON, keeps the least an FCFS needs (the
 * platform size, which hosts are free, the queue, each running job's
 * hosts) and writes the reply with cJSON.
 *
 * Invariant: busy[] marks exactly the hosts of the jobs this EDC started
 * and has not seen complete; a scripted reply starts nothing in its eyes.
 */
#define _GNU_SOURCE /* memmem */
#include "support/v5_edc.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct edc_job {
    char *id;
    long res;
    char *hosts; /* a running job's host_allocation text */
} edc_job;

struct fbf_test_v5edc {
    char **script;
    size_t nscript, nmsg;
    long nb;
    bool *busy;
    edc_job *queue, *run;
    size_t qn, qcap, rn, rcap;
};

fbf_test_v5edc *fbf_test_v5edc_new(const char *const *script)
{
    fbf_test_v5edc *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    while (script && script[e->nscript])
        e->nscript++;
    e->script = calloc(e->nscript + 1, sizeof *e->script);
    for (size_t k = 0; e->script && k < e->nscript; k++) {
        e->script[k] = strdup(script[k]);
        for (char *c = e->script[k]; c && *c; c++)
            if (*c == '\'')
                *c = '"';
    }
    return e;
}

static void job_free(edc_job *j)
{
    free(j->id);
    free(j->hosts);
}

void fbf_test_v5edc_free(fbf_test_v5edc *e)
{
    if (!e)
        return;
    for (size_t k = 0; k < e->nscript; k++)
        free(e->script[k]);
    free(e->script);
    for (size_t k = 0; k < e->qn; k++)
        job_free(&e->queue[k]);
    for (size_t k = 0; k < e->rn; k++)
        job_free(&e->run[k]);
    free(e->queue);
    free(e->run);
    free(e->busy);
    free(e);
}

static const char default_hello[] =
    "{\"now\":0.0,\"events\":[{\"timestamp\":0.0,\"event_type\":\"EDCHelloEvent\",\"event\":{"
    "\"batprotocol_version\":\"1.0.0\",\"decision_component_name\":\"fbf-test-fcfs\","
    "\"decision_component_version\":\"0.1.0\",\"decision_component_commit\":\"\","
    "\"requested_simulation_features\":{}}}]}";

char *fbf_test_v5edc_hello_parts(fbf_test_v5edc *e, uint32_t *flags)
{
    const char *s = e->nscript && e->script[0][0] ? e->script[0] : default_hello;
    *flags = 2;
    if (strncmp(s, "!flags=", 7) == 0) {
        char *end;
        *flags = (uint32_t)strtoul(s + 7, &end, 0);
        s = *end == ':' ? end + 1 : end;
    } else if (strncmp(s, "!raw:", 5) == 0) {
        s += 5;
    }
    return strdup(s);
}

char *fbf_test_v5edc_hello(fbf_test_v5edc *e, size_t *len)
{
    uint32_t flags;
    char *text = fbf_test_v5edc_hello_parts(e, &flags);
    bool raw = e->nscript && strncmp(e->script[0], "!raw:", 5) == 0;
    size_t n = strlen(text), head = raw ? 0 : sizeof flags;
    char *out = malloc(head + n + 1);
    if (out) {
        memcpy(out, &flags, head);
        memcpy(out + head, text, n + 1);
        *len = head + n;
    }
    free(text);
    return out;
}

static edc_job *push(edc_job **a, size_t *n, size_t *cap)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 64;
        edc_job *p = realloc(*a, c * sizeof *p);
        if (!p)
            return NULL;
        *a = p;
        *cap = c;
    }
    memset(&(*a)[*n], 0, sizeof **a);
    return &(*a)[(*n)++];
}

/* Takes the lowest res free hosts: their interval set text. */
static char *take_hosts(fbf_test_v5edc *e, long res)
{
    size_t cap = 32 + (size_t)res * 24, o = 0;
    char *t = malloc(cap);
    long left = res;
    for (long h = 0; t && h < e->nb && left > 0; h++) {
        if (e->busy[h])
            continue;
        long lo = h;
        while (h + 1 < e->nb && !e->busy[h + 1] && h + 1 - lo < left)
            h++;
        for (long k = lo; k <= h; k++)
            e->busy[k] = true;
        left -= h - lo + 1;
        o += (size_t)(lo == h ? snprintf(t + o, cap - o, "%s%ld", o ? " " : "", lo)
                              : snprintf(t + o, cap - o, "%s%ld-%ld", o ? " " : "", lo, h));
    }
    return t;
}

/* Frees the hosts of an interval set text. */
static void free_hosts(fbf_test_v5edc *e, const char *t)
{
    for (const char *p = t; *p;) {
        char *end;
        long lo = strtol(p, &end, 10), hi = lo;
        if (*end == '-')
            hi = strtol(end + 1, &end, 10);
        for (long k = lo; k <= hi && k < e->nb; k++)
            e->busy[k] = false;
        p = *end == ' ' ? end + 1 : end;
        if (end == p && *p)
            break;
    }
}

static void observe(fbf_test_v5edc *e, const cJSON *events)
{
    for (const cJSON *ev = events ? events->child : NULL; ev; ev = ev->next) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "event_type");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "event");
        const char *t = cJSON_IsString(type) ? type->valuestring : "";
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        if (strcmp(t, "SimulationBeginsEvent") == 0) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(d, "computation_host_number");
            e->nb = cJSON_IsNumber(n) ? (long)n->valuedouble : 0;
            free(e->busy);
            e->busy = calloc((size_t)(e->nb ? e->nb : 1), sizeof *e->busy);
        } else if (strcmp(t, "JobSubmittedEvent") == 0 && cJSON_IsString(id)) {
            const cJSON *job = cJSON_GetObjectItemCaseSensitive(d, "job");
            const cJSON *rr = cJSON_GetObjectItemCaseSensitive(job, "resource_request");
            edc_job *j = push(&e->queue, &e->qn, &e->qcap);
            if (j) {
                j->id = strdup(id->valuestring);
                j->res = cJSON_IsNumber(rr) ? (long)rr->valuedouble : 1;
            }
        } else if (strcmp(t, "JobCompletedEvent") == 0 && cJSON_IsString(id)) {
            for (size_t k = 0; k < e->rn; k++)
                if (strcmp(e->run[k].id, id->valuestring) == 0) {
                    free_hosts(e, e->run[k].hosts);
                    job_free(&e->run[k]);
                    e->run[k] = e->run[--e->rn];
                    break;
                }
        }
    }
}

/* A scripted reply's starts and rejections, which the FCFS must know of. */
static void own_decisions(fbf_test_v5edc *e, const char *reply)
{
    cJSON *root = cJSON_Parse(reply);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "events");
    for (const cJSON *ev = cJSON_IsArray(events) ? events->child : NULL; ev; ev = ev->next) {
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "event_type");
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "event");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        const cJSON *hosts = cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(d, "allocation"), "host_allocation");
        bool exec = cJSON_IsString(type) && strcmp(type->valuestring, "ExecuteJobEvent") == 0;
        bool rej = cJSON_IsString(type) && strcmp(type->valuestring, "RejectJobEvent") == 0;
        for (size_t k = 0; (exec || rej) && cJSON_IsString(id) && k < e->qn; k++) {
            if (strcmp(e->queue[k].id, id->valuestring) != 0)
                continue;
            edc_job j = e->queue[k];
            memmove(e->queue + k, e->queue + k + 1, (e->qn - k - 1) * sizeof *e->queue);
            e->qn--;
            edc_job *r = exec && cJSON_IsString(hosts) ? push(&e->run, &e->rn, &e->rcap) : NULL;
            if (r) {
                *r = j;
                r->hosts = strdup(hosts->valuestring);
                for (const char *p = hosts->valuestring; *p;) { /* mark them busy */
                    char *end;
                    long lo = strtol(p, &end, 10), hi = lo;
                    if (*end == '-')
                        hi = strtol(end + 1, &end, 10);
                    for (long h = lo; h <= hi && h >= 0 && h < e->nb; h++)
                        e->busy[h] = true;
                    if (end == p)
                        break;
                    p = *end == ' ' ? end + 1 : end;
                }
            } else {
                job_free(&j);
            }
            break;
        }
    }
    cJSON_Delete(root);
}

static void fcfs(fbf_test_v5edc *e, cJSON *out, double now)
{
    size_t started = 0;
    long nfree = 0;
    for (long h = 0; h < e->nb; h++)
        nfree += !e->busy[h];
    while (started < e->qn && e->queue[started].res > 0 && e->queue[started].res <= nfree) {
        edc_job *q = &e->queue[started++];
        edc_job *r = push(&e->run, &e->rn, &e->rcap);
        if (!r)
            break;
        *r = *q;
        r->hosts = take_hosts(e, r->res);
        nfree -= r->res;
        cJSON *ev = cJSON_CreateObject();
        cJSON_AddNumberToObject(ev, "timestamp", now);
        cJSON_AddStringToObject(ev, "event_type", "ExecuteJobEvent");
        cJSON *d = cJSON_AddObjectToObject(ev, "event");
        cJSON_AddStringToObject(d, "job_id", r->id);
        cJSON *a = cJSON_AddObjectToObject(d, "allocation");
        cJSON_AddStringToObject(a, "host_allocation", r->hosts ? r->hosts : "");
        cJSON_AddStringToObject(a, "executor_placement_type",
                                "PredefinedExecutorPlacementStrategyWrapper");
        cJSON_AddStringToObject(cJSON_AddObjectToObject(a, "executor_placement"), "strategy",
                                "SpreadOverHostsFirst");
        cJSON_AddItemToArray(out, ev);
    }
    if (started) /* (a queue never filled is NULL) */
        memmove(e->queue, e->queue + started, (e->qn - started) * sizeof *e->queue);
    e->qn -= started;
}

/* The scripted reply t with $now and $job replaced. */
static char *scripted(const char *t, const char *now, const char *job)
{
    size_t cap = strlen(t) * 4 + 256, o = 0;
    char *out = malloc(cap);
    for (const char *c = t; out && *c && o + 200 < cap;) {
        if (strncmp(c, "$now", 4) == 0) {
            o += (size_t)snprintf(out + o, cap - o, "%s", now);
            c += 4;
        } else if (strncmp(c, "$job", 4) == 0) {
            o += (size_t)snprintf(out + o, cap - o, "%.150s", job);
            c += 4;
        } else {
            out[o++] = *c++;
        }
    }
    if (out)
        out[o] = '\0';
    return out;
}

char *fbf_test_v5edc_decide(fbf_test_v5edc *e, const char *msg, size_t len)
{
    if (len && msg[len - 1] == '\0')
        len--;
    size_t k = ++e->nmsg;
    cJSON *root = cJSON_ParseWithLength(msg, len);
    const cJSON *nowj = cJSON_GetObjectItemCaseSensitive(root, "now");
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(root, "events");
    double now = cJSON_IsNumber(nowj) ? nowj->valuedouble : 0;
    observe(e, events);
    char *reply;
    if (k < e->nscript) {
        char nowt[64] = "0", job[160] = "w0!none";
        const char *p = memmem(msg, len, "\"now\":", 6);
        if (p)
            snprintf(nowt, sizeof nowt, "%.*s", (int)strcspn(p + 6, ",}"), p + 6);
        for (const cJSON *ev = events ? events->child : NULL; ev; ev = ev->next) {
            const cJSON *id = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetObjectItemCaseSensitive(ev, "event"), "job_id");
            const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "event_type");
            if (cJSON_IsString(id) && cJSON_IsString(type) &&
                strcmp(type->valuestring, "JobSubmittedEvent") == 0) {
                snprintf(job, sizeof job, "%s", id->valuestring);
                break;
            }
        }
        reply = strcmp(e->script[k], "!silent") == 0 ? NULL : scripted(e->script[k], nowt, job);
        if (reply)
            own_decisions(e, reply);
    } else {
        cJSON *out = cJSON_CreateObject(), *evs = cJSON_CreateArray();
        cJSON_AddNumberToObject(out, "now", now);
        cJSON_AddItemToObject(out, "events", evs);
        if (!memmem(msg, len, "\"SimulationEndsEvent\"", 21)) /* nothing to decide then */
            fcfs(e, evs, now);
        reply = cJSON_PrintUnformatted(out);
        cJSON_Delete(out);
    }
    cJSON_Delete(root);
    return reply;
}
