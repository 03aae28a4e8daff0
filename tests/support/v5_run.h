/*
 * v5_run: test helpers for fastbf-replay --protocol batsim5: a run against
 * a thread EDC (support/v5_edc) with its log, the small workload the
 * suites share, and reading the messages an EDC received.
 *
 * A helper that checks something fails the running cmocka test itself.
 * Every symbol is prefixed fbf_test_ since every tests/support C file is
 * linked into every test.
 */
#ifndef FBF_TEST_V5_RUN_H
#define FBF_TEST_V5_RUN_H

#include <stddef.h>

#include <cjson/cJSON.h>

typedef struct fbf_test_v5_result {
    int rc;
    char *out, *err, *log; /* malloc'ed; log: what the EDC received (v5_edc.h) */
} fbf_test_v5_result;

void fbf_test_v5_result_free(fbf_test_v5_result *r);

/* fastbf-replay --protocol batsim5 --endpoint <a thread EDC playing
 * script (v5_edc.h)> args... (NULL-terminated), 120 s at most. */
fbf_test_v5_result fbf_test_v5_against(const char *const *script, const char *const *args);

/* Runs fastbf-replay with args; fails the test unless it exits 0. */
void fbf_test_v5_run_ok(const char *const *args);

/* Fails the test unless the two files are byte-identical (names the
 * first differing line). */
void fbf_test_v5_same_file(const char *a_path, const char *b_path);

/* Writes dir/three.swf into path: jobs 1 and 2 at 0 (2 and 1 hosts, 10 and
 * 5 s), job 3 at 100 (1 host, 5 s), on 4 hosts. */
void fbf_test_v5_three(const char *dir, char *path, size_t cap);

/* The first message of an EDC log holding needle, parsed (caller
 * deletes); NULL if none. */
cJSON *fbf_test_v5_message_with(const char *log, const char *needle);
/* The event of the first event of message m whose event_type is type. */
const cJSON *fbf_test_v5_event_of(const cJSON *m, const char *type);
/* o.a (.b when b is not NULL) as a number (-12345 if absent) or a string
 * ("(none)"). */
double fbf_test_v5_num(const cJSON *o, const char *a, const char *b);
const char *fbf_test_v5_str(const cJSON *o, const char *a, const char *b);
/* How many times needle occurs in log. */
int fbf_test_v5_count(const char *log, const char *needle);

#endif
