/*
 * session_jsc: the session's side of job status and control (io/jsc.h):
 * updates applied at the start of a decision point, every state change
 * and reservation told as it happens, the records handed over at its end.
 *
 * A cancel of a waiting job withdraws it before the pass and rejects it
 * in the reply (FBF_OUT_REJECT: Batsim's REJECT_JOB, Flux's DENY); of a
 * running one, kills it in the reply (FBF_OUT_KILL), where the peer has
 * kills; its end, when the peer reports it, is a cancellation.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "io/session_int.h"

static int push(fbf_job_h **v, size_t *n, size_t *cap, fbf_job_h h)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        fbf_job_h *p = realloc(*v, c * sizeof *p);
        if (!p)
            return -ENOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = h;
    return 0;
}

void fbf_session_jsc_fini(fbf_session *s)
{
    free(s->ctl_rejects);
    free(s->ctl_kills);
    free(s->ctl_killed);
}

/* One update; 0, or an error with why. */
static int apply(fbf_session *s, const fbf_jsc_update *u, char *why, size_t cap)
{
    fbf_engine *e = s->engine;
    fbf_jsc *j = s->opt.jsc;
    fbf_job_h h = fbf_engine_find(e, u->id);
    if (h == FBF_JOB_NONE) {
        snprintf(why, cap, "unknown job %s", u->id);
        return -ENOENT;
    }
    fbf_job_state st = fbf_engine_job_state(e, h);
    fbf_error inner;
    int rc;
    if (u->op == FBF_JSC_WALLTIME) {
        if ((rc = fbf_engine_set_walltime(e, h, u->value, &inner)) < 0)
            snprintf(why, cap, "%s", inner.text);
        else
            fbf_jsc_walltime(j, u->id, u->value);
        return rc;
    }
    if (u->op == FBF_JSC_PRIORITY) {
        if ((rc = fbf_engine_set_priority(e, h, u->value, &inner)) < 0)
            snprintf(why, cap, "%s", inner.text);
        return rc;
    }
    if (st == FBF_JOB_WAITING) {
        if ((rc = fbf_engine_withdraw(e, h, &inner)) < 0) {
            snprintf(why, cap, "%s", inner.text);
            return rc;
        }
        fbf_jsc_cancelled(j, u->id);
        return push(&s->ctl_rejects, &s->nctl_rejects, &s->ctl_cap[0], h);
    }
    if (st != FBF_JOB_RUNNING) {
        snprintf(why, cap, "job %s neither waits nor runs", u->id);
        return -EINVAL;
    }
    if (fbf_jsc_lifecycle(j) != FBF_JSC_BATSIM) {
        snprintf(why, cap, "job %s runs, and this protocol gives the scheduler no kill", u->id);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->nctl_killed; i++)
        if (s->ctl_killed[i] == h)
            return 0; /* its kill is out already */
    if ((rc = push(&s->ctl_kills, &s->nctl_kills, &s->ctl_cap[1], h)) < 0)
        return rc;
    return push(&s->ctl_killed, &s->nctl_killed, &s->ctl_cap[2], h);
}

int fbf_session_jsc_updates(fbf_session *s, fbf_error *err)
{
    s->nctl_rejects = s->nctl_kills = 0;
    fbf_jsc *j = s->opt.jsc;
    if (!j)
        return 0;
    fbf_jsc_update *u;
    size_t n = fbf_jsc_take_updates(j, &u);
    for (size_t i = 0; i < n; i++) {
        char why[300] = "";
        int rc = fbf_engine_has_platform(s->engine) ? apply(s, &u[i], why, sizeof why)
                                                    : (snprintf(why, sizeof why, "no job yet"),
                                                       -EAGAIN);
        if (rc == -ENOMEM) {
            fbf_jsc_updates_free(u, n);
            return fbf_errorf(err, rc, "out of memory");
        }
        fbf_jsc_answer(j, u[i].token, rc, why);
    }
    fbf_jsc_updates_free(u, n);
    return 0;
}

void fbf_session_jsc_ended(fbf_session *s, fbf_job_h h, bool killed)
{
    fbf_jsc *j = s->opt.jsc;
    const char *id = fbf_engine_job_id(s->engine, h);
    for (size_t i = 0; i < s->nctl_killed && !killed; i++)
        killed = s->ctl_killed[i] == h;
    if (killed)
        fbf_jsc_cancelled(j, id);
    else
        fbf_jsc_completed(j, id);
}

void fbf_session_jsc_decided(fbf_session *s)
{
    fbf_jsc *j = s->opt.jsc;
    fbf_engine *e = s->engine;
    for (size_t i = 0; i < s->outs.n; i++) {
        const fbf_out *o = &s->outs.v[i];
        if (o->kind == FBF_OUT_EXECUTE) {
            fbf_jsc_started(j, fbf_engine_job_id(e, o->job), o->machines);
        } else if (o->kind == FBF_OUT_REJECT) {
            bool cancelled = false; /* said when the update was applied */
            for (size_t k = 0; k < s->nctl_rejects && !cancelled; k++)
                cancelled = s->ctl_rejects[k] == o->job;
            if (!cancelled)
                fbf_jsc_failed(j, fbf_engine_job_id(e, o->job));
        }
    }
    const fbf_job_h *set;
    size_t n;
    if (fbf_engine_reservations_set(e, &set, &n) == 0) {
        if (!fbf_engine_reservations_persist(e))
            fbf_jsc_estimates_reset(j);
        for (size_t i = 0; i < n; i++)
            if (fbf_engine_job_state(e, set[i]) == FBF_JOB_WAITING)
                fbf_jsc_estimate(j, fbf_engine_job_id(e, set[i]),
                                 fbf_engine_job_reservation(e, set[i]));
    }
    fbf_jsc_publish(j);
}
