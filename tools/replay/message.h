/*
 * message: which events make fastbf-replay's next message, and building
 * it (time model in replay.h).
 *
 * Pending events live in one binary min-heap keyed by (time, kind, seq),
 * events.c: job completions (seq = start order), JOB_KILLED
 * acknowledgements, requested calls and the final NOTIFY. Submissions need
 * no heap: they are a cursor over the jobs sorted once by (subtime, file
 * order) (sim.c), merged with the heap as a message is built. So one event
 * costs O(log running) and a message costs no allocation once the buffers
 * have grown. Entries of jobs killed meanwhile, and batsim5 calls stopped
 * since, are dropped when they reach the top.
 *
 * A message whose events are all delivered changes the job states at that
 * moment: a submitted job waits from then on, a completed job's resources
 * are free. The message is built in r->msg, in the run's protocol (the
 * events of batsim2 and batsim5 in their own modules, v2_message.c and
 * v5_message.c). fbf_replay_msg_open, fbf_replay_ev_open and
 * fbf_replay_alloc_text (replay.h), which those modules share, are here.
 */
#ifndef FBF_REPLAY_MESSAGE_H
#define FBF_REPLAY_MESSAGE_H

#include <stdbool.h>
#include <stddef.h>

#include "tools/replay/replay.h"

/* Builds the next message from every event due by its now: now is the
 * earliest pending event's time, never before the clock. Returns the
 * number of events (0: nothing pending at all, nothing built).
 * *calls_only: they were all REQUESTED_CALLs; *calls_min: each of those
 * came at Batsim's minimum sleep (the run's livelock guard). */
size_t fbf_replay_build_message(fbf_replay *r, bool *calls_only, bool *calls_min);

/* The last message, SIMULATION_ENDS (batsim2: Z), at the clock; sets
 * r->ending. */
void fbf_replay_build_ends(fbf_replay *r);

/* Whether an event is still to come: a live heap entry, or a static job
 * not yet submitted. */
bool fbf_replay_events_left(fbf_replay *r);

#endif
