/*
 * test_failures: machines out of service (fbf_engine_set_failed(),
 * engine/failures.c), as a peer reports them failed (v2's F) and back (f),
 * under each policy.
 *
 *  - a free machine that fails is neither used nor reserved until it is
 *    back; then it is used at once;
 *  - a machine that fails under a running job stays that job's until the
 *    job ends (the engine ends no job), then stays out of service;
 *  - a job too large for the machines left waits (no reservation on a
 *    failed machine), and starts when they are back;
 *  - refusals, nothing applied: not a compute machine, failed twice, back
 *    without having failed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <string.h>

#include "engine/engine.h"
#include "support/testkit.h"

static void set_failed(fbf_engine *e, const char *machines, bool failed)
{
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, machines);
    fbf_error err = {{0}};
    int rc = fbf_engine_set_failed(e, &s, failed, &err);
    if (rc != 0)
        fail_msg("set_failed(%s, %d): %s", machines, failed, err.text);
    fbf_idset_fini(&s);
}

static void free_machine_fails(const char *policy)
{
    fbf_engine *e = fbf_test_engine(policy, 1, "0-3");
    fbf_test_begin(e, 0);
    set_failed(e, "1", true);
    assert_int_equal(fbf_engine_nb_failed(e), 1);
    fbf_test_submit(e, "w!a", 2, 100);
    fbf_test_decide(e, "E:w!a");
    fbf_test_expect_alloc(e, "w!a", "0 2");
    /* Three machines would be free but one is out: a 2-machine job
     * waits. */
    fbf_test_begin(e, 1);
    fbf_test_submit(e, "w!b", 2, 100);
    fbf_test_decide(e, "");
    fbf_test_begin(e, 2);
    set_failed(e, "1", false);
    assert_int_equal(fbf_engine_nb_failed(e), 0);
    fbf_test_decide(e, "E:w!b");
    fbf_test_expect_alloc(e, "w!b", "1 3");
    fbf_engine_destroy(e);
}

static void test_free_machine_fails(void **state)
{
    free_machine_fails("fcfs");
    free_machine_fails("easy");
    free_machine_fails("conservative");
}

static void busy_machine_fails(const char *policy)
{
    fbf_engine *e = fbf_test_engine(policy, 1, "0-1");
    fbf_test_begin(e, 0);
    fbf_test_submit(e, "w!a", 2, 100);
    fbf_test_decide(e, "E:w!a");
    fbf_test_begin(e, 5);
    set_failed(e, "0", true);
    assert_int_equal(fbf_engine_job_state(e, fbf_engine_find(e, "w!a")), FBF_JOB_RUNNING);
    fbf_test_submit(e, "w!b", 1, 10);
    fbf_test_decide(e, "");
    /* The job ends: machine 1 is free, machine 0 stays out. */
    fbf_test_begin(e, 10);
    fbf_test_complete(e, "w!a");
    fbf_test_decide(e, "E:w!b");
    fbf_test_expect_alloc(e, "w!b", "1");
    assert_int_equal(fbf_engine_nb_free(e), 0);
    fbf_test_begin(e, 11);
    set_failed(e, "0", false);
    assert_int_equal(fbf_engine_nb_free(e), 1);
    fbf_engine_destroy(e);
}

static void test_busy_machine_fails(void **state)
{
    busy_machine_fails("fcfs");
    busy_machine_fails("easy");
    busy_machine_fails("conservative");
}

/* Backfilling around a job that needs a failed machine: the job cannot
 * hold a reservation that counts on it, so smaller jobs go ahead. */
static void test_no_reservation_on_failed(void **state)
{
    fbf_engine *e = fbf_test_engine("conservative", 1, "0-3");
    fbf_test_begin(e, 0);
    set_failed(e, "3", true);
    fbf_test_submit(e, "w!big", 4, 100);
    fbf_test_submit(e, "w!small", 1, 1000);
    fbf_test_decide(e, "E:w!small");
    assert_true(isinf(fbf_engine_job_reservation(e, fbf_engine_find(e, "w!big"))) ||
                isnan(fbf_engine_job_reservation(e, fbf_engine_find(e, "w!big"))));
    fbf_test_begin(e, 50);
    set_failed(e, "3", false);
    fbf_test_complete(e, "w!small");
    fbf_test_decide(e, "E:w!big");
    fbf_engine_destroy(e);
}

static void expect_refused(fbf_engine *e, const char *machines, bool failed, const char *text)
{
    fbf_idset s;
    fbf_idset_init(&s);
    fbf_test_idset_parse(&s, machines);
    fbf_error err = {{0}};
    assert_int_equal(fbf_engine_set_failed(e, &s, failed, &err), -EINVAL);
    if (!strstr(err.text, text))
        fail_msg("set_failed(%s): '%s' lacks '%s'", machines, err.text, text);
    fbf_idset_fini(&s);
}

static void test_refusals(void **state)
{
    fbf_engine *e = fbf_test_engine("easy", 1, "0-3");
    fbf_test_begin(e, 0);
    expect_refused(e, "4", true, "machine 4 is not a compute resource");
    expect_refused(e, "2", false, "machine 2 is back in service but it had not failed");
    set_failed(e, "1-2", true);
    expect_refused(e, "0-1", true, "machine 1 failed but it is already out of service");
    /* Nothing of a refused report is applied. */
    assert_int_equal(fbf_engine_nb_failed(e), 2);
    assert_int_equal(fbf_engine_nb_free(e), 2);
    fbf_engine_destroy(e);
}

int main(void)
{
    fbf_test_filter_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_machine_fails),
        cmocka_unit_test(test_busy_machine_fails),
        cmocka_unit_test(test_no_reservation_on_failed),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
