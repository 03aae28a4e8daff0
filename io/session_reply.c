/*
 * session_reply: the pass of a decision point and the decisions of its
 * reply (see session.h for their order). Every engine decision becomes one
 * typed decision; a job given up after --max-wait is said why (metadata)
 * then rejected; --tag-starts follows each start with why it started.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/jbuf.h"
#include "io/session_int.h"

/* The decisions before the next one, as a peer counts events: the kills
 * of a reply go in one. */
typedef struct counter {
    size_t events;
    bool killed;
} counter;

static double earliest_call(const fbf_session *s, const counter *c)
{
    return fbf_engine_now(s->engine) + s->opt.call_margin +
           s->opt.call_per_event * (double)c->events;
}

static fbf_out *add(fbf_session *s, counter *c, fbf_out_kind kind)
{
    if (kind != FBF_OUT_KILL || !c->killed)
        c->events++;
    c->killed |= kind == FBF_OUT_KILL;
    return fbf_decisions_add(&s->outs, kind);
}

static const char *start_tag(fbf_session *s, fbf_job_h j)
{
    switch (fbf_engine_job_start_reason(s->engine, j)) {
    case FBF_START_BACKFILLED: return "reason=backfilled";
    case FBF_START_RESERVATION: {
        char t[64];
        int n = snprintf(t, sizeof t, "reason=reservation rsv=");
        fbf_jbuf_fmt_json(t + n, sizeof t - (size_t)n, fbf_engine_now(s->engine));
        return fbf_decisions_text(&s->outs, t, strlen(t));
    }
    default: return "reason=head";
    }
}

static void put_call(fbf_session *s, counter *c, double at)
{
    /* A peer wakes the scheduler once per request: asking again for a
     * time still to come would only double the wake-up. */
    fbf_submitter *sub = s->opt.submitter;
    at = fmax(at, earliest_call(s, c));
    if ((at == s->last_call || (sub && at == fbf_submitter_asked(sub))) &&
        at > fbf_engine_now(s->engine))
        return;
    s->last_call = at;
    if (sub)
        fbf_submitter_note_call(sub, at);
    fbf_out *o = add(s, c, FBF_OUT_CALL_ME_LATER);
    if (o)
        o->at = at;
}

static void put_decisions(fbf_session *s, counter *c)
{
    size_t n;
    const fbf_decision *d = fbf_engine_decisions(s->engine, &n);
    fbf_out *o;
    /* Cancelled by an update (session_jsc.c): rejections first, as D0's. */
    for (size_t i = 0; i < s->nctl_rejects; i++)
        if ((o = add(s, c, FBF_OUT_REJECT)))
            o->job = s->ctl_rejects[i];
    for (size_t i = 0; i < s->nctl_kills; i++)
        if ((o = add(s, c, FBF_OUT_KILL)))
            o->job = s->ctl_kills[i];
    for (size_t i = 0; i < n; i++) {
        switch (d[i].kind) {
        case FBF_DEC_KILL:
            if ((o = add(s, c, FBF_OUT_KILL)))
                o->job = d[i].job;
            break;
        case FBF_DEC_SET_STATE:
            if ((o = add(s, c, FBF_OUT_SET_STATE))) {
                o->machines = d[i].set;
                o->pstate = d[i].pstate;
            }
            break;
        case FBF_DEC_GIVE_UP: {
            char why[96];
            snprintf(why, sizeof why, "gave up after waiting %g s (fastbf --max-wait)",
                     s->opt.engine.max_wait);
            if ((o = add(s, c, FBF_OUT_METADATA))) {
                o->job = d[i].job;
                o->text = fbf_decisions_text(&s->outs, why, strlen(why));
            }
            if ((o = add(s, c, FBF_OUT_REJECT)))
                o->job = d[i].job;
            break;
        }
        case FBF_DEC_CALL_ME_LATER: put_call(s, c, d[i].at); break;
        case FBF_DEC_REJECT:
            if ((o = add(s, c, FBF_OUT_REJECT)))
                o->job = d[i].job;
            break;
        default:
            if ((o = add(s, c, FBF_OUT_EXECUTE))) {
                o->job = d[i].job;
                o->machines = fbf_engine_job_alloc(s->engine, d[i].job);
            }
            if (s->opt.tag_starts && (o = add(s, c, FBF_OUT_METADATA))) {
                o->job = d[i].job;
                o->text = start_tag(s, d[i].job);
            }
            break;
        }
    }
}

