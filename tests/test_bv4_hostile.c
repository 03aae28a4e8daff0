/*
 * test_bv4_hostile: the malformed Batsim v4 messages of
 * support/bv4_bad_cases, each sent over the socket to a real fastbf
 * process brought to the state the case needs, twice: as it is (read
 * whole) and padded past FBF_BV4_STREAM_MIN (read as a stream, once the
 * simulation began). Each time fastbf must answer the request (so that
 * Batsim is not left waiting), exit with status 1 and say exactly the
 * case's one line on stderr, "fastbf: <error>". A case that fails names
 * the message, the reading and what fastbf did. Last, JSON nested as deep
 * as the parser goes, far into a streamed message: parsed on the helper
 * thread, whose stack is smaller than the main thread's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv4_session.h"
#include "support/bv4_bad_cases.h"
#include "support/bv4_kit.h"
#include "support/testkit.h"
#include "support/zmq_peer.h"

#define REPLY_MS 20000
#define EXIT_MS 20000

static bool matches(const char *got, const char *want)
{
    size_t n = strlen(want);
    return n && want[n - 1] == '*' ? strncmp(got, want, n - 1) == 0 : strcmp(got, want) == 0;
}

/* One case over the socket; NULL when fastbf did as the case says, else
 * why not (static storage). */
static const char *run_case(const fbf_test_bad_case *c, bool streamed)
{
    static char why[2048];
    fbf_test_peer p;
    const char *args[] = {"--policy", "easy", NULL};
    if (fbf_test_peer_start(&p, args, true) != 0)
        return "fastbf did not start";
    const char *steps[2] = {NULL, NULL};
    if (c->level >= L_BEGUN)
        steps[0] = fbf_test_bv4_begins(4, "");
    if (c->level >= L_JOBS)
        steps[1] = fbf_test_msg("{'now':10,'events':[%s,%s]}", fbf_test_sub(10, "w0!1", 2, 100),
                                fbf_test_sub(10, "w0!2", 4, 50));
    const char *fault = NULL;
    for (int i = 0; i < 2 && steps[i] && !fault; i++) {
        char *reply = NULL;
        if (fbf_test_peer_request(&p, steps[i], &reply, REPLY_MS) < 0)
            fault = "no reply to the messages before the case's";
        free(reply);
    }
    /* The case's text, padded with spaces (JSON's whitespace) when read
     * as a stream. */
    const char *msg = fbf_test_msg("%s", c->msg);
    size_t len = strlen(msg), pad = streamed ? FBF_BV4_STREAM_MIN + 16 : 0;
    char *text = malloc(len + pad + 1);
    assert_non_null(text);
    memcpy(text, msg, len);
    memset(text + len, ' ', pad);
    text[len + pad] = '\0';
    char *reply = NULL;
    if (!fault && fbf_test_peer_request(&p, text, &reply, REPLY_MS) < 0)
        fault = "no reply to the bad message (Batsim would wait forever)";
    free(reply);
    int rc = fbf_test_peer_wait(&p, EXIT_MS);
    char *err = fbf_test_peer_stderr(&p);
    char *nl = err ? strchr(err, '\n') : NULL;
    bool one_line = nl && nl[1] == '\0';
    if (nl)
        *nl = '\0';
    if (!fault && rc != 1)
        fault = "fastbf did not exit with status 1";
    else if (!fault && (!err || strncmp(err, "fastbf: ", 8) != 0 || !matches(err + 8, c->want)))
        fault = "stderr is not the case's error";
    else if (!fault && !one_line)
        fault = "stderr is not one line";
    if (fault)
        snprintf(why, sizeof why, "%s (%s)\n  on     %.300s\n  exit   %d\n  stderr %.400s\n"
                 "  want   fastbf: %s", fault, streamed ? "streamed" : "whole", msg, rc,
                 err ? err : "", c->want);
    free(err);
    free(text);
    fbf_test_peer_stop(&p);
    return fault ? why : NULL;
}

static void run_all(bool streamed)
{
    size_t failed = 0, ran = 0;
    for (size_t i = 0; i < fbf_test_bv4_nb_bad_cases; i++) {
        const fbf_test_bad_case *c = &fbf_test_bv4_bad_cases[i];
        /* A session streams a request only once it has begun. */
        if (streamed && c->level == L_FRESH)
            continue;
        ran++;
        const char *why = run_case(c, streamed);
        if (why) {
            fprintf(stderr, "case %zu: %s\n", i, why);
            failed++;
        }
    }
    if (failed)
        fail_msg("%zu of %zu cases not refused as documented over the socket", failed, ran);
}

static void test_whole_messages(void **state)
{
    (void)state;
    assert_true(fbf_test_bv4_nb_bad_cases >= 90);
    run_all(false);
}

static void test_streamed_messages(void **state)
{
    (void)state;
    run_all(true);
}

/* Appends s to the growing text t of length *n. */
static void append(char **t, size_t *n, const char *s)
{
    size_t k = strlen(s);
    *t = realloc(*t, *n + k + 1);
    assert_non_null(*t);
    memcpy(*t + *n, s, k + 1);
    *n += k;
}

static void test_deep_nesting_streamed(void **state)
{
    (void)state;
    fbf_test_peer p;
    const char *args[] = {"--policy", "easy", NULL};
    assert_int_equal(fbf_test_peer_start(&p, args, true), 0);
    char *reply = NULL;
    assert_true(fbf_test_peer_request(&p, fbf_test_bv4_begins(4, ""), &reply, REPLY_MS) > 0);
    free(reply);
    char *t = NULL, id[32];
    size_t n = 0;
    append(&t, &n, "{\"now\":11,\"events\":[");
    int k = 0;
    for (; n < FBF_BV4_STREAM_MIN; k++) {
        snprintf(id, sizeof id, "w0!%d", k);
        append(&t, &n, fbf_test_sub(11, id, 1, 100));
        append(&t, &n, ",");
    }
    /* 990 levels in all: cJSON's limit is 1000. */
    append(&t, &n, "{\"timestamp\":11,\"type\":\"JOB_SUBMITTED\",\"data\":{\"job_id\":"
                   "\"w0!deep\",\"job\":{\"id\":\"w0!deep\",\"subtime\":11,\"res\":");
    for (int i = 0; i < 985; i++)
        append(&t, &n, "[");
    for (int i = 0; i < 985; i++)
        append(&t, &n, "]");
    append(&t, &n, "}}}]}");
    long got = fbf_test_peer_request(&p, t, &reply, REPLY_MS);
    free(reply);
    free(t);
    int rc = fbf_test_peer_wait(&p, EXIT_MS);
    char *err = fbf_test_peer_stderr(&p), want[200];
    snprintf(want, sizeof want, "fastbf: event %d (JOB_SUBMITTED): data.job.res: expected an "
             "integer, got an array", k);
    if (got < 0 || rc != 1 || !err || strncmp(err, want, strlen(want)) != 0)
        fail_msg("deep nesting in a streamed message: reply %ld, exit %d, stderr %s (want %s)",
                 got, rc, err ? err : "", want);
    free(err);
    fbf_test_peer_stop(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whole_messages),
        cmocka_unit_test(test_streamed_messages),
        cmocka_unit_test(test_deep_nesting_streamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
