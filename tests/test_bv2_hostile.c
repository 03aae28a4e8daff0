/*
 * test_bv2_hostile: fastbf --protocol batsim2 as a process, against a
 * Batsim played by this test: a Unix socket server in a temporary
 * directory, nb_res and job keys in a real redis-server under the socket's
 * absolute path, and a script of raw frames (good ones first where a case
 * needs a begun simulation, then the hostile one). Each case names
 * fastbf's replies (byte for byte), its exit status and its stderr: one
 * line `fastbf: <text>` holding the case's text, or nothing after exit 0.
 * The connection stays open until fastbf exits, so that an end of stream
 * cannot stand in for a refusal; running past the timeout is a hang.
 *
 * Steps: "A" sends 3:0|0:A and expects 3:0|0:N; ">TEXT" sends a frame of
 * TEXT, "+TEXT" one of TEXT and a NUL byte; "<TEXT" reads a frame, which
 * must be TEXT; "~N:TEXT" sends the size N then TEXT raw (a frame cut
 * short); "%HEX" sends raw bytes; "." closes the connection. In expected
 * texts, $P is the socket's absolute path and $R the Redis address.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support/redis_server.h"
#include "support/replay_run.h"
#include "support/testkit.h"

/* A hang is a failure, not a wait: generous for the sanitizer builds. */
#define CASE_TIMEOUT_MS 20000

typedef struct hcase {
    const char *name;
    const char *const *steps;
    int rc;                  /* fastbf's exit status */
    const char *want;        /* in its stderr line; NULL with rc 0 */
    const char *nb_res;      /* NULL: "4"; "": not set */
    const char *const *args; /* more options, NULL-terminated */
    bool dead_redis;         /* a port nothing listens on */
} hcase;

#define STEPS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

/* The jobs every case finds in Redis (the hostile ones by name). A value
 * "@list" is a Redis list, which GET refuses. */
static const char *const jobs[][2] = {
    {"w!1", "{\"id\":1,\"subtime\":1,\"walltime\":100,\"res\":2,\"profile\":\"p\"}"},
    {"w!3", "{\"id\":3,\"subtime\":1,\"walltime\":100,\"res\":9,\"profile\":\"p\"}"},
    {"w!13", "{\"id\":13,\"subtime\":2,\"walltime\":100,\"res\":4,\"profile\":\"p\"}"},
    {"w!4", "{\"id\":4,\"res\":1"},
    {"w!5", "[1,2]"},
    {"w!6", "{\"id\":6,\"subtime\":1,\"walltime\":10,\"profile\":\"p\"}"},
    {"w!8", "{\"id\":8,\"subtime\":1,\"walltime\":10,\"res\":\"2\",\"profile\":\"p\"}"},
    {"w!10", "{\"id\":11,\"subtime\":1,\"walltime\":10,\"res\":1,\"profile\":\"p\"}"},
    {"w!12", "@list"},
};

#define BEYOND "this stamp goes from the scheduler to Batsim, not the other way"
#define MACHINES "expected ids or intervals a-b separated by commas"

/* A case that fastbf must refuse (exit 1) with want, and one it must
 * carry to the end (exit 0, nothing on stderr). */
#define BAD(n, s, w, ...)                                                                          \
    { .name = n, .steps = s, .rc = 1, .want = w, __VA_ARGS__ }
#define GOOD(n, s)                                                                                 \
    { .name = n, .steps = s, .rc = 0 }

#define NEED_A "comes before A (the simulation's beginning)"

