/*
 * batsim_files: a workload as the two files a real Batsim run needs
 * (`batsim -p platform.xml -w workload.json`), so that the trace
 * fastbf-replay plays can be run by Batsim itself against fastbf.
 *
 *   workload.json  Batsim's JSON workload: {"nb_res", "jobs": [{"id",
 *                  "subtime", "walltime" (absent when none), "res",
 *                  "profile"}], "profiles": {name: {"type": "delay",
 *                  "delay"}}} ("type": "DelayProfile" for Batsim 5): the jobs in file order, ids without the
 *                  workload prefix (Batsim adds the file's own), one delay
 *                  profile per distinct run time, numbers written so that
 *                  they read back exactly. Batsim 4.2.1 refuses a delay of
 *                  0 s ("non-strictly-positive 'delay' field"): jobs of run
 *                  time 0 are left out and counted.
 *   platform.xml   a SimGrid platform (version 4.1) of nb_res compute hosts
 *                  r0 .. r<nb_res - 1> in one cluster and a master host
 *                  (property role=master) in another, joined by a backbone,
 *                  as Batsim's own cluster platforms are laid out. Delay
 *                  profiles use no network, so speeds and links do not
 *                  change any time.
 *
 * Errors: -errno with one line naming the file; -EINVAL for nb_res 0 or a
 * job of res outside [1, nb_res] (Batsim would load it; fastbf would
 * reject it, and such a file belongs to neither).
 */
#ifndef FBF_BATSIM_FILES_H
#define FBF_BATSIM_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/error.h"
#include "tools/lib/workload.h"

typedef struct fbf_batsim_files_stats {
    size_t jobs, profiles;
    size_t zero_runtime; /* jobs left out: run time 0 */
} fbf_batsim_files_stats;

/* batsim5: the profile type as Batsim 5 names it. */
int fbf_batsim_write_workload(const fbf_workload *wl, uint32_t nb_res, bool batsim5,
                              const char *path, fbf_batsim_files_stats *st, fbf_error *err);
int fbf_batsim_write_platform(uint32_t nb_res, const char *path, fbf_error *err);

#endif
