/*
 * plot_script: fastbf-plot's gnuplot script; see plot_script.h.
 */
#include "tools/plot/plot_script.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *const fbf_plot_fig_names[FBF_PLOT_NFIGS] = {"gantt", "load", "wait_by_size"};

/* Paul Tol's colour-blind safe palette. */
static const struct {
    const char *rgb, *label;
} cats[FBF_PLOT_NCATS] = {
    [FBF_PLOT_CAT_COMPLETED] = {"#4477AA", "completed"},
    [FBF_PLOT_CAT_HEAD] = {"#4477AA", "in queue order"},
    [FBF_PLOT_CAT_BACKFILLED] = {"#EE7733", "backfilled"},
    [FBF_PLOT_CAT_RESERVATION] = {"#228833", "at its reservation"},
    [FBF_PLOT_CAT_WALLTIME] = {"#CC3311", "walltime reached"},
    [FBF_PLOT_CAT_KILLED] = {"#AA3377", "killed"},
    [FBF_PLOT_CAT_FAILED] = {"#555555", "failed"},
};
/* Completed jobs without a start reason, beside tagged ones. */
#define UNTAGGED_RGB "#BBBBBB"

double fbf_plot_time_unit(double span, const char **name)
{
    if (span <= 2 * 3600.0) {
        *name = "s";
        return 1;
    }
    if (span <= 3 * 86400.0) {
        *name = "h";
        return 3600;
    }
    *name = "days";
    return 86400;
}

/* A gnuplot single-quoted string: '' is a quote; a line break would end
 * the command, so it becomes a space. */
static void gp_string(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('\'', f);
}

static void set_output(FILE *f, const fbf_plot_out *o, const char *name, int w, int h)
{
    fprintf(f, "\nset terminal %s size %d,%d font 'sans,10' noenhanced\nset output ",
            o->svg ? "svg" : "pngcairo", w, h);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%s", o->dir, name, o->svg ? "svg" : "png");
    gp_string(f, path);
    fputs("\nreset\n", f);
}

typedef struct axis {
    double unit;
    const char *name;
} axis;

static void time_axis(FILE *f, const fbf_plot_view *v, axis *a)
{
    a->unit = fbf_plot_time_unit(v->to - v->from, &a->name);
    fprintf(f, "set xrange [%.12g:%.12g]\nset xlabel 'simulation time (%s)'\n", v->from / a->unit,
            v->to / a->unit, a->name);
}

/* Whether a rectangle is big enough on screen to keep its fill inside
 * an outline (3 pixels each way): outlining a sliver paints it in the
 * outline's colour, which is what turns a dense Gantt chart black. */
typedef struct scale {
    double xs, ys; /* pixels per second, per resource (about) */
} scale;

static bool big(const scale *s, double x0, double x1, const fbf_plot_range *g)
{
    return (x1 - x0) * s->xs >= 3 && ((double)g->hi - g->lo + 1) * s->ys >= 3;
}

/* The datablock of colour c, outlined or not: x0 x1 y0 y1, the job's id
 * as a comment. Returns how many rectangles it holds. */
static size_t gantt_block(FILE *f, const fbf_plot_jobs *J, const fbf_plot_view *v, double unit,
                          const scale *s, int c, bool outlined)
{
    size_t n = 0;
    for (size_t i = 0; i < v->nsel; i++) {
        const fbf_plot_job *j = &J->jobs[v->sel[i]];
        if ((int)fbf_plot_category(j, v->color) != c)
            continue;
        double x0 = fmax(j->start, v->from), x1 = fmin(j->finish, v->to);
        for (uint32_t r = 0; r < j->nranges; r++) {
            const fbf_plot_range *g = &J->ranges[j->range0 + r];
            if (big(s, x0, x1, g) != outlined)
                continue;
            if (!n++)
                fprintf(f, "$gantt%d%s << EOD\n", c, outlined ? "o" : "");
            fprintf(f, "%.10g %.10g %u %llu # %s\n", x0 / unit, x1 / unit, g->lo,
                    (unsigned long long)g->hi + 1, fbf_plot_job_id(J, j));
        }
    }
    if (n)
        fputs("EOD\n", f);
    return n;
}

