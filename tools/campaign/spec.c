/*
 * spec: the campaign file (see spec.h).
 */
#include "tools/campaign/spec.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policies/registry.h"
#include "tools/campaign/files.h"
#include "tools/campaign/options.h"

/* What each key holds and how its items are checked. */
enum kind { K_TRACE, K_POLICY, K_DEPTH, K_SIZE, K_MAXJOBS, K_SEED, K_OPTIONS, K_PATH };

typedef struct key_def {
    const char *name;
    enum kind kind;
    bool single; /* one item only */
    size_t axis; /* offset of its fbf_cmp_axis in the spec, or of its char * */
} key_def;

static const key_def keys[] = {
    {"traces", K_TRACE, false, offsetof(fbf_cmp_spec, traces)},
    {"policies", K_POLICY, false, offsetof(fbf_cmp_spec, policies)},
    {"reservation_depths", K_DEPTH, false, offsetof(fbf_cmp_spec, depths)},
    {"platform_sizes", K_SIZE, false, offsetof(fbf_cmp_spec, sizes)},
    {"max_jobs", K_MAXJOBS, false, offsetof(fbf_cmp_spec, max_jobs)},
    {"seeds", K_SEED, false, offsetof(fbf_cmp_spec, seeds)},
    {"options", K_OPTIONS, false, offsetof(fbf_cmp_spec, options)},
    {"out", K_PATH, true, offsetof(fbf_cmp_spec, out)},
    {"replay", K_PATH, true, offsetof(fbf_cmp_spec, replay)},
};
#define NKEYS (sizeof keys / sizeof keys[0])
#define KEY_LIST "traces, policies, reservation_depths, platform_sizes, max_jobs, seeds, options, out, replay"

/* One item of a value, with the line it was on. */
typedef struct item {
    char *text;
    int line;
} item;

typedef struct items {
    item *v;
    size_t n, cap;
} items;

static void items_free(items *it)
{
    for (size_t i = 0; i < it->n; i++)
        free(it->v[i].text);
    free(it->v);
    it->v = NULL;
    it->n = it->cap = 0;
}

static int items_add(items *it, char *text, int line)
{
    if (!text)
        return -ENOMEM;
    if (it->n == it->cap) {
        size_t cap = it->cap ? it->cap * 2 : 8;
        item *v = realloc(it->v, cap * sizeof *v);
        if (!v) {
            free(text);
            return -ENOMEM;
        }
        it->v = v;
        it->cap = cap;
    }
    it->v[it->n++] = (item){text, line};
    return 0;
}

/* Parses the items of one physical line's value text into it. *more: the
 * line ended with a comma (the list goes on on the next line). */
static int parse_items(const char *file, int line, const char *key, const char *s, items *it,
                       bool *more, fbf_error *err)
{
    *more = false;
    for (bool first = true;; first = false) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == '\0' && first)
            return fbf_errorf(err, -EINVAL, "%s:%d: %s: no value", file, line, key);
        if (*s == '\0' || *s == ',')
            return fbf_errorf(err, -EINVAL, "%s:%d: %s: empty item (write \"\" for an empty string)",
                              file, line, key);
        char *text;
        if (*s == '"') {
            size_t n = strlen(s);
            text = malloc(n);
            if (!text)
                return fbf_errorf(err, -ENOMEM, "out of memory");
            char *o = text;
            s++;
            while (*s && *s != '"') {
                if (*s == '\\' && (s[1] == '"' || s[1] == '\\'))
                    s++;
                *o++ = *s++;
            }
            *o = '\0';
            if (*s != '"') {
                free(text);
                return fbf_errorf(err, -EINVAL, "%s:%d: %s: unterminated \"", file, line, key);
            }
            s++;
            while (*s == ' ' || *s == '\t')
                s++;
            if (*s && *s != ',') {
                free(text);
                return fbf_errorf(err, -EINVAL, "%s:%d: %s: expected a comma after a quoted item",
                                  file, line, key);
            }
        } else {
            const char *e = s;
            while (*e && *e != ',')
                e++;
            const char *t = e;
            while (t > s && (t[-1] == ' ' || t[-1] == '\t'))
                t--;
            if (memchr(s, '"', (size_t)(t - s)))
                return fbf_errorf(err, -EINVAL, "%s:%d: %s: a double quote inside an item "
                                  "(quote the whole item: \"...\")", file, line, key);
            text = strndup(s, (size_t)(t - s));
            s = e;
        }
        if (items_add(it, text, line) < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        if (*s == '\0')
            return 0;
        s++; /* the comma */
        const char *r = s;
        while (*r == ' ' || *r == '\t')
            r++;
        if (*r == '\0') {
            *more = true;
            return 0;
        }
    }
}

