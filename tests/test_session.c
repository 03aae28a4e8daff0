/*
 * test_session: the protocol-neutral session (io/session.h) driven with
 * typed events, as any codec drives it, without wire syntax.
 *
 *  - a decision point's decisions come typed and in D0 order: the
 *    rejection and metadata of a job given up after --max-wait, then the
 *    kills, the starts each followed by its --tag-starts metadata, then the
 *    call for the next decision point;
 *  - a job that ends at a decision point is gone before its pass (D2), a
 *    killed job that had completed first is not ended twice;
 *  - machines out of service and back;
 *  - an error names the event it came from (its origin, the codec's own
 *    index) and the field, so that each codec words it; the session
 *    refuses events outside a decision point and after the end.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "io/session.h"
#include "policies/registry.h"
#include "support/testkit.h"

static fbf_session *make(const char *policy, double kill_after, double max_wait, bool tags)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    fbf_session_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth, .workers = 1,
                   .kill_after = kill_after, .max_wait = max_wait},
        .tag_starts = tags,
        .call_margin = 1e-3,
    };
    fbf_error err = {{0}};
    fbf_session *s = fbf_session_create(&o, &err);
    if (!s)
        fail_msg("session: %s", err.text);
    return s;
}

static fbf_idset platform;

static fbf_event begins(void)
{
    static fbf_begins b;
    b = (fbf_begins){.compute = &platform};
    return (fbf_event){.kind = FBF_EV_SIMULATION_BEGINS, .u.begins = &b};
}

static fbf_event submitted(double t, const char *id, int64_t res, double wall)
{
    fbf_event e = {.kind = FBF_EV_JOB_SUBMITTED, .time = t};
    e.u.submitted.id = id;
    e.u.submitted.described = true;
    e.u.submitted.desc = (fbf_job_desc){.res = res, .walltime = wall, .subtime = NAN};
    return e;
}

static fbf_event ended(double t, const char *id)
{
    fbf_event e = {.kind = FBF_EV_JOB_ENDED, .time = t};
    e.u.ended.id = id;
    return e;
}

/* One decision point; the decisions as "K:id" words: X start, R reject,
 * M metadata (its text after '='), K kill, C call (its time). */
static const char *point(fbf_session *s, double now, fbf_event *ev, size_t n)
{
    static char out[1024];
    fbf_error err = {{0}};
    for (size_t i = 0; i < n; i++)
        ev[i].origin = (long)i;
    if (fbf_session_open(s, now, &err) < 0 || fbf_session_apply(s, ev, n, &err) < 0)
        fail_msg("at %g: %s", now, err.text);
    const fbf_out *o;
    size_t k;
    if (fbf_session_decide(s, &o, &k, &err) < 0)
        fail_msg("decide at %g: %s", now, err.text);
    fbf_engine *e = fbf_session_engine(s);
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < k; i++) {
        const char *id = o[i].job != FBF_JOB_NONE ? fbf_engine_job_id(e, o[i].job) : "";
        switch (o[i].kind) {
        case FBF_OUT_EXECUTE: len += (size_t)snprintf(out + len, sizeof out - len, "X:%s ", id); break;
        case FBF_OUT_REJECT: len += (size_t)snprintf(out + len, sizeof out - len, "R:%s ", id); break;
        case FBF_OUT_KILL: len += (size_t)snprintf(out + len, sizeof out - len, "K:%s ", id); break;
        case FBF_OUT_METADATA:
            len += (size_t)snprintf(out + len, sizeof out - len, "M:%s=%s ", id, o[i].text);
            break;
        case FBF_OUT_CALL_ME_LATER:
            len += (size_t)snprintf(out + len, sizeof out - len, "C:%g ", o[i].at);
            break;
        default: len += (size_t)snprintf(out + len, sizeof out - len, "?%d ", (int)o[i].kind);
        }
    }
    if (len)
        out[len - 1] = '\0';
    return out;
}

static void test_d0_order_and_tags(void **state)
{
    fbf_session *s = make("easy", 0, 0, true);
    fbf_event e0[] = {begins(), submitted(0, "w!a", 4, 100), submitted(0, "w!b", 2, 10)};
    assert_string_equal(point(s, 0, e0, 3), "X:w!a M:w!a=reason=head");
    /* a ends at 50 (D2: before the pass), b starts in its place. */
    fbf_event e1[] = {ended(50, "w!a")};
    assert_string_equal(point(s, 50, e1, 1), "X:w!b M:w!b=reason=head");
    fbf_session_destroy(s);
}

