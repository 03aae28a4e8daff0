/*
 * v2_sched: a Batsim v2 text-protocol scheduler for the tests (see
 * v2_sched.h), in a thread of the test or as a whole process.
 *
 * The FCFS keeps what the rule needs: a free flag per machine, the waiting
 * jobs in arrival order, and the machines of each running job (freed on
 * C). Job data comes from Redis through hiredis, under the prefix the
 * protocol fixes: the socket's absolute path and ':'.
 *
 * Invariant: only the scheduler's thread touches its socket and Redis
 * connection; the test thread sets `stop` and joins.
 */
#include "support/v2_sched.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

typedef struct v2s_job {
    char *id;
    long res;
    uint32_t *machines; /* while running */
} v2s_job;

struct fbf_test_v2s {
    char path[108];
    int redis_port;
    const char *const *script; /* NULL: FCFS */
    int fd;
    redisContext *rc;
    pthread_t th;
    bool threaded;
    atomic_bool stop;
    char *log;
    size_t log_len, log_cap;
    size_t nmsg;
    uint32_t nb_res;
    bool *busy;
    v2s_job *queue, *run;
    size_t qn, rn, qcap, rcap;
    int result;
};

static void log_msg(fbf_test_v2s *s, const char *m, size_t n)
{
    if (s->log_len + n + 2 > s->log_cap) {
        s->log_cap = (s->log_len + n + 2) * 2;
        s->log = realloc(s->log, s->log_cap);
    }
    memcpy(s->log + s->log_len, m, n);
    s->log_len += n;
    s->log[s->log_len++] = '\n';
    s->log[s->log_len] = '\0';
}

/* Waits up to 100 ms for fd; true when readable. */
static bool readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 100) > 0;
}

static bool read_n(fbf_test_v2s *s, char *p, size_t n)
{
    while (n) {
        if (!readable(s->fd)) {
            if (atomic_load(&s->stop))
                return false;
            continue;
        }
        ssize_t got = read(s->fd, p, n);
        if (got <= 0)
            return false;
        p += got;
        n -= (size_t)got;
    }
    return true;
}

/* The next frame (malloc'ed, NUL-terminated), or NULL at the end. */
static char *recv_frame(fbf_test_v2s *s)
{
    uint32_t n;
    if (!read_n(s, (char *)&n, 4))
        return NULL;
    char *m = malloc((size_t)n + 1);
    if (!read_n(s, m, n)) {
        free(m);
        return NULL;
    }
    m[n] = '\0';
    return m;
}

static void send_frame(fbf_test_v2s *s, const char *m, size_t n)
{
    uint32_t len = (uint32_t)n;
    char *f = malloc(n + 4);
    memcpy(f, &len, 4);
    memcpy(f + 4, m, n);
    size_t off = 0;
    while (off < n + 4) {
        ssize_t put = send(s->fd, f + off, n + 4 - off, MSG_NOSIGNAL);
        if (put <= 0)
            break;
        off += (size_t)put;
    }
    free(f);
}

/* GET <path>:<key> (malloc'ed) or NULL. */
static char *rget(fbf_test_v2s *s, const char *key)
{
    redisReply *r = redisCommand(s->rc, "GET %s:%s", s->path, key);
    char *v = r && r->type == REDIS_REPLY_STRING ? strdup(r->str) : NULL;
    if (r)
        freeReplyObject(r);
    return v;
}

/* The time of message m as printed ("3:<time>|..."). */
static void msg_time(const char *m, char *now, size_t cap)
{
    const char *c = strchr(m, ':');
    size_t n = c ? strcspn(c + 1, "|") : 0;
    snprintf(now, cap, "%.*s", (int)n, c ? c + 1 : "");
}

static void push(v2s_job **a, size_t *n, size_t *cap, v2s_job j)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        *a = realloc(*a, *cap * sizeof **a);
    }
    (*a)[(*n)++] = j;
}

