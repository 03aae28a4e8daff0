/*
 * plot_csv: reads a Batsim jobs file (out_jobs.csv, as Batsim 4.2.1 and
 * fastbf-replay write it) into the jobs that fastbf-plot draws.
 *
 * Columns are found by name in the header; their order and any extra
 * column (fastbf-replay's predicted_waiting_time) do not matter. Needed:
 * job_id, submission_time, requested_number_of_resources, final_state,
 * starting_time, finish_time, allocated_resources. metadata is optional:
 * where it holds fastbf's --tag-starts words ("reason=head",
 * "reason=backfilled", "reason=reservation ..."), each job keeps why it
 * started. Fields follow RFC 4180 (a quoted field may hold commas, "" is a
 * quote; Batsim quotes metadata). A file ending in .gz is read through zlib.
 *
 * Every row is checked, and the first wrong one fails the whole read with
 * one line naming the row, its line, its job and the column:
 *   row 4 (line 5, job 17): column 'starting_time': not a number: 'abc'
 * A started job (every state but REJECTED) needs finite times with
 * submission <= start <= finish and an interval set ("0-3 7 9-10":
 * ascending, disjoint ranges of resource numbers below 2^31, possibly
 * empty); a REJECTED job's time and allocation columns are ignored, as
 * Batsim leaves them empty.
 */
#ifndef FBF_PLOT_CSV_H
#define FBF_PLOT_CSV_H

#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"

typedef enum fbf_plot_state {
    FBF_PLOT_SUCCESS,  /* COMPLETED_SUCCESSFULLY */
    FBF_PLOT_WALLTIME, /* COMPLETED_WALLTIME_REACHED */
    FBF_PLOT_KILLED,   /* COMPLETED_KILLED */
    FBF_PLOT_FAILED,   /* COMPLETED_FAILED */
    FBF_PLOT_REJECTED, /* REJECTED: never started */
    FBF_PLOT_NSTATES
} fbf_plot_state;

/* Why a job started, from fastbf's --tag-starts metadata. */
typedef enum fbf_plot_reason {
    FBF_PLOT_UNTAGGED,
    FBF_PLOT_HEAD,        /* reason=head: in queue order */
    FBF_PLOT_BACKFILLED,  /* reason=backfilled: ahead of an earlier job */
    FBF_PLOT_RESERVATION, /* reason=reservation: its reservation came due */
    FBF_PLOT_NREASONS
} fbf_plot_reason;

typedef struct fbf_plot_job {
    double submit, start, finish; /* start, finish: 0 for a rejected job */
    int64_t res;                  /* requested_number_of_resources */
    int64_t nalloc;               /* resources in the allocation */
    size_t range0;                /* its ranges: ranges[range0 .. range0 + nranges) */
    uint32_t nranges;
    uint32_t line;   /* the line its row starts on */
    uint32_t id_off; /* its job_id in fbf_plot_jobs.ids */
    uint8_t state;   /* fbf_plot_state */
    uint8_t reason;  /* fbf_plot_reason */
} fbf_plot_job;

typedef struct fbf_plot_range {
    uint32_t lo, hi; /* inclusive */
} fbf_plot_range;

/* What a read returns; zero-initialise, free with fbf_plot_jobs_fini. */
typedef struct fbf_plot_jobs {
    fbf_plot_job *jobs;
    size_t n;
    fbf_plot_range *ranges;
    size_t nranges;
    char *ids; /* NUL-terminated job ids, one after the other */
    size_t ids_len;
    size_t count[FBF_PLOT_NSTATES];
    size_t tagged;        /* jobs whose metadata says why they started */
    int64_t max_resource; /* highest resource number allocated; -1: none */
    int64_t max_res;      /* largest request */
} fbf_plot_jobs;

/* Parses text (len bytes, the whole file). 0, or -EINVAL (bad content),
 * -E2BIG (job ids over 4 GiB in all) or -ENOMEM with the line in err; out
 * is then empty. */
int fbf_plot_jobs_parse(fbf_plot_jobs *out, const char *text, size_t len, fbf_error *err);

/* Reads and parses the file at path (gzip or plain). -errno when it cannot
 * be read, else as fbf_plot_jobs_parse. */
int fbf_plot_jobs_read(fbf_plot_jobs *out, const char *path, fbf_error *err);

/* Frees what a parse allocated; the struct is left zeroed. */
void fbf_plot_jobs_fini(fbf_plot_jobs *j);

/* The job's id (a string inside j). */
static inline const char *fbf_plot_job_id(const fbf_plot_jobs *j, const fbf_plot_job *job)
{
    return j->ids + job->id_off;
}

/* Parses an interval set "0-3 7 9-10" (spaces between ranges; empty is
 * the empty set) into at most cap ranges; *n gets how many. 0, or -EINVAL
 * with why in err (no row or column: the caller adds them), -E2BIG when
 * more than cap. */
int fbf_plot_intervals_parse(const char *s, size_t len, fbf_plot_range *out, size_t cap, size_t *n,
                             fbf_error *err);

#endif
