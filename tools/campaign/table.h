/*
 * table: a campaign's results, one row per cell, from each cell's
 * summary.json, written as <out>/results.csv and <out>/results.md.
 *
 * Columns: index, cell (its folder name), trace, policy,
 * reservation_depth, nb_res, max_jobs, seed, options, status (done,
 * failed, pending), then the figures of summary.json: jobs (jobs.done),
 * mean_wait_s (mean_wait), mean_bounded_slowdown, utilization,
 * makespan_s (makespan), wall_s (wall_s.total, the replay's own time),
 * and note (why a cell failed). A figure is empty where the cell is not
 * done or the summary has null (no job finished). The CSV writes each
 * figure so that it reads back as the very double of summary.json
 * (shortest of %.15g and %.17g that does); the Markdown rounds them.
 * nb_res is the platform_sizes value, else the size the replay used
 * (summary's nb_res), else "default".
 *
 * Both files are written atomically, in cell order, so the table of a
 * local run and the one `collect` gathers from a cluster's cells are the
 * same but for wall_s.
 */
#ifndef FBF_CAMPAIGN_TABLE_H
#define FBF_CAMPAIGN_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/error.h"
#include "tools/campaign/cells.h"

enum {
    FBF_CMP_JOBS,
    FBF_CMP_MEAN_WAIT,
    FBF_CMP_BSLD,
    FBF_CMP_UTIL,
    FBF_CMP_MAKESPAN,
    FBF_CMP_WALL,
    FBF_CMP_NFIG
};

typedef struct fbf_cmp_row {
    const fbf_cmp_cell *cell;
    int state; /* fbf_cmp_state (run.h) */
    char nb_res[24];
    char note[200];
    bool has[FBF_CMP_NFIG];
    double fig[FBF_CMP_NFIG];
} fbf_cmp_row;

/* The rows of cells[0..n) (*rows is the caller's, free()). A done cell
 * whose summary.json cannot be read is a failed row, its note saying why,
 * and one line on log. Negative only for a marker of another key or no
 * memory. */
int fbf_cmp_rows_load(const fbf_cmp_cell *cells, size_t n, FILE *log, fbf_cmp_row **rows,
                      fbf_error *err);

/* Writes <out>/results.csv and <out>/results.md. */
int fbf_cmp_table_write(const char *out, const fbf_cmp_row *rows, size_t n, fbf_error *err);

/* The figure's value as the CSV writes it, into buf (cap >= 32). */
void fbf_cmp_format_double(double v, char *buf, size_t cap);

#endif
