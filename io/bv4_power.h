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
 * Syntax only: what the states mean is the session's (io/session.h) and
 * the engine's. Errors: -EPROTO (malformed field) or -EINVAL (machines
 * that contradict each other), with one line naming the field and the
 * machine; the decoder adds the event.
 */
#ifndef FBF_BV4_POWER_H
#define FBF_BV4_POWER_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "engine/engine.h"
#include "io/decisions.h"
#include "io/jbuf.h"
#include "io/session.h"

/* Where Batsim says which pstates its machines have (the properties of
 * SIMULATION_BEGINS' compute_resources[]: `sleep_pstates`, comma-separated
 * triplets sleep:switch-off:switch-on, and `wattage_per_state`, one
 * comma-separated entry per pstate), into b->pstates (found false when no
 * machine says). Every machine that states its pstates must state the
 * same: -EINVAL otherwise, naming both machines. */
int fbf_bv4_power_pstates(const cJSON *data, fbf_begins *b, fbf_error *err);

/* compute_resources[].state of machine id: "sleeping" -> OFF,
 * "switching_on" / "switching_off" -> those, "idle" / "computing" -> ON. */
int fbf_bv4_power_state(const cJSON *st, uint32_t id, fbf_machine_state *out, fbf_error *err);

/* A pstate: a string of digits, or a number. */
int fbf_bv4_power_pstate(const cJSON *st, uint32_t *out, fbf_error *err);

/* An ANSWER data object: consumed_energy, a finite number >= 0. */
int fbf_bv4_power_energy(const cJSON *data, double *joules, fbf_error *err);

/* Writes the data object of SET_RESOURCE_STATE ({"resources":...,
 * "state":...}); an allocation failure sets b->oom. */
void fbf_bv4_power_put_set(fbf_jbuf *b, const fbf_out *d);

/* Writes the data object of QUERY consumed_energy. */
void fbf_bv4_power_put_query(fbf_jbuf *b);

#endif
