/*
 * conservative: unlimited reservation depth (D7). Reservations persist
 * between decision points, are compressed after a completion (a,
 * move_earlier.c), given to arrivals in queue order (b, earliest.c), and
 * start when due (c: the queue index's subtree minima on the fast path,
 * due.c on the plain one); a CALL_ME_LATER covers the earliest one when
 * no running job ends first (d).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "policies/backfilling/state.h"
#include "policies/common.h"

/* Where reservations are noted as due: nowhere on the fast path (qi). */
static fbf_bf_due *due_of(fbf_bf_conservative *b) { return b->fast ? NULL : &b->due; }

static int place(fbf_bf_conservative *b, fbf_sched *s, fbf_job_h h)
{
    const fbf_job *j = fbf_sched_job(s, h);
    double now = fbf_sched_now(s);
    double t = b->fast ? fbf_bf_earliest_in_batch(&b->search, b->p, now, j->res, j->walltime)
                       : fbf_profile_earliest(b->p, now, j->res, j->walltime);
    if (fbf_policy_hold(b->p, t, j) < 0 || fbf_bf_due_note(due_of(b), t, h) < 0)
        return -ENOMEM;
    fbf_sched_set_rsv(s, h, t);
    b->n_placed++;
    if (b->fast && fbf_bf_index_add(&b->cmp, s, h) < 0)
        return -ENOMEM;
    return 0;
}

/* Sorts handles into queue order (fbf_job_key_cmp). */
static int sort_queue_order(fbf_bf_conservative *b, fbf_sched *s, fbf_hvec *v)
{
    if (v->n < 2)
        return 0;
    if (v->n > b->sorted_cap) {
        fbf_bf_sort_item *n = realloc(b->sorted, v->n * sizeof *n);
        if (!n)
            return -ENOMEM;
        b->sorted = n;
        b->sorted_cap = v->n;
    }
    for (size_t i = 0; i < v->n; i++) {
        const fbf_job *j = fbf_sched_job(s, v->v[i]);
        b->sorted[i] = (fbf_bf_sort_item){{j->qkey, j->subtime, j->seq}, v->v[i]};
    }
    qsort(b->sorted, v->n, sizeof *b->sorted, fbf_bf_sort_item_cmp);
    for (size_t i = 0; i < v->n; i++)
        v->v[i] = b->sorted[i].j;
    return 0;
}

static bool is_due(void *ctx, const fbf_qagg *agg) { return agg->min_rsv <= *(double *)ctx; }

/* The waiting jobs whose reservation is due by now, in queue order, into
 * b->tmp. */
static int collect_due(fbf_bf_conservative *b, fbf_sched *s, double now)
{
    b->tmp.n = 0;
    if (b->fast) {
        for (fbf_job_h h = FBF_JOB_NONE;
             (h = fbf_qindex_next(b->cmp.qi, s, h, is_due, &now)) != FBF_JOB_NONE;)
            if (fbf_hvec_push(&b->tmp, h) < 0)
                return -ENOMEM;
        return 0;
    }
    if (fbf_bf_due_take(&b->due, s, now, &b->tmp) < 0 || sort_queue_order(b, s, &b->tmp) < 0)
        return -ENOMEM;
    /* A reservation D10's repair moved later and compression brought back
     * has two live entries. */
    size_t k = 0;
    for (size_t i = 0; i < b->tmp.n; i++)
        if (k == 0 || b->tmp.v[k - 1] != b->tmp.v[i])
            b->tmp.v[k++] = b->tmp.v[i];
    b->tmp.n = k;
    return 0;
}

/* The earliest live reservation, INFINITY if none. */
static double earliest_rsv(fbf_bf_conservative *b, fbf_sched *s)
{
    if (b->fast)
        return fbf_qindex_all(b->cmp.qi).min_rsv;
    return fbf_bf_due_first(&b->due, s, b->live_rsv);
}

/* A burst of arrivals leaves its scratch as large as the burst; what is
 * held between decisions should be the queue, not the largest message
 * ever received. */
static void shrink_scratch(fbf_bf_conservative *b)
{
    if (b->sorted_cap > b->scratch_keep) {
        free(b->sorted);
        b->sorted = NULL;
        b->sorted_cap = 0;
        b->scratch_frees++;
    }
    fbf_hvec *v[] = {&b->arrivals, &b->tmp}; /* both dead between passes */
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i]->cap > b->scratch_keep) {
            fbf_hvec_fini(v[i]);
            b->scratch_frees++;
        }
}

