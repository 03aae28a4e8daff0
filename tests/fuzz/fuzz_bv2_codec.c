/*
 * fuzz_bv2_codec: Batsim v2 text-protocol messages to the codec
 * (fbf_bv2_decode), and byte streams to the frame reader.
 *
 * Feeds: byte 0 picks the options: the frame reader (bit 0), no A first
 * (bit 1), and the reader's limit (bits 2-3: 16, 64, 1024 or 1 MiB
 * bytes). Without the frame reader, a valid 3:0|0:A is decoded first
 * (unless bit 1), then the rest, split on 0x01, as the next messages, each
 * copied into a buffer of exactly its length and the NUL the frame reader
 * puts after it. With the frame reader, the rest is written raw to one end
 * of a socketpair, which is then closed, and the frames read from the
 * other end are decoded in turn.
 *
 * Asserts: a negative return comes with a non-empty message and an errno
 * the headers promise, and nothing is decoded after it (the client stops
 * there); a decoded message's events have times >= 0, finite, not after
 * the message's and in order, the stamp each came from, job ids of the
 * form WLOAD!JOB that a reply can carry, non-empty machine sets and
 * energies >= 0; after Z every message is refused; the reply at the
 * message's time (N) is printable and gives that time back exactly. The
 * sanitizers catch the rest. FBF_FUZZ_VERBOSE=1 prints each return.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "io/bv2_codec.h"
#include "io/bv2_frame.h"

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fuzz_bv2_codec: %s\n", what);
        abort();
    }
}

static void check_set(const fbf_idset *s)
{
    check(s && s->n > 0, "an empty machine set");
    for (uint32_t i = 0; i < s->n; i++)
        check(s->r[i].lo <= s->r[i].hi && s->r[i].hi <= FBF_IDSET_MAX_ID, "a bad range");
}

static void check_job_id(const char *id)
{
    const char *bang = id ? strchr(id, '!') : NULL;
    check(bang && bang != id && bang[1] && !strchr(bang + 1, '!') && !strpbrk(id, ",;=:|"),
          "a job id a reply cannot carry");
}

/* The events of a decoded message, and its reply. */
static void check_events(const fbf_bv2_decoder *d, bool was_ended)
{
    check(!was_ended, "a message decoded after Z");
    check(isfinite(d->now) && d->now >= 0, "a bad message time");
    double last = -1;
    long origin = -1;
    for (size_t i = 0; i < d->n; i++) {
        const fbf_event *e = &d->ev[i];
        check(isfinite(e->time) && e->time >= 0 && e->time <= d->now && e->time >= last,
              "an event time out of order");
        check(e->origin > origin, "origins out of order");
        last = e->time;
        origin = e->origin;
        char st = fbf_bv2_decoded_stamp(d, e->origin);
        switch (e->kind) {
        case FBF_EV_SIMULATION_BEGINS: check(st == 'A' && e->u.begins, "A"); break;
        case FBF_EV_SIMULATION_ENDS: check(st == 'Z' && d->ended, "Z"); break;
        case FBF_EV_CALL_DUE: check(st == 'N', "N"); break;
        case FBF_EV_JOB_SUBMITTED:
            check(st == 'S', "S");
            check_job_id(e->u.submitted.id);
            break;
        case FBF_EV_JOB_ENDED:
            check(st == 'C' && !e->u.ended.alloc, "C");
            check_job_id(e->u.ended.id);
            break;
        case FBF_EV_MACHINES_FAILED:
        case FBF_EV_MACHINES_RESTORED:
            check(st == (e->kind == FBF_EV_MACHINES_FAILED ? 'F' : 'f'), "F or f");
            check_set(e->u.machines);
            break;
        case FBF_EV_STATE_CHANGED:
            check(st == 'p' && e->u.state.pstate <= FBF_IDSET_MAX_ID, "p");
            check_set(e->u.state.machines);
            break;
        case FBF_EV_ENERGY:
            check(st == 'e' && isfinite(e->u.joules) && e->u.joules >= 0, "e");
            break;
        default: check(false, "an event kind v2 does not have");
        }
    }
    fbf_jbuf b = {0};
    fbf_error err;
    check(fbf_bv2_encode(&b, d->now, NULL, NULL, 0, &err) == 0, "encoding N");
    for (size_t i = 0; i < b.len; i++)
        check(b.p[i] >= 0x20 && b.p[i] <= 0x7e, "a reply byte outside printable ASCII");
    char *end;
    check(b.len > 4 && strncmp(b.p, "3:", 2) == 0 && strtod(b.p + 2, &end) == d->now &&
              *end == '|' && strcmp(b.p + b.len - 2, ":N") == 0,
          "a reply that does not give the message's time back");
    fbf_jbuf_fini(&b);
}

