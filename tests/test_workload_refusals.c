/*
 * test_workload_refusals: every workload the readers of tools/lib/workload.h
 * refuse, each with exactly its one error line: what Batsim 4.2.1 refuses
 * when it loads a JSON workload, in its words and its order, then what only
 * the replay cannot run; SWF lines too short to be a job, and SWF files
 * with no job to replay. What the readers accept: test_workload.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "support/testkit.h"
#include "tools/lib/workload.h"

/* Fields 10 to 18 of an SWF line whose first nine are given. */
#define REST9 " -1 -1 -1 -1 -1 -1 -1 -1 -1"

#define JOB1 "1 0 0 5 1 -1 -1 1 10" REST9 "\n"

/* A hygiene case: the file's text, and the whole error line expected,
 * "%s" standing for the file's absolute path. */
typedef struct bad_case {
    const char *text, *want;
} bad_case;

/* Each text must be refused with exactly its line (EINVAL); opt NULL:
 * the defaults. */
static void expect_refusals(const char *ext, const bad_case *c, size_t n,
                            const fbf_wl_read_options *opt)
{
    for (size_t i = 0; i < n; i++) {
        char name[32], want[4096];
        snprintf(name, sizeof name, "bad%zu.%s", i, ext);
        const char *path = fbf_test_tmp_write(name, c[i].text);
        char *abs = realpath(path, NULL);
        assert_non_null(abs);
        snprintf(want, sizeof want, c[i].want, abs);
        free(abs);
        fbf_error err;
        err.text[0] = '\0';
        errno = 0;
        fbf_workload *wl = fbf_workload_read(path, opt, &err);
        if (wl)
            fail_msg("case %zu (%s): read, %zu jobs; expected '%s'", i, c[i].text, wl->nb_jobs,
                     want);
        if (errno != EINVAL || strcmp(err.text, want) != 0)
            fail_msg("case %zu (%s):\n got '%s' (errno %d)\nwant '%s'", i, c[i].text, err.text,
                     errno, want);
    }
}

#define B "Invalid JSON file '%s': "
#define PROF_P "\"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 3}}"
#define WL(jobs) "{\"nb_res\": 4, " PROF_P ", \"jobs\": [" jobs "]}"
#define JOB_A(fields) "{\"id\": \"a\", " fields "}"

/* What Batsim 4.2.1 refuses when it loads a workload, refused with its
 * text (src/workload.cpp, profiles.cpp, jobs.cpp), in its order; then
 * what only the replay cannot run. */
