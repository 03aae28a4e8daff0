/*
 * run: see run.h.
 */
#include "tools/campaign/run.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tools/campaign/files.h"

/* One replay under way. */
typedef struct slot {
    const fbf_cmp_cell *cell;
    pid_t pid; /* 0: free */
    int lock;  /* the cell's lock, held until the replay is reaped */
    double start;
} slot;

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static char *cell_file(const fbf_cmp_cell *c, const char *name)
{
    return fbf_cmp_strf("%s/%s", c->dir, name);
}

int fbf_cmp_cell_state(const fbf_cmp_cell *c, char *why, size_t cap, fbf_error *err)
{
    char *p = cell_file(c, "done");
    if (!p)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int code = 0;
    char *m = fbf_cmp_read_file(p, NULL, &code, NULL);
    free(p);
    if (m) {
        size_t kl = strlen(c->key);
        bool mine = strncmp(m, c->key, kl) == 0;
        free(m);
        if (!mine)
            return fbf_errorf(err, -EEXIST, "%s/done belongs to a cell of other parameters "
                              "(see its cell.txt); move the folder away", c->dir);
        return FBF_CMP_DONE;
    }
    if (code != -ENOENT)
        return fbf_errorf(err, code, "cannot read %s/done: %s", c->dir, strerror(-code));
    if (!(p = cell_file(c, "failed")))
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char *f = fbf_cmp_read_file(p, NULL, NULL, NULL);
    free(p);
    if (!f)
        return FBF_CMP_PENDING;
    if (why && cap) {
        size_t n = strcspn(f, "\n");
        snprintf(why, cap, "%.*s", (int)n, f);
    }
    free(f);
    return FBF_CMP_FAILED;
}

/* runs + 1, written back atomically. */
static int count_run(const fbf_cmp_cell *c, fbf_error *err)
{
    char *p = cell_file(c, "runs");
    if (!p)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char *t = fbf_cmp_read_file(p, NULL, NULL, NULL);
    long n = t ? strtol(t, NULL, 10) : 0;
    free(t);
    char buf[32];
    int len = snprintf(buf, sizeof buf, "%ld\n", n + 1);
    int rc = fbf_cmp_write_replace(p, buf, (size_t)len, err);
    free(p);
    return rc;
}

/* The command line, shell-quoted, for cell.txt. */
static char *command_text(char **argv)
{
    size_t cap = 1, n = 0;
    char *s = NULL;
    for (size_t i = 0; argv[i]; i++) {
        char *q = fbf_cmp_shell_quote(argv[i]);
        if (!q) {
            free(s);
            return NULL;
        }
        size_t ql = strlen(q);
        char *ns = realloc(s, cap + ql + 1);
        if (!ns) {
            free(q);
            free(s);
            return NULL;
        }
        s = ns;
        if (n)
            s[n++] = ' ';
        memcpy(s + n, q, ql);
        n += ql;
        s[n] = '\0';
        cap += ql + 1;
        free(q);
    }
    return s;
}

/* Empties the cell's folder of a former run's results and starts its
 * replay; *pid 0 with rc 0 means it runs elsewhere (busy). */
