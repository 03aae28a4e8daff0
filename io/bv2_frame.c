/*
 * bv2_frame: size-prefixed messages on a stream socket (see bv2_frame.h).
 */
#include "io/bv2_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void fbf_bv2_reader_init(fbf_bv2_reader *r, int fd, size_t max)
{
    *r = (fbf_bv2_reader){.fd = fd, .max = max};
}

void fbf_bv2_reader_fini(fbf_bv2_reader *r)
{
    free(r->buf);
    *r = (fbf_bv2_reader){.fd = -1};
}

/* Reads exactly n bytes; *got says how many came before an end or error. */
static int read_all(int fd, char *p, size_t n, size_t *got, fbf_error *err)
{
    *got = 0;
    while (*got < n) {
        ssize_t k = read(fd, p + *got, n - *got);
        if (k > 0) {
            *got += (size_t)k;
            continue;
        }
        if (k == 0)
            return -EPIPE;
        if (errno == EINTR)
            continue;
        return fbf_errorf(err, -EIO, "reading from Batsim: %s", strerror(errno));
    }
    return 0;
}

int fbf_bv2_frame_read(fbf_bv2_reader *r, char **content, size_t *len, bool *closed,
                       fbf_error *err)
{
    *closed = false;
    uint32_t size;
    size_t got;
    int rc = read_all(r->fd, (char *)&size, sizeof size, &got, err);
    if (rc == -EPIPE && got == 0) {
        *closed = true;
        return fbf_errorf(err, -EPIPE, "Batsim closed the connection");
    }
    if (rc == -EPIPE)
        return fbf_errorf(err, -EPIPE, "Batsim closed the connection after %zu of the 4 bytes "
                          "of a message's size", got);
    if (rc < 0)
        return rc;
    if (size > r->max)
        return fbf_errorf(err, -EMSGSIZE, "a message of %lu bytes announced, above the limit of "
                          "%zu bytes (--max-message)", (unsigned long)size, r->max);
    if ((size_t)size + 1 > r->cap) {
        char *b = realloc(r->buf, (size_t)size + 1);
        if (!b)
            return fbf_errorf(err, -ENOMEM, "out of memory for a message of %lu bytes",
                              (unsigned long)size);
        r->buf = b;
        r->cap = (size_t)size + 1;
    }
    rc = read_all(r->fd, r->buf, size, &got, err);
    if (rc == -EPIPE)
        return fbf_errorf(err, -EPIPE, "Batsim closed the connection after %zu of the %lu bytes "
                          "of a message", got, (unsigned long)size);
    if (rc < 0)
        return rc;
    r->buf[size] = '\0';
    *content = r->buf;
    *len = size;
    return 0;
}

static int write_all(int fd, const char *p, size_t n, fbf_error *err)
{
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == ENOTSOCK)
            k = write(fd, p, n);
        if (k >= 0) {
            p += k;
            n -= (size_t)k;
            continue;
        }
        if (errno == EINTR)
            continue;
        return fbf_errorf(err, errno == EPIPE ? -EPIPE : -EIO, "writing to Batsim: %s",
                          strerror(errno));
    }
    return 0;
}

int fbf_bv2_frame_write(int fd, const char *content, size_t len, fbf_error *err)
{
    if (len > UINT32_MAX)
        return fbf_errorf(err, -EMSGSIZE, "a reply of %zu bytes does not fit a 32-bit size",
                          len);
    uint32_t size = (uint32_t)len;
    int rc = write_all(fd, (const char *)&size, sizeof size, err);
    return rc < 0 ? rc : write_all(fd, content, len, err);
}