/* Each estimate_waiting_time question, from the engine after the pass, so
 * that it reflects the policy's current reservations. */
static void put_answers(fbf_session *s, counter *c)
{
    double now = fbf_engine_now(s->engine);
    for (size_t i = 0; i < s->nqueries; i++) {
        const fbf_wait_query *q = &s->queries[i];
        /* A job the engine knows needs no hypothesis: a started job waits
         * no more, a waiting one starts at its reservation when it holds
         * one. Otherwise, a potential job (res, walltime) submitted now. */
        fbf_job_h h = fbf_engine_find(s->engine, q->id);
        double t = NAN;
        if (h != FBF_JOB_NONE && fbf_engine_job_state(s->engine, h) == FBF_JOB_RUNNING)
            t = fmax(fbf_engine_job_start(s->engine, h), now);
        else if (h != FBF_JOB_NONE)
            t = fbf_engine_job_reservation(s->engine, h);
        if (isnan(t))
            t = fbf_engine_estimate_start(s->engine, q->res, q->walltime);
        fbf_out *o = add(s, c, FBF_OUT_ANSWER_WAIT);
        if (o) {
            o->id = fbf_decisions_text(&s->outs, q->id, strlen(q->id));
            o->at = isfinite(t) ? t - now : -1.0; /* -1: never, or the policy cannot tell */
        }
    }
}

static void log_point(fbf_session *s)
{
    /* +T: monotonic seconds since the first of these lines of this
     * session, so that per-exchange times are exact differences
     * (tools/bench.sh). */
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    double at = (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
    if (isnan(s->t0))
        s->t0 = at;
    size_t n;
    fbf_engine_decisions(s->engine, &n);
    fprintf(s->opt.log, "fastbf: +%.6f s now %.6f: %zu decisions, %zu waiting, %zu running\n",
            at - s->t0, fbf_engine_now(s->engine), n, fbf_engine_nb_waiting(s->engine),
            fbf_engine_nb_running(s->engine));
}

int fbf_session_decide(fbf_session *s, const fbf_out **outs, size_t *n, fbf_error *err)
{
    if (!s->open)
        return fbf_errorf(err, -EINVAL, "no decision point is open");
    s->open = false;
    fbf_submitter *sub = s->opt.submitter;
    double now = fbf_engine_now(s->engine);
    counter c = {0};
    fbf_decisions_reset(&s->outs);
    /* Registrations first: a job registered here may start below. Without
     * acknowledgements a registered job is submitted at once, as the peer
     * does. */
    int rc = 0;
    if (sub && !s->ended)
        rc = fbf_submitter_due(sub, now, &s->outs,
                                  fbf_submitter_acks(sub) ? NULL : s->engine, err);
    if (rc < 0 || (rc = fbf_engine_decide(s->engine, err)) < 0)
        return rc;
    c.events = s->outs.n;
    if (s->ended) { /* the simulation is over: nothing to say */
        fbf_decisions_reset(&s->outs);
    } else {
        put_decisions(s, &c);
        size_t before = s->outs.n;
        if (sub && fbf_submitter_close(sub, now, earliest_call(s, &c), &s->outs, err) < 0)
            return -ENOMEM;
        c.events += s->outs.n - before;
        /* fastbf registers no job: tell the peer at once so that it can end. */
        if (s->dynamic_jobs && !s->notified_registration && !sub) {
            fbf_out *o = add(s, &c, FBF_OUT_NOTIFY);
            if (o)
                o->text = "registration_finished";
            s->notified_registration = true;
        }
        /* Without the peer's notice, each time the jobs that came are all
         * done; with it, once, when the last ones are. */
        bool done = !fbf_engine_nb_waiting(s->engine) && !fbf_engine_nb_running(s->engine);
        bool idle = done && (s->opt.no_end_notice ? s->jobs_since_query
                                                  : s->no_more_static && !s->final_query);
        s->jobs_since_query &= !idle;
        if (s->opt.query_energy && (s->query_due || idle)) {
            add(s, &c, FBF_OUT_QUERY_ENERGY);
            s->query_due = false;
            s->final_query |= idle;
        }
        put_answers(s, &c);
    }
    if (s->outs.oom)
        return fbf_errorf(err, -ENOMEM, "out of memory building the reply");
    if (s->opt.jsc)
        fbf_session_jsc_decided(s);
    if (s->opt.log)
        log_point(s);
    *outs = s->outs.v;
    *n = s->outs.n;
    return 0;
}
