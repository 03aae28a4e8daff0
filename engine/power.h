/*
 * power: compute machine states, holds and the energy-saving policy of the
 * engine. No sockets, no JSON.
 *
 * Each compute machine is ON (a computing pstate), SWITCHING_OFF, OFF (the
 * sleep pstate) or SWITCHING_ON. Jobs are only ever allocated ON machines
 * (D3 then picks the lowest-numbered free ON machines).
 *
 * Holds. To the policies a machine that is not ON is *held*: it counts as
 * a running job holding that one resource, from when it was held until
 * its expected end:
 *   - SWITCHING_ON: the time the switch-on was requested + on_delay;
 *   - put to sleep by fastbf with a planned wake: the planned wake time;
 *   - otherwise INFINITY.
 * A hold is an engine-internal pseudo-job: policies see it through
 * fbf_sched_foreach_running() / fbf_sched_min_running_end(), learn of it
 * through the resources_held op and of its end through job_ended (so
 * conservative compresses, D7 a). Every policy's decisions are thus
 * exactly D5-D7 on a platform where each held machine is a running job
 * with that est_end. With every machine ON (the default) nothing changes.
 * A hold whose end is re-planned is ended and held again at once (the
 * machine never becomes free in between).
 *
 * Energy saving (config.saving): after the decision pass, an ON machine
 * free since at least `timeout` (since its last job ended or it became ON)
 * is switched off (one SET request per decision point for all of them)
 * only when nothing waiting could use it before it would be back:
 *   - the queue is empty: hold until INFINITY (woken on demand), or
 *   - every waiting job holds a reservation (conservative, or the
 *     backfilling family with depth covering the queue) and X, the
 *     smallest, satisfies X > now and X - now >= off_delay + on_delay:
 *     the hold ends at X and a CALL_ME_LATER(X - on_delay) wakes it in
 *     time. X being the smallest reservation, [now, X) contradicts none.
 * A CALL_ME_LATER also covers the next idle timeout to come.
 * Before the pass, when jobs wait: OFF machines held until INFINITY are
 * woken (their holds end at now + on_delay), and SWITCHING_OFF ones held
 * until INFINITY get a planned wake at max(now, expected off) + on_delay.
 * An OFF machine whose planned wake time has come is woken (its hold keeps
 * its end). A machine becomes allocatable only when the state change
 * reports it reached the compute pstate. Without saving, no SET request is
 * ever made (machines Batsim reports asleep then stay held).
 *
 * Ownership: owned by the engine (fbf_engine_create() / destroy).
 * Errors: -EINVAL with a message naming the machine.
 */
#ifndef FBF_POWER_H
#define FBF_POWER_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/error.h"
#include "engine/idset.h"

typedef struct fbf_power_config {
    bool saving;        /* switch idle machines off */
    double timeout;     /* idle seconds before a switch-off (>= 0) */
    double off_delay;   /* estimated switch-off time (>= 0) */
    double on_delay;    /* estimated switch-on time (>= 0) */
    uint32_t sleep_pstate;
    uint32_t compute_pstate;
} fbf_power_config;

/* saving off, delays 0, sleep pstate 1, compute pstate 0. */
fbf_power_config fbf_power_config_default(void);

typedef enum fbf_machine_state {
    FBF_MACHINE_ON = 0,
    FBF_MACHINE_SWITCHING_OFF,
    FBF_MACHINE_OFF,
    FBF_MACHINE_SWITCHING_ON,
} fbf_machine_state;

const char *fbf_machine_state_name(fbf_machine_state s);

#endif
