/*
 * fastbf: the decision process. Parses the command line, builds a session
 * with the chosen policy and serves it: Batsim v4 over ZeroMQ (the
 * default), or the Batsim v2 text protocol over Batsim's Unix socket.
 *
 * Exit codes: 0 after the simulation's end, 1 on a protocol violation or a
 * transport failure (one line on stderr says what), 2 on a bad command
 * line or a --register-workload file that cannot be read or registered.
 */
#define _GNU_SOURCE /* pthread_setattr_default_np */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/bv2_client.h"
#include "io/bv2_frame.h"
#include "io/submitter.h"
#include "tools/lib/register_plan.h"
#include "io/bv4_session.h"
#include "io/bv5_process.h"
#include "io/endpoint.h"
#include "io/flux_server.h"
#include "io/jsc_server.h"
#include "io/zmq_server.h"
#include "policies/registry.h"
#include "tools/lib/counters.h"
#include "tools/lib/edc_init.h"
#include "tools/lib/memstat.h"
#include "tools/lib/sched_choice.h"
#include "tools/lib/workload.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fastbf [--policy NAME] [--reservation-depth K] [--order NAME]\n"
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

static int bad_usage(const char *fmt, const char *arg)
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

/* Batsim 5's init string over the command line's options (a process EDC's
 * handshake). */
static int configure_edc(void *ctx, const char *init, size_t len, fbf_bv5_options *o,
                         fbf_error *err)
{
    fbf_edc_setup *c = ctx;
    int rc = fbf_edc_init_read(init, len, o, c, err);
    o->session.power = &c->power;
    o->session.log = c->verbose ? stderr : NULL;
    return rc;
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

/* Every thread of the process (ZeroMQ's two, the disconnect watcher, the
 * parse helper, the workers) gets a stack of FBF_THREAD_STACK rather than
 * the 8 MiB RLIMIT_STACK default: the whole stack is address space from the
 * start, so four default stacks alone were half of what `ulimit -v 64M`
 * allows, and ZeroMQ aborts when it cannot start a thread. The deepest
 * recursion is JSON's, bounded by cJSON's nesting limit of 1000 levels. */
#define FBF_THREAD_STACK (1u << 20)

static void use_small_thread_stacks(void)
{
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) != 0)
        return;
    size_t cur = 0;
    if (pthread_attr_getstacksize(&a, &cur) == 0 && cur > FBF_THREAD_STACK &&
        pthread_attr_setstacksize(&a, FBF_THREAD_STACK) == 0)
        pthread_setattr_default_np(&a);
    pthread_attr_destroy(&a);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* libzmq ends the process with abort() when it cannot allocate memory
 * (alloc_assert: "FATAL ERROR: OUT OF MEMORY") or start a thread, after
 * printing where; fastbf itself never aborts. Memory exhaustion is an exit
 * status and a line, not a signal. Only async-signal-safe calls here. */
static void on_abort(int sig)
{
    (void)sig;
    static const char line[] =
        "fastbf: ZeroMQ gave up at the place named above, as it does when it cannot "
        "allocate memory or start a thread: out of memory\n";
    ssize_t w = write(STDERR_FILENO, line, sizeof line - 1);
    (void)w;
    _exit(1);
}
#endif

