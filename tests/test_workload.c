/*
 * test_workload: the SWF and Batsim JSON readers of tools/lib/workload.h,
 * against hand-written files whose every field is known, and the bundled
 * KTH trace. The workloads they refuse, each with its exact error line:
 * test_workload_refusals.
 */
#include <errno.h>
#include <math.h>
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

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

/* Line numbers matter: the skip reasons report the first line of each. */
static const char swf_odd[] =
    "; Version: 2.2\n"                                                       /* 1 */
    "; MaxNodes: 338 (batch partition; 512 total)\n"                         /* 2 */
    "; MaxProcs: 64\n"                                                       /* 3 */
    ";\n"                                                                    /* 4 */
    "\n"                                                                     /* 5 */
    "    1    0   5  100   4  -1  -1   4  200  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 6 */
    "    2   10   0    0   2  -1  -1   2   -1  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 7: run 0 */
    "    3   20   0   50  -1  -1  -1   8    0  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 8: field 8 */
    "    4   30   0   -1   2  -1  -1   2   60  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 9: run -1 */
    "    5   40   0   10  -1  -1  -1  -1   60  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 10: no procs */
    "    6   50   0   10   0  -1  -1   0   60  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 11: no procs */
    "   \n"                                                                  /* 12 */
    "    7   60   0   30   1\n"                                              /* 13: short */
    "    1   70   0   10   1  -1  -1   1   60  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 14: dup */
    "    8   -1   0   10   1  -1  -1   1   60  -1  1  1  1 -1 -1 -1 -1 -1\n" /* 15: sub -1 */
    "; a comment in the middle\n"                                            /* 16 */
    "\t9\t80\t0\t20\t3\t-1\t-1\t3\t25\t-1\t1\t1\t1\t-1\t-1\t-1\t-1\t-1\r\n"; /* 17: tabs, CRLF */

typedef struct expect {
    const char *id;
    double subtime, runtime, walltime;
    int64_t res;
    const char *profile;
} expect;

static const expect swf_jobs[] = {
    {"w0!1", 0, 100, 200, 4, "delay_100"},
    {"w0!2", 10, 0, 1, 2, "delay_0"},
    {"w0!3", 20, 50, 50, 8, "delay_50"},
    {"w0!9", 80, 20, 25, 3, "delay_20"},
};

/* Fields 10 to 18 of an SWF line whose first nine are given. */
#define REST9 " -1 -1 -1 -1 -1 -1 -1 -1 -1"

static void check_jobs(const fbf_workload *wl, const expect *e, size_t n)
{
    assert_int_equal(wl->nb_jobs, n);
    for (size_t i = 0; i < n; i++) {
        const fbf_wl_job *j = &wl->jobs[i];
        assert_string_equal(j->id, e[i].id);
        assert_true(j->subtime == e[i].subtime);
        assert_true(j->runtime == e[i].runtime);
        assert_true(j->walltime == e[i].walltime);
        assert_int_equal(j->res, e[i].res);
        assert_string_equal(wl->profiles[j->profile].name, e[i].profile);
        assert_true(wl->profiles[j->profile].delay == e[i].runtime);
        assert_int_equal(fbf_workload_find(wl, e[i].id), (int64_t)i);
    }
}

static void check_swf_odd(const char *path)
{
    fbf_error err;
    /* Line 13 has 5 fields: an error naming it, unless skipped. */
    errno = 0;
    assert_null(fbf_workload_read(path, NULL, &err));
    assert_int_equal(errno, EINVAL);
    if (!strstr(err.text, "/odd.swf") || !strstr(err.text, ": line 13: 5 fields, an SWF job "
                                                           "line has 18"))
        fail_msg("error '%s'", err.text);
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.skip_short_lines = true;
    fbf_workload *wl = fbf_workload_read(path, &o, &err);
    assert_non_null(wl);
    assert_int_equal(wl->format, FBF_WL_SWF);
    check_jobs(wl, swf_jobs, 4);
    assert_int_equal(wl->nb_res, 64); /* MaxProcs wins over an earlier MaxNodes */
    assert_int_equal(wl->nb_profiles, 4);
    assert_int_equal(wl->lines, 17);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_NEG_RUNTIME], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_NEG_RUNTIME], 9);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_NO_PROCS], 2);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_NO_PROCS], 10);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_DUPLICATE_ID], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_DUPLICATE_ID], 14);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_NEG_SUBTIME], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_NEG_SUBTIME], 15);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_SHORT_LINE], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_SHORT_LINE], 13);
    assert_int_equal(fbf_workload_skipped_total(wl), 6);
    assert_int_equal(fbf_workload_find(wl, "w0!4"), -1);
    assert_int_equal(fbf_workload_find(wl, "w0!"), -1);
    assert_non_null(strstr(wl->path, "/odd.swf"));
    fbf_workload_destroy(wl);
}

