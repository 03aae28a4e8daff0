/*
 * flux_msg: one Flux message as the frames of one ZeroMQ message, the
 * layout of Flux's message format (RFC 3): an optional topic frame, an
 * optional payload frame, then the PROTO frame, always last, of 20 bytes:
 *
 *   byte 0     magic 0x8e
 *   byte 1     version 1
 *   byte 2     type: 0x01 request, 0x02 response, 0x04 event, 0x08 control
 *   byte 3     flags: 0x01 topic, 0x02 payload, 0x04 noresponse, 0x08 route,
 *              0x10 upstream, 0x20 private, 0x40 streaming, 0x80 user1
 *   bytes 4-7  userid, 8-11 rolemask, 12-15 aux1 (a request's nodeid, a
 *              response's errnum), 16-19 aux2 (the matchtag); each a
 *              32-bit unsigned integer in network byte order
 *
 * Route frames (flag 0x08) are not used on fastbf's socket: the socket
 * itself knows its one peer. A topic is 1 to 255 bytes of [A-Za-z0-9._-].
 * A payload is taken as Flux writes a JSON or text payload, with one
 * trailing NUL byte or without; any other NUL in it is refused. What each
 * topic's payload holds is io/flux_codec.h's. docs/flux.md tells the
 * whole framing, with the exchange it carries.
 *
 * Ownership: a decoded message points into the frames it came from.
 *
 * Errors: fbf_flux_msg_decode() returns -EPROTO with one line naming the
 * frame and what is wrong ("PROTO frame: 19 bytes, RFC 3's is 20").
 */
#ifndef FBF_FLUX_MSG_H
#define FBF_FLUX_MSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"

enum {
    FBF_FLUX_REQUEST = 0x01,
    FBF_FLUX_RESPONSE = 0x02,
    FBF_FLUX_EVENT = 0x04,
    FBF_FLUX_CONTROL = 0x08,
};

enum {
    FBF_FLUX_F_TOPIC = 0x01,
    FBF_FLUX_F_PAYLOAD = 0x02,
    FBF_FLUX_F_NORESPONSE = 0x04,
    FBF_FLUX_F_ROUTE = 0x08,
    FBF_FLUX_F_UPSTREAM = 0x10,
    FBF_FLUX_F_PRIVATE = 0x20,
    FBF_FLUX_F_STREAMING = 0x40,
    FBF_FLUX_F_USER1 = 0x80,
};

#define FBF_FLUX_PROTO_SIZE 20
#define FBF_FLUX_MAGIC 0x8e
#define FBF_FLUX_VERSION 1
#define FBF_FLUX_TOPIC_MAX 255
#define FBF_FLUX_USERID_UNKNOWN 0xffffffffu
#define FBF_FLUX_NODEID_ANY 0xffffffffu
#define FBF_FLUX_ROLE_OWNER 1u

typedef struct fbf_flux_msg {
    uint8_t type, flags;
    uint32_t userid, rolemask;
    uint32_t aux1;     /* request: nodeid; response: errnum */
    uint32_t matchtag; /* aux2 */
    const char *topic; /* NULL without one; not NUL-terminated */
    size_t topic_len;
    const char *payload; /* NULL without one; its trailing NUL left out */
    size_t payload_len;
} fbf_flux_msg;

/* The frames of one message (the peer's routing id already taken off):
 * n of them, frame i at data[i] of len[i] bytes. */
int fbf_flux_msg_decode(fbf_flux_msg *m, const void *const *data, const size_t *len, size_t n,
                        fbf_error *err);

/* The PROTO frame alone (its topic and payload left NULL): what a
 * refusal of a message whose other frames are wrong can still answer. */
int fbf_flux_msg_decode_proto(fbf_flux_msg *m, const void *data, size_t len, fbf_error *err);

/* Whether frames that may not decode as a whole still tell a request that
 * wants a response: a PROTO frame that reads, of a request without the
 * noresponse flag, after a first frame that is a topic. out then holds
 * the request's PROTO fields and topic (pointing into data[0]), for an
 * error response. */
bool fbf_flux_msg_answerable(const void *const *data, const size_t *len, size_t n,
                             fbf_flux_msg *out);

/* m's PROTO frame into out. flags must say whether a topic and a payload
 * follow (fbf_flux_msg_flags() sets those two bits from m). */
void fbf_flux_msg_proto(const fbf_flux_msg *m, unsigned char out[FBF_FLUX_PROTO_SIZE]);
uint8_t fbf_flux_msg_flags(const fbf_flux_msg *m);

/* "request", "response", "event", "control", or "type 0x.." for another. */
const char *fbf_flux_type_name(uint8_t type, char buf[16]);

/* Whether m's topic is exactly t. */
bool fbf_flux_msg_is(const fbf_flux_msg *m, const char *t);

#endif
