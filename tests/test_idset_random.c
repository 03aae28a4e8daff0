/*
 * test_idset_random: every engine/idset operation, applied at random, and
 * compared after each step against a plain bitmap over ids < 300: the
 * ranges' invariants, the ids they hold, the canonical text and every
 * query. The contract tests, one operation at a time, are in test_idset.c.
 */
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

#include "engine/idset.h"
#include "support/testkit.h"

/* ---- randomized comparison against a bitmap --------------------------- */

#define NB 300

typedef struct {
    unsigned char b[NB];
} bitmap;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t bound)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % bound);
}

/* A random set with a random density inside a random window, so sparse
 * and dense shapes, ranges touching at their ends, and operands covering
 * only a prefix, middle or suffix of the other all occur. */
static void random_set(fbf_idset *s, bitmap *m)
{
    uint32_t density = rnd(101);
    uint32_t from = rnd(2) ? 0 : rnd(NB);
    uint32_t to = rnd(2) ? NB : from + rnd(NB - from + 1);
    memset(m, 0, sizeof *m);
    fbf_idset_clear(s);
    for (uint32_t i = from; i < to; i++) {
        if (rnd(100) < density) {
            m->b[i] = 1;
            assert_int_equal(fbf_idset_add_range(s, i, i), 0);
        }
    }
}

/* Checks the invariants and that s holds exactly the ids of m, then that the
 * formatted string matches one built independently from m. */
static void check_same(const fbf_idset *s, const bitmap *m)
{
    for (uint32_t i = 0; i < s->n; i++) {
        assert_true(s->r[i].lo <= s->r[i].hi);
        assert_true(s->r[i].hi < NB);
        if (i)
            assert_true(s->r[i - 1].hi + 1 < s->r[i].lo);
    }
    bitmap got = {{0}};
    for (uint32_t i = 0; i < s->n; i++)
        for (uint32_t id = s->r[i].lo; id <= s->r[i].hi; id++)
            got.b[id] = 1;
    assert_memory_equal(got.b, m->b, NB);

    char want[4 * NB], *w = want;
    uint64_t count = 0;
    for (uint32_t i = 0; i < NB;) {
        if (!m->b[i]) {
            i++;
            continue;
        }
        uint32_t j = i;
        while (j + 1 < NB && m->b[j + 1])
            j++;
        if (w != want)
            *w++ = ' ';
        w += j == i ? sprintf(w, "%u", i) : sprintf(w, "%u-%u", i, j);
        count += j - i + 1;
        i = j + 1;
    }
    *w = '\0';
    fbf_test_idset_expect(s, want);
    assert_int_equal(fbf_idset_count(s), count);
}

static void test_random_vs_bitmap(void **state)
{
    (void)state;
    fbf_idset a, b, c;
    bitmap ma, mb;
    fbf_idset_init(&a);
    fbf_idset_init(&b);
    fbf_idset_init(&c);
    random_set(&a, &ma);

    for (int iter = 0; iter < 4000; iter++) {
        random_set(&b, &mb);
        switch (rnd(8)) {
        case 0: { /* union */
            assert_int_equal(fbf_idset_union(&a, &b), 0);
            for (int i = 0; i < NB; i++)
                ma.b[i] |= mb.b[i];
            break;
        }
        case 1: { /* subtract */
            assert_int_equal(fbf_idset_subtract(&a, &b), 0);
            for (int i = 0; i < NB; i++)
                ma.b[i] &= !mb.b[i];
            break;
        }
        case 2: { /* add_range */
            uint32_t lo = rnd(NB), hi = lo + rnd(NB - lo);
            assert_int_equal(fbf_idset_add_range(&a, lo, hi), 0);
            memset(ma.b + lo, 1, hi - lo + 1);
            break;
        }
        case 3: { /* take_lowest */
            uint32_t have = 0;
            for (int i = 0; i < NB; i++)
                have += ma.b[i];
            uint32_t n = rnd(have + 3);
            int rc = fbf_idset_take_lowest(&a, n, &c);
            if (n > have) {
                assert_int_equal(rc, -ENOSPC);
                break;
            }
            assert_int_equal(rc, 0);
            bitmap mc = {{0}};
            for (int i = 0; i < NB && n; i++) {
                if (ma.b[i]) {
                    ma.b[i] = 0;
                    mc.b[i] = 1;
                    n--;
                }
            }
            check_same(&c, &mc);
            break;
        }
        case 4: { /* parse of a scrambled rendering of b */
            char str[8 * NB], *w = str;
            for (uint32_t i = b.n; i-- > 0;) {
                /* Reverse order and split ranges in overlapping halves. */
                uint32_t lo = b.r[i].lo, hi = b.r[i].hi;
                uint32_t mid = lo + (hi - lo) / 2;
                if (w != str)
                    *w++ = ' ';
                w += sprintf(w, "%u-%u %u-%u", mid, hi, lo, mid);
            }
            *w = '\0';
            fbf_test_idset_parse(&a, str);
            ma = mb;
            break;
        }
        case 5: { /* copy */
            assert_int_equal(fbf_idset_copy(&c, &a), 0);
            assert_true(fbf_idset_equal(&c, &a));
            check_same(&c, &ma);
            break;
        }
        default:
            break;
        }
        check_same(&a, &ma);

        /* Queries on every iteration. */
        bool inter = false, all = true;
        for (int i = 0; i < NB; i++) {
            inter |= ma.b[i] && mb.b[i];
            all &= !mb.b[i] || ma.b[i];
        }
        assert_int_equal(fbf_idset_intersects(&a, &b), inter);
        assert_int_equal(fbf_idset_intersects(&b, &a), inter);
        assert_int_equal(fbf_idset_contains_all(&a, &b), all);
        assert_int_equal(fbf_idset_equal(&a, &b),
                         memcmp(ma.b, mb.b, NB) == 0);
        for (int k = 0; k < 8; k++) {
            uint32_t id = rnd(NB + 10);
            assert_int_equal(fbf_idset_contains(&a, id), id < NB && ma.b[id]);
        }
        char *str = fbf_idset_to_string(&a);
        assert_non_null(str);
        fbf_test_idset_parse(&c, str);
        assert_true(fbf_idset_equal(&c, &a));
        free(str);

        /* Keep a from draining to empty or filling up for good. */
        if (rnd(50) == 0)
            random_set(&a, &ma);
    }
    fbf_idset_fini(&a);
    fbf_idset_fini(&b);
    fbf_idset_fini(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_vs_bitmap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
