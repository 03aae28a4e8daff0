/*
 * plot: see plot.h.
 */
#include "tools/campaign/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/campaign/files.h"
#include "tools/campaign/run.h"

#define LABEL 64

/* Distinct groups (or series) in first-seen order: each one's identity
 * (every parameter in full) and its label on the plot (maybe cut). */
typedef struct labels {
    char **key;
    char (*show)[LABEL];
    size_t n;
} labels;

/* The index of key, added with its label when new; SIZE_MAX when out of
 * memory. */
static size_t label_index(labels *l, const char *key, const char *show)
{
    for (size_t i = 0; i < l->n; i++)
        if (!strcmp(l->key[i], key))
            return i;
    if (!(l->key[l->n] = strdup(key)))
        return SIZE_MAX;
    snprintf(l->show[l->n], LABEL, "%s", show);
    /* gnuplot's data files have no escapes: no double quote, no break. */
    for (char *c = l->show[l->n]; *c; c++)
        if (*c == '"' || *c == '\n' || *c == '\r' || *c == '\\')
            *c = '\'';
    return l->n++;
}

static void labels_free(labels *l, size_t cap)
{
    for (size_t i = 0; l->key && i < cap; i++)
        free(l->key[i]);
    free(l->key);
    free(l->show);
}

/* Whether rows differ in the value get() gives. */
static bool varies(const fbf_cmp_row *rows, size_t n, const char *(*get)(const fbf_cmp_cell *))
{
    for (size_t i = 1; i < n; i++)
        if (strcmp(get(rows[i].cell), get(rows[0].cell)))
            return true;
    return false;
}

static const char *get_nb_res(const fbf_cmp_cell *c) { return c->nb_res; }
static const char *get_max_jobs(const fbf_cmp_cell *c) { return c->max_jobs; }
static const char *get_seed(const fbf_cmp_cell *c) { return c->seed; }
static const char *get_options(const fbf_cmp_cell *c) { return c->options; }

/* The cluster's label: the trace, then the other axes that vary. */
static char *group_label(const fbf_cmp_row *r, const bool vary[4])
{
    const fbf_cmp_cell *c = r->cell;
    const char *opt = c->options[0] ? c->options : "(no options)";
    return fbf_cmp_strf("%s%s%s%s%s%s%s%s%s", c->trace, vary[0] ? " n" : "",
                        vary[0] ? c->nb_res : "", vary[1] ? " m" : "", vary[1] ? c->max_jobs : "",
                        vary[2] ? " s" : "", vary[2] ? c->seed : "", vary[3] ? " " : "",
                        vary[3] ? opt : "");
}

typedef struct metric {
    const char *file;  /* stem of the .dat, .gp and .png */
    int fig;
    const char *title;
    const char *ylabel;
} metric;

static const metric metrics[] = {
    {"mean_wait", FBF_CMP_MEAN_WAIT, "mean wait", "mean wait (s)"},
    {"mean_bounded_slowdown", FBF_CMP_BSLD, "mean bounded slowdown (tau = 10 s)",
     "mean bounded slowdown"},
};

static int write_text(const char *dir, const char *name, const char *text, fbf_error *err)
{
    char *p = fbf_cmp_strf("%s/%s", dir, name);
    int rc = p ? fbf_cmp_write_replace(p, text, strlen(text), err)
               : fbf_errorf(err, -ENOMEM, "out of memory");
    free(p);
    return rc;
}