/* 1: go on; 0: refused (nothing more is decoded, as in the client). */
static int decode(fbf_bv2_decoder *d, char *msg, size_t len)
{
    bool was_ended = d->ended;
    fbf_error err;
    fbf_error_clear(&err);
    int rc = fbf_bv2_decode(d, msg, len, &err);
    if (getenv("FBF_FUZZ_VERBOSE"))
        fprintf(stderr, "decode(%zu bytes) = %d: %s (%zu events)\n", len, rc, err.text,
                rc < 0 ? (size_t)0 : d->n);
    if (rc < 0) {
        check(err.text[0] != '\0', "an error without a message");
        check(rc == -EPROTO || rc == -ENOMEM, "an errno the codec does not promise");
        return 0;
    }
    check(rc == 0, "a positive return");
    check_events(d, was_ended);
    return 1;
}

static void messages(fbf_bv2_decoder *d, const uint8_t *data, size_t size)
{
    for (size_t at = 0; at <= size;) {
        const uint8_t *sep = size > at ? memchr(data + at, 0x01, size - at) : NULL;
        size_t n = sep ? (size_t)(sep - (data + at)) : size - at;
        char *msg = malloc(n + 1);
        check(msg != NULL, "out of memory");
        memcpy(msg, data + at, n);
        msg[n] = '\0';
        int go = decode(d, msg, n);
        free(msg);
        if (!go)
            return;
        at += n + 1;
    }
}

static void frames(fbf_bv2_decoder *d, const uint8_t *data, size_t size, size_t max)
{
    int sv[2];
    check(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0, "socketpair");
    /* The whole input fits the socket's buffer (inputs above 64 KiB are
     * skipped), so one write before any read never blocks. */
    for (size_t off = 0; off < size;) {
        ssize_t k = write(sv[1], data + off, size - off);
        check(k > 0, "write to the socketpair");
        off += (size_t)k;
    }
    close(sv[1]);
    fbf_bv2_reader rd;
    fbf_bv2_reader_init(&rd, sv[0], max);
    for (;;) {
        char *msg;
        size_t len;
        bool closed;
        fbf_error err;
        fbf_error_clear(&err);
        int rc = fbf_bv2_frame_read(&rd, &msg, &len, &closed, &err);
        if (rc < 0) {
            check(err.text[0] != '\0', "a frame error without a message");
            check(rc == -EPIPE || rc == -EMSGSIZE || (!closed && (rc == -EIO || rc == -ENOMEM)),
                  "a frame errno the reader does not promise");
            break;
        }
        check(len <= max && msg[len] == '\0', "a frame above the limit or unterminated");
        if (!decode(d, msg, len))
            break;
    }
    fbf_bv2_reader_fini(&rd);
    close(sv[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 || size > 65536)
        return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    static const size_t limits[] = {16, 64, 1024, 1 << 20};
    fbf_bv2_decoder d;
    fbf_bv2_decoder_init(&d, "127.0.0.1", 6379, "/tmp/fuzz.sock");
    char begins[] = "3:0|0:A";
    bool go = (mode & 2) || decode(&d, begins, sizeof begins - 1);
    check(go, "the fixed A refused");
    if (mode & 1)
        frames(&d, data, size, limits[(mode >> 2) & 3]);
    else
        messages(&d, data, size);
    fbf_bv2_decoder_fini(&d);
    return 0;
}
