/*
 * test_plot: black-box tests of fastbf-plot, run as users run it
 * ($FBF_BUILD_DIR/fastbf-plot, gnuplot from PATH), on the fixture
 * tests/fixtures/plot/small_out_jobs.csv (7 started jobs as 8 rectangles
 * on resources 0-3, one rejected; see test_plot_csv.c for its schedule).
 *
 * Checked: the PNGs are whole PNG files (signature, IHDR of the requested
 * size, every chunk's CRC, IEND last) and the SVGs whole SVG documents of
 * the requested size; the SVG Gantt chart holds one polygon per rectangle
 * plus one key sample per colour, in the colours of the jobs' final states
 * and start reasons; wait_by_size.csv holds the exact percentiles; a
 * window draws only the jobs that run inside it; a malformed CSV (missing
 * column, bad interval set, non-numeric time) gives exit status 1 and one
 * line naming row and column, and no figure; a bad command line gives 2;
 * a missing or failing gnuplot is one line and status 1; on the whole
 * KTH-SP2 replay under EASY, the utilisation equals fastbf-replay's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <math.h>
#include <zlib.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#define TIMEOUT_MS 120000

static char plot[4200], fixture[4200], src[4096];

static int setup(void **state)
{
    const char *b = getenv("FBF_BUILD_DIR"), *s = getenv("FBF_SOURCE_DIR");
    snprintf(plot, sizeof plot, "%s/fastbf-plot", b && *b ? b : FBF_BUILD_DIR);
    snprintf(src, sizeof src, "%s", s && *s ? s : FBF_SOURCE_DIR);
    snprintf(fixture, sizeof fixture, "%s/tests/fixtures/plot/small_out_jobs.csv", src);
    if (access(plot, X_OK) != 0) {
        fprintf(stderr, "test_plot: %s is not an executable\n", plot);
        return -1;
    }
    return fbf_test_tmpdir_setup(state);
}

/* Runs fastbf-plot with the NULL-terminated arguments; its exit status,
 * stdout and stderr (malloc'ed). */
static int run(char **out, char **err, ...)
{
    const char *args[32];
    size_t n = 0;
    va_list ap;
    va_start(ap, err);
    while (n < 31 && (args[n] = va_arg(ap, const char *)))
        n++;
    va_end(ap);
    args[n] = NULL;
    return fbf_test_run_program(plot, args, TIMEOUT_MS, out, err);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot read %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = '\0';
    if (len)
        *len = (size_t)n;
    return b;
}

