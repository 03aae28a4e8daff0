/*
 * options: fastbf-replay's command line (options.h).
 */
#include "tools/replay/options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/registry.h"

#ifndef FBF_VERSION
#define FBF_VERSION "dev"
#endif


static void usage(FILE *f)
{
    fprintf(
        f,
        "Usage: fastbf-replay [OPTIONS] WORKLOAD\n"
        "Plays Batsim's side of the Batsim v4 JSON protocol (without SimGrid) for the\n"
        "jobs of WORKLOAD, checks every reply of the scheduler as Batsim would, and\n"
        "prints a summary. --protocol batsim2 plays the older v2 text protocol,\n"
        "--protocol batsim5 Batsim 5's batprotocol (JSON) with an EDC.\n"
        "\n"
        "WORKLOAD is an SWF trace (plain or .gz) or a Batsim JSON workload. SWF: id\n"
        "w0!<field 1>, subtime field 2, runtime field 4, res field 5 (else 8),\n"
        "walltime field 9 (else the runtime, else 1); jobs with no processors or a\n"
        "negative runtime are skipped and counted; a line of fewer than 18 fields is\n"
        "an error. JSON: refused as Batsim 4.2.1 refuses it, with its reason.\n"
        "Platform size: the header's MaxProcs (else MaxNodes), or nb_res in JSON. A\n"
        "workload with no job is an error (but with --dynamic-jobs).\n"
        "\n"
        "Scheduler (exactly one):\n"
        "  --scheduler CMD        start CMD with /bin/sh -c; {endpoint} in CMD becomes\n"
        "                         tcp://127.0.0.1:PORT (a free port), else\n"
        "                         '--endpoint tcp://127.0.0.1:PORT' is appended\n"
        "  --endpoint URL         connect to a scheduler already listening at URL\n"
        "  --inproc               run fastbf's own session in this process\n"
        "    --policy NAME        with --inproc: fcfs, easy (default, as fastbf), conservative\n"
        "    --reservation-depth K  with --inproc: reservations held (number or 'unlimited')\n"
        "    --order NAME, --backfill-order NAME, --estimate NAME, --preset easy++\n"
        "                         with --inproc: the queue and backfill orders (submit, sjf,\n"
        "                         saf, priority, lxf, wfp3) and the estimate (walltime,\n"
        "                         exact, predict) as fastbf takes them (fastbf --help);\n"
        "                         exact needs --forward-profiles\n"
        "    --workers N          with --inproc: engine worker threads (default 1)\n"
        "    --kill-after S       with --inproc: fastbf kills every job S seconds after it starts\n"
        "    --tag-starts         with --inproc: fastbf tags started jobs with why (metadata)\n"
        "\n"
        "Batsim v2 text protocol:\n"
        "  --protocol NAME        batsim4 (default) or batsim2: Batsim v2's text\n"
        "                         protocol over a Unix socket this replayer listens on\n"
        "                         (messages '3:NOW|T:S:w0!1|...', 32-bit native-endian\n"
        "                         size prefix), job descriptions in Redis; needs\n"
        "                         --redis HOST:PORT (key prefix: the socket's absolute\n"
        "                         path, then ':'; keys nb_res, job_ID, profile_ID) and\n"
        "                         --scheduler CMD ({socket} in CMD becomes the path, else\n"
        "                         '--socket PATH' is appended) or --socket alone (wait\n"
        "                         there for a scheduler to connect). With --energy: P, p,\n"
        "                         E, e. No dynamic jobs, queries, kills or metadata\n"
        "  --socket PATH          the socket's file (default: batsim.sock in a fresh\n"
        "                         temporary directory, removed at exit)\n"
        "\n"
        "Batsim 5 (batprotocol) with an External Decision Component:\n"
        "  --protocol batsim5     with --scheduler CMD or --endpoint URL (an EDC process\n"
        "                         behind a ZeroMQ REP socket, {endpoint} as above) or:\n"
        "  --edc-library PATH     an EDC shared library (batsim_edc_init,\n"
        "                         batsim_edc_take_decisions, batsim_edc_deinit)\n"
        "  --edc-init STRING      the EDC's init data, passed unchanged (default empty)\n"
        "  --format FORMAT        json (default) or binary: the format the EDC must choose\n"
        "                         in its init flags (0x2 JSON, 0x1 flatbuffers binary,\n"
        "                         verified and read through the batprotocol schema's JSON\n"
        "                         form). The EDC's requested_simulation_features replace\n"
        "                         --forward-profiles and the dynamic-jobs options\n"
        "\n"
        "Workload:\n"
        "  --nb-res N             platform size (overrides the workload's)\n"
        "  --max-jobs K           keep the first K jobs of the file\n"
        "  --walltime MODE        field9 (default), runtime, or factor:F (F x runtime, >= 1)\n"
        "  --skip-short-lines     skip SWF lines of fewer than 18 fields (counted in the\n"
        "                         summary) instead of stopping on the first\n"
        "  --export-batsim DIR    run nothing: write DIR/workload.json (Batsim's JSON\n"
        "                         workload of the jobs above, delay profiles; jobs of\n"
        "                         run time 0 left out, as Batsim refuses a 0 s delay)\n"
        "                         and DIR/platform.xml (a SimGrid platform of the\n"
        "                         platform's hosts and Batsim's master host), for\n"
        "                         batsim -p DIR/platform.xml -w DIR/workload.json\n"
        "                         (with --protocol batsim5: Batsim 5's profile type\n"
        "                         DelayProfile)\n"
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
        "  --out DIR              write DIR/out_jobs.csv and DIR/out_schedule.csv as Batsim\n"
        "                         4.2.1 writes them (one row per ended job, rejected ones\n"
        "                         included, in the order Batsim ends them; the summary's\n"
        "                         26 columns), and DIR/summary.json\n"
        "  --quiet                no summary on stdout (nor progress on a terminal)\n"
        "  --progress             a progress line on stderr every 5 s, also when stderr\n"
        "                         is not a terminal (on a terminal, without it, one line\n"
        "                         is redrawn in place): jobs done, percentage, simulated\n"
        "                         time, running and waiting jobs, wall time, time left\n"
        "  --verbose              every rejection the scheduler makes, with why when the\n"
        "                         replayer can tell (more resources than the platform,\n"
        "                         none, the job's metadata), on stderr; with --inproc,\n"
        "                         the session's log too\n"
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

static int bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fastbf-replay: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
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
static int parse_redis(const char *s, fbf_replay_options *o)
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

/* --protocol batsim2: what Batsim v2 had, and nothing else. */
static int check_batsim2(const fbf_replay_options *o)
{
    static const char pre[] = "--protocol batsim2: ";
    if (o->endpoint || o->inproc)
        return bad("%s--endpoint and --inproc are batsim4's: Batsim v2 is the server of its "
                   "socket (give --scheduler CMD, or --socket PATH and start the scheduler "
                   "yourself)", pre);
    if (!o->scheduler && !o->socket)
        return bad("%sgive --scheduler CMD (started with the socket's path) or --socket PATH "
                   "(wait there for a scheduler to connect)", pre);
    if (o->policy_opts)
        return bad("%s--policy, --reservation-depth, --order, --backfill-order, --estimate, "
                   "--preset, --workers, --kill-after and --tag-starts "
                   "go with --inproc, which is batsim4's", pre);
    const char *v4 = o->dyn_jobs         ? "--dynamic-jobs/--ack-dynamic-jobs"
                     : o->profile_reuse  ? "--profile-reuse"
                     : o->forward_profiles ? "--forward-profiles"
                     : o->query_wait     ? "--query-wait"
                     : !isnan(o->external_end) ? "--external-events-end"
                                               : NULL;
    if (v4)
        return bad("%s%s is a Batsim v4 feature that the v2 protocol has no message for", pre, v4);
    if (!o->redis_host[0])
        return bad("%sneeds --redis HOST:PORT: Batsim v2 gives job descriptions through Redis "
                   "only", pre);
    if (o->redis_prefix)
        return bad("%s--redis takes HOST:PORT only: the key prefix is the socket's absolute "
                   "path", pre);
    if (o->ecfg.compute_pstate == o->ecfg.sleep_pstate)
        return bad("%s--compute-pstate and --sleep-pstate must differ", pre);
    return -1;
}

/* --protocol batsim5: an EDC, which asks for its features itself. */
static int check_batsim5(const fbf_replay_options *o)
{
    static const char pre[] = "--protocol batsim5: ";
    int modes = (o->scheduler != NULL) + (o->endpoint != NULL) + (o->edc_library != NULL);
    if (o->inproc)
        return bad("%s--inproc runs fastbf's own Batsim v4 session; give --scheduler CMD, "
                   "--endpoint URL or --edc-library PATH", pre);
    if (modes != 1)
        return bad("%sgive exactly one of --scheduler, --endpoint and --edc-library", pre);
    if (o->policy_opts)
        return bad("%s--policy, --reservation-depth, --order, --backfill-order, --estimate, "
                   "--preset, --workers, --kill-after and --tag-starts "
                   "go with --inproc, which is batsim4's", pre);
    if (o->dyn_jobs || o->profile_reuse || o->forward_profiles)
        return bad("%s%s: a Batsim 5 EDC asks for it in its EDCHelloEvent "
                   "(requested_simulation_features)", pre,
                   o->dyn_jobs ? "--dynamic-jobs/--ack-dynamic-jobs"
                   : o->profile_reuse ? "--profile-reuse" : "--forward-profiles");
    if (o->query_wait)
        return bad("%s--query-wait: Batsim 5 has no estimate_waiting_time query", pre);
    if (o->redis_host[0])
        return bad("%s--redis: Batsim 5 has no Redis mode (jobs come in JobSubmittedEvent)", pre);
    if (o->socket)
        return bad("%s--socket goes with --protocol batsim2", pre);
    if (o->ecfg.compute_pstate == o->ecfg.sleep_pstate)
        return bad("%s--compute-pstate and --sleep-pstate must differ", pre);
    return -1;
}

int fbf_replay_parse_options(int argc, char **argv, fbf_replay_options *o)
{
    enum {
        O_SCHED = 256,
        O_ENDPOINT,
        O_INPROC,
        O_POLICY,
        O_DEPTH,
        O_WORKERS,
        O_NBRES,
        O_MAXJOBS,
        O_WALLTIME,
        O_TIMEOUT,
        O_OUT,
        O_QUIET,
        O_VERBOSE,
        O_ECHO,
        O_HELP,
        O_VERSION,
        O_KILL_AFTER,
        O_TAG_STARTS,
        O_DYN,
        O_ACK,
        O_FWD,
        O_QUERY,
        O_REDIS,
        O_ENERGY,
        O_MAX_EXCH = O_ENERGY + 5,
        O_EXT_END,
        O_REUSE,
        O_RECORD,
        O_PROTOCOL,
        O_SOCKET,
        O_EDC_LIB,
        O_EDC_INIT,
        O_FORMAT,
        O_SKIP_SHORT,
        O_EXPORT,
        O_PROGRESS,
        O_ORDER,
        O_BORDER,
        O_ESTIMATE,
        O_PRESET
    };
    static const struct option longopts[] = {
        {"scheduler", required_argument, NULL, O_SCHED},
        {"endpoint", required_argument, NULL, O_ENDPOINT},
        {"inproc", no_argument, NULL, O_INPROC},
        {"policy", required_argument, NULL, O_POLICY},
        {"reservation-depth", required_argument, NULL, O_DEPTH},
        {"order", required_argument, NULL, O_ORDER},
        {"backfill-order", required_argument, NULL, O_BORDER},
        {"estimate", required_argument, NULL, O_ESTIMATE},
        {"preset", required_argument, NULL, O_PRESET},
        {"workers", required_argument, NULL, O_WORKERS},
        {"nb-res", required_argument, NULL, O_NBRES},
        {"max-jobs", required_argument, NULL, O_MAXJOBS},
        {"walltime", required_argument, NULL, O_WALLTIME},
        {"skip-short-lines", no_argument, NULL, O_SKIP_SHORT},
        {"export-batsim", required_argument, NULL, O_EXPORT},
        {"progress", no_argument, NULL, O_PROGRESS},
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
        {"protocol", required_argument, NULL, O_PROTOCOL},
        {"socket", required_argument, NULL, O_SOCKET},
        {"edc-library", required_argument, NULL, O_EDC_LIB},
        {"edc-init", required_argument, NULL, O_EDC_INIT},
        {"format", required_argument, NULL, O_FORMAT},
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
        case O_POLICY: o->policy = o->choice.policy = optarg; o->policy_opts = true; break;
        case O_ORDER: o->choice.order = optarg; o->policy_opts = true; break;
        case O_BORDER: o->choice.backfill_order = optarg; o->policy_opts = true; break;
        case O_ESTIMATE: o->choice.estimate = optarg; o->policy_opts = true; break;
        case O_PRESET: o->choice.preset = optarg; o->policy_opts = true; break;
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
        case O_SKIP_SHORT: o->read.skip_short_lines = true; break;
        case O_EXPORT: o->export_dir = optarg; break;
        case O_PROGRESS: o->progress_lines = true; break;
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
        case O_PROTOCOL:
            if (strcmp(optarg, "batsim4") == 0)
                o->protocol = FBF_PROTO_BV4;
            else if (strcmp(optarg, "batsim2") == 0)
                o->protocol = FBF_PROTO_BV2;
            else if (strcmp(optarg, "batsim5") == 0)
                o->protocol = FBF_PROTO_BV5;
            else
                return bad("--protocol '%s': expected batsim4, batsim2 or batsim5", optarg);
            break;
        case O_EDC_LIB: o->edc_library = optarg; break;
        case O_EDC_INIT: o->edc_init = optarg; break;
        case O_FORMAT:
            o->format_given = true;
            o->format_binary = strcmp(optarg, "binary") == 0;
            if (!o->format_binary && strcmp(optarg, "json") != 0)
                return bad("--format '%s': expected json or binary", optarg);
            break;
        case O_SOCKET:
            if (!*optarg)
                return bad("%s", "--socket: empty path");
            o->socket = optarg;
            break;
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
    o->read.allow_empty = o->dyn_jobs; /* the scheduler may register every job */
    if (o->export_dir)
        return o->scheduler || o->endpoint || o->inproc || o->edc_library ||
                       o->protocol == FBF_PROTO_BV2
                   ? bad("%s", "--export-batsim writes files for Batsim 4 or 5 and runs no "
                               "scheduler")
                   : -1;
    if (o->protocol == FBF_PROTO_BV5)
        return check_batsim5(o);
    if (o->edc_library || o->edc_init || o->format_given)
        return bad("%s", "--edc-library, --edc-init and --format go with --protocol batsim5");
    if (o->protocol == FBF_PROTO_BV2)
        return check_batsim2(o);
    int modes = (o->scheduler != NULL) + (o->endpoint != NULL) + o->inproc;
    if (modes != 1)
        return bad("%s", "give exactly one of --scheduler, --endpoint and --inproc");
    if (o->policy_opts && !o->inproc)
        return bad("%s", "--policy, --reservation-depth, --order, --backfill-order, --estimate, "
                   "--preset, --workers, --kill-after and "
                         "--tag-starts go with --inproc (another scheduler has its own options)");
    if (o->ecfg.compute_pstate == o->ecfg.sleep_pstate)
        return bad("%s", "--compute-pstate and --sleep-pstate must differ");
    if (o->profile_reuse && !o->dyn_jobs)
        return bad("%s", "--profile-reuse: Profile reuse is enabled but dynamic registration is "
                         "not, have you missed something?");
    if (o->redis_host[0] && o->forward_profiles)
        return bad("%s", "--redis does not go with --forward-profiles: in Redis mode "
                         "JOB_SUBMITTED carries job_id only, and the profile is in the store");
    if (o->socket)
        return bad("%s", "--socket goes with --protocol batsim2 (batsim4 speaks ZeroMQ)");
    return -1;
}

void fbf_replay_options_init(fbf_replay_options *o)
{
    *o = (fbf_replay_options){.timeout_s = 60, .read = FBF_WL_READ_DEFAULTS,
                              .ecfg = fbf_energy_config_default(), .external_end = NAN};
}