/* A decimal integer in [lo, hi] without sign or blanks, printed back in
 * canonical form into buf. */
static bool canon_uint(const char *s, uint64_t lo, uint64_t hi, char *buf, size_t cap)
{
    if (!isdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return false;
    snprintf(buf, cap, "%llu", v);
    return true;
}

/* Checks and stores one key's items. */
static int take_key(fbf_cmp_spec *s, const key_def *k, int line, items *it, fbf_error *err)
{
    const char *f = s->file;
    if (k->single) {
        if (it->n != 1)
            return fbf_errorf(err, -EINVAL, "%s:%d: %s: one path, not a list", f, line, k->name);
        if (!it->v[0].text[0])
            return fbf_errorf(err, -EINVAL, "%s:%d: %s: empty path", f, line, k->name);
        char **dst = (char **)((char *)s + k->axis);
        if (!(*dst = fbf_cmp_join(s->dir, it->v[0].text)))
            return fbf_errorf(err, -ENOMEM, "out of memory");
        return 0;
    }
    fbf_cmp_axis *ax = (fbf_cmp_axis *)((char *)s + k->axis);
    ax->line = line;
    ax->v = calloc(it->n, sizeof *ax->v);
    if (!ax->v)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < it->n; i++) {
        const char *t = it->v[i].text;
        int l = it->v[i].line;
        char num[32];
        const char *val = t;
        switch (k->kind) {
        case K_TRACE:
            if (!*t)
                return fbf_errorf(err, -EINVAL, "%s:%d: traces: empty path", f, l);
            break;
        case K_POLICY:
            if (!fbf_policy_lookup(t))
                return fbf_errorf(err, -EINVAL, "%s:%d: policies: '%s' is not a policy "
                                  "(fcfs, easy, conservative)", f, l, t);
            break;
        case K_DEPTH:
            if (strcmp(t, "default") && strcmp(t, "unlimited")) {
                if (!canon_uint(t, 1, INT64_MAX, num, sizeof num))
                    return fbf_errorf(err, -EINVAL, "%s:%d: reservation_depths: '%s' is not an "
                                      "integer >= 1, 'unlimited' nor 'default'", f, l, t);
                val = num;
            }
            break;
        case K_SIZE:
            if (strcmp(t, "default")) {
                if (!canon_uint(t, 1, INT32_MAX, num, sizeof num))
                    return fbf_errorf(err, -EINVAL, "%s:%d: platform_sizes: '%s' is not an "
                                      "integer in 1..2147483647 nor 'default'", f, l, t);
                val = num;
            }
            break;
        case K_MAXJOBS:
            if (!strcmp(t, "all")) {
                val = "default";
            } else if (strcmp(t, "default")) {
                if (!canon_uint(t, 0, INT64_MAX, num, sizeof num))
                    return fbf_errorf(err, -EINVAL, "%s:%d: max_jobs: '%s' is not an integer "
                                      ">= 0, 'all' nor 'default'", f, l, t);
                val = num;
            }
            break;
        case K_SEED:
            if (!canon_uint(t, 0, UINT64_MAX, num, sizeof num))
                return fbf_errorf(err, -EINVAL, "%s:%d: seeds: '%s' is not an integer >= 0",
                                  f, l, t);
            val = num;
            break;
        case K_OPTIONS: {
            int rc = fbf_cmp_check_options(f, l, t, err);
            if (rc)
                return rc;
            break;
        }
        case K_PATH:
            break;
        }
        for (size_t j = 0; j < ax->n; j++)
            if (!strcmp(ax->v[j], val))
                return fbf_errorf(err, -EINVAL, "%s:%d: %s: '%s' is listed twice", f, l, k->name,
                                  t);
        if (!(ax->v[ax->n] = strdup(val)))
            return fbf_errorf(err, -ENOMEM, "out of memory");
        ax->n++;
    }
    return 0;
}

