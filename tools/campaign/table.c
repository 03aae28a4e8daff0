/*
 * table: see table.h.
 */
#include "tools/campaign/table.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tools/campaign/files.h"
#include "tools/campaign/run.h"

void fbf_cmp_format_double(double v, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.15g", v);
    if (strtod(buf, NULL) != v)
        snprintf(buf, cap, "%.17g", v);
}

/* The number at a dotted path of o ("wall_s.total"); false when absent
 * or not a finite number (cJSON writes NaN and infinities as null). */
static bool number_at(const cJSON *o, const char *path, double *v)
{
    char key[64];
    const char *p = path;
    while (o && *p) {
        size_t n = strcspn(p, ".");
        snprintf(key, sizeof key, "%.*s", (int)n, p);
        o = cJSON_GetObjectItemCaseSensitive(o, key);
        p += n + (p[n] == '.');
    }
    if (!cJSON_IsNumber(o) || !isfinite(o->valuedouble))
        return false;
    *v = o->valuedouble;
    return true;
}

static const char *const fig_path[FBF_CMP_NFIG] = {
    "jobs.done", "mean_wait", "mean_bounded_slowdown", "utilization", "makespan", "wall_s.total",
};

static int load_row(const fbf_cmp_cell *c, FILE *log, fbf_cmp_row *r, fbf_error *err)
{
    memset(r, 0, sizeof *r);
    r->cell = c;
    snprintf(r->nb_res, sizeof r->nb_res, "%s", c->nb_res);
    int st = fbf_cmp_cell_state(c, r->note, sizeof r->note, err);
    if (st < 0)
        return st;
    r->state = st;
    if (st != FBF_CMP_DONE)
        return 0;
    char *p = fbf_cmp_strf("%s/summary.json", c->dir);
    if (!p)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    fbf_error e2;
    char *text = fbf_cmp_read_file(p, NULL, NULL, &e2);
    cJSON *j = text ? cJSON_Parse(text) : NULL;
    if (!j) {
        snprintf(r->note, sizeof r->note, "marked done but %.170s",
                 text ? "summary.json does not parse" : e2.text);
        fprintf(log, "fastbf-campaign: cell %zu %s: %s\n", c->index, c->name, r->note);
        r->state = FBF_CMP_FAILED;
    } else {
        for (int f = 0; f < FBF_CMP_NFIG; f++)
            r->has[f] = number_at(j, fig_path[f], &r->fig[f]);
        double nb;
        if (!strcmp(c->nb_res, "default") && number_at(j, "nb_res", &nb))
            snprintf(r->nb_res, sizeof r->nb_res, "%.0f", nb);
    }
    cJSON_Delete(j);
    free(text);
    free(p);
    return 0;
}

int fbf_cmp_rows_load(const fbf_cmp_cell *cells, size_t n, FILE *log, fbf_cmp_row **out,
                      fbf_error *err)
{
    fbf_cmp_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        int rc = load_row(&cells[i], log, &rows[i], err);
        if (rc) {
            free(rows);
            return rc;
        }
    }
    *out = rows;
    return 0;
}

static const char *status_name(int st)
{
    return st == FBF_CMP_DONE ? "done" : st == FBF_CMP_FAILED ? "failed" : "pending";
}

/* A CSV field, quoted when it holds a comma, a quote or a line break. */
static void csv_field(FILE *f, const char *s, bool last)
{
    if (strpbrk(s, ",\"\n\r")) {
        fputc('"', f);
        for (; *s; s++) {
            if (*s == '"')
                fputc('"', f);
            fputc(*s, f);
        }
        fputc('"', f);
    } else {
        fputs(s, f);
    }
    fputc(last ? '\n' : ',', f);
}

/* A Markdown table cell: | and line breaks would end it. */
static void md_field(FILE *f, const char *s)
{
    fputs(" ", f);
    if (!*s)
        fputs(" ", f);
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n' || *s == '\r')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
    fputs(" |", f);
}