static void gantt(FILE *f, const fbf_plot_jobs *J, const fbf_plot_view *v, const fbf_plot_out *o)
{
    axis a;
    a.unit = fbf_plot_time_unit(v->to - v->from, &a.name);
    scale s = {(o->width - 120) / (v->to - v->from), (o->height - 120) / (double)v->nres};
    bool tagged = v->catjobs[FBF_PLOT_CAT_HEAD] + v->catjobs[FBF_PLOT_CAT_BACKFILLED] +
                      v->catjobs[FBF_PLOT_CAT_RESERVATION] >
                  0;
    size_t n[FBF_PLOT_NCATS][2];
    for (int c = 0; c < FBF_PLOT_NCATS; c++)
        for (int outlined = 0; outlined < 2; outlined++)
            n[c][outlined] = v->ncat[c] ? gantt_block(f, J, v, a.unit, &s, c, outlined) : 0;
    set_output(f, o, "gantt", o->width, o->height);
    time_axis(f, v, &a);
    fprintf(f, "set yrange [0:%lld]\nset ylabel 'resource'\n", (long long)v->nres);
    if (v->nres <= 32) { /* few: each resource's number beside its row */
        fputs("set ytics (", f);
        for (int64_t r = 0; r < v->nres; r++)
            fprintf(f, "%s\"%lld\" %lld.5", r ? ", " : "", (long long)r, (long long)r);
        fputs(") scale 0\n", f);
    }
    /* The key's entries, one a colour. */
    char label[FBF_PLOT_NCATS][64];
    size_t entries = 0, widest = 0;
    for (int c = 0; c < FBF_PLOT_NCATS; c++) {
        if (!v->ncat[c])
            continue;
        snprintf(label[c], sizeof label[c], "%s (%zu)",
                 c == FBF_PLOT_CAT_COMPLETED && tagged ? "untagged" : cats[c].label, v->catjobs[c]);
        entries++;
        widest = strlen(label[c]) > widest ? strlen(label[c]) : widest;
    }
    /* The key goes under the x label ("set key below" lets the two
     * overlap), in as many rows as gnuplot will make: it gives every
     * entry the widest one's room, about 7 px a character and the sample. */
    size_t cols = (size_t)(o->width - 60) / ((widest + 8) * 7);
    size_t rows = entries ? (entries + (cols ? cols : 1) - 1) / (cols ? cols : 1) : 0;
    fprintf(f,
            "set key at screen 0.5,0.012 center bottom horizontal samplen 2\nset bmargin %.1f\n"
            "set tics out\nset title ",
            4.5 + 1.1 * (double)rows);
    char t[512];
    snprintf(t, sizeof t, "%s: %zu jobs as %zu rectangles on %lld resources", o->title, v->nsel,
             v->nrect, (long long)v->nres);
    gp_string(f, t);
    fputs("\nplot ", f);
    int clauses = 0;
    for (int c = 0; c < FBF_PLOT_NCATS; c++) {
        const char *rgb = c == FBF_PLOT_CAT_COMPLETED && tagged ? UNTAGGED_RGB : cats[c].rgb;
        for (int outlined = 0; outlined < 2; outlined++) {
            if (!n[c][outlined])
                continue;
            fprintf(f,
                    "%s$gantt%d%s using 1:3:1:2:3:4 with boxxyerror fs solid 1.0 %s lc rgb "
                    "'%s' ",
                    clauses++ ? ", \\\n     " : "", c, outlined ? "o" : "",
                    outlined ? "border lc rgb '#FFFFFF'" : "noborder", rgb);
            /* One legend entry a colour, on its first clause. */
            if (outlined && n[c][0]) {
                fputs("notitle", f);
                continue;
            }
            fputs("title ", f);
            gp_string(f, label[c]);
        }
    }
    fputs(clauses ? "\n" : "NaN notitle\n", f);
}

static void load(FILE *f, const fbf_plot_view *v, const fbf_plot_out *o)
{
    axis a;
    a.unit = fbf_plot_time_unit(v->to - v->from, &a.name);
    /* x, then utilisation % mean min max, then waiting jobs mean min max. */
    fputs("$load << EOD\n", f);
    double w = (v->to - v->from) / (double)v->nbins, pct = 100.0 / (double)v->nres;
    for (size_t k = 0; k < v->nbins; k++)
        fprintf(f, "%.10g %.6g %.6g %.6g %.6g %.6g %.6g\n",
                (v->from + w * ((double)k + 0.5)) / a.unit, v->busy[k].mean * pct,
                v->busy[k].min * pct, v->busy[k].max * pct, v->queue[k].mean, v->queue[k].min,
                v->queue[k].max);
    fputs("EOD\n", f);
    /* Two panels: each needs some 200 px to be read. */
    set_output(f, o, "load", o->width, o->height * 6 / 7 > 480 ? o->height * 6 / 7 : 480);
    char t[512];
    fputs("set multiplot layout 2,1 title ", f);
    gp_string(f, o->title);
    fputs("\nset tics out\nunset key\nset lmargin 10\nset ylabel 'busy resources (%)'\n"
          "set yrange [0:105]\nset ytics 0,20,100\nunset xlabel\nset format x ''\nset title ",
          f);
    char bins[128];
    snprintf(bins, sizeof bins, "line: mean per %.3g %s, band: min to max", w / a.unit, a.name);
    snprintf(t, sizeof t, "utilisation: mean %.2f %% of %lld resources (%s)", v->util_mean * 100,
             (long long)v->nres, bins);
    gp_string(f, t);
    fputc('\n', f);
    time_axis(f, v, &a);
    fputs("unset xlabel\n"
          "plot $load using 1:3:4 with filledcurves fc rgb '#A6C8E6' notitle, \\\n"
          "     $load using 1:2 with lines lc rgb '#205080' lw 1 notitle\n"
          "set format x '%g'\nset ylabel 'waiting jobs'\nset ytics autofreq\n",
          f);
    /* Headroom above the highest value, which the border would hide. */
    fprintf(f, "set yrange [0:%.6g]\nset title ", fmax(1, v->queue_max) * 1.06);
    snprintf(t, sizeof t, "queue: mean %.2f waiting jobs, at most %.0f (%s)", v->queue_mean,
             v->queue_max, bins);
    gp_string(f, t);
    fputc('\n', f);
    time_axis(f, v, &a);
    fputs("plot $load using 1:6:7 with filledcurves fc rgb '#F4C09A' notitle, \\\n"
          "     $load using 1:5 with lines lc rgb '#A04010' lw 1 notitle\n"
          "unset multiplot\n",
          f);
}

