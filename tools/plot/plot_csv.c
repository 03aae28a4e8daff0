/*
 * plot_csv: out_jobs.csv into fbf_plot_jobs; see plot_csv.h.
 *
 * One pass over the file: each row's fields are copied, unquoted and
 * NUL-terminated, into a scratch buffer, then checked column by column.
 */
#include "tools/plot/plot_csv.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum col { C_ID, C_SUBMIT, C_RES, C_STATE, C_START, C_FINISH, C_ALLOC, C_META, NCOLS };

static const char *const col_name[NCOLS] = {
    "job_id",        "submission_time", "requested_number_of_resources", "final_state",
    "starting_time", "finish_time",     "allocated_resources",           "metadata"};

static const char *const state_name[FBF_PLOT_NSTATES] = {
    "COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED", "COMPLETED_FAILED",
    "REJECTED"};

/* The row being read: its fields' text in scratch, each NUL-terminated. */
typedef struct row {
    char *scratch;
    size_t len, cap;
    size_t *field; /* offsets into scratch */
    size_t nfield, fcap;
    uint32_t line, index; /* first line; data row number (1: first after the header) */
} row;

typedef struct reader {
    const char *p, *end;
    uint32_t line;
    row r;
    int col[NCOLS];          /* field index of each column; -1: absent */
    size_t ncols;            /* fields in the header */
    size_t jcap, rcap, icap; /* capacities of the arrays of fbf_plot_jobs */
    fbf_error *err;
} reader;

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return true;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return false;
    *p = q;
    *cap = c;
    return true;
}

static bool put(row *r, char c)
{
    if (!grow((void **)&r->scratch, &r->cap, r->len + 1, 1))
        return false;
    r->scratch[r->len++] = c;
    return true;
}

static const char *field(const reader *rd, int f) { return rd->r.scratch + rd->r.field[f]; }

/* Quotes at most 40 characters of s for a message. */
static const char *shown(const char *s, char buf[64])
{
    size_t n = strlen(s);
    if (n > 40)
        snprintf(buf, 64, "'%.37s...'", s);
    else
        snprintf(buf, 64, "'%s'", s);
    return buf;
}

/* "row 4 (line 5, job 17)", or without the job before it is known. */
static const char *where(const reader *rd, char buf[128])
{
    const row *r = &rd->r;
    if (rd->col[C_ID] >= 0 && (size_t)rd->col[C_ID] < r->nfield) {
        char id[64];
        snprintf(buf, 128, "row %u (line %u, job %s)", r->index, r->line,
                 shown(field(rd, rd->col[C_ID]), id));
    } else {
        snprintf(buf, 128, "row %u (line %u)", r->index, r->line);
    }
    return buf;
}

/* "header (line 1)" or "row 4 (line 5)", before the fields are known. */
static const char *row_name(const row *r, char buf[64])
{
    if (r->index == 0)
        snprintf(buf, 64, "header (line %u)", r->line);
    else
        snprintf(buf, 64, "row %u (line %u)", r->index, r->line);
    return buf;
}

/* Reads one row into rd->r. 1: a row, 0: end of text, <0: error. Blank
 * lines are skipped. */
