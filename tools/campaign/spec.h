/*
 * spec: a campaign file, read and checked.
 *
 * The format is key = value lines; a value is a comma-separated list:
 *
 *     # comment: from a # at the start of a line or after a blank, outside
 *     # double quotes, to the end of the line; also a line starting with ;
 *     traces             = kth.swf.gz, ctc.swf.gz
 *     policies           = fcfs, easy, conservative
 *     reservation_depths = default, 4
 *     platform_sizes     = default, 128
 *     max_jobs           = 5000
 *     seeds              = 1, 2
 *     options            = "", "--walltime runtime"
 *     out                = results
 *
 * An item is bare (trimmed; no double quote, no comma) or double-quoted
 * ("" is the empty string; \" and \\ inside). A line ending with a comma
 * goes on on the next line. Each key once; traces and policies are
 * required. `default` in reservation_depths, platform_sizes and max_jobs
 * (`all` too for max_jobs) means the option is not passed: the policy's
 * own depth, the workload's size, every job. Paths (traces, out, replay)
 * are relative to the file's folder. `{seed}` in a trace or an option
 * string becomes the cell's seed. Options are split into words on blanks,
 * with '...' and "..." grouping; what the campaign sets itself (--out,
 * --policy, --reservation-depth, --nb-res, --max-jobs) and other
 * schedulers than the in-process one are refused there (options.h).
 *
 * Errors are one line: "FILE:LINE: KEY: what is wrong" (FILE as given).
 */
#ifndef FBF_CAMPAIGN_SPEC_H
#define FBF_CAMPAIGN_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"

/* One axis: its values in file order (numbers in canonical form), and the
 * line of its key (0 when absent: then one value, "default" or ""). */
typedef struct fbf_cmp_axis {
    char **v;
    size_t n;
    int line;
} fbf_cmp_axis;

typedef struct fbf_cmp_spec {
    char *file;     /* as given */
    char *abs_file; /* absolute */
    char *dir;      /* absolute folder of the file */
    fbf_cmp_axis traces, policies, depths, sizes, max_jobs, seeds, options;
    char *out;      /* absolute output folder (the file's `out`, else
                     * <file name without extension>-results beside it) */
    char *replay;   /* absolute fastbf-replay from the file, or NULL */
} fbf_cmp_spec;

/* Reads and checks path. With check_traces, every trace (each {seed}
 * expanded) must be a readable file. *out is the caller's
 * (fbf_cmp_spec_destroy). */
int fbf_cmp_spec_load(const char *path, bool check_traces, fbf_cmp_spec **out, fbf_error *err);

/* NULL-safe. */
void fbf_cmp_spec_destroy(fbf_cmp_spec *s);

#endif
