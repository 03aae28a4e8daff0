/*
 * replay_sched: a scripted Batsim scheduler in a test thread (see
 * replay_sched.h); fastbf-replay is run against it by replay_run.c.
 *
 * The scheduler keeps the least state an FCFS needs: free resources, the
 * waiting queue in arrival order, and the allocation of each running job
 * (freed on JOB_COMPLETED / JOB_KILLED). A fault is injected the first
 * time it can be (usually the first message with a submission), so the
 * replayer sees an otherwise well-behaved peer.
 *
 * Invariant: only the scheduler thread touches its socket; the test thread
 * only sets `stop` and joins.
 */
#define _GNU_SOURCE /* memmem */
#define _XOPEN_SOURCE 700
#include "support/replay_sched.h"
#include "support/testkit.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "engine/idset.h"

typedef struct rs_job {
    char id[64];
    int64_t res;
    fbf_idset alloc;
} rs_job;

struct fbf_test_rsched {
    fbf_test_rfault fault;
    void *ctx, *sock;
    pthread_t th;
    atomic_bool stop;
    char *log;
    size_t log_len, log_cap;
    uint32_t nb_res;
    bool *busy;
    rs_job *queue, *run;
    size_t qn, rn;
    bool fault_done, begun;
    cJSON *inject; /* FBF_TRF_INJECT */
    char **script; /* FBF_TRF_SCRIPT: replies in order, NULL-terminated */
    size_t nmsg;   /* messages received */
};

/* The k-th scripted reply to msg, with "$now" replaced by msg's now as
 * printed; past the script, an empty reply at that now. */
static char *script_reply(fbf_test_rsched *s, const char *msg, size_t len)
{
    char now[64] = "0";
    const char *p = memmem(msg, len, "\"now\":", 6);
    if (p) {
        p += 6;
        size_t n = strcspn(p, ",}");
        snprintf(now, sizeof now, "%.*s", (int)n, p);
    }
    size_t k = 0;
    while (s->script[k] && k < s->nmsg)
        k++;
    const char *t = s->script[k] ? s->script[k] : "{'now':$now,'events':[]}";
    s->nmsg++;
    char *out = malloc(strlen(t) * 2 + 64 * 8 + 1);
    size_t o = 0;
    for (const char *c = t; *c;) {
        if (strncmp(c, "$now", 4) == 0) {
            o += (size_t)sprintf(out + o, "%s", now);
            c += 4;
        } else {
            out[o++] = *c == '\'' ? '"' : *c;
            c++;
        }
    }
    out[o] = '\0';
    return out;
}

static void log_append(fbf_test_rsched *s, const char *p, size_t n)
{
    if (s->log_len + n + 2 > s->log_cap) {
        size_t cap = (s->log_cap + n + 2) * 2;
        char *l = realloc(s->log, cap);
        if (!l)
            return;
        s->log = l;
        s->log_cap = cap;
    }
    memcpy(s->log + s->log_len, p, n);
    s->log_len += n;
    s->log[s->log_len++] = '\n';
    s->log[s->log_len] = '\0';
}

static cJSON *add_event(cJSON *events, double ts, const char *type)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "timestamp", ts);
    cJSON_AddStringToObject(e, "type", type);
    cJSON_AddItemToArray(events, e);
    return cJSON_AddObjectToObject(e, "data");
}

static void add_execute(cJSON *events, double now, const char *id, const char *alloc)
{
    cJSON *d = add_event(events, now, "EXECUTE_JOB");
    cJSON_AddStringToObject(d, "job_id", id);
    cJSON_AddStringToObject(d, "alloc", alloc);
}

static void free_job(fbf_test_rsched *s, const char *id)
{
    for (size_t i = 0; i < s->rn; i++) {
        if (strcmp(s->run[i].id, id) != 0)
            continue;
        fbf_idset *a = &s->run[i].alloc;
        for (uint32_t k = 0; k < a->n; k++)
            for (uint32_t r = a->r[k].lo; r <= a->r[k].hi && r < s->nb_res; r++)
                s->busy[r] = false;
        fbf_idset_fini(a);
        s->run[i] = s->run[--s->rn];
        return;
    }
}