static bool is_zero_walltime(const void *ctx, const fbf_job *j) { return j->walltime == 0; }

static fbf_start_reason reason_for(fbf_sched *s, fbf_job_h h, bool placed_before)
{
    if (placed_before)
        return FBF_START_RESERVATION;
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    return fbf_sched_iter_next(s, &it) == h ? FBF_START_HEAD : FBF_START_BACKFILLED;
}

/*
 * D10's repair, under predict (plain path only): running jobs that
 * outlived their estimate now hold their resources longer, so every
 * reservation that has passed or no longer fits, in queue order, goes to
 * its earliest fit, later if need be.
 */
static int repair(fbf_bf_conservative *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    fbf_sched_iter it;
    fbf_sched_iter_init(s, &it);
    for (fbf_job_h h; (h = fbf_sched_iter_next(s, &it)) != FBF_JOB_NONE;) {
        const fbf_job *j = fbf_sched_job(s, h);
        double rsv = j->rsv;
        if (!(j->walltime > 0) || isnan(rsv))
            continue;
        if (fbf_policy_release(b->p, rsv, j) < 0)
            return fbf_errorf(err, -EPROTO, "conservative: reservation of job %s lost", j->id);
        double t = rsv;
        if (rsv < now || fbf_profile_min_free(b->p, rsv, j->walltime) < (int64_t)j->res)
            t = fbf_profile_earliest(b->p, now, j->res, j->walltime);
        if (fbf_policy_hold(b->p, t, j) < 0 || (t != rsv && fbf_bf_due_note(due_of(b), t, h) < 0))
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        fbf_sched_set_rsv(s, h, t);
    }
    return 0;
}

