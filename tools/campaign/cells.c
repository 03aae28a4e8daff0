/*
 * cells: the product of a campaign's axes (see cells.h).
 */
#include "tools/campaign/cells.h"

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/policies.h"
#include "policies/registry.h"
#include "tools/campaign/files.h"
#include "tools/campaign/options.h"

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

/* The trace's file name without its folder and its .gz, .swf, .json
 * endings, reduced to [A-Za-z0-9._-] and at most 40 characters. */
static void trace_stem(const char *trace, char *out, size_t cap)
{
    const char *b = strrchr(trace, '/');
    b = b ? b + 1 : trace;
    size_t n = strlen(b);
    static const char *const ext[] = {".gz", ".swf", ".json"};
    for (size_t e = 0; e < 3; e++) {
        size_t el = strlen(ext[e]);
        if (n > el && !strncmp(b + n - el, ext[e], el))
            n -= el;
    }
    if (n > 40)
        n = 40;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        char ch = b[i];
        bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                  (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' || ch == '_';
        out[i] = ok ? ch : '_';
    }
    out[n] = '\0';
}

static char *depth_text(int64_t d)
{
    return d == FBF_DEPTH_UNLIMITED ? strdup("unlimited") : fbf_cmp_strf("%" PRId64, d);
}

/* Fills c's key, name and dir from its parameters. */
static int name_cell(fbf_cmp_cell *c, const char *out, int64_t default_depth)
{
    c->key = fbf_cmp_strf("trace=%s\npolicy=%s\ndepth=%s\nnb_res=%s\nmax_jobs=%s\nseed=%s\n"
                          "options=%s\n",
                          c->trace, c->policy, c->depth, c->nb_res, c->max_jobs, c->seed,
                          c->options);
    if (!c->key)
        return -ENOMEM;
    char stem[48], extra[160] = "";
    trace_stem(c->trace, stem, sizeof stem);
    char *dflt = default_depth ? depth_text(default_depth) : NULL;
    size_t n = 0;
    c->custom_depth = dflt && strcmp(c->depth, dflt);
    if (c->custom_depth)
        n += (size_t)snprintf(extra + n, sizeof extra - n, "-d%s", c->depth);
    free(dflt);
    if (strcmp(c->nb_res, "default") && n < sizeof extra)
        n += (size_t)snprintf(extra + n, sizeof extra - n, "-n%s", c->nb_res);
    if (strcmp(c->max_jobs, "default") && n < sizeof extra)
        n += (size_t)snprintf(extra + n, sizeof extra - n, "-m%s", c->max_jobs);
    if (c->seed[0] && n < sizeof extra)
        snprintf(extra + n, sizeof extra - n, "-s%s", c->seed);
    c->name = fbf_cmp_strf("%s-%s%s-%012" PRIx64, stem, c->policy, extra,
                           (uint64_t)(fnv1a(c->key) & 0xffffffffffffULL));
    c->dir = c->name ? fbf_cmp_strf("%s/cells/%s", out, c->name) : NULL;
    return c->dir ? 0 : -ENOMEM;
}

static void cell_free(fbf_cmp_cell *c)
{
    free(c->trace);
    free(c->trace_path);
    free(c->depth);
    free(c->options);
    free(c->key);
    free(c->name);
    free(c->dir);
}

void fbf_cmp_cells_destroy(fbf_cmp_cell *cells, size_t n)
{
    for (size_t i = 0; cells && i < n; i++)
        cell_free(&cells[i]);
    free(cells);
}

/* Whether depth value d of the axis means, for a policy whose own depth
 * is dflt, the same as an earlier value ("default" and "1" for easy). */
static bool same_as_earlier(const fbf_cmp_axis *depths, size_t d, const char *dflt)
{
    const char *v = strcmp(depths->v[d], "default") ? depths->v[d] : dflt;
    for (size_t e = 0; e < d; e++)
        if (!strcmp(strcmp(depths->v[e], "default") ? depths->v[e] : dflt, v))
            return true;
    return false;
}

/* Campaigns past this many combinations are refused: a typo in a list
 * should not start a million replays. */
#define MAX_CELLS 1000000

