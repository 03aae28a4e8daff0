/*
 * check: every message from the scheduler against RFC 27 (see fluxsim.h).
 *
 * Refused, as flux-core's job manager refuses it (src/modules/job-manager/
 * alloc.c: it tears the scheduler interface down, and so the simulation
 * stops), with RFC 27's reason:
 *   - an alloc or free response with a non-zero errnum ("a scheduler
 *     fatality"), an alloc response without id or type, or a type outside
 *     0-3, an ANNOTATE without annotations, annotations that are not an
 *     object, a SUCCESS for a job that holds cores already;
 *   - a ready request whose mode is neither single nor unlimited.
 * Refused beyond flux-core (which ignores these or copes with them),
 * since each breaks a rule of RFC 27 a scheduler must keep:
 *   - a response for a job without an alloc (free) pending, or a second
 *     one after the one that retired it; a matchtag other than 0 on an
 *     alloc or free response; members RFC 27 does not name, and in a
 *     CANCEL anything but id and type ("Only the REQUIRED keys above are
 *     allowed"); a note that is not a string;
 *   - a SUCCESS whose R is missing from Redis when its response arrives
 *     ("R has been successfully committed to the KVS ... before
 *     responding"), is not R version 1, holds other than the jobspec's
 *     number of cores, a core of another running job, a rank or core
 *     beyond the platform, a starttime other than the instant's, or an
 *     expiration other than starttime + the jobspec's duration (0 with
 *     none);
 *   - sched.t_estimate that is not a number or null, reason_pending,
 *     resource_summary and queue that are not strings or null, sched and
 *     user that are not objects or null;
 *   - any request but hello and ready (once each, in that order) and
 *     disconnect; an answer to sim.instant for another time, or a wake
 *     that is not after it.
 * Counted, not refused: an ANNOTATE that changes nothing, a t_estimate
 * in the past, and a job that starts after its last t_estimate.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "io/job_json.h"
#include "io/json_strict.h"

static int topic_is(const fbf_flux_msg *m, const char *t)
{
    return fbf_flux_msg_is(m, t);
}

int fs_check_request(const fbf_flux_msg *m, const char *topic, bool payload, fbf_error *err)
{
    char tb[16];
    if (m->type != FBF_FLUX_REQUEST || !topic_is(m, topic))
        return fbf_errorf(err, -EPROTO, "expected a %s request, got a %s \"%.*s\"", topic,
                          fbf_flux_type_name(m->type, tb), m->topic ? (int)m->topic_len : 0,
                          m->topic ? m->topic : "");
    if (m->flags & FBF_FLUX_F_NORESPONSE)
        return fbf_errorf(err, -EPROTO, "%s: the noresponse flag on a request that is answered",
                          topic);
    if (!payload && m->payload)
        return fbf_errorf(err, -EPROTO, "%s: RFC 27 sends an empty request, got a payload of "
                          "%zu bytes", topic, m->payload_len);
    if (payload && !m->payload)
        return fbf_errorf(err, -EPROTO, "%s: a payload is required", topic);
    return 0;
}

int fs_check_response(const fbf_flux_msg *m, const char *topic, fbf_error *err)
{
    char tb[16];
    if (m->type != FBF_FLUX_RESPONSE || !topic_is(m, topic))
        return fbf_errorf(err, -EPROTO, "expected a %s response, got a %s \"%.*s\"", topic,
                          fbf_flux_type_name(m->type, tb), m->topic ? (int)m->topic_len : 0,
                          m->topic ? m->topic : "");
    if (m->aux1)
        return fbf_errorf(err, -EPROTO, "%s: a response with errnum %u (%s)%s%.*s: RFC 27 "
                          "makes it a scheduler fatality, after which the job manager "
                          "suspends scheduling", topic, m->aux1, strerror((int)m->aux1),
                          m->payload ? ": " : "", m->payload ? (int)m->payload_len : 0,
                          m->payload ? m->payload : "");
    return 0;
}

/* The payload as a JSON object into *tree (the caller deletes it). */
static int parse(fluxsim *fs, const fbf_flux_msg *m, const char *topic, cJSON **tree,
                 fbf_error *err)
{
    *tree = NULL;
    if (!m->payload)
        return fbf_errorf(err, -EPROTO, "%s: expected a JSON object as payload, got none",
                          topic);
    fbf_jbuf_reset(&fs->buf);
    fbf_jbuf_raw(&fs->buf, m->payload, m->payload_len);
    if (fs->buf.oom)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    const char *end = NULL;
    *tree = cJSON_ParseWithLengthOpts(fs->buf.p, m->payload_len, &end, 0);
    if (!*tree)
        return fbf_errorf(err, -EPROTO, "%s: payload: malformed JSON", topic);
    while (end && end < fs->buf.p + m->payload_len && strchr(" \t\r\n", *end))
        end++;
    fbf_error inner;
    int rc = end && end < fs->buf.p + m->payload_len
                 ? fbf_errorf(&inner, -EPROTO, "bytes after the JSON value")
                 : fbf_json_strict(fs->buf.p, m->payload_len, *tree, &inner);
    if (rc == 0)
        rc = fbf_json_exact_index(&fs->nums, fs->buf.p, m->payload_len, *tree, &inner);
    if (rc == 0 && !cJSON_IsObject(*tree))
        rc = fbf_errorf(&inner, -EPROTO, "expected a JSON object, got %s",
                        fbf_job_json_kind(*tree));
    return rc < 0 ? fbf_errorf(err, rc, "%s: payload: %s", topic, inner.text) : 0;
}

