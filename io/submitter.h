/*
 * submitter: fastbf as a job submitter, through Batsim v4's dynamic
 * registration (REGISTER_PROFILE, REGISTER_JOB, NOTIFY
 * registration_finished / continue_registration), transport-free.
 *
 * A register holds a plan: the jobs fastbf registers itself, each at its
 * subtime. The session (io/bv4_session.c) drives it at every decision
 * point:
 *   1. fbf_submitter_configure() with SIMULATION_BEGINS' config: a
 *      Batsim whose dynamic jobs are disabled cannot take registrations,
 *      so that is an error (-ENOTSUP) naming the Batsim option;
 *   2. before the pass, fbf_submitter_due() appends, for every job
 *      whose subtime has come, a REGISTER_PROFILE then its REGISTER_JOB,
 *      whose job holds id, subtime (now: Batsim parses a registered job
 *      as a workload's and stops on one without subtime), res, walltime
 *      and profile. With acknowledgements off, it also submits the job to
 *      the engine given, so the job can start in the very reply that
 *      registers it (after its REGISTER_JOB, since registration events
 *      come first); with them on, pass NULL: the job enters the queue when
 *      Batsim's JOB_SUBMITTED arrives, like any other submission;
 *   3. after the pass, fbf_submitter_close() appends a CALL_ME_LATER at
 *      the next subtime (not asked twice) and NOTIFY registration_finished
 *      once the last job is registered.
 *
 * Profiles (Batsim 4.2.1): without profile reuse (SIMULATION_BEGINS'
 * profile-reuse-enabled false, Batsim's default), Batsim drops a profile
 * as soon as the first job using it has completed and never accepts its
 * name again, so each job gets a profile of its own, "<profile>@<job
 * name>", registered just before it. With reuse, a (workload, profile)
 * pair is registered once, before its first job, and not at all when
 * SIMULATION_BEGINS lists it already.
 *
 * Pauses (opt.pause > 0): whenever the next job is more than pause seconds
 * away, registration is declared finished. Batsim checks a REGISTER_JOB
 * against the registration state it had before the reply that carries it,
 * so NOTIFY continue_registration must come in an earlier reply: fastbf
 * asks to be called min(pause / 2, 1 s) before the next job and re-opens
 * registration then (should that decision point not come first, it
 * re-opens at the job's and registers the jobs at the next decision
 * point, asked for at once). The run does not end during a gap: Batsim
 * (and fastbf-replay) keep it alive while a CALL_ME_LATER is pending, and
 * one is always pending, so a pause never loses a job.
 *
 * Redis mode (Batsim's --enable-redis): once fbf_submitter_use_store()
 * gave it the session's store, fbf_submitter_due() writes, in ONE
 * pipeline per call, the description of every job due (key
 * <prefix>:job_<id>, the job object REGISTER_JOB would carry), and only
 * then appends the events: REGISTER_PROFILE as without Redis (Batsim 4.2.1
 * ignores profiles written to the store) and REGISTER_JOB with job_id
 * alone. A failed write is an error (the store's: -EIO, -EPROTO...) naming
 * the key and hiredis's or the server's message; no event is appended then.
 *
 * Ownership: _create() copies the plan (ids and profile names included);
 * the caller destroys the register with _destroy() (NULL accepted).
 * Registrations, calls and notifications are appended to the caller's
 * list of decisions (io/decisions.h), as typed decisions.
 *
 * Errors: -EINVAL for a bad plan (an id not "workload!name" with both
 * parts non-empty and a single '!', the same id twice, res outside [1, 2^31 - 1] (a JSON
 * int for Batsim), walltime neither -1 nor > 0, negative delay or subtime,
 * NULL or empty profile name, two delays for one (workload, profile)
 * pair), -ENOTSUP for
 * disabled dynamic jobs, -ENOMEM, and the engine's code when a submission
 * fails; err names the job or the config field.
 */
#ifndef FBF_SUBMITTER_H
#define FBF_SUBMITTER_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/error.h"
#include "io/store.h"
#include "io/decisions.h"

typedef struct fbf_submitter_job {
    const char *id;      /* "workload!name": Batsim's id notation */
    double subtime;      /* when to register it, >= 0 */
    int64_t res;         /* >= 1 */
    double walltime;     /* -1 (none) or > 0 */
    const char *profile; /* profile name within the job's workload */
    double delay;        /* the profile's delay (the job's run time), >= 0 */
} fbf_submitter_job;

typedef struct fbf_submitter_options {
    double pause; /* > 0: see "Pauses" above; 0: finished only after the last job */
} fbf_submitter_options;

typedef struct fbf_submitter fbf_submitter;

fbf_submitter *fbf_submitter_create(const fbf_submitter_job *jobs, size_t n,
                                          const fbf_submitter_options *opt, fbf_error *err);
void fbf_submitter_destroy(fbf_submitter *r);

/* From SIMULATION_BEGINS: whether Batsim accepts registrations,
 * acknowledges them with JOB_SUBMITTED, and keeps profiles for reuse. */
int fbf_submitter_configure(fbf_submitter *r, bool dynamic_jobs, bool acks,
                               bool profile_reuse, fbf_error *err);
bool fbf_submitter_acks(const fbf_submitter *r);

/* One CALL_ME_LATER per time in a reply and across replies: the session
 * skips a time the register already asked for (asked, NAN before any),
 * and notes its own so that the register skips it too. */
double fbf_submitter_asked(const fbf_submitter *r);
void fbf_submitter_note_call(fbf_submitter *r, double t);

/* Batsim's Redis mode: store (borrowed; it must outlive the register's
 * use, NULL: off) receives the descriptions; see "Redis mode" above. */
void fbf_submitter_use_store(fbf_submitter *r, fbf_store *store);

/* From SIMULATION_BEGINS' data.profiles ({workload: {name: profile}}),
 * after fbf_submitter_configure(). With profile reuse, the plan's
 * profiles Batsim already has are not registered again, and -EINVAL when
 * such a profile is not the delay the plan's jobs need; without, -EINVAL
 * when a job's own profile name is taken. */
int fbf_submitter_known_profiles(fbf_submitter *r, const cJSON *profiles,
                                    fbf_error *err);

/* Appends the registrations due at now (subtime <= now) to outs and,
 * when engine is not NULL, submits those jobs to it with subtime now. */
int fbf_submitter_due(fbf_submitter *r, double now, fbf_decisions *outs,
                         fbf_engine *engine, fbf_error *err);

/* Appends the CALL_ME_LATER for the next registration and the NOTIFY
 * registration_finished / continue_registration that are due after the
 * pass at now; a call due before earliest is asked for at earliest. */
int fbf_submitter_close(fbf_submitter *r, double now, double earliest,
                           fbf_decisions *outs, fbf_error *err);

/* Counters, for logs and tests. */
size_t fbf_submitter_nb_registered(const fbf_submitter *r);
size_t fbf_submitter_nb_continues(const fbf_submitter *r);
bool fbf_submitter_finished(const fbf_submitter *r);

#endif
