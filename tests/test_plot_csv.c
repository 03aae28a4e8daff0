/*
 * test_plot_csv: fastbf-plot's reading of out_jobs.csv (tools/plot/plot_csv.h)
 * and the numbers it draws (tools/plot/plot_series.h), without gnuplot.
 *
 * Checked: Batsim 4.2.1's own jobs file (observed rows: a rejected job
 * with metadata, a quoted metadata holding commas) and fastbf's
 * --tag-starts words; columns found by name in any order, CRLF, a byte
 * order mark, gzip; interval sets, valid and not; every malformed row
 * refused with its exact one-line message (row, line, job, column); the
 * time window's edges (half-open, jobs of 0 s); utilisation and queue
 * length as exact time-weighted means, minima and maxima per bin; wait
 * percentiles per power-of-two size class; colours per mode.
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
#include <math.h>

#include "support/testkit.h"
#include "tools/plot/plot_csv.h"
#include "tools/plot/plot_series.h"

#define HEADER                                                                                     \
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"   \
    "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"   \
    "stretch,allocated_resources,consumed_energy,metadata\n"

/* Batsim 4.2.1's out_jobs.csv of three jobs, as observed (shared/protocols). */
static const char batsim_three[] =
    HEADER "1,w0,d10,0.000000,1,50.000000,0,REJECTED,,,,,,,,,\"before reject\"\n"
           "2,w0,d10,0.000000,2,50.000000,1,COMPLETED_SUCCESSFULLY,0.000135,10.000000,10.000135,"
           "0.000135,10.000135,1.000014,0-1,-1.000000,\"k=v, x='y'; z\"\n"
           "3,w0,d10,0.000000,1,50.000000,1,COMPLETED_SUCCESSFULLY,0.000150,10.000000,10.000150,"
           "0.000150,10.000150,1.000015,2,-1.000000,\"\"\n";

static void parse_ok(fbf_plot_jobs *J, const char *text)
{
    fbf_error err = {{0}};
    int rc = fbf_plot_jobs_parse(J, text, strlen(text), &err);
    if (rc)
        fail_msg("parse: %d: %s", rc, err.text);
}

static void test_batsim_file(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, batsim_three);
    assert_int_equal(J.n, 3);
    assert_int_equal(J.count[FBF_PLOT_REJECTED], 1);
    assert_int_equal(J.count[FBF_PLOT_SUCCESS], 2);
    assert_string_equal(fbf_plot_job_id(&J, &J.jobs[1]), "2");
    assert_int_equal(J.jobs[1].line, 3);
    assert_true(J.jobs[1].start == 0.000135 && J.jobs[1].finish == 10.000135);
    assert_int_equal(J.jobs[1].nranges, 1);
    assert_int_equal(J.ranges[J.jobs[1].range0].lo, 0);
    assert_int_equal(J.ranges[J.jobs[1].range0].hi, 1);
    assert_int_equal(J.jobs[1].nalloc, 2);
    assert_int_equal(J.jobs[2].nalloc, 1);
    assert_int_equal(J.max_resource, 2);
    assert_int_equal(J.max_res, 2);
    assert_int_equal(J.tagged, 0);
    fbf_plot_jobs_fini(&J);
}

static void test_tags(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, HEADER
             "1,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,0,-1,\"reason=head\"\n"
             "2,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,1,-1,\"reason=backfilled\"\n"
             "3,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,2,-1,"
             "\"reason=reservation rsv=12.5\"\n"
             "4,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,3,-1,\"xreason=head\"\n"
             "5,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,4,-1,\"reason=heads\"\n"
             "6,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,5,-1,\"a=1, reason=head\"\n");
    const uint8_t want[] = {FBF_PLOT_HEAD,     FBF_PLOT_BACKFILLED, FBF_PLOT_RESERVATION,
                            FBF_PLOT_UNTAGGED, FBF_PLOT_UNTAGGED,   FBF_PLOT_HEAD};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(J.jobs[i].reason, want[i]);
    assert_int_equal(J.tagged, 4);
    fbf_plot_jobs_fini(&J);
}

