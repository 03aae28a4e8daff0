/*
 * redis_server: a private redis-server per test group (see
 * redis_server.h).
 *
 * Invariant: every started server is in live[] until stopped, so an exit
 * in the middle of a failing test still kills it (and PR_SET_PDEATHSIG
 * kills it if the test process itself dies).
 */
#include "support/redis_server.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <cmocka.h>

#include "support/replay_sched.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

#define MAX_LIVE 8
static pid_t live[MAX_LIVE];
static bool atexit_set;

static void kill_live(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (live[i] > 0) {
            kill(live[i], SIGKILL);
            waitpid(live[i], NULL, 0);
            live[i] = 0;
        }
}

static void track(pid_t pid, bool add)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (add ? live[i] == 0 : live[i] == pid) {
            live[i] = add ? pid : 0;
            return;
        }
}

/* redis-server's path: $FBF_REDIS_SERVER, else the first in PATH or the
 * usual Debian places. */
static const char *server_path(void)
{
    static char buf[512];
    const char *env = getenv("FBF_REDIS_SERVER");
    if (env && *env)
        return access(env, X_OK) == 0 ? env : NULL;
    const char *path = getenv("PATH");
    char dirs[2048];
    snprintf(dirs, sizeof dirs, "%s:/usr/bin:/usr/sbin:/usr/local/bin", path ? path : "");
    for (char *save = NULL, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, sizeof buf, "%s/redis-server", d);
        if (access(buf, X_OK) == 0)
            return buf;
    }
    return NULL;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool answers_ping(int port)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    bool ok = false;
    if (c && !c->err) {
        redisReply *rep = redisCommand(c, "PING");
        ok = rep && rep->type == REDIS_REPLY_STATUS && strcmp(rep->str, "PONG") == 0;
        if (rep)
            freeReplyObject(rep);
    }
    if (c)
        redisFree(c);
    return ok;
}

static void print_log(const fbf_test_redis *r)
{
    char path[96];
    snprintf(path, sizeof path, "%s/log", r->dir);
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f))
        fprintf(stderr, "  redis-server: %s", line);
    if (f)
        fclose(f);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* One attempt on one port: 1 ready, 0 lost the port, -1 failed. */
static int try_port(fbf_test_redis *r, const char *exe, int port)
{
    char portstr[16], log[96];
    snprintf(portstr, sizeof portstr, "%d", port);
    snprintf(log, sizeof log, "%s/log", r->dir);
    const char *argv[] = {exe, "--port", portstr, "--bind", "127.0.0.1", "--save", "",
                          "--appendonly", "no", "--dir", r->dir, "--daemonize", "no", NULL};
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd);
        return -1;
    }
    if (pid == 0) {
#ifdef __linux__
        prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            dup2(devnull, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        execv(exe, (char *const *)argv);
        dprintf(2, "cannot exec %s: %s\n", exe, strerror(errno));
        _exit(127);
    }
    close(fd);
    r->pid = pid;
    r->port = port;
    track(pid, true);
    /* Readiness, not timing: 20 s is only a bound for a server that never
     * comes up. */
    for (int waited = 0; waited < 20000; waited += 10) {
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            track(pid, false);
            r->pid = -1;
            char *text = fbf_test_replay_read(log);
            bool lost = text && strstr(text, "Address already in use");
            free(text);
            return lost ? 0 : -1;
        }
        if (answers_ping(port))
            return 1;
        sleep_ms(10);
    }
    return -1;
}

int fbf_test_redis_start(fbf_test_redis *r)
{
    memset(r, 0, sizeof *r);
    r->pid = -1;
    if (!atexit_set) {
        atexit(kill_live);
        atexit_set = true;
    }
    const char *exe = server_path();
    if (!exe) {
        fprintf(stderr, "redis_server: redis-server not found (PATH, /usr/bin, /usr/sbin): the "
                        "Redis-mode tests need it; install Debian's redis-server package "
                        "(bash tools/install-deps.sh does)\n");
        return -1;
    }
    fbf_test_temp_name(r->dir, sizeof r->dir, "/tmp/fbf_test_redis_");
    if (!mkdtemp(r->dir)) {
        fprintf(stderr, "redis_server: mkdtemp: %s\n", strerror(errno));
        return -1;
    }
    for (int attempt = 0; attempt < 8; attempt++) {
        int port = fbf_test_free_port();
        int rc = port > 0 ? try_port(r, exe, port) : 0;
        if (rc == 1)
            return 0;
        if (rc < 0)
            break;
    }
    fprintf(stderr, "redis_server: %s did not come up (last port %d); its log:\n", exe,
            r->port);
    print_log(r);
    fbf_test_redis_stop(r);
    return -1;
}

void fbf_test_redis_stop(fbf_test_redis *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        int waited = 0, status;
        while (waitpid(r->pid, &status, WNOHANG) == 0) {
            if (waited >= 5000) {
                kill(r->pid, SIGKILL);
                waitpid(r->pid, &status, 0);
                break;
            }
            sleep_ms(10);
            waited += 10;
        }
        track(r->pid, false);
        r->pid = -1;
    }
    if (r->dir[0])
        remove_dir(r->dir);
    r->dir[0] = '\0';
}

static fbf_test_redis shared = {.pid = -1};

int fbf_test_redis_group_setup(void **state)
{
    return fbf_test_redis_start(&shared);
}

int fbf_test_redis_group_teardown(void **state)
{
    fbf_test_redis_stop(&shared);
    return 0;
}

fbf_test_redis *fbf_test_redis_shared(void) { return &shared; }

static redisReply *command(const fbf_test_redis *r, const char *fmt, ...)
{
    struct timeval tv = {10, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
    if (!c || c->err)
        fail_msg("redis_server: cannot connect to port %d: %s", r->port,
                 c ? c->errstr : "out of memory");
    va_list ap;
    va_start(ap, fmt);
    redisReply *rep = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (!rep)
        fail_msg("redis_server: %s: %s", fmt, c->errstr);
    redisFree(c);
    if (rep->type == REDIS_REPLY_ERROR)
        fail_msg("redis_server: %s: %s", fmt, rep->str);
    return rep;
}

void fbf_test_redis_set(const fbf_test_redis *r, const char *key, const char *value)
{
    freeReplyObject(command(r, "SET %s %s", key, value));
}

char *fbf_test_redis_get(const fbf_test_redis *r, const char *key)
{
    redisReply *rep = command(r, "GET %s", key);
    char *s = rep->type == REDIS_REPLY_STRING ? strdup(rep->str) : NULL;
    freeReplyObject(rep);
    return s;
}

void fbf_test_redis_flush(const fbf_test_redis *r)
{
    freeReplyObject(command(r, "FLUSHALL"));
}

const char *fbf_test_redis_addr(const fbf_test_redis *r)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "127.0.0.1:%d", r->port);
    return buf;
}

int fbf_test_redis_dead_port(void) { return fbf_test_free_port(); }
