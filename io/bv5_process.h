/*
 * bv5_process: fastbf as a Batsim 5 EDC process, the protocol side of
 * `fastbf --protocol batsim5` (the transport is io/zmq_server.h's
 * socket, one peer per session, through fbf_bv5_process_handler(); its
 * refusals of other peers' messages are zmq_server's plain text).
 *
 * The first request is the handshake, in binary whatever the format:
 * [u32 size, native byte order][size bytes of init string]. configure()
 * (the caller's) reads the init string over the base options; the EDC is
 * created then, and the reply is [u32 flags][the hello message]. Every
 * later request is one message of the chosen format (io/bv5_edc.h).
 *
 * Errors: a handshake whose size disagrees with the request's is -EPROTO
 * naming both; configure()'s and the EDC's errors as they give them. After
 * an error the refusal is a ForceSimulationStopEvent (none before the EDC
 * exists).
 */
#ifndef FBF_BV5_PROCESS_H
#define FBF_BV5_PROCESS_H

#include <stddef.h>

#include "io/bv5_edc.h"
#include "io/jbuf.h"
#include "io/zmq_server.h"

typedef int (*fbf_bv5_configure_fn)(void *ctx, const char *init, size_t len,
                                    fbf_bv5_options *opt, fbf_error *err);

typedef struct fbf_bv5_process {
    fbf_bv5_options base;
    fbf_bv5_configure_fn configure;
    void *configure_ctx;
    fbf_bv5_edc *edc; /* once the handshake is done */
    fbf_jbuf hello;   /* the handshake's reply */
} fbf_bv5_process;

/* p must outlive the handler; fbf_bv5_process_fini() after serving. */
void fbf_bv5_process_init(fbf_bv5_process *p, const fbf_bv5_options *base,
                          fbf_bv5_configure_fn configure, void *ctx);
void fbf_bv5_process_fini(fbf_bv5_process *p);
fbf_zmq_handler fbf_bv5_process_handler(fbf_bv5_process *p);

#endif