static size_t count(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* A whole PNG of w x h: signature, IHDR first, every CRC right, some image
 * data, IEND last. */
static void expect_png(const char *path, uint32_t w, uint32_t h)
{
    size_t len;
    unsigned char *b = (unsigned char *)slurp(path, &len);
    assert_true(len > 8 + 25 + 12);
    assert_memory_equal(b, "\x89PNG\r\n\x1a\n", 8);
    size_t at = 8, idat = 0, chunks = 0;
    const unsigned char *last = NULL;
    while (at + 12 <= len) {
        uint32_t n = be32(b + at);
        assert_true(at + 12 + n <= len);
        const unsigned char *type = b + at + 4;
        if (chunks++ == 0) {
            assert_memory_equal(type, "IHDR", 4);
            assert_int_equal(be32(type + 4), w);
            assert_int_equal(be32(type + 8), h);
        }
        uLong crc = crc32(0L, type, n + 4);
        if (crc != be32(type + 4 + n))
            fail_msg("%s: bad CRC in chunk %.4s at %zu", path, (const char *)type, at);
        if (!memcmp(type, "IDAT", 4))
            idat += n;
        last = type;
        at += 12 + n;
    }
    assert_int_equal(at, len);
    assert_memory_equal(last, "IEND", 4);
    assert_true(idat > 1000);
    free(b);
}

/* A whole SVG document of w x h; returned (malloc'ed) for more checks. */
static char *expect_svg(const char *path, int w, int h)
{
    size_t len;
    char *s = slurp(path, &len);
    assert_true(!strncmp(s, "<?xml", 5));
    char size[64];
    snprintf(size, sizeof size, "width=\"%d\" height=\"%d\"", w, h);
    assert_non_null(strstr(s, size));
    assert_int_equal(count(s, "<svg"), 1);
    assert_true(len > 7 && strstr(s + len - 8, "</svg>"));
    return s;
}

static const char *dir(const char *name) { return fbf_test_tmp_path("%s", name); }

static const char *file(const char *d, const char *name)
{
    return fbf_test_tmp_path("%s/%s", d, name);
}

static void test_png(void **state)
{
    (void)state;
    char *out, *err;
    int rc = run(&out, &err, fixture, "--out", dir("png"), "--size", "800x400", NULL);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    assert_non_null(strstr(out, "8 jobs (7 started, 1 rejected, 5 tagged with why they "
                                "started), 4 resources (highest allocated + 1)\n"));
    assert_non_null(strstr(out, "window [0.000000, 63.000000] s: 7 jobs drawn as 8 rectangles, "
                                "utilisation 0.734127, waiting jobs mean 1.476 max 3\n"));
    assert_string_equal(err, "");
    expect_png(file("png", "gantt.png"), 800, 400);
    expect_png(file("png", "load.png"), 800, 480);
    expect_png(file("png", "wait_by_size.png"), 640, 360);
    char *csv = slurp(file("png", "wait_by_size.csv"), NULL);
    assert_string_equal(
        csv, "size_from,size_to,jobs,mean_wait,p10,p25,p50,p75,p90,max_wait\n"
             "1,1,3,15.000000,0.000000,0.000000,0.000000,45.000000,45.000000,45.000000\n"
             "2,2,2,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000,0.000000\n"
             "3,4,2,24.000000,10.000000,10.000000,10.000000,38.000000,38.000000,38.000000\n");
    free(csv);
    free(out);
    free(err);
}

/* gnuplot's SVG fill of an "#RRGGBB" colour. */
static const char *fill(unsigned rgb)
{
    static char b[64];
    snprintf(b, sizeof b, "fill = 'rgb(%3u, %3u, %3u)'", rgb >> 16, rgb >> 8 & 255, rgb & 255);
    return b;
}

static void test_svg(void **state)
{
    (void)state;
    char *out, *err;
    int rc = run(&out, &err, fixture, "--out", dir("svg"), "--format", "svg", NULL);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    char *g = expect_svg(file("svg", "gantt.svg"), 1600, 700);
    /* 8 rectangles, and a key sample for each of the 6 colours: started in
     * queue order (jobs 1, 2), backfilled (3), walltime (4, two ranges),
     * killed (6), untagged (7), failed (8). */
    assert_int_equal(count(g, "<polygon"), 8 + 6);
    assert_int_equal(count(g, fill(0x4477AA)), 2 + 1);
    assert_int_equal(count(g, fill(0xEE7733)), 1 + 1);
    assert_int_equal(count(g, fill(0xCC3311)), 2 + 1);
    assert_int_equal(count(g, fill(0xAA3377)), 1 + 1);
    assert_int_equal(count(g, fill(0x555555)), 1 + 1);
    assert_int_equal(count(g, fill(0xBBBBBB)), 1 + 1);
    free(g);
    g = expect_svg(file("svg", "load.svg"), 1600, 600);
    assert_non_null(strstr(g, "utilisation: mean 73.41 % of 4 resources"));
    assert_non_null(strstr(g, "queue: mean 1.48 waiting jobs, at most 3"));
    free(g);
    g = expect_svg(file("svg", "wait_by_size.svg"), 1000, 600);
    assert_non_null(strstr(g, ">3-4<"));
    free(g);
    free(out);
    free(err);

    /* By final state only: jobs 1, 2, 3 and 7 are completed, all blue. */
    rc = run(&out, &err, fixture, "--out", dir("svg_state"), "--format", "svg", "--color", "state",
             "--quiet", NULL);
    assert_int_equal(rc, 0);
    assert_string_equal(out, "");
    g = expect_svg(file("svg_state", "gantt.svg"), 1600, 700);
    assert_int_equal(count(g, "<polygon"), 8 + 4);
    assert_int_equal(count(g, fill(0x4477AA)), 4 + 1);
    assert_int_equal(count(g, fill(0xEE7733)), 0);
    free(g);
    free(out);
    free(err);
}

/* The ids of the rectangles the script draws, in its order. */
static const char *script_ids(const char *from, const char *to)
{
    static char ids[1024];
    char *out, *err;
    int rc = run(&out, &err, fixture, "--from", from, "--to", to, "--script", "-", NULL);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    ids[0] = '\0';
    for (const char *p = out; (p = strstr(p, " # ")); p += 3) {
        size_t n = strcspn(p + 3, "\n");
        snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%.*s", ids[0] ? " " : "", (int)n,
                 p + 3);
    }
    free(out);
    free(err);
    return ids;
}

