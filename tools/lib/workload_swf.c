/*
 * workload_swf: the Standard Workload Format reader (plain or gzip), the
 * SWF half of fbf_workload_read(); workload.h lists the field rules.
 *
 * Why this shape: a trace is millions of short lines of small integers, so
 * the reader streams line by line (never the whole file in memory) and
 * parses integers by hand, falling back to strtod only for the rare
 * fraction or exponent.
 *
 * Invariants: every job line is either added or counted under exactly one
 * skipped[] reason (a short line as such, else the first that applies, in
 * fbf_wl_skip order), so the counts add up to the lines left out. A field
 * that is not a number or is out of range, a job number that is not an
 * integer >= 0, and a line of fewer than SWF's 18 fields (unless
 * skip_short_lines) are errors: skipping such a line silently would hide
 * a damaged file (a cut line, fields lost to a bad conversion). Header
 * lines count wherever they appear, but with max_jobs the reading stops at
 * the first job past the limit: SWF puts its headers first, so nothing is
 * lost.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/workload_priv.h"

/* The largest magnitude a field may have: every integer up to it is exact
 * in a double, and it converts to int64_t without overflow. */
#define SWF_FIELD_MAX 9e15

/* The fields of an SWF job line. */
#define SWF_FIELDS 18

/* How many whitespace-separated tokens follow at s, up to max. */
static int count_tokens(const char *s, int max)
{
    int n = 0;
    while (n < max) {
        while (fbf_wl_is_space(*s))
            s++;
        if (!*s)
            break;
        n++;
        while (*s && !fbf_wl_is_space(*s))
            s++;
    }
    return n;
}

/* Parses the next whitespace-separated number at *pp. 1: parsed; 0: no
 * more tokens; -1: a token that is not a number (*pp left at it). The
 * integer path avoids strtod, which dominates reading otherwise. */
static int next_number(const char **pp, double *out)
{
    const char *s = *pp;
    while (fbf_wl_is_space(*s))
        s++;
    if (!*s) {
        *pp = s;
        return 0;
    }
    const char *t = s;
    bool neg = *t == '-';
    if (neg || *t == '+')
        t++;
    uint64_t v = 0;
    int digits = 0;
    while (*t >= '0' && *t <= '9' && digits < 18) {
        v = v * 10 + (uint64_t)(*t - '0');
        t++;
        digits++;
    }
    if (digits > 0 && (!*t || fbf_wl_is_space(*t))) {
        *out = neg ? -(double)v : (double)v;
        *pp = t;
        return 1;
    }
    char *end;
    double d = strtod(s, &end);
    if (end == s || (*end && !fbf_wl_is_space(*end)) || isnan(d)) {
        *pp = s;
        return -1;
    }
    *out = d;
    *pp = end;
    return 1;
}

/* "; MaxProcs: 338 (batch ...)" -> 338 in *val; other header lines ignored. */
static void swf_header(const char *s, int64_t *maxprocs, int64_t *maxnodes)
{
    while (fbf_wl_is_space(*s))
        s++;
    int64_t *dst = NULL;
    if (strncmp(s, "MaxProcs:", 9) == 0)
        dst = maxprocs;
    else if (strncmp(s, "MaxNodes:", 9) == 0)
        dst = maxnodes;
    if (!dst || *dst > 0)
        return; /* the first valid occurrence wins */
    char *end;
    long long v = strtoll(s + 9, &end, 10);
    if (end != s + 9 && v > 0 && v <= UINT32_MAX)
        *dst = v;
}

static void note_skip(fbf_workload *wl, fbf_wl_skip why, size_t line)
{
    if (wl->skipped[why]++ == 0)
        wl->first_skipped_line[why] = line;
}

