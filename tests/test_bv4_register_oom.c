/*
 * test_bv4_register_oom: fastbf's submitter (io/submitter.h) when
 * memory runs out. Every allocation from the k-th on fails, for each k
 * until the call succeeds: building a plan and appending a reply's
 * registrations must then return -ENOMEM with a message (never crash),
 * and leave nothing allocated behind.
 *
 * Allocation failures are injected by defining malloc and friends in
 * this executable (the module's calls bind to them) and handing them to
 * cJSON as its hooks. The sanitizers interpose them too, so the test
 * skips itself under ASan and TSan; the plain build runs it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "io/submitter.h"
#include "support/testkit.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INJECT 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define INJECT 0
#endif
#endif
#ifndef INJECT
#define INJECT 1
#endif

static long fail_from = -1; /* < 0: no failure; else allocations left before failing */
static bool counting;
static long live; /* blocks allocated while counting and not freed yet */

#if INJECT
/* The blocks behind live: a free of memory from before counting must not
 * count (the test's windows hold a few hundred blocks at most). */
static void *blocks[4096];
static size_t nblocks;

static void track(void *p)
{
    if (counting && p && nblocks < sizeof blocks / sizeof blocks[0]) {
        blocks[nblocks++] = p;
        live++;
    }
}

static bool untrack(void *p)
{
    for (size_t i = 0; i < nblocks; i++)
        if (blocks[i] == p) {
            blocks[i] = blocks[--nblocks];
            live--;
            return true;
        }
    return false;
}

static void *(*real_malloc)(size_t);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static void (*real_free)(void *);

/* dlsym may allocate before calloc is known: serve it from here. */
static char boot[4096];
static size_t boot_used;

static void resolve(void)
{
    if (real_free)
        return;
    real_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    real_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    real_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
}

static bool fails(void)
{
    if (fail_from < 0)
        return false;
    if (fail_from == 0)
        return true;
    fail_from--;
    return false;
}

void *malloc(size_t n)
{
    resolve();
    if (fails())
        return NULL;
    void *p = real_malloc(n);
    track(p);
    return p;
}

void *calloc(size_t n, size_t size)
{
    if (!real_calloc) {
        size_t need = (n * size + 15) & ~(size_t)15;
        if (real_free || boot_used + need > sizeof boot)
            resolve();
        if (!real_calloc) {
            void *p = boot + boot_used;
            boot_used += need;
            return p; /* zero already */
        }
    }
    if (fails())
        return NULL;
    void *p = real_calloc(n, size);
    track(p);
    return p;
}

void *realloc(void *q, size_t n)
{
    resolve();
    if (fails())
        return NULL;
    void *p = real_realloc(q, n);
    if (p && (!q || untrack(q)))
        track(p);
    return p;
}

void free(void *p)
{
    if (!p || ((char *)p >= boot && (char *)p < boot + sizeof boot))
        return;
    resolve();
    untrack(p);
    real_free(p);
}

/* libc's own strdup allocates inside libc, out of reach of the malloc
 * above: the module's calls come here instead. */
char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}
#endif

static const fbf_submitter_job plan[] = {
    {"dyn!1", 0, 2, 10, "p10", 10},
    {"dyn!2", 0, 1, -1, "p10", 10},
    {"other!3", 5, 4, 20, "p20", 20},
};

static void arm(long k)
{
    live = 0;
#if INJECT
    nblocks = 0;
#endif
    counting = true;
    fail_from = k;
}

static void disarm(void)
{
    fail_from = -1;
    counting = false;
}

static void test_create_out_of_memory(void **state)
{
    (void)state;
    if (!INJECT)
        skip();
    for (long k = 0;; k++) {
        fbf_error err = {{0}};
        arm(k);
        fbf_submitter_options ro = {.pause = 3};
        fbf_submitter *r = fbf_submitter_create(plan, 3, &ro, &err);
        bool made = r != NULL;
        fbf_submitter_destroy(r);
        long left = live;
        disarm();
        if (!made && !strstr(err.text, "out of memory"))
            fail_msg("failure at allocation %ld: '%s'", k, err.text);
        if (left != 0)
            fail_msg("failure at allocation %ld: %ld allocations left behind", k, left);
        if (made)
            break;
    }
}

/* due() then close() at now 10, with and without profile reuse: the
 * profiles, three jobs, then registration_finished; any allocation may
 * fail. */
static void test_registrations_out_of_memory(void **state)
{
    (void)state;
    if (!INJECT)
        skip();
    for (int reuse = 0; reuse < 2; reuse++)
    for (long k = 0;; k++) {
        fbf_error err = {{0}};
        fbf_submitter *r = fbf_submitter_create(plan, 3, NULL, &err);
        assert_non_null(r);
        assert_int_equal(fbf_submitter_configure(r, true, true, reuse, &err), 0);
        arm(k);
        fbf_decisions events;
        fbf_decisions_init(&events);
        int rc = fbf_submitter_due(r, 10, &events, NULL, &err);
        if (rc == 0)
            rc = fbf_submitter_close(r, 10, 10.001, &events, &err);
        int n = (int)events.n;
        fbf_decisions_fini(&events);
        long left = live;
        disarm();
        fbf_submitter_destroy(r);
        if (rc != 0 && rc != -ENOMEM)
            fail_msg("failure at allocation %ld: rc %d '%s'", k, rc, err.text);
        if (left != 0)
            fail_msg("failure at allocation %ld: %ld allocations left behind", k, left);
        if (rc == 0) {
            /* 2 profiles (3 without reuse: one per job), 3 jobs,
             * registration_finished */
            assert_int_equal(n, reuse ? 6 : 7);
            break;
        }
    }
}

int main(void)
{
    fbf_test_filter_from_env();
#if INJECT
    /* libcjson's own calls to malloc bypass this executable's: route its
     * allocations here. */
    cJSON_Hooks hooks = {.malloc_fn = malloc, .free_fn = free};
    cJSON_InitHooks(&hooks);
#endif
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_out_of_memory),
        cmocka_unit_test(test_registrations_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