static const hcase cases[] = {
    /* ---- framing ---- */
    BAD("size_above_default_limit", STEPS("~67108865:"),
        "a message of 67108865 bytes announced, above the limit of 67108864 bytes "
        "(--max-message)"),
    BAD("size_max_after_A", STEPS("A", "~4294967295:"),
        "a message of 4294967295 bytes announced, above the limit of 67108864 bytes"),
    BAD("size_above_small_limit", STEPS(">3:0.00000000|0:A", "<3:0|0:N", ">3:1.000000000|1:N"),
        "a message of 17 bytes announced, above the limit of 16 bytes (--max-message)",
        .args = ARGS("--max-message", "16")),
    BAD("empty_first_message", STEPS(">"), "message 1: \"\": expected VERSION:TIME|TIME:STAMP..."),
    BAD("empty_message_after_A", STEPS("A", ">"),
        "message 2: \"\": expected VERSION:TIME|TIME:STAMP..."),
    BAD("eof_in_size_first", STEPS("%050000", "."),
        "Batsim closed the connection after 3 of the 4 bytes of a message's size"),
    BAD("eof_in_size_after_A", STEPS("A", "%07", "."),
        "Batsim closed the connection after 1 of the 4 bytes of a message's size"),
    BAD("eof_after_size", STEPS("~9:", "."),
        "Batsim closed the connection after 0 of the 9 bytes of a message"),
    BAD("eof_in_content", STEPS("A", "~20:3:1|1:N", "."),
        "Batsim closed the connection after 7 of the 20 bytes of a message"),
    BAD("closed_before_A", STEPS("."),
        "Batsim closed the connection after 0 messages, before the simulation ended (no Z)"),
    BAD("closed_between_messages", STEPS("A", ">3:1|1:N", "<3:1|1:N", "."),
        "Batsim closed the connection after 2 messages, before the simulation ended (no Z)"),
    BAD("closed_after_one_message", STEPS("A", "."),
        "Batsim closed the connection after 1 message, before the simulation ended (no Z)"),

    /* ---- bytes and the header ---- */
    BAD("non_ascii_byte", STEPS("A", ">3:1|1:S:w!\xc3\xa9"),
        "message 2: byte 10 is not printable ASCII (0xc3)"),
    BAD("del_byte", STEPS(">3:0|0:A\x7f"), "message 1: byte 7 is not printable ASCII (0x7f)"),
    BAD("control_byte", STEPS(">3:0\t|0:A"), "message 1: byte 3 is not printable ASCII (0x09)"),
    BAD("nul_byte", STEPS("+3:0|0:A"), "message 1: byte 7 is not printable ASCII (0x00)"),
    BAD("missing_bar", STEPS(">3:0"), "message 1: \"3:0\": expected VERSION:TIME|TIME:STAMP..."),
    BAD("header_without_colon", STEPS(">3|0:A"), "message 1: header \"3\": expected VERSION:TIME"),
    BAD("version_not_a_number", STEPS(">v3:0|0:A"),
        "message 1: header \"v3:0\": expected VERSION:TIME"),
    BAD("version_4", STEPS(">4:0|0:A"),
        "message 1: version 4: the text protocol's versions are 0 to 3"),
    BAD("message_time_nan", STEPS(">3:nan|0:A"), "message 1: time \"nan\": expected a number >= 0"),
    BAD("message_time_inf", STEPS("A", ">3:inf|1:N"),
        "message 2: time \"inf\": expected a number >= 0"),
    BAD("message_time_hex", STEPS(">3:0x0|0:A"), "message 1: time \"0x0\": expected a number >= 0"),
    BAD("message_time_empty", STEPS(">3:|0:A"), "message 1: time \"\": expected a number >= 0"),
    BAD("message_time_negative", STEPS(">3:-1|-1:A"),
        "message 1: time \"-1\": expected a number >= 0"),
    BAD("message_time_backwards", STEPS(">3:5|5:A", "<3:5|5:N", ">3:4|4:N"),
        "message 2: time 4.000000 is before the previous message's 5.000000"),

    /* ---- events ---- */
    BAD("event_time_nan", STEPS("A", ">3:1|NaN:N"),
        "message 2: event 0 (N): time \"NaN\": expected a number >= 0"),
    BAD("event_time_negative", STEPS("A", ">3:1|-0.5:N"),
        "message 2: event 0 (N): time \"-0.5\": expected a number >= 0"),
    BAD("event_after_message_time", STEPS(">3:0|1:A"),
        "message 1: event 0 (A): time 1.000000 is after the message's 0.000000"),
    BAD("event_before_previous_event", STEPS("A", ">3:5|4:N|3:N"),
        "message 2: event 1 (N): time 3.000000 is before the previous event's 4.000000"),
    BAD("empty_event", STEPS("A", ">3:1|1:N|"),
        "message 2: event 1 (?): \"\": expected TIME:STAMP[:CONTENT]"),
    BAD("event_without_stamp", STEPS("A", ">3:1|1:"),
        "message 2: event 0 (?): \"1:\": expected TIME:STAMP[:CONTENT]"),
    BAD("unknown_stamp", STEPS("A", ">3:1|1:Q"), "message 2: event 0 (Q): unknown stamp"),
    BAD("stamp_J_from_batsim", STEPS("A", ">3:1|1:J:w!1=0"), "message 2: event 0 (J): " BEYOND),
    BAD("stamp_P_from_batsim", STEPS("A", ">3:1|1:P:0=1"), "message 2: event 0 (P): " BEYOND),
    BAD("stamp_R_from_batsim", STEPS("A", ">3:1|1:R:w!1"), "message 2: event 0 (R): " BEYOND),
    BAD("stamp_n_from_batsim", STEPS("A", ">3:1|1:n:5"), "message 2: event 0 (n): " BEYOND),
    BAD("stamp_E_from_batsim", STEPS("A", ">3:1|1:E"), "message 2: event 0 (E): " BEYOND),
    BAD("A_in_version_2", STEPS(">2:0|0:A"),
        "message 1: event 0 (A): this stamp needs protocol version 3, the message says 2"),
    BAD("S_in_version_1", STEPS("A", ">1:1|1:S:w!1"),
        "message 2: event 0 (S): this stamp needs protocol version 2, the message says 1"),
    BAD("p_in_version_0", STEPS("A", ">0:1|1:p:0=1"),
        "message 2: event 0 (p): this stamp needs protocol version 1, the message says 0"),
    BAD("F_in_version_2", STEPS("A", ">2:1|1:F:0"),
        "message 2: event 0 (F): this stamp needs protocol version 3, the message says 2"),
    BAD("two_character_stamp", STEPS("A", ">3:1|1:SC:w!1"),
        "message 2: event 0 (?): stamp \"SC\": expected one character"),
    BAD("S_without_content", STEPS("A", ">3:1|1:S"),
        "message 2: event 0 (S): expected content after the stamp"),
    BAD("C_with_empty_content", STEPS("A", ">3:1|1:C:"),
        "message 2: event 0 (C): expected content after the stamp"),
    BAD("F_without_content", STEPS("A", ">3:1|1:F"),
        "message 2: event 0 (F): expected content after the stamp"),
    BAD("f_without_content", STEPS("A", ">3:1|1:f"),
        "message 2: event 0 (f): expected content after the stamp"),
    BAD("p_without_content", STEPS("A", ">3:1|1:p:"),
        "message 2: event 0 (p): expected content after the stamp"),
    BAD("e_without_content", STEPS("A", ">3:1|1:e"),
        "message 2: event 0 (e): expected content after the stamp"),
    BAD("content_after_A", STEPS(">3:0|0:A:x"),
        "message 1: event 0 (A): unexpected content \"x\" after this stamp"),
    BAD("content_after_N", STEPS("A", ">3:1|1:N:later"),
        "message 2: event 0 (N): unexpected content \"later\" after this stamp"),
    BAD("content_after_Z", STEPS("A", ">3:1|1:Z:now"),
        "message 2: event 0 (Z): unexpected content \"now\" after this stamp"),
    BAD("job_id_without_bang", STEPS("A", ">3:1|1:S:w1"),
        "message 2: event 0 (S): job \"w1\": expected WORKLOAD!JOB_ID"),
    BAD("job_id_empty_workload", STEPS("A", ">3:1|1:S:!1"),
        "message 2: event 0 (S): job \"!1\": expected WORKLOAD!JOB_ID"),
    BAD("job_id_empty_name", STEPS("A", ">3:1|1:C:w!"),
        "message 2: event 0 (C): job \"w!\": expected WORKLOAD!JOB_ID"),
    BAD("job_id_two_bangs", STEPS("A", ">3:1|1:S:w!1!2"),
        "message 2: event 0 (S): job \"w!1!2\": expected WORKLOAD!JOB_ID"),
    BAD("job_id_with_colon", STEPS("A", ">3:1|1:S:w!1:2"),
        "message 2: event 0 (S): job \"w!1:2\": expected WORKLOAD!JOB_ID"),
    BAD("job_id_with_equals", STEPS("A", ">3:1|1:S:w!1=2"),
        "message 2: event 0 (S): job \"w!1=2\": expected WORKLOAD!JOB_ID"),
    BAD("event_before_A", STEPS(">3:0|0:N|0:A"), "message 1: event 0 (N): " NEED_A),
    BAD("S_before_A", STEPS(">3:0|0:S:w!1"), "message 1: event 0 (S): " NEED_A),
    BAD("A_twice", STEPS("A", ">3:1|1:A"),
        "message 2: event 0 (A): the simulation already began (A twice)"),
    BAD("A_twice_in_one_message", STEPS(">3:0|0:A|0:A"),
        "message 1: event 1 (A): the simulation already began (A twice)"),
    BAD("event_after_Z", STEPS("A", ">3:1|1:Z|1:N"),
        "message 2: event 1 (N): comes after Z (the simulation ended)"),

    /* ---- jobs ---- */
    BAD("C_of_unknown_job", STEPS("A", ">3:1|1:C:w!9"), "message 2: event 0 (C): unknown job w!9"),
    BAD("C_twice",
        STEPS("A", ">3:1|1:S:w!1", "<3:1|1:J:w!1=0-1", ">3:5|5:C:w!1", "<3:5|5:N", ">3:6|6:C:w!1"),
        "message 4: event 0 (C): job w!1 ended but it is already finished, not running"),
    BAD("C_of_rejected_job", STEPS("A", ">3:1|1:S:w!3", "<3:1|1:R:w!3", ">3:2|2:C:w!3"),
        "message 3: event 0 (C): job w!3 ended but it is rejected, not running"),
    BAD("S_twice", STEPS("A", ">3:1|1:S:w!1", "<3:1|1:J:w!1=0-1", ">3:2|2:S:w!1"),
        "message 3: event 0 (S): job w!1 submitted twice"),
    BAD("S_twice_in_one_message", STEPS("A", ">3:1|1:S:w!1|1:S:w!1"),
        "message 2: event 1 (S): job w!1 submitted twice"),
    BAD("job_key_missing", STEPS("A", ">3:1|1:S:w!7"),
        "message 2: event 0 (S): Redis key \"$P:job_w!7\" does not exist (job w!7 has no "
        "description)"),
    BAD("job_key_missing_second", STEPS("A", ">3:1|1:S:w!1|1:S:w!7"),
        "message 2: event 1 (S): Redis key \"$P:job_w!7\" does not exist"),
    BAD("job_not_json", STEPS("A", ">3:1|1:S:w!4"),
        "message 2: event 0 (S): Redis key \"$P:job_w!4\": malformed JSON near byte 14"),
    BAD("job_not_object", STEPS("A", ">3:1|1:S:w!5"),
        "message 2: event 0 (S): Redis key \"$P:job_w!5\": expected a JSON object (the job's "
        "description), got an array"),
    BAD("job_without_res", STEPS("A", ">3:1|1:S:w!6"),
        "message 2: event 0 (S): Redis key \"$P:job_w!6\": res: expected an integer, got nothing"),
    BAD("job_res_string", STEPS("A", ">3:1|1:S:w!8"),
        "message 2: event 0 (S): Redis key \"$P:job_w!8\": res: expected an integer, got a "
        "string"),
    BAD("job_id_differs", STEPS("A", ">3:1|1:S:w!10"),
        "message 2: event 0 (S): Redis key \"$P:job_w!10\": id: 11 differs from job_id \"w!10\""),
    BAD("job_key_wrong_type", STEPS("A", ">3:1|1:S:w!12"),
        "message 2: event 0 (S): Redis at $R: GET $P:job_w!12: WRONGTYPE"),

    /* ---- the platform ---- */
    BAD("nb_res_missing", STEPS(">3:0|0:A"),
        "message 1: event 0 (A): Redis key \"$P:nb_res\" does not exist (the platform's size)",
        .nb_res = ""),
    BAD("nb_res_not_a_number", STEPS(">3:0|0:A"),
        "message 1: event 0 (A): Redis key \"$P:nb_res\": expected a number of machines in [1, "
        "2^31], got \"four\"",
        .nb_res = "four"),
    BAD("nb_res_zero", STEPS(">3:0|0:A"),
        "message 1: event 0 (A): Redis key \"$P:nb_res\": expected a number of machines in [1, "
        "2^31], got \"0\"",
        .nb_res = "0"),
    BAD("nb_res_wraps_not", /* 2^64 + 4 is not 4 machines */ STEPS(">3:0|0:A"),
        "message 1: event 0 (A): Redis key \"$P:nb_res\": expected a number of machines in [1, "
        "2^31], got \"18446744073709551620\"",
        .nb_res = "18446744073709551620"),
    BAD("redis_unreachable", STEPS(">3:0|0:A"),
        "message 1: event 0 (A): cannot connect to Redis at $R", .dead_redis = true),

    /* ---- machines ---- */
    BAD("F_letters", STEPS("A", ">3:1|1:F:a"), "message 2: event 0 (F): machines \"a\": " MACHINES),
    BAD("f_interval_reversed", STEPS("A", ">3:1|1:f:3-1"),
        "message 2: event 0 (f): machines \"3-1\": expected ids or intervals a-b (a <= b) "
        "separated by commas"),
    BAD("F_trailing_comma", STEPS("A", ">3:1|1:F:1,"),
        "message 2: event 0 (F): machines \"1,\": " MACHINES),
    BAD("p_trailing_comma", STEPS("A", ">3:1|1:p:0,=1"),
        "message 2: event 0 (p): machines \"0,\": " MACHINES),
    BAD("p_letters", STEPS("A", ">3:1|1:p:a-b=0"),
        "message 2: event 0 (p): machines \"a-b\": " MACHINES),
    BAD("F_beyond_platform", STEPS("A", ">3:1|1:F:2-5"),
        "message 2: event 0 (F): machine 4 is not a compute resource"),
    BAD("f_beyond_platform", STEPS("A", ">3:1|1:f:4"),
        "message 2: event 0 (f): machine 4 is not a compute resource"),
    BAD("p_beyond_platform", STEPS("A", ">3:1|1:p:7=0"),
        "message 2: event 0 (p): machine 7 is not a compute resource"),
    BAD("F_id_above_any", STEPS("A", ">3:1|1:F:4294967296"),
        "message 2: event 0 (F): machines \"4294967296\": " MACHINES),
    BAD("p_pstate_letters", STEPS("A", ">3:1|1:p:0=x"),
        "message 2: event 0 (p): \"0=x\": expected MACHINES=PSTATE"),
    BAD("p_without_pstate", STEPS("A", ">3:1|1:p:0"),
        "message 2: event 0 (p): \"0\": expected MACHINES=PSTATE"),
    BAD("p_unknown_pstate", STEPS("A", ">3:1|1:p:0=5"),
        "message 2: event 0 (p): state 5 is not a known pstate (compute 0, sleep 1)"),
    BAD("p_not_switching", STEPS("A", ">3:1|1:p:0=1"),
        "message 2: event 0 (p): machine 0 reached pstate 1 but was not switching off"),
    BAD("e_not_a_number", STEPS("A", ">3:1|1:e:lots"),
        "message 2: event 0 (e): energy \"lots\": expected a number of joules >= 0"),
    BAD("e_negative", STEPS("A", ">3:1|1:e:-5"),
        "message 2: event 0 (e): energy \"-5\": expected a number of joules >= 0"),
    BAD("f_not_failed", STEPS("A", ">3:1|1:f:2"),
        "message 2: event 0 (f): machine 2 is back in service but it had not failed"),
    BAD("F_twice", STEPS("A", ">3:1|1:F:1", "<3:1|1:N", ">3:2|2:F:0-1"),
        "message 3: event 0 (F): machine 1 failed but it is already out of service"),

    /* ---- well-formed conversations ---- */
    GOOD("begin_and_end", STEPS("A", ">3:1|1:Z", "<3:1|1:N")),
    GOOD("begin_and_end_at_once", STEPS(">3:0|0:A|0:Z", "<3:0|0:N")),
    GOOD("fractional_times",
         STEPS(">3:0.5|0.25:A", "<3:0.5|0.5:N", ">3:2.75|2.75:Z", "<3:2.75|2.75:N")),
    GOOD("job_started_completed",
         STEPS("A", ">3:1|1:S:w!1", "<3:1|1:J:w!1=0-1", ">3:5|5:C:w!1|5:Z", "<3:5|5:N")),
    GOOD("job_too_large_rejected",
         STEPS("A", ">3:1|1:S:w!3", "<3:1|1:R:w!3", ">3:2|2:Z", "<3:2|2:N")),
    GOOD("job_waits_for_failed_machine",
         STEPS("A", ">3:1|1:F:3", "<3:1|1:N", ">3:2|2:S:w!13", "<3:2|2:N", ">3:3|3:f:3",
               "<3:3|3:J:w!13=0-3", ">3:9|9:C:w!13|9:Z", "<3:9|9:N")),
    GOOD("machine_failed_under_job",
         STEPS("A", ">3:1|1:S:w!1", "<3:1|1:J:w!1=0-1", ">3:2|2:F:0", "<3:2|2:N",
               ">3:3|3:C:w!1|3:S:w!13", "<3:3|3:N", ">3:4|4:f:0", "<3:4|4:J:w!13=0-3",
               ">3:9|9:C:w!13|9:Z", "<3:9|9:N")),
    GOOD("many_machine_events",
         STEPS("A", ">3:1|1:F:0|1:F:1|1:F:2|1:F:3|1:f:1|1:f:2|1:f:3|1:F:1|1:f:1|1:F:3", "<3:1|1:N",
               ">3:2|2:S:w!1", "<3:2|2:J:w!1=1-2", ">3:5|5:C:w!1|5:Z", "<3:5|5:N")),
    GOOD("old_versions_and_energy", STEPS("A", ">0:2|1:N|2:N", "<3:2|2:N", ">1:3|3:e:12.5",
                                          "<3:3|3:N", ">3:4|4:Z", "<3:4|4:N")),
    GOOD("message_after_Z", STEPS("A", ">3:1|1:Z", "<3:1|1:N", ">3:2|2:N")),
};

