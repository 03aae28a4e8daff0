/*
 * run: replays a campaign's cells, a few at a time, resumably.
 *
 * Each cell has its folder (cells.h) holding:
 *   cell.txt      its key and the command that runs it
 *   runs          how many times it was started (a counter)
 *   replay.log    fastbf-replay's stdout and stderr
 *   out_jobs.csv, summary.json   fastbf-replay --out's files
 *   done          the marker: the key, written atomically once the replay
 *                 exited 0 and its summary.json reads (both outputs
 *                 flushed to disk first)
 *   failed        why the last run failed, when it did
 *   lock          held (flock) while the cell runs
 *
 * A cell is done when its marker holds its key; anything else (never
 * started, interrupted, failed) runs again from an emptied folder. The
 * lock keeps two campaigns (a local run and a cluster's array task) from
 * running one cell at once: the second skips it, saying so.
 *
 * Each replay runs in a process group of its own. While cells run,
 * SIGINT, SIGTERM and SIGHUP are taken by sigwaitinfo (no handler): they
 * stop every running replay (SIGTERM to its group), leave their cells
 * unmarked, and end the run with the signal's number in stats.
 */
#ifndef FBF_CAMPAIGN_RUN_H
#define FBF_CAMPAIGN_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "engine/error.h"
#include "tools/campaign/cells.h"

typedef enum fbf_cmp_state {
    FBF_CMP_PENDING, /* never finished */
    FBF_CMP_DONE,
    FBF_CMP_FAILED, /* its last run failed */
} fbf_cmp_state;

/* The cell's state from its folder; with FBF_CMP_FAILED, the reason goes
 * into why (cap bytes) when why is not NULL. -EEXIST (err filled) when the
 * folder's marker holds another key. */
int fbf_cmp_cell_state(const fbf_cmp_cell *c, char *why, size_t cap, fbf_error *err);

typedef struct fbf_cmp_run_opts {
    unsigned jobs;      /* replays at once, >= 1 */
    const char *replay; /* fastbf-replay: a path, or a name looked up in PATH */
    FILE *log;          /* one line per cell started elsewhere, finished or failed */
} fbf_cmp_run_opts;

typedef struct fbf_cmp_run_stats {
    size_t already; /* done before this run */
    size_t ran;     /* finished now */
    size_t failed;
    size_t busy;    /* running in another process, skipped */
    int signal;     /* the signal that stopped the run, or 0 */
} fbf_cmp_run_stats;

/* Runs the cells of sel[0..nsel) (indexes into cells) that are not done.
 * A failed replay is counted, not an error: the return is negative only
 * when the campaign itself cannot go on (a folder it cannot write, a
 * marker of another key). */
int fbf_cmp_run(const fbf_cmp_cell *cells, const size_t *sel, size_t nsel,
                const fbf_cmp_run_opts *o, fbf_cmp_run_stats *stats, fbf_error *err);

#endif
