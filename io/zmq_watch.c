/*
 * zmq_watch: the connection watcher of the ZeroMQ server (zmq_watch.h).
 */
#include "io/zmq_watch.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

enum { NOTE_PIN = 'p', NOTE_STOP = 's' };

#define HANDSHAKE_FAILED                                                                      \
    (ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |             \
     ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)

/* Reads one pending monitor event without waiting: its number (0: none)
 * and value (the connection's descriptor for ACCEPTED and DISCONNECTED). */
static uint16_t read_event(void *mon, int32_t *value)
{
    zmq_msg_t m;
    zmq_msg_init(&m);
    uint16_t ev = 0;
    if (zmq_msg_recv(&m, mon, ZMQ_DONTWAIT) >= 6) {
        memcpy(&ev, zmq_msg_data(&m), sizeof ev);
        memcpy(value, (const char *)zmq_msg_data(&m) + sizeof ev, sizeof *value);
    }
    while (zmq_msg_more(&m) && zmq_msg_recv(&m, mon, 0) >= 0) {
    }
    zmq_msg_close(&m);
    return ev;
}

static bool fd_open(const fbf_zmq_watch *w, int fd)
{
    for (size_t i = 0; i < w->nfds; i++)
        if (w->fds[i] == fd)
            return true;
    return false;
}

static void fd_add(fbf_zmq_watch *w, int fd)
{
    if (w->nfds == w->capfds) {
        size_t cap = w->capfds ? w->capfds * 2 : 16;
        int *n = realloc(w->fds, cap * sizeof *n);
        if (!n) {
            w->fds_incomplete = true;
            return;
        }
        w->fds = n;
        w->capfds = cap;
    }
    w->fds[w->nfds++] = fd;
}

static void fd_remove(fbf_zmq_watch *w, int fd)
{
    for (size_t i = 0; i < w->nfds; i++)
        if (w->fds[i] == fd) {
            w->fds[i] = w->fds[--w->nfds];
            return;
        }
}

/* Applies every pending monitor event; true when the pinned peer is gone. */
static bool drain_events(fbf_zmq_watch *w, bool *handshake_failed)
{
    int32_t fd = -1;
    for (uint16_t ev; (ev = read_event(w->mon, &fd)) != 0;) {
        if (ev & HANDSHAKE_FAILED) {
            *handshake_failed = true;
        } else if (ev == ZMQ_EVENT_ACCEPTED) {
            fd_add(w, fd);
            w->accepts++;
        } else if (ev == ZMQ_EVENT_DISCONNECTED) {
            fd_remove(w, fd);
            w->accepts = 0;
            if (fd == atomic_load(&w->pinned_fd))
                return true;
            if (!*handshake_failed)
                fprintf(w->warn,
                        "fastbf: a peer that is not the session's disconnected (connection "
                        "fd %d); ZeroMQ also ends a connection whose message it cannot take "
                        "unread: above --max-message %zu bytes, or more than this process can "
                        "allocate\n",
                        (int)fd, w->max_message);
            *handshake_failed = false;
        }
    }
    return false;
}

static double mono_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The pinned connection closed: did its peer leave, or did ZeroMQ end the
 * connection under a peer that reconnects? Waits for a new connection for
 * at most FBF_ZMQ_WATCH_GRACE_MS, or a stop from the I/O thread. */
static fbf_zmq_watch_loss why_closed(fbf_zmq_watch *w)
{
    size_t seen = w->accepts;
    w->accepts = 0;
    if (seen > 0)
        return FBF_ZMQ_WATCH_DROPPED;
    double end = mono_ms() + FBF_ZMQ_WATCH_GRACE_MS;
    for (double left; (left = end - mono_ms()) > 0;) {
        zmq_pollitem_t it[2] = {{w->mon, 0, ZMQ_POLLIN, 0}, {w->stop_rx, 0, ZMQ_POLLIN, 0}};
        int n = zmq_poll(it, 2, (long)left + 1);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (it[1].revents & ZMQ_POLLIN))
            break; /* the session is ending anyway: no need to know */
        int32_t fd = -1;
        for (uint16_t ev; (ev = read_event(w->mon, &fd)) != 0;)
            if (ev == ZMQ_EVENT_ACCEPTED)
                return FBF_ZMQ_WATCH_DROPPED;
    }
    return FBF_ZMQ_WATCH_LEFT;
}

