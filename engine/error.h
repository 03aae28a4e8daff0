/*
 * error: the one error convention of fastbf.
 *
 * Functions return 0 on success and a negative errno-style code on failure.
 * Anything a user may see also carries a human-readable message in an
 * fbf_error filled by fbf_errorf(), so a failure reads in one line:
 *
 *     return fbf_errorf(err, -EINVAL, "job %s: res %u > %u", id, res, nb);
 *
 * An fbf_error pointer may be NULL when the caller does not want the text.
 */
#ifndef FBF_ERROR_H
#define FBF_ERROR_H

#include <stddef.h>

typedef struct fbf_error {
    char text[256];
} fbf_error;

/* Formats the message into err (if not NULL) and returns code unchanged. */
int fbf_errorf(fbf_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Clears the message. */
void fbf_error_clear(fbf_error *err);

#endif
