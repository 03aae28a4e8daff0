/*
 * decisions: the typed decisions of one reply, as the session (io/session.h)
 * hands them to a codec, and the list that holds them.
 *
 * Ownership: a list owns its entries and the strings it copied
 * (fbf_decisions_text()); both live until fbf_decisions_reset(). Strings
 * and sets an entry points to otherwise belong to the engine and are valid
 * until its next decision point.
 *
 * Errors: an allocation failure sets `oom` and makes the adds return NULL;
 * the list stays usable and says so once at the end.
 */
#ifndef FBF_DECISIONS_H
#define FBF_DECISIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/idset.h"

typedef enum fbf_out_kind {
    FBF_OUT_REGISTER_PROFILE, /* workload, profile (its name), at: its delay */
    FBF_OUT_REGISTER_JOB,     /* id, profile, res, walltime, at: subtime; described
                               * false: the description is in the store */
    FBF_OUT_REJECT,           /* job */
    FBF_OUT_KILL,             /* job */
    FBF_OUT_EXECUTE,          /* job, machines */
    FBF_OUT_METADATA,         /* job, text */
    FBF_OUT_SET_STATE,        /* machines, pstate */
    FBF_OUT_CALL_ME_LATER,    /* at; rounded: may be written as a JSON library
                               * rounds it (engine deadlines may not) */
    FBF_OUT_NOTIFY,           /* text: registration_finished, continue_registration */
    FBF_OUT_QUERY_ENERGY,
    FBF_OUT_ANSWER_WAIT,      /* id, at: seconds it would wait, -1 never or unknown */
} fbf_out_kind;

typedef struct fbf_out {
    fbf_out_kind kind;
    bool described, rounded;
    uint32_t pstate;
    fbf_job_h job;
    int64_t res;
    double at, walltime;
    const char *id, *text, *profile, *workload;
    const fbf_idset *machines;
} fbf_out;

typedef struct fbf_text_block fbf_text_block;

typedef struct fbf_decisions {
    fbf_out *v;
    size_t n, cap;
    fbf_text_block *texts;
    bool oom;
} fbf_decisions;

void fbf_decisions_init(fbf_decisions *d);
void fbf_decisions_fini(fbf_decisions *d);
void fbf_decisions_reset(fbf_decisions *d);

/* A new entry of that kind, every other member zero (job FBF_JOB_NONE);
 * NULL when out of memory. */
fbf_out *fbf_decisions_add(fbf_decisions *d, fbf_out_kind kind);

/* A copy of the n bytes at s, NUL-terminated, owned by the list; NULL
 * when out of memory. */
const char *fbf_decisions_text(fbf_decisions *d, const char *s, size_t n);

#endif
