/*
 * bv5_edc: fastbf as a Batsim 5 External Decision Component, transport-
 * free: the batprotocol codec around the session (io/session.h). The
 * library EDC (tools/edc/) and the process EDC (fastbf --protocol batsim5)
 * drive the same object.
 *
 * The hello (fbf_bv5_edc_hello()) is the one message of the handshake: an
 * EDCHelloEvent naming fastbf, its version and the simulation features
 * its options need (dynamic registration with --register-workload).
 * Each later exchange is fbf_bv5_edc_take(): Batsim's message in, the
 * decisions out, in the format of the options: JSON, or flatbuffers
 * binary (io/bv5_fb.h: the same events read, the same decisions written,
 * the same errors). Decisions (as the wire notes show them in JSON:
 * ExecuteJobEvent with allocation.host_allocation and a predefined
 * executor placement, RejectJobEvent, KillJobsEvent, CallMeLaterEvent
 * OneShot, ChangeHostsPStateEvent, RegisterProfileEvent, RegisterJobEvent,
 * FinishRegistrationEvent); ForceSimulationStopEvent after a message
 * fastbf cannot go on from (fbf_bv5_edc_refusal()). Batprotocol carries no
 * metadata, energy query or waiting-time answer: options needing them are
 * refused at creation.
 *
 * Ownership: buffers returned are the EDC's, valid until its next call.
 * Errors: as the v4 codec's (io/bv4_session.h), one line naming the event
 * (index and event_type) and the field; -ENOTSUP for refused options,
 * -EINVAL for a format that is neither.
 */
#ifndef FBF_BV5_EDC_H
#define FBF_BV5_EDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"
#include "io/session.h"

/* The flags of the handshake: the format of every later message. */
#define FBF_BV5_FORMAT_BINARY 0x1u
#define FBF_BV5_FORMAT_JSON 0x2u

/* Returned by fbf_bv5_edc_take() once SimulationEndsEvent was handled. */
#define FBF_BV5_ENDED 1

typedef struct fbf_bv5_options {
    fbf_session_options session;
    uint32_t format; /* FBF_BV5_FORMAT_JSON or _BINARY */
} fbf_bv5_options;

typedef struct fbf_bv5_edc fbf_bv5_edc;

fbf_bv5_edc *fbf_bv5_edc_create(const fbf_bv5_options *opt, fbf_error *err);
void fbf_bv5_edc_destroy(fbf_bv5_edc *e);

int fbf_bv5_edc_hello(fbf_bv5_edc *e, const uint8_t **msg, size_t *len, fbf_error *err);
int fbf_bv5_edc_take(fbf_bv5_edc *e, const uint8_t *req, size_t len, const uint8_t **reply,
                     size_t *reply_len, fbf_error *err);

/* After fbf_bv5_edc_take() failed: a ForceSimulationStopEvent at the
 * request's time, so that Batsim stops instead of going on without its
 * decision component. NULL when out of memory. */
const uint8_t *fbf_bv5_edc_refusal(fbf_bv5_edc *e, size_t *len);

fbf_engine *fbf_bv5_edc_engine(fbf_bv5_edc *e);

/* A call at `at` seconds in batprotocol's whole milliseconds, never sooner
 * than asked but for the float error of at x 1000 (far below the call's
 * margin): both formats write calls so. */
uint64_t fbf_bv5_call_ms(double at);

#endif