static int start(const fbf_cmp_cell *c, const fbf_cmp_run_opts *o, const sigset_t *child_mask,
                 slot *sl, bool *already, fbf_error *err)
{
    *already = false;
    sl->pid = 0;
    sl->lock = -1;
    int rc = fbf_cmp_mkdirs(c->dir, err);
    if (rc)
        return rc;
    char *p = cell_file(c, "lock");
    int fd = p ? open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0666) : -1;
    if (fd < 0) {
        rc = fbf_errorf(err, p ? -errno : -ENOMEM, "cannot open %s: %s", p ? p : "lock",
                        strerror(errno));
        free(p);
        return rc;
    }
    free(p);
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        close(fd);
        return errno == EWOULDBLOCK ? 0 : fbf_errorf(err, -errno, "cannot lock %s/lock: %s",
                                                      c->dir, strerror(errno));
    }
    /* Another process may have finished it since we looked. */
    int st = fbf_cmp_cell_state(c, NULL, 0, err);
    if (st < 0 || st == FBF_CMP_DONE) {
        close(fd);
        *already = st == FBF_CMP_DONE;
        return st < 0 ? st : 0;
    }
    static const char *const stale[] = {"failed", "summary.json", "out_jobs.csv"};
    for (size_t i = 0; i < sizeof stale / sizeof stale[0]; i++) {
        char *s = cell_file(c, stale[i]);
        if (s && unlink(s) < 0 && errno != ENOENT)
            rc = fbf_errorf(err, -errno, "cannot remove %s: %s", s, strerror(errno));
        free(s);
    }
    char **argv = NULL;
    char *cmd = NULL, *info = NULL, *info_path = cell_file(c, "cell.txt");
    char *log_path = cell_file(c, "replay.log");
    if (!rc && !(rc = count_run(c, err)) && !(rc = fbf_cmp_cell_argv(c, o->replay, &argv, err))) {
        cmd = command_text(argv);
        info = cmd ? fbf_cmp_strf("%scommand=%s\n", c->key, cmd) : NULL;
        if (!info || !info_path || !log_path)
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
        else
            rc = fbf_cmp_write_replace(info_path, info, strlen(info), err);
    }
    if (!rc) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
            rc = fbf_errorf(err, -errno, "fork: %s", strerror(errno));
        } else if (pid == 0) {
            setpgid(0, 0);
            sigprocmask(SIG_SETMASK, child_mask, NULL);
            int lfd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
            if (lfd >= 0) {
                dup2(lfd, STDOUT_FILENO);
                dup2(lfd, STDERR_FILENO);
                if (lfd > STDERR_FILENO)
                    close(lfd);
            }
            int nul = open("/dev/null", O_RDONLY);
            if (nul >= 0 && nul != STDIN_FILENO) {
                dup2(nul, STDIN_FILENO);
                close(nul);
            }
            if (strchr(argv[0], '/'))
                execv(argv[0], argv);
            else
                execvp(argv[0], argv);
            dprintf(STDERR_FILENO, "fastbf-campaign: cannot run %s: %s\n", argv[0],
                    strerror(errno));
            _exit(127);
        } else {
            setpgid(pid, pid); /* either side may win the race; both set it */
            sl->cell = c;
            sl->pid = pid;
            sl->lock = fd;
            sl->start = mono();
        }
    }
    fbf_cmp_argv_free(argv);
    free(cmd);
    free(info);
    free(info_path);
    free(log_path);
    if (!sl->pid)
        close(fd);
    return rc;
}

/* fsync of an existing file. */
static int flush_file(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = fsync(fd) < 0 ? -errno : 0;
    close(fd);
    return rc;
}

/* The replay's error from its replay.log, into buf: the last line that
 * fastbf-replay signed ("fastbf-replay: ..."), else the last non-empty
 * one (fastbf-replay rewrites its progress line with \r: its last state). */
static void log_reason(const fbf_cmp_cell *c, char *buf, size_t cap)
{
    buf[0] = '\0';
    char *p = cell_file(c, "replay.log");
    char *t = p ? fbf_cmp_read_file(p, NULL, NULL, NULL) : NULL;
    free(p);
    if (!t)
        return;
    const char *signed_line = NULL, *last = NULL;
    for (char *l = t; l && *l;) {
        char *nl = strchr(l, '\n');
        if (nl)
            *nl = '\0';
        char *r = strrchr(l, '\r');
        if (r)
            l = r + 1;
        if (l[strspn(l, " \t")]) {
            last = l;
            if (!strncmp(l, "fastbf-replay: ", 15))
                signed_line = l;
        }
        l = nl ? nl + 1 : NULL;
    }
    snprintf(buf, cap, "%s", signed_line ? signed_line : last ? last : "");
    free(t);
}

/* After the replay of sl exited with status: the marker, or the reason it
 * failed. Returns FBF_CMP_DONE or FBF_CMP_FAILED, negative when the folder
 * cannot be written; the reason goes into why. */
static int finish(const slot *sl, int status, char *why, size_t cap, fbf_error *err)
{
    const fbf_cmp_cell *c = sl->cell;
    double wall = mono() - sl->start;
    why[0] = '\0';
    if (WIFSIGNALED(status)) {
        snprintf(why, cap, "fastbf-replay killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    } else if (WEXITSTATUS(status) != 0) {
        char line[200];
        log_reason(c, line, sizeof line);
        snprintf(why, cap, "fastbf-replay exited with status %d: %s", WEXITSTATUS(status),
                 line[0] ? line : "(no message; see replay.log)");
    } else {
        char *sp = cell_file(c, "summary.json"), *op = cell_file(c, "out_jobs.csv");
        char *text = sp ? fbf_cmp_read_file(sp, NULL, NULL, NULL) : NULL;
        cJSON *j = text ? cJSON_Parse(text) : NULL;
        if (!text)
            snprintf(why, cap, "fastbf-replay exited 0 without writing summary.json");
        else if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(j, "mean_wait")) &&
                 !cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(j, "mean_wait")))
            snprintf(why, cap, "summary.json does not read as fastbf-replay's summary");
        else if (flush_file(sp) < 0 || flush_file(op) < 0)
            snprintf(why, cap, "cannot flush summary.json and out_jobs.csv to disk");
        cJSON_Delete(j);
        free(text);
        free(sp);
        free(op);
    }
    int rc;
    if (!why[0]) {
        char *m = cell_file(c, "done"), *mark = fbf_cmp_strf("%swall_s=%.3f\n", c->key, wall);
        rc = m && mark ? fbf_cmp_write_atomic(m, mark, strlen(mark), err)
                       : fbf_errorf(err, -ENOMEM, "out of memory");
        free(m);
        free(mark);
        if (!rc)
            snprintf(why, cap, "%.2f s", wall);
        return rc ? rc : FBF_CMP_DONE;
    }
    char *f = cell_file(c, "failed"), *text = fbf_cmp_strf("%s\n", why);
    rc = f && text ? fbf_cmp_write_replace(f, text, strlen(text), err)
                   : fbf_errorf(err, -ENOMEM, "out of memory");
    free(f);
    free(text);
    return rc ? rc : FBF_CMP_FAILED;
}

