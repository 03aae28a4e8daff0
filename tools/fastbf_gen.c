/*
 * fastbf-gen: seedable synthetic workload generator (SWF or Batsim JSON).
 *
 * Purpose: produce workloads larger than real traces such as the bundled
 * KTH-SP2 one (data/), up to 10,000,000 jobs, for the deep-queue
 * benchmarks ("a million jobs waiting") and for tests.
 *
 * Invariants:
 *  - Determinism: the output is a pure function of the normalised options
 *    (never of the output name, the option order or the host): the PRNG is
 *    xoshiro256** seeded through splitmix64, both written here, and every
 *    job draws its random numbers in a fixed order, whatever the format.
 *    So SWF and JSON outputs of the same seed describe the same jobs.
 *  - Streaming: jobs are formatted into one fixed buffer and flushed as it
 *    fills; memory does not grow with --jobs. The only other allocation is
 *    the JSON profile bitmap, one bit per possible runtime (<= 12.5 MB).
 *  - Every job: 1 <= res <= nb_res, 1 <= runtime <= max_runtime,
 *    runtime <= walltime <= ceil(3 * runtime), submit times non-decreasing,
 *    ids 1..N in order.
 *  - Exit codes: 0 ok, 1 I/O failure, 2 bad command line.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifndef FBF_VERSION
#define FBF_VERSION "0.1.0"
#endif

#define FBF_GEN_MAX_JOBS 10000000LL
/* Bounds the JSON profile bitmap to 12.5 MB; > 3 years of run time. */
#define FBF_GEN_MAX_RUNTIME 100000000LL
#define FBF_GEN_BUF_SIZE (1u << 20)

enum fbf_gen_mode { FBF_GEN_POISSON, FBF_GEN_DEEP, FBF_GEN_BURST };
enum fbf_gen_format { FBF_GEN_SWF, FBF_GEN_JSON };

struct fbf_gen_opts {
    long long jobs;
    long long nb_res;
    unsigned long long seed;
    enum fbf_gen_mode mode;
    enum fbf_gen_format format;
    double load;           /* < 0 until set: the default depends on the mode */
    long long max_runtime;
    long long deep_submit_at;
    const char *output;
};

/* ---- PRNG: splitmix64 to expand the seed, xoshiro256** to draw. ---- */

