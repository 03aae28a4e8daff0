/*
 * job_json: Batsim's JSON job descriptions (see job_json.h).
 */
#include "io/job_json.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const char *fbf_job_json_kind(const cJSON *v)
{
    if (!v)
        return "nothing";
    if (cJSON_IsString(v))
        return "a string";
    if (cJSON_IsNumber(v))
        return isfinite(v->valuedouble) ? "a number" : "an infinite number";
    if (cJSON_IsBool(v))
        return "a boolean";
    if (cJSON_IsNull(v))
        return "null";
    if (cJSON_IsArray(v))
        return "an array";
    return "an object";
}

bool fbf_job_json_is_int(const cJSON *v)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble) &&
           v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9e15;
}

/* Field names are spelled out only on the error path: this runs for
 * every submission, and formatting them eagerly showed in profiles. */
static int bad(fbf_error *err, const char *where, const char *field, const char *want,
               const cJSON *got)
{
    return fbf_errorf(err, -EPROTO, "%s%s%s: expected %s, got %s", where, *where ? "." : "",
                      field, want, fbf_job_json_kind(got));
}

/* v2's store names a job by its number within the workload: the part of
 * id after '!'. */
static bool same_id(const cJSON *jid, const char *id)
{
    if (cJSON_IsString(jid))
        return strcmp(jid->valuestring, id) == 0;
    const char *name = strchr(id, '!');
    char text[32];
    snprintf(text, sizeof text, "%.0f", jid->valuedouble);
    return name && strcmp(name + 1, text) == 0;
}

int fbf_job_json_read(const cJSON *job, const char *where, const char *id, bool number_id,
                      fbf_job_desc *out, fbf_error *err)
{
    /* One walk over the members: this runs for every submission. The
     * first of a name counts, as cJSON_GetObjectItemCaseSensitive() says. */
    const cJSON *res = NULL, *wall = NULL, *sub = NULL, *jid = NULL, *prio = NULL, *user = NULL;
    for (const cJSON *m = job->child; m; m = m->next) {
        const char *k = m->string;
        if (!k)
            continue;
        const cJSON **slot = NULL;
        switch (k[0]) {
        case 'r': slot = strcmp(k, "res") == 0 ? &res : NULL; break;
        case 'w': slot = strcmp(k, "walltime") == 0 ? &wall : NULL; break;
        case 's': slot = strcmp(k, "subtime") == 0 ? &sub : NULL; break;
        case 'i': slot = strcmp(k, "id") == 0 ? &jid : NULL; break;
        case 'p': slot = strcmp(k, "priority") == 0 ? &prio : NULL; break;
        case 'u': slot = strcmp(k, "user") == 0 ? &user : NULL; break;
        default: break;
        }
        if (slot && !*slot)
            *slot = m;
    }
    if (!fbf_job_json_is_int(res))
        return bad(err, where, "res", "an integer", res);
    if (wall && !cJSON_IsNumber(wall))
        return bad(err, where, "walltime", "a number", wall);
    if (sub && !cJSON_IsNumber(sub))
        return bad(err, where, "subtime", "a number", sub);
    if (jid && id) {
        if (!cJSON_IsString(jid) && !(number_id && fbf_job_json_is_int(jid)))
            return bad(err, where, "id", "a string", jid);
        if (!same_id(jid, id)) {
            char text[64];
            if (cJSON_IsString(jid))
                snprintf(text, sizeof text, "\"%.60s\"", jid->valuestring);
            else
                snprintf(text, sizeof text, "%.0f", jid->valuedouble);
            return fbf_errorf(err, -EPROTO, "%s%sid: %s differs from job_id \"%s\"", where,
                              *where ? "." : "", text, id);
        }
    }
    out->res = (int64_t)res->valuedouble;
    out->walltime = cJSON_IsNumber(wall) ? wall->valuedouble : -1.0;
    out->subtime = cJSON_IsNumber(sub) ? sub->valuedouble : NAN;
    /* D9: a priority that is not a number counts as 0; NaN cannot come
     * from JSON. */
    out->priority = cJSON_IsNumber(prio) && !isnan(prio->valuedouble) ? prio->valuedouble : 0;
    out->user = user && !cJSON_IsNull(user) ? user : NULL;
    out->delay = NAN;
    return 0;
}
