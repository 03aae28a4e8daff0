/*
 * fastbf-plot: draws a Batsim jobs file (out_jobs.csv) with gnuplot: a
 * Gantt chart, utilisation and queue length over time, and the wait-time
 * distribution by job size, as PNG or SVG.
 *
 * The reading and every figure's numbers are computed here (plot_csv.h,
 * plot_series.h); gnuplot only draws, from one self-contained script
 * (plot_script.h) written to its standard input. Exit status: 0 done; 1
 * bad input, a failed write or a failed gnuplot (one line on stderr); 2
 * bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/plot/plot_csv.h"
#include "tools/plot/plot_script.h"
#include "tools/plot/plot_series.h"

#ifndef FBF_VERSION
#define FBF_VERSION "dev"
#endif

extern char **environ;

static void usage(FILE *f)
{
    fprintf(f, "Usage: fastbf-plot [OPTIONS] OUT_JOBS_CSV\n"
               "Draws a Batsim jobs file (out_jobs.csv from Batsim 4.2.1 or fastbf-replay\n"
               "--out; plain or .gz) with gnuplot, into the folder --out:\n"
               "  gantt.EXT          each job a rectangle on its allocated resources, coloured\n"
               "                     by why it started (fastbf's --tag-starts metadata:\n"
               "                     queue order, backfilled, reservation) and by final state\n"
               "  load.EXT           utilisation (busy resources / all) and waiting jobs over\n"
               "                     time: per bin, the time-weighted mean over the min-max\n"
               "  wait_by_size.EXT   wait (start - submission) per size class of the request\n"
               "                     (1, 2, 3-4, 5-8, ...): percentiles 10/25/50/75/90, mean, max\n"
               "  wait_by_size.csv   the numbers of that figure\n"
               "\n"
               "Options:\n"
               "  --out DIR          output folder, created if needed (default: the CSV's own)\n"
               "  --format FMT       png (default) or svg\n"
               "  --from T, --to T   the time window, in simulation seconds (default: first\n"
               "                     submission to last finish); the jobs drawn and the wait\n"
               "                     distribution are the jobs that run inside it\n"
               "  --resources N      the platform's size (default: highest resource allocated\n"
               "                     + 1); utilisation is busy resources / N\n"
               "  --color MODE       both (default): why a job started, or its final state when\n"
               "                     it did not complete successfully; state: final state only;\n"
               "                     start: why it started only\n"
               "  --size WxH         pixels of the Gantt chart (default 1600x700); the other\n"
               "                     figures are scaled from it\n"
               "  --bins N           time bins of the load figure (default: about one per pixel)\n"
               "  --title TEXT       first words of each title (default: the CSV's path)\n"
               "  --script FILE      write the gnuplot script to FILE ('-': stdout), and nothing\n"
               "                     else, instead of running gnuplot (the data are inline)\n"
               "  --gnuplot PROG     the gnuplot to run (default: gnuplot, found in PATH)\n"
               "  --quiet            no summary on stdout\n"
               "  --help, --version\n"
               "\n"
               "Exit status: 0 done, 1 bad input or a failure (one line on stderr names the\n"
               "row, the line and the column), 2 bad command line.\n");
}

typedef struct opts {
    const char *csv, *out, *title, *script, *gnuplot;
    fbf_plot_view_opts view;
    fbf_plot_out fig;
    bool quiet;
} opts;

static int bad_usage(const char *fmt, const char *arg)
{
    fputs("fastbf-plot: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" (see --help)\n", stderr);
    return 2;
}

static bool parse_time(const char *s, double *out)
{
    char *e;
    *out = strtod(s, &e);
    return *s && !*e && isfinite(*out);
}

static int parse_args(int argc, char **argv, opts *o)
{
    enum {
        O_OUT = 256,
        O_FORMAT,
        O_FROM,
        O_TO,
        O_RES,
        O_COLOR,
        O_SIZE,
        O_BINS,
        O_TITLE,
        O_SCRIPT,
        O_GNUPLOT,
        O_QUIET,
        O_HELP,
        O_VERSION
    };
    static const struct option lo[] = {
        {"out", required_argument, NULL, O_OUT},
        {"format", required_argument, NULL, O_FORMAT},
        {"from", required_argument, NULL, O_FROM},
        {"to", required_argument, NULL, O_TO},
        {"resources", required_argument, NULL, O_RES},
        {"color", required_argument, NULL, O_COLOR},
        {"size", required_argument, NULL, O_SIZE},
        {"bins", required_argument, NULL, O_BINS},
        {"title", required_argument, NULL, O_TITLE},
        {"script", required_argument, NULL, O_SCRIPT},
        {"gnuplot", required_argument, NULL, O_GNUPLOT},
        {"quiet", no_argument, NULL, O_QUIET},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    *o = (opts){.gnuplot = "gnuplot",
                .view = {.from = NAN, .to = NAN},
                .fig = {.width = 1600, .height = 700}};
    long long n;
    char *e;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (c) {
        case O_OUT: o->out = optarg; break;
        case O_FORMAT:
            if (strcmp(optarg, "png") && strcmp(optarg, "svg"))
                return bad_usage("--format: '%s' is neither png nor svg", optarg);
            o->fig.svg = !strcmp(optarg, "svg");
            break;
        case O_FROM:
            if (!parse_time(optarg, &o->view.from))
                return bad_usage("--from: '%s' is not a time in seconds", optarg);
            break;
        case O_TO:
            if (!parse_time(optarg, &o->view.to))
                return bad_usage("--to: '%s' is not a time in seconds", optarg);
            break;
        case O_RES:
            n = strtoll(optarg, &e, 10);
            if (!*optarg || *e || n < 1 || n > (1LL << 31))
                return bad_usage("--resources: '%s' is not a number of resources", optarg);
            o->view.nres = n;
            break;
        case O_COLOR:
            if (!strcmp(optarg, "both"))
                o->view.color = FBF_PLOT_COLOR_BOTH;
            else if (!strcmp(optarg, "state"))
                o->view.color = FBF_PLOT_COLOR_STATE;
            else if (!strcmp(optarg, "start"))
                o->view.color = FBF_PLOT_COLOR_START;
            else
                return bad_usage("--color: '%s' is not both, state or start", optarg);
            break;
        case O_SIZE: {
            int w, h, end = 0;
            if (sscanf(optarg, "%dx%d%n", &w, &h, &end) != 2 || optarg[end] || w < 320 || h < 240 ||
                w > 20000 || h > 20000)
                return bad_usage("--size: '%s' is not WxH between 320x240 and 20000x20000", optarg);
            o->fig.width = w;
            o->fig.height = h;
            break;
        }
        case O_BINS:
            n = strtoll(optarg, &e, 10);
            if (!*optarg || *e || n < 1 || n > 1000000)
                return bad_usage("--bins: '%s' is not a number from 1 to 1000000", optarg);
            o->view.nbins = (size_t)n;
            break;
        case O_TITLE: o->title = optarg; break;
        case O_SCRIPT: o->script = optarg; break;
        case O_GNUPLOT: o->gnuplot = optarg; break;
        case O_QUIET: o->quiet = true; break;
        case O_HELP: usage(stdout); exit(0);
        case O_VERSION: printf("fastbf-plot %s\n", FBF_VERSION); exit(0);
        default: return bad_usage("unknown option or missing value: '%s'", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return bad_usage("%s", optind >= argc ? "expected one OUT_JOBS_CSV"
                                              : "expected exactly one OUT_JOBS_CSV");
    o->csv = argv[optind];
    if (o->script && !strcmp(o->script, "-"))
        o->quiet = true; /* stdout is the script's */
    if (!o->view.nbins)
        o->view.nbins = (size_t)(o->fig.width - 140);
    return 0;
}

