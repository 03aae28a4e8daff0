/*
 * plot: a campaign's comparison plots, drawn by gnuplot (Debian's
 * gnuplot-nox; run as `gnuplot`, found in PATH).
 *
 * <out>/mean_wait.png and <out>/mean_bounded_slowdown.png: clustered bars,
 * one cluster per combination of the other axes (the trace's stem, then
 * n<nb_res>, m<max_jobs>, s<seed> and the options string where those axes
 * have more than one value), one bar per policy (and depth, where it is
 * not the policy's own); the y axis is logarithmic when the largest bar is
 * more than 20 times the smallest (and none is 0), as fcfs against the
 * backfilling policies often is. Cells not done leave their bar out. The data and
 * gnuplot scripts stay in <out>/plots/ (with gnuplot's log), so a plot can
 * be restyled and redrawn by hand: cd <out>/plots && gnuplot mean_wait.gp.
 * Each PNG is written under a temporary name and renamed once gnuplot
 * succeeded.
 */
#ifndef FBF_CAMPAIGN_PLOT_H
#define FBF_CAMPAIGN_PLOT_H

#include <stddef.h>

#include "engine/error.h"
#include "tools/campaign/table.h"

/* Draws the plots of rows[0..n) into out. -ENOENT when gnuplot cannot be
 * run, -ENODATA when no cell is done, another negative code when gnuplot
 * fails (err names the log), all with err filled. */
int fbf_cmp_plot(const char *out, const fbf_cmp_row *rows, size_t n, fbf_error *err);

#endif
