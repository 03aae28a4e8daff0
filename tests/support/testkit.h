/*
 * testkit: the small helpers that several test files need, kept in one
 * place so that a fix to one reaches every test that uses it.
 *
 *   - Batsim message text (test_bv4*, test_e2e): fbf_test_msg() is printf
 *     into a rotating static buffer with ' standing for ", so that JSON
 *     reads without escapes; fbf_test_sub() / fbf_test_done() build one
 *     JOB_SUBMITTED / JOB_COMPLETED event. The tests alias them to M, SUB
 *     and DONE, which nest inside each other's arguments.
 *   - Driving an engine by hand (test_engine, test_policies): one call per
 *     protocol step, failing the test with the engine's own error text;
 *     fbf_test_decide() checks a whole reply at once.
 *   - A private temporary folder per test group (test_replay,
 *     test_workload): cmocka group setup/teardown, paths inside it and
 *     files written into it.
 *   - Interval sets given as text (test_idset*): parse one known to be
 *     valid, and check a set's canonical form.
 *   - FBF_TEST_FILTER / FBF_TEST_SKIP, for the tests whose main() honours
 *     them.
 *   - A small seeded generator (test_runs, test_cells, test_fits), so
 *     that random cases are the same on every machine.
 *
 * A helper that checks something fails the running cmocka test itself, so
 * callers need no checks of their own. Every symbol is prefixed fbf_test_ since every
 * tests/support C file is linked into every test.
 */
#ifndef FBF_TEST_TESTKIT_H
#define FBF_TEST_TESTKIT_H

#include <stdint.h>

#include "engine/engine.h"
#include "engine/idset.h"

/* ---- Batsim message text ------------------------------------------------ */

/* printf into one of 8 rotating static buffers (16 KiB each), every '
 * turned into ": fbf_test_msg("{'now':%g,'events':[]}", 1.0). A message
 * may nest up to 7 others as arguments. */
const char *fbf_test_msg(const char *fmt, ...);

/* A JOB_SUBMITTED event (no trailing comma) at ts, its subtime ts, with
 * profile "p". Times are printed %.6f, as Batsim does: %g would round
 * 20.000015 to 20. */
const char *fbf_test_sub(double ts, const char *id, int res, double wall);

/* A successful JOB_COMPLETED event at ts (%.6f) of job id on alloc. */
const char *fbf_test_done(double ts, const char *id, const char *alloc);

/* Batsim 4.2.1's SIMULATION_BEGINS for 4 hosts, verbatim, as observed. */
extern const char fbf_test_obs_begins4[];

/* ---- driving an engine -------------------------------------------------- */

/* An engine of the named policy at its default depth with `workers`
 * workers, on platform (an idset string; NULL: none set yet). Must
 * succeed. */
fbf_engine *fbf_test_engine(const char *policy, unsigned workers, const char *platform);

/* fbf_engine_begin(now), which must succeed. */
void fbf_test_begin(fbf_engine *e, double now);

/* Submits id at the engine's now; it must be accepted. */
void fbf_test_submit(fbf_engine *e, const char *id, int64_t res, double wall);

/* Completes id, which must be running. */
void fbf_test_complete(fbf_engine *e, const char *id);

/* Runs the pass and checks its decisions: "E:id" / "R:id" / "C:time" /
 * "S<pstate>:<machines>", space separated, in reply order ("" for an
 * empty reply). */
void fbf_test_decide(fbf_engine *e, const char *want);

/* Job id runs on exactly alloc (canonical form, "0-1 5"). */
void fbf_test_expect_alloc(fbf_engine *e, const char *id, const char *alloc);

/* ---- a private temporary folder ----------------------------------------- */

/* cmocka group setup and teardown: a fresh folder, then its removal with
 * everything the tests left in it. */
int fbf_test_tmpdir_setup(void **state);
int fbf_test_tmpdir_teardown(void **state);

/* The folder (valid between setup and teardown). */
const char *fbf_test_tmpdir(void);

/* A path in the folder, printf-style, in one of 8 rotating static
 * buffers: a few can be alive at once. */
const char *fbf_test_tmp_path(const char *fmt, ...);

/* Writes text to the file name in the folder, gzip-compressed when the
 * name ends in ".gz", and returns its path (as fbf_test_tmp_path). */
const char *fbf_test_tmp_write(const char *name, const char *text);

/* ---- interval sets as text ---------------------------------------------- */

/* Parses str, which must be valid, into s (which must be initialised). */
void fbf_test_idset_parse(fbf_idset *s, const char *str);

/* s formats (into 512 bytes) as exactly want, and the length
 * fbf_idset_format returns agrees. */
void fbf_test_idset_expect(const fbf_idset *s, const char *want);

/* ---- choosing tests ----------------------------------------------------- */

/* FBF_TEST_FILTER / FBF_TEST_SKIP from the environment: run or skip tests
 * by name pattern (cmocka_set_test_filter / cmocka_set_skip_filter). Call
 * before cmocka_run_group_tests(). */
void fbf_test_filter_from_env(void);

/* Writes "<prefix>" followed by the six placeholder characters mkstemp()
 * and mkdtemp() replace, into buf (cap bytes); returns buf. */
char *fbf_test_temp_name(char *buf, size_t cap, const char *prefix);

/* ---- random cases ------------------------------------------------------ */

/* xorshift64* on *state (never 0): a number in [0, bound), bound > 0. */
uint32_t fbf_test_rnd(uint64_t *state, uint32_t bound);

#endif