static void *watch_main(void *arg)
{
    fbf_zmq_watch *w = arg;
    bool handshake_failed = false;
    for (;;) {
        zmq_pollitem_t it[2] = {{w->mon, 0, ZMQ_POLLIN, 0}, {w->stop_rx, 0, ZMQ_POLLIN, 0}};
        if (zmq_poll(it, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break; /* ETERM: the context is going away */
        }
        bool stop = false, pinned_now = false;
        if (it[1].revents & ZMQ_POLLIN) {
            char note = 0;
            if (zmq_recv(w->stop_rx, &note, 1, ZMQ_DONTWAIT) >= 1) {
                stop = note == NOTE_STOP;
                pinned_now = note == NOTE_PIN;
            }
        }
        if (stop)
            break;
        bool gone = drain_events(w, &handshake_failed);
        /* The pinned connection may have closed before the I/O thread read
         * its first message, and so before the pin: it is then no longer
         * in the set (unless the set missed connections for want of
         * memory; its own disconnection still counts then). */
        int pinned = atomic_load(&w->pinned_fd);
        if (pinned_now && pinned >= 0 && !w->fds_incomplete && !fd_open(w, pinned))
            gone = true;
        if (gone) {
            atomic_store(&w->lost, (int)why_closed(w));
            zmq_ctx_shutdown(w->ctx);
            break;
        }
    }
    zmq_close(w->mon);
    zmq_close(w->stop_rx);
    return NULL;
}

int fbf_zmq_watch_start(fbf_zmq_watch *w, void *ctx, void *sock, FILE *warn,
                        size_t max_message, fbf_error *err)
{
    *w = (fbf_zmq_watch){.ctx = ctx, .warn = warn, .max_message = max_message};
    atomic_init(&w->pinned_fd, -1);
    atomic_init(&w->lost, FBF_ZMQ_WATCH_HELD);
    w->capfds = 16;
    if (!(w->fds = malloc(w->capfds * sizeof *w->fds)))
        return fbf_errorf(err, -ENOMEM, "out of memory watching the peer's connection");
    char mon_ep[64], stop_ep[64];
    snprintf(mon_ep, sizeof mon_ep, "inproc://fbf-monitor-%p", (void *)sock);
    snprintf(stop_ep, sizeof stop_ep, "inproc://fbf-stop-%p", (void *)sock);
    if (zmq_socket_monitor(sock, mon_ep,
                           ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_DISCONNECTED | HANDSHAKE_FAILED) != 0) {
        int e = errno;
        free(w->fds);
        w->fds = NULL;
        return fbf_errorf(err, -e, "cannot watch the peer's connection: %s", zmq_strerror(e));
    }
    w->mon = zmq_socket(ctx, ZMQ_PAIR);
    w->stop_tx = zmq_socket(ctx, ZMQ_PAIR);
    w->stop_rx = zmq_socket(ctx, ZMQ_PAIR);
    int rc = 0;
    if (!w->mon || !w->stop_tx || !w->stop_rx || zmq_connect(w->mon, mon_ep) != 0 ||
        zmq_bind(w->stop_tx, stop_ep) != 0 || zmq_connect(w->stop_rx, stop_ep) != 0)
        rc = fbf_errorf(err, -errno, "cannot watch the peer's connection: %s",
                        zmq_strerror(errno));
    else if ((rc = pthread_create(&w->thread, NULL, watch_main, w)) != 0)
        rc = fbf_errorf(err, -rc, "cannot start the thread that watches the peer's connection: "
                        "%s", strerror(rc));
    if (rc == 0) {
        w->running = true;
        return 0;
    }
    zmq_socket_monitor(sock, NULL, 0);
    void *const made[] = {w->mon, w->stop_tx, w->stop_rx};
    for (size_t i = 0; i < sizeof made / sizeof *made; i++)
        if (made[i])
            zmq_close(made[i]);
    free(w->fds);
    w->fds = NULL;
    return rc;
}

void fbf_zmq_watch_pin(fbf_zmq_watch *w, int fd)
{
    if (!w->running)
        return;
    atomic_store(&w->pinned_fd, fd);
    char note = NOTE_PIN;
    zmq_send(w->stop_tx, &note, 1, ZMQ_DONTWAIT); /* fails with ETERM once shut down */
}

fbf_zmq_watch_loss fbf_zmq_watch_lost(fbf_zmq_watch *w)
{
    return (fbf_zmq_watch_loss)atomic_load(&w->lost);
}

void fbf_zmq_watch_stop(fbf_zmq_watch *w, void *sock)
{
    if (!w->running)
        return;
    zmq_socket_monitor(sock, NULL, 0);
    char note = NOTE_STOP;
    zmq_send(w->stop_tx, &note, 1, ZMQ_DONTWAIT);
    pthread_join(w->thread, NULL);
    zmq_close(w->stop_tx);
    free(w->fds);
    w->fds = NULL;
    w->running = false;
}
