/*
 * flux_job: RFC 16 keys, jobspec v1, R v1 and RFC 22 id sets (flux_job.h).
 *
 * A job's cores split by rank: the global ranges cut at rank boundaries
 * give each rank's local cores; consecutive ranks with the same local
 * cores share one R_lite entry.
 */
#include "io/flux_job.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/job_json.h"

void fbf_flux_dothex(uint64_t id, char out[20])
{
    snprintf(out, 20, "%04x.%04x.%04x.%04x", (unsigned)(id >> 48) & 0xffff,
             (unsigned)(id >> 32) & 0xffff, (unsigned)(id >> 16) & 0xffff, (unsigned)id & 0xffff);
}

size_t fbf_flux_key(char *buf, size_t cap, uint64_t id, const char *name)
{
    char dh[20];
    fbf_flux_dothex(id, dh);
    int n = snprintf(buf, cap, "job.%s.%s", dh, name);
    return n < 0 ? 0 : (size_t)n;
}

/* ---- RFC 22 id sets ---- */

static void put_range(fbf_jbuf *b, uint32_t lo, uint32_t hi)
{
    char d[24];
    fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, lo));
    if (hi > lo) {
        fbf_jbuf_lit(b, "-");
        fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, hi));
    }
}

void fbf_flux_idset_put(fbf_jbuf *b, const fbf_idset *s)
{
    for (uint32_t i = 0; i < s->n; i++) {
        if (i)
            fbf_jbuf_lit(b, ",");
        put_range(b, s->r[i].lo, s->r[i].hi);
    }
}