static const char *const param_head[] = {
    "index", "cell", "trace", "policy", "reservation_depth", "nb_res", "max_jobs", "seed", "options",
    "status",
};
static const char *const fig_head[FBF_CMP_NFIG] = {
    "jobs", "mean_wait_s", "mean_bounded_slowdown", "utilization", "makespan_s", "wall_s",
};
/* Markdown rounding of each figure. */
static const char *const fig_md[FBF_CMP_NFIG] = {"%.0f", "%.1f", "%.3f", "%.4f", "%.0f", "%.3f"};

#define NPARAM (sizeof param_head / sizeof param_head[0])

static void params(const fbf_cmp_row *r, const char *v[NPARAM], char *idx, size_t cap)
{
    const fbf_cmp_cell *c = r->cell;
    snprintf(idx, cap, "%zu", c->index);
    const char *vals[NPARAM] = {idx,         c->name,     c->trace,   c->policy,
                                c->depth,    r->nb_res,   c->max_jobs, c->seed,
                                c->options,  status_name(r->state)};
    memcpy(v, vals, sizeof vals);
}

static int write_csv(const char *path, const fbf_cmp_row *rows, size_t n, fbf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < NPARAM; i++)
        csv_field(f, param_head[i], false);
    for (int i = 0; i < FBF_CMP_NFIG; i++)
        csv_field(f, fig_head[i], false);
    csv_field(f, "note", true);
    for (size_t k = 0; k < n; k++) {
        const char *v[NPARAM];
        char idx[24], num[40];
        params(&rows[k], v, idx, sizeof idx);
        for (size_t i = 0; i < NPARAM; i++)
            csv_field(f, v[i], false);
        for (int i = 0; i < FBF_CMP_NFIG; i++) {
            num[0] = '\0';
            if (rows[k].has[i])
                fbf_cmp_format_double(rows[k].fig[i], num, sizeof num);
            csv_field(f, num, false);
        }
        csv_field(f, rows[k].state == FBF_CMP_FAILED ? rows[k].note : "", true);
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? fbf_errorf(err, -ENOMEM, "out of memory")
                 : fbf_cmp_write_atomic(path, buf, len, err);
    free(buf);
    return rc;
}

static int write_md(const char *path, const fbf_cmp_row *rows, size_t n, fbf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    fputs("|", f);
    for (size_t i = 0; i < NPARAM; i++)
        md_field(f, param_head[i]);
    for (int i = 0; i < FBF_CMP_NFIG; i++)
        md_field(f, fig_head[i]);
    md_field(f, "note");
    fputs("\n|", f);
    for (size_t i = 0; i < NPARAM + FBF_CMP_NFIG + 1; i++)
        fputs(i >= NPARAM && i < NPARAM + FBF_CMP_NFIG ? "---:|" : "---|", f);
    fputc('\n', f);
    for (size_t k = 0; k < n; k++) {
        const char *v[NPARAM];
        char idx[24], num[64];
        params(&rows[k], v, idx, sizeof idx);
        fputs("|", f);
        for (size_t i = 0; i < NPARAM; i++)
            md_field(f, v[i]);
        for (int i = 0; i < FBF_CMP_NFIG; i++) {
            num[0] = '\0';
            if (rows[k].has[i])
                snprintf(num, sizeof num, fig_md[i], rows[k].fig[i]);
            md_field(f, num);
        }
        md_field(f, rows[k].state == FBF_CMP_FAILED ? rows[k].note : "");
        fputc('\n', f);
    }
    int bad = ferror(f);
    fclose(f);
    int rc = bad ? fbf_errorf(err, -ENOMEM, "out of memory")
                 : fbf_cmp_write_atomic(path, buf, len, err);
    free(buf);
    return rc;
}

int fbf_cmp_table_write(const char *out, const fbf_cmp_row *rows, size_t n, fbf_error *err)
{
    int rc = fbf_cmp_mkdirs(out, err);
    char *csv = fbf_cmp_strf("%s/results.csv", out), *md = fbf_cmp_strf("%s/results.md", out);
    if (!rc && (!csv || !md))
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    if (!rc)
        rc = write_csv(csv, rows, n, err);
    if (!rc)
        rc = write_md(md, rows, n, err);
    free(csv);
    free(md);
    return rc;
}
