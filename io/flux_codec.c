/*
 * flux_codec: RFC 27's payloads as fastbf receives them (flux_codec.h).
 *
 * Each payload is parsed by cJSON, held to one reading (io/json_strict.h)
 * and its numbers indexed for exact 64-bit reads (io/json_exact.h); the
 * tree lives until the next read.
 */
#include "io/flux_codec.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/job_json.h"
#include "io/json_strict.h"

struct fbf_flux_codec {
    cJSON *tree;
    char *text; /* the payload, NUL-terminated for cJSON */
    size_t text_cap;
    fbf_json_exact nums;
    fbf_flux_prio *prio;
    size_t prio_cap;
    fbf_flux_held *held;
    size_t held_cap;
    char *errtext;
};

fbf_flux_codec *fbf_flux_codec_create(void) { return calloc(1, sizeof(fbf_flux_codec)); }

static void reset(fbf_flux_codec *c)
{
    cJSON_Delete(c->tree);
    c->tree = NULL;
    free(c->errtext);
    c->errtext = NULL;
}

void fbf_flux_codec_destroy(fbf_flux_codec *c)
{
    if (!c)
        return;
    reset(c);
    free(c->text);
    fbf_json_exact_fini(&c->nums);
    free(c->prio);
    free(c->held);
    free(c);
}

void fbf_flux_put_id(fbf_jbuf *b, uint64_t id)
{
    char d[24];
    fbf_jbuf_lit(b, "{\"id\":");
    fbf_jbuf_raw(b, d, fbf_jbuf_digits(d, id));
    fbf_jbuf_lit(b, "}");
}

/* ---- fields ---- */

/* A number's text, for messages. */
static const char *num_text(const fbf_flux_codec *c, const cJSON *v, char buf[40])
{
    if (v->valueint >= 0 && (size_t)v->valueint < c->nums.n) {
        uint32_t n = c->nums.len[v->valueint];
        snprintf(buf, 40, "%.*s%s", (int)(n > 30 ? 30 : n), c->nums.at[v->valueint],
                 n > 30 ? "..." : "");
    } else {
        snprintf(buf, 40, "%.17g", v->valuedouble);
    }
    return buf;
}

/* An integer in [0, max] at v; where names it ("sched.alloc: id"). */
static int read_uint(const fbf_flux_codec *c, const cJSON *v, const char *where, uint64_t max,
                     const char *range, uint64_t *out, fbf_error *err)
{
    if (!v)
        return fbf_errorf(err, -EPROTO, "%s: missing", where);
    if (!cJSON_IsNumber(v))
        return fbf_errorf(err, -EPROTO, "%s: expected an integer in %s, got %s", where, range,
                          fbf_job_json_kind(v));
    char t[40];
    int rc = fbf_json_exact_u64(&c->nums, v, max, out);
    if (rc == -ERANGE)
        return fbf_errorf(err, -EPROTO, "%s: %s is out of range %s", where, num_text(c, v, t),
                          range);
    if (rc < 0)
        return fbf_errorf(err, -EPROTO, "%s: expected an integer in %s, got %s", where, range,
                          num_text(c, v, t));
    return 0;
}

static int read_id(const fbf_flux_codec *c, const cJSON *o, const char *where, uint64_t *out,
                   fbf_error *err)
{
    return read_uint(c, o, where, UINT64_MAX, "[0, 2^64 - 1]", out, err);
}

static int read_u32(const fbf_flux_codec *c, const cJSON *o, const char *where, uint32_t *out,
                    fbf_error *err)
{
    uint64_t v;
    int rc = read_uint(c, o, where, UINT32_MAX, "[0, 4294967295]", &v, err);
    *out = (uint32_t)v;
    return rc;
}

