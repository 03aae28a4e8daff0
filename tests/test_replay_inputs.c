/*
 * test_replay_inputs: the workload checks as a user meets them, through
 * fastbf-replay and fastbf --register-workload: one line on stderr, exit
 * status 2, nothing run (test_workload and test_workload_refusals check
 * every reason of the reader itself):
 *
 *  - an SWF line of fewer than 18 fields names the file and the line;
 *    --skip-short-lines skips it and the summary and summary.json count it;
 *  - a workload with no job is refused, but with --dynamic-jobs;
 *  - a JSON workload Batsim would refuse, with Batsim's reason;
 *  - fastbf's --register-workload applies the same checks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#define TIMEOUT_MS 60000
#define REST9 " -1 -1 -1 -1 -1 -1 -1 -1 -1"

typedef struct cli_case {
    const char *file, *text;
    const char *flag; /* an extra option, or NULL */
    const char *want; /* the whole line on stderr, %s the file's absolute path */
} cli_case;

static void test_refused_workloads(void **state)
{
    (void)state;
    static const cli_case cases[] = {
        {"short.swf", "; MaxProcs: 4\n1 0 -1 10 2 -1 -1 2 10" REST9 "\n2 0 -1 10 2 -1 -1 2 10\n",
         NULL,
         "fastbf-replay: %s: line 3: 9 fields, an SWF job line has 18 (--skip-short-lines skips "
         "such lines)\n"},
        {"allshort.swf", "; MaxProcs: 4\n1 0 -1 10 2\n", "--skip-short-lines",
         "fastbf-replay: %s: no jobs: every job line was skipped (1 fewer than 18 fields)\n"},
        {"none.swf", "; MaxProcs: 4\n", NULL,
         "fastbf-replay: %s: no jobs: no job line among 1 line\n"},
        {"none.json", "{\"nb_res\": 4, \"jobs\": [], \"profiles\": {}}", NULL,
         "fastbf-replay: %s: no jobs: the \"jobs\" array is empty\n"},
        {"neg.json",
         "{\"nb_res\": 4, \"jobs\": [{\"id\": 1, \"subtime\": 0, \"res\": 1, \"profile\": \"p\"}, "
         "{\"id\": 2, \"subtime\": 0, \"res\": -2, \"profile\": \"p\"}], "
         "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 5}}}",
         NULL,
         "fastbf-replay: Invalid JSON file '%s': job w0!2 has a negative 'res' field (-2) "
         "(jobs[1])\n"},
        {"nosub.json",
         "{\"nb_res\": 4, \"jobs\": [{\"id\": 1, \"res\": 1, \"profile\": \"p\"}], "
         "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 5}}}",
         NULL,
         "fastbf-replay: Invalid JSON file '%s': job 'w0!1' has no 'subtime' field (jobs[0])\n"},
        {"noprof.json",
         "{\"nb_res\": 4, \"jobs\": [{\"id\": 1, \"subtime\": 0, \"res\": 1, \"profile\": \"q\"}], "
         "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 5}}}",
         NULL,
         "fastbf-replay: Invalid JSON file '%s': the profile q for job w0!1 does not exist "
         "(jobs[0])\n"},
        {"dup.json",
         "{\"nb_res\": 4, \"jobs\": [{\"id\": 1, \"subtime\": 0, \"res\": 1, \"profile\": \"p\"}, "
         "{\"id\": \"1\", \"subtime\": 3, \"res\": 1, \"profile\": \"p\"}], "
         "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 5}}}",
         NULL, "fastbf-replay: Invalid JSON file '%s': duplication of job id 'w0!1' (jobs[1])\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const cli_case *c = &cases[i];
        const char *path = fbf_test_tmp_write(c->file, c->text);
        char *abs = realpath(path, NULL), want[4096];
        assert_non_null(abs);
        snprintf(want, sizeof want, c->want, abs);
        free(abs);
        char *out = NULL, *err = NULL;
        const char *args[] = {"--inproc", c->flag ? c->flag : path, c->flag ? path : NULL, NULL};
        int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
        if (rc != 2 || !err || strcmp(err, want) != 0)
            fail_msg("%s: exit %d, stderr:\n%s\nwant:\n%s", c->file, rc, err ? err : "", want);
        if (out && *out)
            fail_msg("%s: a summary was printed for a refused workload:\n%s", c->file, out);
        free(out);
        free(err);
    }
}

/* Skipped short lines are counted where the other skips are. */
static void test_skip_short_lines(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("skip.swf", "; MaxProcs: 4\n"
                                                    "1 0 -1 10 2 -1 -1 2 10" REST9 "\n"
                                                    "2 0 -1 10 2\n"
                                                    "3 0 -1 10 0 -1 -1 0 10" REST9 "\n"
                                                    "4 0 -1 10 2 -1 -1 2 10 -1\n");
    const char *out = fbf_test_tmp_path("skip");
    char *so = NULL, *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--inproc", "--skip-short-lines", "--out",
                                                       out, wl, NULL},
                                 TIMEOUT_MS, &so, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    assert_non_null(strstr(so, "1 completed (1 successfully, 0 at walltime), 0 killed, 0 "
                               "rejected, 3 skipped\n"));
    assert_non_null(strstr(so, "  skipped    2: fewer than 18 fields (first at line 3)\n"));
    assert_non_null(strstr(so, "  skipped    1: no processors (first at line 4)\n"));
    assert_true(fbf_test_replay_summary(out, "skipped.fewer than 18 fields") == 2);
    assert_true(fbf_test_replay_summary(out, "jobs.skipped") == 3);
    free(so);
    free(err);
}

