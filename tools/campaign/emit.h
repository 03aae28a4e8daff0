/*
 * emit: the script that runs a campaign's cells on a cluster, one cell
 * per job, each job running `fastbf-campaign --cell I FILE`:
 *
 *   slurm  an sbatch job array: #SBATCH --array=0-(N-1)[%T], the task
 *          running cell $SLURM_ARRAY_TASK_ID; one task, one CPU each;
 *          output in <out>/logs/slurm-<job>_<task>.out.
 *   flux   a POSIX shell script of one `flux submit --cc=0-(N-1)`, which
 *          replicates the job once per index, `{cc}` in its command and
 *          options becoming the index (flux-submit(1)); one task, one
 *          core each; output in <out>/logs/flux-cell-<index>.out.
 *
 * Paths in the scripts are absolute, so that they run from anywhere on a
 * shared file system. `fastbf-campaign collect FILE` gathers the table
 * once the jobs have ended. <out>/logs is created here, since neither
 * Slurm nor Flux creates the folder of an output file.
 */
#ifndef FBF_CAMPAIGN_EMIT_H
#define FBF_CAMPAIGN_EMIT_H

#include <stddef.h>
#include <stdio.h>

#include "engine/error.h"
#include "tools/campaign/spec.h"

typedef struct fbf_cmp_emit_opts {
    const char *kind;    /* "slurm" or "flux" */
    const char *self;    /* fastbf-campaign, absolute */
    const char *replay;  /* an absolute --replay to pass on, or NULL */
    unsigned throttle;   /* Slurm: at most this many tasks at once (0: no limit) */
} fbf_cmp_emit_opts;

/* Writes the script for the ncells cells of s to f. -EINVAL (err
 * filled) for an unknown kind or a path the script cannot carry. */
int fbf_cmp_emit(FILE *f, const fbf_cmp_spec *s, size_t ncells, const fbf_cmp_emit_opts *o,
                 fbf_error *err);

#endif
