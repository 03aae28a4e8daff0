/*
 * test_bv4_identity: fastbf's Batsim v4 replies, byte for byte, on both
 * bundled traces under fcfs, easy and conservative, in process and over
 * the socket.
 *
 * Each run is recorded by fastbf-replay --record; the replies (every "< "
 * line, in order) are cut into blocks of BLOCK exchanges and each block
 * is hashed (FNV-1a, 64 bits). tests/fixtures/bv4-replies/ holds the
 * digests of the replies fastbf gave when they were recorded, so any
 * change of a single byte in any reply fails here, naming the exchanges
 * of the first block that differs and the reply fastbf gives now;
 * fixture's header names the commit that wrote it. The same digests serve
 * the in-process session and the fastbf process, which must agree.
 *
 * FBF_RECORD_REPLIES=1 in the environment writes the fixtures from the
 * in-process runs instead of checking them: only for a deliberate change
 * of the replies, said in its commit.
 *
 * Under the sanitizers only KTH-SP2 runs (CTC-SP2's 77,222 jobs take
 * minutes there); the plain build runs both.
 *
 * Energy saving (fastbf --energy-saving 120 --switch-delays 30:60 against
 * fastbf-replay --energy) runs over the socket only (the in-process
 * session has no machine states): KTH-SP2 under easy and conservative,
 * CTC-SP2 under easy in the plain build. Its fixtures were recorded from
 * the process (FBF_RECORD_REPLIES=1 records those from the socket runs)
 * when fastbf kept each machine's state on its own, before the states
 * went by runs of ids and holds by groups of machines: the decisions must
 * be the same.
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
#include <zlib.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif

#define TIMEOUT_MS 600000
#define BLOCK 512
#define FIXTURES FBF_SOURCE_DIR "/tests/fixtures/bv4-replies"

typedef struct digests {
    uint64_t *h; /* one per block */
    size_t n, cap;
    size_t exchanges;
} digests;

/* Reads a --record file and hashes its replies, block by block. The first
 * reply of block `show` (SIZE_MAX: none) is copied to *shown. */
static int digest_record(const char *path, digests *d, size_t show, char **shown)
{
    gzFile f = gzopen(path, "rb");
    if (!f)
        return -1;
    char buf[1 << 16];
    bool at_start = true, in_reply = false;
    int prefix_seen = 0; /* bytes of "< " / "> " read at a line start */
    char first = 0;
    uint64_t h = 1469598103934665603ULL;
    size_t shown_len = 0;
    *d = (digests){0};
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) {
        for (int i = 0; i < n; i++) {
            char c = buf[i];
            if (at_start) {
                if (prefix_seen == 0)
                    first = c;
                if (++prefix_seen < 2)
                    continue;
                at_start = false;
                prefix_seen = 0;
                in_reply = first == '<';
                if (in_reply && d->exchanges % BLOCK == 0)
                    h = 1469598103934665603ULL;
                continue;
            }
            if (in_reply) {
                h = (h ^ (unsigned char)c) * 1099511628211ULL;
                if (shown && d->exchanges == show * BLOCK && c != '\n' && shown_len < 4000) {
                    *shown = realloc(*shown, shown_len + 2);
                    (*shown)[shown_len++] = c;
                    (*shown)[shown_len] = '\0';
                }
            }
            if (c != '\n')
                continue;
            at_start = true;
            if (!in_reply)
                continue;
            in_reply = false;
            /* The block's hash so far: a last, partial block counts too. */
            size_t b = d->exchanges++ / BLOCK;
            if (b >= d->cap) {
                d->cap = d->cap ? 2 * d->cap : 64;
                d->h = realloc(d->h, d->cap * sizeof *d->h);
            }
            d->h[b] = h;
            d->n = b + 1;
        }
    }
    int rc = n < 0 ? -1 : 0;
    gzclose(f);
    return rc;
}

/* Energy saving: the replayer's options and fastbf's. */
#define ENERGY_REPLAY "--energy --switch-delays 30:60"
#define ENERGY_FASTBF "--energy-saving 120 --switch-delays 30:60"

static const char *fixture_path(const char *trace, const char *policy, bool energy)
{
    static char p[512];
    snprintf(p, sizeof p, "%s/%s-%s%s.txt", FIXTURES, trace, policy, energy ? "-energy" : "");
    return p;
}

static void write_fixture(const char *trace, const char *policy, bool energy, const digests *d)
{
    FILE *f = fopen(fixture_path(trace, policy, energy), "w");
    assert_non_null(f);
    if (energy)
        fprintf(f, "# fastbf's Batsim v4 replies to fastbf-replay data/%s.swf.gz " ENERGY_REPLAY
                   " --scheduler 'fastbf --policy %s " ENERGY_FASTBF "'\n",
                trace, policy);
    else
        fprintf(f, "# fastbf's Batsim v4 replies to fastbf-replay data/%s.swf.gz --inproc "
                   "--policy %s\n",
                trace, policy);
    fprintf(f, "# FNV-1a 64 of each block of %d replies, each reply's text and its line break "
               "(test_bv4_identity.c)\nexchanges %zu\n",
            BLOCK, d->exchanges);
    for (size_t b = 0; b < d->n; b++)
        fprintf(f, "%016llx\n", (unsigned long long)d->h[b]);
    assert_int_equal(fclose(f), 0);
}