static int read_row(reader *rd)
{
    row *r = &rd->r;
    char w[64];
    while (rd->p < rd->end && (*rd->p == '\n' || *rd->p == '\r')) {
        rd->line += *rd->p == '\n';
        rd->p++;
    }
    if (rd->p >= rd->end)
        return 0;
    r->len = r->nfield = 0;
    r->line = rd->line;
    for (;;) {
        if (!grow((void **)&r->field, &r->fcap, r->nfield + 1, sizeof *r->field))
            return fbf_errorf(rd->err, -ENOMEM, "out of memory");
        r->field[r->nfield++] = r->len;
        if (rd->p < rd->end && *rd->p == '"') {
            uint32_t opened = rd->line;
            rd->p++;
            for (;;) {
                if (rd->p >= rd->end)
                    return fbf_errorf(rd->err, -EINVAL,
                                      "%s: field %zu: the quote opened on line %u is never "
                                      "closed",
                                      row_name(r, w), r->nfield, opened);
                char c = *rd->p++;
                if (c == '"' && rd->p < rd->end && *rd->p == '"')
                    rd->p++;
                else if (c == '"')
                    break;
                rd->line += c == '\n';
                if (!put(r, c))
                    return fbf_errorf(rd->err, -ENOMEM, "out of memory");
            }
            if (rd->p < rd->end && *rd->p == '\r')
                rd->p++;
            if (rd->p < rd->end && *rd->p != ',' && *rd->p != '\n')
                return fbf_errorf(rd->err, -EINVAL, "%s: field %zu: text after its closing quote",
                                  row_name(r, w), r->nfield);
        } else {
            while (rd->p < rd->end && *rd->p != ',' && *rd->p != '\n')
                if (!put(r, *rd->p++))
                    return fbf_errorf(rd->err, -ENOMEM, "out of memory");
            if (r->len > r->field[r->nfield - 1] && r->scratch[r->len - 1] == '\r')
                r->len--;
        }
        if (!put(r, '\0'))
            return fbf_errorf(rd->err, -ENOMEM, "out of memory");
        if (rd->p < rd->end && *rd->p == ',') {
            rd->p++;
            continue;
        }
        if (rd->p < rd->end) { /* the newline */
            rd->p++;
            rd->line++;
        }
        return 1;
    }
}

static int header(reader *rd)
{
    /* A UTF-8 byte order mark, as spreadsheets write. */
    if (rd->end - rd->p >= 3 && !memcmp(rd->p, "\xEF\xBB\xBF", 3))
        rd->p += 3;
    int rc = read_row(rd);
    if (rc < 0)
        return rc;
    if (rc == 0)
        return fbf_errorf(rd->err, -EINVAL,
                          "empty file: no header line (Batsim leaves out_jobs.csv empty "
                          "when it aborts)");
    for (int c = 0; c < NCOLS; c++) {
        rd->col[c] = -1;
        for (size_t f = 0; f < rd->r.nfield && rd->col[c] < 0; f++)
            if (!strcmp(field(rd, (int)f), col_name[c]))
                rd->col[c] = (int)f;
        if (rd->col[c] < 0 && c != C_META)
            return fbf_errorf(rd->err, -EINVAL, "header (line %u): no column '%s'", rd->r.line,
                              col_name[c]);
    }
    rd->ncols = rd->r.nfield;
    return 0;
}

static int bad(reader *rd, int c, const char *what)
{
    char w[128], v[64];
    return fbf_errorf(rd->err, -EINVAL, "%s: column '%s': %s: %s", where(rd, w), col_name[c], what,
                      shown(field(rd, rd->col[c]), v));
}

static int number(reader *rd, int c, double *out)
{
    const char *s = field(rd, rd->col[c]);
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (!*s || *e || e == s)
        return bad(rd, c, *s ? "not a number" : "empty, a number was expected");
    if (!isfinite(v))
        return bad(rd, c, "not a finite time");
    *out = v;
    return 0;
}

static int integer(reader *rd, int c, int64_t *out)
{
    const char *s = field(rd, rd->col[c]);
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (!*s || *e || errno)
        return bad(rd, c, "not an integer");
    if (v < 1)
        return bad(rd, c, "must be at least 1");
    *out = v;
    return 0;
}

static uint8_t reason_of(const char *m)
{
    static const struct {
        const char *word;
        uint8_t reason;
    } words[] = {{"head", FBF_PLOT_HEAD},
                 {"backfilled", FBF_PLOT_BACKFILLED},
                 {"reservation", FBF_PLOT_RESERVATION}};
    for (const char *p = m; (p = strstr(p, "reason=")); p += 7) {
        if (p != m && !strchr(" ,;\t", p[-1]))
            continue;
        const char *v = p + 7;
        size_t n = strcspn(v, " ,;\t");
        for (size_t i = 0; i < sizeof words / sizeof *words; i++)
            if (n == strlen(words[i].word) && !memcmp(v, words[i].word, n))
                return words[i].reason;
    }
    return FBF_PLOT_UNTAGGED;
}

