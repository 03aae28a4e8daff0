/*
 * test_replay_v5_energy: fastbf-replay --protocol batsim5 with --energy,
 * and with fastbf's own EDC library:
 *
 *  - TurnOnOffHostsEvent goes through the switch delays and is
 *    acknowledged by HostsTurnedOnOffEvent; ChangeHostsPStateEvent is set
 *    at once and acknowledged by HostsPStateChangedEvent at the decision's
 *    time; SimulationBeginsEvent describes the pstates;
 *  - libfastbf-edc (when built) gets the out_jobs.csv of the v4 replay of
 *    easy and conservative on 2,000 KTH-SP2 jobs, and with energy saving
 *    the jobs and the joules of the fastbf process over v4.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/replay_run.h"
#include "support/v5_run.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#ifndef FBF_BUILD_DIR
#define FBF_BUILD_DIR "."
#endif

#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"

static void test_energy_switch(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    /* Host 3 goes to sleep at the start (2 s), and back at 100 s (3 s). */
    const char *script[] = {
        "",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'TurnOnOffHostsEvent','event':{"
        "'host_ids':'3','state':1}}]}",
        NULL};
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--quiet", "--energy",
                                                          "--switch-delays", "2:3", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":2.0,\"event_type\":\"HostsTurnedOnOffEvent\","
                                  "\"event\":{\"host_ids\":\"3\",\"state\":1}}"));
    cJSON *m = fbf_test_v5_message_with(r.log, "SimulationBeginsEvent");
    const cJSON *h = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(fbf_test_v5_event_of(m, "SimulationBeginsEvent"), "computation_hosts"),
        0);
    assert_true(fbf_test_v5_num(h, "pstate_count", NULL) == 4);
    const cJSON *prop = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(h, "properties"), 2);
    assert_string_equal(fbf_test_v5_str(prop, "key", NULL), "sleep_pstates");
    assert_string_equal(fbf_test_v5_str(prop, "value", NULL), "1:2:3");
    cJSON_Delete(m);
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

static void test_energy_pstate_change(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir();
    char wl[600];
    fbf_test_v5_three(dir, wl, sizeof wl);
    /* Host 3 to the sleep pstate at once, whatever the switch delays. */
    const char *script[] = {
        "",
        "{'now':$now,'events':[{'timestamp':$now,'event_type':'ChangeHostsPStateEvent','event':{"
        "'host_ids':'3','pstate':1}}]}",
        NULL};
    fbf_test_v5_result r = fbf_test_v5_against(script, (const char *const[]){"--quiet", "--energy",
                                                          "--switch-delays", "2:3", wl, NULL});
    if (r.rc != 0)
        fail_msg("exit %d: %s\n%s", r.rc, r.err, r.log);
    assert_non_null(strstr(r.log, "{\"timestamp\":0.0,\"event_type\":\"HostsPStateChangedEvent\","
                                  "\"event\":{\"host_ids\":\"3\",\"pstate\":1}}"));
    fbf_test_v5_result_free(&r);
    fbf_test_replay_rmdir(dir);
}

/* fastbf's own EDC library (libfastbf-edc, when built), against the v4
 * replay of the same policy: in process, and with energy saving against
 * the fastbf process over v4. */
static void test_fastbf_edc_as_v4(void **state)
{
    (void)state;
    const char *edc = FBF_BUILD_DIR "/libfastbf-edc.so";
    char *probe = fbf_test_replay_read(edc);
    if (!probe)
        skip();
    free(probe);
    char *dir = fbf_test_replay_tmpdir(), d4[600], d5[600], a[700], b[700], init[64];
    static const char *const pols[] = {"easy", "conservative"};
    for (int k = 0; k < 2; k++) {
        snprintf(d4, sizeof d4, "%s/v4-%s", dir, pols[k]);
        snprintf(d5, sizeof d5, "%s/v5-%s", dir, pols[k]);
        snprintf(init, sizeof init, "{\"policy\":\"%s\"}", pols[k]);
        fbf_test_v5_run_ok((const char *const[]){"--quiet", "--inproc", "--policy", pols[k], "--out", d4,
                                     "--max-jobs", "2000", KTH, NULL});
        fbf_test_v5_run_ok((const char *const[]){"--quiet", "--protocol", "batsim5", "--edc-library", edc,
                                     "--edc-init", init, "--out", d5, "--max-jobs", "2000", KTH,
                                     NULL});
        snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
        snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
        fbf_test_v5_same_file(a, b);
    }
    snprintf(d4, sizeof d4, "%s/v4-energy", dir);
    snprintf(d5, sizeof d5, "%s/v5-energy", dir);
    char sched[600];
    snprintf(sched, sizeof sched, "%s --policy easy --energy-saving 600",
             fbf_test_replay_fastbf_path());
    fbf_test_v5_run_ok((const char *const[]){"--quiet", "--energy", "--scheduler", sched, "--out", d4,
                                 "--max-jobs", "2000", KTH, NULL});
    fbf_test_v5_run_ok((const char *const[]){"--quiet", "--energy", "--protocol", "batsim5", "--edc-library",
                                 edc, "--edc-init", "{\"policy\":\"easy\",\"energy_saving\":600}",
                                 "--out", d5, "--max-jobs", "2000", KTH, NULL});
    snprintf(a, sizeof a, "%s/out_jobs.csv", d4);
    snprintf(b, sizeof b, "%s/out_jobs.csv", d5);
    fbf_test_v5_same_file(a, b);
    assert_true(fbf_test_replay_summary(d4, "energy.joules") ==
                fbf_test_replay_summary(d5, "energy.joules"));
    assert_true(fbf_test_replay_summary(d5, "energy.asleep_s") > 0);
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_energy_switch),
        cmocka_unit_test(test_energy_pstate_change),
        cmocka_unit_test(test_fastbf_edc_as_v4),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
