/*
 * v5: fastbf-replay's side of Batsim 5's batprotocol, JSON format
 * (--protocol batsim5), against an External Decision Component (EDC): a
 * process behind a ZeroMQ REP socket, or a shared library.
 *
 *   v5_hello.c    the handshake (init data out, flags and EDCHelloEvent
 *                 back, requested_simulation_features applied) and this
 *                 state's life
 *   v5_message.c  the Batsim->EDC events, in message.c's order (replay.h)
 *   v5_reply.c    the checking of each reply, message and events, and the
 *                 job decisions (ExecuteJob, RejectJob, KillJobs)
 *   v5_register.c RegisterProfileEvent, RegisterJobEvent,
 *                 FinishRegistrationEvent (dynamic registration)
 *   v5_calls.c    CallMeLater (OneShot and Periodic), StopCallMeLater,
 *                 RequestedCallEvent, hosts' power events under --energy
 *   transport_edc.c  the library EDC (dlopen) behind the transport API
 *
 * Message shapes: {"now":T,"events":[{"timestamp":T,"event_type":"X",
 * "event":{...}}]}, unions the flatbuffers-JSON way (a "<member>_type"
 * naming the table next to "<member>"). Times are printed exactly (the
 * shortest text that reads back as the same double, whole values as
 * "12.0"), as flatbuffers prints doubles, so the EDC reads the true now.
 * Every message to the EDC ends with a NUL byte its size counts, as
 * Batsim's do; a reply may end with one.
 *
 * Invariant: r->v5 exists from fbf_replay_init() on when the protocol is
 * FBF_PROTO_BV5; calls[] only grows (an index names a call for the heap,
 * whose FBF_EV_CALL arg is index << 1 | soon).
 */
#ifndef FBF_REPLAY_V5_H
#define FBF_REPLAY_V5_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "tools/replay/replay.h"

/* What the command line gives the batsim5 mode. */
typedef struct fbf_v5_config {
    uint32_t format;           /* the flags the EDC must choose (--format) */
    const char *init;          /* --edc-init, passed unchanged */
    size_t init_len;
    const char *endpoint;      /* batsim_execution_context_json's socket_endpoint */
    const char *export_prefix; /* and its export_prefix (--out, or "") */
    const char *const *argv;   /* batsim_arguments: the replayer's command line */
    int argc;
} fbf_v5_config;

#define FBF_V5_FORMAT_BINARY 0x1u
#define FBF_V5_FORMAT_JSON 0x2u

/* One CallMeLaterEvent. */
typedef struct fbf_v5_call {
    char *id;
    double period;   /* seconds; 0: one-shot */
    uint64_t period_ms;
    uint32_t left;   /* periodic and finite: calls still due */
    bool infinite;
    bool live;       /* a call or periodic trigger is still due */
} fbf_v5_call;

typedef struct fbf_v5 {
    bool fwd_submission, fwd_killed, fwd_begins; /* requested forwards */
    bool stop_asked;  /* ForceSimulationStopEvent seen */
    uint32_t flags;   /* the EDC's init flags */
    char edc[160];    /* "name version", for messages */
    fbf_jbuf scratch; /* a profile id being written */
    fbf_v5_call *calls;
    size_t ncalls, calls_cap;
} fbf_v5;

/* v5_hello.c */
int fbf_v5_create(fbf_replay *r);
void fbf_v5_destroy(fbf_replay *r);
/* The handshake, as sim.c's first exchange. FBF_EXIT_* (r->err says why). */
int fbf_v5_hello(fbf_replay *r);
/* 0, or -EPROTO after fbf_replay_fail() naming the member: the string
 * member of o (*out, possibly ""), required. */
int fbf_v5_string(fbf_replay *r, long ev, const char *type, const cJSON *o, const char *path,
                  const char *name, const char **out);

/* v5_message.c */
void fbf_v5_time(fbf_jbuf *b, double v);
void fbf_v5_begins(fbf_replay *r);
void fbf_v5_submitted(fbf_replay *r, size_t *count, uint32_t job);
void fbf_v5_completed(fbf_replay *r, size_t *count, uint32_t job);
void fbf_v5_killed(fbf_replay *r, size_t *count, double t, uint32_t kill);
/* AllStaticJobsHaveBeenSubmittedEvent (arg 0) or
 * AllStaticExternalEventsHaveBeenInjectedEvent (arg 1). */
void fbf_v5_notify(fbf_replay *r, size_t *count, double t, uint32_t arg);
void fbf_v5_ends(fbf_replay *r, size_t *count);
/* The job's profile id as Batsim names it: "<job's workload>!<profile>",
 * appended to b unquoted. */
void fbf_v5_profile_id(const fbf_replay *r, uint32_t job, fbf_jbuf *b);

/* v5_reply.c: one message of the EDC parsed (the caller deletes it), or
 * NULL with why (a trailing NUL is allowed, an inner one is not; cJSON
 * cannot tell a lack of memory from bad JSON). Never through an arena: a
 * library EDC in this process may hold libcjson's allocation hooks. */
cJSON *fbf_v5_parse(const char *text, size_t len, char *why, size_t cap);
/* Checks and applies one reply. 0 or -EPROTO / -ENOMEM. */
int fbf_v5_apply_reply(fbf_replay *r, const char *text, size_t len);
/* The job named v: known, not deleted, its id well formed; -1 after
 * fbf_replay_fail() with Batsim's text otherwise. */
int64_t fbf_v5_job(fbf_replay *r, const cJSON *v, long ev, const char *type,
                   const char *path);

/* v5_register.c: RegisterProfileEvent, RegisterJobEvent (submitted at
 * at), FinishRegistrationEvent. 0 or -EPROTO / -ENOMEM. */
int fbf_v5_register_profile(fbf_replay *r, const cJSON *e, long ev);
int fbf_v5_register_job(fbf_replay *r, const cJSON *e, long ev, double at);
int fbf_v5_finish_registration(fbf_replay *r);

/* v5_calls.c */
int fbf_v5_call_me_later(fbf_replay *r, const cJSON *e, long ev, double at);
int fbf_v5_stop_call(fbf_replay *r, const cJSON *e, long ev);
/* The RequestedCallEvent of heap entry e (and the next periodic trigger). */
void fbf_v5_requested_call(fbf_replay *r, size_t *count, const fbf_rev *e);
/* Whether heap entry e is the trigger of a call stopped since. */
bool fbf_v5_call_dead(const fbf_replay *r, const fbf_rev *e);
/* --energy: TurnOnOffHostsEvent (a switch through machines.c's delays)
 * and ChangeHostsPStateEvent (at once); the HostsTurnedOnOffEvent or
 * HostsPStateChangedEvent (pstate_change) that acknowledges one. */
int fbf_v5_turn_onoff(fbf_replay *r, const cJSON *e, long ev, double at, bool pstate_change);
void fbf_v5_switched(fbf_replay *r, size_t *count, double t, const fbf_range *rg, uint32_t n,
                     uint32_t pstate, bool pstate_change);

#endif
