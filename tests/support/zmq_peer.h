/*
 * zmq_peer: a test helper that plays Batsim against a real fastbf process.
 *
 * fbf_test_peer_start() runs build/fastbf (FBF_BUILD_DIR from the
 * environment, else the compile-time macro) as a child process with the
 * given arguments, its stdout and stderr captured to temporary files. When
 * asked to, it first picks a free TCP port on 127.0.0.1 (by binding port
 * 0), appends "--endpoint tcp://127.0.0.1:PORT" to the arguments, waits
 * until fastbf listens there (read from /proc/net/tcp, so that fastbf sees
 * no connection but the test's; retried on another port if fastbf could
 * not bind) and connects a ZeroMQ REQ socket to it. fbf_test_peer_request() sends one
 * request and waits for the reply up to a timeout (ZMQ_RCVTIMEO).
 * fbf_test_peer_wait() waits for the child's exit with a timeout and kills
 * it (SIGKILL) if it lingers. fbf_test_peer_stop() releases everything
 * (killing the child if still alive, removing the temporary files).
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is linked
 * into every test.
 */
#ifndef FBF_TEST_ZMQ_PEER_H
#define FBF_TEST_ZMQ_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct fbf_test_peer {
    pid_t pid;             /* child, or -1 once reaped */
    int port;              /* 0 unless connected */
    char endpoint[64];     /* tcp://127.0.0.1:PORT */
    char out_path[64];     /* captured stdout */
    char err_path[64];     /* captured stderr */
    void *zctx, *sock;     /* REQ socket, NULL unless connected */
    bool exited;           /* status below is valid */
    int status;            /* raw waitpid status */
} fbf_test_peer;

/* Path of the fastbf binary under test (static storage). */
const char *fbf_test_fastbf_path(void);

/* A TCP port that was free on 127.0.0.1 a moment ago, or -1. */
int fbf_test_free_port(void);

/* Starts fastbf with args (argv[1..], NULL-terminated, may be NULL). With
 * connect, a free port's endpoint is appended and a REQ socket connected.
 * Returns 0 or a negative errno. */
int fbf_test_peer_start(fbf_test_peer *p, const char *const *args, bool connect);

/* As fbf_test_peer_start(p, args, true), but fastbf binds tcp://HOST:PORT
 * (e.g. 0.0.0.0 with --allow-remote); the test still connects through
 * 127.0.0.1. */
int fbf_test_peer_start_on(fbf_test_peer *p, const char *const *args, const char *host);

/* Sends req, receives the reply into a malloc'ed NUL-terminated string
 * (*reply, caller frees). Returns the reply length, -EAGAIN on timeout,
 * or another negative errno. */
long fbf_test_peer_request(fbf_test_peer *p, const char *req, char **reply, int timeout_ms);

/* Sends the n frames of one message on a REQ socket (a multipart message
 * when n > 1) and receives the one-frame reply into a malloc'ed
 * NUL-terminated string (*reply, caller frees). Returns the reply length,
 * -EAGAIN on timeout (the socket cannot send again then), -EPROTO for a
 * reply of several frames, or another negative errno. */
long fbf_test_zmq_request(void *sock, const char *const *frames, size_t n, char **reply,
                          int timeout_ms);

/* The same from a REQ socket of its own, connected to endpoint for this
 * one request, as another peer would. */
long fbf_test_zmq_ask(const char *endpoint, const char *const *frames, size_t n, char **reply,
                      int timeout_ms);

/* Sends req without waiting for any reply. 0 or a negative errno. */
int fbf_test_peer_send(fbf_test_peer *p, const char *req);

/* Waits for the child to exit. Returns its exit code (0..255), 128 + signal
 * if a signal ended it, or -ETIMEDOUT if it was still alive after
 * timeout_ms (it is then killed and reaped). */
int fbf_test_peer_wait(fbf_test_peer *p, int timeout_ms);

/* The captured stdout / stderr so far, malloc'ed (caller frees). */
char *fbf_test_peer_stdout(const fbf_test_peer *p);
/* fastbf's stderr so far, without the line saying where it listens;
 * _all: with it. malloc'ed. */
char *fbf_test_peer_stderr(const fbf_test_peer *p);
char *fbf_test_peer_stderr_all(const fbf_test_peer *p);

/* Closes the REQ socket (the peer disconnects) but keeps the child. */
void fbf_test_peer_disconnect(fbf_test_peer *p);

/* Kills the child if alive, closes the socket, removes the temp files. */
void fbf_test_peer_stop(fbf_test_peer *p);

/* Runs fastbf with args to completion (no socket): exit code as in
 * fbf_test_peer_wait(), outputs malloc'ed into *out / *err when not NULL. */
int fbf_test_run_fastbf(const char *const *args, int timeout_ms, char **out, char **err);

/* Number of lines of s (a last line without '\n' counts). */
int fbf_test_count_lines(const char *s);

#endif
