/*
 * flux_kit: driving fastbf's RFC 27 session (io/flux_session.h) in
 * process, message by message, for the conformance suites.
 *
 * A session is made over a key-value store in memory (io/flux_kvs.h)
 * that the test fills with jobspecs and reads R from. Each message sent
 * is built as its RFC 3 frames; what the session answers is read back as
 * text, one line per message, so that a test states a whole answer:
 *
 *     resp sched.alloc e=0 m=0 {"id":1,"type":0,...}
 *     req job-manager.sched-ready e=4294967295 m=2 {"mode":"unlimited"}
 *
 * ("e" is aux1: a response's errnum, a request's nodeid; payloads without
 * their trailing NUL; "-" for none.)
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_FLUX_KIT_H
#define FBF_TEST_FLUX_KIT_H

#include <stdbool.h>
#include <stdint.h>

#include "io/flux_kvs.h"
#include "io/flux_session.h"

typedef struct fbf_test_flux {
    fbf_flux_session *s;
    fbf_flux_kvs *kvs;
    FILE *warn;      /* the session's refusal lines, into a temporary file */
    char out[65536]; /* the last answer, as text */
    int rc;          /* the last receive's */
    bool may_fail;   /* a fatal error is the test's to check (err) */
    char err[256];
    uint32_t ranks, cores;
} fbf_test_flux;

/* A session of the named policy (fcfs, easy, conservative) on ranks x
 * cores, in the mode given; it must be made. */
void fbf_test_flux_open(fbf_test_flux *t, const char *policy, fbf_flux_mode mode,
                        uint32_t ranks, uint32_t cores);
void fbf_test_flux_close(fbf_test_flux *t);

/* cmocka setup and teardown, the fbf_test_flux given as the case's
 * prestate: an EASY session on 1 rank of 4 cores, unlimited mode. */
int fbf_test_flux_setup(void **state);
int fbf_test_flux_teardown(void **state);

/* Sends one message (payload NULL: none) and returns the answer's text
 * (t->out). */
const char *fbf_test_flux_send(fbf_test_flux *t, uint8_t type, uint8_t flags, uint32_t aux1,
                               uint32_t matchtag, const char *topic, const char *payload);
/* Sends raw frames. */
const char *fbf_test_flux_frames(fbf_test_flux *t, const void *const *data, const size_t *len,
                                 size_t n);

/* A request from the job manager (matchtag 0, nodeid any). */
const char *fbf_test_flux_req(fbf_test_flux *t, const char *topic, const char *payload);
/* Its sched.alloc of job id (priority 16, userid 5588), its sched.free. */
const char *fbf_test_flux_alloc(fbf_test_flux *t, uint64_t id);
const char *fbf_test_flux_free(fbf_test_flux *t, uint64_t id);
/* sim.instant {"now": now} with matchtag 7. */
const char *fbf_test_flux_instant(fbf_test_flux *t, double now);

/* attach, then hello answered with `held` ("[...]" entries; NULL: none),
 * then ready answered: the session must be ready. */
void fbf_test_flux_handshake(fbf_test_flux *t, const char *held);

/* Stores job id's jobspec: ncores one-core slots, duration seconds. */
void fbf_test_flux_jobspec(fbf_test_flux *t, uint64_t id, int64_t ncores, double duration);
/* Stores text at job.<id>.<name>. */
void fbf_test_flux_put(fbf_test_flux *t, uint64_t id, const char *name, const char *text);
/* The text at job.<id>.<name> (static buffer), or NULL. */
const char *fbf_test_flux_get(fbf_test_flux *t, uint64_t id, const char *name);

/* The refusal lines the session printed so far (static buffer). */
const char *fbf_test_flux_warned(fbf_test_flux *t);

/* The lines of t->out, one at a time: line i (0-based) into a static
 * buffer, or NULL. */
const char *fbf_test_flux_line(const fbf_test_flux *t, int i);
int fbf_test_flux_nlines(const fbf_test_flux *t);

#endif