#define NB_CASES (sizeof cases / sizeof cases[0])

static redisContext *redis;

static int setup(void **state)
{
    if (fbf_test_redis_group_setup(state) != 0 || fbf_test_tmpdir_setup(state) != 0)
        return -1;
    redis = redisConnect("127.0.0.1", fbf_test_redis_shared()->port);
    return redis && !redis->err ? 0 : -1;
}

static int teardown(void **state)
{
    if (redis)
        redisFree(redis);
    fbf_test_tmpdir_teardown(state);
    return fbf_test_redis_group_teardown(state);
}

/* A copy of text with $P and $R replaced (malloc'ed). */
static char *expand(const char *text, const char *path, const char *addr)
{
    size_t cap = strlen(text) * 2 + 8 * (strlen(path) + strlen(addr)) + 1, n = 0;
    char *out = malloc(cap);
    for (const char *p = text; *p; p++) {
        const char *with = p[0] == '$' && p[1] == 'P'   ? path
                           : p[0] == '$' && p[1] == 'R' ? addr
                                                        : NULL;
        if (!with) {
            out[n++] = *p;
            continue;
        }
        memcpy(out + n, with, strlen(with));
        n += strlen(with);
        p++;
    }
    out[n] = '\0';
    return out;
}

static void write_keys(const char *path, const hcase *c)
{
    char key[512];
    const fbf_test_redis *r = fbf_test_redis_shared();
    snprintf(key, sizeof key, "%s:nb_res", path);
    if (!c->nb_res || *c->nb_res)
        fbf_test_redis_set(r, key, c->nb_res ? c->nb_res : "4");
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        snprintf(key, sizeof key, "%s:job_%s", path, jobs[i][0]);
        if (strcmp(jobs[i][1], "@list") != 0) {
            fbf_test_redis_set(r, key, jobs[i][1]);
            continue;
        }
        redisReply *rep = redisCommand(redis, "RPUSH %s x", key);
        assert_non_null(rep);
        freeReplyObject(rep);
    }
}