static void test_window(void **state)
{
    (void)state;
    char *out, *err;
    int rc = run(&out, &err, fixture, "--out", dir("window"), "--format", "svg", "--from", "41",
                 "--to", "55", NULL);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    assert_non_null(strstr(out, "window [41.000000, 55.000000] s: 2 jobs drawn as 3 rectangles"));
    char *g = expect_svg(file("window", "gantt.svg"), 1600, 700);
    assert_int_equal(count(g, "<polygon"), 3 + 2); /* job 4 (walltime), job 6 (killed) */
    free(g);
    char *csv = slurp(file("window", "wait_by_size.csv"), NULL);
    assert_string_equal(csv, "size_from,size_to,jobs,mean_wait,p10,p25,p50,p75,p90,max_wait\n"
                             "1,1,1,45.000000,45.000000,45.000000,45.000000,45.000000,45.000000,"
                             "45.000000\n"
                             "3,4,1,38.000000,38.000000,38.000000,38.000000,38.000000,38.000000,"
                             "38.000000\n");
    free(csv);
    free(out);
    free(err);
    /* Listed by colour (untagged, queue order, backfilled, ...), then in
     * file order. Edges: a job ending at --from
     * or starting at --to is out; one of 0 s at an edge is in. */
    assert_string_equal(script_ids("41", "55"), "4 4 6");
    assert_string_equal(script_ids("40", "50"), "4 4");
    assert_string_equal(script_ids("6", "10"), "7 1");
    assert_string_equal(script_ids("0", "6"), "7 1 3");
    assert_string_equal(script_ids("54", "60"), "");
    /* Rectangles are cut at the window's edges: job 2 runs 10-40. */
    rc = run(&out, &err, fixture, "--from", "20", "--to", "30", "--script", "-", NULL);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "\n20 30 0 4 # 2\n"));
    free(out);
    free(err);
}

/* fastbf-plot on text must fail with status 1 and exactly one line on
 * stderr, want after the path, and draw nothing. */
static void expect_refused(const char *name, const char *text, const char *want)
{
    const char *csv = fbf_test_tmp_write(name, text);
    char *out, *err, line[1024];
    const char *d = fbf_test_tmp_path("refused_%s", name);
    int rc = run(&out, &err, csv, "--out", d, NULL);
    snprintf(line, sizeof line, "fastbf-plot: %s: %s\n", csv, want);
    if (rc != 1 || strcmp(err, line))
        fail_msg("%s: rc %d, stderr '%s'; want 1, '%s'", name, rc, err, line);
    assert_string_equal(out, "");
    snprintf(line, sizeof line, "%s/gantt.png", d);
    assert_int_equal(access(line, F_OK), -1);
    free(out);
    free(err);
}

#define HEADER                                                                                     \
    "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,"   \
    "success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,"   \
    "stretch,allocated_resources,consumed_energy,metadata\n"
#define GOOD "1,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,0,-1,\"\"\n"

static void test_malformed(void **state)
{
    (void)state;
    expect_refused("no_column.csv",
                   "job_id,submission_time,requested_number_of_resources,final_state,"
                   "starting_time,finish_time\n1,0,1,REJECTED,,\n",
                   "header (line 1): no column 'allocated_resources'");
    expect_refused("bad_set.csv",
                   HEADER GOOD "2,w0,p,0,2,9,1,COMPLETED_SUCCESSFULLY,0,1,1,0,1,1,"
                               "4-2,-1,\"\"\n",
                   "row 2 (line 3, job '2'): column 'allocated_resources': range 4-2 ends "
                   "before it starts: '4-2'");
    expect_refused("bad_time.csv",
                   HEADER GOOD GOOD
                   "3,w0,p,0,1,9,1,COMPLETED_SUCCESSFULLY,1O,1,11,0,1,1,0,-1,\"\"\n",
                   "row 3 (line 4, job '3'): column 'starting_time': not a number: '1O'");
    expect_refused("empty.csv", "",
                   "empty file: no header line (Batsim leaves out_jobs.csv empty when it aborts)");
}

/* Files with nothing to draw, or nothing to spread: the figures come
 * out whole, and gnuplot says nothing (no empty range, no missing data). */
