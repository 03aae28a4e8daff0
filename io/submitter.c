/*
 * submitter: fastbf's own registrations (see submitter.h).
 *
 * The plan is copied and sorted once by (subtime, plan order), so a
 * decision point costs O(jobs due). Each job carries the index of its
 * (workload, profile) pair, computed once by sorting the pairs; a flag per
 * pair says whether its REGISTER_PROFILE was sent, so a profile shared by
 * a million jobs is registered once, just before the first of them.
 *
 * In Redis mode the descriptions of a call's due jobs (and of their new
 * profiles) are written to the store before any event is appended or any
 * flag moves, so a failed write leaves the register as it was.
 *
 * Invariants: next is the first job not registered yet; finished says
 * whether the last NOTIFY sent about registration was registration_finished
 * (a pause or the end); asked is the latest CALL_ME_LATER this module sent.
 */
#include "io/submitter.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct reg_job {
    char *id, *profile;
    double subtime, walltime, delay;
    int64_t res;
    size_t pair; /* index in sent[] */
} reg_job;

struct fbf_submitter {
    fbf_submitter_options opt;
    reg_job *jobs;
    size_t n, next;
    bool *sent;  /* per pair, with profile reuse: its REGISTER_PROFILE was sent */
    bool configured, acks, reuse, finished;
    double asked;        /* the latest CALL_ME_LATER for a job's subtime */
    double reopen_asked; /* the latest one to re-open registration */
    double noted; /* the session's latest CALL_ME_LATER (it wakes us too) */
    size_t continues;
    fbf_store *store; /* Redis mode: borrowed; NULL: off */
};

typedef struct sort_key {
    const fbf_submitter_job *j;
    size_t idx;
} sort_key;

static int by_subtime(const void *a, const void *b)
{
    const sort_key *x = a, *y = b;
    if (x->j->subtime != y->j->subtime)
        return x->j->subtime < y->j->subtime ? -1 : 1;
    return (x->idx > y->idx) - (x->idx < y->idx);
}

/* The workload part of an id: its length before the '!'. */
static size_t wl_len(const char *id) { return (size_t)(strchr(id, '!') - id); }

static int by_pair(const void *a, const void *b)
{
    const reg_job *x = *(reg_job *const *)a, *y = *(reg_job *const *)b;
    size_t lx = wl_len(x->id), ly = wl_len(y->id);
    int c = memcmp(x->id, y->id, lx < ly ? lx : ly);
    if (c == 0 && lx != ly)
        c = lx < ly ? -1 : 1;
    return c ? c : strcmp(x->profile, y->profile);
}

static int check_job(const fbf_submitter_job *j, size_t i, fbf_error *err)
{
    if (!j->id || !j->profile)
        return fbf_errorf(err, -EINVAL, "registration plan: job %zu has no id or profile", i);
    /* Batsim splits the id at '!' and wants exactly two parts, the
     * workload it looks up and the job's name: an empty part, or a second
     * '!', stops it. */
    const char *bang = strchr(j->id, '!');
    if (!bang || bang == j->id || !bang[1] || strchr(bang + 1, '!'))
        return fbf_errorf(err, -EINVAL, "registration plan: job id \"%s\" is not of the form "
                          "workload!name (both parts non-empty, one '!')", j->id);
    if (!j->profile[0])
        return fbf_errorf(err, -EINVAL, "registration plan: job %s: empty profile name", j->id);
    /* Batsim reads res as a JSON int (32 bits). */
    if (j->res < 1 || j->res > INT32_MAX)
        return fbf_errorf(err, -EINVAL, "registration plan: job %s: res %lld is not in [1, %d]",
                          j->id, (long long)j->res, INT32_MAX);
    if (!(j->walltime == -1 || j->walltime > 0) || !isfinite(j->walltime))
        return fbf_errorf(err, -EINVAL, "registration plan: job %s: walltime %g is neither -1 "
                          "nor > 0", j->id, j->walltime);
    if (!(j->subtime >= 0) || !isfinite(j->subtime) || !(j->delay >= 0) || !isfinite(j->delay))
        return fbf_errorf(err, -EINVAL, "registration plan: job %s: negative subtime or delay",
                          j->id);
    return 0;
}