int main(int argc, char **argv)
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
        case 'e': endpoint = optarg; endpoint_given = true; break;
        case 'X': protocol = optarg; break;
        case 'U': socket_path = optarg; v2_only = true; break;
        case 'H': redis_host = optarg; redis_given = true; break;
        case 'R':
            if (!parse_count(optarg, 1, 65535, &redis_port))
                return bad_usage("--redis-port: '%s' is not a port from 1 to 65535", optarg);
            redis_given = true;
            break;
        case 'F':
            if (strcmp(optarg, "single") == 0)
                flux_mode = FBF_FLUX_MODE_SINGLE;
            else if (strcmp(optarg, "unlimited") == 0)
                flux_mode = FBF_FLUX_MODE_UNLIMITED;
            else
                return bad_usage("--flux-mode: '%s' is not single or unlimited", optarg);
            flux_only = true;
            break;
        case 'N':
        case 'c':
            if (!parse_count(optarg, 1, FBF_IDSET_MAX_ID, c == 'N' ? &flux_ranks : &flux_cores))
                return bad_usage("--flux-ranks/--flux-cores: '%s' is not a number from 1 to "
                                 "2147483647", optarg);
            flux_only = true;
            break;
        case 'M':
            if (!parse_count(optarg, 16, UINT32_MAX, &max_message))
                return bad_usage("--max-message: '%s' is not a number of bytes from 16 to "
                                 "4294967295", optarg);
            break;
        case 'A': allow_remote = true; break;
        case 'J': control = optarg; break;
        case 'w':
            if (!parse_count(optarg, 1, 256, &workers))
                return bad_usage("--workers: '%s' is not a number from 1 to 256", optarg);
            break;
        case 'v': verbose = true; break;
        case 'T': stats = true; break;
        case 't': tag_starts = true; break;
        case 'W': {
            char *end;
            errno = 0;
            max_wait = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(max_wait > 0) || isinf(max_wait))
                return bad_usage("--max-wait: '%s' is not a number of seconds > 0", optarg);
            break;
        }
        case 'k': {
            char *end;
            errno = 0;
            kill_after = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(kill_after > 0) || isinf(kill_after))
                return bad_usage("--kill-after: '%s' is not a number of seconds > 0", optarg);
            break;
        }
        case 'r': reg_path = optarg; break;
        case 'L': skip_short = true; break;
        case 'P': {
            char *end;
            errno = 0;
            pause = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(pause > 0) || isinf(pause))
                return bad_usage("--register-pause: '%s' is not a number of seconds > 0", optarg);
            break;
        }
        case 'E':
            if (!parse_seconds(optarg, &power.timeout))
                return bad_usage("--energy-saving: '%s' is not a number of seconds >= 0", optarg);
            power.saving = query_energy = power_set = true;
            break;
        case 'D': {
            const char *colon = strchr(optarg, ':');
            char off[64];
            if (!colon || (size_t)(colon - optarg) >= sizeof off)
                return bad_usage("--switch-delays: '%s' is not OFF:ON (seconds)", optarg);
            memcpy(off, optarg, (size_t)(colon - optarg));
            off[colon - optarg] = '\0';
            if (!parse_seconds(off, &power.off_delay) || !parse_seconds(colon + 1, &power.on_delay))
                return bad_usage("--switch-delays: '%s' is not OFF:ON (seconds >= 0)", optarg);
            power_set = true;
            break;
        }
        case 'S':
        case 'C':
            if (!parse_count(optarg, 0, UINT32_MAX, &pstate))
                return bad_usage("--sleep-pstate/--compute-pstate: '%s' is not a pstate number",
                                 optarg);
            *(c == 'S' ? &power.sleep_pstate : &power.compute_pstate) = (uint32_t)pstate;
            *(c == 'S' ? &sleep_given : &compute_given) = true;
            power_set = true;
            break;
        case 'Q': query_energy = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fastbf %s\n", FBF_VERSION); return 0;
        case ':': return bad_usage("option '%s' needs a value", argv[optind - 1]);
        default: return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return bad_usage("unexpected argument '%s'", argv[optind]);
    bool v2 = strcmp(protocol, "batsim2") == 0, v5 = strcmp(protocol, "batsim5") == 0;
    bool flux = strcmp(protocol, "flux") == 0;
    if (!v2 && !v5 && !flux && strcmp(protocol, "batsim4") != 0)
        return bad_usage("--protocol: '%s' is not batsim4, batsim5, batsim2 or flux", protocol);
    /* RFC 27's queue order: priority, then submit time. */
    if (flux && !choice.order)
        choice.order = "priority";
    if (!flux && flux_only)
        return bad_usage("%s", "--flux-mode, --flux-ranks and --flux-cores go with --protocol "
                               "flux");
    if (!v2 && !flux && redis_given)
        return bad_usage("%s", "--redis-host and --redis-port go with --protocol batsim2 or "
                               "flux");
    if (flux && flux_ranks * flux_cores > (long long)FBF_IDSET_MAX_ID + 1)
        return bad_usage("%s", "--flux-ranks x --flux-cores: at most 2^31 cores in all");
    if (flux && (kill_after > 0 || tag_starts || reg_path || query_energy || power_set ||
                 max_wait > 0))
        return bad_usage("%s", "--kill-after, --max-wait, --tag-starts, --register-workload and "
                               "the energy options are Batsim's: RFC 27 has no kill, metadata, "
                               "registration or machine states");
    if (v5 && (tag_starts || query_energy))
        return bad_usage("%s", "--tag-starts and --query-energy need Batsim v4: batprotocol "
                               "carries no job metadata or energy query");
    if (v5 && pause > 0)
        return bad_usage("%s", "--register-pause needs Batsim v4's continue_registration: "
                               "batprotocol cannot re-open registration");
    if (!v2 && v2_only)
        return bad_usage("%s", "--socket goes with --protocol batsim2");
    if (v2 && !socket_path)
        return bad_usage("%s", "--protocol batsim2 needs --socket PATH (Batsim's socket)");
    if (v2 && (endpoint_given || allow_remote))
        return bad_usage("%s", "--endpoint and --allow-remote are ZeroMQ's (batsim4, batsim5); "
                               "batsim2 takes --socket");
    fbf_error err = {{0}};
    if (!v2 && fbf_endpoint_check_bind(endpoint, allow_remote, &err) < 0) {
        fprintf(stderr, "fastbf: %s\nTry 'fastbf --help'.\n", err.text);
        return 2;
    }
    if (v2 && (kill_after > 0 || tag_starts || reg_path))
        return bad_usage("%s", "--kill-after, --tag-starts and --register-workload need Batsim "
                               "v4: the v2 text protocol has no kill, metadata or registration");

    if (power_set && power.sleep_pstate == power.compute_pstate)
        return bad_usage("--sleep-pstate and --compute-pstate must differ%s", "");
    fbf_engine_config ecfg = {0};
    if (fbf_sched_choice_apply(&choice, &ecfg, &policy, &err) < 0)
        return bad_usage("%s", err.text);
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    if (!pe)
        return bad_usage("unknown policy '%s' (fcfs, easy or conservative)", policy);
    depth = pe->default_depth;
    if (depth_arg) {
        if (pe->ops != fbf_policy_lookup("easy")->ops)
            return bad_usage("--reservation-depth applies to the backfilling policies, not "
                             "'%s'",
                             policy);
        if (strcmp(depth_arg, "unlimited") == 0)
            depth = FBF_DEPTH_UNLIMITED;
        else if (!parse_count(depth_arg, 1, FBF_DEPTH_UNLIMITED, &depth))
            return bad_usage("--reservation-depth: '%s' is not a number >= 1 or 'unlimited'",
                             depth_arg);
    }

    if (pause > 0 && !reg_path)
        return bad_usage("%s", "--register-pause goes with --register-workload");
    if (skip_short && !reg_path)
        return bad_usage("%s", "--skip-short-lines goes with --register-workload");
    fbf_submitter *reg = NULL;
    if (reg_path && !(reg = fbf_register_plan_load(reg_path, pause, skip_short, &err))) {
        fprintf(stderr, "fastbf: --register-workload: %s\n", err.text);
        return 2;
    }

    if (control) {
        char a[512], b[512];
        if (fbf_jsc_endpoints(control, a, sizeof a, b, sizeof b, &err) < 0) {
            fprintf(stderr, "fastbf: %s\nTry 'fastbf --help'.\n", err.text);
            fbf_submitter_destroy(reg);
            return 2;
        }
    }
    /* A write to a dead pipe must be an error, not a silent death. */
    signal(SIGPIPE, SIG_IGN);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    signal(SIGABRT, on_abort); /* sanitizers report through abort when asked to */