struct fbf_rng { uint64_t s[4]; };

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void fbf_rng_seed(struct fbf_rng *r, uint64_t seed)
{
    /* splitmix64 never yields an all-zero xoshiro state for 4 outputs. */
    for (int i = 0; i < 4; i++)
        r->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline uint64_t fbf_rng_next(struct fbf_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0]; s[3] ^= s[1]; s[1] ^= s[2]; s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

/* Uniform double in [0, 1) with 53 random bits. */
static inline double fbf_rng_unit(struct fbf_rng *r)
{
    return (double)(fbf_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [lo, hi]; the modulo bias is < 2^-40 for our ranges. */
static inline long long fbf_rng_range(struct fbf_rng *r, long long lo, long long hi)
{
    return lo + (long long)(fbf_rng_next(r) % (uint64_t)(hi - lo + 1));
}

/* ---- Job model ---- */

struct fbf_gen_job { long long res, runtime, walltime; };

struct fbf_gen_model {
    long long nb_res, cap;     /* cap = largest non-1 request: nb_res/4 */
    int max_exp;               /* largest k with 2^k <= cap */
    double ln_rt;              /* ln(max_runtime + 1) */
    long long max_runtime;
};

static void fbf_gen_model_init(struct fbf_gen_model *m, const struct fbf_gen_opts *o)
{
    m->nb_res = o->nb_res;
    m->cap = o->nb_res / 4 >= 1 ? o->nb_res / 4 : 1;
    m->max_exp = 0;
    while ((2LL << m->max_exp) <= m->cap)
        m->max_exp++;
    m->max_runtime = o->max_runtime;
    m->ln_rt = log((double)o->max_runtime + 1.0);
}

static long long fbf_gen_res(struct fbf_rng *r, const struct fbf_gen_model *m)
{
    double u = fbf_rng_unit(r);
    long long res;
    if (u < 0.40 || m->cap < 2) {
        res = 1;
    } else if (u < 0.85) {
        /* Power of two 2^k, k uniform in [1, max_exp]. */
        res = 1LL << fbf_rng_range(r, 1, m->max_exp);
    } else if (m->cap < 3) {
        res = 2;
    } else {
        /* Non-power sizes seen in real traces; a power of two drawn here moves
         * to its neighbour below so the share of powers stays as stated. */
        res = fbf_rng_range(r, 3, m->cap);
        if ((res & (res - 1)) == 0)
            res--;
    }
    return res < m->nb_res ? res : m->nb_res;
}

static void fbf_gen_draw(struct fbf_rng *r, const struct fbf_gen_model *m,
                         struct fbf_gen_job *j)
{
    j->res = fbf_gen_res(r, m);
    /* Log-uniform on [1, max+1), floored: integers 1..max. */
    long long rt = (long long)floor(exp(fbf_rng_unit(r) * m->ln_rt));
    if (rt < 1) rt = 1;
    if (rt > m->max_runtime) rt = m->max_runtime;
    j->runtime = rt;
    /* Always draw both numbers so the stream stays aligned across jobs. */
    double exact = fbf_rng_unit(r);
    double factor = 1.0 + 2.0 * fbf_rng_unit(r);
    long long wt = (long long)ceil((double)rt * factor);
    if (exact < 0.10 || wt < rt)
        wt = rt;
    j->walltime = wt >= 1 ? wt : 1;
}

/* E[res] computed exactly from the distribution fbf_gen_res implements. */
static double fbf_gen_mean_res(const struct fbf_gen_model *m)
{
    if (m->cap < 2)
        return 1.0;
    double pw = 0.0;
    for (int k = 1; k <= m->max_exp; k++)
        pw += (double)((1LL << k) < m->nb_res ? (1LL << k) : m->nb_res);
    pw /= m->max_exp;
    double odd;
    if (m->cap < 3) {
        odd = 2.0;
    } else {
        /* Sum of 3..cap, less 1 per power of two 4..2^max_exp. */
        double c = (double)m->cap;
        double sum = c * (c + 1.0) / 2.0 - 3.0 - (double)(m->max_exp - 1);
        odd = sum / (c - 2.0);
    }
    return 0.40 + 0.45 * pw + 0.15 * odd;
}

/* E[floor(X)], X log-uniform on [1, M+1):
 * sum_k k ln((k+1)/k) / ln(M+1) = ((M+1) ln(M+1) - ln((M+1)!)) / ln(M+1). */
static double fbf_gen_mean_runtime(const struct fbf_gen_model *m)
{
    double M1 = (double)m->max_runtime + 1.0;
    return (M1 * m->ln_rt - lgamma(M1 + 1.0)) / m->ln_rt;
}

/* ---- Buffered output, plain or gzip ---- */

struct fbf_out {
    FILE *fp;
    gzFile gz;
    char *buf;
    size_t len;
    int failed;
};

static void fbf_out_flush(struct fbf_out *o)
{
    if (o->len == 0 || o->failed)
        return;
    if (o->gz) {
        if (gzwrite(o->gz, o->buf, (unsigned)o->len) != (int)o->len)
            o->failed = 1;
    } else if (fwrite(o->buf, 1, o->len, o->fp) != o->len) {
        o->failed = 1;
    }
    o->len = 0;
}

/* Callers keep every single append below 256 bytes. */
static inline char *fbf_out_reserve(struct fbf_out *o)
{
    if (o->len + 256 > FBF_GEN_BUF_SIZE)
        fbf_out_flush(o);
    return o->buf + o->len;
}

static void fbf_out_str(struct fbf_out *o, const char *s)
{
    size_t n = strlen(s);
    char *p = fbf_out_reserve(o);
    memcpy(p, s, n);
    o->len += n;
}

/* snprintf is the bottleneck at 10M jobs; digits by hand are ~5x faster. */
static inline char *fbf_put_int(char *p, long long v)
{
    char tmp[24];
    int n = 0;
    unsigned long long u;
    if (v < 0) {
        *p++ = '-';
        u = 0ULL - (unsigned long long)v;
    } else {
        u = (unsigned long long)v;
    }
    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    while (n)
        *p++ = tmp[--n];
    return p;
}

static inline char *fbf_put_lit(char *p, const char *s)
{
    while (*s)
        *p++ = *s++;
    return p;
}

/* ---- Command line ---- */

static const char *fbf_gen_usage =
    "Usage: fastbf-gen [options]\n"
    "Write a synthetic batch workload (SWF or Batsim JSON).\n"
    "\n"
    "  --jobs N            number of jobs, 1..10000000 (default 10000)\n"
    "  --nb-res N          platform size in resources (default 1024)\n"
    "  --seed S            PRNG seed, unsigned 64-bit (default 1); the same\n"
    "                      seed and options give byte-identical output\n"
    "  --mode M            poisson | deep | burst (default poisson)\n"
    "      poisson  exponential inter-arrivals; mean inter-arrival =\n"
    "               E[res*runtime] / (load * nb_res)\n"
    "      deep     every job submitted at --deep-submit-at (default 0):\n"
    "               about N jobs wait at once\n"
    "      burst    poisson arrivals at --load default 5, far above\n"
    "               capacity, so the queue grows toward ~N waiting\n"
    "  --load L            target utilisation, > 0 (default 0.9; burst: 5)\n"
    "  --deep-submit-at T  submit time of every job in deep mode (default 0)\n"
    "  --max-runtime S     largest run time in seconds, 1..100000000\n"
    "                      (default 36000)\n"
    "  --format F          swf | json (default swf)\n"
    "  --output FILE       output file, '-' for stdout (default); a name\n"
    "                      ending in .gz is written gzip-compressed\n"
    "  --help, --version\n"
    "\n"
    "Job model (C = max(1, nb_res/4)):\n"
    "  res       40% 1; 45% a power of two 2^k, k uniform in [1, log2 C];\n"
    "            15% a non-power of two uniform in [3, C] (a power drawn\n"
    "            there becomes its predecessor); all clamped to nb_res\n"
    "  runtime   log-uniform on [1, max-runtime], integer seconds\n"
    "  walltime  10%: exactly the runtime; otherwise ceil(runtime * f),\n"
    "            f uniform in [1, 3]\n"
    "  SWF: field 1 id, 2 submit, 4 runtime, 5 and 8 res, 9 walltime,\n"
    "  all others -1. JSON: one delay profile per distinct runtime.\n"
    "\n"
    "Exit status: 0 ok, 1 I/O error, 2 bad option.\n";

static void fbf_gen_die_usage(const char *fmt, ...)
    __attribute__((format(printf, 1, 2), noreturn));

static void fbf_gen_die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fastbf-gen: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry 'fastbf-gen --help' for more information.\n");
    exit(2);
}

static long long fbf_parse_ll(const char *opt, const char *v, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi) {
        fbf_gen_die_usage("%s expects an integer in [%lld, %lld], got '%s'",
                          opt, lo, hi, v);
    }
    return x;
}

static unsigned long long fbf_parse_seed(const char *v)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    /* strtoull accepts "-1" silently; a seed must be written as it is. */
    if (errno || end == v || *end != '\0' || v[0] == '-' || v[0] == '+')
        fbf_gen_die_usage("--seed expects an unsigned 64-bit integer, got '%s'", v);
    return x;
}