/* A number >= 0, finite. */
static int read_time(const cJSON *v, const char *where, double *out, fbf_error *err)
{
    if (!v)
        return fbf_errorf(err, -EPROTO, "%s: missing", where);
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || isinf(v->valuedouble))
        return fbf_errorf(err, -EPROTO, "%s: expected a number of seconds >= 0, got %s", where,
                          cJSON_IsNumber(v) ? "a negative number" : fbf_job_json_kind(v));
    *out = v->valuedouble;
    return 0;
}

static const cJSON *member(const cJSON *o, const char *name)
{
    return cJSON_GetObjectItemCaseSensitive(o, name);
}

/* ---- payloads ---- */

static int need_none(const fbf_flux_msg *m, const char *topic, fbf_error *err)
{
    if (m->payload)
        return fbf_errorf(err, -EPROTO, "%s: a payload of %zu bytes where none belongs", topic,
                          m->payload_len);
    return 0;
}

/* The payload as a JSON object, in c->tree. */
static int parse(fbf_flux_codec *c, const fbf_flux_msg *m, const char *topic, fbf_error *err)
{
    if (!m->payload)
        return fbf_errorf(err, -EPROTO, "%s: expected a JSON object as payload, got none",
                          topic);
    if (m->payload_len + 1 > c->text_cap) {
        size_t cap = m->payload_len + 1 < 256 ? 256 : m->payload_len + 1;
        char *t = realloc(c->text, cap);
        if (!t)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        c->text = t;
        c->text_cap = cap;
    }
    memcpy(c->text, m->payload, m->payload_len);
    c->text[m->payload_len] = '\0';
    const char *end = NULL;
    c->tree = cJSON_ParseWithLengthOpts(c->text, m->payload_len, &end, 0);
    if (!c->tree) {
        const char *at = cJSON_GetErrorPtr();
        long off = at && at >= c->text && at <= c->text + m->payload_len ? (long)(at - c->text)
                                                                        : -1;
        return fbf_errorf(err, -EPROTO, "%s: payload: malformed JSON near byte %ld", topic, off);
    }
    while (end && end < c->text + m->payload_len && strchr(" \t\r\n", *end))
        end++;
    if (end && end < c->text + m->payload_len)
        return fbf_errorf(err, -EPROTO, "%s: payload: unexpected bytes after the JSON value at "
                          "byte %ld", topic, (long)(end - c->text));
    fbf_error inner;
    int rc = fbf_json_strict(c->text, m->payload_len, c->tree, &inner);
    if (rc == 0)
        rc = fbf_json_exact_index(&c->nums, c->text, m->payload_len, c->tree, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "%s: payload: %s", topic, inner.text);
    if (!cJSON_IsObject(c->tree))
        return fbf_errorf(err, -EPROTO, "%s: payload: expected a JSON object, got %s", topic,
                          fbf_job_json_kind(c->tree));
    return 0;
}

static int read_alloc(fbf_flux_codec *c, fbf_flux_in *in, fbf_error *err)
{
    const cJSON *o = c->tree;
    int rc = read_id(c, member(o, "id"), "sched.alloc: id", &in->id, err);
    if (rc == 0)
        rc = read_u32(c, member(o, "priority"), "sched.alloc: priority", &in->priority, err);
    if (rc == 0)
        rc = read_u32(c, member(o, "userid"), "sched.alloc: userid", &in->userid, err);
    const cJSON *t = member(o, "t_submit");
    in->t_submit = NAN;
    if (rc == 0 && t)
        rc = read_time(t, "sched.alloc: t_submit", &in->t_submit, err);
    return rc;
}

