/*
 * flux_peer: a DEALER against a real fastbf --protocol flux (flux_peer.h).
 */
#include "support/flux_peer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "io/flux_msg.h"
#include "support/testkit.h"

static void *dealer(void *ctx, const char *endpoint)
{
    void *s = zmq_socket(ctx, ZMQ_DEALER);
    int linger = 0;
    if (s) {
        zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof linger);
        if (zmq_connect(s, endpoint) != 0) {
            zmq_close(s);
            s = NULL;
        }
    }
    return s;
}

int fbf_test_flux_peer_start(fbf_test_flux_peer *p, const char *const *args)
{
    memset(p, 0, sizeof *p);
    fbf_test_temp_name(p->dir, sizeof p->dir, "/tmp/fbf-flux-");
    if (!mkdtemp(p->dir)) {
        fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    snprintf(p->endpoint, sizeof p->endpoint, "ipc://%s/s", p->dir);
    const char *all[48];
    size_t n = 0;
    all[n++] = "--protocol";
    all[n++] = "flux";
    for (size_t i = 0; args && args[i] && n < 44; i++)
        all[n++] = args[i];
    all[n++] = "--endpoint";
    all[n++] = p->endpoint;
    all[n] = NULL;
    if (fbf_test_peer_start(&p->proc, all, false) != 0) {
        fprintf(stderr, "fastbf did not start\n");
        return -1;
    }
    p->ctx = zmq_ctx_new();
    p->sock = p->ctx ? dealer(p->ctx, p->endpoint) : NULL;
    return p->sock ? 0 : -1;
}

void *fbf_test_flux_peer_another(fbf_test_flux_peer *p) { return dealer(p->ctx, p->endpoint); }

void fbf_test_flux_sock_close(void *sock)
{
    if (sock)
        zmq_close(sock);
}

void fbf_test_flux_peer_stop(fbf_test_flux_peer *p)
{
    fbf_test_flux_sock_close(p->sock);
    p->sock = NULL;
    if (p->ctx)
        zmq_ctx_term(p->ctx);
    p->ctx = NULL;
    fbf_test_peer_stop(&p->proc);
    char path[128];
    snprintf(path, sizeof path, "%s/s", p->dir);
    unlink(path);
    rmdir(p->dir);
}

int fbf_test_flux_sock_frames(void *sock, const void *const *data, const size_t *len, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zmq_send(sock, data[i], len[i], i + 1 < n ? ZMQ_SNDMORE : 0) < 0)
            return -errno;
    return 0;
}

int fbf_test_flux_sock_send(void *sock, uint8_t type, uint8_t flags, uint32_t aux1,
                            uint32_t matchtag, const char *topic, const char *payload)
{
    fbf_flux_msg m = {.type = type,
                      .flags = flags,
                      .aux1 = aux1,
                      .matchtag = matchtag,
                      .topic = topic,
                      .topic_len = topic ? strlen(topic) : 0,
                      .payload = payload,
                      .payload_len = payload ? strlen(payload) + 1 : 0};
    m.flags = fbf_flux_msg_flags(&m);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&m, proto);
    const void *data[3];
    size_t len[3], n = 0;
    if (topic) {
        data[n] = topic;
        len[n++] = m.topic_len;
    }
    if (payload) {
        data[n] = payload;
        len[n++] = m.payload_len;
    }
    data[n] = proto;
    len[n++] = sizeof proto;
    return fbf_test_flux_sock_frames(sock, data, len, n);
}

int fbf_test_flux_sock_recv(void *sock, char *line, size_t cap, int timeout_ms)
{
    zmq_pollitem_t it = {.socket = sock, .events = ZMQ_POLLIN};
    int r = zmq_poll(&it, 1, timeout_ms);
    if (r < 0)
        return -errno;
    if (r == 0)
        return -EAGAIN;
    zmq_msg_t f[4];
    size_t nf = 0;
    for (;;) {
        zmq_msg_t tmp;
        zmq_msg_init(&tmp);
        if (zmq_msg_recv(&tmp, sock, 0) < 0) {
            zmq_msg_close(&tmp);
            for (size_t i = 0; i < nf; i++)
                zmq_msg_close(&f[i]);
            return -errno;
        }
        bool more = zmq_msg_more(&tmp);
        if (nf < 4) {
            zmq_msg_init(&f[nf]);
            zmq_msg_move(&f[nf++], &tmp);
        }
        zmq_msg_close(&tmp);
        if (!more)
            break;
    }
    const void *data[4];
    size_t len[4];
    for (size_t i = 0; i < nf; i++) {
        data[i] = zmq_msg_data(&f[i]);
        len[i] = zmq_msg_size(&f[i]);
    }
    fbf_flux_msg m;
    fbf_error err;
    int rc = 0;
    if (fbf_flux_msg_decode(&m, data, len, nf, &err) < 0) {
        snprintf(line, cap, "undecodable: %s\n", err.text);
    } else {
        size_t pl = m.payload ? m.payload_len : 0;
        if (pl && m.payload[pl - 1] == '\0')
            pl--;
        snprintf(line, cap, "%s %.*s e=%u m=%u %.*s\n",
                 m.type == 0x01 ? "req" : m.type == 0x02 ? "resp" : "?", (int)m.topic_len,
                 m.topic ? m.topic : "", m.aux1, m.matchtag, m.payload ? (int)pl : 1,
                 m.payload ? m.payload : "-");
    }
    for (size_t i = 0; i < nf; i++)
        zmq_msg_close(&f[i]);
    return rc;
}
