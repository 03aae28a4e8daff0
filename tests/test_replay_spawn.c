/*
 * test_replay_spawn: schedulers that fastbf-replay starts itself
 * (--scheduler CMD, {endpoint} substituted): the port they are given, and
 * how their end is reported: dying before a reply (exit status, signal),
 * exiting with an error or lingering after SIMULATION_ENDS; and that the
 * scheduler and whatever its command line started die with a replayer
 * killed by a signal, SIGKILL included.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <cmocka.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#define TIMEOUT_MS 120000

/* Two jobs, the second arriving after the first ends. */
static const char two_swf[] = "; MaxProcs: 4\n"
                              "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                              "2 100 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";

static void run_expect(const char *const *args, int rc, const char *needle, bool on_stdout)
{
    fbf_test_replay_expect(args, TIMEOUT_MS, rc, needle, on_stdout);
}

static bool have_fastbf(void)
{
    return access(fbf_test_replay_fastbf_path(), X_OK) == 0;
}

static void test_dying_schedulers(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("die.swf", two_swf);
    run_expect((const char *const[]){"--scheduler", "sleep 0.2; exit 7 # {endpoint}", wl, NULL},
               2, "message #0 (SIMULATION_BEGINS, now=0): the scheduler exited with status 7 "
                  "before replying", false);
    run_expect((const char *const[]){"--scheduler", "ulimit -c 0; kill -SEGV $$ # {endpoint}", wl, NULL}, 2,
               "the scheduler was killed by signal 11", false);
    run_expect((const char *const[]){"--scheduler", "exit 0", wl, NULL}, 2,
               "the scheduler exited with status 0 before replying", false);
}

/* The port a spawned scheduler gets lies below the kernel's ephemeral
 * range, where no bind of port 0 on the machine (another replay's
 * scheduler, a test's) can take it between the probe and the scheduler's
 * own bind: a replay never ends up talking to someone else's scheduler. */
static void test_spawn_port_outside_ephemeral_range(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    FILE *f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    int lo = 0, hi = 0;
    if (!f)
        skip();
    bool ok = fscanf(f, "%d %d", &lo, &hi) == 2;
    fclose(f);
    if (!ok || lo <= 1025)
        skip();
    const char *wl = fbf_test_tmp_write("port.swf", two_swf);
    const char *where = fbf_test_tmp_path("endpoint.txt");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "echo {endpoint} > %s; exec %s --endpoint {endpoint} --policy fcfs",
             where, fbf_test_replay_fastbf_path());
    for (int i = 0; i < 3; i++) {
        char *err = NULL, *so = NULL;
        int rc = fbf_test_replay_run((const char *const[]){"--scheduler", cmd, "--timeout", "20",
                                                           wl, NULL},
                                     TIMEOUT_MS, &so, &err);
        if (rc != 0)
            fail_msg("%s: exit %d: %s", cmd, rc, err);
        free(err);
        free(so);
        FILE *e = fopen(where, "r");
        assert_non_null(e);
        int port = 0;
        ok = fscanf(e, "tcp://127.0.0.1:%d", &port) == 1;
        fclose(e);
        assert_true(ok);
        if (!(port >= 1024 && port < lo))
            fail_msg("the scheduler got port %d; the ephemeral range starts at %d", port, lo);
    }
}

static void test_scheduler_after_the_end(void **state)
{
    (void)state;
    if (!have_fastbf())
        skip();
    const char *wl = fbf_test_tmp_write("end.swf", two_swf);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "%s --policy fcfs --endpoint {endpoint}; exit 4",
             fbf_test_replay_fastbf_path());
    run_expect((const char *const[]){"--scheduler", cmd, "--quiet", wl, NULL}, 2,
               "error: the scheduler exited with status 4 after SIMULATION_ENDS", false);
    /* One that lingers is given 5 s, then stopped; the run still succeeds. */
    snprintf(cmd, sizeof cmd, "%s --policy fcfs --endpoint {endpoint}; sleep 60",
             fbf_test_replay_fastbf_path());
    run_expect((const char *const[]){"--scheduler", cmd, "--quiet", wl, NULL}, 0,
               "warning: the scheduler was still running 5 s after SIMULATION_ENDS; killed it",
               false);
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* The process group of pid (from /proc/PID/stat), or -1. */
static pid_t group_of(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *close = strrchr(buf, ')'); /* the name may hold spaces */
    int ppid, pgrp;
    char state;
    if (!close || sscanf(close + 1, " %c %d %d", &state, &ppid, &pgrp) != 3)
        return -1;
    return pgrp;
}

