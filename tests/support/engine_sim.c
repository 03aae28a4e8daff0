/*
 * engine_sim: the tiny simulation test_policies runs around the engine
 * (see engine_sim.h), the engine's side of what ref_simulate() does for
 * the reference.
 */
#include "support/engine_sim.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/orders/registry.h"
#include "policies/registry.h"

fbf_engine *fbf_test_sim_engine(const char *policy, int64_t depth, unsigned workers,
                                const uint32_t *ids, uint32_t nb)
{
    fbf_test_sim_config c = {.policy = policy, .depth = depth, .workers = workers};
    return fbf_test_sim_engine_cfg(&c, ids, nb);
}

fbf_engine *fbf_test_sim_engine_cfg(const fbf_test_sim_config *c, const uint32_t *ids,
                                    uint32_t nb)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(c->policy);
    assert_non_null(pe);
    fbf_engine_config cfg = {.policy = pe->ops,
                             .reservation_depth = c->depth ? c->depth : pe->default_depth,
                             .workers = c->workers,
                             .policy_options = c->policy_options};
    if (c->order)
        assert_non_null(cfg.order = fbf_order_lookup(c->order));
    if (c->backfill_order)
        assert_non_null(cfg.backfill_order = fbf_order_lookup(c->backfill_order));
    if (c->estimate) {
        int k = fbf_estimate_lookup(c->estimate);
        assert_true(k >= 0);
        cfg.estimate = (fbf_estimate)k;
    }
    fbf_error err;
    fbf_engine *e = fbf_engine_create(&cfg, &err);
    assert_non_null(e);
    fbf_idset set;
    fbf_idset_init(&set);
    for (uint32_t k = 0; k < nb; k++)
        assert_int_equal(fbf_idset_add_range(&set, ids[k], ids[k]), 0);
    assert_int_equal(fbf_engine_set_platform(e, &set, &err), 0);
    fbf_idset_fini(&set);
    return e;
}

static long job_index(const fbf_engine *e, fbf_job_h h)
{
    return strtol(fbf_engine_job_id(e, h) + 3, NULL, 10); /* "w0!<index>" */
}

int fbf_test_sim_run(const char *policy, int64_t depth, unsigned workers, const uint32_t *ids,
                     uint32_t nb, const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
                     fbf_test_dp_hook hook, void *ctx, fbf_engine **keep, char *err,
                     size_t errlen)
{
    fbf_test_sim_config c = {.policy = policy, .depth = depth, .workers = workers};
    return fbf_test_sim_run_cfg(&c, ids, nb, jobs, n, out, tr, hook, ctx, keep, err, errlen);
}

