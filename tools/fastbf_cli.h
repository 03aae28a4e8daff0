/*
 * fastbf_cli: what fastbf's command line asks for, read and checked
 * before anything starts (tools/fastbf_cli.c; the text of --help too).
 *
 * Contract: fbf_cli_parse() fills every field from argv, checks each
 * value and the combinations (an option of another protocol, a pstate
 * twice, a depth for a policy without one), looks the policy up and
 * applies the queue order, backfill order and estimate to `engine`. It
 * returns -1 when the process should run; otherwise the exit status, after
 * printing: 0 for --help or --version (stdout), 2 for a bad command line
 * (one line naming what was wrong, then "Try 'fastbf --help'.", on
 * stderr). Strings point into argv or are static; nothing to free.
 */
#ifndef FBF_FASTBF_CLI_H
#define FBF_FASTBF_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/engine.h"
#include "engine/power.h"
#include "io/flux_session.h"
#include "policies/registry.h"

typedef struct fbf_cli {
    /* the protocol: exactly one of these, batsim4 when none */
    bool v2, v5, flux;
    const fbf_policy_entry *policy;
    fbf_engine_config engine; /* policy, depth, orders, estimate, workers, kills */
    long long depth, workers;
    const char *endpoint;
    bool allow_remote;
    long long max_message; /* 0: the front end's default */
    const char *socket_path, *redis_host;
    long long redis_port;
    fbf_flux_mode flux_mode;
    long long flux_ranks, flux_cores;
    const char *control; /* NULL: no job status and control endpoint */
    bool verbose, stats, tag_starts;
    const char *reg_path; /* --register-workload */
    double pause;         /* --register-pause, 0: none */
    bool skip_short;
    fbf_power_config power;
    bool query_energy, sleep_given, compute_given;
} fbf_cli;

int fbf_cli_parse(fbf_cli *o, int argc, char **argv);

/* Prints "fastbf: " and the line, then the hint to --help; returns 2. */
int fbf_cli_bad_usage(const char *fmt, const char *arg);

#endif