#endif
    use_small_thread_stacks();
    fbf_jsc *jsc = NULL;
    fbf_jsc_server *jsrv = NULL;
    if (control) {
        fbf_jsc_life life = flux ? FBF_JSC_FLUX : v2 ? FBF_JSC_BATSIM_NOKILL : FBF_JSC_BATSIM;
        jsc = fbf_jsc_create(life, flux ? (uint32_t)flux_cores : 1, &err);
        jsrv = jsc ? fbf_jsc_server_start(jsc, control, &err) : NULL;
        if (!jsrv) {
            fprintf(stderr, "fastbf: %s\n", err.text);
            fbf_jsc_destroy(jsc);
            fbf_submitter_destroy(reg);
            return 1;
        }
    }

    ecfg.policy = pe->ops;
    ecfg.reservation_depth = depth;
    ecfg.workers = (unsigned)workers;
    ecfg.kill_after = kill_after;
    ecfg.max_wait = max_wait;
    fbf_bv4_options o = {
        .engine = ecfg,
        .log = verbose ? stderr : NULL,
        .tag_starts = tag_starts,
        .submitter = reg,
        .power = &power,
        .sleep_pstate_given = sleep_given,
        .compute_pstate_given = compute_given,
        .query_energy = query_energy,
        .jsc = jsc,
    };
    fbf_bv4_session *s = NULL;
    fbf_bv2_client *c = NULL;
    fbf_flux_session *fx = NULL;
    fbf_bv5_process p5;
    fbf_edc_setup p5cfg = {.power = power, .verbose = verbose};
    bool ready = true;
    if (v5) {
        fbf_bv5_options o5 = {.session = {.engine = ecfg,
                                          .log = o.log,
                                          .submitter = reg,
                                          .power = &p5cfg.power,
                                          .sleep_pstate_given = sleep_given,
                                          .compute_pstate_given = compute_given,
                                          .call_margin = 1e-3,
                                          .call_per_event = 2e-5,
                                          .jsc = jsc},
                              .format = FBF_BV5_FORMAT_JSON};
        fbf_bv5_process_init(&p5, &o5, configure_edc, &p5cfg);
    } else if (flux) {
        fbf_flux_options of = {
            .session = {.engine = ecfg, .log = o.log, .jsc = jsc},
            .mode = flux_mode,
            .nranks = (uint32_t)flux_ranks,
            .cores_per_rank = (uint32_t)flux_cores,
            .redis_host = redis_host,
            .redis_port = (int)redis_port,
            .annotate = pe->ops == fbf_policy_lookup("easy")->ops,
        };
        fx = fbf_flux_session_create(&of, &err);
        ready = fx != NULL;
    } else if (v2) {
        fbf_bv2_options o2 = {
            .session = {.engine = ecfg,
                        .log = o.log,
                        .power = &power,
                        .sleep_pstate_given = sleep_given,
                        .compute_pstate_given = compute_given,
                        .query_energy = query_energy,
                        .jsc = jsc},
            .socket = socket_path,
            .redis_host = redis_host,
            .redis_port = (int)redis_port,
            .max_message = max_message ? (size_t)max_message : FBF_BV2_FRAME_MAX_DEFAULT,
            .connect_timeout_s = 30,
        };
        c = fbf_bv2_client_create(&o2, &err);
        ready = c != NULL;
    } else {
        s = fbf_bv4_session_create(&o, &err);
        ready = s != NULL;
    }
    if (!ready) {
        fprintf(stderr, "fastbf: %s\n", err.text);
        fbf_submitter_destroy(reg);
        fbf_jsc_server_stop(jsrv);
        fbf_jsc_destroy(jsc);
        return 1;
    }
    long start_kib = -1;
    if (verbose)
        start_kib = fbf_memstat_settled_rss_kib();
    /* One line says what runs and where Batsim finds it. */
    char announce[320], depth_text[48] = "", choice_text[120];
    fbf_sched_choice_describe(&ecfg, choice_text, sizeof choice_text);
    if (pe->ops == fbf_policy_lookup("easy")->ops)
        snprintf(depth_text, sizeof depth_text, depth == FBF_DEPTH_UNLIMITED
                                                    ? "reservation depth unlimited, "
                                                    : "reservation depth %lld, ", depth);
    snprintf(announce, sizeof announce, "fastbf: %s (%s%lld worker%s%s), %s,", pe->name,
             depth_text, workers, workers > 1 ? "s" : "", choice_text,
             v5 ? "Batsim 5 EDC" : v2 ? "Batsim v2" : flux ? "Flux RFC 27" : "Batsim v4");
    if (v2)
        fprintf(stderr, "%s connected to %s\n", announce, fbf_bv2_client_socket(c));
    fbf_serve_stats st = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    fbf_serve_stats *stp = stats || verbose ? &st : NULL;
    fbf_zmq_options zo = {.endpoint = endpoint,
                          .allow_remote = allow_remote,
                          .max_message = (size_t)max_message,
                          .warn = stderr,
                          .announce = announce};
    int rc;
    if (v5) {
        fbf_zmq_handler h = fbf_bv5_process_handler(&p5);
        rc = fbf_zmq_serve_with(&zo, &h, stp, &err);
    } else if (flux) {
        rc = fbf_flux_serve(&zo, fx, stp, &err);
    } else {
        rc = v2 ? fbf_bv2_client_serve(c, stp, &err) : fbf_zmq_serve(&zo, s, stp, &err);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fbf_engine *e = v5     ? (p5.edc ? fbf_bv5_edc_engine(p5.edc) : NULL)
                    : v2   ? fbf_bv2_client_engine(c)
                    : flux ? fbf_flux_session_engine(fx)
                           : fbf_bv4_session_engine(s);
    if (st.messages)
        fprintf(stderr,
                "fastbf: %lu messages answered in %.6f s (%.2f us each; the first in %.6f s) "
                "of %.6f s served; the rest in %s and waiting for %s\n",
                st.messages, st.handling_s, st.handling_s / (double)st.messages * 1e6,
                st.first_s,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
                v2 ? "the socket" : "ZeroMQ", flux ? "the job manager" : "Batsim");
    if (verbose && rc == 0 && e) {
        /* What the jobs still known cost to hold: the benchmarks read this
         * line (bench/run_case.py). */
        fprintf(stderr,
                "fastbf: memory at the end: %ld KiB resident with %zu jobs waiting and %zu "
                "running, %ld KiB at the start (free pages returned to the system first)\n",
                fbf_memstat_settled_rss_kib(), fbf_engine_nb_waiting(e),
                fbf_engine_nb_running(e), start_kib);
        fbf_policy_counter work[8];
        fbf_counters_print(stderr, "fastbf: policy work:", work,
                           fbf_engine_policy_counters(e, work, sizeof work / sizeof work[0]));
    }
    fbf_bv2_client_destroy(c);
    fbf_flux_session_destroy(fx);
    if (v5) {
        fbf_bv5_process_fini(&p5);
        fbf_submitter_destroy(p5cfg.submitter);
    }
    fbf_bv4_session_destroy(s);
    fbf_submitter_destroy(reg);
    fbf_jsc_server_stop(jsrv);
    fbf_jsc_destroy(jsc);
    if (rc < 0) {
        fprintf(stderr, "fastbf: %s\n", err.text);
        return 1;
    }
    return 0;
}
