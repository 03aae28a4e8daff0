/*
 * bv4_bad_cases: Batsim v4 messages fastbf must refuse, each with the
 * state it is sent in and the one-line error it must give (bv4_session.h,
 * bv4_decode.h): test_bv4_errors sends them to the session in process,
 * test_bv4_hostile to a real fastbf process over its socket.
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_BV4_BAD_CASES_H
#define FBF_TEST_BV4_BAD_CASES_H

#include <stddef.h>

/* The state a case is sent in: L_FRESH nothing yet; L_BEGUN after a
 * 4-resource SIMULATION_BEGINS; L_JOBS then, at now 10, w0!1 (res 2)
 * running on 0-1 and w0!2 (res 4) waiting. */
enum { L_FRESH, L_BEGUN, L_JOBS };

typedef struct fbf_test_bad_case {
    int level;
    const char *msg;  /* ' stands for " (fbf_test_msg) */
    const char *want; /* the exact error, or with a trailing '*', a prefix */
} fbf_test_bad_case;

/* Message text builders of the cases (short names: they nest on every
 * line; only the files that use the cases include this header). */
#define EV(ts, type, data) "{'timestamp':" #ts ",'type':'" type "','data':" data "}"
#define MSG(now, evs) "{'now':" #now ",'events':[" evs "]}"
#define JOB(id, extra) "{'job_id':'" id "','job':{'id':'" id "','subtime':11" extra "}}"

extern const fbf_test_bad_case fbf_test_bv4_bad_cases[];
extern const size_t fbf_test_bv4_nb_bad_cases;

#endif