/* How many processes of group pg are alive (zombies are dead: their
 * parent may simply not have reaped them yet). */
static int alive_in_group(pid_t pg)
{
    DIR *d = opendir("/proc");
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        char path[64], buf[512];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = '\0';
        const char *close = strrchr(buf, ')');
        int ppid, pgrp;
        char state;
        if (close && sscanf(close + 1, " %c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == pg &&
            state != 'Z' && state != 'X')
            n++;
    }
    closedir(d);
    return n;
}

/* Kills the replayer with sig while its scheduler (a shell that writes
 * its pid, then waits on a background job or execs) runs: within a
 * second, nothing of the scheduler's process group may be left. */
static void test_scheduler_dies_with_replayer(void **state)
{
    (void)state;
    static const struct {
        int sig;
        const char *cmd; /* %s: the file the shell writes its pid to */
    } cases[] = {
        {SIGKILL, "echo $$ > %s; sleep 300 & sleep 300; wait # {endpoint}"},
        {SIGKILL, "echo $$ > %s; exec sleep 300 # {endpoint}"},
        {SIGKILL, "echo $$ > %s; sleep 300 | cat # {endpoint}"},
        {SIGTERM, "echo $$ > %s; sleep 300 & wait # {endpoint}"},
        {SIGINT, "echo $$ > %s; sleep 300 & wait # {endpoint}"},
        {SIGHUP, "echo $$ > %s; exec sleep 300 # {endpoint}"},
    };
    const char *wl = fbf_test_tmp_write("orphan.swf", two_swf);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *pidfile = fbf_test_tmp_path("sched-%zu.pid", i);
        char cmd[512];
        snprintf(cmd, sizeof cmd, cases[i].cmd, pidfile);
        const char *argv[] = {fbf_test_replay_path(), "--scheduler", cmd, "--timeout", "120",
                              wl, NULL};
        fflush(stdout);
        fflush(stderr);
        pid_t replayer = fork();
        assert_true(replayer >= 0);
        if (replayer == 0) {
            int devnull = open("/dev/null", O_RDWR);
            dup2(devnull, 1);
            dup2(devnull, 2);
            execv(argv[0], (char *const *)argv);
            _exit(127);
        }
        pid_t sh = 0;
        for (int waited = 0; waited < 20000 && sh <= 0; waited += 10) {
            FILE *f = fopen(pidfile, "r");
            int v = 0;
            if (f && fscanf(f, "%d", &v) == 1)
                sh = v;
            if (f)
                fclose(f);
            if (sh <= 0)
                sleep_ms(10);
        }
        pid_t pg = sh > 0 ? group_of(sh) : -1;
        sleep_ms(50); /* the background job and the pipeline under way */
        kill(replayer, cases[i].sig);
        int st;
        assert_int_equal(waitpid(replayer, &st, 0), replayer);
        if (pg <= 0)
            fail_msg("case %zu: the scheduler never started (%s)", i, cmd);
        int left = -1;
        for (int waited = 0; waited <= 1000; waited += 10) {
            if ((left = alive_in_group(pg)) == 0)
                break;
            sleep_ms(10);
        }
        if (left != 0) {
            kill(-pg, SIGKILL);
            fail_msg("case %zu (signal %d, %s): %d processes of the scheduler's group %d still "
                     "alive 1 s after the replayer died",
                     i, cases[i].sig, cmd, left, (int)pg);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dying_schedulers),
        cmocka_unit_test(test_spawn_port_outside_ephemeral_range),
        cmocka_unit_test(test_scheduler_after_the_end),
        cmocka_unit_test(test_scheduler_dies_with_replayer),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
