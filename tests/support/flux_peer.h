/*
 * flux_peer: a job manager's DEALER socket against a real fastbf
 * --protocol flux process, for the socket-level suites.
 *
 * fbf_test_flux_peer_start() runs fastbf (support/zmq_peer) with the
 * given arguments plus --protocol flux and an ipc:// endpoint in a fresh
 * temporary folder, and connects a DEALER to it (ZeroMQ waits for the
 * bind). Messages go as RFC 3 frames; one received message is rendered
 * as support/flux_kit renders an answer line ("resp sched.alloc e=0 m=0
 * {...}\n").
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_FLUX_PEER_H
#define FBF_TEST_FLUX_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/zmq_peer.h"

typedef struct fbf_test_flux_peer {
    fbf_test_peer proc;
    char dir[64];
    char endpoint[128];
    void *ctx, *sock;
} fbf_test_flux_peer;

/* 0, or -1 with why on stderr. args: fastbf's, NULL-terminated. */
int fbf_test_flux_peer_start(fbf_test_flux_peer *p, const char *const *args);
void fbf_test_flux_peer_stop(fbf_test_flux_peer *p);

/* Another DEALER on the same endpoint (the caller closes it with
 * fbf_test_flux_sock_close). */
void *fbf_test_flux_peer_another(fbf_test_flux_peer *p);
void fbf_test_flux_sock_close(void *sock);

/* Sends frames on sock (a DEALER). 0 or -errno. */
int fbf_test_flux_sock_frames(void *sock, const void *const *data, const size_t *len, size_t n);
int fbf_test_flux_sock_send(void *sock, uint8_t type, uint8_t flags, uint32_t aux1,
                            uint32_t matchtag, const char *topic, const char *payload);
/* Receives one message within timeout_ms into line (cap bytes), rendered
 * as flux_kit does. 0, -EAGAIN on timeout, -errno. */
int fbf_test_flux_sock_recv(void *sock, char *line, size_t cap, int timeout_ms);

#endif
