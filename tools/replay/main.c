/*
 * fastbf-replay: plays Batsim's side of the Batsim v4 JSON protocol, without
 * SimGrid, so any Batsim scheduler (fastbf or another) can be driven through
 * a real trace quickly and checked strictly.
 *
 * This file: options, wiring and exit codes. The simulation is in sim.c,
 * reply checking in validate.c, transports in transport_*.c, figures and
 * files in output.c (replay.h says how they fit).
 *
 * Exit codes: 0 the run ended with SIMULATION_ENDS (every job done, or
 * --max-exchanges reached); 2 a bad option or
 * input, a protocol violation by the scheduler, a scheduler that died, hung
 * or failed; 3 a deadlock (jobs wait and nothing can happen); 1 internal
 * (out of memory, outputs not writable).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <unistd.h>

#include "policies/registry.h"
#include "tools/lib/workload.h"
#include "tools/replay/echo.h"
#include "tools/replay/machines.h"
#include "tools/replay/replay.h"
#include "tools/replay/transport.h"

#ifndef FBF_VERSION
#define FBF_VERSION "dev"
#endif

typedef struct options {
    const char *workload;
    const char *scheduler, *endpoint, *policy, *out;
    bool inproc, quiet, verbose, policy_opts, tag_starts;
    bool dyn_jobs, dyn_acks, forward_profiles, query_wait, profile_reuse;
    double kill_after;    /* --kill-after with --inproc; 0 = off */
    int64_t depth;        /* 0: the policy's default */
    unsigned workers;
    int64_t nb_res;       /* 0: from the workload */
    double timeout_s;
    long long echo;       /* --echo-bench N; 0 = off */
    char redis_host[256]; /* --redis; "" = off */
    int redis_port;
    const char *redis_prefix;
    fbf_wl_read_options read;
    bool energy;
    fbf_energy_config ecfg;
    long long max_exchanges; /* --max-exchanges K; 0 = until every job is done */
    double external_end;     /* --external-events-end T; NAN: none */
    const char *record;      /* --record FILE; NULL: none */
} options;

