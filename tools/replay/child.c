/*
 * child: starting, watching and stopping the scheduler process (child.h).
 */
#include "tools/replay/child.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <poll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KILL_GRACE_S 1.0 /* between SIGTERM and SIGKILL */

/* The group the fatal-signal handler takes down with the replayer. */
static volatile sig_atomic_t g_child_pgid;

double fbf_child_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void fbf_child_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

void fbf_child_describe(int status, char *buf, size_t cap)
{
    if (WIFEXITED(status))
        snprintf(buf, cap, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, cap, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, cap, "ended with wait status %d", status);
}

bool fbf_child_gone(fbf_child *c)
{
    if (c->pid <= 0 || c->reaped)
        return true;
    int st;
    pid_t r = waitpid(c->pid, &st, WNOHANG);
    if (r == c->pid || (r < 0 && errno == ECHILD)) {
        c->reaped = true;
        c->status = r == c->pid ? st : 0;
        g_child_pgid = 0;
        return true;
    }
    return false;
}

bool fbf_child_exited(const fbf_child *c)
{
    /* Reads nothing the owning thread writes: the watcher thread of the
     * ZeroMQ transport calls this while the caller may reap. */
    if (c->pid <= 0)
        return false;
    siginfo_t si = {0};
    return waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           si.si_pid == c->pid;
}

bool fbf_child_wait(fbf_child *c, double s)
{
    double until = fbf_child_mono_s() + s;
    while (!fbf_child_gone(c)) {
        if (fbf_child_mono_s() >= until)
            return false;
        fbf_child_sleep(0.01);
    }
    return true;
}

void fbf_child_kill(fbf_child *c)
{
    if (fbf_child_gone(c))
        return;
    kill(-c->pid, SIGTERM);
    if (!fbf_child_wait(c, KILL_GRACE_S)) {
        kill(-c->pid, SIGKILL);
        fbf_child_wait(c, KILL_GRACE_S);
    }
}

int fbf_child_finish(fbf_child *c, const char *end, fbf_error *err)
{
    if (c->pid <= 0)
        return 0;
    if (!fbf_child_wait(c, FBF_CHILD_FINISH_S)) {
        fbf_child_kill(c);
        return fbf_errorf(err, 1, "the scheduler was still running %g s after %s; killed it",
                          FBF_CHILD_FINISH_S, end);
    }
    if (WIFEXITED(c->status) && WEXITSTATUS(c->status) == 0)
        return 0;
    char how[96];
    fbf_child_describe(c->status, how, sizeof how);
    return fbf_errorf(err, -ECHILD, "the scheduler %s after %s", how, end);
}

char *fbf_child_command(const char *cmd, const char *key, const char *flag, const char *value)
{
    const size_t klen = strlen(key), vlen = strlen(value);
    size_t n = 0;
    for (const char *p = cmd; (p = strstr(p, key)); p += klen)
        n++;
    size_t len = strlen(cmd) + (n ? n * vlen : vlen + strlen(flag) + 2) + 1;
    char *out = malloc(len);
    if (!out)
        return NULL;
    if (!n) {
        snprintf(out, len, "%s %s %s", cmd, flag, value);
        return out;
    }
    char *o = out;
    for (const char *p = cmd;;) {
        const char *k = strstr(p, key);
        size_t seg = k ? (size_t)(k - p) : strlen(p);
        memcpy(o, p, seg);
        o += seg;
        if (!k)
            break;
        memcpy(o, value, vlen);
        o += vlen;
        p = k + klen;
    }
    *o = '\0';
    return out;
}

static void on_fatal_signal(int sig)
{
    pid_t pg = (pid_t)g_child_pgid;
    if (pg > 0)
        kill(-pg, SIGTERM);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Closes every descriptor of the guard: it was forked, not exec'ed, so it
 * still holds the replayer's sockets, close-on-exec or not; a copy of a
 * ZeroMQ connection kept open here would be a second peer for the
 * scheduler. */
static void guard_close_from(unsigned first)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, first, ~0U, 0U) == 0)
        return;
#endif
    long max = sysconf(_SC_OPEN_MAX);
    for (long fd = first; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
        close((int)fd);
}

/* The scheduler's output, relayed to the terminal (fd 2) a whole line at
 * a time, each in one write that first clears the terminal's line: the
 * replayer redraws its progress line in place, and a line written in
 * pieces could have the progress drawn between them. A line longer than
 * the buffer goes out in buffer-sized pieces. */
typedef struct relay_buf {
    char text[4 + 4096]; /* "\r\033[K", then the line so far */
    size_t len;          /* bytes of the line so far */
} relay_buf;

static void relay_flush(relay_buf *r)
{
    if (r->len == 0)
        return;
    memcpy(r->text, "\r\033[K", 4);
    ssize_t ignored = write(STDERR_FILENO, r->text, 4 + r->len); /* nowhere to say it failed */
    (void)ignored;
    r->len = 0;
}

static void relay(relay_buf *r, const char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        r->text[4 + r->len++] = buf[i];
        if (buf[i] == '\n' || r->len == sizeof r->text - 4)
            relay_flush(r);
    }
}

