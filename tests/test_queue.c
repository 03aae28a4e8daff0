/*
 * test_queue: the waiting queue's partitions (engine/queue.h): D1 order
 * (subtime, then arrival) whatever the insertion order, unlinking head,
 * middle and tail, the merged iteration over several partitions (the
 * caller may unlink what it was just given), and fbf_queue_merge.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "engine/jobs.h"
#include "engine/queue.h"

static fbf_jobs *mk_jobs(const double *subtimes, size_t n, fbf_job_h *h)
{
    fbf_jobs *js = fbf_jobs_create();
    assert_non_null(js);
    char id[16];
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "j%zu", i);
        assert_int_equal(fbf_jobs_add(js, id, &h[i]), 0);
        fbf_jobs_get(js, h[i])->subtime = subtimes[i];
    }
    return js;
}

/* Walks p both ways and compares with want (indices into h). */
static void expect_order(fbf_jobs *js, const fbf_partition *p, const fbf_job_h *h, const int *want,
                         size_t n)
{
    assert_int_equal(p->count, n);
    fbf_job_h x = p->head;
    for (size_t k = 0; k < n; k++, x = fbf_jobs_get(js, x)->next)
        assert_int_equal(x, h[want[k]]);
    assert_int_equal(x, FBF_JOB_NONE);
    x = p->tail;
    for (size_t k = n; k-- > 0; x = fbf_jobs_get(js, x)->prev)
        assert_int_equal(x, h[want[k]]);
    assert_int_equal(x, FBF_JOB_NONE);
}

static const double qsub[] = {5, 1, 3, 1, 5, 0, 3};
static const int qorder[] = {5, 1, 3, 2, 6, 0, 4}; /* by subtime, ties by arrival */

/* Out-of-order inserts, then unlinking head, middle and tail. */
static void test_queue_insert_unlink(void **state)
{
    (void)state;
    fbf_job_h h[7];
    fbf_jobs *js = mk_jobs(qsub, 7, h);
    static const int ins[2][7] = {{0, 1, 2, 3, 4, 5, 6}, {4, 0, 6, 3, 5, 1, 2}};
    fbf_partition p;
    for (int v = 0; v < 2; v++) {
        fbf_partition_init(&p);
        assert_true(p.count == 0 && p.head == FBF_JOB_NONE && p.tail == FBF_JOB_NONE);
        for (int k = 0; k < 7; k++)
            fbf_partition_insert(&p, js, h[ins[v][k]]);
        expect_order(js, &p, h, qorder, 7);
        if (v == 1)
            break;
        for (int k = 0; k < 7; k++) /* unlinked records can be inserted again */
            fbf_partition_unlink(&p, js, h[k]);
        assert_true(p.count == 0 && p.head == FBF_JOB_NONE && p.tail == FBF_JOB_NONE);
    }
    fbf_partition_unlink(&p, js, h[5]); /* head */
    fbf_partition_unlink(&p, js, h[2]); /* middle */
    fbf_partition_unlink(&p, js, h[4]); /* tail */
    static const int w1[] = {1, 3, 6, 0};
    expect_order(js, &p, h, w1, 4);
    assert_true(fbf_jobs_get(js, h[2])->next == FBF_JOB_NONE &&
                fbf_jobs_get(js, h[2])->prev == FBF_JOB_NONE);
    fbf_partition_insert(&p, js, h[4]);
    fbf_partition_insert(&p, js, h[2]);
    fbf_partition_insert(&p, js, h[5]);
    expect_order(js, &p, h, qorder, 7);
    fbf_jobs_destroy(js);
}

static void sort_handles(fbf_jobs *js, fbf_job_h *v, size_t n) /* insertion sort, D1 */
{
    for (size_t i = 1; i < n; i++)
        for (size_t k = i;
             k > 0 && fbf_job_key_cmp(fbf_jobs_get(js, v[k - 1]), fbf_jobs_get(js, v[k])) > 0;
             k--) {
            fbf_job_h t = v[k];
            v[k] = v[k - 1];
            v[k - 1] = t;
        }
}

static void test_queue_merged_iteration(void **state)
{
    (void)state;
    enum { N = 40, P = 3 };
    double sub[N];
    for (int i = 0; i < N; i++)
        sub[i] = (double)((i * 7919) % 13) / 2; /* ties and disorder */
    fbf_job_h h[N], want[N];
    fbf_jobs *js = mk_jobs(sub, N, h);
    fbf_partition parts[P + 1]; /* the last one stays empty */
    for (int w = 0; w <= P; w++)
        fbf_partition_init(&parts[w]);
    for (int i = N; i-- > 0;) /* reverse arrival: every insert walks */
        fbf_partition_insert(&parts[i % P], js, h[i]);
    memcpy(want, h, sizeof want);
    sort_handles(js, want, N);

    /* fbf_queue_merge over the partitions' lists (and an empty one). */
    fbf_job_h lists[P + 1][N], out[N + 1];
    fbf_job_h *lp[P + 1];
    size_t lens[P + 1] = {0};
    for (int w = 0; w <= P; w++) {
        lp[w] = lists[w];
        for (fbf_job_h x = parts[w].head; x != FBF_JOB_NONE; x = fbf_jobs_get(js, x)->next)
            lists[w][lens[w]++] = x;
    }
    out[N] = 4242;
    fbf_queue_merge(js, lp, lens, P + 1, out);
    for (int k = 0; k < N; k++)
        assert_int_equal(out[k], want[k]);
    assert_int_equal(out[N], 4242);

    fbf_job_h cur[P + 1];
    fbf_queue_iter it;
    fbf_queue_iter_init(&it, parts, P + 1, cur);
    for (int k = 0; k < N; k++) {
        fbf_job_h x = fbf_queue_iter_next(&it, js);
        assert_int_equal(x, want[k]);
        if (k % 2 == 0) /* the caller may unlink what it was just given */
            fbf_partition_unlink(&parts[(int)fbf_jobs_get(js, x)->seq % P], js, x);
    }
    assert_int_equal(fbf_queue_iter_next(&it, js), FBF_JOB_NONE);
    assert_int_equal(parts[0].count + parts[1].count + parts[2].count, N / 2);
    fbf_queue_iter_init(&it, parts, P + 1, cur); /* what is left, still in order */
    for (int k = 1; k < N; k += 2)
        assert_int_equal(fbf_queue_iter_next(&it, js), want[k]);
    assert_int_equal(fbf_queue_iter_next(&it, js), FBF_JOB_NONE);
    fbf_jobs_destroy(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_insert_unlink),
        cmocka_unit_test(test_queue_merged_iteration),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