/* A listening socket at path. */
static int listen_at(const char *path)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    assert_true(strlen(path) < sizeof a.sun_path);
    strcpy(a.sun_path, path);
    unlink(path);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 1), 0);
    return fd;
}

static pid_t spawn(const hcase *c, const char *path, int port, const char *err_path)
{
    const char *argv[16];
    char port_text[16];
    snprintf(port_text, sizeof port_text, "%d", port);
    int n = 0;
    argv[n++] = fbf_test_replay_fastbf_path();
    argv[n++] = "--protocol";
    argv[n++] = "batsim2";
    argv[n++] = "--socket";
    argv[n++] = path;
    argv[n++] = "--redis-port";
    argv[n++] = port_text;
    for (int i = 0; c->args && c->args[i]; i++)
        argv[n++] = c->args[i];
    argv[n] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int efd = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int nul = open("/dev/null", O_WRONLY);
        if (efd < 0 || nul < 0)
            _exit(126);
        dup2(nul, 1);
        dup2(efd, 2);
        execv(argv[0], (char *const *)argv);
        _exit(126);
    }
    return pid;
}

/* The child's exit status, 128 + signal, or -1 while it runs. */
static int reap(pid_t pid, bool wait_for_it)
{
    int status;
    pid_t r = waitpid(pid, &status, wait_for_it ? 0 : WNOHANG);
    if (r != pid)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Waits up to the case's timeout for fd to be readable, or for the child
 * to end (*rc set). */
static bool wait_readable(int fd, pid_t pid, int *rc)
{
    for (int waited = 0; waited < CASE_TIMEOUT_MS; waited += 10) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 10) > 0)
            return true;
        if (*rc < 0 && (*rc = reap(pid, false)) >= 0)
            return poll(&p, 1, 0) > 0;
    }
    return false;
}