/* Jobs that only the scheduler registers: an empty file is fine then. */
static void test_empty_with_dynamic_jobs(void **state)
{
    (void)state;
    const char *wl = fbf_test_tmp_write("dyn-empty.json",
                                        "{\"nb_res\": 4, \"jobs\": [], \"profiles\": {}}");
    const char *plan = fbf_test_tmp_write("plan.swf", "1 0 -1 10 2 -1 -1 2 10" REST9 "\n");
    char sched[4200];
    snprintf(sched, sizeof sched, "%s --register-workload %s", fbf_test_replay_fastbf_path(),
             plan);
    char *err = NULL;
    int rc = fbf_test_replay_run((const char *const[]){"--scheduler", sched, "--dynamic-jobs",
                                                       "--quiet", wl, NULL},
                                 TIMEOUT_MS, NULL, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(err);
}

/* fastbf --register-workload FILE reads FILE with the same checks. */
static int run_fastbf(const char *const *args, char **err_text)
{
    char cmd[8192];
    size_t n = (size_t)snprintf(cmd, sizeof cmd, "%s", fbf_test_replay_fastbf_path());
    for (size_t i = 0; args[i]; i++)
        n += (size_t)snprintf(cmd + n, sizeof cmd - n, " '%s'", args[i]);
    const char *errpath = fbf_test_tmp_path("fastbf.err");
    snprintf(cmd + n, sizeof cmd - n, " </dev/null >/dev/null 2>'%s'", errpath);
    int st = system(cmd);
    *err_text = fbf_test_replay_read(errpath);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_fastbf_register_workload(void **state)
{
    (void)state;
    const char *plan = fbf_test_tmp_write("plan-short.swf", "1 0 -1 10 2 -1 -1 2 10\n");
    char *abs = realpath(plan, NULL), want[4096];
    assert_non_null(abs);
    snprintf(want, sizeof want, "fastbf: --register-workload: %s: line 1: 9 fields, an SWF job "
                                "line has 18 (--skip-short-lines skips such lines)\n",
             abs);
    char *err = NULL;
    int rc = run_fastbf((const char *const[]){"--register-workload", plan, NULL}, &err);
    if (rc != 2 || !err || strcmp(err, want) != 0)
        fail_msg("exit %d, stderr:\n%s\nwant:\n%s", rc, err ? err : "", want);
    free(err);
    snprintf(want, sizeof want, "fastbf: --register-workload: %s: no jobs: every job line was "
                                "skipped (1 fewer than 18 fields)\n",
             abs);
    free(abs);
    rc = run_fastbf((const char *const[]){"--register-workload", plan, "--skip-short-lines", NULL},
                    &err);
    if (rc != 2 || !err || strcmp(err, want) != 0)
        fail_msg("exit %d, stderr:\n%s\nwant:\n%s", rc, err ? err : "", want);
    free(err);
    rc = run_fastbf((const char *const[]){"--skip-short-lines", NULL}, &err);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(err, "--skip-short-lines goes with --register-workload"));
    free(err);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_workloads),
        cmocka_unit_test(test_skip_short_lines),
        cmocka_unit_test(test_empty_with_dynamic_jobs),
        cmocka_unit_test(test_fastbf_register_workload),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
