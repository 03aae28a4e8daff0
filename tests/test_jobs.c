/*
 * test_jobs: the job store as it grows (engine/jobs.h). The store holds a
 * few records in a small first chunk and allocates the next ones as jobs
 * arrive, so every chunk boundary is a place where a handle could land in
 * the wrong record:
 *   - every id stays findable and every handle reads its own record, on
 *     both sides of each boundary, up to three chunks of the large size;
 *   - a record's address never changes while the store grows (workers
 *     read records while the owner adds jobs);
 *   - records do not overlap (each keeps what was written into it);
 *   - destroy frees what each record holds, in every chunk (the leak
 *     checker of the sanitizer builds sees a record it missed);
 *   - a reader thread that got handles through a release/acquire hand-off
 *     reads their records while the owner keeps adding.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine/idset.h"
#include "engine/jobs.h"

/* Past three chunks of 2^14 records, the largest chunk size. */
enum { N = 3 * 16384 + 1000 };

static void fill(fbf_job *j, uint32_t i)
{
    j->res = i;
    j->walltime = (double)i;
    j->subtime = (double)i + 0.5;
    j->part = (uint16_t)i;
    /* two disjoint ranges: the set holds heap memory destroy must free */
    assert_int_equal(fbf_idset_add_range(&j->alloc, i, i), 0);
    assert_int_equal(fbf_idset_add_range(&j->alloc, i + 2, i + 2), 0);
}

static void check(const fbf_job *j, uint32_t i, const char *id)
{
    assert_string_equal(j->id, id);
    assert_int_equal(j->seq, (uint64_t)i);
    assert_int_equal(j->res, i);
    assert_true(j->walltime == (double)i && j->subtime == (double)i + 0.5);
    assert_int_equal(j->part, (uint16_t)i);
    assert_int_equal(j->alloc.n, 2);
    assert_true(fbf_idset_contains(&j->alloc, i) && fbf_idset_contains(&j->alloc, i + 2));
    assert_false(fbf_idset_contains(&j->alloc, i + 1));
}

static void test_grows_across_chunks(void **state)
{
    (void)state;
    fbf_jobs *js = fbf_jobs_create();
    fbf_job **rec = malloc(N * sizeof *rec);
    assert_true(js && rec);
    char id[32];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(id, sizeof id, "w%u!%u", i % 5, i);
        fbf_job_h h;
        assert_int_equal(fbf_jobs_add(js, id, &h), 0);
        assert_int_equal(h, i); /* handles are the arrival order */
        rec[i] = fbf_jobs_get(js, h);
        assert_true(rec[i]->prev == FBF_JOB_NONE && rec[i]->next == FBF_JOB_NONE);
        assert_int_equal(rec[i]->res, 0); /* zeroed, whatever the chunk held */
        fill(rec[i], i);
        /* the records already there kept their address and content; a
         * sample, and at the first job of each chunk */
        if ((i & (i - 1)) == 0 || i % 16384 == 0 || i % 997 == 0)
            for (uint32_t k = 0; k <= i; k++) {
                assert_ptr_equal(fbf_jobs_get(js, k), rec[k]);
                assert_int_equal(rec[k]->res, k);
            }
    }
    assert_int_equal(fbf_jobs_count(js), N);
    for (uint32_t i = 0; i < N; i++) {
        snprintf(id, sizeof id, "w%u!%u", i % 5, i);
        assert_int_equal(fbf_jobs_find(js, id), i);
        assert_ptr_equal(fbf_jobs_get(js, i), rec[i]);
        check(rec[i], i, id);
    }
    /* Distinct handles, distinct records, never overlapping: neighbours
     * across each boundary are at least a record apart. */
    for (uint32_t i = 1; i < N; i++) {
        const char *a = (const char *)rec[i - 1], *b = (const char *)rec[i];
        assert_true(a + sizeof(fbf_job) <= b || b + sizeof(fbf_job) <= a);
    }
    fbf_job_h h;
    assert_int_equal(fbf_jobs_add(js, "w0!0", &h), -EEXIST);
    assert_int_equal(fbf_jobs_add(js, "w4!16384", &h), -EEXIST);
    assert_int_equal(fbf_jobs_count(js), N);
    free(rec);
    fbf_jobs_destroy(js);
}

/* A store with a handful of jobs, and one whose last job is the first of
 * a chunk: destroy frees exactly what was made. */
static void test_small_and_edge_counts(void **state)
{
    (void)state;
    static const uint32_t counts[] = {0, 1, 63, 64, 65, 128, 8192, 16383, 16384, 16385};
    char id[32];
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        fbf_jobs *js = fbf_jobs_create();
        assert_non_null(js);
        for (uint32_t i = 0; i < counts[c]; i++) {
            snprintf(id, sizeof id, "j%u", i);
            fbf_job_h h;
            assert_int_equal(fbf_jobs_add(js, id, &h), 0);
            fill(fbf_jobs_get(js, h), i);
        }
        assert_int_equal(fbf_jobs_count(js), counts[c]);
        for (uint32_t i = 0; i < counts[c]; i++) {
            snprintf(id, sizeof id, "j%u", i);
            assert_int_equal(fbf_jobs_find(js, id), i);
            check(fbf_jobs_get(js, i), i, id);
        }
        fbf_jobs_destroy(js);
    }
}

typedef struct reader {
    fbf_jobs *js;
    _Atomic uint32_t published; /* handles below it are complete */
    atomic_bool done;
    fbf_job *const *rec;
    uint64_t checked;
    int bad;
} reader;

static void *read_records(void *arg)
{
    reader *r = arg;
    uint32_t seen = 0;
    for (;;) {
        bool done = atomic_load_explicit(&r->done, memory_order_acquire);
        uint32_t n = atomic_load_explicit(&r->published, memory_order_acquire);
        for (; seen < n; seen++) {
            const fbf_job *j = r->rec[seen];
            /* read through the address the owner took when it added the
             * job, and re-read the earliest ones as the store grows */
            if (j->res != seen || j->seq != seen || r->rec[seen / 2]->res != seen / 2)
                r->bad++;
            r->checked++;
        }
        if (done && seen == atomic_load_explicit(&r->published, memory_order_acquire))
            return NULL;
    }
}

static void test_reader_while_growing(void **state)
{
    (void)state;
    fbf_job **rec = calloc(N, sizeof *rec);
    reader r = {.js = fbf_jobs_create(), .rec = rec};
    assert_true(r.js && rec);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, read_records, &r), 0);
    char id[32];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(id, sizeof id, "r%u", i);
        fbf_job_h h;
        assert_int_equal(fbf_jobs_add(r.js, id, &h), 0);
        rec[i] = fbf_jobs_get(r.js, h);
        rec[i]->res = i;
        atomic_store_explicit(&r.published, i + 1, memory_order_release);
    }
    atomic_store_explicit(&r.done, true, memory_order_release);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.bad, 0);
    assert_int_equal(r.checked, N);
    free(rec);
    fbf_jobs_destroy(r.js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_across_chunks),
        cmocka_unit_test(test_small_and_edge_counts),
        cmocka_unit_test(test_reader_while_growing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
