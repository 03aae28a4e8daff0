/*
 * test_oom_burst: fastbf with too little memory for what Batsim sends, a
 * burst of a million submissions, under `ulimit -v` of 40 to 600 MB with
 * the allocator it ships with. Below what the burst needs it ends with
 * status 1 and one line saying what it could not take (the message, which
 * ZeroMQ or the JSON parser could not hold, or a job it could not store),
 * never by a signal: jemalloc used to die of SIGSEGV setting up a thread's
 * arena or cache, and libzmq aborts when it cannot start a thread. Where
 * the burst fits, the exchange is answered.
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
    static const int limits_mb[] = {40, 60, 100, 200, 300, 400, 600};
    for (size_t i = 0; i < sizeof limits_mb / sizeof *limits_mb; i++) {
        snprintf(log, sizeof log, "%s/run-%d.log", dir, limits_mb[i]);
        snprintf(cmd, sizeof cmd, "%s %s --max-exchanges 1 --quiet --timeout 60 --scheduler "
                 "\"sh -c 'ulimit -v %d; exec %s --endpoint {endpoint}'\" > %s 2>&1",
                 fbf_test_replay_path(), wl, limits_mb[i] * 1024, fbf_test_replay_fastbf_path(),
                 log);
        int st = system(cmd);
        char *out = fbf_test_replay_read(log);
        assert_non_null(out);
        bool answered = WIFEXITED(st) && WEXITSTATUS(st) == 0 && !strstr(out, "error");
        /* The replayer reports how fastbf ended: status 1, never a signal. */
        bool by_status_1 = strstr(out, "exited with status 1 ") || strstr(out, "fastbf stopped: ");
        bool said = strstr(out, "fastbf: cannot take Batsim's message #2: ZeroMQ dropped it "
                                "unread with its connection, as it does with a message above "
                                "--max-message 536870912 bytes or larger than this process can "
                                "allocate; Batsim, still connected, waits for a reply") ||
                    strstr(out, "out of memory parsing a message of ") ||
                    strstr(out, "cannot store job (Cannot allocate memory)");
        bool failed_well = WIFEXITED(st) && WEXITSTATUS(st) == 2 && by_status_1 && said &&
                           !strstr(out, "signal") && !strstr(out, "status 13");
        if (!answered && !failed_well)
            fail_msg("ulimit -v %d MB: fastbf neither answered nor ended with status 1 saying "
                     "what it could not store:\n%s", limits_mb[i], out);
        if (limits_mb[i] <= 100 && answered)
            fail_msg("ulimit -v %d MB: a burst of a million jobs cannot fit, yet:\n%s",
                     limits_mb[i], out);
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
