/*
 * workload: job lists read from SWF traces and Batsim JSON workloads.
 *
 * One reader for the two formats the tools accept, so fastbf-replay, the
 * tests and any other tool apply the same field rules:
 *
 *   SWF (plain or gzip; zlib reads both):
 *     id       "<name>!<field 1>"                      ("w0!17")
 *     subtime  field 2
 *     runtime  field 4
 *     res      field 5, else field 8 when field 5 is not > 0
 *     walltime field 9, else the runtime, else 1 when the runtime is 0
 *              (Batsim accepts only -1 or a strictly positive walltime)
 *     user     field 12 when >= 0 (fbf_wl_job.extra)
 *     skipped, and counted per reason: no processors (res not > 0), negative
 *     (unknown) runtime, negative submit time, a job number seen before.
 *     Comments (';') and blank lines are fine. A job line has SWF's 18
 *     fields (-1 for unknown): one with fewer is an error naming the file,
 *     the line and its count, unless skip_short_lines counts it as skipped
 *     (reason "fewer than 18 fields"). A field that is not a number or is beyond
 *     +-9e15, and a NUL byte, are errors naming the line.
 *     Platform size: header "; MaxProcs: N", else "; MaxNodes: N" (the
 *     leading integer: "338 (batch partition; 512 total)" is 338).
 *
 *   Batsim JSON ({"nb_res", "jobs": [...], "profiles": {...}}): refused
 *     as Batsim 4.2.1 refuses it when it loads the file, with its text
 *     ("Invalid JSON file 'PATH': job 'w0!3' has no 'subtime' field",
 *     src/workload.cpp, profiles.cpp, jobs.cpp), the job's index added:
 *     nb_res an integer > 0; "profiles" an object of objects with a string
 *     "type", a delay profile's "delay" a number > 0, no name twice; "jobs"
 *     an array of objects: id a string or an integer, subtime a number,
 *     walltime (optional, absent = -1) a number, -1 or > 0, res an integer
 *     >= 0, profile a string naming a profile, no id twice. Beyond Batsim,
 *     and said so: a subtime < 0, a non-finite number, and a job whose
 *     profile is not a delay or has a "ret" other than 0 (Batsim fails
 *     such a job) cannot be replayed. An id without '!' gets "<name>!"
 *     prefixed; one with '!' names its own workload (a file may stand for
 *     several of Batsim's workloads). runtime = the profile's delay. A
 *     job's "user" (unless null) and "priority" are kept as they are
 *     (fbf_wl_job.extra).
 *     Not checked: fields of the profile types fastbf cannot replay when
 *     no job uses them, and whether an integer was written "2.0" (cJSON
 *     does not tell; Batsim refuses it for res).
 *
 *   Either format: a workload with no job is an error naming the file
 *   (and, for SWF, how many job lines were skipped), unless allow_empty
 *   (a run whose jobs all come by registration).
 *
 * The format is detected from the content: a file whose first non-blank
 * byte is '{' is JSON, anything else SWF.
 *
 * Invariants: jobs[] is in file order (callers sort if they need to);
 * every id is unique and contains '!'; every job's profile indexes
 * profiles[]; runtime >= 0 and walltime is -1 or > 0 (JSON may carry any
 * res, since rejecting res < 1 or res > nb_res is the scheduler's job).
 * SWF jobs get one "delay" profile per distinct runtime, so a trace of a
 * million jobs does not send a million profiles.
 *
 * Ownership: fbf_workload_read()/fbf_workload_create() return a workload
 * the caller frees with fbf_workload_destroy() (NULL accepted). Every
 * string in it (ids, names, path) is owned by the workload and lives as
 * long as it. Read-only use from several threads is safe.
 *
 * Errors: NULL with errno set (EINVAL bad content, ENOENT/EACCES/... from
 * opening the file, ENOMEM) and one line in err naming the file, the line
 * (SWF) or the job (JSON), and the field.
 */
#ifndef FBF_WORKLOAD_H
#define FBF_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"

typedef enum fbf_wl_walltime_mode {
    FBF_WL_WALLTIME_FIELD9 = 0, /* SWF field 9 / the JSON walltime, with the fallbacks above */
    FBF_WL_WALLTIME_RUNTIME,    /* walltime = runtime (1 when the runtime is 0) */
    FBF_WL_WALLTIME_FACTOR,     /* walltime = max(1, factor * runtime) */
} fbf_wl_walltime_mode;

typedef enum fbf_wl_skip {
    FBF_WL_SKIP_NO_PROCS = 0, /* fields 5 and 8 both not > 0 */
    FBF_WL_SKIP_NEG_RUNTIME,  /* field 4 < 0 (-1: unknown) */
    FBF_WL_SKIP_NEG_SUBTIME,  /* field 2 < 0 */
    FBF_WL_SKIP_DUPLICATE_ID, /* field 1 already seen */
    FBF_WL_SKIP_SHORT_LINE,   /* fewer than 18 fields (skip_short_lines) */
    FBF_WL_SKIP_COUNT
} fbf_wl_skip;

