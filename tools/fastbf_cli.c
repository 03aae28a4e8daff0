/*
 * fastbf_cli: fastbf's command line, read and checked (see fastbf_cli.h),
 * and the text of --help.
 */
#include "tools/fastbf_cli.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/idset.h"
#include "io/endpoint.h"
#include "io/zmq_server.h"
#include "tools/lib/sched_choice.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: fastbf [--policy NAME] [--reservation-depth K] [--order NAME]\n"
                 "              [--backfill-order NAME] [--estimate NAME] [--preset easy++]\n"
                 "              [--protocol batsim4|batsim5] [--endpoint URL] [--allow-remote]\n"
                 "              [--protocol batsim2 --socket PATH [--redis-host H]\n"
                 "               [--redis-port P]] [--max-message BYTES]\n"
                 "              [--protocol flux [--flux-mode single|unlimited] [--flux-ranks N]\n"
                 "               [--flux-cores C] [--redis-host H] [--redis-port P]]\n"
                 "              [--workers N] [--kill-after SECONDS] [--max-wait SECONDS]\n"
                 "              [--tag-starts] [--stats] [--verbose] [--control URL]\n"
                 "              [--register-workload FILE [--register-pause SECONDS]\n"
                 "               [--skip-short-lines]]\n"
                 "              [--energy-saving TIMEOUT [--switch-delays OFF:ON]\n"
                 "               [--sleep-pstate N] [--compute-pstate M]] [--query-energy]\n"
                 "       fastbf --help | --version\n"
                 "\n"
                 "A Batsim decision process: the v4 JSON protocol over a ZeroMQ socket, or\n"
                 "the v2 text protocol over Batsim's Unix socket with job data in Redis; or\n"
                 "the scheduler of Flux's RFC 27 (resource allocation protocol) over ZeroMQ,\n"
                 "with job data in Redis under RFC 16's keys.\n"
                 "\n"
                 "  --policy NAME            scheduling policy (default: easy):\n");
    for (const fbf_policy_entry *e = fbf_policy_list(); e->name; e++)
        fprintf(out, "                             %-13s %s\n", e->name, e->summary);
    fprintf(out,
            "  --reservation-depth K    backfilling: how many waiting jobs hold a reservation\n"
            "                           (easy: 1, conservative: unlimited; K >= 1 or\n"
            "                           'unlimited')\n");
    fbf_sched_choice_usage(out, 2);
    fprintf(out,
            "  --protocol NAME          batsim4 (default), batsim5 (an External Decision\n"
            "                           Component process: Batsim's init string, a JSON\n"
            "                           object of these options under their names with '_'\n"
            "                           for '-', overrides the command line), batsim2, or\n"
            "                           flux (RFC 27 over ZeroMQ; docs/flux.md)\n"
            "  --endpoint URL           batsim4, batsim5: ZeroMQ endpoint to bind (default:\n"
            "                           %s, which Batsim's tcp://localhost:28000\n"
            "                           reaches); fastbf answers only the first peer to speak\n"
            "  --allow-remote           let --endpoint be reachable from other machines\n"
            "                           (tcp://*:PORT, 0.0.0.0, a network address); without\n"
            "                           it only loopback, ipc:// and inproc:// are bound\n"
            "  --socket PATH            batsim2: the Unix socket Batsim listens on; job data\n"
            "                           is read from Redis under '<absolute PATH>:'\n"
            "  --redis-host H, --redis-port P  batsim2, flux: the Redis server of the job\n"
            "                           data (default: 127.0.0.1 and 6379)\n"
            "  --flux-mode MODE         flux: the concurrency mode fastbf asks for in\n"
            "                           job-manager.sched-ready: unlimited (default: an alloc\n"
            "                           for every job in SCHED state) or single (one at a time)\n"
            "  --flux-ranks N, --flux-cores C  flux: the platform, N ranks of C cores each\n"
            "                           (default 1 x 1); a resource is a core\n"
            "  --max-message BYTES      refuse a message larger than this before reading it\n"
            "                           (default: 512 MiB over ZeroMQ, 64 MiB with batsim2)\n"
            "  --workers N              worker threads over which waiting jobs are\n"
            "                           partitioned (default: 1; decisions do not depend on N)\n"
            "  --kill-after SECONDS     kill every job this long after it starts (KILL_JOB),\n"
            "                           as Batsim's killer test schedulers do (> 0)\n"
            "  --max-wait SECONDS       give up every job still waiting this long after its\n"
            "                           submission (CHANGE_JOB_STATE to COMPLETED_KILLED)\n"
            "  --tag-starts             tag each started job with why it started\n"
            "                           (SET_JOB_METADATA: reason=head|backfilled|reservation)\n"
            "  --register-workload FILE submitter mode: register the jobs of FILE (SWF or\n"
            "                           Batsim JSON) at their subtimes through Batsim's\n"
            "                           dynamic registration (REGISTER_PROFILE, REGISTER_JOB,\n"
            "                           CALL_ME_LATER, NOTIFY registration_finished); Batsim\n"
            "                           needs --enable-dynamic-jobs. SWF ids are dyn!N\n"
            "  --register-pause SECONDS with --register-workload: declare registration\n"
            "                           finished whenever the next job is more than SECONDS\n"
            "                           away, and re-open it (continue_registration) just\n"
            "                           before it, so Batsim may end the run during a gap\n"
            "  --skip-short-lines       with --register-workload: skip SWF lines of fewer\n"
            "                           than 18 fields instead of refusing the file\n"
            "  --energy-saving TIMEOUT  switch off machines idle for TIMEOUT seconds when no\n"
            "                           waiting job could use them before they are back\n"
            "                           (SET_RESOURCE_STATE); wake them on demand or ahead\n"
            "                           of the reservations that need them; implies\n"
            "                           --query-energy\n"
            "  --switch-delays OFF:ON   fastbf's estimates of the switch-off and switch-on\n"
            "                           times in seconds (default 0:0)\n"
            "  --sleep-pstate N         the pstate that puts a machine to sleep (default: the\n"
            "                           platform's first sleep pstate, else 1)\n"
            "  --compute-pstate M       the pstate machines compute in (default 0)\n"
            "  --query-energy           ask Batsim for consumed_energy after the last\n"
            "                           submission and at the end (logged with --verbose)\n"
            "  --stats                  at the end, say on stderr how long fastbf took to\n"
            "                           answer (all messages, and the first) against the\n"
            "                           whole run (also with --verbose)\n"
            "  --control URL            open the job status and control endpoint (JSC:\n"
            "                           fastbf-jstat) at ipc://PATH or tcp://127.0.0.1:PORT:\n"
            "                           requests there, state changes published at\n"
            "                           ipc://PATH.pub or PORT + 1\n"
            "  --verbose                log each exchange on stderr\n"
            "  --help                   show this help\n"
            "  --version                show the version\n",
            FBF_ZMQ_DEFAULT_ENDPOINT);
}

