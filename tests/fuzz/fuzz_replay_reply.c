/*
 * fuzz_replay_reply: scheduler replies to fastbf-replay.
 *
 * Feeds: a whole fastbf-replay run (fbf_replay_run) of a small in-memory
 * workload (4 jobs on 4 resources) through a scripted transport whose
 * replies are the input: byte 0 picks the options (bit 0 dynamic jobs,
 * bit 1 acknowledgements, bit 2 waiting-time queries, bit 3 --energy,
 * bit 4 profiles forwarded, bit 5 --max-exchanges 3, bit 6
 * --external-events-end 7.5, bit 7 the summary and output files), the
 * rest is split on 0x01 into the replies, in order; each reply is handed
 * over in a buffer of exactly its length (no NUL), so a read past its end
 * is caught. When the replies run out the transport fails, as a dead
 * scheduler does.
 *
 * Asserts: the run stops on its own (every exchange consumes a reply);
 * any exit code but FBF_EXIT_OK comes with a non-empty r.err; every
 * request the replayer builds is a JSON object with a number "now" and
 * an "events" array, whatever job ids and metadata the replies carried;
 * the job counters match the jobs' states. The sanitizers catch the rest.
 * FBF_FUZZ_VERBOSE=1 prints each request and how the run ended.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/fuzz/batsim_envelope.h"
#include "tools/lib/workload.h"
#include "tools/replay/machines.h"
#include "tools/replay/replay.h"
#include "tools/replay/transport.h"

typedef struct script_tr {
    fbf_transport base;
    const uint8_t *data;
    size_t size, at;
    bool done;
    char *reply;
} script_tr;

static void check_request(const char *req, size_t len)
{
    fbf_fuzz_check_envelope("request", req, len);
}

static int script_exchange(fbf_transport *base, const char *req, size_t len,
                           const char **reply, size_t *reply_len, fbf_error *err)
{
    script_tr *t = (script_tr *)base;
    check_request(req, len);
    if (getenv("FBF_FUZZ_VERBOSE"))
        fprintf(stderr, "request %.*s\n", (int)len, req);
    free(t->reply);
    t->reply = NULL;
    if (t->done)
        return fbf_errorf(err, -EPROTO, "the scripted scheduler has no more replies");
    const uint8_t *p = t->data + t->at;
    const uint8_t *sep = t->size > t->at ? memchr(p, 0x01, t->size - t->at) : NULL;
    size_t n = sep ? (size_t)(sep - p) : t->size - t->at;
    t->at += n + 1;
    t->done = !sep;
    t->reply = malloc(n ? n : 1);
    if (!t->reply)
        abort();
    memcpy(t->reply, p, n);
    *reply = t->reply;
    *reply_len = n;
    return 0;
}

static void script_destroy(fbf_transport *base)
{
    script_tr *t = (script_tr *)base;
    free(t->reply);
}

static const fbf_transport_ops script_ops = {script_exchange, NULL, script_destroy, NULL};

static fbf_workload *small_workload(void)
{
    fbf_error err;
    fbf_workload *wl = fbf_workload_create("w0", &err);
    if (!wl || fbf_workload_add_job(wl, "1", 0, 10, 20, 2, &err) ||
        fbf_workload_add_job(wl, "2", 0, 5, -1, 4, &err) ||
        fbf_workload_add_job(wl, "3", 5, 30, 10, 1, &err) ||
        fbf_workload_add_job(wl, "4", 5, 0, 1, 3, &err))
        abort();
    return wl;
}

/* Where the output files go (bit 7), removed with them at exit. */
static char dir[64];

static void remove_dir(void)
{
    static const char *const files[] = {"out_jobs.csv", "out_schedule.csv", "summary.json"};
    char p[128];
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        remove(p);
    }
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    fbf_energy_config ecfg = fbf_energy_config_default();
    ecfg.off_delay = 2;
    ecfg.on_delay = 3;
    fbf_replay_config cfg = {.nb_res = 4,
                             .livelock_max = 5,
                             .dyn_jobs = mode & 1,
                             .dyn_acks = mode & 2,
                             .query_wait = mode & 4,
                             .energy = (mode & 8) ? &ecfg : NULL,
                             .forward_profiles = mode & 16,
                             .max_exchanges = (mode & 32) ? 3 : 0,
                             .external_end = (mode & 64) ? 7.5 : NAN};
    fbf_workload *wl = small_workload();
    script_tr tr = {.base = {.ops = &script_ops, .what = "scripted"},
                    .data = data + 1, .size = size - 1};
    fbf_replay r;
    fbf_error err;
    if (fbf_replay_init(&r, wl, &cfg, &err) != 0)
        abort();
    FILE *sink = fopen("/dev/null", "w");
    int rc = fbf_replay_run(&r, &tr.base, sink);
    if (getenv("FBF_FUZZ_VERBOSE"))
        fprintf(stderr, "exit %d: %s\n", rc, r.err.text);
    if (rc != FBF_EXIT_OK && r.err.text[0] == '\0') {
        fprintf(stderr, "exit %d without a message\n", rc);
        abort();
    }
    size_t count[5] = {0};
    for (size_t i = 0; i < r.wl->nb_jobs; i++)
        count[r.jobs[i].state]++;
    if (count[FBF_RJ_WAITING] != r.waiting || count[FBF_RJ_RUNNING] != r.running ||
        count[FBF_RJ_DONE] != r.done || count[FBF_RJ_REJECTED] != r.rejected) {
        fprintf(stderr, "counters: %zu/%zu waiting, %zu/%zu running, %zu/%zu done, %zu/%zu "
                "rejected (jobs in the state / counter)\n", count[FBF_RJ_WAITING], r.waiting,
                count[FBF_RJ_RUNNING], r.running, count[FBF_RJ_DONE], r.done,
                count[FBF_RJ_REJECTED], r.rejected);
        abort();
    }
    /* Each out_jobs.csv row is noted once, for a job that ended. */
    if (r.nrows > r.done + r.rejected) {
        fprintf(stderr, "%zu rows for %zu ended jobs\n", r.nrows, r.done + r.rejected);
        abort();
    }
    for (size_t i = 0; i < r.nrows; i++)
        if (r.jobs[r.rows[i]].state != FBF_RJ_DONE && r.jobs[r.rows[i]].state != FBF_RJ_REJECTED) {
            fprintf(stderr, "row %zu: job %u has not ended\n", i, r.rows[i]);
            abort();
        }
    if ((mode & 128) && (rc == FBF_EXIT_OK || rc == FBF_EXIT_DEADLOCK)) {
        fbf_replay_stats st;
        fbf_replay_stats_compute(&r, &st);
        fbf_replay_print_summary(&r, &st, "scripted", sink);
        if (!dir[0]) {
            snprintf(dir, sizeof dir, "/tmp/fbf-fuzz-replay-%ld", (long)getpid());
            mkdir(dir, 0700);
            atexit(remove_dir);
        }
        if (fbf_replay_write_outputs(&r, &st, "scripted", dir, &err) != 0 && !err.text[0])
            abort();
    }
    fclose(sink);
    tr.base.ops->destroy(&tr.base);
    fbf_replay_fini(&r);
    fbf_workload_destroy(wl);
    return 0;
}