static void usage(FILE *f)
{
    fprintf(f,
"Usage: fastbf-replay [OPTIONS] WORKLOAD\n"
"Plays Batsim's side of the Batsim v4 JSON protocol (without SimGrid) for the\n"
"jobs of WORKLOAD, checks every reply of the scheduler as Batsim would, and\n"
"prints a summary.\n"
"\n"
"WORKLOAD is an SWF trace (plain or .gz) or a Batsim JSON workload. SWF: id\n"
"w0!<field 1>, subtime field 2, runtime field 4, res field 5 (else 8),\n"
"walltime field 9 (else the runtime, else 1); jobs with no processors or a\n"
"negative runtime are skipped and counted. Platform size: the header's\n"
"MaxProcs (else MaxNodes), or nb_res in JSON.\n"
"\n"
"Scheduler (exactly one):\n"
"  --scheduler CMD        start CMD with /bin/sh -c; {endpoint} in CMD becomes\n"
"                         tcp://127.0.0.1:PORT (a free port), else\n"
"                         '--endpoint tcp://127.0.0.1:PORT' is appended\n"
"  --endpoint URL         connect to a scheduler already listening at URL\n"
"  --inproc               run fastbf's own session in this process\n"
"    --policy NAME        with --inproc: fcfs (default), easy, conservative\n"
"    --reservation-depth K  with --inproc: reservations held (number or 'unlimited')\n"
"    --workers N          with --inproc: engine worker threads (default 1)\n"
"    --verbose            with --inproc: the session's log on stderr\n"
"    --kill-after S       with --inproc: fastbf kills every job S seconds after it starts\n"
"    --tag-starts         with --inproc: fastbf tags started jobs with why (metadata)\n"
"\n"
"Workload:\n"
"  --nb-res N             platform size (overrides the workload's)\n"
"  --max-jobs K           keep the first K jobs of the file\n"
"  --walltime MODE        field9 (default), runtime, or factor:F (F x runtime, >= 1)\n"
"\n"
"Batsim configuration (SIMULATION_BEGINS config, Batsim 4.2.1's flat form):\n"
"  --dynamic-jobs         dynamic-jobs-enabled: accept REGISTER_PROFILE and\n"
"                         REGISTER_JOB (checked as Batsim does) until NOTIFY\n"
"                         registration_finished; the run does not end before it\n"
"  --ack-dynamic-jobs     dynamic-jobs-acknowledged: answer each REGISTER_JOB\n"
"                         with a JOB_SUBMITTED (implies --dynamic-jobs)\n"
"  --profile-reuse        profile-reuse-enabled (needs --dynamic-jobs): without\n"
"                         it, as in Batsim, a profile is dropped once the first\n"
"                         job using it is done, and its name cannot be used or\n"
"                         registered again\n"
"  --forward-profiles     profiles-forwarded-on-submission: JOB_SUBMITTED\n"
"                         carries the job's profile\n"
"  --query-wait           with each JOB_SUBMITTED, a QUERY estimate_waiting_time\n"
"                         about the job; the reply must ANSWER each one; the\n"
"                         summary reports the predictions' error, out_jobs.csv\n"
"                         gets a predicted_waiting_time column (-1: unknown)\n"
"Redis mode (Batsim's --enable-redis):\n"
"  --redis HOST:PORT[:PREFIX]  store job and profile descriptions in the Redis\n"
"                         server at HOST:PORT under Batsim's keys (PREFIX:job_ID,\n"
"                         PREFIX:profile_WORKLOAD!NAME, PREFIX:nb_res; PREFIX\n"
"                         'default' unless given), say so in SIMULATION_BEGINS'\n"
"                         config and send JOB_SUBMITTED with job_id only; with\n"
"                         --dynamic-jobs, REGISTER_JOB carries job_id only and\n"
"                         the job is read from the store (its profile must come\n"
"                         by REGISTER_PROFILE, as with Batsim). Not with\n"
"                         --forward-profiles: the profiles are in the store\n"
"\n"
"Run and output:\n"
"  --energy               model machine states and energy (SET_RESOURCE_STATE,\n"
"                         RESOURCE_STATE_CHANGED, QUERY consumed_energy)\n"
"    --power I:B:S[:W]    watts per machine idle, busy, asleep, switching\n"
"                         (default 95:190:9.75, switching = idle)\n"
"    --switch-delays F:N  seconds to switch off and on (default 0:0)\n"
"    --compute-pstate P, --sleep-pstate P  (default 0 and 1)\n"
"  --external-events-end T  as Batsim run with --events whose last external\n"
"                         event (none of which concerns the scheduler) falls at\n"
"                         T >= 0: NOTIFY no_more_external_event_to_occur at T\n"
"  --timeout S            seconds to wait for one reply (default 60)\n"
"  --max-exchanges K      end the run cleanly after K exchanges following\n"
"                         SIMULATION_BEGINS (K >= 1): SIMULATION_ENDS is sent\n"
"                         even though jobs still wait or run, and the summary\n"
"                         says TRUNCATED with the jobs done, waiting and running;\n"
"                         every figure is then over the done jobs only and\n"
"                         out_jobs.csv lists only them (waiting and running jobs\n"
"                         are left out; summary.json counts them). Latency then\n"
"                         shows decisions at about the full queue depth\n"
"  --out DIR              write DIR/out_jobs.csv (Batsim's columns) and DIR/summary.json\n"
"  --quiet                no summary on stdout\n"
"  --record FILE          write the conversation to FILE (gzip-compressed when\n"
"                         FILE ends in .gz): one line per message, '> ' and the\n"
"                         request, then '< ' and the reply (a line break inside\n"
"                         a message is written as \\n)\n"
"  --echo-bench N         time N round trips of a bare ZeroMQ echo loop and exit\n"
"  --help, --version\n"
"\n"
"Definitions: makespan = last end - first submission; wait = start - subtime;\n"
"bounded slowdown = max(1, (wait + run) / max(run, 10 s)); utilization =\n"
"sum(res * run) / (nb_res * makespan); latency percentiles are exact (nearest\n"
"rank) over every exchange.\n"
"\n"
"Exit status: 0 success (a run cut by --max-exchanges too); 2 bad option or\n"
"input, or a scheduler that broke the protocol, died or stopped answering;\n"
"3 deadlock (stuck jobs are listed); 1 internal error.\n");
}

static int bad(const char *fmt, const char *arg)
{
    fprintf(stderr, "fastbf-replay: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'fastbf-replay --help'.\n");
    return FBF_EXIT_INVALID;
}

static bool parse_i64(const char *s, int64_t min, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min)
        return false;
    *out = v;
    return true;
}