static int read_prioritize(fbf_flux_codec *c, fbf_flux_in *in, fbf_error *err)
{
    const cJSON *jobs = member(c->tree, "jobs");
    if (!jobs)
        return fbf_errorf(err, -EPROTO, "sched.prioritize: jobs: missing");
    if (!cJSON_IsArray(jobs))
        return fbf_errorf(err, -EPROTO, "sched.prioritize: jobs: expected an array, got %s",
                          fbf_job_json_kind(jobs));
    size_t n = (size_t)cJSON_GetArraySize(jobs);
    if (n > c->prio_cap) {
        fbf_flux_prio *p = realloc(c->prio, n * sizeof *p);
        if (!p)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        c->prio = p;
        c->prio_cap = n;
    }
    size_t i = 0;
    char where[80];
    for (const cJSON *t = jobs->child; t; t = t->next, i++) {
        if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != 2)
            return fbf_errorf(err, -EPROTO, "sched.prioritize: jobs[%zu]: expected an [id, "
                              "priority] pair, got %s", i, cJSON_IsArray(t) ? "an array of "
                              "another size" : fbf_job_json_kind(t));
        snprintf(where, sizeof where, "sched.prioritize: jobs[%zu][0]", i);
        int rc = read_id(c, t->child, where, &c->prio[i].id, err);
        snprintf(where, sizeof where, "sched.prioritize: jobs[%zu][1]", i);
        if (rc == 0)
            rc = read_u32(c, t->child->next, where, &c->prio[i].priority, err);
        if (rc < 0)
            return rc;
    }
    in->prio = c->prio;
    in->nprio = n;
    return 0;
}

static int read_hello(fbf_flux_codec *c, fbf_flux_in *in, fbf_error *err)
{
    const cJSON *a = member(c->tree, "alloc");
    if (!a)
        return fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": alloc: missing");
    if (!cJSON_IsArray(a))
        return fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": alloc: expected an array, got %s",
                          fbf_job_json_kind(a));
    size_t n = (size_t)cJSON_GetArraySize(a);
    if (n > c->held_cap) {
        fbf_flux_held *h = realloc(c->held, n * sizeof *h);
        if (!h)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        c->held = h;
        c->held_cap = n;
    }
    size_t i = 0;
    char where[80];
    for (const cJSON *e = a->child; e; e = e->next, i++) {
        if (!cJSON_IsObject(e))
            return fbf_errorf(err, -EPROTO, FBF_FLUX_HELLO ": alloc[%zu]: expected an object, "
                              "got %s", i, fbf_job_json_kind(e));
        snprintf(where, sizeof where, FBF_FLUX_HELLO ": alloc[%zu].id", i);
        int rc = read_id(c, member(e, "id"), where, &c->held[i].id, err);
        snprintf(where, sizeof where, FBF_FLUX_HELLO ": alloc[%zu].priority", i);
        if (rc == 0)
            rc = read_u32(c, member(e, "priority"), where, &c->held[i].priority, err);
        snprintf(where, sizeof where, FBF_FLUX_HELLO ": alloc[%zu].userid", i);
        if (rc == 0)
            rc = read_u32(c, member(e, "userid"), where, &c->held[i].userid, err);
        if (rc < 0)
            return rc;
    }
    in->held = c->held;
    in->nheld = n;
    return 0;
}

typedef struct topic_entry {
    const char *topic;
    fbf_flux_in_kind kind;
    uint8_t type;
} topic_entry;

static const topic_entry topics[] = {
    {FBF_FLUX_ALLOC, FBF_FLUX_IN_ALLOC, FBF_FLUX_REQUEST},
    {FBF_FLUX_FREE, FBF_FLUX_IN_FREE, FBF_FLUX_REQUEST},
    {FBF_FLUX_CANCEL, FBF_FLUX_IN_CANCEL, FBF_FLUX_REQUEST},
    {FBF_FLUX_PRIORITIZE, FBF_FLUX_IN_PRIORITIZE, FBF_FLUX_REQUEST},
    {FBF_FLUX_ATTACH, FBF_FLUX_IN_ATTACH, FBF_FLUX_REQUEST},
    {FBF_FLUX_INSTANT, FBF_FLUX_IN_INSTANT, FBF_FLUX_REQUEST},
    {FBF_FLUX_END, FBF_FLUX_IN_END, FBF_FLUX_REQUEST},
    {FBF_FLUX_HELLO, FBF_FLUX_IN_HELLO, FBF_FLUX_RESPONSE},
    {FBF_FLUX_READY, FBF_FLUX_IN_READY, FBF_FLUX_RESPONSE},
};

