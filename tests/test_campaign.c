/*
 * test_campaign: fastbf-campaign from the outside, as a user runs it.
 *
 * Two tiny SWF traces x {fcfs, easy} x platform sizes {4, 8} (8 cells):
 *   - a local run with -j 2 writes a table of 8 rows, one per cell of the
 *     product, whose figures are exactly those of each cell's
 *     summary.json, and those of fastbf-replay run by hand with the same
 *     parameters; the Markdown table and both PNG plots exist;
 *   - resuming: a rerun starts no replay (runs counters and summary.json
 *     times unchanged); once one cell's marker is deleted, exactly that
 *     cell runs again;
 *   - the emitted Slurm script, run by a loop that sets
 *     SLURM_ARRAY_TASK_ID over its #SBATCH --array range, then `collect`,
 *     gives the local run's table (but wall_s); so does the emitted Flux
 *     script under a stand-in `flux` that does what flux submit --cc does
 *     (runs the command once per index, {cc} replaced);
 *   - a replay that fails leaves its cell unmarked, the row failed with
 *     fastbf-replay's reason, exit status 1, and the cell runs again;
 *   - a malformed campaign file is one error line naming file, line and
 *     key, exit status 2, and nothing run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>

#include "support/testkit.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

/* Two traces whose figures differ between fcfs and easy on 4 machines. */
static const char trace_one[] = "; MaxProcs: 4\n"
                                "1 0 -1 100 2 -1 -1 2 200 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 10 -1 50 4 -1 -1 4 60 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 20 -1 20 1 -1 -1 1 30 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "4 25 -1 40 2 -1 -1 2 100 -1 1 -1 -1 -1 -1 -1 -1 -1\n";
static const char trace_two[] = "; MaxProcs: 4\n"
                                "1 0 -1 300 3 -1 -1 3 400 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 5 -1 100 2 -1 -1 2 120 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 6 -1 30 1 -1 -1 1 50 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "4 7 -1 60 4 -1 -1 4 90 -1 1 -1 -1 -1 -1 -1 -1 -1\n"
                                "5 9 -1 10 1 -1 -1 1 20 -1 1 -1 -1 -1 -1 -1 -1 -1\n";

static const char campaign[] = "# two traces, two policies, two platform sizes\n"
                               "traces = one.swf,  # a list goes on after a comma\n"
                               "         two.swf\n"
                               "policies = fcfs, easy   # comments end lines\n"
                               "platform_sizes = 4, 8\n";

#define NCELLS 8
#define NCOL 17
/* Columns of results.csv (table.h). */
enum { C_INDEX, C_CELL, C_TRACE, C_POLICY, C_DEPTH, C_NBRES, C_MAXJOBS, C_SEED, C_OPTIONS,
       C_STATUS, C_JOBS, C_WAIT, C_BSLD, C_UTIL, C_MAKESPAN, C_WALL, C_NOTE };

static char bin[1024], replay[1024];

static int setup(void **state)
{
    const char *d = getenv("FBF_BUILD_DIR");
    snprintf(bin, sizeof bin, "%s/fastbf-campaign", d && *d ? d : FBF_BUILD_DIR);
    snprintf(replay, sizeof replay, "%s/fastbf-replay", d && *d ? d : FBF_BUILD_DIR);
    if (access(bin, X_OK) || access(replay, X_OK)) {
        fprintf(stderr, "test_campaign: %s or %s is not built\n", bin, replay);
        return -1;
    }
    if (fbf_test_tmpdir_setup(state))
        return -1;
    fbf_test_tmp_write("one.swf", trace_one);
    fbf_test_tmp_write("two.swf", trace_two);
    return 0;
}

/* Runs a shell command in the temporary folder, stdout and stderr into
 * out.txt and err.txt there; returns its exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[4096], full[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "cd '%s' && { %s ; } >out.txt 2>err.txt", fbf_test_tmpdir(), cmd);
    int st = system(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    b[n] = '\0';
    return b;
}

/* A parsed results.csv: rows of NCOL fields (RFC 4180 quoting). */
typedef struct table {
    char f[64][NCOL][256];
    int n; /* data rows */
} table;