int fbf_test_sim_run_cfg(const fbf_test_sim_config *c, const uint32_t *ids, uint32_t nb,
                         const ref_job *jobs, size_t n, ref_result *out, ref_trace *tr,
                         fbf_test_dp_hook hook, void *ctx, fbf_engine **keep, char *err,
                         size_t errlen)
{
    fbf_engine *e = fbf_test_sim_engine_cfg(c, ids, nb);
    double *end = calloc(n + 1, sizeof *end);
    bool *running = calloc(n + 1, sizeof *running);
    size_t wcap = 16, nwake = 0, next = 0;
    double *wake = calloc(wcap, sizeof *wake);
    assert_true(end && running && wake);
    for (size_t i = 0; i < n; i++)
        out[i] = (ref_result){.start = NAN};
    fbf_error fe = {{0}};
    int rc = 0;
    int64_t busy = 0; /* resources held by running jobs */
    char id[32];
    for (size_t steps = 0; rc == 0; steps++) {
        double t = next < n ? jobs[next].arrival : INFINITY;
        for (size_t i = 0; i < n; i++)
            if (running[i] && end[i] < t)
                t = end[i];
        for (size_t w = 0; w < nwake; w++)
            t = wake[w] < t ? wake[w] : t;
        if (isinf(t))
            break;
        if (steps > 100 * (n + 10)) {
            snprintf(fe.text, sizeof fe.text, "simulation does not end");
            rc = -1;
            break;
        }
        size_t kept = 0;
        for (size_t w = 0; w < nwake; w++)
            if (wake[w] > t)
                wake[kept++] = wake[w];
        nwake = kept;
        if ((rc = fbf_engine_begin(e, t, &fe)) < 0)
            break;
        for (size_t i = 0; i < n && rc == 0; i++)
            if (running[i] && end[i] <= t) {
                snprintf(id, sizeof id, "w0!%zu", i);
                running[i] = false;
                busy -= jobs[i].res;
                rc = fbf_engine_complete(e, id, &fe);
            }
        for (; rc == 0 && next < n && jobs[next].arrival <= t; next++) {
            const ref_job *J = &jobs[next];
            char user[32];
            snprintf(id, sizeof id, "w0!%zu", next);
            snprintf(user, sizeof user, "\"u%d\"", J->user);
            fbf_submission sub = {.id = id,
                                  .subtime = J->subtime,
                                  .res = J->res,
                                  .walltime = J->walltime,
                                  .priority = J->priority,
                                  .user = J->user ? user : NULL,
                                  .delay = J->has_delay ? J->delay : NAN};
            rc = fbf_engine_submit_job(e, &sub, &fe);
        }
        if (rc < 0 || (rc = fbf_engine_decide(e, &fe)) < 0)
            break;
        ref_trace_push(tr, REF_DP, t, -1, NAN);
        size_t nd;
        const fbf_decision *d = fbf_engine_decisions(e, &nd);
        for (size_t k = 0; k < nd; k++) {
            if (d[k].kind == FBF_DEC_CALL_ME_LATER) {
                ref_trace_push(tr, REF_CALL_ME_LATER, t, -1, d[k].at);
                if (nwake == wcap)
                    assert_non_null(wake = realloc(wake, (wcap *= 2) * sizeof *wake));
                if (d[k].at > t)
                    wake[nwake++] = d[k].at;
                continue;
            }
            long i = job_index(e, d[k].job);
            assert_true(i >= 0 && (size_t)i < n);
            ref_trace_push(tr, (ref_kind)d[k].kind, t, i, NAN);
            if (d[k].kind == FBF_DEC_REJECT) {
                out[i].rejected = true;
                assert_int_equal(fbf_engine_job_state(e, d[k].job), FBF_JOB_REJECTED);
                continue;
            }
            assert_true(fbf_engine_job_start(e, d[k].job) == t);
            fbf_idset_format(fbf_engine_job_alloc(e, d[k].job), out[i].alloc,
                             sizeof out[i].alloc);
            out[i].start = t;
            running[i] = true;
            busy += jobs[i].res;
            end[i] = t + jobs[i].runtime;
        }
        assert_int_equal(fbf_engine_nb_free(e) + busy, nb);
        if (hook)
            hook(ctx, e, t);
    }
    if (rc < 0)
        snprintf(err, errlen, "engine error at %.17g: %s", fbf_engine_now(e), fe.text);
    free(end);
    free(running);
    free(wake);
    if (keep)
        *keep = e;
    else
        fbf_engine_destroy(e);
    return rc < 0 ? -1 : 0;
}

void fbf_test_rsv_log_init(fbf_test_rsv_log *l, fbf_job_h *handles, size_t n)
{
    for (size_t i = 0; i < n; i++)
        handles[i] = FBF_JOB_NONE;
    *l = (fbf_test_rsv_log){.n = n, .h = handles, .hash = 1469598103934665603ull};
}

void fbf_test_rsv_log_hook(void *arg, fbf_engine *e, double now)
{
    fbf_test_rsv_log *l = arg;
    char id[32];
    for (size_t i = 0; i < l->n; i++) {
        if (l->h[i] == FBF_JOB_NONE) {
            snprintf(id, sizeof id, "w0!%zu", i);
            l->h[i] = fbf_engine_find(e, id);
        }
        fbf_job_h h = l->h[i];
        if (h != FBF_JOB_NONE && fbf_engine_job_state(e, h) != FBF_JOB_WAITING)
            continue;
        double r = h == FBF_JOB_NONE ? -2 : fbf_engine_job_reservation(e, h);
        uint64_t bits;
        if (isnan(r))
            r = -1;
        memcpy(&bits, &r, sizeof bits);
        l->hash = (l->hash ^ bits ^ (uint64_t)i) * 0x100000001b3ull;
        l->checks++;
    }
    uint64_t nb;
    memcpy(&nb, &now, sizeof nb);
    l->hash = (l->hash ^ nb) * 0x100000001b3ull;
}
