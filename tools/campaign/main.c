/*
 * fastbf-campaign: runs a matrix of fastbf-replay runs described in a
 * small file, N at a time, resumably, and tabulates and plots their
 * summaries; or writes the Slurm / Flux script that runs them on a
 * cluster, and gathers their results afterwards.
 *
 * The modules: spec (the file), cells (the product of its axes, each
 * cell's key and folder), run (replays at once, markers), table (results
 * CSV and Markdown), plot (gnuplot), emit (cluster scripts).
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/campaign/cells.h"
#include "tools/campaign/emit.h"
#include "tools/campaign/files.h"
#include "tools/campaign/plot.h"
#include "tools/campaign/run.h"
#include "tools/campaign/spec.h"
#include "tools/campaign/table.h"

static const char usage[] =
    "Usage: fastbf-campaign [OPTIONS] FILE\n"
    "  or:  fastbf-campaign collect [OPTIONS] FILE\n"
    "  or:  fastbf-campaign --cell I [OPTIONS] FILE\n"
    "  or:  fastbf-campaign --emit slurm|flux [OPTIONS] FILE\n"
    "  or:  fastbf-campaign --list [OPTIONS] FILE\n"
    "Runs the matrix of fastbf-replay runs (cells) that FILE describes, N at a\n"
    "time, then writes their results table and plots. A rerun runs only the cells\n"
    "not done yet. collect writes the table and plots from the cells' folders\n"
    "alone (after a cluster ran them); --cell I runs cell I alone (a cluster's\n"
    "array task); --emit prints the Slurm job array or the Flux bulk submission\n"
    "that runs each cell as one job; --list prints the cells (index, state,\n"
    "folder, command).\n"
    "\n"
    "Campaign file: 'key = value' lines, each value a comma-separated list (an\n"
    "item in double quotes may hold commas and blanks; a line that ends with a\n"
    "comma goes on on the next); a # at a line's start or after a blank, outside\n"
    "double quotes, starts a comment. Keys:\n"
    "  traces              workloads (SWF or Batsim JSON) relative to FILE; required\n"
    "  policies            fcfs, easy, conservative; required\n"
    "  reservation_depths  for the backfilling policies: integers >= 1, unlimited,\n"
    "                      default (the policy's own)\n"
    "  platform_sizes      fastbf-replay --nb-res: integers, default (the trace's)\n"
    "  max_jobs            fastbf-replay --max-jobs: integers, all\n"
    "  seeds               integers: recorded, and put where {seed} appears in a\n"
    "                      trace or an option string (fastbf-replay has no seed)\n"
    "  options             extra fastbf-replay options, one string per value, e.g.\n"
    "                      \"\", \"--walltime runtime\"\n"
    "  out                 results folder (default: FILE's name without its\n"
    "                      extension, then -results, beside FILE)\n"
    "  replay              the fastbf-replay to run\n"
    "The cells are the product of the lists; each runs\n"
    "  fastbf-replay TRACE --inproc --policy P [--reservation-depth K] [--nb-res N]\n"
    "  [--max-jobs M] OPTIONS --quiet --out OUT/cells/CELL\n"
    "and is done once its folder holds the marker 'done', written when the replay\n"
    "exited 0 and its summary.json reads: a done cell is never run again, any\n"
    "other runs anew. The table is OUT/results.csv and OUT/results.md, the plots\n"
    "OUT/mean_wait.png and OUT/mean_bounded_slowdown.png (gnuplot).\n"
    "\n"
    "Options:\n"
    "  -j, --jobs N       replays at once (default: the CPUs this process may use);\n"
    "                     with --emit slurm, array tasks at once (--array=...%N)\n"
    "  --out DIR          results folder (instead of the file's out)\n"
    "  --replay PATH      the fastbf-replay to run (default: the file's replay, else\n"
    "                     the one beside fastbf-campaign, else PATH's)\n"
    "  --no-plots         the table only\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 every cell (with --cell: that cell) done; 1 a cell failed, is\n"
    "not done (collect) or runs in another process; 2 bad usage or campaign file,\n"
    "or a folder the campaign cannot write; 128+N stopped by signal N (the replays\n"
    "under way are stopped, their cells left to run again).\n";

enum mode { M_RUN, M_COLLECT, M_CELL, M_EMIT, M_LIST };

typedef struct opts {
    enum mode mode;
    unsigned jobs;
    bool jobs_given;
    long cell;
    const char *emit;
    const char *out;
    const char *replay;
    bool no_plots;
    const char *file;
} opts;

static int bad(const char *msg, const char *arg)
{
    fprintf(stderr, "fastbf-campaign: %s%s%s\n", msg, arg ? arg : "",
            " (fastbf-campaign --help)");
    return 2;
}

static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->cell = -1;
    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "collect")) {
        o->mode = M_COLLECT;
        first = 2;
    }
    enum { O_CELL = 256, O_EMIT, O_OUT, O_REPLAY, O_NOPLOTS, O_LIST, O_HELP, O_VERSION };
    static const struct option longopts[] = {
        {"jobs", required_argument, NULL, 'j'},
        {"cell", required_argument, NULL, O_CELL},
        {"emit", required_argument, NULL, O_EMIT},
        {"out", required_argument, NULL, O_OUT},
        {"replay", required_argument, NULL, O_REPLAY},
        {"no-plots", no_argument, NULL, O_NOPLOTS},
        {"list", no_argument, NULL, O_LIST},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    char *end;
    int c;
    optind = first;
    while ((c = getopt_long(argc, argv, "j:", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': {
            long v = strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v < 1 || v > 1024)
                return bad("-j: not an integer in 1..1024: ", optarg);
            o->jobs = (unsigned)v;
            o->jobs_given = true;
            break;
        }
        case O_CELL:
            errno = 0;
            o->cell = strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || errno)
                return bad("--cell: not an integer >= 0: ", optarg);
            if (o->mode != M_RUN)
                return bad("--cell goes with none of collect, --emit, --list", NULL);
            o->mode = M_CELL;
            break;
        case O_EMIT:
            if (strcmp(optarg, "slurm") && strcmp(optarg, "flux"))
                return bad("--emit: slurm or flux, not ", optarg);
            if (o->mode != M_RUN)
                return bad("--emit goes with none of collect, --cell, --list", NULL);
            o->mode = M_EMIT;
            o->emit = optarg;
            break;
        case O_LIST:
            if (o->mode != M_RUN)
                return bad("--list goes with none of collect, --cell, --emit", NULL);
            o->mode = M_LIST;
            break;
        case O_OUT: o->out = optarg; break;
        case O_REPLAY: o->replay = optarg; break;
        case O_NOPLOTS: o->no_plots = true; break;
        case O_HELP: fputs(usage, stdout); exit(0);
        case O_VERSION: printf("fastbf-campaign %s\n", FBF_VERSION); exit(0);
        default: return 2;
        }
    }
    if (optind != argc - 1)
        return bad(optind < argc ? "one campaign FILE, not several" : "no campaign FILE", NULL);
    if (o->jobs_given && o->mode == M_EMIT && !strcmp(o->emit, "flux"))
        return bad("-j: flux submit --cc has no limit of jobs at once; leave -j out", NULL);
    o->file = argv[optind];
    return 0;
}

/* CPUs this process may run on. */
static unsigned cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return (unsigned)CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