/* Runs gnuplot on script in dir (its cwd), output to gnuplot.log. */
static int run_gnuplot(const char *dir, const char *script, fbf_error *err)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        return fbf_errorf(err, -errno, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (chdir(dir) < 0)
            _exit(126);
        int fd = open("gnuplot.log", O_WRONLY | O_CREAT | O_APPEND, 0666);
        if (fd >= 0) {
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fbf_errorf(err, -errno, "waitpid: %s", strerror(errno));
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        return fbf_errorf(err, -ENOENT, "gnuplot cannot be run (Debian package gnuplot-nox): "
                          "no plots");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return fbf_errorf(err, -EIO, "gnuplot failed on %s/%s (see %s/gnuplot.log)", dir, script,
                          dir);
    return 0;
}

static int plot_metric(const char *out, const char *dir, const metric *m, const fbf_cmp_row *rows,
                       size_t n, const labels *groups, const labels *series, const size_t *gi,
                       const size_t *si, fbf_error *err)
{
    size_t ng = groups->n, ns = series->n;
    double *val = malloc(ng * ns * sizeof *val);
    bool *has = calloc(ng * ns, sizeof *has);
    char *dat = NULL, *gp = NULL;
    size_t dl = 0, gl = 0;
    FILE *d = NULL, *g = NULL;
    int rc = 0;
    if (!val || !has || !(d = open_memstream(&dat, &dl)) || !(g = open_memstream(&gp, &gl))) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (rows[i].state == FBF_CMP_DONE && rows[i].has[m->fig]) {
            val[gi[i] * ns + si[i]] = rows[i].fig[m->fig];
            has[gi[i] * ns + si[i]] = true;
        }
    fputs("\"group\"", d);
    for (size_t s = 0; s < ns; s++)
        fprintf(d, " \"%s\"", series->show[s]);
    fputc('\n', d);
    size_t longest = 0;
    for (size_t gr = 0; gr < ng; gr++) {
        fprintf(d, "\"%s\"", groups->show[gr]);
        if (strlen(groups->show[gr]) > longest)
            longest = strlen(groups->show[gr]);
        for (size_t s = 0; s < ns; s++) {
            if (has[gr * ns + s])
                fprintf(d, " %.17g", val[gr * ns + s]);
            else
                fputs(" ?", d);
        }
        fputc('\n', d);
    }
    /* Policies differ by orders of magnitude (fcfs against backfilling):
     * past a factor of 20, a log scale keeps the small bars readable. */
    double lo = 0, hi = 0;
    bool first = true;
    for (size_t k = 0; k < ng * ns; k++)
        if (has[k]) {
            lo = first || val[k] < lo ? val[k] : lo;
            hi = first || val[k] > hi ? val[k] : hi;
            first = false;
        }
    bool logy = !first && lo > 0 && hi / lo > 20;
    size_t width = 160 + ng * (ns * 22 + 30);
    width = width < 640 ? 640 : width > 4000 ? 4000 : width;
    bool rotate = ng > 4 || longest > 16;
    fprintf(g,
            "# fastbf-campaign: %s per cell group and policy (data: %s.dat)\n"
            "set terminal pngcairo size %zu,%d noenhanced font ',10'\n"
            "set output '../%s.png.tmp'\n"
            "set title '%s'\n"
            "set ylabel '%s'\n"
            "set datafile missing '?'\n"
            "set style data histograms\n"
            "set style histogram clustered gap 1\n"
            "set style fill solid 0.85 border -1\n"
            "set boxwidth 0.9\n"
            "%s"
            "set grid ytics\n"
            "set key outside right top vertical\n"
            "%s"
            "plot for [i=2:%zu] '%s.dat' using i:xtic(1) title columnheader(i)\n",
            m->title, m->file, width, rotate ? 560 : 480, m->file, m->title, m->ylabel,
            logy ? "set logscale y\nset yrange [*:*]\n" : "set yrange [0:*]\n",
            rotate ? "set xtics rotate by -30\n" : "", ns + 1, m->file);
    if (ferror(d) | ferror(g)) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto out;
    }
    fclose(d);
    fclose(g);
    d = g = NULL;
    char *dn = fbf_cmp_strf("%s.dat", m->file), *gn = fbf_cmp_strf("%s.gp", m->file);
    char *tmp = fbf_cmp_strf("%s/%s.png.tmp", out, m->file);
    char *png = fbf_cmp_strf("%s/%s.png", out, m->file);
    if (!dn || !gn || !tmp || !png)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    if (!rc)
        rc = write_text(dir, dn, dat, err);
    if (!rc)
        rc = write_text(dir, gn, gp, err);
    if (!rc)
        rc = run_gnuplot(dir, gn, err);
    if (!rc && rename(tmp, png) < 0)
        rc = fbf_errorf(err, -errno, "cannot rename %s: %s", tmp, strerror(errno));
    if (rc && tmp)
        unlink(tmp);
    free(dn);
    free(gn);
    free(tmp);
    free(png);
out:
    if (d)
        fclose(d);
    if (g)
        fclose(g);
    free(dat);
    free(gp);
    free(val);
    free(has);
    return rc;
}

int fbf_cmp_plot(const char *out, const fbf_cmp_row *rows, size_t n, fbf_error *err)
{
    size_t done = 0;
    for (size_t i = 0; i < n; i++)
        done += rows[i].state == FBF_CMP_DONE;
    if (!done)
        return fbf_errorf(err, -ENODATA, "no cell is done: no plots");
    bool vary[4] = {varies(rows, n, get_nb_res), varies(rows, n, get_max_jobs),
                    varies(rows, n, get_seed), varies(rows, n, get_options)};
    labels groups = {calloc(n, sizeof(char *)), calloc(n, LABEL), 0};
    labels series = {calloc(n, sizeof(char *)), calloc(n, LABEL), 0};
    size_t *gi = calloc(n, sizeof *gi), *si = calloc(n, sizeof *si);
    char *dir = fbf_cmp_strf("%s/plots", out);
    int rc = 0;
    if (!groups.key || !groups.show || !series.key || !series.show || !gi || !si || !dir)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    if (!rc)
        rc = fbf_cmp_mkdirs(dir, err);
    for (size_t i = 0; i < n && !rc; i++) {
        const fbf_cmp_cell *c = rows[i].cell;
        char *g = group_label(&rows[i], vary);
        /* A depth is named only where it is not the policy's own. */
        char *sr = c->custom_depth ? fbf_cmp_strf("%s d%s", c->policy, c->depth)
                                   : strdup(c->policy);
        gi[i] = g ? label_index(&groups, g, g) : SIZE_MAX;
        si[i] = sr ? label_index(&series, sr, sr) : SIZE_MAX;
        if (gi[i] == SIZE_MAX || si[i] == SIZE_MAX)
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
        free(g);
        free(sr);
    }
    for (size_t k = 0; k < sizeof metrics / sizeof metrics[0] && !rc; k++)
        rc = plot_metric(out, dir, &metrics[k], rows, n, &groups, &series, gi, si, err);
    labels_free(&groups, n);
    labels_free(&series, n);
    free(gi);
    free(si);
    free(dir);
    return rc;
}