int fbf_plot_intervals_parse(const char *s, size_t len, fbf_plot_range *out, size_t cap, size_t *n,
                             fbf_error *err)
{
    const char *p = s, *end = s + len;
    *n = 0;
    while (p < end && *p == ' ')
        p++;
    while (p < end) {
        uint64_t v[2] = {0, 0};
        int k = 0;
        for (;; k++) {
            if (p >= end || *p < '0' || *p > '9')
                return fbf_errorf(err, -EINVAL, "expected a resource number at offset %zu",
                                  (size_t)(p - s));
            for (; p < end && *p >= '0' && *p <= '9'; p++)
                if ((v[k] = v[k] * 10 + (uint64_t)(*p - '0')) >= (1u << 31))
                    return fbf_errorf(err, -EINVAL, "resource number too large (2^31 or more)");
            if (k == 1 || p >= end || *p != '-')
                break;
            p++;
        }
        if (k == 0)
            v[1] = v[0];
        if (v[1] < v[0])
            return fbf_errorf(err, -EINVAL, "range %llu-%llu ends before it starts",
                              (unsigned long long)v[0], (unsigned long long)v[1]);
        if (*n && v[0] <= out[*n - 1].hi)
            return fbf_errorf(err, -EINVAL, "ranges out of order or overlapping (%llu after %u)",
                              (unsigned long long)v[0], out[*n - 1].hi);
        if (p < end && *p != ' ')
            return fbf_errorf(err, -EINVAL, "unexpected '%c' at offset %zu", *p, (size_t)(p - s));
        if (*n == cap)
            return fbf_errorf(err, -E2BIG, "more than %zu ranges", cap);
        out[(*n)++] = (fbf_plot_range){(uint32_t)v[0], (uint32_t)v[1]};
        while (p < end && *p == ' ')
            p++;
    }
    return 0;
}