static double fbf_parse_load(const char *v)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !(x > 0.0) || x > 1e6)
        fbf_gen_die_usage("--load expects a number in (0, 1e6], got '%s'", v);
    return x;
}

static void fbf_gen_parse(int argc, char **argv, struct fbf_gen_opts *o)
{
    *o = (struct fbf_gen_opts){ .jobs = 10000, .nb_res = 1024, .seed = 1,
        .mode = FBF_GEN_POISSON, .format = FBF_GEN_SWF, .load = -1.0,
        .max_runtime = 36000, .deep_submit_at = 0, .output = "-" };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            fputs(fbf_gen_usage, stdout);
            exit(0);
        }
        if (!strcmp(arg, "--version")) {
            printf("fastbf-gen %s\n", FBF_VERSION);
            exit(0);
        }
        if (strncmp(arg, "--", 2) != 0)
            fbf_gen_die_usage("unexpected argument '%s'", arg);
        /* Accept both "--opt value" and "--opt=value". */
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        size_t nlen = eq ? (size_t)(eq - arg) : strlen(arg);
        if (nlen >= sizeof name)
            fbf_gen_die_usage("unknown option '%s'", arg);
        memcpy(name, arg, nlen);
        name[nlen] = '\0';
        static const char *const known[] = { "--jobs", "--nb-res", "--seed",
            "--mode", "--load", "--deep-submit-at", "--max-runtime",
            "--format", "--output", NULL };
        int k = 0;
        while (known[k] && strcmp(known[k], name))
            k++;
        if (!known[k])
            fbf_gen_die_usage("unknown option '%s'", name);
        if (eq)
            val = eq + 1;
        else if (i + 1 < argc)
            val = argv[++i];
        else
            fbf_gen_die_usage("option '%s' needs a value", name);

        if (!strcmp(name, "--jobs"))
            o->jobs = fbf_parse_ll(name, val, 1, FBF_GEN_MAX_JOBS);
        else if (!strcmp(name, "--nb-res"))
            o->nb_res = fbf_parse_ll(name, val, 1, 1LL << 40);
        else if (!strcmp(name, "--seed"))
            o->seed = fbf_parse_seed(val);
        else if (!strcmp(name, "--load"))
            o->load = fbf_parse_load(val);
        else if (!strcmp(name, "--deep-submit-at"))
            o->deep_submit_at = fbf_parse_ll(name, val, 0, 1LL << 50);
        else if (!strcmp(name, "--max-runtime"))
            o->max_runtime = fbf_parse_ll(name, val, 1, FBF_GEN_MAX_RUNTIME);
        else if (!strcmp(name, "--output")) {
            if (!*val)
                fbf_gen_die_usage("--output expects a file name");
            o->output = val;
        } else if (!strcmp(name, "--mode")) {
            if (!strcmp(val, "poisson")) o->mode = FBF_GEN_POISSON;
            else if (!strcmp(val, "deep")) o->mode = FBF_GEN_DEEP;
            else if (!strcmp(val, "burst")) o->mode = FBF_GEN_BURST;
            else fbf_gen_die_usage("--mode expects poisson, deep or burst, got '%s'", val);
        } else { /* --format */
            if (!strcmp(val, "swf")) o->format = FBF_GEN_SWF;
            else if (!strcmp(val, "json")) o->format = FBF_GEN_JSON;
            else fbf_gen_die_usage("--format expects swf or json, got '%s'", val);
        }
    }
    if (o->load < 0.0)
        o->load = o->mode == FBF_GEN_BURST ? 5.0 : 0.9;
}