static void test_swf_odd_lines_plain(void **state)
{
    (void)state;
    check_swf_odd(fbf_test_tmp_write("odd.swf", swf_odd));
}

static void test_swf_odd_lines_gzip(void **state)
{
    (void)state;
    check_swf_odd(fbf_test_tmp_write("odd.swf.gz", swf_odd));
}

static uint32_t header_size(const char *text)
{
    fbf_error err;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.allow_empty = true;
    fbf_workload *wl = fbf_workload_read(fbf_test_tmp_write("h.swf", text), &o, &err);
    assert_non_null(wl);
    uint32_t n = wl->nb_res;
    fbf_workload_destroy(wl);
    return n;
}

#define JOB1 "1 0 0 5 1 -1 -1 1 10" REST9 "\n"

static void test_swf_header_size(void **state)
{
    (void)state;
    assert_int_equal(header_size("; MaxNodes: 338 (batch partition; 512 total)\n" JOB1), 338);
    assert_int_equal(header_size(";MaxProcs:100\n; MaxNodes: 50\n" JOB1), 100);
    assert_int_equal(header_size("; MaxProcs: -1\n; MaxNodes: 10\n" JOB1), 10);
    assert_int_equal(header_size("; MaxProcs: 12\n; MaxProcs: 99\n" JOB1), 12);
    assert_int_equal(header_size("; Computer: none\n" JOB1), 0);
    assert_int_equal(header_size(""), 0);
}

static void test_swf_walltime_modes(void **state)
{
    (void)state;
    const char *p = fbf_test_tmp_write("w.swf", "1 0 0 100 4 -1 -1 4 200" REST9 "\n"
                                                "2 0 0 0 1 -1 -1 1 50" REST9 "\n"
                                                "3 0 0 0.2 1 -1 -1 1 50" REST9 "\n");
    fbf_error err;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.walltime_mode = FBF_WL_WALLTIME_RUNTIME;
    fbf_workload *wl = fbf_workload_read(p, &o, &err);
    assert_non_null(wl);
    assert_true(wl->jobs[0].walltime == 100);
    assert_true(wl->jobs[1].walltime == 1);
    assert_true(wl->jobs[2].walltime == 0.2);
    assert_string_equal(wl->profiles[wl->jobs[2].profile].name, "delay_0.2");
    fbf_workload_destroy(wl);
    o.walltime_mode = FBF_WL_WALLTIME_FACTOR;
    o.walltime_factor = 2.5;
    wl = fbf_workload_read(p, &o, &err);
    assert_non_null(wl);
    assert_true(wl->jobs[0].walltime == 250);
    assert_true(wl->jobs[1].walltime == 1);
    assert_true(wl->jobs[2].walltime == 1);
    fbf_workload_destroy(wl);
    o.walltime_factor = 0;
    assert_null(fbf_workload_read(p, &o, &err));
    assert_int_equal(errno, EINVAL);
    assert_non_null(strstr(err.text, "factor"));
}

/* A walltime of factor x runtime that overflows is refused, whichever
 * reader made it, rather than handed on as an infinite walltime. */
