/*
 * child: the scheduler process a transport starts (--scheduler CMD), shared
 * by the ZeroMQ and the Unix-socket transports.
 *
 *   fbf_child_spawn()   "/bin/sh -c cmd" in its own process group, its
 *                       stdout sent to our stderr (the summary on stdout
 *                       stays clean); SIGINT/SIGTERM/SIGHUP of the replayer
 *                       take that group down with it, and so does the
 *                       replayer's death by any means (SIGKILL too): the
 *                       group's leader is a guard process that waits for
 *                       the shell, ends as it did, and kills the group
 *                       when the kernel tells it the replayer died
 *                       (PR_SET_PDEATHSIG). Call it from the main thread:
 *                       that signal comes when the forking thread ends
 *   fbf_child_gone()    reaps it when it has exited (status kept)
 *   fbf_child_exited()  true once it has exited, leaving it waitable
 *                       (WNOWAIT), so that another thread may look (false
 *                       once reaped)
 *   fbf_child_finish()  after the last reply: it must exit, status 0,
 *                       within FBF_CHILD_FINISH_S
 *   fbf_child_kill()    SIGTERM to the group, then SIGKILL
 *
 * Invariant: only the process group of a child this module started is
 * ever signalled. pid is the guard's, which is also the group's id. The one piece of shared state is the group id the
 * signal handler reads (a sig_atomic_t, as a handler may only read).
 */
#ifndef FBF_REPLAY_CHILD_H
#define FBF_REPLAY_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/error.h"

#define FBF_CHILD_FINISH_S 5.0 /* how long a scheduler may linger after the end */

typedef struct fbf_child {
    pid_t pid;   /* 0: none */
    int status;  /* valid once reaped */
    bool reaped;
} fbf_child;

/* 0 or -errno (fork failed) with one line in err. */
int fbf_child_spawn(fbf_child *c, const char *cmd, fbf_error *err);
bool fbf_child_gone(fbf_child *c);
bool fbf_child_exited(const fbf_child *c);
/* Waits up to s seconds for it to exit; true when it did. */
bool fbf_child_wait(fbf_child *c, double s);
void fbf_child_kill(fbf_child *c);
/* 0 after a clean exit; 1 (a warning in err) when it had to be killed;
 * -ECHILD when it exited badly. end names the last message ("SIMULATION_ENDS"). */
int fbf_child_finish(fbf_child *c, const char *end, fbf_error *err);
/* "exited with status 3", "was killed by signal 9 (Killed)". */
void fbf_child_describe(int status, char *buf, size_t cap);

/* Replaces every key ("{endpoint}") in cmd by value, or appends
 * " <flag> <value>" when cmd has none. malloc'ed (caller frees); NULL when
 * out of memory. */
char *fbf_child_command(const char *cmd, const char *key, const char *flag, const char *value);

/* Monotonic seconds, and a sleep that resumes after signals. */
double fbf_child_mono_s(void);
void fbf_child_sleep(double s);

#endif
