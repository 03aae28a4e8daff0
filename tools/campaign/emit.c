/*
 * emit: see emit.h.
 */
#include "tools/campaign/emit.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools/campaign/files.h"

/* A job name from the file's name: [A-Za-z0-9._-], at most 40. */
static void job_name(const char *file, char *out, size_t cap)
{
    const char *b = strrchr(file, '/');
    b = b ? b + 1 : file;
    size_t n = strcspn(b, ".");
    int w = snprintf(out, cap, "campaign-");
    for (size_t i = 0; i < n && i < 40 && (size_t)w + 1 < cap; i++) {
        char c = b[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_';
        out[w++] = ok ? c : '_';
    }
    out[w] = '\0';
}

/* s with { and } doubled: flux submit --cc applies Python's str.format()
 * to the command and options. */
static char *flux_literal(const char *s)
{
    size_t n = strlen(s) + 1;
    for (const char *p = s; *p; p++)
        n += *p == '{' || *p == '}';
    char *o = malloc(n), *w = o;
    if (!o)
        return NULL;
    for (const char *p = s; *p; p++) {
        if (*p == '{' || *p == '}')
            *w++ = *p;
        *w++ = *p;
    }
    *w = '\0';
    return o;
}

/* The quoted words of the cell command after "--cell X". */
static char *tail_args(const fbf_cmp_spec *s, const fbf_cmp_emit_opts *o, bool flux)
{
    const char *raw[] = {"--out", s->out, o->replay ? "--replay" : NULL, o->replay, s->abs_file};
    char *out = strdup(""), *tmp;
    for (size_t i = 0; i < sizeof raw / sizeof raw[0] && out; i++) {
        if (i == 2 && !raw[2]) {
            i++;
            continue;
        }
        char *lit = flux ? flux_literal(raw[i]) : strdup(raw[i]);
        char *q = lit ? fbf_cmp_shell_quote(lit) : NULL;
        tmp = q ? fbf_cmp_strf("%s %s", out, q) : NULL;
        free(lit);
        free(q);
        free(out);
        out = tmp;
    }
    return out;
}

static int emit_slurm(FILE *f, const fbf_cmp_spec *s, size_t n, const fbf_cmp_emit_opts *o,
                      const char *self_q, const char *tail, const char *name, fbf_error *err)
{
    /* An #SBATCH line is not a shell line: no quoting, and % starts a
     * filename pattern (%% is a %). */
    if (strpbrk(s->out, " \t\n\"'\\"))
        return fbf_errorf(err, -EINVAL, "--emit slurm: the results folder '%s' has a blank, a quote "
                          "or a backslash, which an #SBATCH line cannot carry; choose another "
                          "with --out", s->out);
    fprintf(f, "#!/bin/bash\n"
               "# fastbf-campaign: the %zu cells of %s as a Slurm job array, one\n"
               "# cell per array task (task I runs cell I; a cell already done is not run\n"
               "# again). Submit with:\n"
               "#   sbatch THIS_SCRIPT\n"
               "# then, once every task has ended, gather the table and plots:\n"
               "#   %s collect%s\n"
               "# Add the #SBATCH lines your site needs (--time, --partition, --account).\n",
            n, s->abs_file, self_q, tail);
    fprintf(f, "#SBATCH --job-name=%s\n", name);
    fprintf(f, "#SBATCH --array=0-%zu", n - 1);
    if (o->throttle)
        fprintf(f, "%%%u", o->throttle);
    fputs("\n#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n#SBATCH --output=", f);
    for (const char *p = s->out; *p; p++)
        fputs(*p == '%' ? "%%" : (char[]){*p, '\0'}, f);
    fputs("/logs/slurm-%A_%a.out\n", f);
    fprintf(f, "set -eu\nexec %s --cell \"$SLURM_ARRAY_TASK_ID\"%s\n", self_q, tail);
    return 0;
}

static int emit_flux(FILE *f, const fbf_cmp_spec *s, size_t n, const char *self_plain_q,
                     const char *self_q, const char *tail, const char *plain_tail,
                     const char *name, fbf_error *err)
{
    char *lit = flux_literal(s->out);
    char *logs = lit ? fbf_cmp_strf("%s/logs/flux-cell-{cc}.out", lit) : NULL;
    char *out_q = logs ? fbf_cmp_shell_quote(logs) : NULL;
    free(logs);
    free(lit);
    if (!out_q)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    fprintf(f, "#!/bin/sh\n"
               "# fastbf-campaign: the %zu cells of %s as one Flux bulk\n"
               "# submission: flux submit --cc=0-%zu submits the job once per index, {cc}\n"
               "# in its command and options becoming the index, the cell the job runs (a\n"
               "# cell already done is not run again). Run with:\n"
               "#   sh THIS_SCRIPT\n"
               "# then, once every job has ended (flux jobs -a), gather the table and plots:\n"
               "#   %s collect%s\n"
               "set -eu\n"
               "flux submit --cc=0-%zu --job-name=%s --ntasks=1 --cores-per-task=1 \\\n"
               "  --output=%s \\\n"
               "  %s --cell '{cc}'%s\n",
            n, s->abs_file, n - 1, self_plain_q, plain_tail, n - 1, name, out_q, self_q, tail);
    free(out_q);
    return 0;
}

int fbf_cmp_emit(FILE *f, const fbf_cmp_spec *s, size_t n, const fbf_cmp_emit_opts *o,
                 fbf_error *err)
{
    bool flux = !strcmp(o->kind, "flux");
    if (!flux && strcmp(o->kind, "slurm"))
        return fbf_errorf(err, -EINVAL, "--emit '%s': slurm or flux", o->kind);
    char *logs = fbf_cmp_strf("%s/logs", s->out);
    int rc = logs ? fbf_cmp_mkdirs(logs, err) : fbf_errorf(err, -ENOMEM, "out of memory");
    free(logs);
    if (rc)
        return rc;
    char name[64];
    job_name(s->file, name, sizeof name);
    char *self_lit = flux ? flux_literal(o->self) : strdup(o->self);
    char *self_q = self_lit ? fbf_cmp_shell_quote(self_lit) : NULL;
    char *self_plain_q = fbf_cmp_shell_quote(o->self);
    char *tail = tail_args(s, o, flux), *plain_tail = tail_args(s, o, false);
    if (!self_q || !self_plain_q || !tail || !plain_tail)
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
    else if (flux)
        rc = emit_flux(f, s, n, self_plain_q, self_q, tail, plain_tail, name, err);
    else
        rc = emit_slurm(f, s, n, o, self_q, tail, name, err);
    free(self_lit);
    free(self_q);
    free(self_plain_q);
    free(tail);
    free(plain_tail);
    if (!rc && (fflush(f) != 0 || ferror(f)))
        rc = fbf_errorf(err, -EIO, "cannot write the script: %s", strerror(errno));
    return rc;
}