/* One FCFS answer to message m (modified) into out; false on a failure. */
static bool fcfs(fbf_test_v2s *s, char *m, char **out, bool *end)
{
    char now[64];
    msg_time(m, now, sizeof now);
    char *save = NULL;
    strtok_r(m, "|", &save); /* the header */
    for (char *ev; (ev = strtok_r(NULL, "|", &save));) {
        char *stamp = strchr(ev, ':');
        if (!stamp)
            return false;
        stamp++;
        const char *id = stamp[0] && stamp[1] == ':' ? stamp + 2 : "";
        if (*stamp == 'A') {
            char *nb = rget(s, "nb_res");
            if (!nb)
                return fprintf(stderr, "v2_sched: no %s:nb_res\n", s->path), false;
            s->nb_res = (uint32_t)strtoul(nb, NULL, 10);
            free(nb);
            s->busy = calloc(s->nb_res ? s->nb_res : 1, 1);
        } else if (*stamp == 'S') {
            char key[300];
            snprintf(key, sizeof key, "job_%s", id);
            char *js = rget(s, key);
            snprintf(key, sizeof key, "profile_%s", id);
            char *ps = rget(s, key);
            cJSON *j = js ? cJSON_Parse(js) : NULL;
            cJSON *res = j ? cJSON_GetObjectItemCaseSensitive(j, "res") : NULL;
            bool ok = ps && cJSON_IsNumber(res);
            if (ok)
                push(&s->queue, &s->qn, &s->qcap, (v2s_job){strdup(id), (long)res->valuedouble,
                                                            NULL});
            else
                fprintf(stderr, "v2_sched: job %s: bad or missing keys\n", id);
            cJSON_Delete(j);
            free(js);
            free(ps);
            if (!ok)
                return false;
        } else if (*stamp == 'C') {
            for (size_t k = 0; k < s->rn; k++)
                if (strcmp(s->run[k].id, id) == 0) {
                    for (long i = 0; i < s->run[k].res; i++)
                        s->busy[s->run[k].machines[i]] = false;
                    free(s->run[k].id);
                    free(s->run[k].machines);
                    s->run[k] = s->run[--s->rn];
                    break;
                }
        } else if (*stamp == 'Z') {
            *end = true;
        }
    }
    size_t cap = 256, len = 0;
    char *o = malloc(cap);
    len = (size_t)snprintf(o, cap, "2:%s|%s:J:", now, now);
    size_t head = len, started = 0;
    uint32_t nfree = 0;
    for (uint32_t i = 0; i < s->nb_res; i++)
        nfree += !s->busy[i];
    while (started < s->qn && s->queue[started].res <= (long)nfree && s->queue[started].res > 0) {
        v2s_job j = s->queue[started++];
        j.machines = malloc((size_t)j.res * sizeof *j.machines);
        if (len + strlen(j.id) + (size_t)j.res * 12 + 8 > cap) {
            cap = (len + strlen(j.id) + (size_t)j.res * 12 + 8) * 2;
            o = realloc(o, cap);
        }
        len += (size_t)sprintf(o + len, "%s%s=", len > head ? ";" : "", j.id);
        for (long i = 0, id = 0; i < j.res; id++)
            if (!s->busy[id]) {
                s->busy[id] = true;
                j.machines[i] = (uint32_t)id;
                len += (size_t)sprintf(o + len, "%s%ld", i ? "," : "", id);
                i++;
            }
        nfree -= (uint32_t)j.res;
        push(&s->run, &s->rn, &s->rcap, j);
    }
    if (started) {
        memmove(s->queue, s->queue + started, (s->qn - started) * sizeof *s->queue);
        s->qn -= started;
    }
    if (!started)
        len = (size_t)snprintf(o, cap, "2:%s|%s:N", now, now);
    *out = o;
    return true;
}

/* The scripted reply to message m. */
static char *scripted(fbf_test_v2s *s, const char *m, bool *end)
{
    char now[64];
    msg_time(m, now, sizeof now);
    *end = strstr(m, ":Z") != NULL;
    size_t k = 0;
    while (s->script[k] && k < s->nmsg)
        k++;
    const char *t = s->script[k] ? s->script[k] : "2:$now|$now:N";
    char *out = malloc(strlen(t) * 4 + 256);
    size_t o = 0;
    for (const char *c = t; *c;) {
        if (strncmp(c, "$now", 4) == 0) {
            o += (size_t)sprintf(out + o, "%s", now);
            c += 4;
        } else {
            out[o++] = *c++;
        }
    }
    out[o] = '\0';
    return out;
}

