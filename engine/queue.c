/*
 * queue: partitions of the waiting queue and their merged order (see
 * queue.h). Invariants: in a LIST (and an UNSORTED one once sorted), along
 * next links, fbf_job_key_cmp is strictly increasing; head/tail are
 * FBF_JOB_NONE iff count == 0. In a TREE, prev/next are the left and right
 * children, the in-order walk is strictly increasing, every node's treap
 * priority (tprio) is above its children's, and tail is the first job.
 */
#include "engine/queue.h"

#include <errno.h>
#include <stdlib.h>

#define NONE FBF_JOB_NONE

void fbf_partition_init_mode(fbf_partition *p, fbf_queue_mode mode)
{
    p->head = p->tail = NONE;
    p->count = 0;
    p->mode = mode;
}

void fbf_partition_init(fbf_partition *p) { fbf_partition_init_mode(p, FBF_QUEUE_LIST); }

/* ---- the treap (FBF_QUEUE_TREE) ---- */

/* A node's priority: a hash of its handle, so that nothing is stored and
 * the tree's shape does not follow the keys. */
static inline uint64_t tprio(fbf_job_h h)
{
    uint64_t z = (uint64_t)h * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline bool above(fbf_job_h a, fbf_job_h b)
{
    uint64_t x = tprio(a), y = tprio(b);
    return x > y || (x == y && a > b);
}

/* Splits tree t into the keys before x (*l) and after it (*r). */
static void tsplit(fbf_jobs *js, fbf_job_h t, const fbf_job *x, fbf_job_h *l, fbf_job_h *r)
{
    if (t == NONE) {
        *l = *r = NONE;
        return;
    }
    fbf_job *tj = fbf_jobs_get(js, t);
    if (fbf_job_key_cmp(tj, x) < 0) {
        tsplit(js, tj->next, x, &tj->next, r);
        *l = t;
    } else {
        tsplit(js, tj->prev, x, l, &tj->prev);
        *r = t;
    }
}

static fbf_job_h tinsert(fbf_jobs *js, fbf_job_h t, fbf_job_h h, fbf_job *j)
{
    if (t == NONE)
        return h;
    if (above(h, t)) {
        tsplit(js, t, j, &j->prev, &j->next);
        return h;
    }
    fbf_job *tj = fbf_jobs_get(js, t);
    if (fbf_job_key_cmp(j, tj) < 0)
        tj->prev = tinsert(js, tj->prev, h, j);
    else
        tj->next = tinsert(js, tj->next, h, j);
    return t;
}

/* Joins a and b, every key of a before every key of b. */
static fbf_job_h tmerge(fbf_jobs *js, fbf_job_h a, fbf_job_h b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    if (above(a, b)) {
        fbf_job *aj = fbf_jobs_get(js, a);
        aj->next = tmerge(js, aj->next, b);
        return a;
    }
    fbf_job *bj = fbf_jobs_get(js, b);
    bj->prev = tmerge(js, a, bj->prev);
    return b;
}

static fbf_job_h tremove(fbf_jobs *js, fbf_job_h t, fbf_job_h h, const fbf_job *j)
{
    if (t == h)
        return tmerge(js, j->prev, j->next);
    fbf_job *tj = fbf_jobs_get(js, t);
    if (fbf_job_key_cmp(j, tj) < 0)
        tj->prev = tremove(js, tj->prev, h, j);
    else
        tj->next = tremove(js, tj->next, h, j);
    return t;
}

static bool twalk(fbf_jobs *js, fbf_job_h t,
                  bool (*fn)(void *ctx, fbf_job_h h, const fbf_job *j), void *ctx)
{
    while (t != NONE) {
        const fbf_job *tj = fbf_jobs_get(js, t);
        if (!twalk(js, tj->prev, fn, ctx) || !fn(ctx, t, tj))
            return false;
        t = tj->next;
    }
    return true;
}

/* ---- partitions ---- */

void fbf_partition_insert(fbf_partition *p, fbf_jobs *js, fbf_job_h h)
{
    fbf_job *j = fbf_jobs_get(js, h);
    p->count++;
    if (p->mode == FBF_QUEUE_TREE) {
        j->prev = j->next = NONE;
        p->head = tinsert(js, p->head, h, j);
        if (p->tail == NONE || fbf_job_key_cmp(j, fbf_jobs_get(js, p->tail)) < 0)
            p->tail = h;
        return;
    }
    fbf_job_h after = p->tail;
    if (p->mode == FBF_QUEUE_LIST)
        while (after != NONE && fbf_job_key_cmp(fbf_jobs_get(js, after), j) > 0)
            after = fbf_jobs_get(js, after)->prev;
    j->prev = after;
    if (after == NONE) {
        j->next = p->head;
        p->head = h;
    } else {
        fbf_job *a = fbf_jobs_get(js, after);
        j->next = a->next;
        a->next = h;
    }
    if (j->next == NONE)
        p->tail = h;
    else
        fbf_jobs_get(js, j->next)->prev = h;
}

void fbf_partition_unlink(fbf_partition *p, fbf_jobs *js, fbf_job_h h)
{
    fbf_job *j = fbf_jobs_get(js, h);
    p->count--;
    if (p->mode == FBF_QUEUE_TREE) {
        p->head = tremove(js, p->head, h, j);
        j->prev = j->next = NONE;
        if (p->tail == h) {
            p->tail = p->head;
            for (fbf_job_h l; p->tail != NONE && (l = fbf_jobs_get(js, p->tail)->prev) != NONE;)
                p->tail = l;
        }
        return;
    }
    if (j->prev == NONE)
        p->head = j->next;
    else
        fbf_jobs_get(js, j->prev)->next = j->next;
    if (j->next == NONE)
        p->tail = j->prev;
    else
        fbf_jobs_get(js, j->next)->prev = j->prev;
    j->prev = j->next = NONE;
}

fbf_job_h fbf_partition_first(const fbf_partition *p, fbf_jobs *js)
{
    return p->mode == FBF_QUEUE_TREE ? p->tail : p->head;
}

static int place_cmp(const fbf_queue_place *k, const fbf_job *j)
{
    if (k->qkey != j->qkey)
        return k->qkey < j->qkey ? -1 : 1;
    if (k->subtime != j->subtime)
        return k->subtime < j->subtime ? -1 : 1;
    return k->seq < j->seq ? -1 : (k->seq > j->seq);
}

/* The first job of tree p after place k. */
static fbf_job_h tree_after(const fbf_partition *p, fbf_jobs *js, const fbf_queue_place *k)
{
    fbf_job_h succ = NONE;
    for (fbf_job_h t = p->head; t != NONE;) {
        const fbf_job *tj = fbf_jobs_get(js, t);
        if (place_cmp(k, tj) < 0) {
            succ = t;
            t = tj->prev;
        } else {
            t = tj->next;
        }
    }
    return succ;
}

static fbf_queue_place place_of(const fbf_job *j)
{
    return (fbf_queue_place){j->qkey, j->subtime, j->seq, false};
}

fbf_job_h fbf_partition_next(const fbf_partition *p, fbf_jobs *js, fbf_job_h h)
{
    const fbf_job *j = fbf_jobs_get(js, h);
    if (p->mode != FBF_QUEUE_TREE)
        return j->next;
    fbf_queue_place k = place_of(j);
    return tree_after(p, js, &k);
}

void fbf_partition_foreach(const fbf_partition *p, fbf_jobs *js,
                           bool (*fn)(void *ctx, fbf_job_h h, const fbf_job *j), void *ctx)
{
    if (p->mode == FBF_QUEUE_TREE) {
        twalk(js, p->head, fn, ctx);
        return;
    }
    for (fbf_job_h h = p->head; h != NONE;) {
        const fbf_job *j = fbf_jobs_get(js, h);
        fbf_job_h next = j->next;
        if (!fn(ctx, h, j))
            return;
        h = next;
    }
}

typedef struct sort_item {
    double key, subtime;
    fbf_job_h h; /* a job's seq is its handle (jobs.h) */
} sort_item;

static int sort_cmp(const void *x, const void *y)
{
    const sort_item *a = x, *b = y;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->subtime != b->subtime)
        return a->subtime < b->subtime ? -1 : 1;
    return a->h < b->h ? -1 : (a->h > b->h);
}