static void test_json_refusals(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"{\"jobs\": [], " PROF_P "}", B "the 'nb_res' field is missing"},
        {"{\"nb_res\": \"4\", \"jobs\": [], " PROF_P "}", B "the 'nb_res' field is not an integer"},
        {"{\"nb_res\": 2.5, \"jobs\": [], " PROF_P "}", B "the 'nb_res' field is not an integer"},
        {"{\"nb_res\": 2147483648, \"jobs\": [], " PROF_P "}",
         B "the 'nb_res' field is not an integer"},
        {"{\"nb_res\": 0, \"jobs\": [], " PROF_P "}",
         B "the value of the 'nb_res' field is invalid (0)"},
        {"{\"nb_res\": 1, \"jobs\": []}", B "the 'profiles' object is missing"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": []}",
         B "the 'profiles' member is not an object"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": 3}}",
         B "profile 'p' value must be an object"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"delay\": 3}}}",
         B "profile 'p' has no 'type' field"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": 1}}}",
         B "profile 'p' has a non-string 'type' field"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": \"delay\"}}}",
         B "profile 'p' has no 'delay' field"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": "
         "\"3\"}}}",
         B "profile 'p' has a non-number 'delay' field"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": "
         "0}}}",
         B "profile 'p' has a non-strictly-positive 'delay' field (0)"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": "
         "-2.5}}}",
         B "profile 'p' has a non-strictly-positive 'delay' field (-2.5)"},
        {"{\"nb_res\": 1, \"jobs\": [], \"profiles\": {\"p\": {\"type\": \"delay\", \"delay\": 3}, "
         "\"q\": {\"type\": \"delay\", \"delay\": 1}, \"p\": {\"type\": \"delay\", \"delay\": 3}}}",
         B "duplication of profile name 'p'"},
        /* Batsim loads every profile, used or not, before any job. */
        {"{\"nb_res\": 1, \"jobs\": [" JOB_A(
             "\"subtime\": -1") "], \"profiles\": {"
                                "\"p\": {\"type\": \"delay\", \"delay\": 3}, \"q\": {\"type\": "
                                "\"delay\"}}}",
         B "profile 'q' has no 'delay' field"},
        {"{\"nb_res\": 1, " PROF_P "}", B "the 'jobs' array is missing"},
        {"{\"nb_res\": 1, \"jobs\": 3, " PROF_P "}", B "the 'jobs' member is not an array"},
        {WL("3"), B "one job is not an object (jobs[0])"},
        {WL("{\"subtime\": 0, \"res\": 1, \"profile\": \"p\"}"),
         B "one job has no 'id' field (jobs[0])"},
        {WL("{\"id\": 1.5, \"subtime\": 0, \"res\": 1, \"profile\": \"p\"}"),
         B "on job id field is invalid, it should be a string or an integer (jobs[0])"},
        {WL("{\"id\": 3000000000, \"subtime\": 0, \"res\": 1, \"profile\": \"p\"}"),
         B "on job id field is invalid, it should be a string or an integer (jobs[0])"},
        {WL(JOB_A("\"res\": 1, \"profile\": \"p\"")),
         B "job 'w0!a' has no 'subtime' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": \"0\", \"res\": 1, \"profile\": \"p\"")),
         B "job 'w0!a' has a non-number 'subtime' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"walltime\": \"10\", \"res\": 1, \"profile\": \"p\"")),
         B "job w0!a has a non-number 'walltime' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"walltime\": 0, \"res\": 1, \"profile\": \"p\"")),
         B "job 'w0!a' has an invalid walltime (0). It should either be -1 (no walltime) or a "
           "strictly positive number. (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"walltime\": -2, \"res\": 1, \"profile\": \"p\"")),
         B "job 'w0!a' has an invalid walltime (-2). It should either be -1 (no walltime) or a "
           "strictly positive number. (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"profile\": \"p\"")),
         B "job w0!a has no 'res' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": \"2\", \"profile\": \"p\"")),
         B "job w0!a has a non-number 'res' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": 1.5, \"profile\": \"p\"")),
         B "job w0!a has a non-number 'res' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": -2, \"profile\": \"p\"")),
         B "job w0!a has a negative 'res' field (-2) (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": 1")), B "job w0!a has no 'profile' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": 1, \"profile\": 3")),
         B "job w0!a has a non-string 'profile' field (jobs[0])"},
        {WL(JOB_A("\"subtime\": 0, \"res\": 1, \"profile\": \"zz\"")),
         B "the profile zz for job w0!a does not exist (jobs[0])"},
        {WL(JOB_A(
             "\"subtime\": 0, \"res\": 1, \"profile\": \"p\"") ", "
                                                               "{\"id\": \"w0!a\", \"subtime\": 0, "
                                                               "\"res\": 1, \"profile\": \"p\"}"),
         B "duplication of job id 'w0!a' (jobs[1])"},
        {"{\"nb_res\": 1,\n \"jobs\": [1,, ]}", B "could not be parsed (line 2, column 13)"},
        {"{\"nb_res\": 1, \"jobs\": [], " PROF_P "}\n {\"jobs\": []}\n",
         B "could not be parsed (unexpected bytes after the JSON workload at line 2, column 2)"},
        /* Loaded by Batsim, but not replayable: fastbf's own words. */
        {"{\"nb_res\": 1, \"jobs\": [" JOB_A(
             "\"subtime\": 0, \"res\": 1, \"profile\": \"q\"") "], "
                                                               "\"profiles\": {\"q\": {\"type\": "
                                                               "\"parallel\", \"cpu\": [1], "
                                                               "\"com\": [0]}}}",
         "%s: job w0!a: profile 'q' has type 'parallel'; only \"delay\" profiles can be replayed"},
        {"{\"nb_res\": 1, \"jobs\": [" JOB_A(
             "\"subtime\": 0, \"res\": 1, \"profile\": \"p\"") "], "
                                                               "\"profiles\": {\"p\": {\"type\": "
                                                               "\"delay\", \"delay\": 3, \"ret\": "
                                                               "1}}}",
         "%s: job w0!a: profile 'p' has a \"ret\" other than 0 (Batsim fails its jobs); only "
         "jobs that succeed can be replayed"},
        {WL(JOB_A("\"subtime\": -1, \"res\": 1, \"profile\": \"p\"")),
         "%s: job w0!a (jobs[0]): subtime -1 cannot be replayed (a finite number >= 0 is "
         "needed)"},
        {WL(""), "%s: no jobs: the \"jobs\" array is empty"},
    };
    expect_refusals("json", cases, sizeof cases / sizeof *cases, NULL);
    /* What Batsim accepts reads: res 0, the largest 32-bit res, an
     * integer id, walltime -1, a profile of another type no job uses. */
    fbf_error err;
    fbf_workload *wl = fbf_workload_read(
        fbf_test_tmp_write("okish.json",
                           "{\"nb_res\": 1, \"jobs\": ["
                           "{\"id\": -3, \"subtime\": 0, \"res\": 0, \"profile\": \"p\"},"
                           "{\"id\": \"b\", \"subtime\": 1, \"walltime\": -1, \"res\": 2147483647, "
                           "\"profile\": \"p\"}], \"profiles\": {\"p\": {\"type\": \"delay\", "
                           "\"delay\": 3, \"ret\": 0}, \"x\": {\"type\": \"smpi\"}}}"),
        NULL, &err);
    if (!wl)
        fail_msg("%s", err.text);
    assert_string_equal(wl->jobs[0].id, "w0!-3");
    assert_int_equal(wl->jobs[1].res, 2147483647);
    fbf_workload_destroy(wl);
}