static void read_csv(const char *path, table *t)
{
    char *text = slurp(path);
    assert_non_null(text);
    memset(t, 0, sizeof *t);
    const char *p = text;
    int row = -1; /* the header is row -1 */
    while (*p) {
        for (int c = 0; c < NCOL; c++) {
            char buf[256];
            size_t n = 0;
            if (*p == '"') {
                for (p++; *p && !(*p == '"' && p[1] != '"'); p++) {
                    if (*p == '"')
                        p++;
                    if (n < sizeof buf - 1)
                        buf[n++] = *p;
                }
                assert_int_equal(*p, '"');
                p++;
            } else {
                while (*p && *p != ',' && *p != '\n')
                    if (n < sizeof buf - 1)
                        buf[n++] = *p++;
            }
            buf[n] = '\0';
            assert_int_equal(*p, c == NCOL - 1 ? '\n' : ',');
            p++;
            if (row >= 0)
                snprintf(t->f[row][c], sizeof t->f[row][c], "%s", buf);
            else if (c == C_WAIT)
                assert_string_equal(buf, "mean_wait_s");
        }
        row++;
        assert_true(row < 64);
    }
    t->n = row;
    free(text);
}

/* summary.json's number at a dotted path. */
static double json_at(cJSON *j, const char *path)
{
    char key[64];
    for (const char *p = path; *p;) {
        size_t n = strcspn(p, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        j = cJSON_GetObjectItemCaseSensitive(j, key);
        p += n + (p[n] == '.');
    }
    assert_true(cJSON_IsNumber(j));
    return j->valuedouble;
}

static cJSON *summary(const char *out, const char *cell)
{
    char *text = slurp(fbf_test_tmp_path("%s/cells/%s/summary.json", out, cell));
    assert_non_null(text);
    cJSON *j = cJSON_Parse(text);
    free(text);
    assert_non_null(j);
    return j;
}

/* Every figure of every row of out's table is its cell's summary.json's. */
static void check_figures(const char *out, const table *t)
{
    static const struct {
        int col;
        const char *path;
    } figs[] = {{C_JOBS, "jobs.done"},     {C_WAIT, "mean_wait"},
                {C_BSLD, "mean_bounded_slowdown"}, {C_UTIL, "utilization"},
                {C_MAKESPAN, "makespan"},  {C_WALL, "wall_s.total"}};
    for (int r = 0; r < t->n; r++) {
        assert_string_equal(t->f[r][C_STATUS], "done");
        cJSON *j = summary(out, t->f[r][C_CELL]);
        for (size_t k = 0; k < sizeof figs / sizeof figs[0]; k++) {
            char *end;
            double v = strtod(t->f[r][figs[k].col], &end);
            assert_true(*end == '\0' && end != t->f[r][figs[k].col]);
            if (v != json_at(j, figs[k].path))
                fail_msg("row %d %s: %s is %s in the table, %.17g in summary.json", r,
                         t->f[r][C_CELL], figs[k].path, t->f[r][figs[k].col],
                         json_at(j, figs[k].path));
        }
        assert_int_equal((int)json_at(j, "nb_res"), atoi(t->f[r][C_NBRES]));
        cJSON_Delete(j);
    }
}

static void write_campaign(const char *name, const char *extra)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s", campaign, extra);
    fbf_test_tmp_write(name, text);
}

static void local_run(const char *name, const char *out, table *t)
{
    char extra[256];
    snprintf(extra, sizeof extra, "out = %s\n", out);
    write_campaign(name, extra);
    if (sh("'%s' -j 2 %s", bin, name) != 0)
        fail_msg("fastbf-campaign failed: %s", slurp(fbf_test_tmp_path("err.txt")));
    read_csv(fbf_test_tmp_path("%s/results.csv", out), t);
}