/* Members of o other than the names given: the first such. */
static const char *stray(const cJSON *o, const char *const *names, size_t n)
{
    for (const cJSON *c = o->child; c; c = c->next) {
        bool known = false;
        for (size_t i = 0; i < n && !known; i++)
            known = strcmp(c->string, names[i]) == 0;
        if (!known)
            return c->string;
    }
    return NULL;
}

static int read_id(fluxsim *fs, const cJSON *o, const char *topic, uint64_t *id, fbf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, "id");
    if (!v)
        return fbf_errorf(err, -EPROTO, "%s: id: missing (RFC 27: the job id in every alloc "
                          "and free response)", topic);
    if (fbf_json_exact_u64(&fs->nums, v, UINT64_MAX, id) < 0)
        return fbf_errorf(err, -EPROTO, "%s: id: expected an integer in [0, 2^64 - 1], got %s",
                          topic, cJSON_IsNumber(v) ? "another number" : fbf_job_json_kind(v));
    return 0;
}

int fs_check_ready(fluxsim *fs, const fbf_flux_msg *m, bool *single, fbf_error *err)
{
    int rc = fs_check_request(m, FBF_FLUX_READY, true, err);
    cJSON *t = NULL;
    if (rc == 0)
        rc = parse(fs, m, FBF_FLUX_READY, &t, err);
    static const char *const names[] = {"mode"};
    const cJSON *mode = t ? cJSON_GetObjectItemCaseSensitive(t, "mode") : NULL;
    const char *x = t ? stray(t, names, 1) : NULL;
    if (rc == 0 && x)
        rc = fbf_errorf(err, -EPROTO, FBF_FLUX_READY ": member \"%.40s\": RFC 27's ready "
                        "payload has one key, mode", x);
    if (rc == 0 && !cJSON_IsString(mode))
        rc = fbf_errorf(err, -EPROTO, FBF_FLUX_READY ": mode: expected a string, got %s",
                        fbf_job_json_kind(mode));
    if (rc == 0 && strcmp(mode->valuestring, "single") != 0 &&
        strcmp(mode->valuestring, "unlimited") != 0)
        rc = fbf_errorf(err, -EPROTO, FBF_FLUX_READY ": mode \"%.40s\": RFC 27's modes are "
                        "single and unlimited (flux-core answers EPROTO)", mode->valuestring);
    if (rc == 0)
        *single = strcmp(mode->valuestring, "single") == 0;
    cJSON_Delete(t);
    return rc;
}