/* Columns by name: reordered, an extra one, no metadata, CRLF, a BOM, a
 * quoted id with a doubled quote, and a file ending without a newline. */
static void test_layout(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, "\xEF\xBB\xBF"
                 "finish_time,allocated_resources,extra,job_id,final_state,starting_time,"
                 "requested_number_of_resources,submission_time\r\n"
                 "7.5,3-4 9,x,\"a\"\"b\",COMPLETED_KILLED,2.5,3,1\r\n"
                 "\r\n"
                 "8,,,c,REJECTED,,2,1.5");
    assert_int_equal(J.n, 2);
    assert_string_equal(fbf_plot_job_id(&J, &J.jobs[0]), "a\"b");
    assert_int_equal(J.jobs[0].state, FBF_PLOT_KILLED);
    assert_true(J.jobs[0].submit == 1 && J.jobs[0].start == 2.5 && J.jobs[0].finish == 7.5);
    assert_int_equal(J.jobs[0].nranges, 2);
    assert_int_equal(J.jobs[0].nalloc, 3);
    assert_int_equal(J.max_resource, 9);
    assert_int_equal(J.jobs[1].line, 4);
    assert_int_equal(J.jobs[1].state, FBF_PLOT_REJECTED);
    assert_int_equal(J.jobs[1].reason, FBF_PLOT_UNTAGGED);
    fbf_plot_jobs_fini(&J);
}

static void test_gzip(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    fbf_error err = {{0}};
    assert_int_equal(fbf_plot_jobs_read(&J, fbf_test_tmp_write("three.csv.gz", batsim_three), &err),
                     0);
    assert_int_equal(J.n, 3);
    fbf_plot_jobs_fini(&J);
    int rc = fbf_plot_jobs_read(&J, fbf_test_tmp_path("absent.csv"), &err);
    assert_int_equal(rc, -ENOENT);
    assert_string_equal(err.text, "cannot open: No such file or directory");
}

static void test_intervals(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int rc;
        const char *want; /* the ranges as "lo-hi ...", or the error */
    } cases[] = {
        {"", 0, ""},
        {"0", 0, "0-0"},
        {"0-3 7 9-10", 0, "0-3 7-7 9-10"},
        {"5-5", 0, "5-5"},
        {" 1  3 ", 0, "1-1 3-3"},
        {"2147483647", 0, "2147483647-2147483647"},
        {"3-1", -EINVAL, "range 3-1 ends before it starts"},
        {"a", -EINVAL, "expected a resource number at offset 0"},
        {"1-", -EINVAL, "expected a resource number at offset 2"},
        {"-1", -EINVAL, "expected a resource number at offset 0"},
        {"1--2", -EINVAL, "expected a resource number at offset 2"},
        {"2 1", -EINVAL, "ranges out of order or overlapping (1 after 2)"},
        {"0-3 2", -EINVAL, "ranges out of order or overlapping (2 after 3)"},
        {"0-3 3-4", -EINVAL, "ranges out of order or overlapping (3 after 3)"},
        {"1,2", -EINVAL, "unexpected ',' at offset 1"},
        {"1-2-3", -EINVAL, "unexpected '-' at offset 3"},
        {"2147483648", -EINVAL, "resource number too large (2^31 or more)"},
        {"1 2 3 4 5 6 7 8 9", -E2BIG, "more than 8 ranges"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_plot_range r[8];
        size_t n = 99;
        fbf_error err = {{0}};
        int rc = fbf_plot_intervals_parse(cases[i].text, strlen(cases[i].text), r, 8, &n, &err);
        char got[256] = "";
        if (rc == 0)
            for (size_t k = 0; k < n; k++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%u-%u", k ? " " : "",
                         r[k].lo, r[k].hi);
        else
            snprintf(got, sizeof got, "%s", err.text);
        if (rc != cases[i].rc || strcmp(got, cases[i].want))
            fail_msg("'%s': %d '%s', want %d '%s'", cases[i].text, rc, got, cases[i].rc,
                     cases[i].want);
    }
}