static void send_raw(int fd, const void *p, size_t n)
{
    /* fastbf may already have stopped: its exit status then says why. */
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k <= 0)
            return;
        p = (const char *)p + k;
        n -= (size_t)k;
    }
}

static void send_frame(int fd, const char *text, size_t len)
{
    uint32_t size = (uint32_t)len;
    send_raw(fd, &size, sizeof size);
    send_raw(fd, text, len);
}

/* Reads exactly n bytes; false at an end of stream. */
static bool recv_all(int fd, void *p, size_t n)
{
    while (n) {
        ssize_t k = recv(fd, p, n, 0);
        if (k <= 0)
            return false;
        p = (char *)p + k;
        n -= (size_t)k;
    }
    return true;
}

/* Runs one step; NULL, or what went wrong (static text). */
static const char *step(int *fd, int lfd, pid_t pid, int *rc, const char *s)
{
    static char why[512];
    if (*fd < 0) {
        if (!wait_readable(lfd, pid, rc))
            return "fastbf did not connect";
        if ((*fd = accept(lfd, NULL, NULL)) < 0)
            return "accept failed";
    }
    if (strcmp(s, "A") == 0) {
        const char *e = step(fd, lfd, pid, rc, ">3:0|0:A");
        return e ? e : step(fd, lfd, pid, rc, "<3:0|0:N");
    }
    switch (s[0]) {
    case '>': send_frame(*fd, s + 1, strlen(s + 1)); return NULL;
    case '+': send_frame(*fd, s + 1, strlen(s + 1) + 1); return NULL; /* and its NUL */
    case '~': {
        char *rest;
        uint32_t size = (uint32_t)strtoull(s + 1, &rest, 10);
        send_raw(*fd, &size, sizeof size);
        send_raw(*fd, rest + 1, strlen(rest + 1));
        return NULL;
    }
    case '%':
        for (const char *h = s + 1; h[0] && h[1]; h += 2) {
            unsigned b;
            sscanf(h, "%2x", &b);
            unsigned char byte = (unsigned char)b;
            send_raw(*fd, &byte, 1);
        }
        return NULL;
    case '.':
        close(*fd);
        *fd = -2; /* closed, not to be accepted again */
        return NULL;
    case '<': {
        uint32_t size;
        if (!wait_readable(*fd, pid, rc) || !recv_all(*fd, &size, sizeof size)) {
            snprintf(why, sizeof why, "no reply where %s was expected", s + 1);
            return why;
        }
        char *got = malloc((size_t)size + 1);
        bool ok = recv_all(*fd, got, size);
        got[ok ? size : 0] = '\0';
        bool same = ok && strcmp(got, s + 1) == 0;
        if (!same)
            snprintf(why, sizeof why, "reply \"%.200s\", expected \"%s\"", got, s + 1);
        free(got);
        return same ? NULL : why;
    }
    default: return "bad step in the table";
    }
}