static void test_edges(void **state)
{
    (void)state;
    static const struct {
        const char *name, *rows;
    } cases[] = {
        {"header_only.csv", ""},
        {"all_rejected.csv", "1,w0,p,5,3,9,0,REJECTED,,,,,,,,,\"\"\n"},
        {"zero_wait.csv", "1,w0,p,5,1,9,1,COMPLETED_SUCCESSFULLY,5,0,5,0,0,inf,7,-1,\"\"\n"},
        {"far_resource.csv",
         "1,w0,p,5,1,9,1,COMPLETED_SUCCESSFULLY,5,10,15,0,10,1,2147483647,-1,\"\"\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024], *out, *err;
        snprintf(text, sizeof text, "%s%s", HEADER, cases[i].rows);
        const char *csv = fbf_test_tmp_write(cases[i].name, text);
        const char *d = fbf_test_tmp_path("edge_%zu", i);
        int rc = run(&out, &err, csv, "--out", d, "--size", "640x320", "--quiet", NULL);
        if (rc || strcmp(err, ""))
            fail_msg("%s: rc %d, stderr '%s'", cases[i].name, rc, err);
        const char *name = fbf_test_tmp_path("edge_%zu", i) + strlen(fbf_test_tmpdir()) + 1;
        expect_png(file(name, "gantt.png"), 640, 320);
        expect_png(file(name, "load.png"), 640, 480);
        expect_png(file(name, "wait_by_size.png"), 640, 360);
        free(out);
        free(err);
    }
}

static void test_command_line(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b, *want;
    } cases[] = {
        {"--format", "gif", "fastbf-plot: --format: 'gif' is neither png nor svg (see --help)\n"},
        {"--from", "ten", "fastbf-plot: --from: 'ten' is not a time in seconds (see --help)\n"},
        {"--size", "10x10",
         "fastbf-plot: --size: '10x10' is not WxH between 320x240 and "
         "20000x20000 (see --help)\n"},
        {"--color", "red",
         "fastbf-plot: --color: 'red' is not both, state or start (see "
         "--help)\n"},
        {"--resources", "0",
         "fastbf-plot: --resources: '0' is not a number of resources (see "
         "--help)\n"},
    };
    char *out, *err;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = run(&out, &err, fixture, cases[i].a, cases[i].b, NULL);
        assert_int_equal(rc, 2);
        assert_string_equal(err, cases[i].want);
        free(out);
        free(err);
    }
    assert_int_equal(run(&out, &err, NULL), 2);
    assert_string_equal(err, "fastbf-plot: expected one OUT_JOBS_CSV (see --help)\n");
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, "--help", NULL), 0);
    assert_non_null(strstr(out, "Usage: fastbf-plot [OPTIONS] OUT_JOBS_CSV\n"));
    free(out);
    free(err);
    /* Bad values found after reading: status 1. */
    assert_int_equal(run(&out, &err, fixture, "--from", "30", "--to", "20", NULL), 1);
    char line[8400];
    snprintf(line, sizeof line, "fastbf-plot: %s: --from 30 is not before --to 20\n", fixture);
    assert_string_equal(err, line);
    free(out);
    free(err);
    assert_int_equal(run(&out, &err, fbf_test_tmp_path("absent.csv"), NULL), 1);
    snprintf(line, sizeof line, "fastbf-plot: %s: cannot open: No such file or directory\n",
             fbf_test_tmp_path("absent.csv"));
    assert_string_equal(err, line);
    free(out);
    free(err);
}

static void test_gnuplot_fails(void **state)
{
    (void)state;
    char *out, *err;
    int rc = run(&out, &err, fixture, "--out", dir("nognuplot"), "--gnuplot",
                 "/nonexistent/gnuplot", NULL);
    assert_int_equal(rc, 1);
    assert_string_equal(err, "fastbf-plot: cannot run '/nonexistent/gnuplot': No such file or "
                             "directory (Debian: apt-get install gnuplot-nox)\n");
    free(out);
    free(err);
    rc = run(&out, &err, fixture, "--out", dir("falsegnuplot"), "--gnuplot", "false", NULL);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, "fastbf-plot: false exited with status 1"));
    assert_int_equal(count(err, "\n"), 1);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

/* The whole KTH-SP2 replay under EASY, tagged: every job is drawn, and the
 * utilisation is fastbf-replay's (the script only: no drawing needed). */
static void test_kth(void **state)
{
    (void)state;
    char trace[4200], *out, *err;
    snprintf(trace, sizeof trace, "%s/data/KTH-SP2-1996-2.1-cln.swf.gz", src);
    const char *kth = dir("kth");
    const char *args[] = {trace,          "--inproc", "--policy", "easy",
                          "--tag-starts", "--out",    kth,        NULL};
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc)
        fail_msg("fastbf-replay: rc %d: %s", rc, err);
    free(out);
    free(err);
    double util = fbf_test_replay_summary(kth, "utilization");
    assert_false(isnan(util));
    rc = run(&out, &err, file("kth", "out_jobs.csv"), "--script", file("kth", "plot.gp"), NULL);
    if (rc)
        fail_msg("rc %d: %s", rc, err);
    assert_non_null(strstr(out, "28475 jobs (28475 started, 0 rejected, "));
    assert_non_null(strstr(out, "), 100 resources (highest allocated + 1)\n"));
    assert_non_null(strstr(out, "s: 28475 jobs drawn as "));
    const char *u = strstr(out, "utilisation ");
    assert_non_null(u);
    double got = strtod(u + strlen("utilisation "), NULL);
    if (fabs(got - util) > 1e-6)
        fail_msg("utilisation %.6f, fastbf-replay's %.9f", got, util);
    free(out);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_png),           cmocka_unit_test(test_svg),
        cmocka_unit_test(test_window),        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_edges),         cmocka_unit_test(test_command_line),
        cmocka_unit_test(test_gnuplot_fails), cmocka_unit_test(test_kth),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, fbf_test_tmpdir_teardown);
}
