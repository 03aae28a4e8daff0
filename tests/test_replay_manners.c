/*
 * test_replay_manners: what a user sees around a replay.
 *   - --progress writes whole lines (percentage, jobs done of all,
 *     simulated time, wall time), the last one at 100% before the
 *     scheduler's own last words, which start a line of their own
 *     (fastbf --stats is never glued onto the progress line);
 *   - fastbf and fastbf-replay --inproc run the same policy when none is
 *     named: the same out_jobs.csv.
 */
#define _GNU_SOURCE /* memmem */
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

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define TIMEOUT_MS 120000

static void test_progress_lines(void **state)
{
    (void)state;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s --stats", fbf_test_replay_fastbf_path());
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--quiet", "--progress", "--max-jobs",
                                                       "2000", "--scheduler", cmd, KTH, NULL},
                                 TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    const char *last = strstr(err, "fastbf-replay: 100.0% (2000/2000 jobs done), t=");
    if (!last)
        fail_msg("no final progress line in:\n%s", err);
    assert_true(last == err || last[-1] == '\n');
    /* Every progress line is a line of its own, without a carriage return. */
    assert_null(strchr(err, '\r'));
    const char *stats = strstr(err, " messages answered in ");
    while (stats && stats > err && stats[-1] != '\n')
        stats--;
    if (!stats || stats < last || strncmp(stats, "fastbf: ", 8) != 0)
        fail_msg("fastbf's --stats line is not on a line of its own after the progress:\n%s",
                 err);
    /* fastbf says where it listens first, on a line of its own too. */
    const char *hello = strstr(err, "fastbf: easy (reservation depth 1, 1 worker), Batsim v4, "
                                    "listening on tcp://127.0.0.1:");
    assert_true(hello && (hello == err || hello[-1] == '\n') && hello < last);
    for (const char *p = err; (p = strstr(p, "fastbf-replay: ")) != NULL; p++) {
        const char *eol = strchr(p, '\n');
        assert_non_null(eol);
        assert_null(memmem(p, (size_t)(eol - p), "fastbf: ", 8));
    }
    free(out);
    free(err);
}

/* On a terminal (script(1) gives the replay one), the progress line is
 * redrawn in place; the scheduler's own lines (fastbf --verbose logs
 * every decision) must each start on a cleared line, never after the
 * progress text. */
static void test_child_lines_on_a_terminal(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), cmd[2048], log[700];
    snprintf(log, sizeof log, "%s/tty.log", dir);
    snprintf(cmd, sizeof cmd, "script -qec \"%s %s --max-jobs 8000 --scheduler '%s --verbose'\" "
             "/dev/null > %s 2>&1", fbf_test_replay_path(), KTH, fbf_test_replay_fastbf_path(),
             log);
    int st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    char *tty = fbf_test_replay_read(log);
    assert_non_null(tty);
    int progress = 0;
    for (char *line = tty; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        size_t n = strlen(line);
        while (n && line[n - 1] == '\r')
            line[--n] = '\0';
        char *shown = strrchr(line, '\r'); /* what the terminal keeps of the line */
        shown = shown ? shown + 1 : line;
        if (strstr(line, "jobs done"))
            progress++;
        const char *p = strstr(shown, "jobs done");
        if (p && strstr(p, "fastbf: "))
            fail_msg("a line of fastbf's glued onto the progress line: %s", shown);
        line = nl ? nl + 1 : NULL;
    }
    assert_true(progress >= 1); /* the final line at least */
    free(tty);
    fbf_test_replay_rmdir(dir);
}

static void test_same_default_policy(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), a[600], b[600];
    snprintf(a, sizeof a, "%s/inproc", dir);
    snprintf(b, sizeof b, "%s/fastbf", dir);
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--quiet", "--inproc", "--max-jobs", "3000",
                                                       "--out", a, KTH, NULL},
                                 TIMEOUT_MS, &out, &err);
    assert_int_equal(rc, 0);
    free(out), free(err);
    rc = fbf_test_replay_run((const char *const[]){"--quiet", "--scheduler",
                                                   fbf_test_replay_fastbf_path(), "--max-jobs",
                                                   "3000", "--out", b, KTH, NULL},
                             TIMEOUT_MS, &out, &err);
    assert_int_equal(rc, 0);
    free(out), free(err);
    fbf_test_replay_same_jobs(a, b, "no --policy: in process and fastbf", 3000);
    /* and that policy is EASY, as fastbf's --help says. */
    rc = fbf_test_replay_run((const char *const[]){"--quiet", "--inproc", "--policy", "easy",
                                                   "--max-jobs", "3000", "--out", b, KTH, NULL},
                             TIMEOUT_MS, &out, &err);
    assert_int_equal(rc, 0);
    free(out), free(err);
    fbf_test_replay_same_jobs(a, b, "no --policy and --policy easy", 3000);
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_progress_lines),
        cmocka_unit_test(test_child_lines_on_a_terminal),
        cmocka_unit_test(test_same_default_policy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
