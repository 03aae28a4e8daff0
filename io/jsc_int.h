/*
 * jsc_int: the job status and control state shared by jsc.c (the
 * producer and the exchange), jsc_mirror.c (the control thread's JCBs)
 * and jsc_server.c (its sockets). Not part of the public API.
 *
 * Records, each appended to a byte buffer: u8 kind, u16 id length, the
 * id's bytes, then by kind: QUEUED i64 res, f64 walltime, f64 subtime;
 * DESCRIBED u32 nnodes, u32 ntasks; STARTED, ADOPTED u32 length and the
 * allocation as an interval set ("0-3 8"); ESTIMATE f64 t; ANSWER (no
 * id) u64 token, i32 rc, u16 length and the text; WALLTIME f64; the
 * others nothing.
 */
#ifndef FBF_JSC_INT_H
#define FBF_JSC_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "io/jbuf.h"
#include "io/jsc.h"

enum {
    REC_QUEUED = 1,
    REC_DESCRIBED,
    REC_FAILED,
    REC_STARTED,
    REC_ADOPTED,
    REC_COMPLETED,
    REC_CANCELLED,
    REC_REQUEUED,
    REC_EST_RESET,
    REC_ESTIMATE,
    REC_ANSWER,
    REC_WALLTIME,
};

/* One job as the control thread knows it. */
typedef struct fbf_jcb {
    char *id;
    uint8_t state, ostate;
    bool estimated; /* listed in est_list */
    uint32_t nnodes, ntasks;
    int64_t ncores;
    double walltime, subtime, est;
    char *alloc; /* "0-3 8", NULL before it starts */
    uint64_t seq;
} fbf_jcb;

typedef struct fbf_jsc_mirror {
    fbf_jcb *v;
    size_t n, cap;
    uint32_t *slots; /* open addressing: index + 1, 0 empty */
    size_t nslots;
    uint32_t *est_list; /* jobs given an estimate since the last reset */
    size_t nest, estcap;
    bool flux; /* a started job is allocated (the job manager runs it) */
    uint32_t cpr; /* cores per rank: a Flux job's nodes are its ranks */
} fbf_jsc_mirror;

struct fbf_jsc {
    fbf_jsc_life life;
    uint32_t cpr;
    /* the I/O thread's */
    fbf_jbuf cur;
    uint64_t records;
    /* shared, under mu */
    pthread_mutex_t mu;
    fbf_jbuf pending;
    fbf_jsc_update *updates;
    size_t nupdates, capupdates;
    atomic_bool has_updates;
    int efd; /* eventfd: the control thread's wake-up */
    /* the control thread's */
    fbf_jsc_mirror mirror;
};

/* jsc.c: the control thread asks for an update (copies id). -ENOMEM. */
int fbf_jsc_ask(fbf_jsc *j, fbf_jsc_op op, const char *id, double value, uint64_t token);
/* jsc.c: the records published since the last call, into out (swapped:
 * the caller owns what it gets, and gives an empty buffer back). */
void fbf_jsc_take_records(fbf_jsc *j, fbf_jbuf *out);

/* jsc_mirror.c, control thread only. */
void fbf_jsc_mirror_fini(fbf_jsc_mirror *m);
fbf_jcb *fbf_jsc_mirror_find(const fbf_jsc_mirror *m, const char *id);
/* Applies one record at p (len bytes left); its size, 0 when malformed.
 * A state change is described in *changed (the job; NULL none), an
 * answer in token/rc/text. */
typedef struct fbf_jsc_effect {
    const fbf_jcb *changed;
    bool answer;
    uint64_t token;
    int32_t rc;
    const char *text;
    size_t text_len;
} fbf_jsc_effect;
size_t fbf_jsc_mirror_apply(fbf_jsc_mirror *m, const uint8_t *p, size_t len,
                            fbf_jsc_effect *eff);
/* The JSON of key of a JCB into out ({"key": value}); key "jcb": all of
 * it. -ENOENT unknown key (err says which exist), -EINVAL a key fastbf
 * does not know (rdl, pdesc). */
int fbf_jsc_mirror_key(const fbf_jsc *j, const fbf_jcb *c, const char *key, fbf_jbuf *out,
                       fbf_error *err);
/* A state change's notification: {"jobid": ..., "state-pair": {...}}. */
void fbf_jsc_mirror_notice(const fbf_jsc *j, const fbf_jcb *c, fbf_jbuf *out);
/* {"jobs": [...]}: the waiting jobs, then the running ones, each in
 * submission order. */
void fbf_jsc_mirror_list(const fbf_jsc *j, fbf_jbuf *out);

#endif
