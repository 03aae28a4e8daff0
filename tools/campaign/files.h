/*
 * files: the file-system steps fastbf-campaign needs, each failing with
 * one line in an fbf_error that names the path.
 *
 * Atomic writes go through a temporary file in the same folder, flushed
 * to disk, then renamed over the target, the folder flushed too: a reader
 * (or a campaign resumed after a crash) sees the old file or the whole new
 * one, never a part.
 */
#ifndef FBF_CAMPAIGN_FILES_H
#define FBF_CAMPAIGN_FILES_H

#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"

/* mkdir -p path (mode 0777 before umask). */
int fbf_cmp_mkdirs(const char *path, fbf_error *err);

/* Writes len bytes of data to path atomically (see above). */
int fbf_cmp_write_atomic(const char *path, const char *data, size_t len, fbf_error *err);

/* The same rename without flushing to disk: a reader sees the old file or
 * the new one, but after a crash the file may be empty. For bookkeeping
 * that a crash may lose (a run counter), at a fraction of the cost. */
int fbf_cmp_write_replace(const char *path, const char *data, size_t len, fbf_error *err);

/* The whole file, NUL-terminated (caller frees), its length in *len when
 * len is not NULL; NULL with err filled (errno-style code in *code when
 * code is not NULL: -ENOENT for a missing file). */
char *fbf_cmp_read_file(const char *path, size_t *len, int *code, fbf_error *err);

/* Whether path exists (any type). */
bool fbf_cmp_exists(const char *path);

/* printf into a fresh string (caller frees); NULL when out of memory. */
char *fbf_cmp_strf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* dir "/" name, or name alone when it is absolute (caller frees). */
char *fbf_cmp_join(const char *dir, const char *name);

/* The absolute, symlink-free folder that holds path (caller frees). */
char *fbf_cmp_dirname_abs(const char *path, fbf_error *err);

/* s as one word for a POSIX shell (caller frees): as it is when it holds
 * only letters, digits and _./:=,+-@%, else in single quotes, ' as '\''. */
char *fbf_cmp_shell_quote(const char *s);

/* The path of the running executable (/proc/self/exe; caller frees), or
 * NULL. */
char *fbf_cmp_self_exe(void);

#endif