static int parse_walltime(const char *s, fbf_wl_read_options *r)
{
    if (strcmp(s, "field9") == 0) {
        r->walltime_mode = FBF_WL_WALLTIME_FIELD9;
    } else if (strcmp(s, "runtime") == 0) {
        r->walltime_mode = FBF_WL_WALLTIME_RUNTIME;
    } else if (strncmp(s, "factor:", 7) == 0) {
        char *end;
        double f = strtod(s + 7, &end);
        if (end == s + 7 || *end || !(f > 0) || isinf(f))
            return -1;
        r->walltime_mode = FBF_WL_WALLTIME_FACTOR;
        r->walltime_factor = f;
    } else {
        return -1;
    }
    return 0;
}

/* HOST:PORT[:PREFIX]; the prefix is the rest, colons included. */
static int parse_redis(const char *s, options *o)
{
    const char *colon = strchr(s, ':');
    if (!colon || colon == s || (size_t)(colon - s) >= sizeof o->redis_host)
        return -1;
    char *end;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || port < 1 || port > 65535 || (*end && *end != ':'))
        return -1;
    memcpy(o->redis_host, s, (size_t)(colon - s));
    o->redis_host[colon - s] = '\0';
    o->redis_port = (int)port;
    o->redis_prefix = *end ? end + 1 : NULL;
    return 0;
}

/* --power (which 1), --switch-delays (2), --compute-pstate (3),
 * --sleep-pstate (4): numbers >= 0 separated by ':'. */
static int parse_energy_option(int which, const char *s, fbf_energy_config *c)
{
    double v[4];
    int n = 0, want_min = which == 1 ? 3 : which == 2 ? 2 : 1, want_max = which == 1 ? 4 : want_min;
    for (const char *p = s;; p++) {
        char *end;
        errno = 0;
        v[n] = strtod(p, &end);
        if (errno || end == p || !(v[n] >= 0) || isinf(v[n]) || ++n > want_max)
            return -1;
        p = end;
        if (*p == '\0')
            break;
        if (*p != ':' || n == want_max)
            return -1;
    }
    if (n < want_min)
        return -1;
    if (which == 1) {
        c->p_idle = v[0], c->p_busy = v[1], c->p_sleep = v[2];
        c->p_switch = n == 4 ? v[3] : v[0];
    } else if (which == 2) {
        c->off_delay = v[0], c->on_delay = v[1];
    } else if (v[0] != floor(v[0]) || v[0] > UINT32_MAX) {
        return -1;
    } else {
        *(which == 3 ? &c->compute_pstate : &c->sleep_pstate) = (uint32_t)v[0];
    }
    return 0;
}

