/*
 * v5_run: helpers of the batsim5 replay suites (v5_run.h).
 */
#include "support/v5_run.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/replay_run.h"
#include "support/v5_edc.h"

#define TIMEOUT_MS 120000

void fbf_test_v5_result_free(fbf_test_v5_result *r)
{
    free(r->out);
    free(r->err);
    free(r->log);
}

fbf_test_v5_result fbf_test_v5_against(const char *const *script, const char *const *args)
{
    char ep[128];
    fbf_test_v5edc_thread *t = fbf_test_v5edc_thread_start(script, ep, sizeof ep);
    assert_non_null(t);
    const char *all[40] = {"--protocol", "batsim5", "--endpoint", ep};
    size_t n = 4;
    for (size_t k = 0; args[k] && n < 39; k++)
        all[n++] = args[k];
    all[n] = NULL;
    fbf_test_v5_result r = {0};
    r.rc = fbf_test_replay_run(all, TIMEOUT_MS, &r.out, &r.err);
    r.log = fbf_test_v5edc_thread_stop(t);
    return r;
}

void fbf_test_v5_run_ok(const char *const *args)
{
    char *out = NULL, *err = NULL;
    int rc = fbf_test_replay_run(args, TIMEOUT_MS, &out, &err);
    if (rc != 0)
        fail_msg("fastbf-replay exit %d: %s", rc, err);
    free(out);
    free(err);
}

void fbf_test_v5_same_file(const char *a_path, const char *b_path)
{
    char *a = fbf_test_replay_read(a_path), *b = fbf_test_replay_read(b_path);
    assert_non_null(a);
    assert_non_null(b);
    if (strcmp(a, b) != 0) {
        size_t line = 1, i = 0;
        for (; a[i] && a[i] == b[i]; i++)
            line += a[i] == '\n';
        fail_msg("%s and %s differ from line %zu", a_path, b_path, line);
    }
    free(a);
    free(b);
}

void fbf_test_v5_three(const char *dir, char *path, size_t cap)
{
    static const char three[] = "; MaxProcs: 4\n"
                                "1 0 -1 10 2 -1 -1 2 10 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "2 0 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n"
                                "3 100 -1 5 1 -1 -1 1 5 -1 -1 -1 -1 -1 -1 -1 -1 -1\n";
    snprintf(path, cap, "%s/three.swf", dir);
    assert_int_equal(fbf_test_replay_write(path, three, 0), 0);
}

cJSON *fbf_test_v5_message_with(const char *log, const char *needle)
{
    const char *p = strstr(log, needle);
    if (!p)
        return NULL;
    while (p > log && p[-1] != '\n')
        p--;
    size_t n = strcspn(p, "\n");
    if (n >= 5 && strncmp(p + n - 5, "<NUL>", 5) == 0)
        n -= 5;
    return cJSON_ParseWithLength(p, n);
}

const cJSON *fbf_test_v5_event_of(const cJSON *m, const char *type)
{
    const cJSON *evs = cJSON_GetObjectItemCaseSensitive(m, "events");
    for (const cJSON *e = evs ? evs->child : NULL; e; e = e->next) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "event_type");
        if (cJSON_IsString(t) && strcmp(t->valuestring, type) == 0)
            return cJSON_GetObjectItemCaseSensitive(e, "event");
    }
    return NULL;
}

double fbf_test_v5_num(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsNumber(v) ? v->valuedouble : -12345;
}

const char *fbf_test_v5_str(const cJSON *o, const char *a, const char *b)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b)
        v = cJSON_GetObjectItemCaseSensitive(v, b);
    return cJSON_IsString(v) ? v->valuestring : "(none)";
}

int fbf_test_v5_count(const char *log, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(log, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}