static const char *fbf_gen_mode_name(enum fbf_gen_mode m)
{
    return m == FBF_GEN_DEEP ? "deep" : m == FBF_GEN_BURST ? "burst" : "poisson";
}

/* ---- Writers ---- */

/* Shortest %g form that reads back as the same double ("0.9", not
 * "0.90000000000000002"), so the note is both exact and readable. */
static void fbf_fmt_double(char *dst, size_t cap, double x)
{
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(dst, cap, "%.*g", prec, x);
        if (strtod(dst, NULL) == x)
            return;
    }
}

static void fbf_gen_header(struct fbf_out *out, const struct fbf_gen_opts *o)
{
    char *p = fbf_out_reserve(out);
    int n;
    if (o->format == FBF_GEN_SWF) {
        n = snprintf(p, 256,
            "; Version: 2.2\n; Computer: fastbf-gen synthetic platform\n"
            "; MaxJobs: %lld\n; MaxRecords: %lld\n; MaxProcs: %lld\n; MaxNodes: %lld\n",
            o->jobs, o->jobs, o->nb_res, o->nb_res);
        out->len += (size_t)n;
        p = fbf_out_reserve(out);
        char load[32];
        fbf_fmt_double(load, sizeof load, o->load);
        /* Normalised parameters, not argv: the header must not depend on
         * option order or on the output file name. */
        n = snprintf(p, 256,
            "; Note: generated by fastbf-gen seed=%llu mode=%s jobs=%lld "
            "nb-res=%lld load=%s max-runtime=%lld deep-submit-at=%lld\n",
            o->seed, fbf_gen_mode_name(o->mode), o->jobs, o->nb_res, load,
            o->max_runtime, o->deep_submit_at);
    } else {
        n = snprintf(p, 256, "{\"nb_res\": %lld, \"jobs\": [\n", o->nb_res);
    }
    out->len += (size_t)n;
}