static void test_local_run(void **state)
{
    (void)state;
    table t;
    local_run("local.ini", "local", &t);
    assert_int_equal(t.n, NCELLS);
    /* One row per cell of the product, in the product's order. */
    const char *traces[] = {"one.swf", "two.swf"}, *pols[] = {"fcfs", "easy"}, *sizes[] = {"4", "8"};
    for (int r = 0; r < NCELLS; r++) {
        char idx[8];
        snprintf(idx, sizeof idx, "%d", r);
        assert_string_equal(t.f[r][C_INDEX], idx);
        assert_string_equal(t.f[r][C_TRACE], traces[r / 4]);
        assert_string_equal(t.f[r][C_POLICY], pols[(r / 2) % 2]);
        assert_string_equal(t.f[r][C_NBRES], sizes[r % 2]);
        assert_string_equal(t.f[r][C_DEPTH], r / 2 % 2 ? "1" : "-");
        for (int q = 0; q < r; q++)
            assert_string_not_equal(t.f[r][C_CELL], t.f[q][C_CELL]);
    }
    check_figures("local", &t);
    /* The cells ran what they say: two.swf under easy on 4 machines. */
    assert_int_equal(sh("'%s' two.swf --inproc --policy easy --nb-res 4 --quiet --out byhand",
                        replay), 0);
    char *byhand = slurp(fbf_test_tmp_path("byhand/summary.json"));
    assert_non_null(byhand);
    cJSON *j = cJSON_Parse(byhand);
    free(byhand);
    assert_non_null(j);
    assert_true(json_at(j, "mean_wait") == strtod(t.f[6][C_WAIT], NULL));
    assert_true(json_at(j, "mean_bounded_slowdown") == strtod(t.f[6][C_BSLD], NULL));
    assert_true(json_at(j, "makespan") == strtod(t.f[6][C_MAKESPAN], NULL));
    cJSON_Delete(j);
    /* fcfs and easy differ on 4 machines, so the policy did reach them. */
    assert_string_not_equal(t.f[0][C_WAIT], t.f[2][C_WAIT]);
    /* The Markdown table has the same rows; both plots are PNG files. */
    char *md = slurp(fbf_test_tmp_path("local/results.md"));
    assert_non_null(md);
    int lines = 0;
    for (char *p = md; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, NCELLS + 2);
    free(md);
    for (int k = 0; k < 2; k++) {
        char *png = slurp(fbf_test_tmp_path("local/%s.png", k ? "mean_wait" : "mean_bounded_slowdown"));
        assert_non_null(png);
        assert_memory_equal(png, "\x89PNG", 4);
        free(png);
    }
}

/* Each cell's runs counter, and its summary.json's modification time. */
static void cell_marks(const char *out, const table *t, long runs[], struct timespec mt[])
{
    for (int r = 0; r < t->n; r++) {
        char *c = slurp(fbf_test_tmp_path("%s/cells/%s/runs", out, t->f[r][C_CELL]));
        assert_non_null(c);
        runs[r] = atol(c);
        free(c);
        struct stat st;
        assert_int_equal(stat(fbf_test_tmp_path("%s/cells/%s/summary.json", out, t->f[r][C_CELL]),
                              &st), 0);
        mt[r] = st.st_mtim;
    }
}

static void test_resume(void **state)
{
    (void)state;
    table t, t2;
    long runs[NCELLS], runs2[NCELLS];
    struct timespec mt[NCELLS], mt2[NCELLS];
    local_run("resume.ini", "resume", &t);
    cell_marks("resume", &t, runs, mt);
    for (int r = 0; r < NCELLS; r++)
        assert_int_equal(runs[r], 1);
    /* A rerun starts nothing. */
    assert_int_equal(sh("'%s' -j 2 resume.ini", bin), 0);
    char *o = slurp(fbf_test_tmp_path("out.txt"));
    assert_non_null(strstr(o, "0 run now, 8 done before"));
    free(o);
    cell_marks("resume", &t, runs2, mt2);
    for (int r = 0; r < NCELLS; r++) {
        assert_int_equal(runs2[r], 1);
        assert_true(mt2[r].tv_sec == mt[r].tv_sec && mt2[r].tv_nsec == mt[r].tv_nsec);
    }
    /* Without its marker (an interrupted cell), cell 5 alone runs again. */
    assert_int_equal(unlink(fbf_test_tmp_path("resume/cells/%s/done", t.f[5][C_CELL])), 0);
    assert_int_equal(sh("'%s' -j 2 resume.ini", bin), 0);
    cell_marks("resume", &t, runs2, mt2);
    for (int r = 0; r < NCELLS; r++) {
        assert_int_equal(runs2[r], r == 5 ? 2 : 1);
        if (r != 5)
            assert_true(mt2[r].tv_sec == mt[r].tv_sec && mt2[r].tv_nsec == mt[r].tv_nsec);
    }
    read_csv(fbf_test_tmp_path("resume/results.csv"), &t2);
    assert_int_equal(t2.n, NCELLS);
    check_figures("resume", &t2);
}

