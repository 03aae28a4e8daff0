/*
 * fuzz_workload: file contents to the workload reader (tools/lib/workload.h).
 *
 * Feeds: the input, written to a temporary file (in /dev/shm when it can),
 * to fbf_workload_read() twice: with the defaults (walltime from the
 * file), then with the walltime a factor of the runtime, at most 3 jobs,
 * short SWF lines skipped and no job allowed. A first non-blank '{' makes it a Batsim
 * JSON workload, anything else an SWF trace.
 *
 * Asserts: a failure returns NULL with errno set and a non-empty message;
 * a success keeps the header's invariants: at least one job unless
 * allowed, every id unique (found at its own index) and holding '!', every
 * profile index in range, subtime >= 0 and runtime >= 0, both finite,
 * walltime -1 or finite and > 0, res >= 1 for SWF and >= 0 for JSON,
 * profile delays finite and >= 0 (> 0 for JSON). The sanitizers catch
 * the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/lib/workload.h"

static void bad(const char *what, size_t i)
{
    fprintf(stderr, "workload invariant broken: %s (job %zu)\n", what, i);
    abort();
}

static void check(const fbf_workload *wl, const fbf_wl_read_options *o)
{
    if (wl->nb_jobs == 0 && !o->allow_empty)
        bad("no job", 0);
    for (size_t i = 0; i < wl->nb_profiles; i++)
        if (!wl->profiles[i].name || !isfinite(wl->profiles[i].delay) ||
            wl->profiles[i].delay < 0 || (wl->format == FBF_WL_JSON && wl->profiles[i].delay == 0))
            bad("profile delay", i);
    for (size_t i = 0; i < wl->nb_jobs; i++) {
        const fbf_wl_job *j = &wl->jobs[i];
        if (!j->id || !strchr(j->id, '!'))
            bad("id without '!'", i);
        if (fbf_workload_find(wl, j->id) != (int64_t)i)
            bad("id not unique", i);
        if (j->profile >= wl->nb_profiles)
            bad("profile index", i);
        if (!isfinite(j->subtime) || j->subtime < 0 || !isfinite(j->runtime) || j->runtime < 0)
            bad("subtime or runtime", i);
        if (!(j->walltime == -1 || (isfinite(j->walltime) && j->walltime > 0)))
            bad("walltime", i);
        if (wl->format == FBF_WL_SWF && j->res < 1)
            bad("SWF res", i);
        if (wl->format == FBF_WL_JSON && (j->res < 0 || j->res > INT32_MAX))
            bad("JSON res", i);
    }
}

static void read_once(const char *path, const fbf_wl_read_options *o)
{
    fbf_error err;
    fbf_error_clear(&err);
    errno = 0;
    fbf_workload *wl = fbf_workload_read(path, o, &err);
    if (!wl) {
        if (errno == 0 || err.text[0] == '\0') {
            fprintf(stderr, "failure without errno or message: errno %d, \"%s\"\n", errno,
                    err.text);
            abort();
        }
        return;
    }
    check(wl, o);
    fbf_workload_destroy(wl);
}

static char path[64];
static int fd = -1; /* the file, kept open between inputs and rewritten in place */

static void remove_file(void) { remove(path); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fd < 0) {
        /* tmpfs when there is one: a disk file truncated and rewritten is
         * flushed at each close, which was a large part of an input's time. */
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/fbf-fuzz-workload-%ld", dir, (long)getpid());
        if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
            abort();
        atexit(remove_file);
    }
    if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        abort();
    fbf_wl_read_options def = FBF_WL_READ_DEFAULTS;
    read_once(path, &def);
    fbf_wl_read_options few = {FBF_WL_WALLTIME_FACTOR, 1.5, 3, "x", true, true};
    read_once(path, &few);
    return 0;
}