int fbf_partition_sort(fbf_partition *p, fbf_jobs *js, double (*key)(const fbf_job *, double),
                       double now)
{
    if (p->count == 0)
        return 0;
    sort_item *v = malloc(p->count * sizeof *v);
    if (!v)
        return -ENOMEM;
    size_t n = 0;
    for (fbf_job_h h = p->head; h != NONE; h = fbf_jobs_get(js, h)->next) {
        const fbf_job *j = fbf_jobs_get(js, h);
        v[n++] = (sort_item){key(j, now), j->subtime, h};
    }
    qsort(v, n, sizeof *v, sort_cmp);
    for (size_t i = 0; i < n; i++) {
        fbf_job *j = fbf_jobs_get(js, v[i].h);
        j->qkey = v[i].key;
        j->prev = i ? v[i - 1].h : NONE;
        j->next = i + 1 < n ? v[i + 1].h : NONE;
    }
    p->head = v[0].h;
    p->tail = v[n - 1].h;
    free(v);
    return 0;
}

/* ---- the merged order ---- */

/* A tree's cursor not looked up yet: its first job, or with it->after the
 * first after a place (the lookup needs the job store, which init does
 * not get). Handles stop below it (jobs.h). */
#define UNSTARTED (FBF_JOB_NONE - 1)