#define ROW(alloc, start, finish)                                                                  \
    "17,w0,p,10,2,60,1,COMPLETED_SUCCESSFULLY," start ",5," finish ",0,5,1," alloc ",-1,\"\"\n"

static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"", "empty file: no header line (Batsim leaves out_jobs.csv empty when it aborts)"},
        {"job_id,submission_time,requested_number_of_resources,final_state,starting_time,"
         "allocated_resources\n",
         "header (line 1): no column 'finish_time'"},
        {HEADER
         "1,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,0,-1,\"\"\n" ROW("0-1", "abc", "15"),
         "row 2 (line 3, job '17'): column 'starting_time': not a number: 'abc'"},
        {HEADER ROW("0-1", "10", ""),
         "row 1 (line 2, job '17'): column 'finish_time': empty, a number was expected: ''"},
        {HEADER ROW("0-1", "10", "nan"),
         "row 1 (line 2, job '17'): column 'finish_time': not a finite time: 'nan'"},
        {HEADER ROW("0-1", "10", "15s"),
         "row 1 (line 2, job '17'): column 'finish_time': not a number: '15s'"},
        {HEADER ROW("3-1", "10", "15"), "row 1 (line 2, job '17'): column 'allocated_resources': "
                                        "range 3-1 ends before it starts: '3-1'"},
        {HEADER ROW("0-1 x", "10", "15"), "row 1 (line 2, job '17'): column "
                                          "'allocated_resources': expected a resource number at "
                                          "offset 4: '0-1 x'"},
        {HEADER ROW("0-1", "9", "15"),
         "row 1 (line 2, job '17'): column 'starting_time': before its submission_time: '9'"},
        {HEADER ROW("0-1", "10", "9.5"),
         "row 1 (line 2, job '17'): column 'finish_time': before its starting_time: '9.5'"},
        {HEADER "1,w0,p,0,1,9,1,DONE,0,1,1,0,1,1,0,-1,\"\"\n",
         "row 1 (line 2, job '1'): column 'final_state': not a final state of Batsim: 'DONE'"},
        {HEADER "1,w0,p,0,0,9,1,REJECTED,,,,,,,,,\"\"\n",
         "row 1 (line 2, job '1'): column 'requested_number_of_resources': must be at least 1: "
         "'0'"},
        {HEADER "1,w0,p,0,two,9,1,REJECTED,,,,,,,,,\"\"\n",
         "row 1 (line 2, job '1'): column 'requested_number_of_resources': not an integer: "
         "'two'"},
        {HEADER "1,w0,p,x,1,9,1,REJECTED,,,,,,,,,\"\"\n",
         "row 1 (line 2, job '1'): column 'submission_time': not a number: 'x'"},
        {HEADER ",w0,p,0,1,9,1,REJECTED,,,,,,,,,\"\"\n",
         "row 1 (line 2, job ''): column 'job_id': empty"},
        {HEADER "1,w0,p,0,1,9,1,REJECTED,,,,,,,,\n",
         "row 1 (line 2, job '1'): 16 fields, the header has 17"},
        {HEADER "1,w0,p,0,1,9,1,REJECTED,,,,,,,,,\"open\n\n",
         "row 1 (line 2): field 17: the quote opened on line 2 is never closed"},
        {HEADER "1,w0,p,0,1,9,1,REJECTED,,,,,,,,,\"a\"b\n",
         "row 1 (line 2): field 17: text after its closing quote"},
        /* A quoted line break: the next row's line counts it. */
        {HEADER "1,w0,p,0,1,9,1,REJECTED,,,,,,,,,\"a\nb\"\n2,w0,p,0,1,9,1,REJ,,,,,,,,,\"\"\n",
         "row 2 (line 4, job '2'): column 'final_state': not a final state of Batsim: 'REJ'"},
        {HEADER ROW("0-1", "10",
                    "15000000000000000000000000000000000000000000000000000000000000000000000x"),
         "row 1 (line 2, job '17'): column 'finish_time': not a number: "
         "'1500000000000000000000000000000000000...'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_plot_jobs J;
        fbf_error err = {{0}};
        int rc = fbf_plot_jobs_parse(&J, cases[i].text, strlen(cases[i].text), &err);
        if (rc != -EINVAL || strcmp(err.text, cases[i].want))
            fail_msg("case %zu: rc %d, '%s'; want '%s'", i, rc, err.text, cases[i].want);
        assert_null(J.jobs);
        assert_int_equal(J.n, 0);
        assert_null(strchr(err.text, '\n'));
    }
}

