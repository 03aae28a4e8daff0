/*
 * test_bv5_traces: fastbf as a Batsim 5 External Decision Component on the
 * bundled real traces, in batprotocol's JSON and flatbuffers binary
 * formats. fastbf-replay --protocol batsim5 plays Batsim 5 and drives
 * fastbf as a library (--edc-library libfastbf-edc.so, called as Batsim
 * calls it) and as a process (fastbf --protocol batsim5, the binary
 * handshake then messages over ZeroMQ), each in both formats (the
 * replayer's --format binary goes through the schema's own JSON form);
 * under fcfs, easy and conservative every job completes and
 * out_jobs.csv is the very file of the v4 replay of the same trace in
 * process, so every start time and allocation is the same whichever way
 * the decisions travelled. KTH-SP2 runs in every build; CTC-SP2 (77,222
 * jobs) in the plain build only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/replay_run.h"
#include "support/testkit.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "build"
#endif

#define TIMEOUT_MS 600000

static void replay_ok(const char *const *args, const char *what)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("%s: fastbf-replay exit %d: %s", what, rc, err);
    free(out);
    free(err);
}

static void same_as_v4(const char *trace, const char *policy)
{
    char wl[512], lib[512], init[128], pinit[64], cmd[700], what[160];
    const char *dir = getenv("FBF_BUILD_DIR");
    snprintf(wl, sizeof wl, "%s/data/%s.swf.gz", FBF_SOURCE_DIR, trace);
    snprintf(lib, sizeof lib, "%s/libfastbf-edc.so", dir ? dir : FBF_BUILD_DIR);
    snprintf(cmd, sizeof cmd, "%s --protocol batsim5 --policy %s",
             fbf_test_replay_fastbf_path(), policy);
    const char *v4 = fbf_test_tmp_path("v4-%s-%s", trace, policy);
    replay_ok((const char *const[]){"--quiet", "--inproc", "--policy", policy, "--out", v4, wl,
                                    NULL},
              "v4 in process");
    static const char *const formats[] = {"json", "binary"};
    for (int f = 0; f < 2; f++) {
        const char *fmt = formats[f];
        snprintf(init, sizeof init, "{\"policy\":\"%s\",\"format\":\"%s\"}", policy, fmt);
        snprintf(pinit, sizeof pinit, "{\"format\":\"%s\"}", fmt);
        const char *l5 = fbf_test_tmp_path("lib-%s-%s-%s", trace, policy, fmt);
        const char *p5 = fbf_test_tmp_path("proc-%s-%s-%s", trace, policy, fmt);
        snprintf(what, sizeof what, "%s under %s, library in %s", trace, policy, fmt);
        replay_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--format", fmt,
                                        "--edc-library", lib, "--edc-init", init, "--out", l5,
                                        wl, NULL},
                  what);
        fbf_test_replay_same_jobs(l5, v4, what, 20000);
        snprintf(what, sizeof what, "%s under %s, process in %s", trace, policy, fmt);
        replay_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--format", fmt,
                                        "--scheduler", cmd, "--edc-init", pinit, "--out", p5,
                                        wl, NULL},
                  what);
        fbf_test_replay_same_jobs(p5, v4, what, 20000);
    }
}

static void test_kth(void **state)
{
    same_as_v4("KTH-SP2-1996-2.1-cln", "fcfs");
    same_as_v4("KTH-SP2-1996-2.1-cln", "easy");
    same_as_v4("KTH-SP2-1996-2.1-cln", "conservative");
}

static void test_ctc(void **state)
{
#ifdef FBF_TEST_UNDER_SAN
    skip();
#endif
    same_as_v4("CTC-SP2-1996-3.1-cln", "fcfs");
    same_as_v4("CTC-SP2-1996-3.1-cln", "easy");
    same_as_v4("CTC-SP2-1996-3.1-cln", "conservative");
}

int main(void)
{
    if (fbf_test_replay_require_fastbf())
        return 1;
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth),
        cmocka_unit_test(test_ctc),
    };
    return cmocka_run_group_tests(tests, fbf_test_tmpdir_setup, fbf_test_tmpdir_teardown);
}
