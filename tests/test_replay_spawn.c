/*
 * test_replay_spawn: schedulers that fastbf-replay starts itself
 * (--scheduler CMD, {endpoint} substituted): the port they are given, and
 * how their end is reported: dying before a reply (exit status, signal),
 * exiting with an error or lingering after SIMULATION_ENDS.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dying_schedulers),
        cmocka_unit_test(test_spawn_port_outside_ephemeral_range),
        cmocka_unit_test(test_scheduler_after_the_end),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