static int set_default(fbf_cmp_axis *ax, const char *v)
{
    if (ax->n)
        return 0;
    ax->v = malloc(sizeof *ax->v);
    if (!ax->v || !(ax->v[0] = strdup(v)))
        return -ENOMEM;
    ax->n = 1;
    return 0;
}

/* Every trace, with each seed, names a readable file. */
static int check_traces(const fbf_cmp_spec *s, fbf_error *err)
{
    for (size_t t = 0; t < s->traces.n; t++)
        for (size_t k = 0; k < s->seeds.n; k++) {
            char *x = fbf_cmp_expand_seed(s->traces.v[t], s->seeds.v[k]);
            char *p = x ? fbf_cmp_join(s->dir, x) : NULL;
            int rc = 0;
            if (!p)
                rc = fbf_errorf(err, -ENOMEM, "out of memory");
            else if (access(p, R_OK) < 0)
                rc = fbf_errorf(err, -errno, "%s:%d: traces: '%s': %s", s->file, s->traces.line,
                                x, strerror(errno));
            free(x);
            free(p);
            if (rc)
                return rc;
        }
    return 0;
}

/* <file name without its extension>-results, beside the file. */
static char *default_out(const fbf_cmp_spec *s)
{
    const char *base = strrchr(s->file, '/');
    base = base ? base + 1 : s->file;
    const char *dot = strrchr(base, '.');
    int len = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    return fbf_cmp_strf("%s/%.*s-results", s->dir, len, base);
}

/* Cuts the line at a comment: a # at its start or after a blank, outside
 * double quotes; then the blanks before it. */
static void cut_comment(char *line)
{
    bool quoted = false;
    for (char *p = line; *p; p++) {
        if (quoted && *p == '\\' && p[1])
            p++;
        else if (*p == '"')
            quoted = !quoted;
        else if (!quoted && *p == '#' && (p == line || p[-1] == ' ' || p[-1] == '\t')) {
            *p = '\0';
            break;
        }
    }
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t'))
        line[--n] = '\0';
}

static bool known_key(const char *k, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(keys[i].name) == len && !strncmp(keys[i].name, k, len))
            return true;
    return false;
}