/* ---- the view ----------------------------------------------------------- */

static const fbf_plot_view_opts defaults = {.from = NAN, .to = NAN, .nbins = 4};

static void view_ok(fbf_plot_view *v, const fbf_plot_jobs *J, fbf_plot_view_opts o)
{
    fbf_error err = {{0}};
    int rc = fbf_plot_view_build(v, J, &o, &err);
    if (rc)
        fail_msg("view: %d: %s", rc, err.text);
}

static char *read_fixture(void)
{
    char path[4096];
    const char *src = getenv("FBF_SOURCE_DIR");
    snprintf(path, sizeof path, "%s/tests/fixtures/plot/small_out_jobs.csv",
             src && *src ? src : FBF_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* The fixture: resources 0-3; jobs (submit, start-finish, resources):
 * 1 (0, 0-10, 0-1), 2 (0, 10-40, 0-3), 3 (1, 1-6, 3), 4 (2, 40-50, 0 2-3),
 * 5 rejected (3, asks 5), 6 (5, 50-54, 1), 7 (6, 6-6, 2), 8 (60, 60-63, 1-2). */
static const char *selected(const fbf_plot_jobs *J, const fbf_plot_view *v)
{
    static char buf[256];
    buf[0] = '\0';
    for (size_t i = 0; i < v->nsel; i++)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "",
                 fbf_plot_job_id(J, &J->jobs[v->sel[i]]));
    return buf;
}

static void test_window(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, read_fixture());
    static const struct {
        double from, to;
        const char *want;
        size_t rects;
    } cases[] = {
        {NAN, NAN, "1 2 3 4 6 7 8", 8},
        {41, 55, "4 6", 3},
        {40, 50, "4", 2},
        {6, 10, "1 7", 2},
        {0, 6, "1 3 7", 3},
        {54, 60, "", 0},
        {100, 200, "", 0},
        {-5, 0.5, "1", 1},
        {62.9, NAN, "8", 1},
        {NAN, 0.000001, "1", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fbf_plot_view v;
        fbf_plot_view_opts o = defaults;
        o.from = cases[i].from;
        o.to = cases[i].to;
        view_ok(&v, &J, o);
        if (strcmp(selected(&J, &v), cases[i].want) || v.nrect != cases[i].rects)
            fail_msg("[%g, %g]: jobs '%s' (%zu rectangles), want '%s' (%zu)", cases[i].from,
                     cases[i].to, selected(&J, &v), v.nrect, cases[i].want, cases[i].rects);
        fbf_plot_view_fini(&v);
    }
    fbf_plot_view v;
    fbf_error err = {{0}};
    fbf_plot_view_opts o = defaults;
    o.from = 10;
    o.to = 10;
    assert_int_equal(fbf_plot_view_build(&v, &J, &o, &err), -EINVAL);
    assert_string_equal(err.text, "--from 10 is not before --to 10");
    o.to = NAN;
    o.from = 63;
    assert_int_equal(fbf_plot_view_build(&v, &J, &o, &err), -EINVAL);
    assert_string_equal(err.text, "--from 63 is not before the last finish (63)");
    o.from = NAN;
    o.to = -1;
    assert_int_equal(fbf_plot_view_build(&v, &J, &o, &err), -EINVAL);
    assert_string_equal(err.text, "--to -1 is not after the first submission (0)");
    o.to = NAN;
    o.nres = 3;
    assert_int_equal(fbf_plot_view_build(&v, &J, &o, &err), -EINVAL);
    assert_string_equal(err.text, "job 2 (line 3) uses resource 3, beyond --resources 3");
    fbf_plot_jobs_fini(&J);
}

static void expect_bin(const fbf_plot_bin *b, double mean, double min, double max)
{
    if (fabs(b->mean - mean) > 1e-9 || b->min != min || b->max != max)
        fail_msg("bin mean %.12g min %g max %g; want %.12g %g %g", b->mean, b->min, b->max, mean,
                 min, max);
}

static void test_load(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, read_fixture());
    fbf_plot_view v;
    fbf_plot_view_opts o = defaults;
    o.nbins = 3; /* [0, 21) [21, 42) [42, 63] */
    view_ok(&v, &J, o);
    assert_int_equal(v.nres, 4);
    assert_false(v.nres_given);
    /* Busy: 2 on [0,1), 3 on [1,6), 2 on [6,10) (job 7 runs 0 s: no
     * spike), 4 on [10,40), 3 on [40,50), 1 on [50,54), 0, 2 on [60,63]. */
    expect_bin(&v.busy[0], (2 * 1 + 3 * 5 + 2 * 4 + 4 * 11) / 21.0, 2, 4);
    expect_bin(&v.busy[1], (4 * 19 + 3 * 2) / 21.0, 3, 4);
    expect_bin(&v.busy[2], (3 * 8 + 1 * 4 + 2 * 3) / 21.0, 0, 3);
    /* Waiting: job 2 on [0,10), 4 on [2,40), 6 on [5,50); 3 and 7 start as
     * they come (0 s: no spike), the rejected 5 never counts. */
    expect_bin(&v.queue[0], (1 * 2 + 2 * 3 + 3 * 5 + 2 * 11) / 21.0, 1, 3);
    expect_bin(&v.queue[1], (2 * 19 + 1 * 2) / 21.0, 1, 2);
    expect_bin(&v.queue[2], (1 * 8) / 21.0, 0, 1);
    assert_true(fabs(v.util_mean - 185.0 / (4 * 63)) < 1e-12);
    assert_true(fabs(v.queue_mean - 93.0 / 63) < 1e-12);
    assert_true(v.queue_max == 3);
    fbf_plot_view_fini(&v);

    /* A window inside: the state at its start counts what came before. */
    o.from = 20;
    o.to = 45;
    o.nbins = 1;
    o.nres = 8;
    view_ok(&v, &J, o);
    assert_true(v.nres_given);
    expect_bin(&v.busy[0], (4 * 20 + 3 * 5) / 25.0, 3, 4);
    expect_bin(&v.queue[0], (2 * 20 + 1 * 5) / 25.0, 1, 2);
    assert_true(fabs(v.util_mean - (4 * 20 + 3 * 5) / (25.0 * 8)) < 1e-12);
    fbf_plot_view_fini(&v);
    fbf_plot_jobs_fini(&J);
}

