/*
 * fastbf-replay: plays Batsim's side of the Batsim v4 JSON protocol (or,
 * with --protocol batsim2, of the older v2 text protocol, or with
 * --protocol batsim5 of Batsim 5's batprotocol), without SimGrid, so any
 * Batsim scheduler (fastbf or another) can be driven through a real trace
 * quickly and checked strictly.
 *
 * This file: wiring and exit codes (options.c: the command line). The
 * simulation is in sim.c and message.c, reply checking in validate.c (v2_reply.c),
 * transports in transport_*.c, figures and files in output.c (replay.h
 * says how they fit).
 *
 * Exit codes: 0 the run ended with SIMULATION_ENDS (every job done, or
 * --max-exchanges reached); 2 a bad option or
 * input, a protocol violation by the scheduler, a scheduler that died, hung
 * or failed; 3 a deadlock (jobs wait and nothing can happen); 1 internal
 * (out of memory, outputs not writable).
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <unistd.h>

#include "policies/registry.h"
#include "tools/lib/sched_choice.h"
#include "tools/lib/batsim_files.h"
#include "tools/lib/workload.h"
#include "tools/replay/echo.h"
#include "tools/replay/options.h"
#include "tools/replay/machines.h"
#include "tools/replay/replay.h"
#include "tools/replay/transport.h"
#include "tools/replay/v5.h"

/* --export-batsim DIR: the files of a real Batsim run of the workload. */
static int export_batsim(const fbf_replay_options *o, const fbf_workload *wl, uint32_t nb_res)
{
    char wpath[4096], ppath[4096];
    snprintf(wpath, sizeof wpath, "%s/workload.json", o->export_dir);
    snprintf(ppath, sizeof ppath, "%s/platform.xml", o->export_dir);
    fbf_error err;
    fbf_batsim_files_stats st;
    if (mkdir(o->export_dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "fastbf-replay: --export-batsim: %s: %s\n", o->export_dir,
                strerror(errno));
        return FBF_EXIT_INVALID;
    }
    if (fbf_batsim_write_workload(wl, nb_res, o->protocol == FBF_PROTO_BV5, wpath, &st,
                                  &err) < 0 ||
        fbf_batsim_write_platform(nb_res, ppath, &err) < 0) {
        fprintf(stderr, "fastbf-replay: --export-batsim: %s\n", err.text);
        return FBF_EXIT_INVALID;
    }
    printf("%s: %zu jobs, %zu delay profiles, %u resources", wpath, st.jobs, st.profiles,
           nb_res);
    if (st.zero_runtime)
        printf(" (%zu job%s of run time 0 left out: Batsim refuses a delay of 0 s)",
               st.zero_runtime, st.zero_runtime > 1 ? "s" : "");
    printf("\n%s: %u compute hosts and master_host\n", ppath, nb_res);
    printf("run: batsim -p %s -w %s, with fastbf listening (docs/with-batsim.md)\n", ppath,
           wpath);
    return FBF_EXIT_OK;
}