static void run_case(void **state)
{
    const hcase *c = *state;
    size_t idx = (size_t)(c - cases);
    const char *path = fbf_test_tmp_path("c%zu.sock", idx);
    char *err_path = strdup(fbf_test_tmp_path("c%zu.err", idx));
    int port = c->dead_redis ? fbf_test_redis_dead_port() : fbf_test_redis_shared()->port;
    char addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    write_keys(path, c);
    int lfd = listen_at(path);
    pid_t pid = spawn(c, path, port, err_path);

    int fd = -1, rc = -1;
    const char *broke = NULL;
    for (int i = 0; c->steps[i] && !broke; i++)
        if ((broke = step(&fd, lfd, pid, &rc, c->steps[i])))
            broke = strdup(broke);
    /* The connection stays open: fastbf must stop on its own (after a
     * broken script, which failed already, it gets 2 s to say why). */
    for (int waited = 0; rc < 0 && waited < (broke ? 2000 : CASE_TIMEOUT_MS); waited += 5) {
        if ((rc = reap(pid, false)) < 0)
            usleep(5000);
    }
    bool hung = rc < 0 && !broke;
    if (rc < 0) {
        kill(pid, SIGKILL);
        reap(pid, true);
    }
    if (fd >= 0)
        close(fd);
    close(lfd);
    unlink(path);
    char *err = fbf_test_drop_announce(fbf_test_replay_read(err_path));
    unlink(err_path);
    free(err_path);
    if (!err)
        err = strdup("");

    char *want = c->want ? expand(c->want, path, addr) : NULL;
    char line[2048] = "";
    if (want)
        snprintf(line, sizeof line, "fastbf: %s", want);
    const char *nl = strchr(err, '\n');
    bool one_line = nl && nl[1] == '\0';
    const char *fault = hung                         ? "fastbf hung (killed)"
                        : broke                      ? broke
                        : rc != c->rc                ? "wrong exit status"
                        : want && !strstr(err, line) ? "stderr lacks the expected text"
                        : want && !one_line          ? "stderr is not one line"
                        : !want && *err              ? "stderr is not empty"
                                                     : NULL;
    if (fault)
        fprintf(stderr, "case %s: %s\n  exit %d (want %d)\n  stderr: %s\n  want: %s\n", c->name,
                fault, rc, c->rc, err, want ? line : "(nothing)");
    free(want);
    free(err);
    free((char *)broke);
    if (fault)
        fail_msg("case %s failed", c->name);
}

int main(void)
{
    if (fbf_test_replay_require_fastbf() != 0)
        return 1;
    static struct CMUnitTest tests[NB_CASES];
    for (size_t i = 0; i < NB_CASES; i++)
        tests[i] = (struct CMUnitTest){
            .name = cases[i].name, .test_func = run_case, .initial_state = (void *)&cases[i]};
    fbf_test_filter_from_env();
    return cmocka_run_group_tests(tests, setup, teardown);
}