static void test_walltime_factor_overflow(void **state)
{
    (void)state;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.walltime_mode = FBF_WL_WALLTIME_FACTOR;
    o.walltime_factor = 1.5;
    fbf_error err;
    errno = 0;
    assert_null(fbf_workload_read(
        fbf_test_tmp_write("big.json",
                           "{\"nb_res\": 1, \"jobs\": [{\"id\": 1, \"subtime\": 0, \"res\": 1, "
                           "\"profile\": \"p\"}], \"profiles\": {\"p\": "
                           "{\"type\": \"delay\", \"delay\": 1.5e308}}}"),
        &o, &err));
    assert_int_equal(errno, EINVAL);
    if (!strstr(err.text, "job w0!1: walltime inf"))
        fail_msg("error '%s'", err.text);
    o.walltime_factor = 1e300;
    errno = 0;
    assert_null(
        fbf_workload_read(fbf_test_tmp_write("big.swf", "1 0 -1 10 1 -1 -1 1 -1" REST9 "\n"
                                                        "2 0 -1 9e15 1 -1 -1 1 -1" REST9 "\n"),
                          &o, &err));
    assert_int_equal(errno, EINVAL);
    if (!strstr(err.text, "job w0!2: walltime inf"))
        fail_msg("error '%s'", err.text);
}

/* A NUL byte inside a line is an error naming the line: read as a C
 * string, the line would end there, and the next line would be appended
 * to what came before it (job 2 lost as fields 10-14 of job 1). */
static void test_swf_nul_byte(void **state)
{
    (void)state;
    static const char text[] = "1 0 -1 10 4 \0 junk\n2 0 -1 10 4\n";
    const char *path = fbf_test_tmp_path("nul.swf");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
    assert_int_equal(fclose(f), 0);
    fbf_error err;
    errno = 0;
    assert_null(fbf_workload_read(path, NULL, &err));
    assert_int_equal(errno, EINVAL);
    if (!strstr(err.text, "nul.swf: line 1: a NUL byte"))
        fail_msg("error '%s'", err.text);
}

static void test_swf_max_jobs(void **state)
{
    (void)state;
    fbf_error err;
    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.max_jobs = 2;
    fbf_workload *wl = fbf_workload_read(fbf_test_tmp_write("m.swf", swf_odd), &o, &err);
    assert_non_null(wl);
    check_jobs(wl, swf_jobs, 2);
    assert_int_equal(wl->nb_res, 64);
    fbf_workload_destroy(wl);
    o.max_jobs = 0;
    assert_null(fbf_workload_read(fbf_test_tmp_write("m.swf", swf_odd), &o, &err));
    assert_non_null(strstr(err.text, "m.swf: no jobs (--max-jobs 0 keeps none)"));
    o.allow_empty = true;
    wl = fbf_workload_read(fbf_test_tmp_write("m.swf", swf_odd), &o, &err);
    assert_non_null(wl);
    assert_int_equal(wl->nb_jobs, 0);
    fbf_workload_destroy(wl);
}

/* Reading the file name (gzip-compressed when it ends in .gz) holding text
 * must fail with errno code and an error naming s1 and, unless NULL, s2. */
static void expect_error(const char *name, const char *text, int code, const char *s1,
                         const char *s2)
{
    fbf_error err;
    err.text[0] = '\0';
    errno = 0;
    assert_null(fbf_workload_read(fbf_test_tmp_write(name, text), NULL, &err));
    assert_int_equal(errno, code);
    if (!strstr(err.text, s1) || (s2 && !strstr(err.text, s2)))
        fail_msg("error '%s' lacks '%s' / '%s'", err.text, s1, s2 ? s2 : "");
}

static void test_swf_errors(void **state)
{
    (void)state;
    expect_error("e1.swf", "; MaxProcs: 4\n" JOB1 "2 0 0 abc 4\n", EINVAL, "line 3",
                 "field 4 'abc' is not a number");
    expect_error("e2.swf", "1.5 0 0 10 1 -1 -1 1 -1" REST9 "\n", EINVAL, "line 1", "job number");
    expect_error("e3.swf.gz", "\n\n 7 1e 0 10 1\n", EINVAL, "line 3", "field 2 '1e'");
    /* Numbers too large to be a time or a count: an infinite processor
     * count cannot convert to res, an infinite time cannot be replayed. */
    expect_error("e4.swf", "1 0 -1 10 1e999\n", EINVAL, "line 1", "field 5 inf is out of range");
    expect_error("e5.swf", JOB1 "2 1e300 -1 10 2\n", EINVAL, "line 2",
                 "field 2 1e+300 is out of range");
    expect_error("e6.swf", "1 0 -1 -1e999 2\n", EINVAL, "line 1", "field 4 -inf is out of range");
    fbf_error err;
    assert_null(fbf_workload_read(fbf_test_tmp_path("no-such-file.swf"), NULL, &err));
    assert_int_equal(errno, ENOENT);
    assert_non_null(strstr(err.text, "cannot open"));
    assert_non_null(strstr(err.text, "no-such-file.swf"));
    assert_null(fbf_workload_read(fbf_test_tmpdir(), NULL, &err));
    assert_int_equal(errno, EISDIR);
}

