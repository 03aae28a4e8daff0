/*
 * replay_sched: test helpers for fastbf-replay.
 *
 * fbf_test_rsched_*: a small scheduler in a thread of the test, behind a
 * ZeroMQ REP socket bound to a free port on 127.0.0.1. Without a fault it
 * is a plain FCFS (lowest free resources first); with one it breaks the
 * protocol in exactly one way at the first opportunity, so each of the
 * replayer's checks can be shown to fire. It records every message it
 * receives, for tests of what the replayer sends.
 *
 * fbf_test_replay_against(): fastbf-replay (support/replay_run.h) run
 * against such a scheduler.
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is linked
 * into every test.
 */
#ifndef FBF_TEST_REPLAY_SCHED_H
#define FBF_TEST_REPLAY_SCHED_H

#include <stddef.h>

#include "support/replay_run.h"

typedef enum fbf_test_rfault {
    FBF_TRF_NONE = 0,       /* a correct FCFS */
    FBF_TRF_UNKNOWN_JOB,    /* EXECUTE_JOB of "w0!nope" */
    FBF_TRF_WRONG_RES,      /* one resource more than requested */
    FBF_TRF_OUT_OF_RANGE,   /* the highest resource is nb_res */
    FBF_TRF_BUSY,           /* every job on the lowest resources, busy or not */
    FBF_TRF_TWICE,          /* EXECUTE_JOB of the same job twice in one reply */
    FBF_TRF_NOW_BEFORE,     /* reply now = request now - 1 */
    FBF_TRF_MALFORMED,      /* a truncated JSON text */
    FBF_TRF_DESCENDING,     /* two events whose timestamps decrease */
    FBF_TRF_REJECT_RUNNING, /* EXECUTE_JOB then REJECT_JOB of the same job */
    FBF_TRF_CALL_PAST,      /* CALL_ME_LATER(now - 1) */
    FBF_TRF_SILENT,         /* never replies after SIMULATION_BEGINS */
    FBF_TRF_IDLE,           /* replies without events: nothing ever starts */
    FBF_TRF_UNKNOWN_TYPE,   /* an event of type "LAUNCH_ROCKET" */
    FBF_TRF_NOT_SUBMITTED,  /* EXECUTE_JOB of "w0!2" before it was submitted */
    FBF_TRF_ENDS_EVENTS,    /* an event in the reply to SIMULATION_ENDS */
    FBF_TRF_KILL,           /* FCFS, and KILL_JOB of every running job when a job arrives */
    FBF_TRF_CALL_LATER,     /* FCFS, plus CALL_ME_LATER(now + 5) and (now + 1e-6) on each submission */
    FBF_TRF_NO_NOW,         /* a reply without "now" */
    FBF_TRF_BAD_ALLOC,      /* alloc "0-" */
    FBF_TRF_CANCEL_WAITING, /* FCFS, then CHANGE_JOB_STATE COMPLETED_KILLED of every job left
                             waiting (Batsim 4.2.1 aborts on it) */
    FBF_TRF_CHANGE_RUNNING, /* FCFS, then CHANGE_JOB_STATE of a running job */
    FBF_TRF_SET_STATE,      /* SET_RESOURCE_STATE, which the replayer does not simulate */
    FBF_TRF_REGISTER,       /* REGISTER_JOB of "dyn!1" with no job description */
    FBF_TRF_INJECT,         /* FCFS, plus the events given to fbf_test_rsched_inject() */
    FBF_TRF_SET_BUSY,       /* FCFS, then SET_RESOURCE_STATE of machine 0 while it runs a job */
    FBF_TRF_SLOW,           /* FCFS, and each reply without events says now + 3 */
    FBF_TRF_SCRIPT,         /* fixed replies (fbf_test_rsched_script) */
} fbf_test_rfault;

typedef struct fbf_test_rsched fbf_test_rsched;

/* Starts the scheduler thread; its endpoint is written into endpoint. */
fbf_test_rsched *fbf_test_rsched_start(fbf_test_rfault fault, char *endpoint, size_t cap);

/* FBF_TRF_INJECT: events, a JSON array text (single quotes allowed, as in
 * fbf_test_msg), is added, each event stamped now, at the start of the
 * reply to the first message with a submission. */
fbf_test_rsched *fbf_test_rsched_inject(const char *events, char *endpoint, size_t cap);

/* FBF_TRF_SCRIPT: the k-th message (SIMULATION_BEGINS is 0) gets
 * replies[k] (NULL-terminated list; single quotes stand for double ones,
 * and $now for that message's now exactly as it was printed); messages
 * past the list get an empty reply at their now. */
fbf_test_rsched *fbf_test_rsched_script(const char *const *replies, char *endpoint, size_t cap);

/* Stops the thread and returns every message it received, one per line,
 * malloc'ed (caller frees). */
char *fbf_test_rsched_stop(fbf_test_rsched *s);

/* fbf_test_replay_run() with "--endpoint EP" of a fresh
 * fbf_test_rsched_start(fault) before args; the scheduler is stopped
 * afterwards. -1 (and *err unset) if the scheduler could not start. */
int fbf_test_replay_against(fbf_test_rfault fault, const char *const *args, int timeout_ms,
                            char **out, char **err);

#endif
