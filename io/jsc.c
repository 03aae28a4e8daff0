/*
 * jsc: the producer half and the exchange between the I/O thread and the
 * control thread (see jsc.h's DESIGN).
 */
#include "io/jsc.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "io/jsc_int.h"

static const char *const names[] = {
    "null",    "reserved", "submitted", "pending",   "schedreq", "allocated", "runrequest",
    "starting", "stopped", "running",   "cancelled", "complete", "reaped",    "failed",
    "for_rent",
};

const char *fbf_jsc_state_name(int state)
{
    return state >= 0 && state <= FBF_J_FOR_RENT ? names[state] : "?";
}

fbf_jsc *fbf_jsc_create(fbf_jsc_life life, uint32_t cores_per_rank, fbf_error *err)
{
    fbf_jsc *j = calloc(1, sizeof *j);
    if (!j) {
        fbf_errorf(err, -ENOMEM, "out of memory");
        return NULL;
    }
    j->life = life;
    j->mirror.flux = life == FBF_JSC_FLUX;
    j->cpr = j->mirror.cpr = cores_per_rank ? cores_per_rank : 1;
    j->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (j->efd < 0) {
        fbf_errorf(err, -errno, "job status and control: eventfd: %s", strerror(errno));
        free(j);
        return NULL;
    }
    pthread_mutex_init(&j->mu, NULL);
    atomic_init(&j->has_updates, false);
    return j;
}

void fbf_jsc_destroy(fbf_jsc *j)
{
    if (!j)
        return;
    fbf_jbuf_fini(&j->cur);
    fbf_jbuf_fini(&j->pending);
    fbf_jsc_updates_free(j->updates, j->nupdates);
    fbf_jsc_mirror_fini(&j->mirror);
    close(j->efd);
    pthread_mutex_destroy(&j->mu);
    free(j);
}

fbf_jsc_life fbf_jsc_lifecycle(const fbf_jsc *j) { return j->life; }
uint64_t fbf_jsc_records(const fbf_jsc *j) { return j->records; }

/* ---- records ---- */

static void head(fbf_jsc *j, uint8_t kind, const char *id)
{
    size_t n = id ? strlen(id) : 0;
    uint16_t len = n > UINT16_MAX ? UINT16_MAX : (uint16_t)n;
    fbf_jbuf_raw(&j->cur, (const char *)&kind, 1);
    fbf_jbuf_raw(&j->cur, (const char *)&len, 2);
    if (len)
        fbf_jbuf_raw(&j->cur, id, len);
    j->records++;
}

#define PUT(j, v) fbf_jbuf_raw(&(j)->cur, (const char *)&(v), sizeof(v))

void fbf_jsc_queued(fbf_jsc *j, const char *id, int64_t res, double walltime, double subtime)
{
    head(j, REC_QUEUED, id);
    PUT(j, res);
    PUT(j, walltime);
    PUT(j, subtime);
}

void fbf_jsc_described(fbf_jsc *j, const char *id, uint32_t nnodes, uint32_t ntasks)
{
    head(j, REC_DESCRIBED, id);
    PUT(j, nnodes);
    PUT(j, ntasks);
}

static void alloc_record(fbf_jsc *j, uint8_t kind, const char *id, const fbf_idset *alloc)
{
    head(j, kind, id);
    size_t at = j->cur.len;
    uint32_t len = 0;
    PUT(j, len);
    size_t need = fbf_idset_format(alloc, NULL, 0);
    if (j->cur.oom || !fbf_jbuf_reserve(&j->cur, need + 1))
        return;
    fbf_idset_format(alloc, j->cur.p + j->cur.len, need + 1);
    j->cur.len += need;
    len = (uint32_t)need;
    memcpy(j->cur.p + at, &len, sizeof len);
}

void fbf_jsc_started(fbf_jsc *j, const char *id, const fbf_idset *alloc)
{
    alloc_record(j, REC_STARTED, id, alloc);
}

void fbf_jsc_adopted(fbf_jsc *j, const char *id, const fbf_idset *alloc)
{
    alloc_record(j, REC_ADOPTED, id, alloc);
}