int fs_check_alloc(fluxsim *fs, const fbf_flux_msg *m, cJSON **tree, fs_alloc_resp *r,
                   fbf_error *err)
{
    const char *T = FBF_FLUX_ALLOC;
    *r = (fs_alloc_resp){0};
    int rc = fs_check_response(m, T, err);
    if (rc == 0 && m->matchtag != 0)
        rc = fbf_errorf(err, -EPROTO, "%s: matchtag %u: RFC 27's alloc responses carry "
                        "matchtag 0 (they are matched by job id)", T, m->matchtag);
    if (rc == 0)
        rc = parse(fs, m, T, tree, err);
    if (rc == 0)
        rc = read_id(fs, *tree, T, &r->id, err);
    if (rc < 0)
        return rc;
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(*tree, "type");
    if (!type)
        return fbf_errorf(err, -EPROTO, "%s: type: missing (job %llu)", T,
                          (unsigned long long)r->id);
    if (!fbf_job_json_is_int(type) || type->valuedouble < 0 || type->valuedouble > 3)
        return fbf_errorf(err, -EPROTO, "%s: type: expected 0 (SUCCESS), 1 (ANNOTATE), 2 "
                          "(DENY) or 3 (CANCEL), got %s (job %llu; flux-core answers EINVAL)",
                          T, cJSON_IsNumber(type) ? "another number" : fbf_job_json_kind(type),
                          (unsigned long long)r->id);
    r->type = (int)type->valuedouble;
    static const char *const names[][3] = {{"id", "type", "annotations"},
                                           {"id", "type", "annotations"},
                                           {"id", "type", "note"},
                                           {"id", "type", NULL}};
    static const char *const tn[] = {"SUCCESS", "ANNOTATE", "DENY", "CANCEL"};
    const char *x = stray(*tree, names[r->type], r->type == 3 ? 2 : 3);
    if (x)
        return fbf_errorf(err, -EPROTO, "%s: job %llu: member \"%.40s\" in a %s response%s", T,
                          (unsigned long long)r->id, x, tn[r->type],
                          r->type == 3 ? " (RFC 27: only the required keys are allowed in a "
                                         "CANCEL response)"
                                       : " (RFC 27 names none such)");
    const cJSON *note = cJSON_GetObjectItemCaseSensitive(*tree, "note");
    if (note && !cJSON_IsString(note))
        return fbf_errorf(err, -EPROTO, "%s: job %llu: note: expected a string, got %s", T,
                          (unsigned long long)r->id, fbf_job_json_kind(note));
    r->note = note ? note->valuestring : NULL;
    const cJSON *ann = cJSON_GetObjectItemCaseSensitive(*tree, "annotations");
    if (r->type == 1 && !ann)
        return fbf_errorf(err, -EPROTO, "%s: job %llu: an ANNOTATE without annotations "
                          "(flux-core answers EPROTO)", T, (unsigned long long)r->id);
    if (ann && !cJSON_IsObject(ann))
        return fbf_errorf(err, -EPROTO, "%s: job %llu: annotations: expected an object, got %s",
                          T, (unsigned long long)r->id, fbf_job_json_kind(ann));
    r->annotations = ann;
    return 0;
}

int fs_check_free(fluxsim *fs, const fbf_flux_msg *m, cJSON **tree, uint64_t *id,
                  fbf_error *err)
{
    const char *T = FBF_FLUX_FREE;
    int rc = fs_check_response(m, T, err);
    if (rc == 0 && m->matchtag != 0)
        rc = fbf_errorf(err, -EPROTO, "%s: matchtag %u: RFC 27's free responses carry matchtag "
                        "0 (they are matched by job id)", T, m->matchtag);
    if (rc == 0)
        rc = parse(fs, m, T, tree, err);
    if (rc == 0)
        rc = read_id(fs, *tree, T, id, err);
    static const char *const names[] = {"id"};
    const char *x = rc == 0 ? stray(*tree, names, 1) : NULL;
    if (x)
        rc = fbf_errorf(err, -EPROTO, "%s: member \"%.40s\": RFC 27's free response holds the "
                        "job id only", T, x);
    return rc;
}

