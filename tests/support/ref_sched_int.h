/*
 * ref_sched_int: the reference's state, shared by its event loop
 * (ref_sched.c) and its policies (ref_policies.c). Tests only.
 */
#ifndef FBF_TEST_REF_SCHED_INT_H
#define FBF_TEST_REF_SCHED_INT_H

#include "support/ref_sched.h"

enum { PENDING, WAITING, RUNNING, DONE, REJECTED };

typedef struct rjob {
    int status;
    uint64_t seq;   /* arrival order (D1 tie-break) */
    double rsv;     /* conservative reservation, NAN if none */
    double start;   /* when running */
    double est;     /* D10's estimate, INFINITY for none */
    double limit;   /* the walltime, INFINITY for none */
    double est_end; /* start + est, INFINITY if none (D4, D10) */
    double end;     /* start + runtime: the actual end */
} rjob;

typedef struct ruser {
    double last[2]; /* run times, the latest first */
    int n;
} ruser;

typedef struct rstate {
    ref_options opt;
    const ref_job *in;
    rjob *j;
    size_t n;
    const uint32_t *ids;
    uint32_t nb;
    long owner[REF_MAX_RES]; /* job holding resource ids[k], or -1 */
    size_t *queue, qn;       /* waiting jobs in D1 order */
    double now;
    bool any_ended;
    ruser *users;
    size_t nusers;
    ref_trace *tr;
    ref_result *out;
    char *err;
    size_t errlen;
    int failed;
} rstate;

void ref_fail(rstate *s, const char *fmt, ...);
uint32_t ref_nb_free(const rstate *s);
/* Starts waiting job i now (D3). */
void ref_start(rstate *s, size_t i);
/* One scheduling pass under s->opt. */
void ref_pass(rstate *s);

#endif
