/*
 * fbf_floor_fcfs: the cheapest correct Batsim v4 scheduler we know how to
 * write, the floor that bench/depth_series.py measures fastbf against.
 *
 * FCFS (D5) over a REP socket: jobs wait in arrival order, the head starts
 * on the lowest-numbered free resources as soon as it fits, a job larger
 * than the platform is rejected. One cJSON parse per message, a bitmap of
 * resources, a hash of running jobs by id; nothing else (no checks beyond
 * what keeps it from crashing, no log). Not a fastbf component: it exists
 * so that a ratio to it says what fastbf's policies and checks cost.
 *
 * Usage: fbf_floor_fcfs --endpoint tcp://127.0.0.1:PORT
 */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

typedef struct floor_job {
    char *id;
    int64_t res;
    uint32_t *alloc; /* the resources it holds, while it runs */
} floor_job;

typedef struct floor_state {
    int64_t nb_res, nb_free;
    uint64_t *busy; /* bit r: resource r is in use */
    floor_job **queue;
    size_t q_head, q_len, q_cap; /* a ring */
    floor_job **run; /* open addressing by id, power-of-two size */
    size_t run_cap, run_len;
    char *out;
    size_t out_len, out_cap;
    char *alloc; /* scratch: one job's resources as an interval set */
    size_t alloc_cap;
} floor_state;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "fbf_floor_fcfs: out of memory\n");
        exit(1);
    }
    return p;
}

static uint64_t hash_id(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void run_put(floor_state *st, floor_job *j);

static void run_grow(floor_state *st)
{
    floor_job **old = st->run;
    size_t old_cap = st->run_cap;
    st->run_cap = old_cap ? 2 * old_cap : 1024;
    st->run = calloc(st->run_cap, sizeof *st->run);
    if (!st->run) {
        fprintf(stderr, "fbf_floor_fcfs: out of memory\n");
        exit(1);
    }
    st->run_len = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            run_put(st, old[i]);
    free(old);
}

static void run_put(floor_state *st, floor_job *j)
{
    if (2 * (st->run_len + 1) > st->run_cap)
        run_grow(st);
    size_t m = st->run_cap - 1, i = hash_id(j->id) & m;
    while (st->run[i])
        i = (i + 1) & m;
    st->run[i] = j;
    st->run_len++;
}

/* Removes and returns the running job `id`, NULL if none. */
static floor_job *run_take(floor_state *st, const char *id)
{
    if (!st->run_cap)
        return NULL;
    size_t m = st->run_cap - 1, i = hash_id(id) & m;
    for (; st->run[i]; i = (i + 1) & m)
        if (!strcmp(st->run[i]->id, id))
            break;
    floor_job *j = st->run[i];
    if (!j)
        return NULL;
    st->run[i] = NULL;
    st->run_len--;
    /* Re-seat the cluster after the hole (linear probing deletion). */
    for (size_t k = (i + 1) & m; st->run[k]; k = (k + 1) & m) {
        floor_job *x = st->run[k];
        st->run[k] = NULL;
        st->run_len--;
        run_put(st, x);
    }
    return j;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "fbf_floor_fcfs: out of memory\n");
        exit(1);
    }
    return p;
}

static void out_add(floor_state *st, const char *s, size_t n)
{
    if (st->out_len + n + 1 > st->out_cap) {
        st->out_cap = 2 * (st->out_len + n + 1);
        st->out = xrealloc(st->out, st->out_cap);
    }
    memcpy(st->out + st->out_len, s, n);
    st->out_len += n;
    st->out[st->out_len] = '\0';
}

static void out_event(floor_state *st, double now, const char *type, const char *id,
                      const char *alloc)
{
    char buf[256];
    int n = snprintf(buf, sizeof buf, "%s{\"timestamp\":%.17g,\"type\":\"%s\",\"data\":{\"job_id\":\"",
                     st->out_len > 1 ? "," : "", now, type);
    out_add(st, buf, (size_t)n);
    out_add(st, id, strlen(id));
    if (alloc) {
        out_add(st, "\",\"alloc\":\"", 11);
        out_add(st, alloc, strlen(alloc));
    }
    out_add(st, "\"}}", 3);
}

static void queue_push(floor_state *st, floor_job *j)
{
    if (st->q_len == st->q_cap) {
        size_t cap = st->q_cap ? 2 * st->q_cap : 1024;
        floor_job **q = xmalloc(cap * sizeof *q);
        for (size_t i = 0; i < st->q_len; i++)
            q[i] = st->queue[(st->q_head + i) % st->q_cap];
        free(st->queue);
        st->queue = q;
        st->q_cap = cap;
        st->q_head = 0;
    }
    st->queue[(st->q_head + st->q_len++) % st->q_cap] = j;
}

/* Takes the lowest-numbered free resources for j and writes them as
 * Batsim's interval set into s. */
