/*
 * bv5_decode: a Batsim 5 (batprotocol) message in its JSON format, read
 * into the session's typed events (io/session.h), each field read once.
 *
 * A message is {"now": T, "events": [{"timestamp": t, "event_type":
 * "<Name>Event", "event": {...}}, ...]}, possibly followed by the NUL byte
 * Batsim appends. Unions are the flatbuffers-JSON way: `<member>_type`
 * names the table next to `<member>`. Read: SimulationBeginsEvent
 * (computation_hosts[] ids, states and pstate properties, else
 * computation_host_number), JobSubmittedEvent (job.resource_request,
 * job.walltime, -1 or absent for none, submission_time), JobCompletedEvent,
 * JobsKilledEvent (job_ids), RequestedCallEvent,
 * AllStaticJobsHaveBeenSubmittedEvent,
 * AllStaticExternalEventsHaveBeenInjectedEvent, ExternalEventOccurredEvent
 * (nothing to apply), HostsPStateChangedEvent and HostsTurnedOnOffEvent
 * (host_ids, an interval set "0-3 7"; pstate, or state 0 on / 1 off),
 * SimulationEndsEvent. The envelope and order are checked as in v4 (now
 * finite, timestamps <= now and not decreasing, SimulationBeginsEvent
 * first and once, nothing after SimulationEndsEvent). Errors are -EPROTO
 * with one line naming the event (index and type) and the field, e.g.
 *   event 2 (JobSubmittedEvent): event.job.resource_request: expected an
 *   integer >= 1, got a string
 *
 * Ownership: the events and what they point to are the decoder's until the
 * next decode; strings point into the parsed tree (the arena's).
 */
#ifndef FBF_BV5_DECODE_H
#define FBF_BV5_DECODE_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>

#include "engine/error.h"
#include "engine/idset.h"
#include "io/event_list.h"
#include "io/json_arena.h"
#include "io/session.h"

typedef struct fbf_bv5_decoder {
    double now, prev;
    bool begun, ended;
    fbf_event_list events; /* each beside the event_type it came from */
    fbf_idset *sets; /* allocated one by one: events keep pointers to them */
    fbf_idset **set_ptrs;
    size_t nsets, sets_cap;
    fbf_begins begins;
    fbf_idset compute;
    uint32_t *state_machines;
    fbf_machine_state *states;
    size_t states_cap;
    uint32_t compute_pstate, sleep_pstate; /* for HostsTurnedOnOffEvent */
} fbf_bv5_decoder;

void fbf_bv5_decoder_init(fbf_bv5_decoder *d);
void fbf_bv5_decoder_fini(fbf_bv5_decoder *d);

/* The pstates a turned-on and a turned-off host reach. */
void fbf_bv5_decoder_pstates(fbf_bv5_decoder *d, uint32_t compute, uint32_t sleep);

int fbf_bv5_decode(fbf_bv5_decoder *d, fbf_json_arena *arena, const char *text, size_t len,
                   bool begun, fbf_error *err);

/* The event_type of the event of that origin ("message" when unknown). */
const char *fbf_bv5_decoded_type(const fbf_bv5_decoder *d, long origin);

#endif
