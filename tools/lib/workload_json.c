/*
 * workload_json: the Batsim JSON workload reader (plain or gzip), the JSON
 * half of fbf_workload_read(); workload.h lists the field rules.
 *
 * Why strict: unlike an SWF trace, nothing is skipped. A file Batsim 4.2.1
 * would refuse to load is refused with Batsim's own text, checked in
 * Batsim's order (nb_res, every profile, then each job), so that a
 * replay never runs a workload Batsim would not; a job that cannot be
 * replayed (a profile other than a succeeding "delay", a negative or
 * infinite time) is an error of fastbf's own, naming the job and field.
 *
 * Invariants: the file is read whole, as cJSON parses from one buffer;
 * jobs are added in array order; a profile is interned on first use by a
 * job, so profiles[] holds only the delay profiles that jobs use, in order
 * of first use, each under its name in the file (Batsim too drops the
 * profiles no job uses). Fields other than those workload.h names are
 * ignored, so annotated workloads still read.
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

/* Batsim's error texts begin so (src/workload.cpp, jobs.cpp, profiles.cpp). */
#define BATSIM "Invalid JSON file '%s': "

/* A JSON number that is an integer rapidjson's IsInt() accepts (32-bit
 * signed), into *v. */
static bool json_int32(const cJSON *n, int64_t *v)
{
    if (!cJSON_IsNumber(n))
        return false;
    double d = n->valuedouble;
    if (d != floor(d) || d < INT32_MIN || d > INT32_MAX)
        return false;
    *v = (int64_t)d;
    return true;
}

typedef struct named {
    const char *name;
    size_t at;
} named;

static int named_cmp(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->at > y->at) - (x->at < y->at);
}

/* One profile as Batsim's Profile::from_json checks it, for the fields
 * every type has and those of a delay profile. */
static int check_profile(const fbf_workload *wl, const cJSON *p, fbf_error *err)
{
    const char *name = p->string;
    if (!cJSON_IsObject(p))
        return fbf_errorf(err, -EINVAL, BATSIM "profile '%s' value must be an object", wl->path,
                          name);
    const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
    if (!type)
        return fbf_errorf(err, -EINVAL, BATSIM "profile '%s' has no 'type' field", wl->path, name);
    if (!cJSON_IsString(type))
        return fbf_errorf(err, -EINVAL, BATSIM "profile '%s' has a non-string 'type' field",
                          wl->path, name);
    if (strcmp(type->valuestring, "delay") != 0)
        return 0;
    const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
    if (!delay)
        return fbf_errorf(err, -EINVAL, BATSIM "profile '%s' has no 'delay' field", wl->path, name);
    if (!cJSON_IsNumber(delay))
        return fbf_errorf(err, -EINVAL, BATSIM "profile '%s' has a non-number 'delay' field",
                          wl->path, name);
    if (!(delay->valuedouble > 0))
        return fbf_errorf(err, -EINVAL,
                          BATSIM "profile '%s' has a non-strictly-positive 'delay' field (%g)",
                          wl->path, name, delay->valuedouble);
    if (isinf(delay->valuedouble))
        return fbf_errorf(err, -EINVAL, "%s: profile '%s': \"delay\" %g is not finite", wl->path,
                          name, delay->valuedouble);
    return 0;
}

/* Every profile of the file, in file order, as Batsim loads them before
 * any job: a name met a second time is Batsim's duplication. */
static int check_profiles(const fbf_workload *wl, const cJSON *profiles, fbf_error *err)
{
    size_t n = (size_t)cJSON_GetArraySize(profiles), k = 0;
    named *v = malloc((n ? n : 1) * sizeof *v);
    bool *dup = calloc(n ? n : 1, sizeof *dup);
    int rc = 0;
    if (!v || !dup) {
        rc = fbf_errorf(err, -ENOMEM, "out of memory");
        goto out;
    }
    for (const cJSON *p = profiles->child; p; p = p->next, k++)
        v[k] = (named){p->string, k};
    qsort(v, n, sizeof *v, named_cmp);
    for (size_t i = 1; i < n; i++)
        if (strcmp(v[i].name, v[i - 1].name) == 0)
            dup[v[i].at] = true;
    k = 0;
    for (const cJSON *p = profiles->child; p && !rc; p = p->next, k++) {
        rc = check_profile(wl, p, err);
        if (!rc && dup[k])
            rc = fbf_errorf(err, -EINVAL, BATSIM "duplication of profile name '%s'", wl->path,
                            p->string);
    }
out:
    free(v);
    free(dup);
    return rc;
}

/* The profile pname of job jid (Batsim checked every profile already):
 * it must exist, and be a delay that succeeds for fastbf to replay it. */