static void test_waits(void **state)
{
    (void)state;
    assert_int_equal(fbf_plot_size_class(1), 0);
    assert_int_equal(fbf_plot_size_class(2), 1);
    assert_int_equal(fbf_plot_size_class(3), 2);
    assert_int_equal(fbf_plot_size_class(4), 2);
    assert_int_equal(fbf_plot_size_class(5), 3);
    assert_int_equal(fbf_plot_size_class(128), 7);
    assert_int_equal(fbf_plot_size_class(129), 8);
    fbf_plot_jobs J;
    parse_ok(&J, read_fixture());
    fbf_plot_view v;
    view_ok(&v, &J, defaults);
    /* Size 1: waits 0 (3), 45 (6), 0 (7); size 2: 0 (1), 0 (8); 3-4: 10 (2), 38 (4). */
    assert_int_equal(v.nclass, 3);
    const fbf_plot_wclass *c = v.wclass;
    assert_true(c[0].lo == 1 && c[0].hi == 1 && c[0].n == 3 && c[0].mean == 15);
    assert_true(c[0].p10 == 0 && c[0].p25 == 0 && c[0].p50 == 0 && c[0].p75 == 45 &&
                c[0].p90 == 45 && c[0].max == 45);
    assert_true(c[1].lo == 2 && c[1].hi == 2 && c[1].n == 2 && c[1].max == 0);
    assert_true(c[2].lo == 3 && c[2].hi == 4 && c[2].n == 2 && c[2].mean == 24);
    assert_true(c[2].p10 == 10 && c[2].p50 == 10 && c[2].p75 == 38 && c[2].max == 38);
    fbf_plot_view_fini(&v);
    /* 10 jobs of size 5 waiting 1..10 s: nearest-rank percentiles. */
    char text[4096] = HEADER;
    for (int i = 1; i <= 10; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "%d,w0,p,0,5,99,1,COMPLETED_SUCCESSFULLY,%d,1,%d,0,1,1,%d-%d,-1,\"\"\n", i, i,
                 i + 1, 5 * i, 5 * i + 4);
    fbf_plot_jobs_fini(&J);
    parse_ok(&J, text);
    view_ok(&v, &J, defaults);
    assert_int_equal(v.nclass, 1);
    c = v.wclass;
    assert_true(c->lo == 5 && c->hi == 8 && c->n == 10 && c->mean == 5.5);
    assert_true(c->p10 == 1 && c->p25 == 3 && c->p50 == 5 && c->p75 == 8 && c->p90 == 9 &&
                c->max == 10);
    fbf_plot_view_fini(&v);
    fbf_plot_jobs_fini(&J);
}

