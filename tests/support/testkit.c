/*
 * testkit: helpers shared by several test files (see testkit.h).
 *
 * They report failures through cmocka, so they may only be called from a
 * running cmocka test (or, for the tmpdir pair, as its group fixtures).
 */
#include "support/testkit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/registry.h"
#include "support/replay_sched.h"

/* ---- Batsim message text ------------------------------------------------ */

const char *fbf_test_msg(const char *fmt, ...)
{
    static char bufs[8][16384];
    static int next;
    char *b = bufs[next++ % 8];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof bufs[0], fmt, ap);
    va_end(ap);
    for (char *c = b; *c; c++)
        if (*c == '\'')
            *c = '"';
    return b;
}

const char *fbf_test_sub(double ts, const char *id, int res, double wall)
{
    return fbf_test_msg("{'timestamp':%.6f,'type':'JOB_SUBMITTED','data':{'job_id':'%s','job':"
                        "{'id':'%s','subtime':%.6f,'walltime':%g,'res':%d,'profile':'p'}}}",
                        ts, id, id, ts, wall, res);
}

const char *fbf_test_done(double ts, const char *id, const char *alloc)
{
    return fbf_test_msg("{'timestamp':%.6f,'type':'JOB_COMPLETED','data':{'job_id':'%s',"
                        "'job_state':'COMPLETED_SUCCESSFULLY','return_code':0,'alloc':'%s'}}",
                        ts, id, alloc);
}

const char fbf_test_obs_begins4[] =
    "{\"now\":0.000000,\"events\":[{\"timestamp\":0.000000,\"type\":\"SIMULATION_BEGINS\","
    "\"data\":{\"nb_resources\":4,\"nb_compute_resources\":4,\"nb_storage_resources\":0,"
    "\"allow_compute_sharing\":false,\"allow_storage_sharing\":true,\"config\":{\"redis-"
    "enabled\":false,\"redis-hostname\":\"127.0.0.1\",\"redis-port\":6379,\"redis-prefix\":"
    "\"default\",\"profiles-forwarded-on-submission\":false,\"dynamic-jobs-enabled\":false,"
    "\"dynamic-jobs-acknowledged\":false,\"profile-reuse-enabled\":false,\"sched-config\":"
    "\"\",\"forward-unknown-events\":false},\"compute_resources\":[{\"id\":0,\"name\":"
    "\"Bourassa\",\"state\":\"idle\",\"properties\":{\"role\":\"\"},\"zone_properties\":{}},"
    "{\"id\":1,\"name\":\"Fafard\",\"state\":\"idle\",\"properties\":{\"role\":\"\"},"
    "\"zone_properties\":{}},{\"id\":2,\"name\":\"Ginette\",\"state\":\"idle\","
    "\"properties\":{\"role\":\"\"},\"zone_properties\":{}},{\"id\":3,\"name\":\"Jupiter\","
    "\"state\":\"idle\",\"properties\":{\"role\":\"\"},\"zone_properties\":{}}],"
    "\"storage_resources\":[],\"workloads\":{\"w0\":\"/path/to/batsim/workloads/"
    "test_delays.json\"},\"profiles\":{\"w0\":{\"delay10\":{\"type\":\"delay\",\"delay\":10}}}}"
    "}]}";

/* ---- driving an engine -------------------------------------------------- */

fbf_engine *fbf_test_engine(const char *policy, unsigned workers, const char *platform)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    if (!pe)
        fail_msg("no policy named %s", policy);
    fbf_engine_config cfg = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                             .workers = workers};
    fbf_error err;
    fbf_engine *e = fbf_engine_create(&cfg, &err);
    if (!e)
        fail_msg("engine: %s", err.text);
    if (platform) {
        fbf_idset set;
        fbf_idset_init(&set);
        fbf_test_idset_parse(&set, platform);
        if (fbf_engine_set_platform(e, &set, &err) < 0)
            fail_msg("platform %s: %s", platform, err.text);
        fbf_idset_fini(&set);
    }
    return e;
}

void fbf_test_begin(fbf_engine *e, double now)
{
    assert_int_equal(fbf_engine_begin(e, now, NULL), 0);
}

void fbf_test_submit(fbf_engine *e, const char *id, int64_t res, double wall)
{
    fbf_error err;
    if (fbf_engine_submit(e, id, fbf_engine_now(e), res, wall, &err) != 0)
        fail_msg("submit %s: %s", id, err.text);
}