/* The FCFS pass, with the allocation faults. */
static void fcfs(fbf_test_rsched *s, cJSON *events, double now)
{
    while (s->qn > 0) {
        rs_job *h = &s->queue[0];
        uint32_t nfree = 0;
        for (uint32_t r = 0; r < s->nb_res; r++)
            nfree += !s->busy[r];
        bool ignore_busy = s->fault == FBF_TRF_BUSY;
        if (!ignore_busy && (h->res > nfree || h->res < 1))
            break;
        int64_t want = h->res;
        bool inject = !s->fault_done;
        if (inject && s->fault == FBF_TRF_WRONG_RES)
            want++;
        char alloc[4096] = "";
        size_t len = 0;
        int64_t got = 0;
        for (uint32_t r = 0; r < s->nb_res && got < want; r++) {
            if (s->busy[r] && !ignore_busy)
                continue;
            if (inject && s->fault == FBF_TRF_OUT_OF_RANGE && got == want - 1)
                r = s->nb_res; /* the last one just past the platform */
            len += (size_t)snprintf(alloc + len, sizeof alloc - len, "%s%u", got ? " " : "", r);
            got++;
        }
        if (inject && s->fault == FBF_TRF_BAD_ALLOC)
            strcpy(alloc, "0-");
        add_execute(events, now, h->id, alloc);
        if (inject && s->fault == FBF_TRF_TWICE)
            add_execute(events, now, h->id, alloc);
        if (inject && s->fault == FBF_TRF_REJECT_RUNNING) {
            cJSON *d = add_event(events, now, "REJECT_JOB");
            cJSON_AddStringToObject(d, "job_id", h->id);
        }
        if (s->fault == FBF_TRF_WRONG_RES || s->fault == FBF_TRF_OUT_OF_RANGE ||
            s->fault == FBF_TRF_TWICE || s->fault == FBF_TRF_REJECT_RUNNING ||
            s->fault == FBF_TRF_BAD_ALLOC)
            s->fault_done = true;
        rs_job j = *h;
        fbf_idset_init(&j.alloc);
        fbf_idset_parse(&j.alloc, alloc, NULL);
        for (uint32_t k = 0; k < j.alloc.n; k++)
            for (uint32_t r = j.alloc.r[k].lo; r <= j.alloc.r[k].hi && r < s->nb_res; r++)
                s->busy[r] = true;
        s->run = realloc(s->run, (s->rn + 1) * sizeof *s->run);
        s->run[s->rn++] = j;
        memmove(s->queue, s->queue + 1, (s->qn - 1) * sizeof *s->queue);
        s->qn--;
    }
}

/* Faults injected once, in the reply to the first message with a submission. */
static bool message_fault(fbf_test_rfault f)
{
    switch (f) {
    case FBF_TRF_UNKNOWN_JOB:
    case FBF_TRF_NOT_SUBMITTED:
    case FBF_TRF_NOW_BEFORE:
    case FBF_TRF_DESCENDING:
    case FBF_TRF_CALL_PAST:
    case FBF_TRF_UNKNOWN_TYPE:
    case FBF_TRF_SET_STATE:
    case FBF_TRF_REGISTER:
    case FBF_TRF_NO_NOW:
        return true;
    default:
        return false;
    }
}