int fs_check_instant(fluxsim *fs, const fbf_flux_msg *m, double *wake, fbf_error *err)
{
    const char *T = FBF_FLUX_INSTANT;
    cJSON *t = NULL;
    int rc = fs_check_response(m, T, err);
    if (rc == 0)
        rc = parse(fs, m, T, &t, err);
    static const char *const names[] = {"now", "wake"};
    const cJSON *now = t ? cJSON_GetObjectItemCaseSensitive(t, "now") : NULL;
    const cJSON *w = t ? cJSON_GetObjectItemCaseSensitive(t, "wake") : NULL;
    const char *x = t ? stray(t, names, 2) : NULL;
    if (rc == 0 && x)
        rc = fbf_errorf(err, -EPROTO, "%s: member \"%.40s\": its answer holds now and wake", T,
                        x);
    if (rc == 0 && (!cJSON_IsNumber(now) || now->valuedouble != fs->now))
        rc = fbf_errorf(err, -EPROTO, "%s: now: expected this instant's %.17g", T, fs->now);
    if (rc == 0 && w && (!cJSON_IsNumber(w) || !(w->valuedouble > fs->now) ||
                         isinf(w->valuedouble)))
        rc = fbf_errorf(err, -EPROTO, "%s: wake: expected a time after now (%.17g)", T, fs->now);
    *wake = rc == 0 && w ? w->valuedouble : NAN;
    cJSON_Delete(t);
    return rc;
}

int fs_check_R(fluxsim *fs, sjob *j, const char *text, size_t len, fbf_error *err)
{
    char key[64];
    fbf_flux_key(key, sizeof key, j->id, "R");
    if (!text)
        return fbf_errorf(err, -EPROTO, "job %llu: SUCCESS but Redis key \"%s\" does not exist: "
                          "RFC 27 wants R committed before the response",
                          (unsigned long long)j->id, key);
    cJSON *R = cJSON_ParseWithLength(text, len);
    fbf_error inner;
    fbf_flux_R r;
    int rc = R ? fbf_flux_R_read(R, fs->o.ranks, fs->o.cores, &j->cores, &r, &inner)
               : fbf_errorf(&inner, -EPROTO, "malformed JSON");
    cJSON_Delete(R);
    if (rc < 0)
        return fbf_errorf(err, -EPROTO, "job %llu: R (Redis key \"%s\"): %s",
                          (unsigned long long)j->id, key, inner.text);
    uint64_t n = fbf_idset_count(&j->cores);
    double exp = j->duration > 0 ? fs->now + j->duration : 0;
    if (n != (uint64_t)j->ncores)
        return fbf_errorf(err, -EPROTO, "job %llu: R holds %llu cores, its jobspec asks for %lld",
                          (unsigned long long)j->id, (unsigned long long)n, (long long)j->ncores);
    if (fbf_idset_intersects(&j->cores, &fs->busy)) {
        char got[128];
        fbf_idset_format(&j->cores, got, sizeof got);
        return fbf_errorf(err, -EPROTO, "job %llu: R's cores (resources %s) include cores "
                          "another job holds", (unsigned long long)j->id, got);
    }
    if (r.starttime != fs->now)
        return fbf_errorf(err, -EPROTO, "job %llu: R's starttime %.17g is not the instant's "
                          "%.17g", (unsigned long long)j->id, r.starttime, fs->now);
    if (r.expiration != exp)
        return fbf_errorf(err, -EPROTO, "job %llu: R's expiration %.17g is not starttime + the "
                          "jobspec's duration (%.17g)", (unsigned long long)j->id, r.expiration,
                          exp);
    return 0;
}

/* ---- annotations ---- */

