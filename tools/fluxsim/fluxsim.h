/*
 * fluxsim: fastbf-fluxsim, a Flux job manager that plays Flux's side of
 * RFC 27 against a scheduler (fastbf --protocol flux, or any other that
 * speaks docs/flux.md's framing), from an SWF or Batsim JSON workload,
 * with a simulated clock. Its modules:
 *
 *   main.c   options, the run, the summary
 *   setup.c  the jobs from the workload, their ids, the seeded events
 *   queue.c  the timed events and the alloc queue
 *   jm.c     the job manager: jobs' states, each instant's requests, the
 *            answers, the clock, recovery after a restart
 *   check.c  every message from the scheduler, checked against RFC 27 as
 *            strictly as flux-core's job manager and stricter (check.c's
 *            header lists what is refused and why)
 *   wire.c   the DEALER socket, RFC 3 frames, the spawned scheduler
 *   out.c    out_jobs.csv and summary.json
 *
 * Time model: instants are the times at which something happens (a
 * submission, a job's end, a cancel or priority change drawn from the
 * seed, a wake the scheduler asked for). At each, the job manager sends
 * its sched.free requests (jobs ended, in start order), sched.cancel,
 * sched.prioritize, then sched.alloc for the jobs in SCHED state in
 * queue order (priority, then submit time, then id) as the concurrency
 * mode allows, then sim.instant {"now": T}; it reads every answer up to
 * the scheduler's answer to sim.instant. In single mode, a SUCCESS that
 * retires the only alloc lets the next one go at once: another instant at
 * the same T. A job started at T runs min(runtime, R's expiration - T).
 *
 * Job ids are FLUID-like: increasing in submission order (subtime, then
 * file order), so that flux-core's queue order is D1's.
 */
#ifndef FBF_FLUXSIM_H
#define FBF_FLUXSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "engine/idset.h"
#include "io/flux_msg.h"
#include "io/jbuf.h"
#include "io/json_exact.h"
#include "io/store.h"
#include "tools/lib/workload.h"
#include "tools/replay/child.h"

/* Exit codes. */
enum { FS_OK = 0, FS_SCHED = 1, FS_USAGE = 2, FS_DEADLOCK = 3 };

/* A job's state, as flux-core's job manager sees it (RFC 21), with the
 * scheduler's side of it. */
enum {
    SJ_FUTURE,     /* not submitted yet */
    SJ_SCHED,      /* SCHED, no alloc sent (queued in the job manager) */
    SJ_ALLOC,      /* SCHED, alloc pending */
    SJ_CANCELING,  /* an exception: sched.cancel sent, CANCEL awaited */
    SJ_RUN,        /* alloc answered SUCCESS: holds cores */
    SJ_CLEANUP,    /* ended: sched.free due or pending */
    SJ_INACTIVE,   /* freed, or canceled before it ran */
    SJ_DENIED,     /* alloc answered DENY */
};

enum { END_NONE, END_DONE, END_WALLTIME, END_CANCELED, END_DENIED };

typedef struct sjob {
    uint64_t id;
    uint32_t wl;  /* index in the workload */
    uint8_t st, end_kind;
    bool free_sent, cancel_asked;
    bool requeue; /* its pending alloc is cancelled to make room (single mode) */
    uint32_t priority;
    uint32_t heap_ver; /* queue entries of older versions are stale */
    double t_submit, runtime, duration;
    int64_t ncores;
    double start, end; /* end: when it ends (RUN) or ended */
    double cancel_at;  /* NAN: never */
    fbf_idset cores;
    cJSON *ann;        /* the annotation dictionary (RFC 27), NULL: empty */
    double last_est;   /* the last sched.t_estimate announced, NAN: none */
    bool est_announced;
    char *note;        /* DENY's note */
} sjob;

typedef struct fs_options {
    const char *workload, *scheduler, *endpoint, *out_dir;
    const char *redis_host;
    int redis_port;
    uint32_t ranks, cores;
    uint64_t seed;
    double cancel_p, prio_p;
    uint32_t base_priority;
    int64_t max_jobs; /* the workload's first jobs only; < 0: all */
    long kill_at;  /* restart the scheduler after this instant's requests; -1: never */
    double timeout_s;
    bool verbose, quiet;
} fs_options;

/* A queue entry: (priority desc, t_submit, id) with the job's version. */
typedef struct qent {
    uint32_t job, ver;
} qent;

/* A timed event: job end, cancel, priority change, wake. */
enum { EV_END, EV_CANCEL, EV_PRIO, EV_WAKE };
typedef struct tev {
    double t;
    uint8_t kind;
    uint64_t seq;
    uint32_t job;
    uint32_t arg; /* EV_PRIO: the new priority; EV_END: 1 when killed at its limit */
} tev;

typedef struct fs_wire fs_wire;