static int by_id(const void *a, const void *b)
{
    return strcmp((*(reg_job *const *)a)->id, (*(reg_job *const *)b)->id);
}

/* Batsim refuses a second job under an id already used; found here, the
 * mistake stops fastbf before the simulation starts instead of midway. */
static int check_unique_ids(const fbf_submitter *r, fbf_error *err)
{
    reg_job **v = malloc((r->n ? r->n : 1) * sizeof *v);
    if (!v)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n; i++)
        v[i] = &r->jobs[i];
    qsort(v, r->n, sizeof *v, by_id);
    int rc = 0;
    for (size_t i = 1; i < r->n && rc == 0; i++)
        if (strcmp(v[i - 1]->id, v[i]->id) == 0)
            rc = fbf_errorf(err, -EINVAL, "registration plan: job id %s appears twice", v[i]->id);
    free(v);
    return rc;
}

/* Gives each job its pair index; a pair whose jobs disagree on the delay
 * would be one profile with two meanings. */
static int assign_pairs(fbf_submitter *r, fbf_error *err)
{
    reg_job **v = malloc((r->n ? r->n : 1) * sizeof *v);
    r->sent = calloc(r->n ? r->n : 1, sizeof *r->sent);
    if (!v || !r->sent) {
        free(v);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++)
        v[i] = &r->jobs[i];
    qsort(v, r->n, sizeof *v, by_pair);
    size_t pair = 0;
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        if (i && by_pair(&v[i - 1], &v[i]) != 0)
            pair++;
        else if (i && v[i - 1]->delay != v[i]->delay)
            rc = fbf_errorf(err, -EINVAL, "registration plan: jobs %s and %s share profile %s "
                            "with different delays (%g, %g)", v[i - 1]->id, v[i]->id,
                            v[i]->profile, v[i - 1]->delay, v[i]->delay);
        v[i]->pair = pair;
    }
    free(v);
    return rc;
}

fbf_submitter *fbf_submitter_create(const fbf_submitter_job *jobs, size_t n,
                                          const fbf_submitter_options *opt, fbf_error *err)
{
    fbf_submitter *r = calloc(1, sizeof *r);
    sort_key *k = malloc((n ? n : 1) * sizeof *k);
    if (!r || !k || !(r->jobs = calloc(n ? n : 1, sizeof *r->jobs))) {
        free(k);
        fbf_submitter_destroy(r);
        fbf_errorf(err, -ENOMEM, "out of memory for a plan of %zu jobs", n);
        return NULL;
    }
    if (opt)
        r->opt = *opt;
    r->asked = r->reopen_asked = r->noted = NAN;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = check_job(&jobs[i], i, err);
        k[i] = (sort_key){&jobs[i], i};
    }
    if (rc == 0 && !(r->opt.pause >= 0 && isfinite(r->opt.pause)))
        rc = fbf_errorf(err, -EINVAL, "registration pause %g is not a number of seconds >= 0",
                        r->opt.pause);
    if (rc == 0) {
        qsort(k, n, sizeof *k, by_subtime);
        for (size_t i = 0; i < n && rc == 0; i++, r->n++) {
            const fbf_submitter_job *j = k[i].j;
            reg_job *d = &r->jobs[i];
            *d = (reg_job){.subtime = j->subtime, .walltime = j->walltime, .delay = j->delay,
                           .res = j->res, .id = strdup(j->id), .profile = strdup(j->profile)};
            if (!d->id || !d->profile)
                rc = fbf_errorf(err, -ENOMEM, "out of memory");
        }
    }
    free(k);
    if (rc == 0)
        rc = check_unique_ids(r, err);
    if (rc == 0)
        rc = assign_pairs(r, err);
    if (rc < 0) {
        fbf_submitter_destroy(r);
        return NULL;
    }
    return r;
}

void fbf_submitter_destroy(fbf_submitter *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->jobs[i].id);
        free(r->jobs[i].profile);
    }
    free(r->jobs);
    free(r->sent);
    free(r);
}