/* a and b are the same table but for wall_s. */
static void same_table(const table *a, const table *b)
{
    assert_int_equal(a->n, b->n);
    for (int r = 0; r < a->n; r++)
        for (int c = 0; c < NCOL; c++)
            if (c != C_WALL && strcmp(a->f[r][c], b->f[r][c]))
                fail_msg("row %d column %d: '%s' locally, '%s' from the cluster's cells", r, c,
                         a->f[r][c], b->f[r][c]);
}

static void test_slurm(void **state)
{
    (void)state;
    table local, cl;
    local_run("slurm-ref.ini", "slurm-ref", &local);
    write_campaign("cluster.ini", "");
    assert_int_equal(sh("'%s' --emit slurm --out slurm cluster.ini > job.sbatch", bin), 0);
    char *script = slurp(fbf_test_tmp_path("job.sbatch"));
    assert_non_null(script);
    char *arr = strstr(script, "\n#SBATCH --array=");
    assert_non_null(arr);
    int lo = -1, hi = -1;
    assert_int_equal(sscanf(arr, "\n#SBATCH --array=%d-%d", &lo, &hi), 2);
    assert_int_equal(lo, 0);
    assert_int_equal(hi, NCELLS - 1);
    /* #SBATCH lines come before the first command, or sbatch ignores them. */
    assert_true(strstr(script, "\nset -eu") > strstr(script, "#SBATCH --output="));
    free(script);
    /* Nothing runs before the tasks do. */
    assert_int_equal(sh("'%s' collect --out slurm cluster.ini", bin), 1);
    /* The array's tasks, as Slurm would start them. */
    assert_int_equal(sh("for i in $(seq %d %d); do SLURM_ARRAY_TASK_ID=$i bash job.sbatch || exit 1; "
                        "done", lo, hi), 0);
    assert_int_equal(sh("'%s' collect --out slurm cluster.ini", bin), 0);
    read_csv(fbf_test_tmp_path("slurm/results.csv"), &cl);
    same_table(&local, &cl);
    check_figures("slurm", &cl);
    /* A task without its index is an error, not cell 0. */
    assert_int_not_equal(sh("bash job.sbatch"), 0);
    /* -j throttles the array. */
    assert_int_equal(sh("'%s' --emit slurm -j 3 --out slurm cluster.ini | grep -qx "
                        "'#SBATCH --array=0-7%%3'", bin), 0);
}

/* A stand-in for `flux submit --cc=LO-HI [--opt=value...] CMD...`: runs
 * CMD once per index, {cc} replaced in it and in --output's file. */
static const char fake_flux[] =
    "#!/bin/bash\n"
    "[ \"$1\" = submit ] || exit 9; shift\n"
    "while [[ $1 == --* ]]; do case $1 in --cc=*) ids=${1#--cc=};; --output=*) out=${1#--output=};; "
    "esac; shift; done\n"
    "for ((i=${ids%-*}; i<=${ids#*-}; i++)); do args=()\n"
    "  for a in \"$@\"; do args+=(\"${a//\\{cc\\}/$i}\"); done\n"
    "  FLUX_JOB_CC=$i \"${args[@]}\" >\"${out//\\{cc\\}/$i}\" 2>&1 || exit 1\n"
    "done\n";

static void test_flux(void **state)
{
    (void)state;
    table local, cl;
    local_run("flux-ref.ini", "flux-ref", &local);
    write_campaign("fluxc.ini", "");
    assert_int_equal(sh("'%s' --emit flux --out fluxout fluxc.ini > submit.sh", bin), 0);
    char *script = slurp(fbf_test_tmp_path("submit.sh"));
    assert_non_null(strstr(script, "flux submit --cc=0-7 "));
    assert_non_null(strstr(script, "--cell '{cc}'"));
    free(script);
    assert_int_equal(sh("mkdir -p fakebin && cat > fakebin/flux <<'EOF'\n%sEOF\nchmod +x fakebin/flux",
                        fake_flux), 0);
    assert_int_equal(sh("PATH=\"$PWD/fakebin:$PATH\" sh submit.sh"), 0);
    assert_int_equal(sh("'%s' collect --out fluxout fluxc.ini", bin), 0);
    read_csv(fbf_test_tmp_path("fluxout/results.csv"), &cl);
    same_table(&local, &cl);
    assert_true(access(fbf_test_tmp_path("fluxout/logs/flux-cell-7.out"), F_OK) == 0);
    /* Flux has no per-array throttle: -j is refused rather than dropped. */
    assert_int_equal(sh("'%s' --emit flux -j 2 fluxc.ini", bin), 2);
}