typedef struct fluxsim {
    fs_options o;
    fbf_workload *wl;
    sjob *jobs;
    size_t njobs;
    uint32_t *order; /* submission order */
    size_t next_sub;
    fbf_store *store;
    fs_wire *w;
    fbf_child child;
    bool spawned;
    char endpoint[512];
    char tmpdir[64];

    /* the scheduler */
    bool single;   /* its ready said "single" */
    size_t pending; /* allocs pending */
    size_t frees_pending; /* frees sent, not answered */
    uint32_t last_alloc;  /* the job of the last alloc sent (single mode's pending one) */
    uint64_t rng;

    qent *queue;   /* SCHED jobs without an alloc: a heap */
    size_t nqueue, qcap;
    tev *heap;
    size_t nheap, hcap;
    uint64_t seq;
    double wake_last; /* the last wake asked, to fire each once */

    double now;
    uint64_t instants, messages_in, messages_out;
    fbf_idset busy; /* cores held by RUN and CLEANUP jobs */
    uint32_t next_tag;
    uint64_t start_seq;

    /* the instant's outgoing requests */
    uint32_t *frees, *cancels, *allocs;
    size_t nfrees, ncancels, nallocs, fcap, ccap, acap;
    struct prio_pair {
        uint64_t id;
        uint32_t priority;
    } *prio;
    size_t nprio, pcap;
    uint32_t *succ; /* jobs whose SUCCESS came at this instant: R to read */
    size_t nsucc, scap;
    uint32_t *subs; /* jobs submitted at this instant: jobspecs to write */
    size_t nsubs, subcap;

    /* counts for the summary */
    size_t submitted, started, done, walltime, denied, canceled, restarts;
    size_t annotates, redundant, est_late, est_past, est_jobs, requeued;
    double wall_s;

    fbf_json_exact nums;
    fbf_jbuf buf;
} fluxsim;

/* wire.c */
fs_wire *fs_wire_open(const char *endpoint, fbf_error *err);
void fs_wire_close(fs_wire *w);
/* One message: its PROTO fields, topic, payload (NULL: none; sent with
 * Flux's trailing NUL). */
int fs_wire_send(fluxsim *fs, uint8_t type, uint8_t flags, uint32_t aux1, uint32_t matchtag,
                 const char *topic, const char *payload, size_t len, fbf_error *err);
/* The next message within the timeout, decoded (valid until the next
 * receive): -ETIMEDOUT, -ECHILD (the spawned scheduler exited), -EPROTO
 * (frames RFC 3 does not allow), with one line in err. */
int fs_wire_recv(fluxsim *fs, fbf_flux_msg *m, fbf_error *err);
/* Starts the scheduler (--scheduler) or names the endpoint (--endpoint),
 * and connects. */
int fs_wire_start(fluxsim *fs, fbf_error *err);
/* The spawned scheduler is killed (SIGKILL to its process group), then
 * started again, and a fresh socket connects. */
int fs_wire_restart(fluxsim *fs, fbf_error *err);
void fs_wire_stop(fluxsim *fs);

/* check.c: every message from the scheduler (see its header). Errors
 * are -EPROTO with the rule broken, in one line. */
typedef struct fs_alloc_resp {
    uint64_t id;
    int type;
    const char *note;        /* DENY: NULL when absent */
    const cJSON *annotations; /* NULL when absent */
} fs_alloc_resp;
int fs_check_request(const fbf_flux_msg *m, const char *topic, bool payload, fbf_error *err);
int fs_check_ready(fluxsim *fs, const fbf_flux_msg *m, bool *single, fbf_error *err);
int fs_check_response(const fbf_flux_msg *m, const char *topic, fbf_error *err);
int fs_check_alloc(fluxsim *fs, const fbf_flux_msg *m, cJSON **tree, fs_alloc_resp *r,
                   fbf_error *err);
int fs_check_free(fluxsim *fs, const fbf_flux_msg *m, cJSON **tree, uint64_t *id, fbf_error *err);
int fs_check_instant(fluxsim *fs, const fbf_flux_msg *m, double *wake, fbf_error *err);
/* R of job j, read after its SUCCESS: its cores into j->cores. */
int fs_check_R(fluxsim *fs, sjob *j, const char *text, size_t len, fbf_error *err);
/* Applies an ANNOTATE's or SUCCESS's annotations to j's dictionary as
 * RFC 27 says; *changed tells whether anything changed. */
int fs_annotate(fluxsim *fs, sjob *j, const cJSON *ann, bool *changed, fbf_error *err);

/* setup.c */
int fs_setup(fluxsim *fs, fbf_error *err);
void fs_fini(fluxsim *fs);
sjob *fs_job_by_id(fluxsim *fs, uint64_t id);

/* queue.c: a growable array's room for one more (-ENOMEM); the timed
 * events; the alloc queue (q_head: the first SCHED job in queue order,
 * UINT32_MAX when none; q_push: a job (again) in it, at its current
 * priority); the seeded generator. */
int fs_grow(void **v, size_t *cap, size_t n, size_t sz);
int fs_heap_push(fluxsim *fs, tev e);
tev fs_heap_pop(fluxsim *fs);
bool fs_q_less(const fluxsim *fs, qent a, qent b);
int fs_q_push(fluxsim *fs, uint32_t job);
void fs_q_pop(fluxsim *fs);
uint32_t fs_q_head(fluxsim *fs);
uint32_t fs_rnd(uint64_t *s, uint32_t bound);
double fs_urand(uint64_t *s);

/* jm.c */
int fs_run(fluxsim *fs, fbf_error *err);

/* out.c */
int fs_write_outputs(fluxsim *fs, int status, const char *why, fbf_error *err);
void fs_print_summary(fluxsim *fs, FILE *f, int status, const char *why);

#endif
