/*
 * extension: a decision-maker of the engine's own beside the policy
 * (energy saving, energy.c; kills and give-ups, deadlines.c), called by
 * engine.c at fixed points and in a fixed order, knowing nothing of what
 * it decides. Every hook is optional and returns 0 or a negative errno
 * with a message in err (may be NULL). Private to engine/.
 */
#ifndef FBF_ENGINE_EXTENSION_H
#define FBF_ENGINE_EXTENSION_H

#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"

typedef struct fbf_extension_ops {
    const char *name;
    int (*create)(fbf_engine *e, fbf_error *err); /* the engine's state is set up */
    void (*destroy)(fbf_engine *e);
    int (*platform_set)(fbf_engine *e, const fbf_idset *compute, fbf_error *err);
    int (*job_started)(fbf_engine *e, fbf_job_h h, fbf_error *err);
    int (*job_ended)(fbf_engine *e, fbf_job_h h, fbf_error *err); /* its resources free */
    /* The message's events are applied; the policy's pass comes next. */
    int (*before_pass)(fbf_engine *e, fbf_error *err);
    /* The pass is made; *wake (NAN: none) is when to be called again. */
    int (*after_pass)(fbf_engine *e, double *wake, fbf_error *err);
    /* Up to 2 machine state changes to decide (SET_STATE), after starts. */
    size_t (*state_changes)(const fbf_engine *e, const fbf_idset **sets, uint32_t *pstates);
} fbf_extension_ops;

/* In the order of their before_pass (after_pass: the reverse). */
extern const fbf_extension_ops fbf_ext_deadlines, fbf_ext_energy;

#endif