static int64_t json_profile(fbf_workload *wl, const cJSON *profiles, const char *pname,
                            const char *jid, size_t i, fbf_error *err)
{
    int64_t known = fbf_wl_profile_index(wl, pname);
    if (known >= 0)
        return known;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(profiles, pname);
    if (!p)
        return fbf_errorf(err, -EINVAL,
                          BATSIM "the profile %s for job %s does not exist "
                                 "(jobs[%zu])",
                          wl->path, pname, jid, i);
    const char *type = cJSON_GetObjectItemCaseSensitive(p, "type")->valuestring;
    if (strcmp(type, "delay") != 0)
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s: profile '%s' has type '%s'; only \"delay\" profiles "
                          "can be replayed",
                          wl->path, jid, pname, type);
    /* Batsim ends the jobs of a profile whose "ret" is not 0 as
     * COMPLETED_FAILED; replaying them as successes would lie. */
    const cJSON *ret = cJSON_GetObjectItemCaseSensitive(p, "ret");
    int64_t rv = 0;
    if (ret && (!json_int32(ret, &rv) || rv != 0))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s: profile '%s' has a \"ret\" other than 0 "
                          "(Batsim fails its jobs); only jobs that succeed can be replayed",
                          wl->path, jid, pname);
    int64_t idx =
        fbf_wl_profile_intern(wl, pname, cJSON_GetObjectItemCaseSensitive(p, "delay")->valuedouble);
    if (idx < 0)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    return idx;
}

/* The job's user (unless null) and priority, passed on as they are. */
static int json_extra(fbf_workload *wl, const cJSON *j, fbf_error *err)
{
    static const char *const names[] = {"user", "priority"};
    char *text[2] = {NULL, NULL};
    int rc = 0;
    for (int k = 0; k < 2; k++) {
        const cJSON *m = cJSON_GetObjectItemCaseSensitive(j, names[k]);
        if (m && !cJSON_IsNull(m) && !(text[k] = cJSON_PrintUnformatted(m)))
            rc = -ENOMEM;
    }
    if (rc == 0 && (text[0] || text[1])) {
        size_t n = 32 + (text[0] ? strlen(text[0]) : 0) + (text[1] ? strlen(text[1]) : 0);
        char *buf = malloc(n);
        if (buf) {
            snprintf(buf, n, "%s%s%s%s", text[0] ? ",\"user\":" : "", text[0] ? text[0] : "",
                     text[1] ? ",\"priority\":" : "", text[1] ? text[1] : "");
            rc = fbf_wl_set_extra(wl, buf);
            free(buf);
        } else {
            rc = -ENOMEM;
        }
    }
    cJSON_free(text[0]);
    cJSON_free(text[1]);
    return rc < 0 ? fbf_errorf(err, -ENOMEM, "out of memory") : 0;
}

/* One job as Batsim's Job::from_json checks it (jid in its texts is the
 * full id), then what fastbf needs beyond Batsim to replay it. */
