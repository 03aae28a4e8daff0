/*
 * test_batsim_export: fastbf-replay --export-batsim DIR writes the files a
 * real Batsim run of the same trace needs (docs/with-batsim.md):
 *   - workload.json follows Batsim's documented JSON workload format
 *     (nb_res an integer; each job an id, a number subtime, an integer res
 *     in [1, nb_res], a walltime > 0 or none, the name of a profile of the
 *     file; each profile of type delay with a delay > 0, which Batsim
 *     4.2.1 demands), and replaying it gives the very out_jobs.csv the
 *     SWF trace gives;
 *   - platform.xml is well-formed XML (xmllint) with a compute cluster of
 *     nb_res hosts and a master host, as Batsim's cluster platforms are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "support/replay_run.h"

#ifndef FBF_SOURCE_DIR
#define FBF_SOURCE_DIR "."
#endif
#define KTH FBF_SOURCE_DIR "/data/KTH-SP2-1996-2.1-cln.swf.gz"
#define TIMEOUT_MS 120000

static void run_ok(const char *const *args, char **out)
{
    char *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, out, &err);
    if (rc != 0)
        fail_msg("exit %d: %s", rc, err);
    free(err);
}

/* Batsim's workload format, as its documentation and Batsim 4.2.1's
 * reader (src/jobs.cpp, profiles.cpp) define it. */
static int check_workload(const char *path, int *nb_jobs)
{
    char *text = fbf_test_replay_read(path);
    assert_non_null(text);
    cJSON *w = cJSON_Parse(text);
    free(text);
    assert_non_null(w);
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(w, "nb_res");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(w, "jobs");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(w, "profiles");
    assert_true(cJSON_IsNumber(nb) && nb->valuedouble == floor(nb->valuedouble) &&
                nb->valuedouble >= 1);
    assert_true(cJSON_IsArray(jobs) && cJSON_IsObject(profiles));
    const cJSON *j;
    int n = 0;
    cJSON_ArrayForEach(j, jobs)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        const cJSON *sub = cJSON_GetObjectItemCaseSensitive(j, "subtime");
        const cJSON *res = cJSON_GetObjectItemCaseSensitive(j, "res");
        const cJSON *wall = cJSON_GetObjectItemCaseSensitive(j, "walltime");
        const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
        assert_true(cJSON_IsString(id) && id->valuestring[0] && !strchr(id->valuestring, '!'));
        assert_true(cJSON_IsNumber(sub) && sub->valuedouble >= 0);
        assert_true(cJSON_IsNumber(res) && res->valuedouble == floor(res->valuedouble) &&
                    res->valuedouble >= 1 && res->valuedouble <= nb->valuedouble);
        assert_true(!wall || (cJSON_IsNumber(wall) && wall->valuedouble > 0));
        assert_true(cJSON_IsString(prof));
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(profiles, prof->valuestring);
        assert_true(cJSON_IsObject(p));
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
        const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
        assert_true(cJSON_IsString(type) && strcmp(type->valuestring, "delay") == 0);
        assert_true(cJSON_IsNumber(delay) && delay->valuedouble > 0);
        n++;
    }
    int nb_res = (int)nb->valuedouble;
    cJSON_Delete(w);
    *nb_jobs = n;
    return nb_res;
}

static void test_kth_round_trip(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), ex[600], a[600], b[600], wl[700], pf[700], cmd[1600];
    snprintf(ex, sizeof ex, "%s/batsim", dir);
    snprintf(a, sizeof a, "%s/swf", dir);
    snprintf(b, sizeof b, "%s/json", dir);
    char *out = NULL;
    run_ok((const char *const[]){"--export-batsim", ex, "--max-jobs", "2400", KTH, NULL}, &out);
    assert_non_null(strstr(out, "workload.json"));
    free(out);
    snprintf(wl, sizeof wl, "%s/workload.json", ex);
    snprintf(pf, sizeof pf, "%s/platform.xml", ex);
    int jobs = 0;
    assert_int_equal(check_workload(wl, &jobs), 100); /* KTH-SP2's MaxProcs */
    assert_int_equal(jobs, 2400); /* the first job of run time 0 is the 2452nd */

    /* The same schedule from the trace and from the file written. */
    run_ok((const char *const[]){"--quiet", "--inproc", "--policy", "easy", "--max-jobs", "2400",
                                 "--out", a, KTH, NULL}, NULL);
    run_ok((const char *const[]){"--quiet", "--inproc", "--policy", "easy", "--out", b, wl, NULL},
           NULL);
    fbf_test_replay_same_jobs(a, b, "KTH-SP2 as SWF and as its Batsim workload", 2400);

    /* The platform: well-formed, nb_res compute hosts and a master. */
    char *xml = fbf_test_replay_read(pf);
    assert_non_null(xml);
    assert_non_null(strstr(xml, "<platform version=\"4.1\">"));
    assert_non_null(strstr(xml, "radical=\"0-99\""));
    assert_non_null(strstr(xml, "<prop id=\"role\" value=\"master\"/>"));
    free(xml);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s' 2>&1", pf);
    int st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    /* Batsim 5 names the profile type DelayProfile. */
    run_ok((const char *const[]){"--protocol", "batsim5", "--export-batsim", ex, "--max-jobs",
                                 "10", KTH, NULL}, NULL);
    char *w5 = fbf_test_replay_read(wl);
    assert_non_null(strstr(w5, "{\"type\": \"DelayProfile\", \"delay\": "));
    assert_null(strstr(w5, "\"type\": \"delay\""));
    free(w5);
    fbf_test_replay_rmdir(dir);
}

static void test_refusals(void **state)
{
    (void)state;
    char *dir = fbf_test_replay_tmpdir(), ex[600], wl[600];
    snprintf(ex, sizeof ex, "%s/out", dir);
    /* A job larger than the platform: neither Batsim nor fastbf would run it. */
    snprintf(wl, sizeof wl, "%s/big.swf", dir);
    assert_int_equal(fbf_test_replay_write(wl, "; MaxProcs: 4\n1 0 -1 10 8 -1 -1 8 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n", 0), 0);
    fbf_test_replay_expect((const char *const[]){"--export-batsim", ex, wl, NULL}, TIMEOUT_MS, 2,
                           "job w0!1 asks for 8 resources, outside [1, 4]", false);
    /* Run time 0: Batsim refuses a delay of 0, so the job is left out, said. */
    snprintf(wl, sizeof wl, "%s/zero.swf", dir);
    assert_int_equal(fbf_test_replay_write(wl, "; MaxProcs: 4\n1 0 -1 0 1 -1 -1 1 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                               "2 5 -1 10 2 -1 -1 2 20 -1 -1 -1 -1 -1 -1 -1 -1 -1\n", 0), 0);
    fbf_test_replay_expect((const char *const[]){"--export-batsim", ex, wl, NULL}, TIMEOUT_MS, 0,
                           "1 job of run time 0 left out", true);
    char path[700];
    snprintf(path, sizeof path, "%s/workload.json", ex);
    int jobs = 0;
    assert_int_equal(check_workload(path, &jobs), 4);
    assert_int_equal(jobs, 1);
    fbf_test_replay_rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kth_round_trip),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
