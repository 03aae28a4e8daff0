/*
 * bv4_power: the Batsim v4 protocol's resource states and energy, on
 * fastbf's side (the engine's model is engine/power.h).
 *
 *   SIMULATION_BEGINS compute_resources[].state   initial machine states:
 *       "sleeping" -> OFF, "switching_on" / "switching_off" -> those,
 *       "idle" / "computing" (or absent) -> ON
 *   RESOURCE_STATE_CHANGED {resources, state}     a switch completed
 *   SET_RESOURCE_STATE {resources, state}         the engine's SET_STATE
 *       decisions, one event each (wakes, then switch-offs)
 *   QUERY {"requests":{"consumed_energy":{}}}     asked by fastbf
 *   ANSWER {"consumed_energy": J}                 Batsim's answer, logged
 *
 * Errors: -EPROTO (malformed field) or -EINVAL (a state contradicting
 * the engine's), with one line naming the field and the machine; the
 * session adds the event.
 */
#ifndef FBF_BV4_POWER_H
#define FBF_BV4_POWER_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "engine/engine.h"
#include "io/jbuf.h"

/* Where Batsim says which pstates its machines have (the properties of
 * SIMULATION_BEGINS' compute_resources[]: `sleep_pstates`, comma-separated
 * triplets sleep:switch-off:switch-on, and `wattage_per_state`, one
 * comma-separated entry per pstate), fits cfg to them: the sleep pstate is
 * the first triplet's unless the command line named one of the platform's
 * (sleep_given), and the compute pstate must be a pstate of the machine
 * that is neither a sleep pstate nor a virtual one. Every machine that
 * states its pstates must state the same. A pstate the command line named
 * that the platform contradicts is -EINVAL, with one line naming the
 * machine, its property and the flag to change. Without such properties
 * cfg is left as it is. */
int fbf_bv4_power_pstates(const cJSON *data, fbf_power_config *cfg, bool sleep_given,
                          bool compute_given, fbf_error *err);

/* Applies compute_resources[].state of a checked SIMULATION_BEGINS data
 * object (after the platform is set). */
int fbf_bv4_power_begins(fbf_engine *e, const cJSON *data, fbf_error *err);

/* Applies a checked RESOURCE_STATE_CHANGED data object. */
int fbf_bv4_power_changed(fbf_engine *e, const cJSON *data, fbf_error *err);

/* Checks an ANSWER data object: consumed_energy, a finite number >= 0,
 * goes to *joules, and to log when given. */
int fbf_bv4_power_answer(const cJSON *data, FILE *log, double *joules, fbf_error *err);

/* Writes the data object of SET_RESOURCE_STATE for a SET_STATE decision
 * ({"resources":..., "state":...}); an allocation failure sets b->oom. */
void fbf_bv4_power_put_set(fbf_jbuf *b, const fbf_decision *d);

/* Writes the data object of QUERY consumed_energy. */
void fbf_bv4_power_put_query(fbf_jbuf *b);

#endif
