/*
 * workload_priv: what the format readers share with the workload store.
 * Private to tools/lib/workload*.c; nothing outside includes it.
 *
 * The split: workload.c owns the store (jobs[], profiles[], the string
 * arena and the interning sets), file access and the fbf_workload_read()
 * dispatcher; workload_swf.c and workload_json.c each turn one format into
 * calls to the store. The store's layout (struct fbf_wl_priv, ck_hs) stays
 * inside workload.c, so a reader can only add jobs through the functions
 * below and cannot break the interning invariants.
 *
 * Contract for a reader fbf_wl_read_<fmt>(wl, gz, o, err):
 *   - wl is fresh from the dispatcher: no jobs, name and path set (path is
 *     what error messages name), format already chosen;
 *   - gz is positioned at the start of the file; the dispatcher closes it;
 *   - o is non-NULL and already validated (walltime factor finite, > 0);
 *   - returns 0, or a negative errno with one line in err; on failure the
 *     dispatcher destroys wl and sets errno, so a reader need not undo
 *     what it appended;
 *   - sets wl->nb_res (0 when the file gives none) and, for SWF, lines and
 *     the skip counters.
 */
#ifndef FBF_WORKLOAD_PRIV_H
#define FBF_WORKLOAD_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "tools/lib/workload.h"

/* ---------- store (workload.c) ---------- */

/* Appends a job whose fields the caller has already checked (runtime >= 0,
 * walltime -1 or > 0, profile a valid index); id is the full id with '!'.
 * -EEXIST for an id already present, -EINVAL past UINT32_MAX - 1 jobs,
 * -ENOMEM; err filled in each case. */
int fbf_wl_add_checked(fbf_workload *wl, const char *id, double subtime, double runtime,
                       double walltime, int64_t res, uint32_t profile, fbf_error *err);

/* Gives the job added last its extra members (workload.h), copied; text
 * begins with a comma. -ENOMEM. */
int fbf_wl_set_extra(fbf_workload *wl, const char *text);

/* Index of the profile named name, created with delay if new; -1 on
 * ENOMEM (err untouched: the caller words the message). An existing
 * profile keeps its delay whatever delay says. */
int64_t fbf_wl_profile_intern(fbf_workload *wl, const char *name, double delay);

/* Index of the profile named name, or -1 when there is none. */
int64_t fbf_wl_profile_index(const fbf_workload *wl, const char *name);

/* Index of the "delay_<runtime>" profile, created on first use; -1 on
 * ENOMEM. Sharing one profile per distinct runtime is what keeps a
 * million-job SWF trace from carrying a million profiles. */
int64_t fbf_wl_delay_profile(fbf_workload *wl, double runtime);

/* Writes the full id ("<name>!raw" when raw has no '!') into buf; -EINVAL
 * with err filled when it does not fit in cap bytes. */
int fbf_wl_full_id(const fbf_workload *wl, const char *raw, char *buf, size_t cap,
                   fbf_error *err);

/* The walltime a job gets under the options; given is the file's estimate
 * (SWF field 9 or the JSON walltime, <= 0 or -1 when absent). json keeps
 * Batsim's "no walltime" (-1) instead of falling back to the runtime. */
double fbf_wl_pick_walltime(const fbf_wl_read_options *o, double given, double runtime,
                            bool json);

/* ---------- file access (workload.c) ---------- */

/* NULL when the stream is fine; the zlib (or errno) message otherwise.
 * gzgets/gzread return "nothing" both at the end and on error, so readers
 * ask this once they see nothing. */
const char *fbf_wl_gz_failure(gzFile gz);

/* Reads one line (without its newline or a trailing '\r') into *buf,
 * growing it. 1 with a line, 0 at end of file, -ENOMEM, or -EILSEQ for a
 * line holding a NUL byte (a C string would end there, silently hiding
 * the rest of the line). */
int fbf_wl_read_line(gzFile gz, char **buf, size_t *cap, size_t *len);

/* The whole (decompressed) rest of gz into a NUL-terminated malloc'd
 * *out of *out_len bytes; path only names the file in errors. */
int fbf_wl_read_all(gzFile gz, const char *path, char **out, size_t *out_len, fbf_error *err);

/* isspace() for the C locale without the locale lookup: the SWF number
 * scanner calls it for every byte of a trace, so it is inline here rather
 * than a call across files. */
static inline bool fbf_wl_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

/* ---------- readers ---------- */

/* workload_swf.c: Standard Workload Format, see workload.h for the fields. */
int fbf_wl_read_swf(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o, fbf_error *err);

/* workload_json.c: Batsim JSON workload, see workload.h for the fields. */
int fbf_wl_read_json(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o,
                     fbf_error *err);

#endif
