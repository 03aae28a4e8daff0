/*
 * store: what fastbf-replay writes as Batsim would, apart from the
 * messages themselves: a job's JSON description, the SIMULATION_BEGINS
 * config, and in Redis mode (--redis) the keys Batsim sets (io/store.h):
 * nb_res at the start, then job_<id> and profile_<workload>!<profile> of
 * every job submitted by a message, pipelined just before that message is
 * sent, so they exist as soon as the scheduler can read them. Jobs the
 * scheduler registered (dynamic jobs) are not stored: it wrote their keys
 * itself, and dynamic.c read them from there (their profiles come by
 * REGISTER_PROFILE, as Batsim reads none from the store).
 *
 * Invariants: store_q holds the jobs the message being built submits, in
 * event order; profile_stored[p] is set once profile p is in the store
 * under the workload's own name (jobs whose id carries another workload
 * name store their profile every time: rare, and harmless).
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fbf_replay_job_desc(const fbf_replay *r, uint32_t job, fbf_jbuf *b)
{
    const fbf_wl_job *wj = &r->wl->jobs[job];
    fbf_jbuf_lit(b, "{\"id\":");
    fbf_jbuf_str(b, wj->id);
    fbf_jbuf_lit(b, ",\"subtime\":");
    fbf_jbuf_num(b, wj->subtime);
    fbf_jbuf_lit(b, ",\"walltime\":");
    fbf_jbuf_num(b, wj->walltime);
    fbf_jbuf_lit(b, ",\"res\":");
    fbf_jbuf_int(b, wj->res);
    fbf_jbuf_lit(b, ",\"profile\":");
    fbf_jbuf_str(b, r->wl->profiles[wj->profile].name);
    if (wj->extra) /* its user and priority, as Batsim forwards a job's fields */
        fbf_jbuf_raw(b, wj->extra, strlen(wj->extra));
    fbf_jbuf_lit(b, "}");
}

void fbf_replay_config_json(const fbf_replay *r, fbf_jbuf *b)
{
    const fbf_replay_config *c = &r->cfg;
    fbf_jbuf_lit(b, "{\"redis-enabled\":");
    if (c->redis) {
        fbf_jbuf_lit(b, "true,\"redis-hostname\":");
        fbf_jbuf_str(b, c->redis_host);
        fbf_jbuf_lit(b, ",\"redis-port\":");
        fbf_jbuf_int(b, c->redis_port);
        fbf_jbuf_lit(b, ",\"redis-prefix\":");
        fbf_jbuf_str(b, fbf_store_prefix(c->redis));
    } else {
        fbf_jbuf_lit(b, "false,\"redis-hostname\":\"127.0.0.1\",\"redis-port\":6379,"
                        "\"redis-prefix\":\"default\"");
    }
    /* Batsim 4.2.1's flat form; fastbf also reads the nested one. */
    fbf_jbuf_lit(b, ",\"profiles-forwarded-on-submission\":");
    fbf_jbuf_raw(b, c->forward_profiles ? "true" : "false", c->forward_profiles ? 4 : 5);
    fbf_jbuf_lit(b, ",\"dynamic-jobs-enabled\":");
    fbf_jbuf_raw(b, c->dyn_jobs ? "true" : "false", c->dyn_jobs ? 4 : 5);
    fbf_jbuf_lit(b, ",\"dynamic-jobs-acknowledged\":");
    fbf_jbuf_raw(b, c->dyn_acks ? "true" : "false", c->dyn_acks ? 4 : 5);
    fbf_jbuf_lit(b, ",\"profile-reuse-enabled\":");
    fbf_jbuf_raw(b, c->profile_reuse ? "true" : "false", c->profile_reuse ? 4 : 5);
    fbf_jbuf_lit(b, ",\"sched-config\":\"\",\"forward-unknown-events\":false}");
}

void fbf_replay_store_queue(fbf_replay *r, uint32_t job)
{
    /* A registered job's keys are the scheduler's, written before its
     * REGISTER_JOB: its acknowledgement leaves them as they are. */
    if (job >= r->nb_static)
        return;
    if (r->nstore == r->store_cap) {
        size_t cap = r->store_cap ? 2 * r->store_cap : 256;
        uint32_t *q = realloc(r->store_q, cap * sizeof *q);
        if (!q) {
            r->oom = true; /* stops the run before the next send */
            return;
        }
        r->store_q = q;
        r->store_cap = cap;
    }
    r->store_q[r->nstore++] = job;
}