typedef enum fbf_wl_format {
    FBF_WL_MEMORY = 0, /* built with fbf_workload_create() */
    FBF_WL_SWF,
    FBF_WL_JSON,
} fbf_wl_format;

typedef struct fbf_wl_read_options {
    fbf_wl_walltime_mode walltime_mode;
    double walltime_factor; /* FBF_WL_WALLTIME_FACTOR: > 0 */
    int64_t max_jobs;       /* keep the first max_jobs accepted jobs (file order); < 0: all */
    const char *name;       /* workload name, the id prefix; NULL: "w0" */
    bool skip_short_lines;  /* SWF: skip (and count) lines of fewer than 18 fields */
    bool allow_empty;       /* a workload with no job is not an error */
} fbf_wl_read_options;

/* Zero-initialised options are the defaults (field 9, all jobs, "w0",
 * short lines and empty workloads refused) except max_jobs: use
 * FBF_WL_READ_DEFAULTS. */
#define FBF_WL_READ_DEFAULTS                                                                       \
    { FBF_WL_WALLTIME_FIELD9, 1.0, -1, NULL, false, false }

typedef struct fbf_wl_job {
    const char *id;   /* "w0!17", owned by the workload */
    double subtime;   /* seconds, >= 0 for SWF */
    double runtime;   /* seconds the job runs when not stopped, >= 0 */
    double walltime;  /* > 0, or -1 for none */
    int64_t res;      /* requested resources */
    uint32_t profile; /* index in profiles[] */
    /* Members the job's description carries besides Batsim's, as JSON
     * text to put after them (",\"user\":12"), or NULL: its user (SWF
     * field 12 when >= 0; a Batsim job's "user") and priority (a Batsim
     * job's "priority"), which fastbf's orders and estimates read. */
    const char *extra;
} fbf_wl_job;

typedef struct fbf_wl_profile {
    const char *name; /* owned by the workload */
    double delay;     /* seconds, >= 0 */
} fbf_wl_profile;

typedef struct fbf_wl_priv fbf_wl_priv;

typedef struct fbf_workload {
    fbf_wl_format format;
    const char *name;       /* the id prefix, "w0" by default */
    const char *path;       /* absolute when it could be resolved; NULL in memory */
    uint32_t nb_res;        /* platform size from the file; 0 = not given */
    fbf_wl_job *jobs;       /* nb_jobs entries, file order */
    size_t nb_jobs;
    fbf_wl_profile *profiles;
    size_t nb_profiles;
    size_t skipped[FBF_WL_SKIP_COUNT];    /* SWF jobs left out, per reason */
    size_t first_skipped_line[FBF_WL_SKIP_COUNT]; /* 1-based line of the first one */
    size_t lines;           /* lines read (SWF) */
    fbf_wl_priv *priv;
} fbf_workload;

/* Reads path (SWF plain or gzip, or Batsim JSON plain or gzip). opt NULL
 * means the defaults. */
fbf_workload *fbf_workload_read(const char *path, const fbf_wl_read_options *opt,
                                fbf_error *err);

/* An empty in-memory workload named name (NULL: "w0"), to fill with
 * fbf_workload_add_job(): for generators and tests. */
fbf_workload *fbf_workload_create(const char *name, fbf_error *err);

/* Appends a job; id gets "<name>!" prefixed when it has no '!'. The
 * profile is the "delay_<runtime>" one, created on first use. walltime
 * must be -1 or > 0 and runtime >= 0 (-EINVAL); -EEXIST for an id already
 * present; -ENOMEM. */
int fbf_workload_add_job(fbf_workload *wl, const char *id, double subtime, double runtime,
                         double walltime, int64_t res, fbf_error *err);

/* The same with a named profile (created with delay runtime when new, kept
 * as it is otherwise); NULL profile: as fbf_workload_add_job(). Moves
 * jobs[] and profiles[]: pointers into them do not survive the call. */
int fbf_workload_add_job_profile(fbf_workload *wl, const char *id, double subtime,
                                 double runtime, double walltime, int64_t res,
                                 const char *profile, fbf_error *err);

void fbf_workload_destroy(fbf_workload *wl);

/* Index in jobs[] of the job with that id, or -1. O(1) expected. */
int64_t fbf_workload_find(const fbf_workload *wl, const char *id);

/* Total of skipped[]. */
size_t fbf_workload_skipped_total(const fbf_workload *wl);

/* "no processors", "negative run time", ... */
const char *fbf_wl_skip_reason(fbf_wl_skip reason);

#endif