static int check_keys(const cJSON *ann, fbf_error *err)
{
    for (const cJSON *c = ann->child; c; c = c->next) {
        bool dict = strcmp(c->string, "sched") == 0 || strcmp(c->string, "user") == 0;
        if (dict && !cJSON_IsObject(c) && !cJSON_IsNull(c))
            return fbf_errorf(err, -EPROTO, "annotations.%s: expected a dictionary or null, "
                              "got %s", c->string, fbf_job_json_kind(c));
    }
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(ann, "sched");
    if (!cJSON_IsObject(s))
        return 0;
    for (const cJSON *c = s->child; c; c = c->next) {
        bool num = strcmp(c->string, "t_estimate") == 0;
        bool str = strcmp(c->string, "reason_pending") == 0 ||
                   strcmp(c->string, "resource_summary") == 0 || strcmp(c->string, "queue") == 0;
        if (num && !cJSON_IsNumber(c) && !cJSON_IsNull(c))
            return fbf_errorf(err, -EPROTO, "annotations.sched.t_estimate: expected a number "
                              "(seconds since the epoch) or null, got %s", fbf_job_json_kind(c));
        if (str && !cJSON_IsString(c) && !cJSON_IsNull(c))
            return fbf_errorf(err, -EPROTO, "annotations.sched.%s: expected a string or null, "
                              "got %s", c->string, fbf_job_json_kind(c));
    }
    return 0;
}

/* RFC 27's update rules on orig (an object), recursively. */
static int update(cJSON *orig, const cJSON *upd, bool *changed)
{
    for (const cJSON *c = upd->child; c; c = c->next) {
        cJSON *cur = cJSON_GetObjectItemCaseSensitive(orig, c->string);
        if (cJSON_IsNull(c)) {
            if (cur) {
                cJSON_DeleteItemFromObjectCaseSensitive(orig, c->string);
                *changed = true;
            }
            continue;
        }
        if (cur && cJSON_IsObject(cur) && cJSON_IsObject(c)) {
            if (update(cur, c, changed) < 0)
                return -ENOMEM;
            continue;
        }
        if (cur && cJSON_Compare(cur, c, true))
            continue;
        cJSON *copy = cJSON_Duplicate(c, true);
        if (!copy)
            return -ENOMEM;
        /* a new dictionary holds no nulls */
        if (cJSON_IsObject(copy)) {
            cJSON *k = copy->child;
            while (k) {
                cJSON *next = k->next;
                if (cJSON_IsNull(k))
                    cJSON_Delete(cJSON_DetachItemViaPointer(copy, k));
                k = next;
            }
        }
        if (cur)
            cJSON_ReplaceItemInObjectCaseSensitive(orig, c->string, copy);
        else
            cJSON_AddItemToObject(orig, c->string, copy);
        *changed = true;
    }
    return 0;
}

int fs_annotate(fluxsim *fs, sjob *j, const cJSON *ann, bool *changed, fbf_error *err)
{
    *changed = false;
    fbf_error inner;
    int rc = check_keys(ann, &inner);
    if (rc < 0)
        return fbf_errorf(err, rc, "sched.alloc: job %llu: %s", (unsigned long long)j->id,
                          inner.text);
    if (!j->ann && !(j->ann = cJSON_CreateObject()))
        return fbf_errorf(err, -ENOMEM, "out of memory");
    if (update(j->ann, ann, changed) < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(j->ann, "sched");
    const cJSON *t = cJSON_IsObject(s) ? cJSON_GetObjectItemCaseSensitive(s, "t_estimate") : NULL;
    if (cJSON_IsNumber(t)) {
        if (!j->est_announced)
            fs->est_jobs++;
        j->est_announced = true;
        j->last_est = t->valuedouble;
        if (t->valuedouble < fs->now)
            fs->est_past++;
    } else if (j->st == SJ_ALLOC) {
        j->last_est = NAN;
    }
    if (!j->ann->child) { /* cleared entirely: no dictionary */
        cJSON_Delete(j->ann);
        j->ann = NULL;
    }
    return 0;
}