int fbf_replay_store_start(fbf_replay *r)
{
    if (!r->cfg.redis)
        return FBF_EXIT_OK;
    r->profile_stored = calloc(r->wl->nb_profiles ? r->wl->nb_profiles : 1, 1);
    if (!r->profile_stored)
        return fbf_errorf(&r->err, -ENOMEM, "out of memory"), FBF_EXIT_INTERNAL;
    char nb[16];
    int len = snprintf(nb, sizeof nb, "%u", r->cfg.nb_res);
    fbf_store_item it = {.name = "nb_res", .value = nb, .len = (size_t)len};
    fbf_error e;
    if (fbf_store_set(r->cfg.redis, FBF_STORE_PLAIN, &it, 1, &e) < 0)
        return fbf_errorf(&r->err, -EIO, "%s", e.text), FBF_EXIT_INVALID;
    return FBF_EXIT_OK;
}

/* The "<workload>!<profile>" name of job's profile into b (appended). */
static void profile_name(const fbf_replay *r, uint32_t job, fbf_jbuf *b)
{
    const char *id = r->wl->jobs[job].id;
    const char *bang = strchr(id, '!');
    fbf_jbuf_raw(b, id, bang ? (size_t)(bang - id) + 1 : 0);
    if (!bang)
        fbf_jbuf_lit(b, "!");
    const char *p = r->wl->profiles[r->wl->jobs[job].profile].name;
    fbf_jbuf_raw(b, p, strlen(p));
}

/* Offsets of one pending SET in store_text: name, value, value end. */
typedef struct set_at {
    size_t name, value, end;
    int kind;
} set_at;

int fbf_replay_store_pending(fbf_replay *r)
{
    size_t n = r->nstore;
    if (!r->cfg.redis || n == 0)
        return FBF_EXIT_OK;
    r->nstore = 0;
    /* Every text first (the buffer may move while it grows), then the
     * items pointing into it. Names and values are NUL-separated. */
    set_at *at = malloc(2 * n * sizeof *at);
    fbf_store_item *items = malloc(2 * n * sizeof *items);
    fbf_jbuf *b = &r->store_text;
    fbf_jbuf_reset(b);
    size_t m = 0;
    for (size_t i = 0; at && items && i < n; i++) {
        uint32_t job = r->store_q[i];
        const fbf_wl_job *wj = &r->wl->jobs[job];
        at[m].kind = FBF_STORE_JOB;
        at[m].name = b->len;
        fbf_jbuf_raw(b, wj->id, strlen(wj->id) + 1);
        at[m].value = b->len;
        fbf_replay_job_desc(r, job, b);
        at[m++].end = b->len;
        fbf_jbuf_raw(b, "", 1);
        const char *bang = strchr(wj->id, '!');
        bool own = bang && (size_t)(bang - wj->id) == strlen(r->wl->name) &&
                   strncmp(wj->id, r->wl->name, (size_t)(bang - wj->id)) == 0;
        if (own && r->profile_stored[wj->profile])
            continue;
        if (own)
            r->profile_stored[wj->profile] = 1;
        at[m].kind = FBF_STORE_PROFILE;
        at[m].name = b->len;
        profile_name(r, job, b);
        fbf_jbuf_raw(b, "", 1);
        at[m].value = b->len;
        fbf_jbuf_lit(b, "{\"type\":\"delay\",\"delay\":");
        fbf_jbuf_num(b, r->wl->profiles[wj->profile].delay);
        fbf_jbuf_lit(b, "}");
        at[m++].end = b->len;
        fbf_jbuf_raw(b, "", 1);
    }
    if (!at || !items || b->oom) {
        free(at);
        free(items);
        return fbf_errorf(&r->err, -ENOMEM, "out of memory"), FBF_EXIT_INTERNAL;
    }
    /* Jobs and profiles go in two pipelines, one per key kind. */
    int rc = 0;
    fbf_error e;
    for (int kind = FBF_STORE_JOB; kind <= FBF_STORE_PROFILE && rc == 0; kind++) {
        size_t k = 0;
        for (size_t i = 0; i < m; i++)
            if (at[i].kind == kind)
                items[k++] = (fbf_store_item){.name = b->p + at[i].name,
                                                  .value = b->p + at[i].value,
                                                  .len = at[i].end - at[i].value};
        if (k)
            rc = fbf_store_set(r->cfg.redis, (fbf_store_kind)kind, items, k, &e);
    }
    free(at);
    free(items);
    if (rc < 0)
        return fbf_errorf(&r->err, rc, "message #%zu (%s): storing job descriptions: %s",
                          r->msg_index, r->msg_kind, e.text), FBF_EXIT_INVALID;
    return FBF_EXIT_OK;
}