int fbf_submitter_configure(fbf_submitter *r, bool dynamic_jobs, bool acks,
                               bool profile_reuse, fbf_error *err)
{
    if (!dynamic_jobs)
        return fbf_errorf(err, -ENOTSUP,
                          "data.config: dynamic jobs are disabled (dynamic-jobs-enabled is "
                          "false), so fastbf cannot register its workload; run Batsim with "
                          "--enable-dynamic-jobs");
    r->configured = true;
    r->acks = acks;
    r->reuse = profile_reuse;
    return 0;
}

/* The name job j's profile is registered under: the plan's with profile
 * reuse; without, one of the job's own, "<profile>@<job name>", since
 * Batsim drops a profile once the first job using it has completed and
 * never takes the name again. malloc'ed; NULL when out of memory. */
static char *profile_name(const fbf_submitter *r, const reg_job *j)
{
    if (r->reuse)
        return strdup(j->profile);
    const char *name = strchr(j->id, '!') + 1;
    size_t len = strlen(j->profile) + 1 + strlen(name) + 1;
    char *s = malloc(len);
    if (s)
        snprintf(s, len, "%s@%s", j->profile, name);
    return s;
}

/* The profiles object of workload wl (the first wl_len bytes of an id). */
static const cJSON *workload_profiles(const cJSON *profiles, const char *id, size_t wl)
{
    const cJSON *w;
    cJSON_ArrayForEach(w, profiles)
    {
        if (strlen(w->string) == wl && memcmp(w->string, id, wl) == 0)
            return w;
    }
    return NULL;
}

/* Without profile reuse: no job's own profile name may be one Batsim
 * already has (it refuses to register a name twice). */
static int check_own_names(const fbf_submitter *r, const cJSON *profiles, fbf_error *err)
{
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        const reg_job *j = &r->jobs[i];
        size_t wl = wl_len(j->id);
        const cJSON *w = workload_profiles(profiles, j->id, wl);
        if (!w)
            continue;
        char *name = profile_name(r, j);
        if (!name)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        if (cJSON_GetObjectItemCaseSensitive(w, name))
            rc = fbf_errorf(err, -EINVAL,
                            "data.profiles.%.*s.%s: Batsim already has a profile of the name "
                            "fastbf would register for job %s (without profile reuse each "
                            "registered job gets a profile of its own, <profile>@<job name>)",
                            (int)wl, j->id, name, j->id);
        free(name);
    }
    return rc;
}

/* A profile Batsim already has must not be registered again (Batsim stops
 * on a duplicate); one lookup per (workload, profile) pair of the plan. */
int fbf_submitter_known_profiles(fbf_submitter *r, const cJSON *profiles,
                                    fbf_error *err)
{
    if (!cJSON_IsObject(profiles) || !profiles->child)
        return 0;
    if (!r->reuse)
        return check_own_names(r, profiles, err);
    bool *seen = calloc(r->n ? r->n : 1, sizeof *seen);
    if (!seen)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = 0;
    for (size_t i = 0; i < r->n && rc == 0; i++) {
        const reg_job *j = &r->jobs[i];
        if (seen[j->pair])
            continue;
        seen[j->pair] = true;
        size_t wl = wl_len(j->id);
        const cJSON *w = workload_profiles(profiles, j->id, wl);
        const cJSON *p = w ? cJSON_GetObjectItemCaseSensitive(w, j->profile) : NULL;
        if (!p)
            continue;
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(p, "type");
        const cJSON *delay = cJSON_GetObjectItemCaseSensitive(p, "delay");
        if (!cJSON_IsString(type) || strcmp(type->valuestring, "delay") != 0 ||
            !cJSON_IsNumber(delay) || delay->valuedouble != j->delay)
            rc = fbf_errorf(err, -EINVAL,
                            "data.profiles.%.*s.%s: Batsim already has this profile, and it "
                            "is not the delay %g that job %s needs",
                            (int)wl, j->id, j->profile, j->delay, j->id);
        else
            r->sent[j->pair] = true;
    }
    free(seen);
    return rc;
}

void fbf_submitter_use_store(fbf_submitter *r, fbf_store *store)
{
    r->store = store;
}

bool fbf_submitter_acks(const fbf_submitter *r) { return r->acks; }
double fbf_submitter_asked(const fbf_submitter *r) { return r->asked; }
void fbf_submitter_note_call(fbf_submitter *r, double t) { r->noted = t; }
size_t fbf_submitter_nb_registered(const fbf_submitter *r) { return r->next; }
size_t fbf_submitter_nb_continues(const fbf_submitter *r) { return r->continues; }
bool fbf_submitter_finished(const fbf_submitter *r) { return r->finished; }