/* name in PATH (caller frees), or NULL. */
static char *in_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        return NULL;
    for (const char *p = path;; p += strcspn(p, ":") + 1) {
        size_t n = strcspn(p, ":");
        char *c = fbf_cmp_strf("%.*s/%s", (int)n, n ? p : ".", name);
        if (c && access(c, X_OK) == 0)
            return c;
        free(c);
        if (!p[n])
            return NULL;
    }
}

/* The fastbf-replay to run, absolute when it was found as a file (caller
 * frees); NULL with err filled when there is none. */
static char *find_replay(const opts *o, const fbf_cmp_spec *s, fbf_error *err)
{
    const char *given = o->replay ? o->replay : s->replay;
    if (given) {
        char *r = realpath(given, NULL);
        if (!r || access(r, X_OK) < 0) {
            fbf_errorf(err, -ENOENT, "%s '%s': not an executable file%s", o->replay ? "--replay"
                       : "replay (campaign file)", given, "");
            free(r);
            return NULL;
        }
        return r;
    }
    char *self = fbf_cmp_self_exe();
    char *slash = self ? strrchr(self, '/') : NULL;
    if (slash) {
        *slash = '\0';
        char *c = fbf_cmp_strf("%s/fastbf-replay", self);
        free(self);
        if (c && access(c, X_OK) == 0)
            return c;
        free(c);
    } else {
        free(self);
    }
    char *p = in_path("fastbf-replay");
    if (!p)
        fbf_errorf(err, -ENOENT, "fastbf-replay is neither beside fastbf-campaign nor in PATH: "
                   "give --replay PATH");
    return p;
}