int fbf_wl_read_swf(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o, fbf_error *err)
{
    char *buf = NULL, idbuf[320];
    size_t cap = 0, len = 0, line = 0;
    int64_t maxprocs = 0, maxnodes = 0;
    int rc = 0, got;
    while ((got = fbf_wl_read_line(gz, &buf, &cap, &len)) > 0) {
        line++;
        const char *s = buf;
        while (fbf_wl_is_space(*s))
            s++;
        if (!*s)
            continue;
        if (*s == ';') {
            swf_header(s + 1, &maxprocs, &maxnodes);
            continue;
        }
        if (o->max_jobs >= 0 && (int64_t)wl->nb_jobs >= o->max_jobs)
            break; /* SWF headers come first: nothing more to learn */
        /* Fields 1 to 12 are read (12: the user), the rest counted. */
        double f[13];
        int nf = 0;
        for (int k = 1; k <= 12; k++)
            f[k] = -1;
        for (int k = 1; k <= 12; k++) {
            int r = next_number(&s, &f[k]);
            if (r == 0)
                break;
            nf++;
            if (r < 0) {
                const char *e = s;
                while (*e && !fbf_wl_is_space(*e))
                    e++;
                rc = fbf_errorf(err, -EINVAL, "%s: line %zu: field %d '%.*s' is not a number",
                                wl->path, line, k, (int)(e - s > 40 ? 40 : e - s), s);
                goto out;
            }
            /* SWF fields are seconds and counts: a value past 9e15 (an
             * infinity from "1e999" included) is damage, and would not
             * convert to a resource count or make a finite time. */
            if (fabs(f[k]) > SWF_FIELD_MAX) {
                rc = fbf_errorf(err, -EINVAL, "%s: line %zu: field %d %g is out of range "
                                "(beyond +-9e15)", wl->path, line, k, f[k]);
                goto out;
            }
        }
        if (nf == 12)
            nf += count_tokens(s, SWF_FIELDS - 12);
        if (nf < SWF_FIELDS && o->skip_short_lines) {
            note_skip(wl, FBF_WL_SKIP_SHORT_LINE, line);
            continue;
        }
        if (nf < SWF_FIELDS) {
            rc = fbf_errorf(err, -EINVAL,
                            "%s: line %zu: %d field%s, an SWF job line has %d "
                            "(--skip-short-lines skips such lines)",
                            wl->path, line, nf, nf == 1 ? "" : "s", SWF_FIELDS);
            goto out;
        }
        if (f[1] < 0 || f[1] != floor(f[1])) {
            rc = fbf_errorf(err, -EINVAL,
                            "%s: line %zu: job number (field 1) %g is not an integer >= 0",
                            wl->path, line, f[1]);
            goto out;
        }
        double res = f[5] > 0 ? f[5] : f[8];
        if (!(res >= 1)) {
            note_skip(wl, FBF_WL_SKIP_NO_PROCS, line);
            continue;
        }
        if (f[4] < 0) {
            note_skip(wl, FBF_WL_SKIP_NEG_RUNTIME, line);
            continue;
        }
        if (f[2] < 0) {
            note_skip(wl, FBF_WL_SKIP_NEG_SUBTIME, line);
            continue;
        }
        snprintf(idbuf, sizeof idbuf, "%s!%lld", wl->name, (long long)f[1]);
        if (fbf_workload_find(wl, idbuf) >= 0) {
            note_skip(wl, FBF_WL_SKIP_DUPLICATE_ID, line);
            continue;
        }
        int64_t prof = fbf_wl_delay_profile(wl, f[4]);
        if (prof < 0) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            goto out;
        }
        double walltime = fbf_wl_pick_walltime(o, f[9], f[4], false);
        rc = fbf_wl_add_checked(wl, idbuf, f[2], f[4], walltime, (int64_t)res, (uint32_t)prof, err);
        if (rc)
            goto out;
        if (f[12] >= 0) {
            char user[48];
            snprintf(user, sizeof user, ",\"user\":%lld", (long long)f[12]);
            if ((rc = fbf_wl_set_extra(wl, user)) < 0) {
                rc = fbf_errorf(err, -ENOMEM, "out of memory");
                goto out;
            }
        }
    }
    if (got == -EILSEQ) {
        rc = fbf_errorf(err, -EINVAL, "%s: line %zu: a NUL byte (binary data, not an SWF trace)",
                        wl->path, line + 1);
        goto out;
    }
    if (got < 0) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory reading line %zu", line + 1);
        goto out;
    }
    const char *zmsg = fbf_wl_gz_failure(gz);
    if (zmsg) {
        rc = fbf_errorf(err, -EIO, "%s: read error after line %zu: %s", wl->path, line, zmsg);
        goto out;
    }
    wl->lines = line;
    wl->nb_res = (uint32_t)(maxprocs > 0 ? maxprocs : maxnodes);
out:
    free(buf);
    return rc;
}