void fbf_jsc_failed(fbf_jsc *j, const char *id) { head(j, REC_FAILED, id); }
void fbf_jsc_completed(fbf_jsc *j, const char *id) { head(j, REC_COMPLETED, id); }
void fbf_jsc_cancelled(fbf_jsc *j, const char *id) { head(j, REC_CANCELLED, id); }
void fbf_jsc_requeued(fbf_jsc *j, const char *id) { head(j, REC_REQUEUED, id); }
void fbf_jsc_estimates_reset(fbf_jsc *j) { head(j, REC_EST_RESET, NULL); }

void fbf_jsc_walltime(fbf_jsc *j, const char *id, double walltime)
{
    head(j, REC_WALLTIME, id);
    PUT(j, walltime);
}

void fbf_jsc_estimate(fbf_jsc *j, const char *id, double t)
{
    head(j, REC_ESTIMATE, id);
    PUT(j, t);
}

void fbf_jsc_answer(fbf_jsc *j, uint64_t token, int rc, const char *why)
{
    head(j, REC_ANSWER, NULL);
    int32_t r = rc;
    size_t n = why ? strlen(why) : 0;
    uint16_t len = n > 1024 ? 1024 : (uint16_t)n;
    PUT(j, token);
    PUT(j, r);
    PUT(j, len);
    if (len)
        fbf_jbuf_raw(&j->cur, why, len);
}

void fbf_jsc_publish(fbf_jsc *j)
{
    if (j->cur.len == 0)
        return;
    pthread_mutex_lock(&j->mu);
    if (j->pending.len == 0 && !j->cur.oom) {
        fbf_jbuf t = j->pending; /* swap: no copy in the common case */
        j->pending = j->cur;
        j->cur = t;
    } else {
        fbf_jbuf_raw(&j->pending, j->cur.p, j->cur.len);
    }
    pthread_mutex_unlock(&j->mu);
    fbf_jbuf_reset(&j->cur);
    uint64_t one = 1;
    ssize_t w = write(j->efd, &one, sizeof one); /* only fails when the counter is full */
    (void)w;
}

void fbf_jsc_take_records(fbf_jsc *j, fbf_jbuf *out)
{
    fbf_jbuf_reset(out);
    pthread_mutex_lock(&j->mu);
    fbf_jbuf t = j->pending;
    j->pending = *out;
    *out = t;
    pthread_mutex_unlock(&j->mu);
}

/* ---- updates ---- */

int fbf_jsc_ask(fbf_jsc *j, fbf_jsc_op op, const char *id, double value, uint64_t token)
{
    char *copy = strdup(id);
    if (!copy)
        return -ENOMEM;
    pthread_mutex_lock(&j->mu);
    int rc = 0;
    if (j->nupdates == j->capupdates) {
        size_t cap = j->capupdates ? 2 * j->capupdates : 8;
        fbf_jsc_update *u = realloc(j->updates, cap * sizeof *u);
        if (u) {
            j->updates = u;
            j->capupdates = cap;
        } else {
            rc = -ENOMEM;
        }
    }
    if (rc == 0) {
        j->updates[j->nupdates++] =
            (fbf_jsc_update){.op = op, .id = copy, .value = value, .token = token};
        atomic_store_explicit(&j->has_updates, true, memory_order_relaxed);
    }
    pthread_mutex_unlock(&j->mu);
    if (rc < 0)
        free(copy);
    return rc;
}

bool fbf_jsc_updates_waiting(fbf_jsc *j)
{
    pthread_mutex_lock(&j->mu);
    bool w = j->nupdates > 0;
    pthread_mutex_unlock(&j->mu);
    return w;
}

size_t fbf_jsc_take_updates(fbf_jsc *j, fbf_jsc_update **out)
{
    *out = NULL;
    /* Relaxed: an update that lands just after the check waits for the
     * next decision point; the mutex orders everything it carries. */
    if (!atomic_load_explicit(&j->has_updates, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&j->mu);
    size_t n = j->nupdates;
    *out = j->updates;
    j->updates = NULL;
    j->nupdates = j->capupdates = 0;
    atomic_store_explicit(&j->has_updates, false, memory_order_relaxed);
    pthread_mutex_unlock(&j->mu);
    return n;
}

void fbf_jsc_updates_free(fbf_jsc_update *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(u[i].id);
    free(u);
}