int fbf_cli_bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "fastbf: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'fastbf --help'.\n");
    return 2;
}

static bool parse_count(const char *s, long long min, long long max, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0) || isinf(v))
        return false;
    *out = v;
    return true;
}

int fbf_cli_parse(fbf_cli *o, int argc, char **argv)
{
    static const struct option opts[] = {
        {"policy", required_argument, NULL, 'p'},
        {"reservation-depth", required_argument, NULL, 'd'},
        {"order", required_argument, NULL, 'O'},
        {"backfill-order", required_argument, NULL, 'B'},
        {"estimate", required_argument, NULL, 'Y'},
        {"preset", required_argument, NULL, 'Z'},
        {"endpoint", required_argument, NULL, 'e'},
        {"workers", required_argument, NULL, 'w'},
        {"verbose", no_argument, NULL, 'v'},
        {"stats", no_argument, NULL, 'T'},
        {"kill-after", required_argument, NULL, 'k'},
        {"max-wait", required_argument, NULL, 'W'},
        {"tag-starts", no_argument, NULL, 't'},
        {"register-workload", required_argument, NULL, 'r'},
        {"register-pause", required_argument, NULL, 'P'},
        {"skip-short-lines", no_argument, NULL, 'L'},
        {"energy-saving", required_argument, NULL, 'E'},
        {"switch-delays", required_argument, NULL, 'D'},
        {"sleep-pstate", required_argument, NULL, 'S'},
        {"compute-pstate", required_argument, NULL, 'C'},
        {"query-energy", no_argument, NULL, 'Q'},
        {"protocol", required_argument, NULL, 'X'},
        {"socket", required_argument, NULL, 'U'},
        {"redis-host", required_argument, NULL, 'H'},
        {"redis-port", required_argument, NULL, 'R'},
        {"max-message", required_argument, NULL, 'M'},
        {"allow-remote", no_argument, NULL, 'A'},
        {"flux-mode", required_argument, NULL, 'F'},
        {"flux-ranks", required_argument, NULL, 'N'},
        {"flux-cores", required_argument, NULL, 'c'},
        {"control", required_argument, NULL, 'J'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *policy = "easy", *endpoint = FBF_ZMQ_DEFAULT_ENDPOINT, *depth_arg = NULL;
    fbf_sched_choice choice = {0};
    long long workers = 1, depth = 0;
    bool verbose = false, tag_starts = false, stats = false, skip_short = false;
    double kill_after = 0, pause = 0, max_wait = 0;
    const char *reg_path = NULL;
    fbf_power_config power = fbf_power_config_default();
    bool query_energy = false, power_set = false, sleep_given = false, compute_given = false;
    long long pstate;
    const char *protocol = "batsim4", *socket_path = NULL, *redis_host = "127.0.0.1";
    long long redis_port = 6379, max_message = 0;
    bool endpoint_given = false, v2_only = false, allow_remote = false, flux_only = false;
    bool redis_given = false;
    fbf_flux_mode flux_mode = FBF_FLUX_MODE_UNLIMITED;
    long long flux_ranks = 1, flux_cores = 1;
    const char *control = NULL;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":", opts, NULL)) != -1;) {
        switch (c) {
        case 'p': policy = choice.policy = optarg; break;
        case 'O': choice.order = optarg; break;
        case 'B': choice.backfill_order = optarg; break;
        case 'Y': choice.estimate = optarg; break;
        case 'Z': choice.preset = optarg; break;
        case 'd': depth_arg = optarg; break;
        case 'e':
            endpoint = optarg;
            endpoint_given = true;
            break;
        case 'X': protocol = optarg; break;
        case 'U':
            socket_path = optarg;
            v2_only = true;
            break;
        case 'H':
            redis_host = optarg;
            redis_given = true;
            break;
        case 'R':
            if (!parse_count(optarg, 1, 65535, &redis_port))
                return fbf_cli_bad_usage("--redis-port: '%s' is not a port from 1 to 65535",
                                         optarg);
            redis_given = true;
            break;
        case 'F':
            if (strcmp(optarg, "single") == 0)
                flux_mode = FBF_FLUX_MODE_SINGLE;
            else if (strcmp(optarg, "unlimited") == 0)
                flux_mode = FBF_FLUX_MODE_UNLIMITED;
            else
                return fbf_cli_bad_usage("--flux-mode: '%s' is not single or unlimited", optarg);
            flux_only = true;
            break;
        case 'N':
        case 'c':
            if (!parse_count(optarg, 1, FBF_IDSET_MAX_ID, c == 'N' ? &flux_ranks : &flux_cores))
                return fbf_cli_bad_usage(
                    "--flux-ranks/--flux-cores: '%s' is not a number from 1 to "
                    "2147483647",
                    optarg);
            flux_only = true;
            break;
        case 'M':
            if (!parse_count(optarg, 16, UINT32_MAX, &max_message))
                return fbf_cli_bad_usage("--max-message: '%s' is not a number of bytes from 16 to "
                                         "4294967295",
                                         optarg);
            break;
        case 'A': allow_remote = true; break;
        case 'J': control = optarg; break;
        case 'w':
            if (!parse_count(optarg, 1, 256, &workers))
                return fbf_cli_bad_usage("--workers: '%s' is not a number from 1 to 256", optarg);
            break;
        case 'v': verbose = true; break;
        case 'T': stats = true; break;
        case 't': tag_starts = true; break;
        case 'W':
            if (!parse_seconds(optarg, &max_wait) || !(max_wait > 0))
                return fbf_cli_bad_usage("--max-wait: '%s' is not a number of seconds > 0", optarg);
            break;
        case 'k':
            if (!parse_seconds(optarg, &kill_after) || !(kill_after > 0))
                return fbf_cli_bad_usage("--kill-after: '%s' is not a number of seconds > 0",
                                         optarg);
            break;
        case 'r': reg_path = optarg; break;
        case 'L': skip_short = true; break;
        case 'P':
            if (!parse_seconds(optarg, &pause) || !(pause > 0))
                return fbf_cli_bad_usage("--register-pause: '%s' is not a number of seconds > 0",
                                         optarg);
            break;
        case 'E':
            if (!parse_seconds(optarg, &power.timeout))
                return fbf_cli_bad_usage("--energy-saving: '%s' is not a number of seconds >= 0",
                                         optarg);
            power.saving = query_energy = power_set = true;
            break;
        case 'D': {
            const char *colon = strchr(optarg, ':');
            char off[64];
            if (!colon || (size_t)(colon - optarg) >= sizeof off)
                return fbf_cli_bad_usage("--switch-delays: '%s' is not OFF:ON (seconds)", optarg);
            memcpy(off, optarg, (size_t)(colon - optarg));
            off[colon - optarg] = '\0';
            if (!parse_seconds(off, &power.off_delay) || !parse_seconds(colon + 1, &power.on_delay))
                return fbf_cli_bad_usage("--switch-delays: '%s' is not OFF:ON (seconds >= 0)",
                                         optarg);
            power_set = true;
            break;
        }
        case 'S':
        case 'C':
            if (!parse_count(optarg, 0, UINT32_MAX, &pstate))
                return fbf_cli_bad_usage(
                    "--sleep-pstate/--compute-pstate: '%s' is not a pstate number", optarg);
            *(c == 'S' ? &power.sleep_pstate : &power.compute_pstate) = (uint32_t)pstate;
            *(c == 'S' ? &sleep_given : &compute_given) = true;
            power_set = true;
            break;
        case 'Q': query_energy = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fastbf %s\n", FBF_VERSION); return 0;
        case ':': return fbf_cli_bad_usage("option '%s' needs a value", argv[optind - 1]);
        default: return fbf_cli_bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return fbf_cli_bad_usage("unexpected argument '%s'", argv[optind]);
    bool v2 = strcmp(protocol, "batsim2") == 0, v5 = strcmp(protocol, "batsim5") == 0;
    bool flux = strcmp(protocol, "flux") == 0;
    if (!v2 && !v5 && !flux && strcmp(protocol, "batsim4") != 0)
        return fbf_cli_bad_usage("--protocol: '%s' is not batsim4, batsim5, batsim2 or flux",
                                 protocol);
    /* RFC 27's queue order: priority, then submit time. */
    if (flux && !choice.order)
        choice.order = "priority";
    if (!flux && flux_only)
        return fbf_cli_bad_usage("%s",
                                 "--flux-mode, --flux-ranks and --flux-cores go with --protocol "
                                 "flux");
    if (!v2 && !flux && redis_given)
        return fbf_cli_bad_usage("%s",
                                 "--redis-host and --redis-port go with --protocol batsim2 or "
                                 "flux");
    if (flux && flux_ranks * flux_cores > (long long)FBF_IDSET_MAX_ID + 1)
        return fbf_cli_bad_usage("%s", "--flux-ranks x --flux-cores: at most 2^31 cores in all");
    if (flux &&
        (kill_after > 0 || tag_starts || reg_path || query_energy || power_set || max_wait > 0))
        return fbf_cli_bad_usage("%s",
                                 "--kill-after, --max-wait, --tag-starts, --register-workload and "
                                 "the energy options are Batsim's: RFC 27 has no kill, metadata, "
                                 "registration or machine states");
    if (v5 && (tag_starts || query_energy))
        return fbf_cli_bad_usage("%s",
                                 "--tag-starts and --query-energy need Batsim v4: batprotocol "
                                 "carries no job metadata or energy query");
    if (v5 && pause > 0)
        return fbf_cli_bad_usage("%s", "--register-pause needs Batsim v4's continue_registration: "
                                       "batprotocol cannot re-open registration");
    if (!v2 && v2_only)
        return fbf_cli_bad_usage("%s", "--socket goes with --protocol batsim2");
    if (v2 && !socket_path)
        return fbf_cli_bad_usage("%s", "--protocol batsim2 needs --socket PATH (Batsim's socket)");
    if (v2 && (endpoint_given || allow_remote))
        return fbf_cli_bad_usage("%s",
                                 "--endpoint and --allow-remote are ZeroMQ's (batsim4, batsim5); "
                                 "batsim2 takes --socket");
    fbf_error err = {{0}};
    if (!v2 && fbf_endpoint_check_bind(endpoint, allow_remote, &err) < 0) {
        fprintf(stderr, "fastbf: %s\nTry 'fastbf --help'.\n", err.text);
        return 2;
    }
    if (v2 && (kill_after > 0 || tag_starts || reg_path))
        return fbf_cli_bad_usage("%s",
                                 "--kill-after, --tag-starts and --register-workload need Batsim "
                                 "v4: the v2 text protocol has no kill, metadata or registration");

    if (power_set && power.sleep_pstate == power.compute_pstate)
        return fbf_cli_bad_usage("--sleep-pstate and --compute-pstate must differ%s", "");
    fbf_engine_config ecfg = {0};
    if (fbf_sched_choice_apply(&choice, &ecfg, &policy, &err) < 0)
        return fbf_cli_bad_usage("%s", err.text);
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    if (!pe)
        return fbf_cli_bad_usage("unknown policy '%s' (fcfs, easy or conservative)", policy);
    depth = pe->default_depth;
    if (depth_arg) {
        if (pe->ops != fbf_policy_lookup("easy")->ops)
            return fbf_cli_bad_usage("--reservation-depth applies to the backfilling policies, not "
                                     "'%s'",
                                     policy);
        if (strcmp(depth_arg, "unlimited") == 0)
            depth = FBF_DEPTH_UNLIMITED;
        else if (!parse_count(depth_arg, 1, FBF_DEPTH_UNLIMITED, &depth))
            return fbf_cli_bad_usage(
                "--reservation-depth: '%s' is not a number >= 1 or 'unlimited'", depth_arg);
    }

    if (pause > 0 && !reg_path)
        return fbf_cli_bad_usage("%s", "--register-pause goes with --register-workload");
    if (skip_short && !reg_path)
        return fbf_cli_bad_usage("%s", "--skip-short-lines goes with --register-workload");
    *o = (fbf_cli){
        .v2 = v2,
        .v5 = v5,
        .flux = flux,
        .policy = pe,
        .engine = ecfg,
        .depth = depth,
        .workers = workers,
        .endpoint = endpoint,
        .allow_remote = allow_remote,
        .max_message = max_message,
        .socket_path = socket_path,
        .redis_host = redis_host,
        .redis_port = redis_port,
        .flux_mode = flux_mode,
        .flux_ranks = flux_ranks,
        .flux_cores = flux_cores,
        .control = control,
        .verbose = verbose,
        .stats = stats,
        .tag_starts = tag_starts,
        .reg_path = reg_path,
        .pause = pause,
        .skip_short = skip_short,
        .power = power,
        .query_energy = query_energy,
        .sleep_given = sleep_given,
        .compute_given = compute_given,
    };
    o->engine.policy = pe->ops;
    o->engine.reservation_depth = depth;
    o->engine.workers = (unsigned)workers;
    o->engine.kill_after = kill_after;
    o->engine.max_wait = max_wait;
    return -1;
}