/* The reply to msg (malloc'ed), or NULL to stay silent. */
static char *handle(fbf_test_rsched *s, const char *msg, size_t len, bool *end)
{
    if (s->fault == FBF_TRF_SCRIPT) {
        *end = memmem(msg, len, "SIMULATION_ENDS", 15) != NULL;
        return script_reply(s, msg, len);
    }
    cJSON *root = cJSON_ParseWithLength(msg, len);
    if (!root)
        return strdup("{\"now\":0,\"events\":[]}");
    double now = cJSON_GetObjectItem(root, "now")->valuedouble;
    bool submitted = false;
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItem(root, "events"))
    {
        const char *type = cJSON_GetObjectItem(ev, "type")->valuestring;
        cJSON *data = cJSON_GetObjectItem(ev, "data");
        if (strcmp(type, "SIMULATION_BEGINS") == 0) {
            s->nb_res = (uint32_t)cJSON_GetObjectItem(data, "nb_resources")->valueint;
            s->busy = calloc(s->nb_res + 1, sizeof *s->busy);
        } else if (strcmp(type, "SIMULATION_ENDS") == 0) {
            *end = true;
        } else if (strcmp(type, "JOB_SUBMITTED") == 0) {
            cJSON *job = cJSON_GetObjectItem(data, "job");
            s->queue = realloc(s->queue, (s->qn + 1) * sizeof *s->queue);
            rs_job *j = &s->queue[s->qn++];
            snprintf(j->id, sizeof j->id, "%s", cJSON_GetObjectItem(job, "id")->valuestring);
            j->res = (int64_t)cJSON_GetObjectItem(job, "res")->valuedouble;
            submitted = true;
        } else if (strcmp(type, "JOB_COMPLETED") == 0) {
            free_job(s, cJSON_GetObjectItem(data, "job_id")->valuestring);
        } else if (strcmp(type, "JOB_KILLED") == 0) {
            cJSON *id;
            cJSON_ArrayForEach(id, cJSON_GetObjectItem(data, "job_ids"))
                free_job(s, id->valuestring);
        }
    }
    cJSON_Delete(root);
    bool silent = s->fault == FBF_TRF_SILENT && s->begun;
    s->begun = true;
    if (silent)
        return NULL;
    cJSON *reply = cJSON_CreateObject();
    cJSON_AddNumberToObject(reply, "now", now);
    cJSON *events = cJSON_AddArrayToObject(reply, "events");
    bool inject = submitted && !s->fault_done;
    if (*end) {
        if (s->fault == FBF_TRF_ENDS_EVENTS)
            cJSON_AddNumberToObject(add_event(events, now, "CALL_ME_LATER"), "timestamp", now + 1);
    } else if (s->fault == FBF_TRF_IDLE) {
        /* never decides anything */
    } else if (inject && s->fault == FBF_TRF_MALFORMED) {
        cJSON_Delete(reply);
        s->fault_done = true;
        return strdup("{\"now\": 1, \"events\": [");
    } else {
        if (inject) {
            switch (s->fault) {
            case FBF_TRF_UNKNOWN_JOB: add_execute(events, now, "w0!nope", "0"); break;
            case FBF_TRF_NOT_SUBMITTED: add_execute(events, now, "w0!2", "0"); break;
            case FBF_TRF_NOW_BEFORE:
                cJSON_SetNumberValue(cJSON_GetObjectItem(reply, "now"), now - 1);
                break;
            case FBF_TRF_DESCENDING:
                cJSON_AddNumberToObject(add_event(events, now, "CALL_ME_LATER"), "timestamp",
                                        now + 100);
                cJSON_AddNumberToObject(add_event(events, now - 0.5, "CALL_ME_LATER"),
                                        "timestamp", now + 100);
                break;
            case FBF_TRF_CALL_PAST:
                cJSON_AddNumberToObject(add_event(events, now, "CALL_ME_LATER"), "timestamp",
                                        now - 1);
                break;
            case FBF_TRF_UNKNOWN_TYPE: add_event(events, now, "LAUNCH_ROCKET"); break;
            case FBF_TRF_SET_STATE: {
                cJSON *d = add_event(events, now, "SET_RESOURCE_STATE");
                cJSON_AddStringToObject(d, "resources", "0-1");
                cJSON_AddStringToObject(d, "state", "1");
                break;
            }
            case FBF_TRF_REGISTER: {
                cJSON *d = add_event(events, now, "REGISTER_JOB");
                cJSON_AddStringToObject(d, "job_id", "dyn!1");
                break;
            }
            case FBF_TRF_NO_NOW: cJSON_DeleteItemFromObject(reply, "now"); break;
            case FBF_TRF_INJECT: {
                cJSON *e;
                cJSON_ArrayForEach(e, s->inject)
                {
                    cJSON *c = cJSON_Duplicate(e, 1);
                    cJSON_DeleteItemFromObject(c, "timestamp");
                    cJSON_AddNumberToObject(c, "timestamp", now);
                    cJSON_AddItemToArray(events, c);
                }
                s->fault_done = true;
                break;
            }
            default: break;
            }
            if (message_fault(s->fault))
                s->fault_done = true;
        }
        if (submitted && s->fault == FBF_TRF_KILL && s->rn > 0 && !s->fault_done) {
            cJSON *ids = cJSON_AddArrayToObject(add_event(events, now, "KILL_JOB"), "job_ids");
            for (size_t i = 0; i < s->rn; i++)
                cJSON_AddItemToArray(ids, cJSON_CreateString(s->run[i].id));
            s->fault_done = true;
        }
        if (submitted && s->fault == FBF_TRF_CALL_LATER) {
            cJSON_AddNumberToObject(add_event(events, now, "CALL_ME_LATER"), "timestamp", now + 5);
            cJSON_AddNumberToObject(add_event(events, now, "CALL_ME_LATER"), "timestamp",
                                    now + 1e-6);
        }
        fcfs(s, events, now);
        if (s->fault == FBF_TRF_CANCEL_WAITING) {
            for (size_t i = 0; i < s->qn; i++) {
                cJSON *d = add_event(events, now, "CHANGE_JOB_STATE");
                cJSON_AddStringToObject(d, "job_id", s->queue[i].id);
                cJSON_AddStringToObject(d, "job_state", "COMPLETED_KILLED");
                cJSON_AddStringToObject(d, "kill_reason", "no room at submission");
            }
            s->qn = 0;
        }
        if (s->fault == FBF_TRF_SET_BUSY && submitted && s->rn > 0 && !s->fault_done) {
            cJSON *d = add_event(events, now, "SET_RESOURCE_STATE");
            cJSON_AddStringToObject(d, "resources", "0");
            cJSON_AddStringToObject(d, "state", "1");
            s->fault_done = true;
        }
        if (s->fault == FBF_TRF_CHANGE_RUNNING && submitted && s->rn > 0 && !s->fault_done) {
            cJSON *d = add_event(events, now, "CHANGE_JOB_STATE");
            cJSON_AddStringToObject(d, "job_id", s->run[0].id);
            cJSON_AddStringToObject(d, "job_state", "COMPLETED_KILLED");
            s->fault_done = true;
        }
    }
    /* A scheduler that took 3 s to decide nothing: Batsim's clock, and so
     * the next message's now, moves on to the reply's now. */
    if (s->fault == FBF_TRF_SLOW && !*end && !events->child)
        cJSON_SetNumberValue(cJSON_GetObjectItem(reply, "now"), now + 3);
    char *text = cJSON_PrintUnformatted(reply);
    cJSON_Delete(reply);
    return text;
}