static const char json_ok[] =
    "{\"nb_res\": 4, \"jobs\": [\n"
    " {\"id\": \"a\", \"subtime\": 0, \"res\": 2, \"walltime\": 10, \"profile\": \"p10\"},\n"
    " {\"id\": 7, \"subtime\": 5.5, \"res\": 1, \"profile\": \"p5\"},\n"
    " {\"id\": \"other!x\", \"subtime\": 1, \"res\": 8, \"walltime\": -1, \"profile\": \"p10\"},\n"
    " {\"id\": \"z\", \"subtime\": 2, \"res\": 0, \"walltime\": 3, \"profile\": \"p5\"}\n"
    "], \"profiles\": {\"p10\": {\"type\": \"delay\", \"delay\": 10},\n"
    "  \"p5\": {\"type\": \"delay\", \"delay\": 5},\n"
    "  \"unused\": {\"type\": \"parallel_homogeneous\", \"cpu\": 1, \"com\": 0}}}\n";

static void test_json_workload(void **state)
{
    (void)state;
    static const expect e[] = {
        {"w0!a", 0, 10, 10, 2, "p10"},
        {"w0!7", 5.5, 5, -1, 1, "p5"},
        {"other!x", 1, 10, -1, 8, "p10"},
        {"w0!z", 2, 5, 3, 0, "p5"},
    };
    fbf_error err;
    fbf_workload *wl = fbf_workload_read(fbf_test_tmp_write("w.json", json_ok), NULL, &err);
    if (!wl)
        fail_msg("%s", err.text);
    assert_int_equal(wl->format, FBF_WL_JSON);
    assert_int_equal(wl->nb_res, 4);
    assert_int_equal(wl->nb_profiles, 2); /* only the profiles jobs use */
    check_jobs(wl, e, 4);
    fbf_workload_destroy(wl);

    fbf_wl_read_options o = FBF_WL_READ_DEFAULTS;
    o.walltime_mode = FBF_WL_WALLTIME_RUNTIME;
    o.name = "trace";
    wl = fbf_workload_read(fbf_test_tmp_write("w.json.gz", json_ok), &o, &err);
    assert_non_null(wl);
    assert_string_equal(wl->jobs[0].id, "trace!a");
    assert_true(wl->jobs[1].walltime == 5);
    assert_true(wl->jobs[2].walltime == 10);
    assert_int_equal(fbf_workload_find(wl, "trace!7"), 1);
    fbf_workload_destroy(wl);

    /* No job: allowed only when asked (jobs registered later). */
    const char *none = fbf_test_tmp_write("n.json", "  {\"nb_res\": 3, \"jobs\": [], "
                                                    "\"profiles\": {}}");
    assert_null(fbf_workload_read(none, NULL, &err));
    assert_non_null(strstr(err.text, "n.json: no jobs: the \"jobs\" array is empty"));
    o = (fbf_wl_read_options)FBF_WL_READ_DEFAULTS;
    o.allow_empty = true;
    wl = fbf_workload_read(none, &o, &err);
    assert_non_null(wl);
    assert_int_equal(wl->nb_res, 3);
    assert_int_equal(wl->nb_jobs, 0);
    fbf_workload_destroy(wl);
}

