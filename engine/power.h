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
 * No machine is switched off at a decision point that wakes or re-plans
 * one (the two would contradict each other).
 *
 * Waking, before the pass. An OFF machine whose planned wake time has come
 * is woken (its hold keeps its end). Then, when jobs wait, with t0 = now +
 * on_delay:
 *   - A, the machines available by t0 without a wake: the free ON ones and
 *     those of running jobs and holds whose est_end <= t0;
 *   - the candidates: the OFF and SWITCHING_OFF machines whose hold ends
 *     after t0, each back at b = t0 (OFF) or max(now, switch-off request
 *     + off_delay) + on_delay (SWITCHING_OFF); taken in the order: hold end
 *     descending (INFINITY first), then b, then id.
 * The waiting jobs are walked in queue order (at most `capacity` of them,
 * while candidates are left). A job of res <= A takes A's machines (A -=
 * res). Otherwise let w = res - A: if fewer than w candidates are left it
 * needs running jobs to end as well, and wakes nothing; else the next w
 * candidates would let it start at Tw = the largest b among them, while
 * without them it starts at the earliest Tn = the w-th smallest end among
 * the running real jobs ending after t0 and the candidates left (their
 * hold ends). Iff Tn - Tw > on_delay (the start moves earlier by more
 * than the switch-on delay), those w candidates are woken: each of their
 * holds that ends after Tw now ends at Tw (a planned wake at Tw -
 * on_delay, sent at once when due: OFF machines then switch on now,
 * SWITCHING_OFF ones once OFF) and they are no longer candidates. Either
 * way A = 0 for the jobs after it (it may hold a reservation on them). So
 * on demand only the machines that the waiting jobs could start on by t0
 * are woken, and a planned wake is cut short when that helps a job by
 * more than on_delay. No job is left waiting on holds until INFINITY: when
 * no running job's end can serve it (Tn is INFINITY) and enough
 * candidates are left, it wakes them. A hold whose end changes is
 * re-planned (above), so its new end reaches the policies as a running
 * job's end does (conservative compresses). A machine becomes allocatable
 * only when the state change reports it reached the compute pstate.
 * Without saving, no SET request is ever made (machines Batsim reports
 * asleep then stay held).
 *
 * Machine states are kept by runs of consecutive ids in the same state
 * (engine/machine_runs.h), and the machines switched off, or woken for
 * the same start, at one decision point share one hold: memory and time
 * follow the number of distinct states, not the number of machines.
 *
 * Ownership: owned by the engine (fbf_engine_create() / destroy).
 * Errors: -EINVAL with a message naming the machine; -ENOMEM.
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
