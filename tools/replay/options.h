/*
 * options: fastbf-replay's command line: the help text, and the parsing
 * and cross-checks of every option (main.c wires the run from them).
 */
#ifndef FBF_REPLAY_OPTIONS_H
#define FBF_REPLAY_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "tools/lib/sched_choice.h"
#include "tools/lib/workload.h"
#include "tools/replay/machines.h"
#include "tools/replay/replay.h"

typedef struct fbf_replay_options {
    const char *workload;
    const char *scheduler, *endpoint, *policy, *out;
    bool inproc, quiet, verbose, policy_opts, tag_starts;
    bool progress_lines; /* --progress */
    bool dyn_jobs, dyn_acks, forward_profiles, query_wait, profile_reuse;
    double kill_after;    /* --kill-after with --inproc; 0 = off */
    int64_t depth;        /* 0: the policy's default */
    fbf_sched_choice choice; /* --order, --backfill-order, --estimate, --preset */
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
    fbf_replay_protocol protocol; /* --protocol */
    const char *socket;      /* --socket PATH (batsim2); NULL: a fresh one */
    bool v4_only;            /* an option batsim2 lacks was given (parse only) */
    const char *edc_library; /* --edc-library PATH (batsim5); NULL: a process */
    const char *edc_init;    /* --edc-init STRING (batsim5); NULL: "" */
    bool format_given;       /* --format was given (batsim5 only) */
    bool format_binary;      /* --format binary */
    const char *export_dir;  /* --export-batsim DIR: write Batsim's files, run nothing */
} fbf_replay_options;

/* The defaults, then argv. Returns -1 to go on, or an exit code (help,
 * version, or a bad command line already reported on stderr). */
void fbf_replay_options_init(fbf_replay_options *o);
int fbf_replay_parse_options(int argc, char **argv, fbf_replay_options *o);

#endif
