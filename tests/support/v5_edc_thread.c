/*
 * v5_edc_thread: the tests' Batsim 5 EDC (v5_edc.h) as a process would
 * serve it: a ZeroMQ REP socket, the init message first ([u32 size][init
 * data], answered with the hello), then one reply per message; in a
 * thread of the test, or as the whole of a test binary run as an EDC.
 *
 * Invariant: only the serving thread touches the socket and the core; the
 * test thread sets stop and joins.
 */
#define _GNU_SOURCE /* memmem */
#include "support/v5_edc.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

struct fbf_test_v5edc_thread {
    fbf_test_v5edc *edc;
    void *ctx, *sock;
    pthread_t th;
    atomic_bool stop;
    char *log;
    size_t log_len, log_cap;
};

static void log_add(fbf_test_v5edc_thread *t, const char *pre, const char *p, size_t n,
                    bool nul)
{
    size_t pl = strlen(pre), need = t->log_len + pl + n + 8;
    if (need > t->log_cap) {
        size_t c = t->log_cap ? t->log_cap : 4096;
        while (c < need)
            c *= 2;
        char *q = realloc(t->log, c);
        if (!q)
            return;
        t->log = q;
        t->log_cap = c;
    }
    memcpy(t->log + t->log_len, pre, pl);
    t->log_len += pl;
    for (size_t i = 0; i < n; i++) /* one line per message */
        t->log[t->log_len++] = p[i] == '\n' || p[i] == '\0' ? ' ' : p[i];
    if (nul) {
        memcpy(t->log + t->log_len, "<NUL>", 5);
        t->log_len += 5;
    }
    t->log[t->log_len++] = '\n';
    t->log[t->log_len] = '\0';
}

/* Serves until the reply to SimulationEndsEvent, or stop. */
static void serve(fbf_test_v5edc_thread *t)
{
    bool hello = false, end = false;
    while (!end && !atomic_load(&t->stop)) {
        zmq_msg_t m;
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, t->sock, 0) < 0) {
            zmq_msg_close(&m);
            continue;
        }
        const char *p = zmq_msg_data(&m);
        size_t n = zmq_msg_size(&m);
        char *reply;
        size_t rlen = 0;
        if (!hello) {
            hello = true;
            log_add(t, "init:", n >= 4 ? p + 4 : p, n >= 4 ? n - 4 : 0, false);
            reply = fbf_test_v5edc_hello(t->edc, &rlen);
        } else {
            bool nul = n && p[n - 1] == '\0';
            log_add(t, "", p, nul ? n - 1 : n, nul);
            end = memmem(p, n, "\"SimulationEndsEvent\"", 21) != NULL;
            reply = fbf_test_v5edc_decide(t->edc, p, n);
            rlen = reply ? strlen(reply) : 0;
        }
        zmq_msg_close(&m);
        if (!reply) { /* silent from now on */
            while (!atomic_load(&t->stop))
                usleep(10000);
            break;
        }
        zmq_send(t->sock, reply, rlen, 0);
        free(reply);
    }
}

static void *thread_main(void *arg)
{
    serve(arg);
    return NULL;
}

static fbf_test_v5edc_thread *open_edc(const char *const *script, const char *bind_to)
{
    fbf_test_v5edc_thread *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->edc = fbf_test_v5edc_new(script);
    t->ctx = zmq_ctx_new();
    t->sock = zmq_socket(t->ctx, ZMQ_REP);
    int linger = 0, to = 50;
    zmq_setsockopt(t->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(t->sock, ZMQ_RCVTIMEO, &to, sizeof to);
    if (!t->edc || zmq_bind(t->sock, bind_to) != 0) {
        zmq_close(t->sock);
        zmq_ctx_term(t->ctx);
        fbf_test_v5edc_free(t->edc);
        free(t);
        return NULL;
    }
    return t;
}

static char *close_edc(fbf_test_v5edc_thread *t)
{
    zmq_close(t->sock);
    zmq_ctx_term(t->ctx);
    fbf_test_v5edc_free(t->edc);
    char *log = t->log ? t->log : strdup("");
    free(t);
    return log;
}

fbf_test_v5edc_thread *fbf_test_v5edc_thread_start(const char *const *script, char *endpoint,
                                                   size_t cap)
{
    fbf_test_v5edc_thread *t = open_edc(script, "tcp://127.0.0.1:*");
    if (!t)
        return NULL;
    if (zmq_getsockopt(t->sock, ZMQ_LAST_ENDPOINT, endpoint, &cap) != 0 ||
        pthread_create(&t->th, NULL, thread_main, t) != 0) {
        free(close_edc(t));
        return NULL;
    }
    return t;
}

char *fbf_test_v5edc_thread_stop(fbf_test_v5edc_thread *t)
{
    atomic_store(&t->stop, true);
    pthread_join(t->th, NULL);
    return close_edc(t);
}

int fbf_test_v5edc_serve(const char *endpoint)
{
    fbf_test_v5edc_thread *t = open_edc(NULL, endpoint);
    if (!t)
        return fprintf(stderr, "v5_edc: cannot bind %s\n", endpoint), 1;
    serve(t);
    int linger = 2000; /* the last reply must leave before the socket closes */
    zmq_setsockopt(t->sock, ZMQ_LINGER, &linger, sizeof linger);
    free(close_edc(t));
    return 0;
}