static void read_fixture(const char *trace, const char *policy, bool energy, digests *d)
{
    FILE *f = fopen(fixture_path(trace, policy, energy), "r");
    if (!f)
        fail_msg("no fixture %s", fixture_path(trace, policy, energy));
    char line[256];
    *d = (digests){0};
    while (fgets(line, sizeof line, f)) {
        unsigned long long v;
        if (line[0] == '#')
            continue;
        if (sscanf(line, "exchanges %zu", &d->exchanges) == 1)
            continue;
        assert_int_equal(sscanf(line, "%16llx", &v), 1);
        if (d->n == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 64;
            d->h = realloc(d->h, d->cap * sizeof *d->h);
        }
        d->h[d->n++] = v;
    }
    fclose(f);
}

static void run_and_compare(const char *trace, const char *policy, bool inproc, bool energy)
{
    char wl[512], cmd[600];
    snprintf(wl, sizeof wl, "%s/data/%s.swf.gz", FBF_SOURCE_DIR, trace);
    snprintf(cmd, sizeof cmd, "%s --policy %s%s", fbf_test_replay_fastbf_path(), policy,
             energy ? " " ENERGY_FASTBF : "");
    const char *rec = fbf_test_tmp_path("%s-%s-%d-%d.gz", trace, policy, (int)inproc, (int)energy);
    char *out = NULL, *err = NULL;
    int rc = inproc ? fbf_test_replay_run((const char *const[]){"--quiet", "--inproc",
                                                                 "--policy", policy, "--record",
                                                                 rec, wl, NULL},
                                          TIMEOUT_MS, &out, &err)
             : energy ? fbf_test_replay_run((const char *const[]){"--quiet", "--energy",
                                                                  "--switch-delays", "30:60",
                                                                  "--scheduler", cmd, "--record",
                                                                  rec, wl, NULL},
                                           TIMEOUT_MS, &out, &err)
                      : fbf_test_replay_run((const char *const[]){"--quiet", "--scheduler", cmd,
                                                                   "--record", rec, wl, NULL},
                                            TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("%s under %s (%s): fastbf-replay exit %d: %s", trace, policy,
                 inproc ? "in process" : "socket", rc, err);
    free(out);
    free(err);

    digests got, want;
    assert_int_equal(digest_record(rec, &got, SIZE_MAX, NULL), 0);
    const char *record = getenv("FBF_RECORD_REPLIES");
    if ((inproc || energy) && record && strcmp(record, "1") == 0) {
        write_fixture(trace, policy, energy, &got);
        free(got.h);
        return;
    }
    read_fixture(trace, policy, energy, &want);
    size_t differs = SIZE_MAX;
    for (size_t b = 0; b < got.n && b < want.n && differs == SIZE_MAX; b++)
        if (got.h[b] != want.h[b])
            differs = b;
    if (differs == SIZE_MAX && got.exchanges != want.exchanges) {
        size_t common = got.n < want.n ? got.n : want.n;
        differs = common ? common - 1 : 0; /* the last block they share */
    }
    if (differs != SIZE_MAX) {
        char *shown = NULL;
        digests again;
        digest_record(rec, &again, differs, &shown);
        fail_msg("%s under %s (%s): replies differ from the recorded ones in exchanges "
                 "%zu..%zu (%zu exchanges now, %zu recorded); the first of them is now: %s",
                 trace, policy, inproc ? "in process" : "socket", differs * BLOCK,
                 differs * BLOCK + BLOCK - 1, got.exchanges, want.exchanges,
                 shown ? shown : "(none)");
    }
    assert_true(got.exchanges > 1000);
    free(got.h);
    free(want.h);
}

static void each_policy(const char *trace)
{
    const char *policies[] = {"fcfs", "easy", "conservative"};
    for (int p = 0; p < 3; p++) {
        run_and_compare(trace, policies[p], true, false);
        run_and_compare(trace, policies[p], false, false);
    }
}

static void test_kth(void **state) { each_policy("KTH-SP2-1996-2.1-cln"); }

static void test_ctc(void **state)
{
#ifdef FBF_TEST_UNDER_SAN
    skip();
#endif
    each_policy("CTC-SP2-1996-3.1-cln");
}

static void test_energy(void **state)
{
    (void)state;
    run_and_compare("KTH-SP2-1996-2.1-cln", "easy", false, true);
    run_and_compare("KTH-SP2-1996-2.1-cln", "conservative", false, true);
#ifndef FBF_TEST_UNDER_SAN
    run_and_compare("CTC-SP2-1996-3.1-cln", "easy", false, true);
#endif
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth),
        cmocka_unit_test(test_ctc),
        cmocka_unit_test(test_energy),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