/* --out DIR, created, as an absolute path into s->out. */
static int set_out(fbf_cmp_spec *s, const char *dir, fbf_error *err)
{
    int rc = fbf_cmp_mkdirs(dir, err);
    if (rc)
        return rc;
    char *r = realpath(dir, NULL);
    if (!r)
        return fbf_errorf(err, -errno, "--out '%s': %s", dir, strerror(errno));
    free(s->out);
    s->out = r;
    return 0;
}

/* The table and, unless told not to, the plots; a plot that fails is a
 * warning: the table is what the campaign is for. */
static int tabulate(const opts *o, const fbf_cmp_spec *s, const fbf_cmp_cell *cells, size_t n,
                    size_t *done, fbf_error *err)
{
    fbf_cmp_row *rows;
    int rc = fbf_cmp_rows_load(cells, n, stderr, &rows, err);
    if (rc)
        return rc;
    *done = 0;
    for (size_t i = 0; i < n; i++)
        *done += rows[i].state == FBF_CMP_DONE;
    rc = fbf_cmp_table_write(s->out, rows, n, err);
    if (!rc) {
        printf("table: %s/results.csv, %s/results.md\n", s->out, s->out);
        fbf_error perr;
        if (o->no_plots) {
        } else if (fbf_cmp_plot(s->out, rows, n, &perr) == 0) {
            printf("plots: %s/mean_wait.png, %s/mean_bounded_slowdown.png\n", s->out, s->out);
        } else {
            fprintf(stderr, "fastbf-campaign: %s\n", perr.text);
        }
    }
    free(rows);
    return rc;
}

static void list_cells(const fbf_cmp_cell *cells, size_t n, const char *replay)
{
    for (size_t i = 0; i < n; i++) {
        char why[200];
        int st = fbf_cmp_cell_state(&cells[i], why, sizeof why, NULL);
        printf("%zu\t%s\t%s\t", cells[i].index,
               st == FBF_CMP_DONE ? "done" : st == FBF_CMP_FAILED ? "failed" : st < 0 ? "clash"
                                                                                      : "pending",
               cells[i].name);
        char **argv;
        if (fbf_cmp_cell_argv(&cells[i], replay, &argv, NULL) == 0) {
            for (size_t k = 0; argv[k]; k++) {
                char *q = fbf_cmp_shell_quote(argv[k]);
                printf("%s%s", k ? " " : "", q ? q : "?");
                free(q);
            }
            fbf_cmp_argv_free(argv);
        }
        putchar('\n');
    }
}

