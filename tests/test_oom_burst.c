/*
 * test_oom_burst: fastbf with too little memory for what Batsim sends, a
 * burst of a million submissions, under `ulimit -v` of 100 to 400 MB with
 * the allocator it ships with: each time it ends with status 1 and says
 * what it could not take (a message ZeroMQ could not receive, or a job it
 * could not store), and never dies of a signal (a crash in the allocator
 * or in a thread's start used to end it with SIGSEGV).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "support/replay_run.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

static void test_burst_under_memory_limits(void **state)
{
    (void)state;
#if defined(FBF_TEST_UNDER_SAN) || defined(FBF_TEST_UNDER_TSAN)
    skip(); /* sanitizers reserve terabytes of address space: no ulimit -v for them */
#endif
    char *dir = fbf_test_replay_tmpdir(), wl[600], cmd[2048], log[700];
    snprintf(wl, sizeof wl, "%s/burst.swf", dir);
    snprintf(cmd, sizeof cmd, FBF_BUILD_DIR "/fastbf-gen --jobs 1000000 --mode deep --seed 1 "
             "--output %s", wl);
    assert_int_equal(system(cmd), 0);
    static const int limits_mb[] = {100, 200, 300, 400};
    for (size_t i = 0; i < sizeof limits_mb / sizeof *limits_mb; i++) {
        snprintf(log, sizeof log, "%s/run-%d.log", dir, limits_mb[i]);
        snprintf(cmd, sizeof cmd, "%s %s --max-exchanges 1 --quiet --timeout 60 --scheduler "
                 "\"sh -c 'ulimit -v %d; exec %s --endpoint {endpoint}'\" > %s 2>&1",
                 fbf_test_replay_path(), wl, limits_mb[i] * 1024, fbf_test_replay_fastbf_path(),
                 log);
        int st = system(cmd);
        char *out = fbf_test_replay_read(log);
        assert_non_null(out);
        /* The replayer reports how fastbf ended: status 1, never a signal. */
        bool by_status_1 = strstr(out, "exited with status 1") || strstr(out, "fastbf stopped: ");
        bool said = strstr(out, "fastbf: Batsim disconnected after 1 messages, before the "
                                "simulation ended (ZeroMQ also ends a connection whose message "
                                "it cannot take unread: above --max-message 536870912 bytes, "
                                "or more than this process can allocate)") ||
                    strstr(out, "cannot store job (Cannot allocate memory)") ||
                    strstr(out, "out of memory");
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 2 || !by_status_1 || !said ||
            strstr(out, "signal") || strstr(out, "status 13"))
            fail_msg("ulimit -v %d MB: fastbf did not end with status 1 saying what it could "
                     "not store:\n%s", limits_mb[i], out);
        free(out);
    }
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_burst_under_memory_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