/* A decimal id below 2^31 at *p, no sign, no leading zero but "0". */
static bool read_id(const char **p, uint32_t *out)
{
    const char *s = *p;
    if (*s < '0' || *s > '9' || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return false;
    uint64_t v = 0;
    while (*s >= '0' && *s <= '9') {
        v = v * 10 + (uint64_t)(*s++ - '0');
        if (v > FBF_IDSET_MAX_ID)
            return false;
    }
    *p = s;
    *out = (uint32_t)v;
    return true;
}

int fbf_flux_idset_parse(fbf_idset *s, const char *str, fbf_error *err)
{
    fbf_idset out;
    fbf_idset_init(&out);
    const char *p = str;
    bool bracket = *p == '[';
    if (bracket)
        p++;
    int rc = 0;
    for (;;) {
        uint32_t lo, hi;
        const char *at = p;
        if (!read_id(&p, &lo)) {
            rc = fbf_errorf(err, -EPROTO, "\"%.40s\": expected an id at byte %ld", str,
                            (long)(at - str));
            break;
        }
        hi = lo;
        if (*p == '-') {
            p++;
            if (!read_id(&p, &hi) || hi < lo) {
                rc = fbf_errorf(err, -EPROTO, "\"%.40s\": a bad range at byte %ld", str,
                                (long)(at - str));
                break;
            }
        }
        if (fbf_idset_add_range(&out, lo, hi) < 0) {
            rc = fbf_errorf(err, -ENOMEM, "out of memory");
            break;
        }
        if (*p == ',') {
            p++;
            continue;
        }
        if (bracket && *p == ']')
            p++;
        else if (bracket)
            rc = fbf_errorf(err, -EPROTO, "\"%.40s\": expected ',' or ']' at byte %ld", str,
                            (long)(p - str));
        if (rc == 0 && *p)
            rc = fbf_errorf(err, -EPROTO, "\"%.40s\": unexpected '%c' at byte %ld", str, *p,
                            (long)(p - str));
        break;
    }
    if (rc < 0) {
        fbf_idset_fini(&out);
        return rc;
    }
    fbf_idset_fini(s);
    *s = out;
    return 0;
}

/* ---- jobspec ---- */

static const cJSON *member(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* An integer count >= 1 at o.count (path names o). */
static int read_count(const cJSON *o, const char *path, int64_t *out, fbf_error *err)
{
    const cJSON *c = member(o, "count");
    if (!c)
        return fbf_errorf(err, -EPROTO, "%s.count: missing", path);
    if (cJSON_IsObject(c))
        return fbf_errorf(err, -EPROTO, "%s.count: a range (an object) is not jobspec version "
                          "1's: expected an integer >= 1", path);
    if (!fbf_job_json_is_int(c) || c->valuedouble < 1 || c->valuedouble > 9.007199254740992e15)
        return fbf_errorf(err, -EPROTO, "%s.count: expected an integer >= 1, got %s", path,
                          cJSON_IsNumber(c) ? "another number" : fbf_job_json_kind(c));
    *out = (int64_t)c->valuedouble;
    return 0;
}

static int read_type(const cJSON *o, const char *path, const char **out, fbf_error *err)
{
    if (!cJSON_IsObject(o))
        return fbf_errorf(err, -EPROTO, "%s: expected an object, got %s", path,
                          fbf_job_json_kind(o));
    const cJSON *t = member(o, "type");
    if (!cJSON_IsString(t))
        return fbf_errorf(err, -EPROTO, "%s.type: expected a string, got %s", path,
                          fbf_job_json_kind(t));
    *out = t->valuestring;
    return 0;
}

/* The one-element "with" array of o, or the array itself. */
static int read_with(const cJSON *o, const char *path, const cJSON **out, fbf_error *err)
{
    const cJSON *w = member(o, "with");
    if (!cJSON_IsArray(w) || !w->child)
        return fbf_errorf(err, -EPROTO, "%s.with: expected a non-empty array, got %s", path,
                          w && cJSON_IsArray(w) ? "an empty one" : fbf_job_json_kind(w));
    *out = w;
    return 0;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
    return a > INT64_MAX / b ? INT64_MAX : a * b;
}

static int read_slot(const cJSON *slot, const char *path, fbf_flux_jobspec *o, const char **label,
                     fbf_error *err)
{
    const cJSON *lab = member(slot, "label");
    if (!cJSON_IsString(lab) || !*lab->valuestring)
        return fbf_errorf(err, -EPROTO, "%s.label: expected a non-empty string, got %s", path,
                          fbf_job_json_kind(lab));
    *label = lab->valuestring;
    int rc = read_count(slot, path, &o->nslots, err);
    const cJSON *with = NULL;
    if (rc < 0 || (rc = read_with(slot, path, &with, err)) < 0)
        return rc;
    char p[96];
    int i = 0;
    for (const cJSON *c = with->child; c; c = c->next, i++) {
        snprintf(p, sizeof p, "%s.with[%d]", path, i);
        const char *t;
        if ((rc = read_type(c, p, &t, err)) < 0)
            return rc;
        int64_t *dst = strcmp(t, "core") == 0 ? &o->cores_per_slot
                       : strcmp(t, "gpu") == 0 ? &o->gpus_per_slot
                                               : NULL;
        if (!dst)
            return fbf_errorf(err, -EPROTO, "%s.type: \"%.40s\": a slot holds cores and gpus in "
                              "jobspec version 1", p, t);
        if (*dst)
            return fbf_errorf(err, -EPROTO, "%s: a second %s entry in one slot", p, t);
        if ((rc = read_count(c, p, dst, err)) < 0)
            return rc;
        if (member(c, "with"))
            return fbf_errorf(err, -EPROTO, "%s.with: a %s holds nothing in jobspec version 1",
                              p, t);
    }
    if (!o->cores_per_slot)
        return fbf_errorf(err, -EPROTO, "%s.with: a slot needs a core entry", path);
    return 0;
}

static int read_tasks(const cJSON *js, const char *label, fbf_flux_jobspec *o, fbf_error *err)
{
    const cJSON *tasks = member(js, "tasks");
    if (!cJSON_IsArray(tasks) || !tasks->child)
        return fbf_errorf(err, -EPROTO, "tasks: expected a non-empty array, got %s",
                          tasks && cJSON_IsArray(tasks) ? "an empty one" : fbf_job_json_kind(tasks));
    if (tasks->child->next)
        return fbf_errorf(err, -EPROTO, "tasks: jobspec version 1 has one task entry");
    const cJSON *t = tasks->child;
    if (!cJSON_IsObject(t))
        return fbf_errorf(err, -EPROTO, "tasks[0]: expected an object, got %s",
                          fbf_job_json_kind(t));
    const cJSON *cmd = member(t, "command"), *slot = member(t, "slot"), *cnt = member(t, "count");
    if (!cJSON_IsArray(cmd) || !cmd->child)
        return fbf_errorf(err, -EPROTO, "tasks[0].command: expected a non-empty array, got %s",
                          cmd && cJSON_IsArray(cmd) ? "an empty one" : fbf_job_json_kind(cmd));
    if (!cJSON_IsString(slot) || strcmp(slot->valuestring, label) != 0)
        return fbf_errorf(err, -EPROTO, "tasks[0].slot: expected the slot's label \"%.40s\", "
                          "got %s", label, cJSON_IsString(slot) ? "another" : fbf_job_json_kind(slot));
    if (!cJSON_IsObject(cnt) || !cnt->child || cnt->child->next)
        return fbf_errorf(err, -EPROTO, "tasks[0].count: expected an object of one member, "
                          "per_slot or total");
    const char *k = cnt->child->string;
    const cJSON *v = cnt->child;
    bool per_slot = strcmp(k, "per_slot") == 0;
    if (!per_slot && strcmp(k, "total") != 0)
        return fbf_errorf(err, -EPROTO, "tasks[0].count.%.40s: expected per_slot or total", k);
    if (!fbf_job_json_is_int(v) || v->valuedouble < 1 || v->valuedouble > 9.007199254740992e15)
        return fbf_errorf(err, -EPROTO, "tasks[0].count.%s: expected an integer >= 1, got %s",
                          k, cJSON_IsNumber(v) ? "another number" : fbf_job_json_kind(v));
    int64_t n = (int64_t)v->valuedouble;
    o->ntasks = per_slot ? mul_sat(mul_sat(n, o->nslots), o->nnodes ? o->nnodes : 1) : n;
    return 0;
}

int fbf_flux_jobspec_read(const cJSON *js, fbf_flux_jobspec *o, fbf_error *err)
{
    *o = (fbf_flux_jobspec){0};
    if (!cJSON_IsObject(js))
        return fbf_errorf(err, -EPROTO, "expected an object (a jobspec), got %s",
                          fbf_job_json_kind(js));
    const cJSON *v = member(js, "version");
    if (!fbf_job_json_is_int(v) || v->valuedouble != 1)
        return fbf_errorf(err, -EPROTO, "version: expected 1 (fastbf reads jobspec version 1), "
                          "got %s", cJSON_IsNumber(v) ? "another number" : fbf_job_json_kind(v));
    const cJSON *res = member(js, "resources");
    if (!cJSON_IsArray(res) || !res->child)
        return fbf_errorf(err, -EPROTO, "resources: expected a non-empty array, got %s",
                          res && cJSON_IsArray(res) ? "an empty one" : fbf_job_json_kind(res));
    if (res->child->next)
        return fbf_errorf(err, -EPROTO, "resources: jobspec version 1 has one entry at the top");
    const cJSON *top = res->child, *slot = top;
    const char *t, *path = "resources[0]", *label = NULL;
    char slot_path[64] = "resources[0]";
    int rc = read_type(top, path, &t, err);
    if (rc < 0)
        return rc;
    if (strcmp(t, "node") == 0) {
        const cJSON *with = NULL;
        if ((rc = read_count(top, path, &o->nnodes, err)) < 0 ||
            (rc = read_with(top, path, &with, err)) < 0)
            return rc;
        if (with->child->next)
            return fbf_errorf(err, -EPROTO, "resources[0].with: a node holds one slot entry in "
                              "jobspec version 1");
        slot = with->child;
        snprintf(slot_path, sizeof slot_path, "resources[0].with[0]");
        if ((rc = read_type(slot, slot_path, &t, err)) < 0)
            return rc;
    }
    if (strcmp(t, "slot") != 0)
        return fbf_errorf(err, -EPROTO, "%s.type: \"%.40s\": expected %s", slot_path, t,
                          slot == top ? "node or slot" : "slot");
    if ((rc = read_slot(slot, slot_path, o, &label, err)) < 0 ||
        (rc = read_tasks(js, label, o, err)) < 0)
        return rc;
    o->ncores = mul_sat(mul_sat(o->nslots, o->cores_per_slot), o->nnodes ? o->nnodes : 1);
    const cJSON *attr = member(js, "attributes");
    if (attr && !cJSON_IsObject(attr))
        return fbf_errorf(err, -EPROTO, "attributes: expected an object, got %s",
                          fbf_job_json_kind(attr));
    const cJSON *sys = attr ? member(attr, "system") : NULL;
    if (sys && !cJSON_IsObject(sys))
        return fbf_errorf(err, -EPROTO, "attributes.system: expected an object, got %s",
                          fbf_job_json_kind(sys));
    const cJSON *d = sys ? member(sys, "duration") : NULL;
    if (d && (!cJSON_IsNumber(d) || !(d->valuedouble >= 0) || isinf(d->valuedouble)))
        return fbf_errorf(err, -EPROTO, "attributes.system.duration: expected a number of "
                          "seconds >= 0, got %s", cJSON_IsNumber(d) ? "another number"
                                                                    : fbf_job_json_kind(d));
    o->duration = d ? d->valuedouble : 0;
    return 0;
}

void fbf_flux_jobspec_put(fbf_jbuf *b, int64_t ncores, double duration, const char *command)
{
    fbf_jbuf_lit(b, "{\"version\":1,\"resources\":[{\"type\":\"slot\",\"count\":");
    fbf_jbuf_int(b, ncores);
    fbf_jbuf_lit(b, ",\"label\":\"task\",\"with\":[{\"type\":\"core\",\"count\":1}]}],"
                    "\"tasks\":[{\"command\":[");
    fbf_jbuf_str(b, command);
    fbf_jbuf_lit(b, "],\"slot\":\"task\",\"count\":{\"per_slot\":1}}],"
                    "\"attributes\":{\"system\":{\"duration\":");
    fbf_jbuf_num(b, duration > 0 ? duration : 0);
    fbf_jbuf_lit(b, "}}}");
}

/* ---- R ---- */

/* Walks cores rank by rank: fn(ctx, rank, local) for each rank holding
 * cores, local holding that rank's core numbers. */
typedef int (*rank_fn)(void *ctx, uint32_t rank, const fbf_idset *local);

static int by_rank(const fbf_idset *cores, uint32_t cpr, rank_fn fn, void *ctx)
{
    fbf_idset local;
    fbf_idset_init(&local);
    uint32_t cur = UINT32_MAX;
    int rc = 0;
    for (uint32_t i = 0; i < cores->n && rc == 0; i++) {
        uint64_t lo = cores->r[i].lo, hi = cores->r[i].hi;
        while (lo <= hi && rc == 0) {
            uint32_t rank = (uint32_t)(lo / cpr);
            uint64_t end = ((uint64_t)rank + 1) * cpr - 1;
            if (end > hi)
                end = hi;
            if (rank != cur) {
                if (cur != UINT32_MAX)
                    rc = fn(ctx, cur, &local);
                fbf_idset_clear(&local);
                cur = rank;
            }
            if (rc == 0 && fbf_idset_add_range(&local, (uint32_t)(lo - (uint64_t)rank * cpr),
                                               (uint32_t)(end - (uint64_t)rank * cpr)) < 0)
                rc = -ENOMEM;
            lo = end + 1;
        }
    }
    if (rc == 0 && cur != UINT32_MAX)
        rc = fn(ctx, cur, &local);
    fbf_idset_fini(&local);
    return rc;
}

/* Consecutive ranks with the same cores make one group. */
typedef struct groups {
    fbf_jbuf *b;
    bool summary; /* "rank[..]/core[..]" rather than R_lite */
    bool open;
    uint32_t first, last;
    fbf_idset cores;
    size_t count;
} groups;

static void put_set_bracketed(fbf_jbuf *b, const fbf_idset *s)
{
    bool one = s->n == 1 && s->r[0].lo == s->r[0].hi;
    if (!one)
        fbf_jbuf_lit(b, "[");
    fbf_flux_idset_put(b, s);
    if (!one)
        fbf_jbuf_lit(b, "]");
}

static void flush(groups *g)
{
    if (!g->open)
        return;
    fbf_idset ranks = {.r = &(fbf_range){g->first, g->last}, .n = 1, .cap = 1};
    if (g->summary) {
        if (g->count++)
            fbf_jbuf_lit(g->b, " ");
        fbf_jbuf_lit(g->b, "rank");
        put_set_bracketed(g->b, &ranks);
        fbf_jbuf_lit(g->b, "/core");
        put_set_bracketed(g->b, &g->cores);
    } else {
        if (g->count++)
            fbf_jbuf_lit(g->b, ",");
        fbf_jbuf_lit(g->b, "{\"rank\":\"");
        fbf_flux_idset_put(g->b, &ranks);
        fbf_jbuf_lit(g->b, "\",\"children\":{\"core\":\"");
        fbf_flux_idset_put(g->b, &g->cores);
        fbf_jbuf_lit(g->b, "\"}}");
    }
    g->open = false;
}

static int group_rank(void *ctx, uint32_t rank, const fbf_idset *local)
{
    groups *g = ctx;
    if (g->open && rank == g->last + 1 && fbf_idset_equal(local, &g->cores)) {
        g->last = rank;
        return 0;
    }
    flush(g);
    if (fbf_idset_copy(&g->cores, local) < 0)
        return -ENOMEM;
    g->open = true;
    g->first = g->last = rank;
    return 0;
}

static void put_groups(fbf_jbuf *b, const fbf_idset *cores, uint32_t cpr, bool summary)
{
    groups g = {.b = b, .summary = summary};
    fbf_idset_init(&g.cores);
    if (by_rank(cores, cpr, group_rank, &g) < 0)
        b->oom = true;
    flush(&g);
    fbf_idset_fini(&g.cores);
}

void fbf_flux_R_put(fbf_jbuf *b, const fbf_idset *cores, uint32_t cpr, double starttime,
                    double expiration)
{
    fbf_jbuf_lit(b, "{\"version\":1,\"execution\":{\"R_lite\":[");
    put_groups(b, cores, cpr, false);
    fbf_jbuf_lit(b, "],\"starttime\":");
    fbf_jbuf_num(b, starttime);
    fbf_jbuf_lit(b, ",\"expiration\":");
    fbf_jbuf_num(b, expiration);
    fbf_jbuf_lit(b, "}}");
}

void fbf_flux_summary_put(fbf_jbuf *b, const fbf_idset *cores, uint32_t cpr)
{
    put_groups(b, cores, cpr, true);
}

static int read_time(const cJSON *exec, const char *name, double *out, fbf_error *err)
{
    const cJSON *t = member(exec, name);
    *out = 0;
    if (!t)
        return 0;
    if (!cJSON_IsNumber(t) || !(t->valuedouble >= 0) || isinf(t->valuedouble))
        return fbf_errorf(err, -EPROTO, "execution.%s: expected a number >= 0, got %s", name,
                          cJSON_IsNumber(t) ? "another number" : fbf_job_json_kind(t));
    *out = t->valuedouble;
    return 0;
}

static int read_entry(const cJSON *e, int i, uint32_t nranks, uint32_t cpr, fbf_idset *cores,
                      fbf_idset *seen, fbf_idset *ranks, fbf_idset *local, uint32_t *nnodes,
                      fbf_error *err)
{
    if (!cJSON_IsObject(e))
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d]: expected an object, got %s", i,
                          fbf_job_json_kind(e));
    const cJSON *rank = member(e, "rank"), *ch = member(e, "children");
    fbf_error inner;
    if (!cJSON_IsString(rank))
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].rank: expected an id set (a "
                          "string), got %s", i, fbf_job_json_kind(rank));
    if (fbf_flux_idset_parse(ranks, rank->valuestring, &inner) < 0)
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].rank: %s", i, inner.text);
    if (!cJSON_IsObject(ch))
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].children: expected an object, "
                          "got %s", i, fbf_job_json_kind(ch));
    const cJSON *core = member(ch, "core");
    for (const cJSON *c = ch->child; c; c = c->next)
        if (strcmp(c->string, "core") != 0)
            return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].children.%.40s: fastbf's "
                              "resources are cores only", i, c->string);
    if (!cJSON_IsString(core))
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].children.core: expected an id "
                          "set (a string), got %s", i, fbf_job_json_kind(core));
    if (fbf_flux_idset_parse(local, core->valuestring, &inner) < 0)
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].children.core: %s", i,
                          inner.text);
    if (local->n == 0 || ranks->n == 0)
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d]: no rank or no core", i);
    if (ranks->r[ranks->n - 1].hi >= nranks)
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].rank: rank %u, the platform has "
                          "%u ranks", i, ranks->r[ranks->n - 1].hi, nranks);
    if (local->r[local->n - 1].hi >= cpr)
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].children.core: core %u, a rank "
                          "has %u cores", i, local->r[local->n - 1].hi, cpr);
    if (fbf_idset_intersects(seen, ranks))
        return fbf_errorf(err, -EPROTO, "execution.R_lite[%d].rank: a rank of \"%.40s\" is in "
                          "an entry before", i, rank->valuestring);
    if (fbf_idset_union(seen, ranks) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (uint32_t a = 0; a < ranks->n; a++) {
        for (uint64_t r = ranks->r[a].lo; r <= ranks->r[a].hi; r++) {
            (*nnodes)++;
            for (uint32_t k = 0; k < local->n; k++) {
                uint32_t lo = (uint32_t)(r * cpr + local->r[k].lo);
                uint32_t hi = (uint32_t)(r * cpr + local->r[k].hi);
                if (fbf_idset_add_range(cores, lo, hi) < 0)
                    return fbf_errorf(err, -ENOMEM, "out of memory");
            }
        }
    }
    return 0;
}