void fbf_test_complete(fbf_engine *e, const char *id)
{
    fbf_error err;
    if (fbf_engine_complete(e, id, &err) != 0)
        fail_msg("complete %s: %s", id, err.text);
}

void fbf_test_decide(fbf_engine *e, const char *want)
{
    fbf_error err;
    if (fbf_engine_decide(e, &err) != 0)
        fail_msg("decide: %s", err.text);
    size_t n;
    const fbf_decision *d = fbf_engine_decisions(e, &n);
    char got[1024] = "";
    for (size_t k = 0; k < n; k++) {
        size_t len = strlen(got);
        const char *sep = len ? " " : "";
        char set[128];
        if (d[k].kind == FBF_DEC_CALL_ME_LATER)
            snprintf(got + len, sizeof got - len, "%sC:%g", sep, d[k].at);
        else if (d[k].kind == FBF_DEC_SET_STATE && fbf_idset_format(d[k].set, set, sizeof set))
            snprintf(got + len, sizeof got - len, "%sS%u:%s", sep, d[k].pstate, set);
        else
            snprintf(got + len, sizeof got - len, "%s%c:%s", sep,
                     d[k].kind == FBF_DEC_EXECUTE ? 'E'
                     : d[k].kind == FBF_DEC_KILL  ? 'K'
                     : d[k].kind == FBF_DEC_GIVE_UP ? 'G'
                                                    : 'R',
                     fbf_engine_job_id(e, d[k].job));
    }
    if (strcmp(got, want) != 0)
        fail_msg("at %g: decisions \"%s\", expected \"%s\"", fbf_engine_now(e), got, want);
}

void fbf_test_expect_alloc(fbf_engine *e, const char *id, const char *alloc)
{
    char buf[256];
    fbf_idset_format(fbf_engine_job_alloc(e, fbf_engine_find(e, id)), buf, sizeof buf);
    if (strcmp(buf, alloc) != 0)
        fail_msg("job %s on \"%s\", expected \"%s\"", id, buf, alloc);
}

/* ---- a private temporary folder ----------------------------------------- */

static char *tmpdir;

int fbf_test_tmpdir_setup(void **state)
{
    (void)state;
    tmpdir = fbf_test_replay_tmpdir();
    return tmpdir ? 0 : -1;
}

int fbf_test_tmpdir_teardown(void **state)
{
    (void)state;
    fbf_test_replay_rmdir(tmpdir);
    tmpdir = NULL;
    return 0;
}

const char *fbf_test_tmpdir(void) { return tmpdir; }

const char *fbf_test_tmp_path(const char *fmt, ...)
{
    static char bufs[8][4096];
    static int next;
    char *b = bufs[next++ % 8];
    int n = snprintf(b, sizeof bufs[0], "%s/", tmpdir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b + n, sizeof bufs[0] - (size_t)n, fmt, ap);
    va_end(ap);
    return b;
}

const char *fbf_test_tmp_write(const char *name, const char *text)
{
    const char *p = fbf_test_tmp_path("%s", name);
    size_t n = strlen(name);
    int gz = n >= 3 && strcmp(name + n - 3, ".gz") == 0;
    assert_int_equal(fbf_test_replay_write(p, text, gz), 0);
    return p;
}

/* ---- interval sets as text ---------------------------------------------- */

void fbf_test_idset_parse(fbf_idset *s, const char *str)
{
    fbf_error err = {{0}};
    int rc = fbf_idset_parse(s, str, &err);
    if (rc != 0)
        fail_msg("parse(\"%s\") = %d: %s", str, rc, err.text);
}

void fbf_test_idset_expect(const fbf_idset *s, const char *want)
{
    char buf[512];
    size_t len = fbf_idset_format(s, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(len, strlen(want));
}

/* ---- choosing tests ----------------------------------------------------- */

void fbf_test_filter_from_env(void)
{
    if (getenv("FBF_TEST_FILTER"))
        cmocka_set_test_filter(getenv("FBF_TEST_FILTER"));
    if (getenv("FBF_TEST_SKIP"))
        cmocka_set_skip_filter(getenv("FBF_TEST_SKIP"));
}

char *fbf_test_temp_name(char *buf, size_t cap, const char *prefix)
{
    size_t n = strlen(prefix);
    if (cap < n + 7) {
        buf[0] = '\0';
        return buf;
    }
    memcpy(buf, prefix, n);
    memset(buf + n, 'X', 6);
    buf[n + 6] = '\0';
    return buf;
}

uint32_t fbf_test_rnd(uint64_t *state, uint32_t bound)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32) % bound;
}
