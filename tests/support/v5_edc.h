/*
 * v5_edc: a Batsim 5 External Decision Component for the tests, written
 * from the batprotocol's text (JSON format) and nothing of fastbf's:
 *
 *   fbf_test_v5edc_*        the decision core, with no I/O: a hello, then
 *                           one reply per message. Without a script it is
 *                           an FCFS (queue order, the lowest free hosts,
 *                           nothing starts past a job that does not fit).
 *                           A script replaces the hello and the replies to
 *                           the first messages (see fbf_test_v5edc_new).
 *   fbf_test_v5edc_thread_* the core behind a ZeroMQ REP socket bound to a
 *                           free port of 127.0.0.1, in a thread of the
 *                           test, which records every message it gets.
 *
 * The core is also compiled into the test EDC library (tests/edc/), so it
 * uses cJSON and libc only. Every symbol is prefixed fbf_test_ since every
 * tests/support C file is linked into every test.
 */
#ifndef FBF_TEST_V5_EDC_H
#define FBF_TEST_V5_EDC_H

#include <stddef.h>
#include <stdint.h>

typedef struct fbf_test_v5edc fbf_test_v5edc;

/* A fresh EDC. script (NULL: none) is a NULL-terminated list: script[0]
 * replaces the hello ("" keeps the usual one; "!flags=N:TEXT" answers
 * flags N then TEXT; "!raw:TEXT" answers TEXT alone, without flags);
 * script[k] (k >= 1) replaces the reply to the k-th message after the
 * hello (1: the one holding SimulationBeginsEvent); past the script, the
 * FCFS answers. In script texts ' stands for ", $now for the message's
 * now as it was written, $job for the id of the first job it submits.
 * A reply "!silent" is never sent. NULL when out of memory. */
fbf_test_v5edc *fbf_test_v5edc_new(const char *const *script);
void fbf_test_v5edc_free(fbf_test_v5edc *e);

/* The answer to the init message: the bytes to send (malloc'ed, *len
 * set), flags included unless the script says "!raw:". */
char *fbf_test_v5edc_hello(fbf_test_v5edc *e, size_t *len);
/* The hello's flags and message apart, for the library C API: flags, and
 * the message text (malloc'ed). */
char *fbf_test_v5edc_hello_parts(fbf_test_v5edc *e, uint32_t *flags);

/* The reply to msg (len bytes, a trailing NUL allowed), malloc'ed and
 * NUL-terminated; NULL for "!silent". */
char *fbf_test_v5edc_decide(fbf_test_v5edc *e, const char *msg, size_t len);

typedef struct fbf_test_v5edc_thread fbf_test_v5edc_thread;

/* Starts the EDC thread (script as above); its endpoint goes to endpoint. */
fbf_test_v5edc_thread *fbf_test_v5edc_thread_start(const char *const *script, char *endpoint,
                                                   size_t cap);
/* Stops it; returns every message it got, one per line, the init message
 * as "init:<data>", a message whose last byte was a NUL marked "<NUL>" at
 * its end (malloc'ed). */
char *fbf_test_v5edc_thread_stop(fbf_test_v5edc_thread *t);

/* Serves one EDC on endpoint (bound) until SimulationEndsEvent is
 * answered: for a test binary run as an EDC process. 0 or 1. */
int fbf_test_v5edc_serve(const char *endpoint);

#endif
