/*
 * flux_table: what fastbf's RFC 27 service knows of each Flux job, by
 * its 64-bit id and by its engine handle.
 *
 * A job's protocol state follows RFC 27's requests and fastbf's answers:
 *
 *   NEW        sched.alloc received at this instant, not yet applied
 *   WAITING    alloc pending, the job in the engine's queue
 *   WITHDRAWN  alloc answered CANCEL (sched.cancel); a later alloc may
 *              send it again
 *   HOLDING    alloc answered SUCCESS (or the job came in hello): it holds
 *              cores until its sched.free
 *   FREEING    sched.free received at this instant, its response due
 *   DONE       freed
 *   DENIED     alloc answered DENY
 *
 * Ownership: the table owns its records; a record's address changes when
 * the table grows: hold indices (fbf_flux_table_find), not pointers,
 * across an add.
 *
 * Errors: -ENOMEM.
 */
#ifndef FBF_FLUX_TABLE_H
#define FBF_FLUX_TABLE_H

#include <stdint.h>

#include "engine/engine.h"

enum {
    FBF_FJ_NEW = 1,
    FBF_FJ_WAITING,
    FBF_FJ_WITHDRAWN,
    FBF_FJ_HOLDING,
    FBF_FJ_FREEING,
    FBF_FJ_DONE,
    FBF_FJ_DENIED,
};

#define FBF_FJ_NONE UINT32_MAX

typedef struct fbf_flux_job {
    uint64_t id;
    fbf_job_h h;      /* the engine's, FBF_JOB_NONE before the job reaches it */
    uint8_t st;       /* FBF_FJ_* */
    uint8_t reason;   /* sched.reason_pending announced (0: none) */
    uint8_t cancel;   /* sched.cancel received at this instant */
    uint32_t priority, userid;
    double t_submit;  /* NAN: not said */
    double ann;       /* sched.t_estimate announced, NAN: none */
    double duration;  /* the jobspec's, for R's expiration; 0: none */
    uint64_t touched; /* the instant the pass last set its reservation */
    uint64_t seen;    /* the instant its annotations were last looked at */
    uint32_t nnodes, ntasks; /* the jobspec's, for the status interface */
} fbf_flux_job;

typedef struct fbf_flux_table {
    fbf_flux_job *v;
    uint32_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 empty */
    uint32_t nslots; /* a power of two */
    uint32_t *by_h;  /* engine handle -> index */
    uint32_t nby_h;
} fbf_flux_table;

void fbf_flux_table_init(fbf_flux_table *t);
void fbf_flux_table_fini(fbf_flux_table *t);

/* The index of id's record, or FBF_FJ_NONE. */
uint32_t fbf_flux_table_find(const fbf_flux_table *t, uint64_t id);
/* A new record for id (unknown so far), zeroed but id, h (none), ann and
 * t_submit (NAN); its index in *out. */
int fbf_flux_table_add(fbf_flux_table *t, uint64_t id, uint32_t *out);
/* Links engine handle h to record i. */
int fbf_flux_table_link(fbf_flux_table *t, uint32_t i, fbf_job_h h);
/* The record of engine handle h, or FBF_FJ_NONE. */
uint32_t fbf_flux_table_of(const fbf_flux_table *t, fbf_job_h h);

#endif