int fbf_bf_conservative_decide(fbf_bf_conservative *b, fbf_sched *s, fbf_error *err)
{
    double now = fbf_sched_now(s);
    int rc;
    if (fbf_sched_estimate(s) == FBF_ESTIMATE_PREDICT && (rc = repair(b, s, err)) < 0)
        return rc;
    if (fbf_sched_any_ended(s) && /* (a) */
        (rc = fbf_bf_compress(&b->cmp, due_of(b), b->fast ? &b->search : NULL, s, err)) < 0)
        return rc;

    /* (b) new arrivals, in queue order; walltime 0 never holds one. */
    uint64_t first_new_seq = UINT64_MAX;
    for (size_t i = 0; i < b->arrivals.n; i++) {
        uint64_t q = fbf_sched_job(s, b->arrivals.v[i])->seq;
        first_new_seq = q < first_new_seq ? q : first_new_seq;
    }
    if (sort_queue_order(b, s, &b->arrivals) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    if (b->fast && b->arrivals.n >= b->corner_min_batch)
        fbf_bf_batch_begin(&b->search); /* false: no corners, same answers */
    for (size_t i = 0; i < b->arrivals.n; i++) {
        fbf_job_h h = b->arrivals.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        if (j->state != FBF_JOB_WAITING)
            continue;
        if (j->walltime == 0) {
            b->zero_waiting++;
            continue;
        }
        if (place(b, s, h) < 0) {
            fbf_bf_batch_end(&b->search);
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        }
        b->live_rsv++;
    }
    fbf_bf_batch_end(&b->search);

    /* (c) due reservations, in queue order. */
    if (collect_due(b, s, now) < 0)
        return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
    for (size_t i = 0; i < b->tmp.n; i++) {
        fbf_job_h h = b->tmp.v[i];
        const fbf_job *j = fbf_sched_job(s, h);
        double rsv = j->rsv;
        if (j->res > fbf_sched_free(s)) {
            /* Only when a running job outlived its walltime estimate: wait
             * for its completion, which compresses this reservation. */
            if (fbf_bf_due_note(due_of(b), rsv, h) < 0)
                return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
            continue;
        }
        /* seq is arrival order: this message's arrivals come last. */
        bool placed_before = b->arrivals.n == 0 || j->seq < first_new_seq;
        fbf_policy_release(b->p, rsv, j);
        if (b->fast)
            fbf_bf_index_remove(&b->cmp, s, h);
        if ((rc = fbf_bf_start(NULL, b->p, s, h, reason_for(s, h, placed_before), err)) < 0)
            return rc;
        b->live_rsv--;
    }
    b->tmp.n = 0;
    if (b->zero_waiting > 0) {
        if (fbf_sched_scan(s, is_zero_walltime, NULL, &b->tmp) < 0)
            return fbf_errorf(err, -ENOMEM, "conservative: out of memory");
        for (size_t i = 0; i < b->tmp.n; i++) {
            fbf_job_h h = b->tmp.v[i];
            if (fbf_sched_job(s, h)->res > fbf_sched_free(s))
                continue;
            if ((rc = fbf_bf_start(NULL, b->p, s, h, reason_for(s, h, false), err)) < 0)
                return rc;
            b->zero_waiting--;
        }
    }
    b->arrivals.n = 0;
    shrink_scratch(b);

    /* (d) make sure something wakes us by the earliest reservation. */
    double x = earliest_rsv(b, s);
    /* x <= now only behind a job that outlived its estimate: its
     * completion will wake us, and a call in the past is invalid. */
    if (x < INFINITY && x > now && !(fbf_sched_min_running_end(s) <= x))
        fbf_sched_call_me_later(s, x);
    return 0;
}

double fbf_bf_conservative_estimate(fbf_bf_conservative *b, fbf_sched *s, uint32_t res,
                                    double walltime)
{
    double now = fbf_sched_now(s);
    return b->fast ? fbf_bf_earliest(&b->search, b->p, now, res, walltime)
                   : fbf_profile_earliest(b->p, now, res, walltime);
}

int fbf_bf_conservative_init(fbf_bf_conservative *c, fbf_profile *p, bool fast,
                             const fbf_order_ops *qorder, const fbf_backfill_tuning *t)
{
    *c = (fbf_bf_conservative){.p = p,
                               .fast = fast,
                               .corner_min_batch = t->corner_min_batch,
                               .scratch_keep = t->scratch_keep,
                               .cmp = {.p = p,
                                       .fast = fast,
                                       .runs_share = t->runs_share,
                                       .runs_cells_from = t->runs_cells_from}};
    if (fast && !(c->cmp.qi = fbf_qindex_create_ordered(FBF_QINDEX_RSV, qorder)))
        return -ENOMEM;
    return 0;
}

void fbf_bf_conservative_fini(fbf_bf_conservative *c)
{
    fbf_bf_compression_fini(&c->cmp);
    fbf_bf_due_fini(&c->due);
    fbf_bf_search_fini(&c->search);
    free(c->sorted);
    fbf_hvec_fini(&c->arrivals);
    fbf_hvec_fini(&c->tmp);
}

int fbf_bf_conservative_submitted(fbf_bf_conservative *c, fbf_job_h h)
{
    return fbf_hvec_push(&c->arrivals, h);
}

int fbf_bf_conservative_released(fbf_bf_conservative *c, double now, double a, double b)
{
    if (!c->fast)
        return 0; /* the plain loops need no record */
    if (fbf_bf_released(&c->cmp, now, a, b) < 0)
        return -ENOMEM;
    a = a > now ? a : now;
    if (b > a)
        fbf_bf_search_release(&c->search, a, b);
    return 0;
}

/* A waiting job given up (max_wait): its reservation, if it held one, is
 * released like a completion's range. */
int fbf_bf_conservative_withdrawn(fbf_bf_conservative *c, fbf_sched *s, fbf_job_h h)
{
    const fbf_job *j = fbf_sched_job(s, h);
    if (j->walltime == 0) {
        bool counted = true; /* unless still among this message's arrivals */
        for (size_t i = 0; i < c->arrivals.n && counted; i++)
            counted = c->arrivals.v[i] != h;
        if (counted && c->zero_waiting > 0)
            c->zero_waiting--;
        return 0;
    }
    if (isnan(j->rsv))
        return 0; /* an arrival not placed yet */
    if (c->fast && fbf_qindex_contains(c->cmp.qi, h))
        fbf_bf_index_remove(&c->cmp, s, h);
    int rc = fbf_policy_release(c->p, j->rsv, j);
    if (rc < 0)
        return rc;
    c->live_rsv--;
    return fbf_bf_conservative_released(c, fbf_sched_now(s), j->rsv, j->rsv + j->walltime);
}

/* A waiting job's keys change (D9): qi lets it go and takes it back; its
 * reservation stays. */
int fbf_bf_conservative_rekeyed(fbf_bf_conservative *c, fbf_sched *s, fbf_job_h h, bool done)
{
    const fbf_job *j = fbf_sched_job(s, h);
    if (!c->fast)
        return 0;
    if (!done)
        fbf_bf_index_remove(&c->cmp, s, h);
    else if (!isnan(j->rsv) && j->walltime > 0 && fbf_bf_index_add(&c->cmp, s, h) < 0)
        return -ENOMEM;
    return 0;
}
