/*
 * workload_json: the Batsim JSON workload reader (plain or gzip), the JSON
 * half of fbf_workload_read(); workload.h lists the field rules.
 *
 * Why strict: unlike an SWF trace, nothing is skipped. A job Batsim would
 * refuse, or one that cannot be replayed (a profile other than "delay"),
 * is an error naming the job and the field, since leaving it out would
 * replay a different workload from the one Batsim would run.
 *
 * Invariants: the file is read whole, as cJSON parses from one buffer;
 * jobs are added in array order; a profile is interned on first use by a
 * job, so profiles[] holds only the delay profiles that jobs use, in order
 * of first use, each under its name in the file. Fields other than those
 * workload.h names are ignored, so annotated workloads still read.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/lib/workload_priv.h"

/* Line and column (1-based) of byte offset off in text, for parse errors. */
static void line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && text[i]; i++) {
        if (text[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* A JSON number that is an integer, into *v. */
static bool json_int(const cJSON *n, int64_t *v)
{
    if (!cJSON_IsNumber(n))
        return false;
    double d = n->valuedouble;
    if (d != floor(d) || fabs(d) > 9e15)
        return false;
    *v = (int64_t)d;
    return true;
}

/* Resolves profile name for job `jid`: must exist and be a delay. */
static int64_t json_profile(fbf_workload *wl, const cJSON *profiles, const char *pname,
                            const char *jid, fbf_error *err)
{
    int64_t known = fbf_wl_profile_index(wl, pname);
    if (known >= 0)
        return known;
    const cJSON *p = cJSON_IsObject(profiles) ? cJSON_GetObjectItemCaseSensitive(profiles, pname)
                                              : NULL;
    if (!cJSON_IsObject(p))
        return fbf_errorf(err, -EINVAL, "%s: job %s: profile '%s' is not defined in \"profiles\"",
                          wl->path, jid, pname);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
    if (!cJSON_IsString(type))
        return fbf_errorf(err, -EINVAL, "%s: profile '%s': field \"type\" missing or not a string",
                          wl->path, pname);
    if (strcmp(type->valuestring, "delay") != 0)
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s: profile '%s' has type '%s'; only \"delay\" profiles "
                          "can be replayed",
                          wl->path, jid, pname, type->valuestring);
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
    if (!cJSON_IsNumber(delay) || !(delay->valuedouble >= 0) || isinf(delay->valuedouble))
        return fbf_errorf(err, -EINVAL,
                          "%s: profile '%s': field \"delay\" missing or not a number >= 0",
                          wl->path, pname);
    int64_t idx = fbf_wl_profile_intern(wl, pname, delay->valuedouble);
    if (idx < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return idx;
}

static int json_job(fbf_workload *wl, const cJSON *j, size_t i, const cJSON *profiles,
                    const fbf_wl_read_options *o, fbf_error *err)
{
    char raw[64], id[1024];
    if (!cJSON_IsObject(j))
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu] is not an object", wl->path, i);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
    int64_t num;
    const char *rawid;
    if (cJSON_IsString(jid)) {
        rawid = jid->valuestring;
    } else if (json_int(jid, &num)) {
        snprintf(raw, sizeof raw, "%lld", (long long)num);
        rawid = raw;
    } else {
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu]: field \"id\" missing or not a string",
                          wl->path, i);
    }
    int rc = fbf_wl_full_id(wl, rawid, id, sizeof id, err);
    if (rc)
        return rc;
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(j, "subtime");
    if (!cJSON_IsNumber(sub) || !(sub->valuedouble >= 0) || isinf(sub->valuedouble))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"subtime\" missing or not a number >= 0",
                          wl->path, id, i);
    int64_t res;
    if (!json_int(cJSON_GetObjectItemCaseSensitive(j, "res"), &res))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"res\" missing or not an integer",
                          wl->path, id, i);
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(j, "walltime");
    double walltime = -1;
    if (wt) {
        if (!cJSON_IsNumber(wt) || !(wt->valuedouble > 0 || wt->valuedouble == -1) ||
            isinf(wt->valuedouble))
            return fbf_errorf(err, -EINVAL,
                              "%s: job %s (jobs[%zu]): field \"walltime\" must be -1 or a "
                              "number > 0",
                              wl->path, id, i);
        walltime = wt->valuedouble;
    }
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
    if (!cJSON_IsString(prof))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): field \"profile\" missing or not a string",
                          wl->path, id, i);
    int64_t pidx = json_profile(wl, profiles, prof->valuestring, id, err);
    if (pidx < 0)
        return (int)pidx;
    double runtime = wl->profiles[pidx].delay;
    rc = fbf_wl_add_checked(wl, id, sub->valuedouble, runtime,
                            fbf_wl_pick_walltime(o, walltime, runtime, true), res, (uint32_t)pidx,
                            err);
    if (rc == -EEXIST)
        return fbf_errorf(err, -EINVAL, "%s: jobs[%zu]: job id '%s' appears twice", wl->path, i,
                          id);
    return rc;
}

int fbf_wl_read_json(fbf_workload *wl, gzFile gz, const fbf_wl_read_options *o, fbf_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = fbf_wl_read_all(gz, wl->path, &text, &len, err);
    if (rc)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, false);
    if (!root) {
        size_t line, col;
        line_col(text, end ? (size_t)(end - text) : 0, &line, &col);
        free(text);
        return fbf_errorf(err, -EINVAL, "%s: invalid JSON at line %zu, column %zu", wl->path,
                          line, col);
    }
    /* Only whitespace may follow the object: whatever else comes after it
     * (a second workload appended to the file) would be ignored, jobs and
     * all. */
    const char *rest = end ? end : text + len;
    while (rest < text + len && (*rest == ' ' || *rest == '\n' || *rest == '\r' || *rest == '\t'))
        rest++;
    if (rest < text + len) {
        size_t line, col;
        line_col(text, (size_t)(rest - text), &line, &col);
        free(text);
        cJSON_Delete(root);
        return fbf_errorf(err, -EINVAL, "%s: unexpected bytes after the JSON workload at line "
                          "%zu, column %zu", wl->path, line, col);
    }
    free(text);
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(root, "nb_res");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    int64_t nb_res = 0;
    if (!cJSON_IsObject(root)) {
        rc = fbf_errorf(err, -EINVAL, "%s: the top level is not a JSON object", wl->path);
    } else if (nb && (!json_int(nb, &nb_res) || nb_res < 1 || nb_res > UINT32_MAX)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"nb_res\" is not an integer >= 1", wl->path);
    } else if (!cJSON_IsArray(jobs)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"jobs\" missing or not an array", wl->path);
    } else if (profiles && !cJSON_IsObject(profiles)) {
        rc = fbf_errorf(err, -EINVAL, "%s: field \"profiles\" is not an object", wl->path);
    } else {
        wl->nb_res = (uint32_t)nb_res;
        size_t i = 0;
        for (const cJSON *j = jobs->child; j && !rc; j = j->next, i++) {
            if (o->max_jobs >= 0 && (int64_t)wl->nb_jobs >= o->max_jobs)
                break;
            rc = json_job(wl, j, i, profiles, o, err);
        }
    }
    cJSON_Delete(root);
    return rc;
}