static int run_mode(const opts *o, fbf_cmp_spec *s, const fbf_cmp_cell *cells, size_t n,
                    const char *replay, fbf_error *err)
{
    size_t *sel = malloc((n ? n : 1) * sizeof *sel), nsel = 0;
    if (!sel) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return 2;
    }
    if (o->mode == M_CELL) {
        sel[nsel++] = (size_t)o->cell;
    } else {
        for (size_t i = 0; i < n; i++)
            sel[nsel++] = i;
    }
    fbf_cmp_run_opts ro = {o->mode == M_CELL ? 1 : (o->jobs ? o->jobs : cpus()), replay, stdout};
    fbf_cmp_run_stats st;
    int rc = fbf_cmp_mkdirs(s->out, err);
    if (!rc)
        rc = fbf_cmp_run(cells, sel, nsel, &ro, &st, err);
    free(sel);
    if (rc)
        return 2;
    if (st.signal) {
        fprintf(stderr, "fastbf-campaign: stopped by signal %d (%s): %zu cells done now, the "
                "running ones left to run again\n", st.signal, strsignal(st.signal), st.ran);
        return 128 + st.signal;
    }
    if (o->mode == M_CELL) {
        if (st.already)
            printf("cell %ld %s: already done\n", o->cell, cells[o->cell].name);
        return st.failed || st.busy ? 1 : 0;
    }
    printf("%zu cells: %zu run now, %zu done before, %zu failed, %zu running elsewhere\n", n,
           st.ran, st.already, st.failed, st.busy);
    size_t done;
    if (tabulate(o, s, cells, n, &done, err))
        return 2;
    return st.failed || st.busy ? 1 : 0;
}

int main(int argc, char **argv)
{
    opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    /* Replays are reaped with waitpid: SIGCHLD must not be ignored. */
    signal(SIGCHLD, SIG_DFL);
    fbf_error err;
    fbf_cmp_spec *s;
    if (fbf_cmp_spec_load(o.file, o.mode != M_COLLECT && o.mode != M_LIST, &s, &err)) {
        fprintf(stderr, "fastbf-campaign: %s\n", err.text);
        return 2;
    }
    fbf_cmp_cell *cells = NULL;
    size_t n = 0;
    char *replay = NULL, *self = NULL;
    int status = 2;
    if (o.out && set_out(s, o.out, &err))
        goto fail;
    if (fbf_cmp_cells_expand(s, &cells, &n, &err))
        goto fail;
    if (o.mode == M_CELL && (size_t)o.cell >= n) {
        fbf_errorf(&err, -EINVAL, "--cell %ld: %s has %zu cells (0-%zu)", o.cell, o.file, n,
                   n - 1);
        goto fail;
    }
    if (o.mode == M_COLLECT) {
        size_t done;
        if (tabulate(&o, s, cells, n, &done, &err))
            goto fail;
        printf("%zu cells: %zu done, %zu not\n", n, done, n - done);
        status = done == n ? 0 : 1;
        goto out;
    }
    if (!(replay = find_replay(&o, s, &err)))
        goto fail;
    if (o.mode == M_LIST) {
        list_cells(cells, n, replay);
        status = 0;
        goto out;
    }
    if (o.mode == M_EMIT) {
        if (!(self = fbf_cmp_self_exe())) {
            fbf_errorf(&err, -ENOENT, "cannot find this program's own path (/proc/self/exe)");
            goto fail;
        }
        fbf_cmp_emit_opts eo = {o.emit, self, o.replay ? replay : NULL,
                                o.jobs_given ? o.jobs : 0};
        if (fbf_cmp_emit(stdout, s, n, &eo, &err))
            goto fail;
        status = 0;
        goto out;
    }
    status = run_mode(&o, s, cells, n, replay, &err);
    if (status == 2)
        goto fail;
    goto out;
fail:
    fprintf(stderr, "fastbf-campaign: %s\n", err.text);
    status = 2;
out:
    fflush(stdout);
    free(replay);
    free(self);
    fbf_cmp_cells_destroy(cells, n);
    fbf_cmp_spec_destroy(s);
    return status;
}