/* mkdir -p. */
static int make_dir(const char *dir)
{
    char p[4096];
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p)
        return -ENAMETOOLONG;
    for (char *s = p + 1;; s++) {
        if (*s && *s != '/')
            continue;
        char was = *s;
        *s = '\0';
        if (mkdir(p, 0777) < 0 && errno != EEXIST)
            return -errno;
        if (!(*s = was))
            break;
    }
    struct stat st;
    if (stat(dir, &st) < 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int write_waits_csv(const char *path, const fbf_plot_view *v)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -errno;
    fputs("size_from,size_to,jobs,mean_wait,p10,p25,p50,p75,p90,max_wait\n", f);
    for (size_t i = 0; i < v->nclass; i++) {
        const fbf_plot_wclass *c = &v->wclass[i];
        fprintf(f, "%lld,%lld,%zu,%f,%f,%f,%f,%f,%f,%f\n", (long long)c->lo, (long long)c->hi, c->n,
                c->mean, c->p10, c->p25, c->p50, c->p75, c->p90, c->max);
    }
    int bad = ferror(f);
    return (fclose(f) != 0 || bad) ? -EIO : 0;
}

/* Runs gnuplot with the script on its standard input. */
static int run_gnuplot(const opts *o, const fbf_plot_jobs *J, const fbf_plot_view *v)
{
    int fd[2];
    if (pipe(fd) < 0)
        return fprintf(stderr, "fastbf-plot: pipe: %s\n", strerror(errno)), -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[0], 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    char *argv[] = {(char *)o->gnuplot, NULL};
    int rc = posix_spawnp(&pid, o->gnuplot, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[0]);
    if (rc) {
        close(fd[1]);
        fprintf(stderr, "fastbf-plot: cannot run '%s': %s (Debian: apt-get install gnuplot-nox)\n",
                o->gnuplot, strerror(rc));
        return -1;
    }
    FILE *f = fdopen(fd[1], "w");
    int wrc = f ? fbf_plot_script_write(f, J, v, &o->fig) : -errno;
    if (f && fclose(f) != 0 && !wrc)
        wrc = -EIO;
    else if (!f)
        close(fd[1]);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return fprintf(stderr, "fastbf-plot: waitpid: %s\n", strerror(errno)), -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && !wrc)
        return 0;
    if (WIFEXITED(st))
        fprintf(stderr, "fastbf-plot: %s exited with status %d%s\n", o->gnuplot, WEXITSTATUS(st),
                wrc ? " before reading the whole script" : "");
    else
        fprintf(stderr, "fastbf-plot: %s was killed by signal %d\n", o->gnuplot,
                WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return -1;
}