/* Stops every replay under way (SIGTERM to each group) and reaps it. */
static void stop_all(slot *slots, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (slots[i].pid)
            kill(-slots[i].pid, SIGTERM);
    for (unsigned i = 0; i < n; i++)
        if (slots[i].pid) {
            while (waitpid(slots[i].pid, NULL, 0) < 0 && errno == EINTR) {
            }
            close(slots[i].lock);
            slots[i].pid = 0;
        }
}

int fbf_cmp_run(const fbf_cmp_cell *cells, const size_t *sel, size_t nsel,
                const fbf_cmp_run_opts *o, fbf_cmp_run_stats *stats, fbf_error *err)
{
    memset(stats, 0, sizeof *stats);
    unsigned nslots = o->jobs ? o->jobs : 1;
    slot *slots = calloc(nslots, sizeof *slots);
    if (!slots)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    sigset_t waitset, old;
    sigemptyset(&waitset);
    sigaddset(&waitset, SIGCHLD);
    sigaddset(&waitset, SIGINT);
    sigaddset(&waitset, SIGTERM);
    sigaddset(&waitset, SIGHUP);
    sigprocmask(SIG_BLOCK, &waitset, &old);
    size_t next = 0, running = 0, finished = 0;
    int rc = 0;
    char why[400];
    while (!rc && (next < nsel || running)) {
        /* Fill the free slots. */
        for (unsigned i = 0; i < nslots && next < nsel && !rc; i++) {
            if (slots[i].pid)
                continue;
            const fbf_cmp_cell *c = &cells[sel[next++]];
            int st = fbf_cmp_cell_state(c, NULL, 0, err);
            bool already = st == FBF_CMP_DONE;
            if (st >= 0 && !already)
                st = start(c, o, &old, &slots[i], &already, err);
            if (st < 0) {
                rc = st;
            } else if (already) {
                stats->already++;
                finished++;
            } else if (!slots[i].pid) {
                stats->busy++;
                finished++;
                fprintf(o->log, "[%zu/%zu] cell %zu %s: running in another process, skipped\n",
                        finished, nsel, c->index, c->name);
            } else {
                running++;
            }
        }
        if (rc || !running)
            continue;
        siginfo_t si;
        int sig = sigwaitinfo(&waitset, &si);
        if (sig < 0)
            continue; /* EINTR */
        if (sig != SIGCHLD) {
            stop_all(slots, nslots);
            stats->signal = sig;
            break;
        }
        /* SIGCHLD coalesces: reap every replay that ended. */
        for (unsigned i = 0; i < nslots && !rc; i++) {
            int status;
            if (!slots[i].pid || waitpid(slots[i].pid, &status, WNOHANG) <= 0)
                continue;
            const fbf_cmp_cell *c = slots[i].cell;
            int st = finish(&slots[i], status, why, sizeof why, err);
            close(slots[i].lock);
            slots[i].pid = 0;
            running--;
            finished++;
            if (st < 0) {
                rc = st;
                break;
            }
            if (st == FBF_CMP_DONE)
                stats->ran++;
            else
                stats->failed++;
            fprintf(o->log, "[%zu/%zu] cell %zu %s: %s%s\n", finished, nsel, c->index, c->name,
                    st == FBF_CMP_DONE ? "done in " : "FAILED: ", why);
            fflush(o->log);
        }
    }
    if (rc)
        stop_all(slots, nslots);
    sigprocmask(SIG_SETMASK, &old, NULL);
    free(slots);
    return rc;
}