static void *rsched_main(void *arg)
{
    fbf_test_rsched *s = arg;
    bool end = false;
    while (!end && !atomic_load(&s->stop)) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, s->sock, 0) < 0) {
            zmq_msg_close(&m);
            continue;
        }
        log_append(s, zmq_msg_data(&m), zmq_msg_size(&m));
        char *reply = handle(s, zmq_msg_data(&m), zmq_msg_size(&m), &end);
        zmq_msg_close(&m);
        if (!reply) { /* silent from now on */
            while (!atomic_load(&s->stop))
                usleep(10000);
            break;
        }
        zmq_send(s->sock, reply, strlen(reply), 0);
        free(reply);
    }
    return NULL;
}

/* The thread reads fault, inject and script from its start: all are set
 * before it is created. */
static fbf_test_rsched *start(fbf_test_rfault fault, cJSON *inject, char **script,
                              char *endpoint, size_t cap)
{
    fbf_test_rsched *s = calloc(1, sizeof *s);
    s->fault = fault;
    s->inject = inject;
    s->script = script;
    s->ctx = zmq_ctx_new();
    s->sock = zmq_socket(s->ctx, ZMQ_REP);
    int linger = 0, to = 50;
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(s->sock, ZMQ_RCVTIMEO, &to, sizeof to);
    if (zmq_bind(s->sock, "tcp://127.0.0.1:*") != 0 ||
        zmq_getsockopt(s->sock, ZMQ_LAST_ENDPOINT, endpoint, &cap) != 0) {
        zmq_close(s->sock);
        zmq_ctx_term(s->ctx);
        free(s);
        return NULL;
    }
    pthread_create(&s->th, NULL, rsched_main, s);
    return s;
}