static void waits(FILE *f, const fbf_plot_view *v, const fbf_plot_out *o)
{
    /* x, mean, p10, p25, p50, p75, p90, max; at least 1 s for the log scale */
    fputs("$wait << EOD\n", f);
    for (size_t i = 0; i < v->nclass; i++) {
        const fbf_plot_wclass *c = &v->wclass[i];
        fprintf(f, "%zu %.10g %.10g %.10g %.10g %.10g %.10g %.10g\n", i + 1, fmax(c->mean, 1),
                fmax(c->p10, 1), fmax(c->p25, 1), fmax(c->p50, 1), fmax(c->p75, 1), fmax(c->p90, 1),
                fmax(c->max, 1));
    }
    fputs("EOD\n", f);
    double top = 0; /* waits all under 10 s: a decade, not gnuplot's empty range */
    for (size_t i = 0; i < v->nclass; i++)
        top = fmax(top, v->wclass[i].max);
    set_output(f, o, "wait_by_size", o->width * 5 / 8 > 640 ? o->width * 5 / 8 : 640,
               o->height * 6 / 7 > 360 ? o->height * 6 / 7 : 360);
    char t[512];
    snprintf(t, sizeof t, "%s: wait of the %zu jobs by size", o->title, v->nsel);
    fputs("set title ", f);
    gp_string(f, t);
    /* The key in words: four entries side by side do not fit. */
    fputs(".\"\\n\".'box: p25 to p75, whiskers: p10 to p90, bar: median, "
          "dot: mean, x: max'\nunset key",
          f);
    fprintf(f,
            "\nset logscale y\nset yrange [1:%s]\nset xrange [0.4:%.1f]\nset tics out\n"
            "set ylabel 'wait (s; under 1 s drawn at 1 s)'\n"
            "set xlabel 'requested resources (jobs)' offset 0,-1\nset format y '%%.0f'\n"
            "set boxwidth 0.5\nset style fill solid 0.6 border lc rgb '#205080'\nset xtics (",
            top < 10 ? "10" : "*", (double)v->nclass + 0.6);
    for (size_t i = 0; i < v->nclass; i++) {
        const fbf_plot_wclass *c = &v->wclass[i];
        if (c->lo == c->hi)
            fprintf(f, "%s\"%lld\\n(%zu)\" %zu", i ? ", " : "", (long long)c->lo, c->n, i + 1);
        else
            fprintf(f, "%s\"%lld-%lld\\n(%zu)\" %zu", i ? ", " : "", (long long)c->lo,
                    (long long)c->hi, c->n, i + 1);
    }
    fputs(")\n", f);
    if (!v->nclass) {
        fputs("plot NaN notitle\n", f);
        return;
    }
    fputs("plot $wait using 1:4:3:7:6 with candlesticks whiskerbars lc rgb '#4477AA' "
          "title 'p25 to p75, whiskers p10 to p90', \\\n"
          "     $wait using 1:5:5:5:5 with candlesticks fs empty lc rgb '#000000' lw 2 "
          "title 'median', \\\n"
          "     $wait using 1:2 with points pt 7 ps 0.8 lc rgb '#CC3311' title 'mean', \\\n"
          "     $wait using 1:8 with points pt 2 ps 0.8 lc rgb '#555555' title 'max'\n",
          f);
}

int fbf_plot_script_write(FILE *f, const fbf_plot_jobs *J, const fbf_plot_view *v,
                          const fbf_plot_out *o)
{
    fputs("# fastbf-plot: gnuplot 5.4 script (pngcairo or svg), data inline\n", f);
    gantt(f, J, v, o);
    load(f, v, o);
    waits(f, v, o);
    fputs("unset output\n", f);
    return ferror(f) ? -EIO : 0;
}