int fbf_flux_R_read(const cJSON *R, uint32_t nranks, uint32_t cpr, fbf_idset *cores,
                    fbf_flux_R *out, fbf_error *err)
{
    *out = (fbf_flux_R){0};
    fbf_idset_clear(cores);
    if (!cJSON_IsObject(R))
        return fbf_errorf(err, -EPROTO, "expected an object (an R), got %s", fbf_job_json_kind(R));
    const cJSON *v = member(R, "version");
    if (!fbf_job_json_is_int(v) || v->valuedouble != 1)
        return fbf_errorf(err, -EPROTO, "version: expected 1 (R version 1), got %s",
                          cJSON_IsNumber(v) ? "another number" : fbf_job_json_kind(v));
    const cJSON *exec = member(R, "execution");
    if (!cJSON_IsObject(exec))
        return fbf_errorf(err, -EPROTO, "execution: expected an object, got %s",
                          fbf_job_json_kind(exec));
    const cJSON *lite = member(exec, "R_lite");
    if (!cJSON_IsArray(lite) || !lite->child)
        return fbf_errorf(err, -EPROTO, "execution.R_lite: expected a non-empty array, got %s",
                          lite && cJSON_IsArray(lite) ? "an empty one" : fbf_job_json_kind(lite));
    int rc = read_time(exec, "starttime", &out->starttime, err);
    if (rc == 0)
        rc = read_time(exec, "expiration", &out->expiration, err);
    if (rc == 0 && out->expiration > 0 && out->expiration < out->starttime)
        rc = fbf_errorf(err, -EPROTO, "execution.expiration: %.17g is before starttime %.17g",
                        out->expiration, out->starttime);
    fbf_idset seen, ranks, local;
    fbf_idset_init(&seen);
    fbf_idset_init(&ranks);
    fbf_idset_init(&local);
    int i = 0;
    for (const cJSON *e = lite->child; e && rc == 0; e = e->next, i++)
        rc = read_entry(e, i, nranks, cpr, cores, &seen, &ranks, &local, &out->nnodes, err);
    fbf_idset_fini(&seen);
    fbf_idset_fini(&ranks);
    fbf_idset_fini(&local);
    return rc;
}