static void test_colours(void **state)
{
    (void)state;
    fbf_plot_jobs J;
    parse_ok(&J, read_fixture());
    /* Jobs 1 2 3 4 6 7 8: head, head, backfilled, head + walltime,
     * reservation + killed, untagged, untagged + failed. */
    static const fbf_plot_cat want[3][7] = {
        [FBF_PLOT_COLOR_BOTH] = {FBF_PLOT_CAT_HEAD, FBF_PLOT_CAT_HEAD, FBF_PLOT_CAT_BACKFILLED,
                                 FBF_PLOT_CAT_WALLTIME, FBF_PLOT_CAT_KILLED, FBF_PLOT_CAT_COMPLETED,
                                 FBF_PLOT_CAT_FAILED},
        [FBF_PLOT_COLOR_STATE] = {FBF_PLOT_CAT_COMPLETED, FBF_PLOT_CAT_COMPLETED,
                                  FBF_PLOT_CAT_COMPLETED, FBF_PLOT_CAT_WALLTIME,
                                  FBF_PLOT_CAT_KILLED, FBF_PLOT_CAT_COMPLETED, FBF_PLOT_CAT_FAILED},
        [FBF_PLOT_COLOR_START] = {FBF_PLOT_CAT_HEAD, FBF_PLOT_CAT_HEAD, FBF_PLOT_CAT_BACKFILLED,
                                  FBF_PLOT_CAT_HEAD, FBF_PLOT_CAT_RESERVATION,
                                  FBF_PLOT_CAT_COMPLETED, FBF_PLOT_CAT_COMPLETED},
    };
    static const size_t started[7] = {0, 1, 2, 3, 5, 6, 7};
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 7; i++)
            if (fbf_plot_category(&J.jobs[started[i]], (fbf_plot_color)m) != want[m][i])
                fail_msg("mode %d, job %s: colour %d, want %d", m,
                         fbf_plot_job_id(&J, &J.jobs[started[i]]),
                         fbf_plot_category(&J.jobs[started[i]], (fbf_plot_color)m), want[m][i]);
    fbf_plot_view v;
    view_ok(&v, &J, defaults);
    assert_int_equal(v.ncat[FBF_PLOT_CAT_WALLTIME], 2); /* job 4: two ranges */
    assert_int_equal(v.catjobs[FBF_PLOT_CAT_WALLTIME], 1);
    assert_int_equal(v.catjobs[FBF_PLOT_CAT_HEAD], 2);
    fbf_plot_view_fini(&v);
    fbf_plot_jobs_fini(&J);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_batsim_file), cmocka_unit_test(test_tags),
        cmocka_unit_test(test_layout),      cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_intervals),   cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_window),      cmocka_unit_test(test_load),
        cmocka_unit_test(test_waits),       cmocka_unit_test(test_colours),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