static int fbf_gen_run(const struct fbf_gen_opts *o, struct fbf_out *out)
{
    struct fbf_rng rng;
    struct fbf_gen_model m;
    fbf_rng_seed(&rng, o->seed);
    fbf_gen_model_init(&m, o);

    /* JSON needs the set of distinct runtimes after the last job. */
    unsigned char *seen = NULL;
    if (o->format == FBF_GEN_JSON) {
        seen = calloc((size_t)(o->max_runtime / 8 + 1), 1);
        if (!seen) {
            fprintf(stderr, "fastbf-gen: out of memory\n");
            return 1;
        }
    }

    double mean_gap = 0.0;
    if (o->mode != FBF_GEN_DEEP)
        mean_gap = fbf_gen_mean_res(&m) * fbf_gen_mean_runtime(&m) /
                   (o->load * (double)o->nb_res);
    double clock = o->mode == FBF_GEN_DEEP ? (double)o->deep_submit_at : 0.0;

    fbf_gen_header(out, o);
    for (long long id = 1; id <= o->jobs && !out->failed; id++) {
        struct fbf_gen_job j;
        fbf_gen_draw(&rng, &m, &j);
        /* Drawn in every mode so a seed gives the same jobs in all modes;
         * the first job arrives at 0, each later one a gap after. */
        double gap_u = fbf_rng_unit(&rng);
        if (mean_gap > 0.0 && id > 1)
            clock += -mean_gap * log(1.0 - gap_u);
        long long sub = (long long)floor(clock);
        char *p = fbf_out_reserve(out);
        if (o->format == FBF_GEN_SWF) {
            p = fbf_put_int(p, id);
            *p++ = ' ';
            p = fbf_put_int(p, sub);
            p = fbf_put_lit(p, " -1 ");
            p = fbf_put_int(p, j.runtime);
            *p++ = ' ';
            p = fbf_put_int(p, j.res);
            p = fbf_put_lit(p, " -1 -1 ");
            p = fbf_put_int(p, j.res);
            *p++ = ' ';
            p = fbf_put_int(p, j.walltime);
            p = fbf_put_lit(p, " -1 -1 -1 -1 -1 -1 -1 -1 -1\n");
        } else {
            seen[j.runtime >> 3] |= (unsigned char)(1u << (j.runtime & 7));
            p = fbf_put_lit(p, id > 1 ? ",\n  {\"id\": \"" : "  {\"id\": \"");
            p = fbf_put_int(p, id);
            p = fbf_put_lit(p, "\", \"subtime\": ");
            p = fbf_put_int(p, sub);
            p = fbf_put_lit(p, ", \"res\": ");
            p = fbf_put_int(p, j.res);
            p = fbf_put_lit(p, ", \"walltime\": ");
            p = fbf_put_int(p, j.walltime);
            p = fbf_put_lit(p, ", \"profile\": \"p");
            p = fbf_put_int(p, j.runtime);
            p = fbf_put_lit(p, "\"}");
        }
        out->len = (size_t)(p - out->buf);
    }

    if (o->format == FBF_GEN_JSON) {
        fbf_out_str(out, "\n], \"profiles\": {\n");
        int first = 1;
        for (long long rt = 1; rt <= o->max_runtime && !out->failed; rt++) {
            if (!(seen[rt >> 3] & (1u << (rt & 7))))
                continue;
            char *p = fbf_out_reserve(out);
            p = fbf_put_lit(p, first ? "  \"p" : ",\n  \"p");
            p = fbf_put_int(p, rt);
            p = fbf_put_lit(p, "\": {\"type\": \"delay\", \"delay\": ");
            p = fbf_put_int(p, rt);
            *p++ = '}';
            out->len = (size_t)(p - out->buf);
            first = 0;
        }
        fbf_out_str(out, "\n}}\n");
        free(seen);
    }
    fbf_out_flush(out);
    return out->failed;
}

static int fbf_ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

int main(int argc, char **argv)
{
    struct fbf_gen_opts o;
    fbf_gen_parse(argc, argv, &o);

    struct fbf_out out = { 0 };
    out.buf = malloc(FBF_GEN_BUF_SIZE);
    if (!out.buf) {
        fprintf(stderr, "fastbf-gen: out of memory\n");
        return 1;
    }
    int to_stdout = !strcmp(o.output, "-");
    if (!to_stdout && fbf_ends_with(o.output, ".gz")) {
        /* Level 1: SWF text still shrinks several-fold and 10M jobs stay
         * fast (10M deep jobs: 3.7 s, 117 MB); level 6 takes ~4x
         * the time for a file ~23% smaller. */
        out.gz = gzopen(o.output, "wb1");
        if (out.gz)
            gzbuffer(out.gz, 1u << 18);
    } else {
        out.fp = to_stdout ? stdout : fopen(o.output, "wb");
    }
    if (!out.gz && !out.fp) {
        fprintf(stderr, "fastbf-gen: cannot open '%s': %s\n", o.output, strerror(errno));
        free(out.buf);
        return 1;
    }

    int failed = fbf_gen_run(&o, &out);
    if (out.gz) {
        if (gzclose(out.gz) != Z_OK)
            failed = 1;
    } else if (to_stdout ? fflush(stdout) != 0 : fclose(out.fp) != 0) {
        failed = 1;
    }
    free(out.buf);
    if (failed) {
        fprintf(stderr, "fastbf-gen: write to '%s' failed\n", o.output);
        return 1;
    }
    return 0;
}
