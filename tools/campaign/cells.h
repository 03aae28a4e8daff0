/*
 * cells: a campaign's replays, one per combination of its axes.
 *
 * The cells are the cartesian product traces x (policy, depth) x
 * platform_sizes x max_jobs x seeds x options, in that nesting order (the
 * first axis outermost; each axis in file order), numbered from 0: the
 * number is what --cell and a Slurm or Flux array index take. Depths
 * cross only the backfilling policies: fcfs has none (depth "-"). Two
 * combinations that denote the same replay (easy with depths default and
 * 1) are one cell, the first.
 *
 * A cell's identity is its key, a canonical text of its parameters (the
 * trace as written, {seed} expanded; the effective depth; numbers
 * canonical), so that it does not change when axes are reordered or
 * extended. Its folder name is a readable slug of the key and 12 hex
 * digits of its 64-bit FNV-1a hash:
 *
 *     <trace stem>-<policy>[-d<depth>][-n<nb_res>][-m<max_jobs>][-s<seed>]-<hash>
 *
 * the bracketed parts present only when they differ from the default.
 */
#ifndef FBF_CAMPAIGN_CELLS_H
#define FBF_CAMPAIGN_CELLS_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "tools/campaign/spec.h"

typedef struct fbf_cmp_cell {
    size_t index;
    char *trace;      /* as written, {seed} expanded */
    char *trace_path; /* absolute */
    const char *policy;
    const char *depth_arg; /* --reservation-depth's value, or NULL */
    char *depth;           /* effective: "1", "unlimited", "4"; "-" for fcfs */
    bool custom_depth;     /* depth is not the policy's own */
    const char *nb_res;    /* "default" or a number */
    const char *max_jobs;  /* "default" or a number */
    const char *seed;      /* "" without a seeds axis */
    char *options;         /* {seed} expanded */
    char *key;
    char *name;       /* folder name */
    char *dir;        /* <out>/cells/<name> */
} fbf_cmp_cell;

/* The cells of s (*cells is the caller's: fbf_cmp_cells_destroy). */
int fbf_cmp_cells_expand(const fbf_cmp_spec *s, fbf_cmp_cell **cells, size_t *n, fbf_error *err);

void fbf_cmp_cells_destroy(fbf_cmp_cell *cells, size_t n);

/* fastbf-replay's argument vector for the cell (NULL-terminated; free
 * each string, then the array):
 *   replay TRACE --inproc --policy P [--reservation-depth K] [--nb-res N]
 *          [--max-jobs M] OPTIONS... --quiet --out DIR */
int fbf_cmp_cell_argv(const fbf_cmp_cell *c, const char *replay, char ***argv, fbf_error *err);

/* Frees an argument vector of fbf_cmp_cell_argv. */
void fbf_cmp_argv_free(char **argv);

#endif