static int parse(fbf_cmp_spec *s, char *text, fbf_error *err)
{
    bool seen[NKEYS] = {false};
    items it = {0};
    const key_def *cur = NULL; /* the key whose list goes on */
    int cur_line = 0, line = 0, rc = 0;
    for (char *p = text; *p && !rc;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        line++;
        size_t len = strlen(p);
        if (len && p[len - 1] == '\r')
            p[--len] = '\0';
        char *q = p;
        while (*q == ' ' || *q == '\t')
            q++;
        char *next = nl ? nl + 1 : p + len;
        if (*q != ';')
            cut_comment(q);
        if (*q == '\0' || *q == ';') {
            p = next;
            continue;
        }
        bool more = false;
        size_t kw = strspn(q, "abcdefghijklmnopqrstuvwxyz_");
        const char *after = q + kw + strspn(q + kw, " \t");
        if (cur && kw && *after == '=' && known_key(q, kw)) {
            rc = fbf_errorf(err, -EINVAL, "%s:%d: %s: the list ends with a comma before '%.*s ='",
                            s->file, it.n ? it.v[it.n - 1].line : cur_line, cur->name, (int)kw, q);
            break;
        }
        if (cur) {
            rc = parse_items(s->file, line, cur->name, q, &it, &more, err);
        } else {
            char *eq = strchr(q, '=');
            char *ke = eq ? eq : q + strlen(q);
            while (ke > q && (ke[-1] == ' ' || ke[-1] == '\t'))
                ke--;
            size_t kl = (size_t)(ke - q);
            if (*q == '[') {
                rc = fbf_errorf(err, -EINVAL, "%s:%d: sections ([...]) are not used: write "
                                "'key = value' lines", s->file, line);
                break;
            }
            bool word = kl > 0;
            for (size_t i = 0; i < kl; i++)
                word &= islower((unsigned char)q[i]) || q[i] == '_';
            if (!eq || !word) {
                rc = fbf_errorf(err, -EINVAL, "%s:%d: expected 'key = value', got '%.60s'",
                                s->file, line, q);
                break;
            }
            for (size_t k = 0; k < NKEYS; k++)
                if (strlen(keys[k].name) == kl && !strncmp(keys[k].name, q, kl)) {
                    if (seen[k]) {
                        rc = fbf_errorf(err, -EINVAL, "%s:%d: %s: given twice", s->file, line,
                                        keys[k].name);
                        break;
                    }
                    seen[k] = true;
                    cur = &keys[k];
                }
            if (rc)
                break;
            if (!cur) {
                rc = fbf_errorf(err, -EINVAL, "%s:%d: unknown key '%.*s' (keys: " KEY_LIST ")",
                                s->file, line, (int)kl, q);
                break;
            }
            cur_line = line;
            rc = parse_items(s->file, line, cur->name, eq + 1, &it, &more, err);
        }
        if (!rc && !more) {
            rc = take_key(s, cur, cur_line, &it, err);
            items_free(&it);
            cur = NULL;
        }
        p = next;
    }
    if (!rc && cur)
        rc = fbf_errorf(err, -EINVAL, "%s:%d: %s: the list ends with a comma", s->file, line,
                        cur->name);
    items_free(&it);
    if (rc)
        return rc;
    if (!seen[0])
        return fbf_errorf(err, -EINVAL, "%s: traces: missing (the workloads to replay)", s->file);
    if (!seen[1])
        return fbf_errorf(err, -EINVAL, "%s: policies: missing (fcfs, easy, conservative)",
                          s->file);
    if (!seen[5]) {
        const fbf_cmp_axis *ax[] = {&s->traces, &s->options};
        for (size_t a = 0; a < 2; a++)
            for (size_t i = 0; i < ax[a]->n; i++)
                if (strstr(ax[a]->v[i], "{seed}"))
                    return fbf_errorf(err, -EINVAL, "%s:%d: %s: '{seed}' without a seeds key",
                                      s->file, ax[a]->line, a ? "options" : "traces");
    }
    return 0;
}

int fbf_cmp_spec_load(const char *path, bool check, fbf_cmp_spec **out, fbf_error *err)
{
    *out = NULL;
    fbf_cmp_spec *s = calloc(1, sizeof *s);
    if (!s)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = 0;
    char *text = NULL;
    if (!(s->file = strdup(path))) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto fail;
    }
    size_t len;
    if (!(text = fbf_cmp_read_file(path, &len, &rc, err)))
        goto fail;
    if (strlen(text) != len) {
        rc = fbf_errorf(err, -EINVAL, "%s: a NUL byte: not a text file", path);
        goto fail;
    }
    if (!(s->dir = fbf_cmp_dirname_abs(path, err))) {
        rc = -ENOENT;
        goto fail;
    }
    const char *base = strrchr(path, '/');
    if (!(s->abs_file = fbf_cmp_strf("%s/%s", s->dir, base ? base + 1 : path))) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto fail;
    }
    if ((rc = parse(s, text, err)))
        goto fail;
    if (set_default(&s->depths, "default") || set_default(&s->sizes, "default") ||
        set_default(&s->max_jobs, "default") || set_default(&s->seeds, "") ||
        set_default(&s->options, "") || (!s->out && !(s->out = default_out(s)))) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto fail;
    }
    if (check && (rc = check_traces(s, err)))
        goto fail;
    free(text);
    *out = s;
    return 0;
fail:
    free(text);
    fbf_cmp_spec_destroy(s);
    return rc ? rc : -EINVAL;
}

static void axis_free(fbf_cmp_axis *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->v[i]);
    free(a->v);
}

void fbf_cmp_spec_destroy(fbf_cmp_spec *s)
{
    if (!s)
        return;
    axis_free(&s->traces);
    axis_free(&s->policies);
    axis_free(&s->depths);
    axis_free(&s->sizes);
    axis_free(&s->max_jobs);
    axis_free(&s->seeds);
    axis_free(&s->options);
    free(s->file);
    free(s->abs_file);
    free(s->dir);
    free(s->out);
    free(s->replay);
    free(s);
}
