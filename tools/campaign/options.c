/*
 * options: a campaign's option strings (see options.h).
 */
#include "tools/campaign/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* fastbf-replay options the campaign sets for every cell, or that would
 * put another scheduler in place of the in-process one. */
static const struct {
    const char *name;
    const char *why;
} reserved[] = {
    {"out", "the campaign sets it for each cell"},
    {"policy", "the campaign sets it for each cell (policies)"},
    {"reservation-depth", "the campaign sets it for each cell (reservation_depths)"},
    {"nb-res", "the campaign sets it for each cell (platform_sizes)"},
    {"max-jobs", "the campaign sets it for each cell (max_jobs)"},
    {"scheduler", "cells run fastbf in process (--inproc)"},
    {"endpoint", "cells run fastbf in process (--inproc)"},
    {"edc-library", "cells run fastbf in process (--inproc)"},
};

char *fbf_cmp_expand_seed(const char *s, const char *seed)
{
    size_t n = 0, sl = strlen(seed);
    for (const char *p = s; (p = strstr(p, "{seed}")); p += 6)
        n++;
    char *o = malloc(strlen(s) + n * sl + 1), *w = o;
    if (!o)
        return NULL;
    for (const char *p = s; *p;) {
        if (strncmp(p, "{seed}", 6) == 0) {
            memcpy(w, seed, sl);
            w += sl;
            p += 6;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    return o;
}

int fbf_cmp_split_words(const char *s, char ***words, size_t *n, fbf_error *err)
{
    size_t cap = 4, nw = 0;
    char **w = malloc((cap + 1) * sizeof *w);
    char *buf = malloc(strlen(s) + 1);
    int rc = 0;
    if (!w || !buf) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto out;
    }
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        char *o = buf;
        while (*p && *p != ' ' && *p != '\t') {
            if (*p == '\'' || *p == '"') {
                char q = *p++;
                while (*p && *p != q)
                    *o++ = *p++;
                if (*p != q) {
                    rc = fbf_errorf(err, -EINVAL, "unterminated %c in '%s'", q, s);
                    goto out;
                }
                p++;
            } else {
                *o++ = *p++;
            }
        }
        *o = '\0';
        if (nw == cap) {
            char **nwv = realloc(w, (cap * 2 + 1) * sizeof *w);
            if (!nwv) {
                rc = fbf_errorf(err, -ENOMEM, "out of memory");
                goto out;
            }
            w = nwv;
            cap *= 2;
        }
        if (!(w[nw] = strdup(buf))) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            goto out;
        }
        nw++;
    }
out:
    free(buf);
    if (rc) {
        for (size_t i = 0; w && i < nw; i++)
            free(w[i]);
        free(w);
        return rc;
    }
    w[nw] = NULL;
    *words = w;
    *n = nw;
    return 0;
}

/* The option words of one options item, checked against the reserved
 * options (a unique prefix, as getopt_long takes it, counts too). */
int fbf_cmp_check_options(const char *file, int line, const char *opt, fbf_error *err)
{
    char *x = fbf_cmp_expand_seed(opt, "0");
    if (!x)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char **w;
    size_t n;
    fbf_error e2;
    int rc = fbf_cmp_split_words(x, &w, &n, &e2);
    free(x);
    if (rc)
        return fbf_errorf(err, rc, "%s:%d: options: %s", file, line, e2.text);
    for (size_t i = 0; i < n && !rc; i++) {
        if (strncmp(w[i], "--", 2) != 0 || !w[i][2])
            continue;
        size_t len = strcspn(w[i] + 2, "=");
        for (size_t r = 0; r < sizeof reserved / sizeof reserved[0] && !rc; r++)
            if (len <= strlen(reserved[r].name) && strncmp(w[i] + 2, reserved[r].name, len) == 0)
                rc = fbf_errorf(err, -EINVAL, "%s:%d: options: '%s' cannot be an option here: %s",
                                file, line, w[i], reserved[r].why);
    }
    for (size_t i = 0; i < n; i++)
        free(w[i]);
    free(w);
    return rc;
}