static bool connect_to(fbf_test_v2s *s)
{
    for (int tries = 0; tries < 3000 && !atomic_load(&s->stop); tries++) {
        s->fd = socket(AF_UNIX, SOCK_STREAM, 0);
        struct sockaddr_un a = {.sun_family = AF_UNIX};
        snprintf(a.sun_path, sizeof a.sun_path, "%s", s->path);
        if (connect(s->fd, (struct sockaddr *)&a, sizeof a) == 0)
            return true;
        close(s->fd);
        s->fd = -1;
        usleep(10000);
    }
    return false;
}

static int serve(fbf_test_v2s *s)
{
    if (!connect_to(s))
        return fprintf(stderr, "v2_sched: cannot connect to %s\n", s->path), 1;
    if (!s->script) {
        s->rc = redisConnect("127.0.0.1", s->redis_port);
        if (!s->rc || s->rc->err)
            return fprintf(stderr, "v2_sched: no Redis on port %d\n", s->redis_port), 1;
    }
    for (;;) {
        char *m = recv_frame(s);
        if (!m)
            return 1;
        log_msg(s, m, strlen(m));
        bool end = false, ok = true;
        char *reply = NULL;
        if (s->script) {
            reply = scripted(s, m, &end);
        } else {
            ok = fcfs(s, m, &reply, &end);
        }
        s->nmsg++;
        free(m);
        if (!ok) {
            free(reply);
            send_frame(s, "X", 1); /* refused by the replayer: the run stops */
            return 1;
        }
        if (strcmp(reply, "@HUGE") == 0) {
            uint32_t huge = 0xfffffff0u;
            send(s->fd, &huge, 4, MSG_NOSIGNAL);
        } else {
            send_frame(s, reply, strlen(reply));
        }
        free(reply);
        if (end)
            return 0;
    }
}

static void cleanup(fbf_test_v2s *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->rc)
        redisFree(s->rc);
    for (size_t k = 0; k < s->qn; k++)
        free(s->queue[k].id);
    for (size_t k = 0; k < s->rn; k++) {
        free(s->run[k].id);
        free(s->run[k].machines);
    }
    free(s->queue);
    free(s->run);
    free(s->busy);
}

static void *thread_main(void *arg)
{
    fbf_test_v2s *s = arg;
    s->result = serve(s);
    return NULL;
}

static fbf_test_v2s *start(const char *path, int port, const char *const *script)
{
    fbf_test_v2s *s = calloc(1, sizeof *s);
    snprintf(s->path, sizeof s->path, "%s", path);
    s->redis_port = port;
    s->script = script;
    s->fd = -1;
    s->log = calloc(1, 1);
    s->log_cap = 1;
    s->threaded = pthread_create(&s->th, NULL, thread_main, s) == 0;
    return s;
}

fbf_test_v2s *fbf_test_v2s_fcfs(const char *socket_path, int redis_port)
{
    return start(socket_path, redis_port, NULL);
}

fbf_test_v2s *fbf_test_v2s_script(const char *socket_path, const char *const *replies)
{
    return start(socket_path, 0, replies);
}

char *fbf_test_v2s_stop(fbf_test_v2s *s)
{
    if (s->threaded) {
        /* The replayer has ended by now: its socket is closed, the reads
         * end; stop covers a scheduler that never connected. */
        atomic_store(&s->stop, true);
        pthread_join(s->th, NULL);
    }
    cleanup(s);
    char *log = s->log;
    free(s);
    return log;
}

int fbf_test_v2s_main(const char *socket_path, int redis_port)
{
    fbf_test_v2s s = {.redis_port = redis_port, .fd = -1};
    snprintf(s.path, sizeof s.path, "%s", socket_path);
    int rc = serve(&s);
    cleanup(&s);
    free(s.log);
    return rc;
}