/* SWF: a job line has 18 fields; a file with no job replays nothing. */
static void test_swf_refusals(void **state)
{
    (void)state;
    static const bad_case cases[] = {
        {"1 0 0 10 1\n", "%s: line 1: 5 fields, an SWF job line has 18 (--skip-short-lines "
                         "skips such lines)"},
        {"; MaxProcs: 4\n" JOB1 "2\n", "%s: line 3: 1 field, an SWF job line has 18 "
                                       "(--skip-short-lines skips such lines)"},
        {"1 0 0 10 1 -1 -1 1 10 -1 -1 -1 -1 -1 -1 -1 -1\n",
         "%s: line 1: 17 fields, an SWF job line has 18 (--skip-short-lines skips such lines)"},
        {"", "%s: no jobs: no job line among 0 lines"},
        {"; MaxProcs: 4\n;\n\n", "%s: no jobs: no job line among 3 lines"},
        {"1 0 0 10 0 -1 -1 0 10" REST9 "\n2 0 0 -1 1 -1 -1 1 10" REST9 "\n",
         "%s: no jobs: every job line was skipped (1 no processors, 1 negative run time)"},
    };
    expect_refusals("swf", cases, sizeof cases / sizeof *cases, NULL);
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.skip_short_lines = true;
    static const bad_case skipped[] = {
        {"1 0 0 10 1\n2\n", "%s: no jobs: every job line was skipped (2 fewer than 18 fields)"},
    };
    expect_refusals("swf", skipped, 1, &o);
    /* 18 fields or more read; a short line skipped is counted. */
    fbf_error err;
    fbf_workload *wl = fbf_workload_read(
        fbf_test_tmp_write("full.swf", JOB1 "2 0 0 5 1\n3 0 0 5 1 -1 -1 1 10" REST9 " 7 7\n"), &o,
        &err);
    if (!wl)
        fail_msg("%s", err.text);
    assert_int_equal(wl->nb_jobs, 2);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_SHORT_LINE], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_SHORT_LINE], 2);
    fbf_workload_destroy(wl);
}
int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_refusals),
        cmocka_unit_test(test_swf_refusals),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
