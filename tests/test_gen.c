/*
 * test_gen: black-box tests of the fastbf-gen workload generator.
 *
 * Purpose: the generator feeds every deep-queue benchmark, so its contract
 * is checked from the outside, exactly as users run it: the built binary
 * ($FBF_BUILD_DIR/fastbf-gen, else the compile-time FBF_BUILD_DIR) writes
 * into a private mkdtemp folder and the tests parse what it wrote.
 *
 * Invariants checked: determinism per seed, job count, SWF field validity
 * (18 fields, 1 <= res <= nb_res, runtime >= 1, runtime <= walltime <=
 * ceil(3 runtime), submit times non-decreasing), the mode semantics (deep:
 * one submit time; poisson/burst: mean gap = E[res*runtime]/(load*nb_res)
 * within 10%), JSON == SWF for a seed, gzip output, exit code 2 on misuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <cjson/cJSON.h>
#include <zlib.h>

#include "support/testkit.h"

#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define NF 18

static char tmpdir[64];
static char gen[4096];

struct swf {
    long long (*job)[NF];
    long n;
    char *text;     /* the whole file, for header checks and comparisons */
    size_t len;
};

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("FBF_BUILD_DIR");
    snprintf(gen, sizeof gen, "%s/fastbf-gen", dir && *dir ? dir : FBF_BUILD_DIR);
    if (access(gen, X_OK) != 0) {
        fprintf(stderr, "test_gen: %s is not an executable\n", gen);
        return -1;
    }
    fbf_test_temp_name(tmpdir, sizeof tmpdir, "/tmp/fbf_test_gen_");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* Runs fastbf-gen with printf-style arguments; returns its exit code. */
static int run(const char *fmt, ...)
{
    char args[2048], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/stdout' 2>'%s/stderr'",
             gen, args, tmpdir, tmpdir);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *path(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", tmpdir, name);
    return buf[k];
}

/* Reads a whole file; gzread also reads plain files unchanged. */
static char *slurp(const char *p, size_t *len)
{
    gzFile f = gzopen(p, "rb");
    assert_non_null(f);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (cap - n < (1 << 15))
            buf = realloc(buf, cap *= 2);
        int r = gzread(f, buf + n, (unsigned)(cap - n - 1));
        assert_true(r >= 0);
        if (r == 0)
            break;
        n += (size_t)r;
    }
    gzclose(f);
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Parses an SWF file; every job line must have exactly 18 integers. */
static void swf_load(const char *p, struct swf *s)
{
    s->text = slurp(p, &s->len);
    long lines = 0;
    for (size_t i = 0; i < s->len; i++)
        lines += s->text[i] == '\n';
    s->job = calloc((size_t)lines + 1, sizeof *s->job);
    s->n = 0;
    char *line = s->text;
    while (*line) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);           /* every line ends with a newline */
        if (*line != ';') {
            char *q = line;
            int f = 0;
            while (q < nl) {
                char *end;
                long long v = strtoll(q, &end, 10);
                if (end == q)
                    break;
                assert_true(f < NF);
                s->job[s->n][f++] = v;
                q = end;
                while (q < nl && *q == ' ')
                    q++;
            }
            assert_ptr_equal(q, nl);   /* nothing but integers */
            assert_int_equal(f, NF);
            s->n++;
        }
        line = nl + 1;
    }
}

static void swf_free(struct swf *s)
{
    free(s->job);
    free(s->text);
}

