/*
 * flux_job: a Flux job's data as Flux keeps it in its key-value store:
 * RFC 16's key names, the jobspec (RFC 14, version 1 as RFC 25 restricts
 * it) and R (RFC 20, version 1), with RFC 22's id sets.
 *
 * Keys: job.<id in dothex>.<name>, the 64-bit id as four groups of four
 * hex digits ("job.0000.0004.b200.0000.jobspec", "....R").
 *
 * Resources: fastbf's resource is a core; the platform is nranks ranks
 * of cpr cores each, core c of rank r being resource r * cpr + c.
 *
 * Jobspec (read by fastbf at alloc, written by the job-manager simulator):
 *   {"version": 1,
 *    "resources": [{"type": "node", "count": N, "with": [SLOT]}] or [SLOT],
 *      SLOT = {"type": "slot", "count": S, "label": L,
 *              "with": [{"type": "core", "count": C}, {"type": "gpu", ...}?]},
 *    "tasks": [{"command": [...], "slot": L, "count": {"per_slot": K} or {"total": T}}],
 *    "attributes": {"system": {"duration": D, ...}, ...}}
 *   Counts are integers >= 1 (version 1 has no ranges); the job asks for
 *   N x S x C cores (S x C without a node level: fastbf places cores, not
 *   nodes, so a node level counts toward the total only); duration is a
 *   number >= 0 of seconds, 0 or absent for none (RFC 14). Unknown
 *   members are ignored where RFC 14 allows them (attributes, a
 *   resource's "exclusive", "id", "unit"); another resource type, a
 *   missing member or a wrong type is an error naming its path.
 *
 * R (written by fastbf before alloc's SUCCESS, read back after a restart
 * and by the simulator):
 *   {"version": 1, "execution": {"R_lite": [{"rank": "0-1",
 *    "children": {"core": "0-3"}}, ...], "starttime": T, "expiration": E}}
 *   R_lite groups the ranks that hold the same cores; expiration is
 *   starttime + walltime, 0 when the job has none.
 *
 * Ownership: readers fill the caller's structures; sets are the caller's
 * (initialised) and replaced. Writers append to a jbuf.
 *
 * Errors: -EPROTO with one line naming the member's path
 * ("resources[0].with[0].count: expected an integer >= 1, got 0"),
 * -ENOMEM.
 */
#ifndef FBF_FLUX_JOB_H
#define FBF_FLUX_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/jbuf.h"

/* "0000.0004.b200.0000" (19 characters and a NUL). */
void fbf_flux_dothex(uint64_t id, char out[20]);
/* "job.<dothex>.<name>" into buf (cap >= 64 is always enough for RFC
 * 27's names); returns its length. */
size_t fbf_flux_key(char *buf, size_t cap, uint64_t id, const char *name);

/* RFC 22: "0-3,7" (ascending, maximal ranges), and its reading: ids and
 * ranges separated by commas, optionally in brackets, below 2^31. */
void fbf_flux_idset_put(fbf_jbuf *b, const fbf_idset *s);
int fbf_flux_idset_parse(fbf_idset *s, const char *str, fbf_error *err);

typedef struct fbf_flux_jobspec {
    int64_t nnodes;  /* 0: no node level */
    int64_t nslots, cores_per_slot, gpus_per_slot;
    int64_t ncores;  /* the cores asked for in all (saturated at INT64_MAX) */
    int64_t ntasks;
    double duration; /* seconds; 0: none */
} fbf_flux_jobspec;

int fbf_flux_jobspec_read(const cJSON *js, fbf_flux_jobspec *out, fbf_error *err);
/* The simulator's jobspec of a job of ncores one-core tasks, duration
 * seconds (<= 0: none), running `command` (a short word for humans). */
void fbf_flux_jobspec_put(fbf_jbuf *b, int64_t ncores, double duration, const char *command);

/* R of a job on cores (resource numbers, see above), cpr cores a rank. */
void fbf_flux_R_put(fbf_jbuf *b, const fbf_idset *cores, uint32_t cpr, double starttime,
                    double expiration);

typedef struct fbf_flux_R {
    double starttime, expiration; /* 0 when absent */
    uint32_t nnodes;              /* ranks holding cores */
} fbf_flux_R;

/* Reads R into cores (resource numbers) on a platform of nranks x cpr:
 * a rank or core beyond it, a core listed twice, a child other than
 * "core" and an empty R are errors. */
int fbf_flux_R_read(const cJSON *R, uint32_t nranks, uint32_t cpr, fbf_idset *cores,
                    fbf_flux_R *out, fbf_error *err);

/* "rank[0-1]/core[0-3]", as Flux's sched-simple says it, into a jbuf. */
void fbf_flux_summary_put(fbf_jbuf *b, const fbf_idset *cores, uint32_t cpr);

#endif
