/*
 * host_pstates: what Batsim's energy platforms say of a machine's pstates,
 * whatever protocol carries them (v4: compute_resources[].properties, v5:
 * a host's properties list): `sleep_pstates`, comma-separated triplets
 * sleep:switch-off:switch-on, and `wattage_per_state`, one comma-separated
 * entry per pstate.
 *
 * A reader collects the machines one by one (fbf_host_pstates_add()) and
 * writes what they agree on into a SIMULATION_BEGINS' pstates
 * (fbf_host_pstates_finish()). Errors name `field` (where the codec read
 * the property) and the machine: a malformed sleep_pstates is -EPROTO;
 * two machines that state different pstates are -EINVAL (fastbf puts
 * every machine to sleep in the same pstate).
 */
#ifndef FBF_HOST_PSTATES_H
#define FBF_HOST_PSTATES_H

#include <stdint.h>

#include "engine/error.h"
#include "io/session.h"

typedef struct fbf_host_pstates {
    const char *field;
    long first; /* the first machine that said, -1 before */
    uint32_t sleep[8], nsleep, virt[16], nvirt, count;
} fbf_host_pstates;

void fbf_host_pstates_start(fbf_host_pstates *r, const char *field);

/* Machine id's properties (NULL: not given). */
int fbf_host_pstates_add(fbf_host_pstates *r, uint32_t id, const char *sleep_pstates,
                         const char *wattage_per_state, fbf_error *err);

/* Into b->pstates, when a machine said (found false otherwise). */
void fbf_host_pstates_finish(const fbf_host_pstates *r, fbf_begins *b);

#endif