static void gen_swf(struct swf *s, const char *name, const char *fmt, ...)
{
    char args[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_int_equal(run("%s --output '%s'", args, path(name)), 0);
    swf_load(path(name), s);
}

static void check_valid(const struct swf *s, long long nb_res, long long max_rt)
{
    for (long i = 0; i < s->n; i++) {
        const long long *j = s->job[i];
        assert_int_equal(j[0], i + 1);
        assert_true(j[1] >= 0);
        assert_true(j[3] >= 1 && j[3] <= max_rt);
        assert_true(j[4] >= 1 && j[4] <= nb_res);
        assert_int_equal(j[7], j[4]);
        assert_true(j[8] >= j[3] && j[8] <= 3 * j[3]);
        for (int f = 0; f < NF; f++)
            if (f == 2 || f == 5 || f == 6 || f >= 9)
                assert_int_equal(j[f], -1);
        if (i > 0)
            assert_true(j[1] >= s->job[i - 1][1]);
    }
}

static int files_equal(const char *a, const char *b)
{
    size_t la, lb;
    char *x = slurp(a, &la), *y = slurp(b, &lb);
    int eq = la == lb && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return eq;
}

static void test_same_seed_identical(void **state)
{
    (void)state;
    assert_int_equal(run("--jobs 3000 --seed 42 --output '%s'", path("a.swf")), 0);
    /* Other option order and "=" form: the output must not change. */
    assert_int_equal(run("--output='%s' --seed=42 --jobs=3000", path("b.swf")), 0);
    assert_true(files_equal(path("a.swf"), path("b.swf")));
}

static void test_different_seed_differs(void **state)
{
    (void)state;
    assert_int_equal(run("--jobs 3000 --seed 42 --output '%s'", path("a.swf")), 0);
    assert_int_equal(run("--jobs 3000 --seed 43 --output '%s'", path("b.swf")), 0);
    assert_false(files_equal(path("a.swf"), path("b.swf")));
}

static void test_job_count_and_header(void **state)
{
    (void)state;
    struct swf s;
    gen_swf(&s, "c.swf", "--jobs 1234 --nb-res 300 --seed 5");
    assert_int_equal(s.n, 1234);
    assert_non_null(strstr(s.text, "; MaxProcs: 300\n"));
    assert_non_null(strstr(s.text, "; MaxNodes: 300\n"));
    assert_non_null(strstr(s.text, "; Note: generated by fastbf-gen seed=5 mode=poisson"));
    swf_free(&s);
    gen_swf(&s, "c1.swf", "--jobs 1");
    assert_int_equal(s.n, 1);
    swf_free(&s);
}

static void test_fields_valid_all_modes(void **state)
{
    (void)state;
    static const char *modes[] = { "poisson", "deep", "burst" };
    for (int m = 0; m < 3; m++) {
        struct swf s;
        gen_swf(&s, "v.swf", "--jobs 5000 --nb-res 64 --mode %s --seed %d", modes[m], m);
        assert_int_equal(s.n, 5000);
        check_valid(&s, 64, 36000);
        swf_free(&s);
    }
    struct swf s;
    gen_swf(&s, "v2.swf", "--jobs 5000 --max-runtime 100 --seed 9");
    check_valid(&s, 1024, 100);
    swf_free(&s);
}

static void test_res_distribution(void **state)
{
    (void)state;
    struct swf s;
    gen_swf(&s, "r.swf", "--jobs 20000 --nb-res 1024 --seed 11");
    long ones = 0, pow2 = 0, other = 0, exact = 0;
    long long max_res = 0, max_rt = 0;
    for (long i = 0; i < s.n; i++) {
        long long r = s.job[i][4];
        if (r == 1) ones++;
        else if ((r & (r - 1)) == 0) pow2++;
        else other++;
        if (r > max_res) max_res = r;
        if (s.job[i][3] > max_rt) max_rt = s.job[i][3];
        exact += s.job[i][8] == s.job[i][3];
    }
    /* 40% / 45% / 15% as documented in --help; 20k jobs: +-1.5 points. */
    assert_true(ones > 7700 && ones < 8300);
    assert_true(pow2 > 8700 && pow2 < 9300);
    assert_true(other > 2700 && other < 3300);
    assert_true(max_res <= 256);
    /* Log-uniform runtimes reach the top decade; walltime == runtime ~10%. */
    assert_true(max_rt > 30000);
    assert_true(exact > 1700 && exact < 2500);
    swf_free(&s);
}

static void test_small_platforms(void **state)
{
    (void)state;
    static const int sizes[] = { 1, 2, 3, 5, 8 };
    for (int k = 0; k < 5; k++) {
        struct swf s;
        gen_swf(&s, "p.swf", "--jobs 2000 --nb-res %d --seed 3", sizes[k]);
        check_valid(&s, sizes[k], 36000);
        swf_free(&s);
    }
}

static void test_deep_mode(void **state)
{
    (void)state;
    struct swf s;
    gen_swf(&s, "d.swf", "--jobs 10000 --mode deep");
    for (long i = 0; i < s.n; i++)
        assert_int_equal(s.job[i][1], 0);
    swf_free(&s);
    gen_swf(&s, "d2.swf", "--jobs 100 --mode deep --deep-submit-at 500");
    for (long i = 0; i < s.n; i++)
        assert_int_equal(s.job[i][1], 500);
    swf_free(&s);
}

static void test_modes_share_jobs(void **state)
{
    (void)state;
    struct swf a, b;
    gen_swf(&a, "ma.swf", "--jobs 2000 --seed 8 --mode poisson");
    gen_swf(&b, "mb.swf", "--jobs 2000 --seed 8 --mode deep");
    for (long i = 0; i < a.n; i++) {
        assert_int_equal(a.job[i][3], b.job[i][3]);
        assert_int_equal(a.job[i][4], b.job[i][4]);
        assert_int_equal(a.job[i][8], b.job[i][8]);
    }
    swf_free(&a);
    swf_free(&b);
}

/* Mean gap vs E[res*runtime]/(load*nb_res), the expectation taken over the
 * very jobs generated. */
static void check_mean_gap(const char *mode, double load, const char *load_arg)
{
    struct swf s;
    gen_swf(&s, "g.swf", "--jobs 100000 --nb-res 1024 --mode %s %s --seed 21",
            mode, load_arg);
    assert_int_equal(s.n, 100000);
    double work = 0.0;
    for (long i = 0; i < s.n; i++)
        work += (double)s.job[i][3] * (double)s.job[i][4];
    double target = work / (double)s.n / (load * 1024.0);
    double gap = (double)(s.job[s.n - 1][1] - s.job[0][1]) / (double)(s.n - 1);
    assert_int_equal(s.job[0][1], 0);
    assert_true(gap > 0.9 * target && gap < 1.1 * target);
    swf_free(&s);
}

static void test_poisson_mean_interarrival(void **state)
{
    (void)state;
    check_mean_gap("poisson", 0.9, "");
    check_mean_gap("poisson", 0.5, "--load 0.5");
}

static void test_burst_mean_interarrival(void **state)
{
    (void)state;
    check_mean_gap("burst", 5.0, "");
}

static long long json_int(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    assert_true(cJSON_IsNumber(v));
    return (long long)v->valuedouble;
}

static void test_json_matches_swf(void **state)
{
    (void)state;
    struct swf s;
    gen_swf(&s, "j.swf", "--jobs 800 --nb-res 128 --seed 77 --mode burst");
    assert_int_equal(run("--jobs 800 --nb-res 128 --seed 77 --mode burst "
                         "--format json --output '%s'", path("j.json")), 0);
    size_t len;
    char *text = slurp(path("j.json"), &len);
    cJSON *root = cJSON_Parse(text);
    assert_non_null(root);
    assert_int_equal(json_int(root, "nb_res"), 128);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    assert_true(cJSON_IsArray(jobs));
    assert_true(cJSON_IsObject(profiles));
    assert_int_equal(cJSON_GetArraySize(jobs), s.n);

    static unsigned char seen[36001];
    memset(seen, 0, sizeof seen);
    long distinct = 0, i = 0;
    const cJSON *j;
    cJSON_ArrayForEach(j, jobs) {
        const long long *w = s.job[i++];
        char want[64];
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        assert_true(cJSON_IsString(id));
        snprintf(want, sizeof want, "%lld", w[0]);
        assert_string_equal(id->valuestring, want);
        assert_int_equal(json_int(j, "subtime"), w[1]);
        assert_int_equal(json_int(j, "res"), w[4]);
        assert_int_equal(json_int(j, "walltime"), w[8]);
        const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
        assert_true(cJSON_IsString(prof));
        snprintf(want, sizeof want, "p%lld", w[3]);
        assert_string_equal(prof->valuestring, want);
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(profiles, want);
        assert_non_null(p);
        assert_string_equal(cJSON_GetObjectItemCaseSensitive(p, "type")->valuestring, "delay");
        assert_int_equal(json_int(p, "delay"), w[3]);
        if (!seen[w[3]]++)
            distinct++;
    }
    /* One profile per distinct runtime, no more. */
    assert_int_equal(cJSON_GetArraySize(profiles), distinct);
    cJSON_Delete(root);
    free(text);
    swf_free(&s);
}

static void test_gz_output(void **state)
{
    (void)state;
    assert_int_equal(run("--jobs 4000 --seed 4 --output '%s'", path("z.swf")), 0);
    assert_int_equal(run("--jobs 4000 --seed 4 --output '%s'", path("z.swf.gz")), 0);
    FILE *f = fopen(path("z.swf.gz"), "rb");
    assert_non_null(f);
    unsigned char magic[2] = { 0, 0 };
    assert_int_equal(fread(magic, 1, 2, f), 2);
    fclose(f);
    assert_int_equal(magic[0], 0x1f);
    assert_int_equal(magic[1], 0x8b);
    assert_true(files_equal(path("z.swf"), path("z.swf.gz")));
    struct swf s;
    swf_load(path("z.swf.gz"), &s);
    assert_int_equal(s.n, 4000);
    check_valid(&s, 1024, 36000);
    swf_free(&s);
}

static void test_stdout_default(void **state)
{
    (void)state;
    assert_int_equal(run("--jobs 50 --seed 6 --output '%s'", path("s.swf")), 0);
    assert_int_equal(run("--jobs 50 --seed 6"), 0);
    assert_true(files_equal(path("s.swf"), path("stdout")));
    assert_int_equal(run("--jobs 50 --seed 6 --output -"), 0);
    assert_true(files_equal(path("s.swf"), path("stdout")));
}

static void test_bad_options(void **state)
{
    (void)state;
    static const char *bad[] = {
        "--jobs", "--jobs 0", "--jobs 10000001", "--jobs abc", "--jobs 5x",
        "--nb-res 0", "--nb-res -4", "--seed -3", "--seed abc", "--mode fifo",
        "--format xml", "--load 0", "--load -1", "--load abc",
        "--max-runtime 0", "--deep-submit-at -5", "--bogus", "stray",
        "--output=", "-j 5", "--jobs=",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int rc = run("%s", bad[k]);
        if (rc != 2)
            fail_msg("'%s' exited %d, expected 2", bad[k], rc);
        size_t len;
        char *err = slurp(path("stderr"), &len);
        assert_non_null(strstr(err, "fastbf-gen: "));
        free(err);
        char *out = slurp(path("stdout"), &len);
        assert_int_equal(len, 0);
        free(out);
    }
    /* An unwritable output is an I/O failure, not a usage error. */
    assert_int_equal(run("--jobs 5 --output /nonexistent-dir/x.swf"), 1);
}

static void test_help_version(void **state)
{
    (void)state;
    size_t len;
    assert_int_equal(run("--help"), 0);
    char *out = slurp(path("stdout"), &len);
    assert_non_null(strstr(out, "--mode"));
    assert_non_null(strstr(out, "40% 1"));
    free(out);
    assert_int_equal(run("--version"), 0);
    out = slurp(path("stdout"), &len);
    assert_non_null(strstr(out, "fastbf-gen "));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_identical),
        cmocka_unit_test(test_different_seed_differs),
        cmocka_unit_test(test_job_count_and_header),
        cmocka_unit_test(test_fields_valid_all_modes),
        cmocka_unit_test(test_res_distribution),
        cmocka_unit_test(test_small_platforms),
        cmocka_unit_test(test_deep_mode),
        cmocka_unit_test(test_modes_share_jobs),
        cmocka_unit_test(test_poisson_mean_interarrival),
        cmocka_unit_test(test_burst_mean_interarrival),
        cmocka_unit_test(test_json_matches_swf),
        cmocka_unit_test(test_gz_output),
        cmocka_unit_test(test_stdout_default),
        cmocka_unit_test(test_bad_options),
        cmocka_unit_test(test_help_version),
    };
    return cmocka_run_group_tests_name("fastbf-gen", tests, setup, teardown);
}