/* The text of an error response, which Flux may send as payload. */
static int take_errtext(fbf_flux_codec *c, const fbf_flux_msg *m, fbf_flux_in *in)
{
    size_t n = m->payload ? m->payload_len : 0;
    if (!(c->errtext = malloc(n + 1)))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) /* for a log line: printable bytes only */
        c->errtext[i] = m->payload[i] >= 0x20 && m->payload[i] < 0x7f ? m->payload[i] : '?';
    c->errtext[n] = '\0';
    in->errtext = c->errtext;
    return 0;
}

int fbf_flux_codec_read(fbf_flux_codec *c, const fbf_flux_msg *m, fbf_flux_in *in,
                        fbf_error *err)
{
    reset(c);
    *in = (fbf_flux_in){.t_submit = NAN, .errtext = ""};
    char tb[16];
    if (m->type != FBF_FLUX_REQUEST && m->type != FBF_FLUX_RESPONSE)
        return fbf_errorf(err, -EPROTO, "a%s %s message: fastbf takes requests and responses "
                          "only", m->type == FBF_FLUX_EVENT ? "n" : "",
                          fbf_flux_type_name(m->type, tb));
    if (!m->topic)
        return fbf_errorf(err, -EPROTO, "a %s without a topic", fbf_flux_type_name(m->type, tb));
    const topic_entry *t = NULL;
    for (size_t i = 0; i < sizeof topics / sizeof topics[0] && !t; i++)
        if (fbf_flux_msg_is(m, topics[i].topic))
            t = &topics[i];
    if (!t || t->type != m->type)
        return fbf_errorf(err, -EPROTO, "unknown %s topic \"%.*s\": fastbf serves sched.alloc, "
                          "sched.free, sched.cancel, sched.prioritize and sim.attach, "
                          "sim.instant, sim.end, and asks job-manager.sched-hello and "
                          "job-manager.sched-ready", fbf_flux_type_name(m->type, tb),
                          (int)m->topic_len, m->topic);
    in->kind = t->kind;
    in->topic = t->topic;
    in->noresponse = m->flags & FBF_FLUX_F_NORESPONSE;
    in->matchtag = m->matchtag;
    if (m->type == FBF_FLUX_RESPONSE) {
        in->errnum = m->aux1;
        if (in->errnum)
            return take_errtext(c, m, in) < 0 ? fbf_errorf(err, -ENOMEM, "out of memory") : 0;
    }
    int rc;
    switch (t->kind) {
    case FBF_FLUX_IN_ATTACH:
    case FBF_FLUX_IN_END: return need_none(m, t->topic, err);
    case FBF_FLUX_IN_READY:
        /* RFC 27: empty; flux-core answers {"count": N}: an object is fine. */
        return m->payload ? parse(c, m, t->topic, err) : 0;
    default: break;
    }
    if ((rc = parse(c, m, t->topic, err)) < 0)
        return rc;
    switch (t->kind) {
    case FBF_FLUX_IN_ALLOC: return read_alloc(c, in, err);
    case FBF_FLUX_IN_FREE: return read_id(c, member(c->tree, "id"), "sched.free: id", &in->id, err);
    case FBF_FLUX_IN_CANCEL:
        return read_id(c, member(c->tree, "id"), "sched.cancel: id", &in->id, err);
    case FBF_FLUX_IN_PRIORITIZE: return read_prioritize(c, in, err);
    case FBF_FLUX_IN_INSTANT: return read_time(member(c->tree, "now"), "sim.instant: now",
                                               &in->now, err);
    case FBF_FLUX_IN_HELLO: return read_hello(c, in, err);
    default: return 0;
    }
}
