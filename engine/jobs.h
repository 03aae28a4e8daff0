/*
 * jobs: the job store. Maps protocol ids ("w0!17") to compact handles and
 * holds one fixed-size record per job.
 *
 * Records live in chunks that never move, so a handle's record address is
 * stable for the store's lifetime: worker threads may read a record whose
 * handle reached them through a ring while the owner thread appends new
 * jobs. Ids are copied into an append-only arena. The id -> handle map is
 * a Concurrency Kit hash set (ck_hs) of pointers to small key entries.
 *
 * Ownership: fbf_jobs_create() / fbf_jobs_destroy() (NULL accepted).
 * Returned records and strings are borrowed for the store's lifetime.
 * Writers: one thread (the engine's owner). Readers of a record: any
 * thread that got the handle through a synchronising hand-off.
 */
#ifndef FBF_JOBS_H
#define FBF_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/idset.h"

typedef struct fbf_job {
    /* What a walk of the queue reads, first: the records are 96 bytes
     * apart, so their first 32 bytes never straddle a cache line. */
    double subtime;   /* D1's key, with seq */
    /* A job never waits and runs at once, so the fields only a waiting
     * job needs share memory with those of a running one. */
    union {
        double est_end; /* running: start + walltime (INFINITY if none) */
        double qkey;    /* waiting: its key in the queue order (D9) */
    };
    uint64_t seq;     /* arrival order on the protocol; equals the handle */
    fbf_job_h prev, next; /* links in the owning partition's queue */
    /* What the policies plan with: the estimate of D10 (the walltime by
     * default; Batsim still kills at the walltime). < 0: none. */
    double walltime;
    union {
        double start; /* running or done: start time */
        double prio;  /* waiting: its priority (D9's priority order) */
    };
    double rsv;       /* policy's reservation, NAN if none */
    const char *id;
    fbf_idset alloc;  /* when running or done */
    uint32_t res;
    uint8_t state;        /* fbf_job_state */
    uint8_t reason;       /* fbf_start_reason */
    uint8_t kill_sent;    /* a KILL decision went out for it */
    uint8_t hold;         /* a pseudo-job holding a machine that is not ON */
    uint16_t part;        /* partition (worker) owning it while waiting */
} fbf_job;

typedef struct fbf_jobs fbf_jobs;

fbf_jobs *fbf_jobs_create(void);
void fbf_jobs_destroy(fbf_jobs *js);

/* Adds a job with the given id; the record is zeroed but for id, seq
 * (= arrival order = the handle), rsv (NAN) and links (FBF_JOB_NONE).
 * -EEXIST if the id is known, -ENOMEM, -E2BIG past 2^32 - 2 jobs. */
int fbf_jobs_add(fbf_jobs *js, const char *id, fbf_job_h *out);

/* FBF_JOB_NONE if unknown. */
fbf_job_h fbf_jobs_find(const fbf_jobs *js, const char *id);

size_t fbf_jobs_count(const fbf_jobs *js);

/* The record of a valid handle (stable address). */
fbf_job *fbf_jobs_get(const fbf_jobs *js, fbf_job_h h);

/* Queue order (D9): qkey, then D1 (subtime, then arrival). Under the
 * default order qkey is the subtime. */
static inline int fbf_job_key_cmp(const fbf_job *a, const fbf_job *b)
{
    if (a->qkey < b->qkey)
        return -1;
    if (a->qkey > b->qkey)
        return 1;
    if (a->subtime < b->subtime)
        return -1;
    if (a->subtime > b->subtime)
        return 1;
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

#endif
