/*
 * replay_run: test helpers that run fastbf-replay and read what it wrote.
 *
 * fbf_test_replay_run(): runs build/fastbf-replay (FBF_BUILD_DIR from the
 * environment, else the compile-time macro) with the given arguments to
 * completion, capturing stdout and stderr. The other helpers write its
 * inputs and read its outputs (out_jobs.csv, summary.json).
 *
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_REPLAY_RUN_H
#define FBF_TEST_REPLAY_RUN_H

#include <stdbool.h>

/* Path of fastbf-replay / fastbf under test (static storage). */
const char *fbf_test_replay_path(void);
const char *fbf_test_replay_fastbf_path(void);

/* Runs fastbf-replay with args (argv[1..], NULL-terminated). Returns its
 * exit code, 128 + signal, or -1 on timeout (it is then killed). */
int fbf_test_replay_run(const char *const *args, int timeout_ms, char **out, char **err);

/* The same for the program at path (fastbf-plot, ...). */
int fbf_test_run_program(const char *path, const char *const *args, int timeout_ms, char **out,
                         char **err);

/* Runs fastbf-replay with args and fails the test unless it exits with rc
 * and (when needle is not NULL) its stdout (on_stdout) or stderr holds
 * needle. */
void fbf_test_replay_expect(const char *const *args, int timeout_ms, int rc, const char *needle,
                            bool on_stdout);

/* 0 if fastbf is built where the suites expect it; else says so on
 * stderr and returns 1 (a suite's exit code). */
int fbf_test_replay_require_fastbf(void);

/* Writes text to path (gzip-compressed when gz). 0 or -errno. */
int fbf_test_replay_write(const char *path, const char *text, int gz);

/* A fresh temporary directory (malloc'ed path), and its removal. */
char *fbf_test_replay_tmpdir(void);
void fbf_test_replay_rmdir(char *dir);

/* fastbf's stderr without the line that says where it listens ("fastbf:
 * ... listening on URL" or "... connected to PATH"), in place; err may be
 * NULL. */
char *fbf_test_drop_announce(char *err);

/* The whole file, malloc'ed, or NULL. */
char *fbf_test_replay_read(const char *path);

/* Fails the test, naming what and the first line that differs, unless
 * A_DIR/out_jobs.csv and B_DIR/out_jobs.csv are the same file of more
 * than min_lines lines, and their out_schedule.csv are the same as
 * fbf_test_replay_expect_schedule() compares them. */
void fbf_test_replay_same_jobs(const char *a_dir, const char *b_dir, const char *what,
                               int min_lines);

/* Fails the test, naming what and the column, unless out_schedule.csv
 * at got_path has want_path's columns and values, but for the run's own:
 * batsim_version (got's must be "fastbf-replay " and a version) and the
 * wall-clock scheduling_time and simulation_time (got's must be "%f"
 * numbers >= 0). */
void fbf_test_replay_expect_schedule(const char *got_path, const char *want_path,
                                     const char *what);

/* From DIR/out_jobs.csv: column col (0-based) of the row whose job_id
 * column is job, as a double; NAN if absent. */
double fbf_test_replay_csv(const char *dir, const char *job, int col);
/* The same column as text (malloc'ed), or NULL. */
char *fbf_test_replay_csv_text(const char *dir, const char *job, int col);

/* From DIR/summary.json: the number at "a" or "a.b"; NAN if absent. */
double fbf_test_replay_summary(const char *dir, const char *key);

#endif
