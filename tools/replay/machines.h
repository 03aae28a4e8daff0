/*
 * machines: fastbf-replay's model of machine states and energy (--energy),
 * Batsim's side of SET_RESOURCE_STATE, RESOURCE_STATE_CHANGED and QUERY
 * consumed_energy.
 *
 * Each machine is ON, SWITCHING_OFF, OFF or SWITCHING_ON; all start ON.
 * SIMULATION_BEGINS describes the machines' pstates and wattages in their
 * properties as Batsim does from an energy platform (sleep_pstates
 * "13:14:15" on its energy_platform_homogeneous_no_net_128 with
 * --sleep-pstate 13), so that a scheduler can read them there.
 * SET_RESOURCE_STATE to the sleep pstate takes idle ON machines through
 * SWITCHING_OFF (off_delay seconds) to OFF; to the compute pstate takes
 * OFF machines through SWITCHING_ON (on_delay) to ON. A request's
 * machines form one group, acknowledged by one RESOURCE_STATE_CHANGED
 * when the switch completes. EXECUTE_JOB on a machine that is not ON is a
 * violation. Validation of a request: the interval set parses and is in
 * range, the pstate is known, and no machine runs a job, is switching or
 * already is in the target state.
 *
 * Energy from time 0 to t: every machine draws busy power while a job
 * runs on it, sleep power while OFF, switch power while switching and idle
 * power otherwise. A job's consumed_energy is busy x res x execution time.
 * QUERY {"requests":{"consumed_energy":{}}} is answered by an ANSWER at the
 * decision's time, in the next message.
 *
 * Errors: -EPROTO with the reason (no prefix) in why; -ENOMEM.
 */
#ifndef FBF_REPLAY_MACHINES_H
#define FBF_REPLAY_MACHINES_H

#include <cjson/cJSON.h>
#include <stdio.h>

#include "tools/replay/replay.h"

typedef struct fbf_energy_config {
    double p_idle, p_busy, p_sleep, p_switch; /* watts per machine */
    double off_delay, on_delay;               /* seconds */
    uint32_t compute_pstate, sleep_pstate;
} fbf_energy_config;

/* 95:190:9.75, switch = idle, delays 0, pstates 0 (compute) and 1 (sleep). */
fbf_energy_config fbf_energy_config_default(void);

int fbf_machines_create(fbf_replay *r, const fbf_energy_config *cfg);
void fbf_machines_destroy(fbf_replay *r);

int fbf_machines_set(fbf_replay *r, const cJSON *data, double at, char *why, size_t cap);
int fbf_machines_query(fbf_replay *r, const cJSON *data, double at, char *why, size_t cap);
/* The protocol-free cores of the two above, for a request already checked
 * (every machine idle ON for the sleep pstate, OFF for the compute one):
 * the switch of s to pstate from at on, and one consumed_energy answer
 * at at. 0 or -ENOMEM. */
int fbf_machines_apply(fbf_replay *r, const fbf_idset *s, uint32_t pstate, double at);
/* The same; with now, the switch takes no time (batsim5's pstate change,
 * acknowledged as such). */
int fbf_machines_apply_at_once(fbf_replay *r, const fbf_idset *s, uint32_t pstate, double at,
                               bool now);
int fbf_machines_ask_energy(fbf_replay *r, double at);
/* A machine's state, FBF_RM_*, and its name ("SWITCHING_OFF"). */
enum { FBF_RM_ON = 0, FBF_RM_SWITCHING_OFF, FBF_RM_OFF, FBF_RM_SWITCHING_ON };
int fbf_machines_state_of(const fbf_replay *r, uint32_t id);
const char *fbf_machines_state_name(int state);
const fbf_energy_config *fbf_machines_config(const fbf_replay *r);
/* -EPROTO if a machine of the allocation is not ON. */
int fbf_machines_check_alloc(const fbf_replay *r, const fbf_idset *s, char *why, size_t cap);
/* The members a machine's properties get in SIMULATION_BEGINS, as Batsim
 * copies them from its energy platforms (",\"wattage_per_state\":..."):
 * one wattage triplet (idle:idle:busy) per compute pstate, the sleep
 * pstate's, the two virtual pstates' of the switches (numbered after all
 * the others), wattage_off, and sleep_pstates "sleep:off:on". */
void fbf_machines_properties(const fbf_replay *r, fbf_jbuf *b);
/* Writes the event of a FBF_EV_STATE or FBF_EV_ANSWER heap entry
 * (RESOURCE_STATE_CHANGED / ANSWER, or p / e under --protocol batsim2). */
void fbf_machines_emit(fbf_replay *r, size_t *count, const fbf_rev *e);

typedef struct fbf_energy_totals {
    double joules;
    double busy_s, asleep_s, switching_s, idle_s; /* machine-seconds */
} fbf_energy_totals;

void fbf_machines_totals(const fbf_replay *r, double t, fbf_energy_totals *out);
double fbf_machines_job_energy(const fbf_replay *r, uint32_t job);
/* The energy consumed from 0 to t, for any t up to the clock (the totals
 * above hold for the clock only). */
double fbf_machines_energy_at(const fbf_replay *r, double t);

/* What Batsim 4.2.1's out_schedule.csv tells of machines: its
 * SET_RESOURCE_STATE counts, and the machine-seconds of the closed
 * intervals in each state (Batsim adds an interval when the machine
 * leaves it). since[id] is when machine id last switched (0: never). */
typedef struct fbf_machines_figures {
    unsigned long long grouped_switches, machine_switches;
    long double sleeping, switching_on, switching_off;
    const double *since;
} fbf_machines_figures;
void fbf_machines_batsim_figures(const fbf_replay *r, fbf_machines_figures *out);
void fbf_machines_print(const fbf_replay *r, FILE *out);
void fbf_machines_json(const fbf_replay *r, cJSON *o);

#endif