static void test_failed_cell(void **state)
{
    (void)state;
    fbf_test_tmp_write("fail.ini", "traces = one.swf\npolicies = easy\n"
                                   "options = \"\", \"--walltime bogus\"\nout = fail\n");
    assert_int_equal(sh("'%s' fail.ini", bin), 1);
    table t;
    read_csv(fbf_test_tmp_path("fail/results.csv"), &t);
    assert_int_equal(t.n, 2);
    assert_string_equal(t.f[0][C_STATUS], "done");
    assert_string_equal(t.f[1][C_STATUS], "failed");
    assert_string_equal(t.f[1][C_WAIT], "");
    assert_non_null(strstr(t.f[1][C_NOTE], "--walltime 'bogus'"));
    assert_int_equal(access(fbf_test_tmp_path("fail/cells/%s/done", t.f[1][C_CELL]), F_OK), -1);
    /* It runs again (and fails again); the done cell does not. */
    assert_int_equal(sh("'%s' fail.ini", bin), 1);
    char *r0 = slurp(fbf_test_tmp_path("fail/cells/%s/runs", t.f[0][C_CELL]));
    char *r1 = slurp(fbf_test_tmp_path("fail/cells/%s/runs", t.f[1][C_CELL]));
    assert_string_equal(r0, "1\n");
    assert_string_equal(r1, "2\n");
    free(r0);
    free(r1);
    assert_int_equal(sh("'%s' collect fail.ini", bin), 1);
}

/* Each malformed file: exit 2, one line on stderr holding want, nothing
 * run (no results folder). */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *want;
    } cases[] = {
        {"traces = one.swf\npolicies = fcfs, eazy\n", "bad.ini:2: policies: 'eazy' is not a policy"},
        {"traces = one.swf\npolicies = easy\nplatfrom_sizes = 4\n", "bad.ini:3: unknown key 'platfrom_sizes'"},
        {"traces = one.swf\npolicies = easy\nplatform_sizes = 4, x\n", "bad.ini:3: platform_sizes: 'x'"},
        {"traces = one.swf\n\n# comment\npolicies\n", "bad.ini:4: expected 'key = value'"},
        {"traces = one.swf, nothere.swf\npolicies = easy\n", "bad.ini:1: traces: 'nothere.swf'"},
        {"traces = one.swf\npolicies = easy\noptions = \"--out x\"\n", "bad.ini:3: options: '--out'"},
        {"traces = one.swf\npolicies = easy, easy\n", "bad.ini:2: policies: 'easy' is listed twice"},
        {"traces = one.swf,\npolicies = easy\n", "bad.ini:1: traces: the list ends with a comma"},
        {"traces = one.swf\npolicies = easy\npolicies = fcfs\n", "bad.ini:3: policies: given twice"},
        {"policies = easy\nout = badout\n", "bad.ini: traces: missing"},
        {"traces = one.swf\npolicies = easy\nreservation_depths = 0\n", "bad.ini:3: reservation_depths: '0'"},
        {"traces = one.swf\npolicies = easy\noptions = \"--walltime 'x\"\n", "bad.ini:3: options: unterminated '"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fbf_test_tmp_write("bad.ini", cases[i].text);
        assert_int_equal(sh("'%s' bad.ini", bin), 2);
        char *err = slurp(fbf_test_tmp_path("err.txt"));
        int lines = 0;
        for (char *p = err; *p; p++)
            lines += *p == '\n';
        if (lines != 1 || !strstr(err, cases[i].want))
            fail_msg("case %zu: want one line with \"%s\", got \"%s\"", i, cases[i].want, err);
        free(err);
        assert_int_equal(access(fbf_test_tmp_path("bad-results"), F_OK), -1);
        assert_int_equal(access(fbf_test_tmp_path("badout"), F_OK), -1);
    }
    /* A --cell beyond the product names its range. */
    write_campaign("range.ini", "");
    assert_int_equal(sh("'%s' --cell 8 range.ini", bin), 2);
    char *err = slurp(fbf_test_tmp_path("err.txt"));
    assert_non_null(strstr(err, "--cell 8: range.ini has 8 cells (0-7)"));
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_run),   cmocka_unit_test(test_resume),
        cmocka_unit_test(test_slurm),       cmocka_unit_test(test_flux),
        cmocka_unit_test(test_failed_cell), cmocka_unit_test(test_malformed),
    };
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, fbf_test_tmpdir_teardown);
}