/* What the pipe (fd 0) still holds, before the guard ends. */
static void relay_drain(relay_buf *r)
{
    char buf[4096];
    struct pollfd p = {STDIN_FILENO, POLLIN, 0};
    while (poll(&p, 1, 0) > 0) {
        ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
        if (n <= 0)
            break;
        relay(r, buf, (size_t)n);
    }
    relay_flush(r);
}
/* Ends like the shell did, so that the replayer reads the same status. */
static _Noreturn void guard_exit_as(int st)
{
    if (WIFEXITED(st))
        _exit(WEXITSTATUS(st));
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : SIGKILL;
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none); /* the shell's core, if any, is already written */
    signal(sig, SIG_DFL);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    kill(getpid(), sig);
    _exit(128 + sig);
}

/* The replayer is gone: SIGTERM to the whole group (the guard keeps its own
 * blocked),
 * half a second for the shell, then SIGKILL to whatever is left. */
static _Noreturn void guard_orphaned(pid_t sh)
{
    kill(0, SIGTERM);
    for (int i = 0; sh > 0 && i < 50 && waitpid(sh, NULL, WNOHANG) == 0; i++)
        fbf_child_sleep(0.01);
    kill(0, SIGKILL);
    _exit(128 + SIGKILL);
}

/*
 * The replayer's direct child, leader of the scheduler's process group:
 * runs "/bin/sh -c cmd" in the group and waits for it. It asks the kernel
 * for SIGTERM when the replayer dies (PR_SET_PDEATHSIG, which fires when
 * the thread that forked ends: fbf_child_spawn() runs on the main thread)
 * and then takes the whole group down, so that a scheduler never outlives
 * a replayer killed with SIGKILL, nor do the processes its command line
 * started (a shell that does not exec, a pipeline, a background job),
 * which a death signal set on the shell alone would miss. SIGTERM, SIGINT
 * and SIGHUP sent to the group (fbf_child_kill(), the replayer's own
 * handler) reach the shell too; the guard then ends as the shell did.
 * Its signals stay blocked and are taken with sigwaitinfo(), so that none
 * is lost between a check and a wait. Only async-signal-safe calls here:
 * the replayer may have had other threads when it forked.
 */
static _Noreturn void guard_main(const char *cmd, pid_t parent, bool relay_output)
{
    setpgid(0, 0);
    sigset_t all, old, waited;
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    signal(SIGCHLD, SIG_DFL);
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    if (getppid() != parent)
        _exit(128 + SIGTERM); /* gone before the death signal was asked for */
    int pfd[2];
    if (relay_output && pipe(pfd) != 0)
        relay_output = false;
    dup2(STDERR_FILENO, STDOUT_FILENO);
    pid_t sh = fork();
    if (sh == 0) {
        if (relay_output) {
            dup2(pfd[1], STDOUT_FILENO);
            dup2(pfd[1], STDERR_FILENO);
            close(pfd[0]);
            close(pfd[1]);
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* Only stderr (and, relaying, the pipe's read end as stdin) stays. */
    if (relay_output)
        dup2(pfd[0], STDIN_FILENO);
    guard_close_from(relay_output ? 3 : 0);
    if (sh < 0)
        _exit(127);
    sigemptyset(&waited);
    sigaddset(&waited, SIGCHLD);
    sigaddset(&waited, SIGTERM);
    sigaddset(&waited, SIGINT);
    sigaddset(&waited, SIGHUP);
    int sfd = relay_output ? signalfd(-1, &waited, SFD_CLOEXEC) : -1;
    bool reading = sfd >= 0;
    relay_buf line = {.len = 0};
    for (;;) {
        int st;
        if (waitpid(sh, &st, WNOHANG) == sh) {
            if (sfd >= 0)
                relay_drain(&line);
            guard_exit_as(st);
        }
        if (getppid() != parent)
            guard_orphaned(sh);
        if (sfd < 0) {
            sigwaitinfo(&waited, NULL);
            continue;
        }
        struct pollfd p[2] = {{sfd, POLLIN, 0}, {STDIN_FILENO, POLLIN, 0}};
        if (poll(p, reading ? 2 : 1, -1) <= 0)
            continue;
        if (p[0].revents & POLLIN) {
            struct signalfd_siginfo si;
            if (read(sfd, &si, sizeof si) < 0)
                continue;
        }
        if (reading && (p[1].revents & (POLLIN | POLLHUP))) {
            char buf[4096];
            ssize_t n = read(STDIN_FILENO, buf, sizeof buf);
            if (n <= 0) {
                reading = false; /* every writer is gone */
                relay_flush(&line);
            } else {
                relay(&line, buf, (size_t)n);
            }
        }
    }
}

int fbf_child_spawn(fbf_child *c, const char *cmd, fbf_error *err)
{
    *c = (fbf_child){0};
    fflush(stdout);
    fflush(stderr);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return fbf_errorf(err, -errno, "fork: %s", strerror(errno));
    if (pid == 0) /* on a terminal, the scheduler's lines clear the progress line first */
        guard_main(cmd, parent, isatty(STDERR_FILENO));
    setpgid(pid, pid); /* also here: whichever runs first, the group exists */
    c->pid = pid;
    g_child_pgid = pid;
    struct sigaction sa = {.sa_handler = on_fatal_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    return 0;
}
