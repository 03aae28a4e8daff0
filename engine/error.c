/*
 * error: fills fbf_error messages; see error.h.
 */
#include "engine/error.h"

#include <stdarg.h>
#include <stdio.h>

int fbf_errorf(fbf_error *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->text, sizeof err->text, fmt, ap);
        va_end(ap);
    }
    return code;
}

void fbf_error_clear(fbf_error *err)
{
    if (err)
        err->text[0] = '\0';
}