static void test_give_up_and_kill(void **state)
{
    /* max_wait 30: the job that cannot start is given up at 30 (its
     * metadata then its rejection), kill_after 100 kills the runner. */
    fbf_session *s = make("fcfs", 100, 30, false);
    fbf_event e0[] = {begins(), submitted(0, "w!a", 4, 1000), submitted(0, "w!b", 1, 10)};
    assert_string_equal(point(s, 0, e0, 3), "X:w!a C:30");
    assert_string_equal(point(s, 30, NULL, 0),
                        "M:w!b=gave up after waiting 30 s (fastbf --max-wait) R:w!b C:100");
    assert_string_equal(point(s, 100, NULL, 0), "K:w!a");
    /* The job had completed before the kill came: ended once, no error. */
    fbf_event e3[] = {ended(100, "w!a"), {.kind = FBF_EV_JOB_KILLED, .time = 100}};
    e3[1].u.killed.id = "w!a";
    assert_string_equal(point(s, 100, e3, 2), "");
    fbf_session_destroy(s);
}

static void test_failed_machines(void **state)
{
    fbf_session *s = make("conservative", 0, 0, false);
    fbf_idset two;
    fbf_idset_init(&two);
    fbf_test_idset_parse(&two, "2-3");
    fbf_event e0[] = {begins(), {.kind = FBF_EV_MACHINES_FAILED}, submitted(0, "w!a", 3, 10)};
    e0[1].u.machines = &two;
    assert_string_equal(point(s, 0, e0, 3), "");
    fbf_event e1[] = {{.kind = FBF_EV_MACHINES_RESTORED, .time = 5}};
    e1[0].u.machines = &two;
    assert_string_equal(point(s, 5, e1, 1), "X:w!a");
    fbf_idset_fini(&two);
    fbf_session_destroy(s);
}

/* The error of the event at origin 7, with its field. */
static void expect_fault(fbf_session *s, fbf_event ev, int rc, fbf_session_field field,
                         const char *text)
{
    fbf_error err = {{0}};
    ev.origin = 7;
    assert_int_equal(fbf_session_open(s, 10, &err), 0);
    assert_int_equal(fbf_session_apply(s, &ev, 1, &err), rc);
    fbf_session_fault f = fbf_session_last_fault(s);
    assert_int_equal(f.index, 7);
    assert_int_equal(f.field, field);
    if (!strstr(err.text, text))
        fail_msg("'%s' lacks '%s'", err.text, text);
}

static void test_faults_name_event_and_field(void **state)
{
    fbf_session *s = make("easy", 0, 0, false);
    fbf_event e0[] = {begins(), submitted(0, "w!a", 1, 10)};
    point(s, 0, e0, 2);
    expect_fault(s, ended(10, "w!zz"), -ENOENT, FBF_FIELD_JOB_ID, "unknown job w!zz");
    fbf_session_destroy(s);

    s = make("easy", 0, 0, false);
    point(s, 0, e0, 2);
    fbf_event bad = ended(10, "w!a");
    bad.u.ended.alloc = "3";
    expect_fault(s, bad, -EPROTO, FBF_FIELD_ALLOC, "job w!a ran on \"0\", not \"3\"");
    fbf_session_destroy(s);

    s = make("easy", 0, 0, false);
    point(s, 0, e0, 2);
    expect_fault(s, submitted(10, "w!a", 1, 10), -EEXIST, FBF_FIELD_JOB_ID, "w!a");
    fbf_session_destroy(s);

    /* No store and an undescribed job: the description is missing. */
    s = make("easy", 0, 0, false);
    point(s, 0, e0, 2);
    fbf_event nodesc = submitted(10, "w!b", 1, 10);
    nodesc.u.submitted.described = false;
    expect_fault(s, nodesc, -EPROTO, FBF_FIELD_JOB, "fastbf needs job descriptions");
    fbf_session_destroy(s);

    /* Outside a decision point, and after the end. */
    s = make("easy", 0, 0, false);
    fbf_error err = {{0}};
    assert_int_equal(fbf_session_apply(s, e0, 1, &err), -EINVAL);
    fbf_event e1[] = {begins(), {.kind = FBF_EV_SIMULATION_ENDS}};
    assert_string_equal(point(s, 0, e1, 2), "");
    assert_true(fbf_session_ended(s));
    assert_int_equal(fbf_session_open(s, 1, &err), -EPROTO);
    assert_non_null(strstr(err.text, "after SIMULATION_ENDS"));
    fbf_session_destroy(s);
}

static int setup(void **state)
{
    fbf_idset_init(&platform);
    fbf_test_idset_parse(&platform, "0-3");
    return 0;
}

static int teardown(void **state)
{
    fbf_idset_fini(&platform);
    return 0;
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d0_order_and_tags),
        cmocka_unit_test(test_give_up_and_kill),
        cmocka_unit_test(test_failed_machines),
        cmocka_unit_test(test_faults_name_event_and_field),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