void fbf_queue_iter_init(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                         fbf_job_h *cur)
{
    it->cur = cur;
    it->n = n;
    it->parts = parts;
    it->after = NULL;
    for (unsigned i = 0; i < n; i++)
        cur[i] = parts[i].mode == FBF_QUEUE_TREE && parts[i].head != NONE ? UNSTARTED
                                                                           : parts[i].head;
}

void fbf_queue_iter_init_lazy(fbf_queue_iter *it, const fbf_partition *parts, unsigned n,
                              fbf_job_h *cur, fbf_queue_place *after)
{
    fbf_queue_iter_init(it, parts, n, cur);
    it->after = after;
    for (unsigned i = 0; i < n; i++)
        after[i].pending = false;
}

fbf_job_h fbf_queue_iter_next(fbf_queue_iter *it, fbf_jobs *js)
{
    if (it->n == 1 && it->parts[0].mode != FBF_QUEUE_TREE) {
        /* One partition in list form (one worker): its order is the queue's. */
        fbf_job_h h = it->cur[0] == UNSTARTED ? it->parts[0].head : it->cur[0];
        if (h != NONE)
            it->cur[0] = fbf_jobs_get(js, h)->next;
        else
            it->cur[0] = NONE;
        return h;
    }
    unsigned best = it->n;
    const fbf_job *bj = NULL;
    for (unsigned i = 0; i < it->n; i++) {
        if (it->cur[i] == UNSTARTED)
            it->cur[i] = it->after && it->after[i].pending
                             ? tree_after(&it->parts[i], js, &it->after[i])
                             : fbf_partition_first(&it->parts[i], js);
        if (it->cur[i] == NONE)
            continue;
        const fbf_job *j = fbf_jobs_get(js, it->cur[i]);
        if (!bj || fbf_job_key_cmp(j, bj) < 0) {
            bj = j;
            best = i;
        }
    }
    if (best == it->n)
        return NONE;
    fbf_job_h h = it->cur[best];
    /* advance first: the caller may unlink h (and a started job's record
     * no longer holds its key). In a tree, a walk that may stop here
     * keeps h's place and looks for the next job only if asked. */
    if (it->after && it->parts[best].mode == FBF_QUEUE_TREE) {
        it->after[best] = place_of(bj);
        it->after[best].pending = true;
        it->cur[best] = UNSTARTED;
    } else {
        it->cur[best] = it->parts[best].mode == FBF_QUEUE_TREE
                            ? fbf_partition_next(&it->parts[best], js, h)
                            : bj->next;
    }
    return h;
}

void fbf_queue_merge(fbf_jobs *js, fbf_job_h *const *lists, const size_t *lens, unsigned n,
                     fbf_job_h *out)
{
    size_t pos[256] = {0};
    size_t k = 0;
    for (;;) {
        unsigned best = n;
        const fbf_job *bj = NULL;
        for (unsigned i = 0; i < n; i++) {
            if (pos[i] == lens[i])
                continue;
            const fbf_job *j = fbf_jobs_get(js, lists[i][pos[i]]);
            if (!bj || fbf_job_key_cmp(j, bj) < 0) {
                bj = j;
                best = i;
            }
        }
        if (best == n)
            return;
        out[k++] = lists[best][pos[best]++];
    }
}