static int add_notify(fbf_decisions *outs, const char *what)
{
    fbf_out *o = fbf_decisions_add(outs, FBF_OUT_NOTIFY);
    if (!o)
        return -ENOMEM;
    o->text = what;
    return 0;
}

static int add_profile(fbf_decisions *outs, const reg_job *j, const char *name)
{
    fbf_out *o = fbf_decisions_add(outs, FBF_OUT_REGISTER_PROFILE);
    if (!o)
        return -ENOMEM;
    /* The workload part of the id, whole: a truncated name would register
     * the profile in another workload than the job's. */
    o->workload = fbf_decisions_text(outs, j->id, wl_len(j->id));
    o->profile = fbf_decisions_text(outs, name, strlen(name));
    o->at = j->delay;
    return o->workload && o->profile ? 0 : -ENOMEM;
}

/* Batsim parses a registered job as a workload job: id, subtime, res and
 * profile are mandatory there (a description without subtime stops
 * Batsim), so the job says when it is submitted: now. */
static cJSON *job_desc(const reg_job *j, const char *profile, double now)
{
    cJSON *job = cJSON_CreateObject();
    if (job && (!cJSON_AddStringToObject(job, "id", j->id) ||
                !cJSON_AddNumberToObject(job, "subtime", now) ||
                !cJSON_AddNumberToObject(job, "res", (double)j->res) ||
                !cJSON_AddNumberToObject(job, "walltime", j->walltime) ||
                !cJSON_AddStringToObject(job, "profile", profile))) {
        cJSON_Delete(job);
        job = NULL;
    }
    return job;
}

/* REGISTER_JOB with the job's description, or with job_id alone (Redis
 * mode: the description is in the store). The job says when it is
 * submitted: now. */
static int add_job(fbf_decisions *outs, double now, const reg_job *j, const char *profile,
                   bool with_desc)
{
    fbf_out *o = fbf_decisions_add(outs, FBF_OUT_REGISTER_JOB);
    if (!o)
        return -ENOMEM;
    o->id = j->id;
    o->profile = fbf_decisions_text(outs, profile, strlen(profile));
    o->at = now;
    o->res = j->res;
    o->walltime = j->walltime;
    o->described = with_desc;
    return o->profile ? 0 : -ENOMEM;
}

/* How long before the next job registration re-opens after a pause: long
 * enough that the decision point it takes comes before the job's. */
static double reopen_lead(const fbf_submitter *r) { return fmin(r->opt.pause / 2, 1.0); }

/* Redis mode: the descriptions of the jobs r->jobs[next .. end), in one
 * pipeline. Touches no flag. Profiles are not written: Batsim 4.2.1 reads
 * a registered job's profile only from REGISTER_PROFILE. */
static int store_due(fbf_submitter *r, size_t end, double now, fbf_error *err)
{
    size_t cap = end - r->next;
    fbf_store_item *items = calloc(cap ? cap : 1, sizeof *items);
    fbf_store_kind *kinds = calloc(cap ? cap : 1, sizeof *kinds);
    char **owned = calloc(cap ? cap : 1, sizeof *owned); /* texts to free */
    size_t m = 0;
    int rc = items && kinds && owned ? 0 : -ENOMEM;
    for (size_t i = r->next; i < end && rc == 0; i++, m++) {
        const reg_job *j = &r->jobs[i];
        char *profile = profile_name(r, j);
        cJSON *desc = profile ? job_desc(j, profile, now) : NULL;
        char *text = desc ? cJSON_PrintUnformatted(desc) : NULL;
        cJSON_Delete(desc);
        free(profile);
        if (!text) {
            rc = -ENOMEM;
            break;
        }
        owned[m] = text;
        kinds[m] = FBF_STORE_JOB;
        items[m] = (fbf_store_item){.name = j->id, .value = text, .len = strlen(text)};
    }
    fbf_error inner;
    if (rc == 0 && (rc = fbf_store_set_kinds(r->store, kinds, items, m, &inner)) < 0)
        fbf_errorf(err, rc, "registering %zu job(s) at %g through Redis: %s", end - r->next,
                   now, inner.text);
    else if (rc < 0)
        fbf_errorf(err, rc, "out of memory");
    for (size_t i = 0; owned && i < m; i++)
        free(owned[i]);
    free(items);
    free(kinds);
    free(owned);
    return rc;
}