static int json_job(fbf_workload *wl, const cJSON *j, size_t i, const cJSON *profiles,
                    const fbf_wl_read_options *o, fbf_error *err)
{
    char raw[64], id[1024];
    if (!cJSON_IsObject(j))
        return fbf_errorf(err, -EINVAL, BATSIM "one job is not an object (jobs[%zu])", wl->path, i);
    const cJSON *jid = cJSON_GetObjectItemCaseSensitive(j, "id");
    int64_t num;
    const char *rawid;
    if (!jid)
        return fbf_errorf(err, -EINVAL, BATSIM "one job has no 'id' field (jobs[%zu])", wl->path,
                          i);
    if (cJSON_IsString(jid)) {
        rawid = jid->valuestring;
    } else if (json_int32(jid, &num)) {
        snprintf(raw, sizeof raw, "%lld", (long long)num);
        rawid = raw;
    } else {
        return fbf_errorf(err, -EINVAL,
                          BATSIM "on job id field is invalid, it should be a "
                                 "string or an integer (jobs[%zu])",
                          wl->path, i);
    }
    int rc = fbf_wl_full_id(wl, rawid, id, sizeof id, err);
    if (rc)
        return rc;
    const cJSON *sub = cJSON_GetObjectItemCaseSensitive(j, "subtime");
    if (!sub)
        return fbf_errorf(err, -EINVAL, BATSIM "job '%s' has no 'subtime' field (jobs[%zu])",
                          wl->path, id, i);
    if (!cJSON_IsNumber(sub))
        return fbf_errorf(err, -EINVAL,
                          BATSIM "job '%s' has a non-number 'subtime' field "
                                 "(jobs[%zu])",
                          wl->path, id, i);
    const cJSON *wt = cJSON_GetObjectItemCaseSensitive(j, "walltime");
    double walltime = -1;
    if (wt && !cJSON_IsNumber(wt))
        return fbf_errorf(err, -EINVAL,
                          BATSIM "job %s has a non-number 'walltime' field "
                                 "(jobs[%zu])",
                          wl->path, id, i);
    if (wt)
        walltime = wt->valuedouble;
    if (!(walltime == -1 || walltime > 0))
        return fbf_errorf(err, -EINVAL,
                          BATSIM "job '%s' has an invalid walltime (%g). It "
                                 "should either be -1 (no walltime) or a strictly positive number. "
                                 "(jobs[%zu])",
                          wl->path, id, walltime, i);
    const cJSON *jres = cJSON_GetObjectItemCaseSensitive(j, "res");
    int64_t res;
    if (!jres)
        return fbf_errorf(err, -EINVAL, BATSIM "job %s has no 'res' field (jobs[%zu])", wl->path,
                          id, i);
    if (!json_int32(jres, &res))
        return fbf_errorf(err, -EINVAL, BATSIM "job %s has a non-number 'res' field (jobs[%zu])",
                          wl->path, id, i);
    if (res < 0)
        return fbf_errorf(err, -EINVAL,
                          BATSIM "job %s has a negative 'res' field (%lld) "
                                 "(jobs[%zu])",
                          wl->path, id, (long long)res, i);
    const cJSON *prof = cJSON_GetObjectItemCaseSensitive(j, "profile");
    if (!prof)
        return fbf_errorf(err, -EINVAL, BATSIM "job %s has no 'profile' field (jobs[%zu])",
                          wl->path, id, i);
    if (!cJSON_IsString(prof))
        return fbf_errorf(err, -EINVAL,
                          BATSIM "job %s has a non-string 'profile' field "
                                 "(jobs[%zu])",
                          wl->path, id, i);
    int64_t pidx = json_profile(wl, profiles, prof->valuestring, id, i, err);
    if (pidx < 0)
        return (int)pidx;
    /* Beyond Batsim: times the replay's clock can hold. */
    if (!(sub->valuedouble >= 0) || isinf(sub->valuedouble))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): subtime %g cannot be "
                          "replayed (a finite number >= 0 is needed)",
                          wl->path, id, i, sub->valuedouble);
    if (isinf(walltime))
        return fbf_errorf(err, -EINVAL,
                          "%s: job %s (jobs[%zu]): walltime %g cannot be "
                          "replayed (it is not finite)",
                          wl->path, id, i, walltime);
    double runtime = wl->profiles[pidx].delay;
    rc = fbf_wl_add_checked(wl, id, sub->valuedouble, runtime,
                            fbf_wl_pick_walltime(o, walltime, runtime, true), res, (uint32_t)pidx,
                            err);
    if (rc == -EEXIST)
        return fbf_errorf(err, -EINVAL, BATSIM "duplication of job id '%s' (jobs[%zu])", wl->path,
                          id, i);
    return rc ? rc : json_extra(wl, j, err);
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
        return fbf_errorf(err, -EINVAL, BATSIM "could not be parsed (line %zu, column %zu)",
                          wl->path, line, col);
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
        return fbf_errorf(err, -EINVAL,
                          BATSIM "could not be parsed (unexpected bytes after the "
                                 "JSON workload at line %zu, column %zu)",
                          wl->path, line, col);
    }
    free(text);
    /* In Batsim's order: the top level, nb_res, every profile, the jobs. */
    const cJSON *nb = cJSON_GetObjectItemCaseSensitive(root, "nb_res");
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(root, "jobs");
    const cJSON *profiles = cJSON_GetObjectItemCaseSensitive(root, "profiles");
    int64_t nb_res = 0;
    if (!cJSON_IsObject(root))
        rc = fbf_errorf(err, -EINVAL, BATSIM "not a JSON object", wl->path);
    else if (!nb)
        rc = fbf_errorf(err, -EINVAL, BATSIM "the 'nb_res' field is missing", wl->path);
    else if (!json_int32(nb, &nb_res))
        rc = fbf_errorf(err, -EINVAL, BATSIM "the 'nb_res' field is not an integer", wl->path);
    else if (nb_res < 1)
        rc = fbf_errorf(err, -EINVAL, BATSIM "the value of the 'nb_res' field is invalid (%lld)",
                        wl->path, (long long)nb_res);
    else if (!profiles)
        rc = fbf_errorf(err, -EINVAL, BATSIM "the 'profiles' object is missing", wl->path);
    else if (!cJSON_IsObject(profiles))
        rc = fbf_errorf(err, -EINVAL, BATSIM "the 'profiles' member is not an object", wl->path);
    else if (!(rc = check_profiles(wl, profiles, err))) {
        if (!jobs) {
            rc = fbf_errorf(err, -EINVAL, BATSIM "the 'jobs' array is missing", wl->path);
        } else if (!cJSON_IsArray(jobs)) {
            rc = fbf_errorf(err, -EINVAL, BATSIM "the 'jobs' member is not an array", wl->path);
        } else {
            wl->nb_res = (uint32_t)nb_res;
            size_t i = 0;
            for (const cJSON *j = jobs->child; j && !rc; j = j->next, i++) {
                if (o->max_jobs >= 0 && (int64_t)wl->nb_jobs >= o->max_jobs)
                    break;
                rc = json_job(wl, j, i, profiles, o, err);
            }
        }
    }
    cJSON_Delete(root);
    return rc;
}
