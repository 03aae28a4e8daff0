/*
 * flux_session_int: the RFC 27 session's state, shared by its halves:
 * flux_session.c (receipt, the handshake, the outbox) and
 * flux_instant.c (one instant: events, the pass, the answers). Not part
 * of the public API.
 */
#ifndef FBF_FLUX_SESSION_INT_H
#define FBF_FLUX_SESSION_INT_H

#include "io/flux_codec.h"
#include "io/flux_kvs.h"
#include "io/flux_session.h"
#include "io/flux_table.h"
#include "io/jbuf.h"
#include "io/store.h"

enum { PHASE_DETACHED, PHASE_HELLO, PHASE_READYING, PHASE_READY, PHASE_ENDED };

/* A request of the instant, in arrival order. */
typedef struct fbf_flux_req {
    uint8_t kind;   /* FBF_FLUX_IN_ALLOC, _FREE, _CANCEL */
    uint32_t job;   /* record index */
} fbf_flux_req;

/* A job hello said holds cores, adopted at the first instant. */
typedef struct fbf_flux_adopt {
    uint32_t job;
    fbf_idset cores;
    double end; /* INFINITY: none */
} fbf_flux_adopt;

/* An outgoing message, its strings as offsets into the text buffer. */
typedef struct fbf_flux_outrec {
    fbf_flux_msg msg; /* topic and payload filled in at outbox time */
    size_t topic_off, topic_len, pay_off, pay_len;
    bool has_payload;
} fbf_flux_outrec;

struct fbf_flux_session {
    fbf_flux_options opt;
    FILE *warn;
    fbf_session *core;
    fbf_flux_codec *codec;
    fbf_flux_kvs *kvs;
    bool own_kvs;
    fbf_flux_table jobs;
    int phase;
    uint32_t hello_tag, ready_tag;
    bool begun; /* the platform is set (first instant) */
    size_t pending; /* allocs in flight (NEW and WAITING jobs) */
    uint64_t instants;
    double last_now;

    fbf_flux_req *reqs;
    size_t nreqs, reqs_cap;
    fbf_flux_adopt *adopt;
    size_t nadopt;

    fbf_flux_outrec *outs;
    size_t nouts, outs_cap;
    fbf_flux_out *outbox;
    size_t outbox_cap;
    fbf_jbuf text;

    /* One instant's scratch. */
    fbf_event *ev;
    size_t nev, ev_cap;
    char (*ids)[24]; /* engine ids of the events' jobs */
    size_t ids_cap;
    uint32_t *arrivals; /* records that entered the queue at this instant */
    size_t narrivals, arrivals_cap;
    uint32_t *reserved; /* finite depth: records announced with an estimate */
    size_t nreserved, reserved_cap;
    fbf_jbuf rtext; /* R texts of the instant's starts */

    char refusal[256];
    unsigned long refusals;
};

/* Appends a message to the outbox: topic (copied), payload (the text
 * buffer's bytes from pay_off on, or none when pay_off is SIZE_MAX). */
int fbf_flux_out_add(fbf_flux_session *s, uint8_t type, uint8_t flags, uint32_t aux1,
                     uint32_t matchtag, const char *topic, size_t pay_off);

/* flux_instant.c: the instant closed by sim.instant {now} (its matchtag). */
int fbf_flux_instant(fbf_flux_session *s, double now, uint32_t matchtag, fbf_error *err);

/* Grows an array of n items of size sz to hold one more. */
int fbf_flux_grow(void **v, size_t *cap, size_t n, size_t sz);

#endif