static int add_continue(fbf_submitter *r, fbf_decisions *outs)
{
    r->finished = false;
    r->continues++;
    return add_notify(outs, "continue_registration");
}

int fbf_submitter_due(fbf_submitter *r, double now, fbf_decisions *outs,
                         fbf_engine *engine, fbf_error *err)
{
    if (!r->configured || r->next == r->n || r->jobs[r->next].subtime > now)
        return 0;
    /* Batsim checks a REGISTER_JOB against the registration state it had
     * before the reply: a continue_registration of the same reply comes
     * too late for it. Registration normally re-opens one decision point
     * ahead (fbf_submitter_close()); when it did not, it re-opens now
     * and the jobs are registered at the next decision point. */
    if (r->finished)
        return add_continue(r, outs) < 0 ? fbf_errorf(err, -ENOMEM, "out of memory") : 0;
    if (r->store) {
        size_t end = r->next;
        while (end < r->n && r->jobs[end].subtime <= now)
            end++;
        int rc = store_due(r, end, now, err);
        if (rc < 0)
            return rc;
    }
    for (; r->next < r->n && r->jobs[r->next].subtime <= now; r->next++) {
        const reg_job *j = &r->jobs[r->next];
        char *profile = profile_name(r, j);
        int rc = profile ? 0 : -ENOMEM;
        /* With reuse, a pair's profile is registered once; without, every
         * job has its own. In Redis mode too: Batsim takes profiles only
         * from REGISTER_PROFILE. */
        if (rc == 0 && (!r->reuse || !r->sent[j->pair])) {
            rc = add_profile(outs, j, profile);
            r->sent[j->pair] = rc == 0;
        }
        if (rc == 0)
            rc = add_job(outs, now, j, profile, !r->store);
        free(profile);
        if (rc < 0)
            return fbf_errorf(err, -ENOMEM, "out of memory");
        if (engine) {
            /* Batsim submits a registered job at once, at the current
             * time; without an acknowledgement fastbf does the same. */
            fbf_error inner;
            rc = fbf_engine_submit(engine, j->id, now, j->res, j->walltime, &inner);
            if (rc < 0)
                return fbf_errorf(err, rc, "registering job %s: %s", j->id, inner.text);
        }
    }
    return 0;
}

/* Appends CALL_ME_LATER(t), unless *memo says t is already asked for. */
static int add_call(fbf_submitter *r, double *memo, fbf_decisions *outs, double t)
{
    if (t == *memo || t == r->noted)
        return 0;
    *memo = t;
    fbf_out *o = fbf_decisions_add(outs, FBF_OUT_CALL_ME_LATER);
    if (!o)
        return -ENOMEM;
    o->at = t;
    o->rounded = true; /* as the reply printed it before */
    return 0;
}

int fbf_submitter_close(fbf_submitter *r, double now, double earliest,
                           fbf_decisions *outs, fbf_error *err)
{
    if (!r->configured || (r->finished && r->next == r->n))
        return 0;
    int rc = 0;
    double t = r->next < r->n ? r->jobs[r->next].subtime : NAN;
    if (r->finished) {
        /* In a pause: re-open one decision point before the next job. */
        if (now >= t - reopen_lead(r))
            rc = add_continue(r, outs);
    } else if (r->next == r->n) {
        rc = add_notify(outs, "registration_finished");
        r->finished = true;
    } else {
        if (r->opt.pause > 0 && t - now > r->opt.pause) {
            rc = add_notify(outs, "registration_finished");
            r->finished = true;
            if (rc == 0)
                rc = add_call(r, &r->reopen_asked, outs,
                              fmax(t - reopen_lead(r), earliest));
        }
        if (rc == 0)
            rc = add_call(r, &r->asked, outs, fmax(t, earliest));
    }
    return rc < 0 ? fbf_errorf(err, -ENOMEM, "out of memory") : 0;
}
