/*
 * flux_codec: the payloads of RFC 27 (Flux's resource allocation
 * protocol, version 1) and of the simulation's own topics, as fastbf
 * receives them, each read into a typed input with every field checked
 * once; and the helpers that write fastbf's payloads.
 *
 * What fastbf (the scheduler) receives, by topic:
 *   requests from the job manager
 *     sched.alloc       {"id": J, "priority": P, "userid": U[, "t_submit": T]}
 *     sched.free        {"id": J}
 *     sched.cancel      {"id": J}                      (no response)
 *     sched.prioritize  {"jobs": [[J, P], ...]}        (no response)
 *     sim.attach        no payload: the job manager's first message
 *     sim.instant       {"now": T}: the end of the instant's messages
 *     sim.end           no payload: the simulation is over
 *   responses to fastbf's requests
 *     job-manager.sched-hello  {"alloc": [{"id": J, "priority": P,
 *                              "userid": U}, ...]}
 *     job-manager.sched-ready  no payload (an object is accepted and
 *                              ignored: flux-core's says {"count": N})
 * J is an integer in [0, 2^64 - 1] (read exactly, beyond a double's 2^53),
 * P and U integers in [0, 2^32 - 1], T a number >= 0 (seconds). Members
 * that RFC 27 does not name are ignored, as flux-core's job manager and
 * schedulers ignore them (flux-core adds "jobspec" and "t_submit" to
 * sched.alloc; fastbf uses t_submit, when present, as the job's submit
 * time). A response with a non-zero errnum carries the error's text.
 *
 * Ownership: an input's arrays and strings belong to the codec and live
 * until its next decode.
 *
 * Errors: -EPROTO with one line naming the topic and the field:
 * "sched.alloc: id: expected an integer in [0, 2^64 - 1], got a string",
 * "sched.prioritize: jobs[3][1]: ...", "unknown topic \"sched.foo\"..."
 * -ENOMEM.
 */
#ifndef FBF_FLUX_CODEC_H
#define FBF_FLUX_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "engine/error.h"
#include "io/flux_msg.h"
#include "io/jbuf.h"
#include "io/json_exact.h"

#define FBF_FLUX_HELLO "job-manager.sched-hello"
#define FBF_FLUX_READY "job-manager.sched-ready"
#define FBF_FLUX_DISCONNECT "job-manager.disconnect"
#define FBF_FLUX_ALLOC "sched.alloc"
#define FBF_FLUX_FREE "sched.free"
#define FBF_FLUX_CANCEL "sched.cancel"
#define FBF_FLUX_PRIORITIZE "sched.prioritize"
#define FBF_FLUX_ATTACH "sim.attach"
#define FBF_FLUX_INSTANT "sim.instant"
#define FBF_FLUX_END "sim.end"

/* sched.alloc's response types. */
enum {
    FBF_FLUX_SUCCESS = 0,
    FBF_FLUX_ANNOTATE = 1,
    FBF_FLUX_DENY = 2,
    FBF_FLUX_CANCELED = 3,
};

typedef enum fbf_flux_in_kind {
    FBF_FLUX_IN_ALLOC,
    FBF_FLUX_IN_FREE,
    FBF_FLUX_IN_CANCEL,
    FBF_FLUX_IN_PRIORITIZE,
    FBF_FLUX_IN_ATTACH,
    FBF_FLUX_IN_INSTANT,
    FBF_FLUX_IN_END,
    FBF_FLUX_IN_HELLO, /* the response to fastbf's hello */
    FBF_FLUX_IN_READY, /* the response to fastbf's ready */
} fbf_flux_in_kind;

typedef struct fbf_flux_prio {
    uint64_t id;
    uint32_t priority;
} fbf_flux_prio;

typedef struct fbf_flux_held {
    uint64_t id;
    uint32_t priority, userid;
} fbf_flux_held;

typedef struct fbf_flux_in {
    fbf_flux_in_kind kind;
    const char *topic; /* the kind's topic (static storage) */
    bool noresponse;   /* the request's flag */
    uint32_t matchtag;
    uint64_t id;        /* alloc, free, cancel */
    uint32_t priority, userid;
    double t_submit;    /* alloc: NAN when absent */
    double now;         /* instant */
    const fbf_flux_prio *prio; /* prioritize */
    size_t nprio;
    const fbf_flux_held *held; /* hello */
    size_t nheld;
    uint32_t errnum;    /* hello, ready: a response's; its text follows */
    const char *errtext; /* "" when none */
} fbf_flux_in;

typedef struct fbf_flux_codec fbf_flux_codec;

fbf_flux_codec *fbf_flux_codec_create(void);
void fbf_flux_codec_destroy(fbf_flux_codec *c);

/* Reads a decoded message (io/flux_msg.h) into in. A message that is not
 * a request or a response, a request's topic fastbf does not serve, a
 * response's topic it never asked, a payload where none belongs, or a
 * field missing or malformed is refused. */
int fbf_flux_codec_read(fbf_flux_codec *c, const fbf_flux_msg *m, fbf_flux_in *in,
                        fbf_error *err);

/* The JSON of an object holding one job id: {"id":J}, into b. */
void fbf_flux_put_id(fbf_jbuf *b, uint64_t id);

#endif