static int job_row(reader *rd, fbf_plot_jobs *J)
{
    row *r = &rd->r;
    char w[128];
    if (r->nfield != rd->ncols)
        return fbf_errorf(rd->err, -EINVAL, "%s: %zu fields, the header has %zu", where(rd, w),
                          r->nfield, rd->ncols);
    if (!grow((void **)&J->jobs, &rd->jcap, J->n + 1, sizeof *J->jobs))
        return fbf_errorf(rd->err, -ENOMEM, "out of memory");
    fbf_plot_job *j = &J->jobs[J->n];
    memset(j, 0, sizeof *j);
    j->line = r->line;
    const char *id = field(rd, rd->col[C_ID]);
    if (!*id)
        return fbf_errorf(rd->err, -EINVAL, "%s: column 'job_id': empty", where(rd, w));
    const char *st = field(rd, rd->col[C_STATE]);
    int s = 0;
    while (s < FBF_PLOT_NSTATES && strcmp(st, state_name[s]))
        s++;
    if (s == FBF_PLOT_NSTATES)
        return bad(rd, C_STATE, "not a final state of Batsim");
    j->state = (uint8_t)s;
    int rc;
    if ((rc = number(rd, C_SUBMIT, &j->submit)) || (rc = integer(rd, C_RES, &j->res)))
        return rc;
    if (s != FBF_PLOT_REJECTED) {
        if ((rc = number(rd, C_START, &j->start)) || (rc = number(rd, C_FINISH, &j->finish)))
            return rc;
        if (j->start < j->submit)
            return bad(rd, C_START, "before its submission_time");
        if (j->finish < j->start)
            return bad(rd, C_FINISH, "before its starting_time");
        const char *a = field(rd, rd->col[C_ALLOC]);
        size_t len = strlen(a), cap = len / 2 + 1;
        if (!grow((void **)&J->ranges, &rd->rcap, J->nranges + cap, sizeof *J->ranges))
            return fbf_errorf(rd->err, -ENOMEM, "out of memory");
        size_t n;
        fbf_error e;
        if ((rc = fbf_plot_intervals_parse(a, len, J->ranges + J->nranges, cap, &n, &e)))
            return bad(rd, C_ALLOC, e.text);
        j->range0 = J->nranges;
        j->nranges = (uint32_t)n;
        for (size_t i = 0; i < n; i++) {
            const fbf_plot_range *g = &J->ranges[J->nranges + i];
            j->nalloc += (int64_t)g->hi - g->lo + 1;
        }
        if (n && J->ranges[J->nranges + n - 1].hi > J->max_resource)
            J->max_resource = J->ranges[J->nranges + n - 1].hi;
        J->nranges += n;
    }
    if (rd->col[C_META] >= 0)
        j->reason = reason_of(field(rd, rd->col[C_META]));
    J->tagged += j->reason != FBF_PLOT_UNTAGGED;
    size_t idn = strlen(id) + 1;
    if (J->ids_len + idn > UINT32_MAX) /* id_off is 32 bits */
        return fbf_errorf(rd->err, -E2BIG, "%s: more than 4 GiB of job ids", where(rd, w));
    if (!grow((void **)&J->ids, &rd->icap, J->ids_len + idn, 1))
        return fbf_errorf(rd->err, -ENOMEM, "out of memory");
    memcpy(J->ids + J->ids_len, id, idn);
    j->id_off = (uint32_t)J->ids_len;
    J->ids_len += idn;
    if (j->res > J->max_res)
        J->max_res = j->res;
    J->count[s]++;
    J->n++;
    return 0;
}

void fbf_plot_jobs_fini(fbf_plot_jobs *j)
{
    free(j->jobs);
    free(j->ranges);
    free(j->ids);
    memset(j, 0, sizeof *j);
    j->max_resource = -1;
}

int fbf_plot_jobs_parse(fbf_plot_jobs *out, const char *text, size_t len, fbf_error *err)
{
    memset(out, 0, sizeof *out);
    out->max_resource = -1;
    reader rd = {.p = text, .end = text + len, .line = 1, .err = err};
    int rc = header(&rd);
    while (rc == 0) {
        rd.r.index++;
        if ((rc = read_row(&rd)) <= 0)
            break;
        rc = job_row(&rd, out);
    }
    free(rd.r.scratch);
    free(rd.r.field);
    if (rc < 0)
        fbf_plot_jobs_fini(out);
    return rc < 0 ? rc : 0;
}

int fbf_plot_jobs_read(fbf_plot_jobs *out, const char *path, fbf_error *err)
{
    memset(out, 0, sizeof *out);
    out->max_resource = -1;
    /* gzread passes a file that is not gzip through unchanged. */
    gzFile f = gzopen(path, "rb");
    if (!f)
        return fbf_errorf(err, errno ? -errno : -ENOMEM, "cannot open: %s",
                          errno ? strerror(errno) : "out of memory");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int n;
    do {
        if (!grow((void **)&buf, &cap, len + (1u << 20), 1)) {
            free(buf);
            gzclose(f);
            return fbf_errorf(err, -ENOMEM, "out of memory");
        }
        n = gzread(f, buf + len, (unsigned)(cap - len));
        if (n > 0)
            len += (size_t)n;
    } while (n > 0);
    int zerr;
    const char *why = n < 0 ? gzerror(f, &zerr) : NULL;
    if (why) {
        int rc = fbf_errorf(err, -EIO, "cannot read: %s", zerr == Z_ERRNO ? strerror(errno) : why);
        free(buf);
        gzclose(f);
        return rc;
    }
    gzclose(f);
    int rc = fbf_plot_jobs_parse(out, buf, len, err);
    free(buf);
    return rc;
}