static void test_memory_workload(void **state)
{
    (void)state;
    fbf_error err;
    fbf_workload *wl = fbf_workload_create(NULL, &err);
    assert_non_null(wl);
    assert_int_equal(fbf_workload_add_job(wl, "1", 0, 10, 20, 2, &err), 0);
    assert_int_equal(fbf_workload_add_job(wl, "w1!1", 5, 10, -1, 1, &err), 0);
    assert_int_equal(fbf_workload_add_job(wl, "2", 7, 0.5, 1, 3, &err), 0);
    assert_int_equal(fbf_workload_add_job(wl, "1", 9, 1, 1, 1, &err), -EEXIST);
    assert_non_null(strstr(err.text, "w0!1"));
    assert_int_equal(fbf_workload_add_job(wl, "3", 0, -1, 1, 1, &err), -EINVAL);
    assert_int_equal(fbf_workload_add_job(wl, "3", 0, 1, 0, 1, &err), -EINVAL);
    assert_int_equal(wl->nb_jobs, 3);
    assert_int_equal(wl->nb_profiles, 2);
    assert_string_equal(wl->jobs[1].id, "w1!1");
    assert_string_equal(wl->profiles[wl->jobs[1].profile].name, "delay_10");
    assert_string_equal(wl->profiles[wl->jobs[2].profile].name, "delay_0.5");
    assert_int_equal(fbf_workload_find(wl, "w0!2"), 2);
    assert_null(wl->path);
    fbf_workload_destroy(wl);
    fbf_workload_destroy(NULL);
    assert_null(fbf_workload_create("a!b", &err));
}

/* zlib's buffer is sized by the file (tools/lib/workload.c): a gzip file
 * of a few KiB holding a text of hundreds, with a line longer than the
 * smallest buffer, reads whole, as the plain text does. */
static void test_swf_text_larger_than_file(void **state)
{
    (void)state;
    size_t cap = 400 * 1024, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    for (int i = 1; i <= 4000; i++) {
        len += (size_t)snprintf(text + len, cap - len, "%d %d 0 100 1 -1 -1 1 200" REST9 "\n", i, i * 10);
        if (i == 2000) {
            text[len++] = ';';
            memset(text + len, 'x', 20000);
            len += 20000;
            text[len++] = '\n';
        }
    }
    text[len] = '\0';
    static const char *const names[] = {"long.swf", "long.swf.gz"};
    for (int k = 0; k < 2; k++) {
        fbf_error err;
        fbf_workload *wl = fbf_workload_read(fbf_test_tmp_write(names[k], text), NULL, &err);
        if (!wl)
            fail_msg("%s: %s", names[k], err.text);
        assert_int_equal(wl->nb_jobs, 4000);
        assert_int_equal(wl->lines, 4001);
        assert_string_equal(wl->jobs[3999].id, "w0!4000");
        assert_true(wl->jobs[3999].subtime == 40000);
        fbf_workload_destroy(wl);
    }
    free(text);
}

static void test_kth_trace(void **state)
{
    (void)state;
    fbf_error err;
    fbf_workload *wl =
        fbf_workload_read(FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz", NULL, &err);
    if (!wl)
        fail_msg("%s", err.text);
    assert_int_equal(wl->nb_jobs, 28475);
    assert_int_equal(wl->nb_res, 100);
    assert_int_equal(fbf_workload_skipped_total(wl), 1);
    assert_int_equal(wl->skipped[FBF_WL_SKIP_NO_PROCS], 1);
    assert_int_equal(wl->first_skipped_line[FBF_WL_SKIP_NO_PROCS], 27323);
    const fbf_wl_job *j = &wl->jobs[0];
    assert_string_equal(j->id, "w0!15");
    assert_true(j->subtime == 599850 && j->runtime == 3477 && j->walltime == 53940);
    assert_int_equal(j->res, 4);
    assert_int_equal(fbf_workload_find(wl, "w0!27313"), -1); /* the skipped one */
    assert_int_equal(fbf_workload_find(wl, "w0!16"), 1);
    fbf_workload_destroy(wl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_swf_odd_lines_plain),
        cmocka_unit_test(test_swf_odd_lines_gzip),
        cmocka_unit_test(test_swf_header_size),
        cmocka_unit_test(test_swf_walltime_modes),
        cmocka_unit_test(test_walltime_factor_overflow),
        cmocka_unit_test(test_swf_nul_byte),
        cmocka_unit_test(test_swf_max_jobs),
        cmocka_unit_test(test_swf_errors),
        cmocka_unit_test(test_json_workload),
        cmocka_unit_test(test_memory_workload),
        cmocka_unit_test(test_swf_text_larger_than_file),
        cmocka_unit_test(test_kth_trace),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