fbf_test_rsched *fbf_test_rsched_start(fbf_test_rfault fault, char *endpoint, size_t cap)
{
    return start(fault, NULL, NULL, endpoint, cap);
}

fbf_test_rsched *fbf_test_rsched_script(const char *const *replies, char *endpoint, size_t cap)
{
    size_t n = 0;
    while (replies[n])
        n++;
    char **copy = calloc(n + 1, sizeof *copy);
    for (size_t i = 0; copy && i < n; i++)
        copy[i] = strdup(replies[i]);
    fbf_test_rsched *s = copy ? start(FBF_TRF_SCRIPT, NULL, copy, endpoint, cap) : NULL;
    if (!s && copy) {
        for (size_t i = 0; i < n; i++)
            free(copy[i]);
        free(copy);
    }
    return s;
}

fbf_test_rsched *fbf_test_rsched_inject(const char *events, char *endpoint, size_t cap)
{
    char *t = strdup(events);
    for (char *p = t; *p; p++)
        if (*p == '\'')
            *p = '"';
    cJSON *ev = cJSON_Parse(t);
    free(t);
    if (!cJSON_IsArray(ev)) {
        cJSON_Delete(ev);
        return NULL;
    }
    fbf_test_rsched *s = start(FBF_TRF_INJECT, ev, NULL, endpoint, cap);
    if (!s)
        cJSON_Delete(ev);
    return s;
}

char *fbf_test_rsched_stop(fbf_test_rsched *s)
{
    atomic_store(&s->stop, true);
    pthread_join(s->th, NULL);
    zmq_close(s->sock);
    zmq_ctx_term(s->ctx);
    char *log = s->log ? s->log : strdup("");
    for (size_t i = 0; i < s->rn; i++)
        fbf_idset_fini(&s->run[i].alloc);
    free(s->run);
    free(s->queue);
    free(s->busy);
    cJSON_Delete(s->inject);
    for (size_t i = 0; s->script && s->script[i]; i++)
        free(s->script[i]);
    free(s->script);
    free(s);
    return log;
}

int fbf_test_replay_against(fbf_test_rfault fault, const char *const *args, int timeout_ms,
                            char **out, char **err)
{
    char ep[256];
    fbf_test_rsched *s = fbf_test_rsched_start(fault, ep, sizeof ep);
    if (!s)
        return -1;
    size_t n = 0;
    while (args[n])
        n++;
    const char **all = calloc(n + 3, sizeof *all);
    int rc = -1;
    if (all) {
        all[0] = "--endpoint";
        all[1] = ep;
        memcpy(all + 2, args, (n + 1) * sizeof *all);
        rc = fbf_test_replay_run(all, timeout_ms, out, err);
        free(all);
    }
    free(fbf_test_rsched_stop(s));
    return rc;
}