static int run(const fbf_replay_options *o, int argc, char **argv)
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
    if (o->export_dir) {
        int rc = export_batsim(o, wl, nb_res);
        fbf_workload_destroy(wl);
        return rc;
    }
    char label[512];
    fbf_transport *tr = NULL;
    if (o->protocol == FBF_PROTO_BV2 && fbf_v2_check_ids(wl, &err) < 0) {
        fprintf(stderr, "fastbf-replay: %s: %s\n", wl->path, err.text);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INVALID;
    }
    if (o->protocol == FBF_PROTO_BV2) {
        /* The socket first: its absolute path is the Redis key prefix. A
         * scheduler that goes away must end in a message, not in SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
        tr = fbf_transport_unix(o->scheduler, o->socket, o->timeout_s, &err);
        if (!tr) {
            fprintf(stderr, "fastbf-replay: %s\n", err.text);
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
        snprintf(label, sizeof label, "%s%s", o->scheduler ? "" : "the scheduler connected to ",
                 o->scheduler ? o->scheduler : fbf_transport_unix_path(tr));
    }
    fbf_store *redis = NULL;
    if (o->redis_host[0]) {
        /* A server that goes away must end in a message, not in SIGPIPE. */
        signal(SIGPIPE, SIG_IGN);
        redis = fbf_store_connect(o->redis_host, o->redis_port,
                                      tr ? fbf_transport_unix_path(tr) : o->redis_prefix,
                                      o->timeout_s, &err);
        if (!redis) {
            fprintf(stderr, "fastbf-replay: --redis: %s\n", err.text);
            fbf_transport_destroy(tr);
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
    }
    if (tr) {
        /* batsim2: made above */
    } else if (o->edc_library) {
        snprintf(label, sizeof label, "EDC library %s", o->edc_library);
        tr = fbf_transport_edc_library(o->edc_library, &err);
    } else if (o->inproc) {
        const char *name = o->policy ? o->policy : "easy";
        fbf_engine_config ecfg = {0};
        if (fbf_sched_choice_apply(&o->choice, &ecfg, &name, &err) < 0 ||
            (ecfg.estimate == FBF_ESTIMATE_EXACT && !o->forward_profiles &&
             fbf_errorf(&err, -EINVAL, "--estimate exact reads the delay profile that comes "
                                       "with each submission: add --forward-profiles") < 0)) {
            fprintf(stderr, "fastbf-replay: %s\nTry 'fastbf-replay --help'.\n", err.text);
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
        const fbf_policy_entry *pe = fbf_policy_lookup(name);
        if (!pe) {
            fprintf(stderr, "fastbf-replay: unknown policy '%s'; known:", name);
            for (const fbf_policy_entry *e = fbf_policy_list(); e && e->name; e++)
                fprintf(stderr, " %s", e->name);
            fprintf(stderr, "\n");
            fbf_workload_destroy(wl);
            return FBF_EXIT_INVALID;
        }
        ecfg.policy = pe->ops;
        ecfg.reservation_depth = o->depth ? o->depth : pe->default_depth;
        ecfg.workers = o->workers ? o->workers : 1;
        ecfg.kill_after = o->kill_after;
        fbf_bv4_options bo = {
            .engine = ecfg,
            .log = o->verbose ? stderr : NULL,
            .tag_starts = o->tag_starts,
        };
        char depth[32] = "unlimited", choice[120];
        if (bo.engine.reservation_depth != FBF_DEPTH_UNLIMITED)
            snprintf(depth, sizeof depth, "%lld", (long long)bo.engine.reservation_depth);
        fbf_sched_choice_describe(&ecfg, choice, sizeof choice);
        snprintf(label, sizeof label, "in-process %s (reservation depth %s, %u worker%s%s)",
                 pe->name, depth, bo.engine.workers, bo.engine.workers > 1 ? "s" : "", choice);
        tr = fbf_transport_inproc(&bo, label, &err);
    } else if (o->scheduler) {
        snprintf(label, sizeof label, "%s", o->scheduler);
        tr = fbf_transport_spawn(o->scheduler, o->timeout_s, &err);
    } else {
        snprintf(label, sizeof label, "%s", o->endpoint);
        tr = fbf_transport_connect(o->endpoint, o->timeout_s, &err);
    }
    if (tr && o->protocol == FBF_PROTO_BV5 && o->format_binary)
        tr = fbf_transport_binary(tr, &err);
    if (!tr) {
        fprintf(stderr, "fastbf-replay: %s\n", err.text);
        fbf_store_destroy(redis);
        fbf_workload_destroy(wl);
        return FBF_EXIT_INVALID;
    }
    /* batsim5: what SimulationBeginsEvent tells of this run. */
    char endpoint[160] = "";
    if (!o->edc_library)
        snprintf(endpoint, sizeof endpoint, "%.*s", (int)strcspn(tr->what, " "), tr->what);
    fbf_v5_config v5c = {.format = o->format_binary ? FBF_V5_FORMAT_BINARY : FBF_V5_FORMAT_JSON,
                         .init = o->edc_init ? o->edc_init : "",
                         .init_len = o->edc_init ? strlen(o->edc_init) : 0,
                         .endpoint = endpoint,
                         .export_prefix = o->out ? o->out : "",
                         .argv = (const char *const *)argv,
                         .argc = argc};
    fbf_replay r;
    fbf_replay_config cfg = {.nb_res = nb_res,
                             .v5 = o->protocol == FBF_PROTO_BV5 ? &v5c : NULL,
                             .protocol = o->protocol,
                             .livelock_max = 1e6,
                             .progress = o->progress_lines    ? FBF_PROGRESS_LINES
                                         : o->quiet || !isatty(STDERR_FILENO) ? FBF_PROGRESS_OFF
                                                                             : FBF_PROGRESS_TERMINAL,
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
                             .external_end = o->external_end,
                             .log = o->verbose ? stderr : NULL};
    gzFile record = NULL;
    if (o->record) {
        size_t n = strlen(o->record);
        bool gz = n > 3 && strcmp(o->record + n - 3, ".gz") == 0;
        record = gzopen(o->record, gz ? "wb" : "wT");
        if (!record) {
            fprintf(stderr, "fastbf-replay: --record %s: %s\n", o->record, strerror(errno));
            fbf_transport_destroy(tr);
            fbf_store_destroy(redis);
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
        fbf_store_destroy(redis);
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
    fbf_store_destroy(redis);
    fbf_workload_destroy(wl);
    return rc;
}

int main(int argc, char **argv)
{
    fbf_replay_options o;
    fbf_replay_options_init(&o);
    int rc = fbf_replay_parse_options(argc, argv, &o);
    if (rc >= 0)
        return rc;
    if (o.echo)
        return fbf_echo_bench((size_t)o.echo, 256, stdout);
    return run(&o, argc, argv);
}