/* Returns -1 to go on, or an exit code. */
static int parse_options(int argc, char **argv, options *o)
{
    enum { O_SCHED = 256, O_ENDPOINT, O_INPROC, O_POLICY, O_DEPTH, O_WORKERS, O_NBRES,
           O_MAXJOBS, O_WALLTIME, O_TIMEOUT, O_OUT, O_QUIET, O_VERBOSE, O_ECHO, O_HELP,
           O_VERSION, O_KILL_AFTER, O_TAG_STARTS, O_DYN, O_ACK, O_FWD, O_QUERY, O_REDIS,
           O_ENERGY, O_MAX_EXCH = O_ENERGY + 5, O_EXT_END, O_REUSE, O_RECORD };
    static const struct option longopts[] = {
        {"scheduler", required_argument, NULL, O_SCHED},
        {"endpoint", required_argument, NULL, O_ENDPOINT},
        {"inproc", no_argument, NULL, O_INPROC},
        {"policy", required_argument, NULL, O_POLICY},
        {"reservation-depth", required_argument, NULL, O_DEPTH},
        {"workers", required_argument, NULL, O_WORKERS},
        {"nb-res", required_argument, NULL, O_NBRES},
        {"max-jobs", required_argument, NULL, O_MAXJOBS},
        {"walltime", required_argument, NULL, O_WALLTIME},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"out", required_argument, NULL, O_OUT},
        {"quiet", no_argument, NULL, O_QUIET},
        {"verbose", no_argument, NULL, O_VERBOSE},
        {"echo-bench", required_argument, NULL, O_ECHO},
        {"kill-after", required_argument, NULL, O_KILL_AFTER},
        {"tag-starts", no_argument, NULL, O_TAG_STARTS},
        {"dynamic-jobs", no_argument, NULL, O_DYN},
        {"ack-dynamic-jobs", no_argument, NULL, O_ACK},
        {"forward-profiles", no_argument, NULL, O_FWD},
        {"profile-reuse", no_argument, NULL, O_REUSE},
        {"query-wait", no_argument, NULL, O_QUERY},
        {"redis", required_argument, NULL, O_REDIS},
        {"energy", no_argument, NULL, O_ENERGY},
        {"power", required_argument, NULL, O_ENERGY + 1},
        {"switch-delays", required_argument, NULL, O_ENERGY + 2},
        {"compute-pstate", required_argument, NULL, O_ENERGY + 3},
        {"sleep-pstate", required_argument, NULL, O_ENERGY + 4},
        {"max-exchanges", required_argument, NULL, O_MAX_EXCH},
        {"external-events-end", required_argument, NULL, O_EXT_END},
        {"record", required_argument, NULL, O_RECORD},
        {"help", no_argument, NULL, O_HELP},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    int c;
    int64_t v;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case O_SCHED: o->scheduler = optarg; break;
        case O_ENDPOINT: o->endpoint = optarg; break;
        case O_INPROC: o->inproc = true; break;
        case O_POLICY: o->policy = optarg; o->policy_opts = true; break;
        case O_DEPTH:
            o->policy_opts = true;
            if (strcmp(optarg, "unlimited") == 0)
                o->depth = FBF_DEPTH_UNLIMITED;
            else if (parse_i64(optarg, 1, &v))
                o->depth = v;
            else
                return bad("--reservation-depth '%s': not an integer >= 1 nor 'unlimited'", optarg);
            break;
        case O_WORKERS:
            o->policy_opts = true;
            if (!parse_i64(optarg, 1, &v) || v > 1024)
                return bad("--workers '%s': not an integer in 1..1024", optarg);
            o->workers = (unsigned)v;
            break;
        case O_NBRES:
            if (!parse_i64(optarg, 1, &v) || v > FBF_IDSET_MAX_ID)
                return bad("--nb-res '%s': not an integer >= 1", optarg);
            o->nb_res = v;
            break;
        case O_MAXJOBS:
            if (!parse_i64(optarg, 0, &v))
                return bad("--max-jobs '%s': not an integer >= 0", optarg);
            o->read.max_jobs = v;
            break;
        case O_WALLTIME:
            if (parse_walltime(optarg, &o->read))
                return bad("--walltime '%s': expected field9, runtime or factor:F with F > 0",
                           optarg);
            break;
        case O_TIMEOUT: {
            char *end;
            o->timeout_s = strtod(optarg, &end);
            if (end == optarg || *end || !(o->timeout_s > 0) || isinf(o->timeout_s))
                return bad("--timeout '%s': not a number of seconds > 0", optarg);
            break;
        }
        case O_KILL_AFTER: {
            char *end;
            o->policy_opts = true;
            o->kill_after = strtod(optarg, &end);
            if (end == optarg || *end || !(o->kill_after > 0) || isinf(o->kill_after))
                return bad("--kill-after '%s': not a number of seconds > 0", optarg);
            break;
        }
        case O_TAG_STARTS: o->policy_opts = o->tag_starts = true; break;
        case O_DYN: o->dyn_jobs = true; break;
        case O_ACK: o->dyn_jobs = o->dyn_acks = true; break;
        case O_FWD: o->forward_profiles = true; break;
        case O_REUSE: o->profile_reuse = true; break;
        case O_QUERY: o->query_wait = true; break;
        case O_REDIS:
            if (parse_redis(optarg, o))
                return bad("--redis '%s': expected HOST:PORT or HOST:PORT:PREFIX with PORT in "
                           "1..65535", optarg);
            break;
        case O_OUT: o->out = optarg; break;
        case O_QUIET: o->quiet = true; break;
        case O_VERBOSE: o->verbose = true; break;
        case O_ECHO:
            if (!parse_i64(optarg, 1, &v))
                return bad("--echo-bench '%s': not an integer >= 1", optarg);
            o->echo = v;
            break;
        case O_ENERGY: o->energy = true; break;
        case O_ENERGY + 1:
        case O_ENERGY + 2:
        case O_ENERGY + 3:
        case O_ENERGY + 4:
            if (parse_energy_option(c - O_ENERGY, optarg, &o->ecfg) < 0)
                return bad("%s: expected I:B:S[:W] watts, F:N seconds or a pstate number", optarg);
            break;
        case O_EXT_END: {
            char *end;
            errno = 0;
            o->external_end = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(o->external_end >= 0) ||
                isinf(o->external_end))
                return bad("--external-events-end '%s': not a time >= 0", optarg);
            break;
        }
        case O_MAX_EXCH:
            if (!parse_i64(optarg, 1, &v))
                return bad("--max-exchanges '%s': not an integer >= 1", optarg);
            o->max_exchanges = v;
            break;
        case O_RECORD: o->record = optarg; break;
        case O_HELP: usage(stdout); return FBF_EXIT_OK;
        case O_VERSION: printf("fastbf-replay %s\n", FBF_VERSION); return FBF_EXIT_OK;
        default: return bad("%s", "invalid option");
        }
    }
    if (o->echo)
        return -1;
    if (optind + 1 != argc)
        return bad("%s", optind >= argc ? "no WORKLOAD given" : "more than one WORKLOAD given");
    o->workload = argv[optind];
    int modes = (o->scheduler != NULL) + (o->endpoint != NULL) + o->inproc;
    if (modes != 1)
        return bad("%s", "give exactly one of --scheduler, --endpoint and --inproc");
    if (o->policy_opts && !o->inproc)
        return bad("%s", "--policy, --reservation-depth, --workers, --kill-after and "
                         "--tag-starts go with --inproc (another scheduler has its own options)");
    if (o->ecfg.compute_pstate == o->ecfg.sleep_pstate)
        return bad("%s", "--compute-pstate and --sleep-pstate must differ");
    if (o->verbose && !o->inproc)
        return bad("%s", "--verbose goes with --inproc");
    if (o->profile_reuse && !o->dyn_jobs)
        return bad("%s", "--profile-reuse: Profile reuse is enabled but dynamic registration is "
                         "not, have you missed something?");
    if (o->redis_host[0] && o->forward_profiles)
        return bad("%s", "--redis does not go with --forward-profiles: in Redis mode "
                         "JOB_SUBMITTED carries job_id only, and the profile is in the store");
    return -1;
}