static void allocate(floor_state *st, floor_job *j, char **s, size_t *cap)
{
    j->alloc = xmalloc((size_t)j->res * sizeof *j->alloc);
    size_t len = 0;
    int64_t got = 0, run_a = -1, run_b = -1;
    for (int64_t r = 0; got < j->res; r++) {
        if (st->busy[r >> 6] & (1ull << (r & 63)))
            continue;
        st->busy[r >> 6] |= 1ull << (r & 63);
        j->alloc[got++] = (uint32_t)r;
        if (run_b == r - 1 && run_a >= 0) {
            run_b = r;
            continue;
        }
        if (run_a >= 0) {
            if (*cap < len + 48) {
                *cap = 2 * (len + 48);
                *s = xrealloc(*s, *cap);
            }
            len += (size_t)(run_a == run_b ? sprintf(*s + len, "%s%lld", len ? " " : "", (long long)run_a)
                                           : sprintf(*s + len, "%s%lld-%lld", len ? " " : "",
                                                     (long long)run_a, (long long)run_b));
        }
        run_a = run_b = r;
    }
    if (*cap < len + 48) {
        *cap = 2 * (len + 48);
        *s = xrealloc(*s, *cap);
    }
    sprintf(*s + len, run_a == run_b ? "%s%lld" : "%s%lld-%lld", len ? " " : "", (long long)run_a,
            (long long)run_b);
    st->nb_free -= j->res;
}

static void start_fitting(floor_state *st, double now)
{
    while (st->q_len) {
        floor_job *j = st->queue[st->q_head];
        if (j->res > st->nb_free)
            break;
        st->q_head = (st->q_head + 1) % st->q_cap;
        st->q_len--;
        allocate(st, j, &st->alloc, &st->alloc_cap);
        out_event(st, now, "EXECUTE_JOB", j->id, st->alloc);
        run_put(st, j);
    }
}

static void job_ends(floor_state *st, const char *id)
{
    floor_job *j = run_take(st, id);
    if (!j)
        return;
    for (int64_t i = 0; i < j->res; i++)
        st->busy[j->alloc[i] >> 6] &= ~(1ull << (j->alloc[i] & 63));
    st->nb_free += j->res;
    free(j->alloc);
    free(j->id);
    free(j);
}

/* Handles one request; returns 1 after SIMULATION_ENDS. */
static int handle(floor_state *st, cJSON *msg)
{
    double now = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(msg, "now"));
    int ends = 0;
    st->out_len = 0;
    out_add(st, "[", 1);
    cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(msg, "events"))
    {
        const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ev, "type"));
        cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(data, "job_id"));
        if (!type)
            continue;
        if (!strcmp(type, "SIMULATION_BEGINS")) {
            st->nb_res = st->nb_free =
                (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(data, "nb_resources"));
            st->busy = calloc((size_t)(st->nb_res + 64) / 64, sizeof *st->busy);
        } else if (!strcmp(type, "SIMULATION_ENDS")) {
            ends = 1;
        } else if (!strcmp(type, "JOB_SUBMITTED") && id) {
            cJSON *job = cJSON_GetObjectItemCaseSensitive(data, "job");
            floor_job *j = xmalloc(sizeof *j);
            j->id = strdup(id);
            j->res = (int64_t)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(job, "res"));
            j->alloc = NULL;
            if (j->res < 1 || j->res > st->nb_res) {
                out_event(st, now, "REJECT_JOB", id, NULL);
                free(j->id);
                free(j);
            } else {
                queue_push(st, j);
            }
        } else if ((!strcmp(type, "JOB_COMPLETED") || !strcmp(type, "JOB_KILLED")) && id) {
            job_ends(st, id);
        }
    }
    if (!ends)
        start_fitting(st, now);
    out_add(st, "]", 1);
    return ends;
}

int main(int argc, char **argv)
{
    if (argc != 3 || strcmp(argv[1], "--endpoint")) {
        fprintf(stderr, "usage: fbf_floor_fcfs --endpoint URL\n");
        return 2;
    }
    void *ctx = zmq_ctx_new();
    void *sock = zmq_socket(ctx, ZMQ_REP);
    if (zmq_bind(sock, argv[2]) != 0) {
        fprintf(stderr, "fbf_floor_fcfs: cannot bind %s: %s\n", argv[2], zmq_strerror(zmq_errno()));
        return 1;
    }
    floor_state st = {0};
    char *reply = NULL;
    size_t reply_cap = 0;
    for (;;) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, sock, 0) < 0) {
            fprintf(stderr, "fbf_floor_fcfs: receive failed: %s\n", zmq_strerror(zmq_errno()));
            return 1;
        }
        cJSON *msg = cJSON_ParseWithLength(zmq_msg_data(&m), zmq_msg_size(&m));
        zmq_msg_close(&m);
        if (!msg) {
            fprintf(stderr, "fbf_floor_fcfs: a message is not JSON\n");
            return 1;
        }
        double now = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(msg, "now"));
        int ends = handle(&st, msg);
        cJSON_Delete(msg);
        size_t need = st.out_len + 64;
        if (need > reply_cap) {
            reply_cap = 2 * need;
            reply = xrealloc(reply, reply_cap);
        }
        int n = snprintf(reply, reply_cap, "{\"now\":%.17g,\"events\":%s}", now, st.out);
        zmq_send(sock, reply, (size_t)n, 0);
        if (ends)
            break;
    }
    zmq_close(sock);
    zmq_ctx_term(ctx);
    return 0;
}