int fbf_cmp_cells_expand(const fbf_cmp_spec *s, fbf_cmp_cell **out, size_t *nout, fbf_error *err)
{
    /* The axes, outermost first; a combination is a mixed-radix number. */
    const fbf_cmp_axis *ax[] = {&s->traces, &s->policies, &s->depths, &s->sizes,
                                &s->max_jobs, &s->seeds,    &s->options};
    enum { T, P, D, Z, M, K, O, NAX };
    size_t total = 1;
    for (int a = 0; a < NAX; a++)
        if (__builtin_mul_overflow(total, ax[a]->n, &total) || total > MAX_CELLS)
            return fbf_errorf(err, -E2BIG, "%s: more than %d combinations", s->file, MAX_CELLS);
    fbf_cmp_cell *cells = calloc(total, sizeof *cells);
    if (!cells)
        return fbf_errorf(err, -ENOMEM, "out of memory: %zu cells", total);
    size_t n = 0;
    for (size_t i = 0; i < total; i++) {
        size_t dig[NAX], r = i;
        for (int a = NAX - 1; a >= 0; a--) {
            dig[a] = r % ax[a]->n;
            r /= ax[a]->n;
        }
        const fbf_policy_entry *pe = fbf_policy_lookup(s->policies.v[dig[P]]);
        bool bf = pe->ops == &fbf_policy_backfill;
        if (!bf && dig[D] > 0)
            continue; /* fcfs has no depth: one cell for all of them */
        char *dflt = bf ? depth_text(pe->default_depth) : NULL;
        bool dup = dflt && same_as_earlier(&s->depths, dig[D], dflt);
        free(dflt);
        if (dup)
            continue;
        fbf_cmp_cell *c = &cells[n];
        const char *dv = s->depths.v[dig[D]];
        c->index = n;
        c->policy = pe->name;
        c->seed = s->seeds.v[dig[K]];
        c->nb_res = s->sizes.v[dig[Z]];
        c->max_jobs = s->max_jobs.v[dig[M]];
        c->depth_arg = bf && strcmp(dv, "default") ? dv : NULL;
        c->trace = fbf_cmp_expand_seed(s->traces.v[dig[T]], c->seed);
        c->options = fbf_cmp_expand_seed(s->options.v[dig[O]], c->seed);
        c->trace_path = c->trace ? fbf_cmp_join(s->dir, c->trace) : NULL;
        if (!bf)
            c->depth = strdup("-");
        else if (!c->depth_arg)
            c->depth = depth_text(pe->default_depth);
        else
            c->depth = strdup(dv);
        if (!c->trace || !c->options || !c->trace_path || !c->depth ||
            name_cell(c, s->out, bf ? pe->default_depth : 0) < 0) {
            fbf_cmp_cells_destroy(cells, n + 1);
            return fbf_errorf(err, -ENOMEM, "out of memory");
        }
        n++;
    }
    *out = cells;
    *nout = n;
    return 0;
}

void fbf_cmp_argv_free(char **argv)
{
    for (size_t i = 0; argv && argv[i]; i++)
        free(argv[i]);
    free(argv);
}

int fbf_cmp_cell_argv(const fbf_cmp_cell *c, const char *replay, char ***out, fbf_error *err)
{
    char **words;
    size_t nw;
    int rc = fbf_cmp_split_words(c->options, &words, &nw, err);
    if (rc)
        return rc;
    char **v = calloc(nw + 16, sizeof *v);
    if (!v) {
        fbf_cmp_argv_free(words);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    size_t n = 0;
    bool oom = false;
#define ADD(s)                                                                                     \
    do {                                                                                           \
        if (!(v[n++] = strdup(s)))                                                                 \
            oom = true;                                                                            \
    } while (0)
    ADD(replay);
    ADD(c->trace_path);
    ADD("--inproc");
    ADD("--policy");
    ADD(c->policy);
    if (c->depth_arg) {
        ADD("--reservation-depth");
        ADD(c->depth_arg);
    }
    if (strcmp(c->nb_res, "default")) {
        ADD("--nb-res");
        ADD(c->nb_res);
    }
    if (strcmp(c->max_jobs, "default")) {
        ADD("--max-jobs");
        ADD(c->max_jobs);
    }
    for (size_t i = 0; i < nw; i++)
        v[n++] = words[i];
    free(words);
    ADD("--quiet");
    ADD("--out");
    ADD(c->dir);
#undef ADD
    v[n] = NULL;
    if (oom) {
        for (size_t i = 0; i < n; i++)
            free(v[i]);
        free(v);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    *out = v;
    return 0;
}
