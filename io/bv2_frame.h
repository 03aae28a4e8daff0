/*
 * bv2_frame: the framing of the Batsim v2 text protocol on a stream
 * socket: every message is a 32-bit native-endian byte count, then that
 * many bytes of content (no terminator).
 *
 * Nothing from the peer is trusted: a count above the reader's limit is
 * refused before anything is allocated, a short read or an end of stream
 * inside a frame names the byte counts, and reads and writes retry on
 * EINTR and partial transfers.
 *
 * Ownership: a reader owns its buffer; the content returned by
 * fbf_bv2_frame_read() is valid until the next read or _fini().
 *
 * Errors (one line in err):
 *   -EMSGSIZE  a count above the limit, or a message to send above 4 GiB
 *   -EPIPE     the peer closed the connection inside a frame, or before
 *              any byte of one (*closed set: a clean end for the caller
 *              to judge)
 *   -EIO       a read or write failed (the system's reason)
 *   -ENOMEM    no memory for a frame within the limit
 */
#ifndef FBF_BV2_FRAME_H
#define FBF_BV2_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"

/* The default limit on one message: 64 MiB. */
#define FBF_BV2_FRAME_MAX_DEFAULT ((size_t)64 << 20)

typedef struct fbf_bv2_reader {
    int fd;
    size_t max;
    char *buf; /* the content, NUL-terminated */
    size_t cap;
} fbf_bv2_reader;

void fbf_bv2_reader_init(fbf_bv2_reader *r, int fd, size_t max);
void fbf_bv2_reader_fini(fbf_bv2_reader *r);

/* The next message: its content in *content (NUL-terminated, len bytes,
 * writable: the codec cuts it in place).
 * *closed: the peer closed the connection before any byte of it. */
int fbf_bv2_frame_read(fbf_bv2_reader *r, char **content, size_t *len, bool *closed,
                       fbf_error *err);

/* Sends one message. */
int fbf_bv2_frame_write(int fd, const char *content, size_t len, fbf_error *err);

#endif