static int run(const options *o)
{
    fbf_error err;
    fbf_error_clear(&err);
    fbf_workload *wl = fbf_workload_read(o->workload, &o->read, &err);
    if (!wl) {
        fprintf(stderr, "fastbf-replay: %s\n", err.text);
        return errno == ENOMEM ? FBF_EXIT_INTERNAL : FBF_EXIT_INVALID;
    }
    /* The file's platform size gets --nb-res's bound: resource ids are
     * 31-bit in Batsim's interval sets, and a larger size would only cost
     * the replayer gigabytes of per-resource state before the scheduler
     * refused it. */
    if (!o->nb_res && wl->nb_res > FBF_IDSET_MAX_ID) {
        fprintf(stderr, "fastbf-replay: %s: platform size %u (MaxProcs/MaxNodes header or "
                "nb_res) is above %u resources: pass --nb-res N\n", wl->path, wl->nb_res,
                FBF_IDSET_MAX_ID);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INVALID;
    }
    uint32_t nb_res = o->nb_res ? (uint32_t)o->nb_res : wl->nb_res;
    if (!nb_res) {
        fprintf(stderr, "fastbf-replay: %s: the platform size is unknown (no MaxProcs/MaxNodes "
                "header, no nb_res): pass --nb-res N\n", wl->path);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INVALID;
    }
    fbf_bv4_redis *redis = NULL;
    if (o->redis_host[0]) {
        /* A server that goes away must end in a message, not in SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
        redis = fbf_bv4_redis_connect(o->redis_host, o->redis_port, o->redis_prefix,
                                      o->timeout_s, &err);
        if (!redis) {
            fprintf(stderr, "fastbf-replay: --redis: %s\n", err.text);
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
    }
    char label[512];
    fbf_transport *tr = NULL;
    if (o->inproc) {
        const char *name = o->policy ? o->policy : "fcfs";
        const fbf_policy_entry *pe = fbf_policy_lookup(name);
        if (!pe) {
            fprintf(stderr, "fastbf-replay: unknown policy '%s'; known:", name);
            for (const fbf_policy_entry *e = fbf_policy_list(); e && e->name; e++)
                fprintf(stderr, " %s", e->name);
            fprintf(stderr, "\n");
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
        fbf_bv4_options bo = {
            .engine = {.policy = pe->ops,
                       .reservation_depth = o->depth ? o->depth : pe->default_depth,
                       .workers = o->workers ? o->workers : 1,
                       .kill_after = o->kill_after},
            .log = o->verbose ? stderr : NULL,
            .tag_starts = o->tag_starts,
        };
        char depth[32] = "unlimited";
        if (bo.engine.reservation_depth != FBF_DEPTH_UNLIMITED)
            snprintf(depth, sizeof depth, "%lld", (long long)bo.engine.reservation_depth);
        snprintf(label, sizeof label, "in-process %s (reservation depth %s, %u worker%s)",
                 pe->name, depth, bo.engine.workers, bo.engine.workers > 1 ? "s" : "");
        tr = fbf_transport_inproc(&bo, label, &err);
    } else if (o->scheduler) {
        snprintf(label, sizeof label, "%s", o->scheduler);
        tr = fbf_transport_spawn(o->scheduler, o->timeout_s, &err);
    } else {
        snprintf(label, sizeof label, "%s", o->endpoint);
        tr = fbf_transport_connect(o->endpoint, o->timeout_s, &err);
    }
    if (!tr) {
        fprintf(stderr, "fastbf-replay: %s\n", err.text);
        fbf_bv4_redis_destroy(redis);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INVALID;
    }
    fbf_replay r;
    fbf_replay_config cfg = {.nb_res = nb_res,
                             .livelock_max = 1e6,
                             .progress = !o->quiet && isatty(STDERR_FILENO),
                             .dyn_jobs = o->dyn_jobs,
                             .dyn_acks = o->dyn_acks,
                             .forward_profiles = o->forward_profiles,
                             .query_wait = o->query_wait,
                             .profile_reuse = o->profile_reuse,
                             .redis = redis,
                             .redis_host = o->redis_host,
                             .redis_port = o->redis_port,
                             .energy = o->energy ? &o->ecfg : NULL,
                             .max_exchanges = (size_t)o->max_exchanges,
                             .external_end = o->external_end};
    gzFile record = NULL;
    if (o->record) {
        size_t n = strlen(o->record);
        bool gz = n > 3 && strcmp(o->record + n - 3, ".gz") == 0;
        record = gzopen(o->record, gz ? "wb" : "wT");
        if (!record) {
            fprintf(stderr, "fastbf-replay: --record %s: %s\n", o->record, strerror(errno));
            fbf_transport_destroy(tr);
            fbf_bv4_redis_destroy(redis);
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
        cfg.record = record;
    }
    int rc = fbf_replay_init(&r, wl, &cfg, &err);
    if (rc) {
        fprintf(stderr, "fastbf-replay: %s\n", err.text);
        fbf_replay_fini(&r);
        fbf_transport_destroy(tr);
        fbf_bv4_redis_destroy(redis);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INTERNAL;
    }
    rc = fbf_replay_run(&r, tr, stderr);
    fbf_transport_destroy(tr); /* a child still alive is stopped here */
    if (rc != FBF_EXIT_OK)
        fprintf(stderr, "fastbf-replay: error: %s\n", r.err_long ? r.err_long : r.err.text);
    else if (r.err.text[0])
        fprintf(stderr, "fastbf-replay: %s\n", r.err.text);
    if (rc == FBF_EXIT_OK || rc == FBF_EXIT_DEADLOCK) {
        fbf_replay_stats st;
        fbf_replay_stats_compute(&r, &st);
        if (!o->quiet)
            fbf_replay_print_summary(&r, &st, label, stdout);
        if (o->out && fbf_replay_write_outputs(&r, &st, label, o->out, &err)) {
            fprintf(stderr, "fastbf-replay: %s\n", err.text);
            if (rc == FBF_EXIT_OK)
                rc = FBF_EXIT_INTERNAL;
        }
    }
    fbf_replay_fini(&r);
    if (record && gzclose(record) != Z_OK) {
        fprintf(stderr, "fastbf-replay: --record %s: cannot write the file\n", o->record);
        if (rc == FBF_EXIT_OK)
            rc = FBF_EXIT_INTERNAL;
    }
    fbf_bv4_redis_destroy(redis);
    fbf_workload_destroy(wl);
    return rc;
}

int main(int argc, char **argv)
{
    options o = {.timeout_s = 60, .read = FBF_WL_READ_DEFAULTS,
                 .ecfg = fbf_energy_config_default(), .external_end = NAN};
    int rc = parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.echo)
        return fbf_echo_bench((size_t)o.echo, 256, stdout);
    return run(&o);
}
