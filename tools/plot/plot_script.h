/*
 * plot_script: the gnuplot script that draws fastbf-plot's three figures
 * from a view (plot_series.h). The script is self-contained (the data are
 * inline datablocks) and needs gnuplot 5.4's pngcairo or svg terminal.
 *
 * Figures, each written to DIR/NAME.png or .svg:
 *  - gantt: one filled rectangle per range of each job's allocation, in
 *    bulk (one datablock and one plot clause per colour, not an object per
 *    job); job outlines only when most rectangles are at least 3 pixels
 *    wide and tall, since a border on a sliver of a pixel paints the
 *    picture in the border's colour. In the SVG, each colour is a group
 *    <g id="gnuplot_plot_N"> holding one <polygon> per rectangle after its
 *    key sample.
 *  - load: utilisation (busy resources, % of the platform) above the
 *    number of waiting jobs, each bin's mean as a line over its min-max.
 *  - wait_by_size: per size class, a box from the 25th to the 75th
 *    percentile of the wait, whiskers at the 10th and 90th, the median,
 *    the mean and the maximum, on a log scale where waits under 1 s are
 *    drawn at 1 s.
 * Times are shown in seconds, hours or days after time 0 of the
 * simulation, whichever suits the window's length.
 */
#ifndef FBF_PLOT_SCRIPT_H
#define FBF_PLOT_SCRIPT_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/plot/plot_series.h"

typedef struct fbf_plot_out {
    const char *dir;   /* where the images go */
    bool svg;          /* else PNG */
    int width, height; /* pixels of the Gantt chart and the load figure */
    const char *title; /* first words of each figure's title */
} fbf_plot_out;

/* The names of the figures, without extension. */
#define FBF_PLOT_NFIGS 3
extern const char *const fbf_plot_fig_names[FBF_PLOT_NFIGS];

/* Writes the script to f. 0, or -EIO when f reports a write error. */
int fbf_plot_script_write(FILE *f, const fbf_plot_jobs *jobs, const fbf_plot_view *v,
                          const fbf_plot_out *o);

/* The time unit for a window of span seconds: its length in seconds, and
 * its name ("s", "h", "days"). */
double fbf_plot_time_unit(double span, const char **name);

#endif