static int write_script(const opts *o, const fbf_plot_jobs *J, const fbf_plot_view *v)
{
    bool out = !strcmp(o->script, "-");
    FILE *f = out ? stdout : fopen(o->script, "w");
    if (!f)
        return fprintf(stderr, "fastbf-plot: cannot write '%s': %s\n", o->script, strerror(errno)),
               -1;
    int rc = fbf_plot_script_write(f, J, v, &o->fig);
    if ((out ? fflush(f) : fclose(f)) != 0 || rc)
        return fprintf(stderr, "fastbf-plot: error writing '%s'\n", o->script), -1;
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void summary(const opts *o, const fbf_plot_jobs *J, const fbf_plot_view *v, double t0)
{
    size_t started = J->n - J->count[FBF_PLOT_REJECTED];
    printf("fastbf-plot: %s: %zu jobs (%zu started, %zu rejected, %zu tagged with why they "
           "started), %lld resources%s\n",
           o->csv, J->n, started, J->count[FBF_PLOT_REJECTED], J->tagged, (long long)v->nres,
           v->nres_given ? "" : " (highest allocated + 1)");
    printf("window [%.6f, %.6f] s: %zu jobs drawn as %zu rectangles, utilisation %.6f, "
           "waiting jobs mean %.3f max %.0f\n",
           v->from, v->to, v->nsel, v->nrect, v->util_mean, v->queue_mean, v->queue_max);
    const char *ext = o->fig.svg ? "svg" : "png";
    if (o->script)
        printf("wrote the script %s", o->script);
    else
        printf("wrote %s/%s.%s, %s/%s.%s, %s/%s.%s, %s/wait_by_size.csv", o->out,
               fbf_plot_fig_names[0], ext, o->out, fbf_plot_fig_names[1], ext, o->out,
               fbf_plot_fig_names[2], ext, o->out);
    printf(" in %.2f s\n", now_s() - t0);
}

int main(int argc, char **argv)
{
    double t0 = now_s();
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    signal(SIGPIPE, SIG_IGN); /* a gnuplot that dies early is reported, not fatal */
    char dir[4096];
    if (!o.out) {
        const char *slash = strrchr(o.csv, '/');
        snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - o.csv) : 1, slash ? o.csv : ".");
        if (!dir[0])
            strcpy(dir, "/");
        o.out = dir;
    }
    o.fig.dir = o.out;
    o.fig.title = o.title ? o.title : o.csv;

    fbf_plot_jobs J;
    fbf_error err = {{0}};
    if ((rc = fbf_plot_jobs_read(&J, o.csv, &err)) < 0) {
        fprintf(stderr, "fastbf-plot: %s: %s\n", o.csv, err.text);
        return 1;
    }
    fbf_plot_view v;
    if ((rc = fbf_plot_view_build(&v, &J, &o.view, &err)) < 0) {
        fprintf(stderr, "fastbf-plot: %s: %s\n", o.csv, err.text);
        fbf_plot_jobs_fini(&J);
        return 1;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/wait_by_size.csv", o.out);
    if (o.script) /* the script only: it writes the figures when run */
        rc = write_script(&o, &J, &v);
    else if ((rc = make_dir(o.out)) < 0)
        fprintf(stderr, "fastbf-plot: cannot create '%s': %s\n", o.out, strerror(-rc));
    else if ((rc = write_waits_csv(path, &v)) < 0)
        fprintf(stderr, "fastbf-plot: cannot write '%s': %s\n", path, strerror(-rc));
    else
        rc = run_gnuplot(&o, &J, &v);
    if (!rc && !o.quiet)
        summary(&o, &J, &v, t0);
    fbf_plot_view_fini(&v);
    fbf_plot_jobs_fini(&J);
    return rc ? 1 : 0;
}
