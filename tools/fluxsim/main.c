/*
 * fastbf-fluxsim: a Flux job manager for RFC 27 schedulers (fluxsim.h).
 *
 * Exit codes: 0 after sim.end is answered, 1 when the scheduler breaks
 * RFC 27 or the simulation's framing (one line says what), dies, or does
 * not answer within --timeout; 2 for a bad command line, workload or
 * Redis server; 3 for a deadlock (jobs wait and nothing can happen).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/fluxsim/fluxsim.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fastbf-fluxsim WORKLOAD (--scheduler CMD | --endpoint URL)\n"
            "                      --redis HOST:PORT [--ranks N --cores C] [--out DIR]\n"
            "                      [--max-jobs N]\n"
            "                      [--seed S] [--cancel P] [--reprioritize P] [--priority P]\n"
            "                      [--kill-at K] [--timeout S] [--verbose] [--quiet]\n"
            "       fastbf-fluxsim --help | --version\n"
            "\n"
            "Plays Flux's job manager against an RFC 27 scheduler (fastbf --protocol flux)\n"
            "from an SWF or Batsim JSON workload, with a simulated clock: job ids,\n"
            "jobspecs and R in Redis under RFC 16's keys, sched.alloc as jobs enter\n"
            "SCHED state, sched.free when a job's run time has passed, and every\n"
            "response checked against RFC 27 (docs/flux.md).\n"
            "\n"
            "  --scheduler CMD   start the scheduler: CMD's {endpoint} (else an appended\n"
            "                    --endpoint) becomes an ipc:// endpoint of a temporary folder\n"
            "  --endpoint URL    connect to a scheduler already listening there\n"
            "  --redis HOST:PORT the Redis server both sides use (required)\n"
            "  --ranks N, --cores C  the platform, N ranks of C cores (default: the\n"
            "                    workload's size as ranks of one core)\n"
            "  --out DIR         write DIR/out_jobs.csv and DIR/summary.json\n"
            "  --max-jobs N      the workload's first N jobs only (as fastbf-replay's)\n"
            "  --seed S          the seed of the random cancels and priority changes\n"
            "  --cancel P        cancel each job with probability P, at a random time\n"
            "                    within 1.5 x its walltime after its submission\n"
            "  --reprioritize P  change each job's priority with probability P, at a\n"
            "                    random time within its walltime after its submission\n"
            "  --priority P      every job's priority at submission (default 16)\n"
            "  --kill-at K       kill the scheduler (SIGKILL) once the K-th instant's\n"
            "                    requests are sent, start it again and recover (with\n"
            "                    --scheduler)\n"
            "  --timeout S       how long the scheduler may stay silent (default 600)\n"
            "  --verbose         log the job manager's steps on stderr\n"
            "  --quiet           no summary on stdout\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "fastbf-fluxsim: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'fastbf-fluxsim --help'.\n");
    return FS_USAGE;
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v > max)
        return false;
    *out = v;
    return true;
}

static bool parse_prob(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= 0 && v <= 1))
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"scheduler", required_argument, NULL, 's'}, {"endpoint", required_argument, NULL, 'e'},
        {"redis", required_argument, NULL, 'r'},     {"ranks", required_argument, NULL, 'N'},
        {"cores", required_argument, NULL, 'C'},     {"out", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 'S'},      {"cancel", required_argument, NULL, 'c'},
        {"reprioritize", required_argument, NULL, 'p'},
        {"priority", required_argument, NULL, 'P'},  {"kill-at", required_argument, NULL, 'k'},
        {"timeout", required_argument, NULL, 't'},   {"verbose", no_argument, NULL, 'v'},
        {"quiet", no_argument, NULL, 'q'},           {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},         {"max-jobs", required_argument, NULL, 'm'},
        {NULL, 0, NULL, 0},
    };
    fluxsim fs = {.o = {.base_priority = 16, .kill_at = -1, .timeout_s = 600, .max_jobs = -1}};
    const char *redis = NULL;
    uint64_t v;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, ":", opts, NULL)) != -1;) {
        switch (c) {
        case 's': fs.o.scheduler = optarg; break;
        case 'e': fs.o.endpoint = optarg; break;
        case 'r': redis = optarg; break;
        case 'N':
        case 'C':
            if (!parse_u64(optarg, 1u << 31, &v) || v == 0)
                return bad_usage("--ranks/--cores: '%s' is not a number from 1 to 2^31", optarg);
            *(c == 'N' ? &fs.o.ranks : &fs.o.cores) = (uint32_t)v;
            break;
        case 'o': fs.o.out_dir = optarg; break;
        case 'S':
            if (!parse_u64(optarg, UINT64_MAX, &fs.o.seed))
                return bad_usage("--seed: '%s' is not a number", optarg);
            break;
        case 'c':
        case 'p':
            if (!parse_prob(optarg, c == 'c' ? &fs.o.cancel_p : &fs.o.prio_p))
                return bad_usage("--cancel/--reprioritize: '%s' is not a probability", optarg);
            break;
        case 'P':
            if (!parse_u64(optarg, UINT32_MAX, &v))
                return bad_usage("--priority: '%s' is not a number from 0 to 4294967295",
                                 optarg);
            fs.o.base_priority = (uint32_t)v;
            break;
        case 'k':
            if (!parse_u64(optarg, 1ull << 40, &v) || v == 0)
                return bad_usage("--kill-at: '%s' is not an instant number >= 1", optarg);
            fs.o.kill_at = (long)v;
            break;
        case 't': {
            char *end;
            errno = 0;
            fs.o.timeout_s = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(fs.o.timeout_s > 0) || isinf(fs.o.timeout_s))
                return bad_usage("--timeout: '%s' is not a number of seconds > 0", optarg);
            break;
        }
        case 'm':
            if (!parse_u64(optarg, INT64_MAX, &v) || v == 0)
                return bad_usage("--max-jobs: '%s' is not a number >= 1", optarg);
            fs.o.max_jobs = (int64_t)v;
            break;
        case 'v': fs.o.verbose = true; break;
        case 'q': fs.o.quiet = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fastbf-fluxsim %s\n", FBF_VERSION); return 0;
        case ':': return bad_usage("option '%s' needs a value", argv[optind - 1]);
        default: return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return bad_usage("%s", optind < argc ? "one workload, please" : "a workload is needed");
    fs.o.workload = argv[optind];
    if (!fs.o.scheduler == !fs.o.endpoint)
        return bad_usage("%s", "give --scheduler CMD or --endpoint URL (one of them)");
    if (fs.o.kill_at > 0 && !fs.o.scheduler)
        return bad_usage("%s", "--kill-at needs --scheduler (a scheduler it started)");
    if (!redis)
        return bad_usage("%s", "--redis HOST:PORT is needed: the job data lives there");
    const char *colon = strrchr(redis, ':');
    char host[256];
    if (!colon || colon == redis || (size_t)(colon - redis) >= sizeof host ||
        !parse_u64(colon + 1, 65535, &v) || v == 0)
        return bad_usage("--redis: '%s' is not HOST:PORT", redis);
    memcpy(host, redis, (size_t)(colon - redis));
    host[colon - redis] = '\0';
    fs.o.redis_host = host;
    fs.o.redis_port = (int)v;
    if (!fs.o.ranks != !fs.o.cores)
        return bad_usage("%s", "--ranks and --cores go together");

    signal(SIGPIPE, SIG_IGN);
    fbf_error err = {{0}};
    int status = FS_OK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = fs_setup(&fs, &err);
    if (rc < 0) {
        fprintf(stderr, "fastbf-fluxsim: %s\n", err.text);
        fs_fini(&fs);
        return FS_USAGE;
    }
    rc = fs_run(&fs, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fs.wall_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    const char *why = NULL;
    if (rc < 0) {
        status = rc == -EDEADLK ? FS_DEADLOCK : FS_SCHED;
        why = err.text;
        fprintf(stderr, "fastbf-fluxsim: t=%.6f: %s\n", fs.now, err.text);
    }
    if (rc == 0 && fs.spawned && fbf_child_finish(&fs.child, "sim.end", &err) < 0) {
        status = FS_SCHED;
        why = err.text;
        fprintf(stderr, "fastbf-fluxsim: %s\n", err.text);
    }
    fs_wire_stop(&fs);
    fbf_error werr;
    if (fs_write_outputs(&fs, status, why, &werr) < 0) {
        fprintf(stderr, "fastbf-fluxsim: %s\n", werr.text);
        status = status ? status : FS_USAGE;
    }
    if (!fs.o.quiet)
        fs_print_summary(&fs, stdout, status, why);
    fs_fini(&fs);
    return status;
}
