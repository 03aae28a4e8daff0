/*
 * output: what a finished replay reports.
 *
 * Definitions (also in --help and data/README.md's neighbours):
 *   wait          start - subtime, over jobs that started
 *   bounded slowdown  max(1, (wait + run) / max(run, 10 s)), run = time the
 *                 job actually ran (cut at its walltime or its kill)
 *   makespan      last end - first subtime (first submission to last end;
 *                 0 when no job ran), so traces that start late (KTH's first
 *                 job is at t = 599,850 s) are not charged for the idle start
 *   utilization   sum(res * run) / (nb_res * makespan)
 *   latency       wall time of one exchange (send to reply, or the
 *                 in-process call); p50/p99 are exact nearest-rank
 *                 percentiles (the ceil(p * n)-th smallest) over all samples,
 *                 kept as float seconds (4 bytes per exchange; 24-bit
 *                 mantissa, far finer than the clock's noise)
 *   scheduler / replayer time: the sum of the exchanges / the rest of the
 *                 run's wall time (building messages, validating replies)
 *   exchange rate after the first: (exchanges - 1) over the time from the
 *                 first reply to the last, so that neither the scheduler's
 *                 start (the first exchange waits for it) nor its exit
 *                 counts: the steady rate, comparable to an echo loop's
 * out_jobs.csv and out_schedule.csv: batsim_out.c, as Batsim 4.2.1
 * writes them.
 *   prediction error  |predicted start - actual start| over started jobs
 *                 whose answer was a time (mean and max; "exact" within 1e-6 s)
 *
 * A truncated run (--max-exchanges, jobs still waiting or running at its
 * SIMULATION_ENDS): every figure is over the jobs that are done (completed
 * or killed): makespan from the first of their submissions, jobs/s counts
 * them only, and out_jobs.csv lists them only (with the rejected ones;
 * waiting and running jobs are left out, summary.json counts them); the
 * summary says TRUNCATED.
 *
 * Invariant: nothing here changes the simulation state except sorting the
 * latency samples, which stats_compute does once at the end.
 */
#include "tools/replay/replay.h"

#include <cjson/cJSON.h>

#include "tools/lib/counters.h"
#include "tools/replay/machines.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <sys/stat.h>
#include <time.h>

/* The clock of every wall-time figure (exchanges, the whole run). */
double fbf_replay_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

bool fbf_replay_record_exchange(fbf_replay *r, double a, double b)
{
    if (!fbf_replay_grow((void **)&r->lat, &r->lat_cap, r->nlat + 1, sizeof *r->lat))
        return false;
    r->lat[r->nlat++] = (float)(b - a);
    r->wall_sched += b - a;
    if (r->nlat == 1)
        r->loop_from = b;
    r->loop_to = b;
    return true;
}

bool fbf_replay_record_message(fbf_replay *r, const char *prefix, const char *text,
                               size_t len)
{
    gzFile f = r->cfg.record;
    bool ok = gzputs(f, prefix) >= 0;
    for (size_t from = 0; ok && from < len;) {
        const char *nl = memchr(text + from, '\n', len - from);
        size_t n = nl ? (size_t)(nl - text) - from : len - from;
        ok = (n == 0 || gzwrite(f, text + from, (unsigned)n) == (int)n) &&
             (!nl || gzputs(f, "\\n") >= 0);
        from += n + (nl != NULL);
    }
    return ok && gzputc(f, '\n') >= 0;
}

static int float_cmp(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static double rank(const float *v, size_t n, double p)
{
    if (!n)
        return 0;
    size_t k = (size_t)ceil(p * (double)n);
    if (k < 1)
        k = 1;
    return v[k - 1];
}

void fbf_replay_stats_compute(fbf_replay *r, fbf_replay_stats *st)
{
    memset(st, 0, sizeof *st);
    double first = INFINITY, last = -INFINITY, sum_wait = 0, sum_bsld = 0, area = 0;
    size_t started = 0;
    for (size_t i = 0; i < r->wl->nb_jobs; i++) {
        const fbf_rjob *j = &r->jobs[i];
        const fbf_wl_job *w = &r->wl->jobs[i];
        if (j->state == FBF_RJ_PENDING || (r->truncated && j->state != FBF_RJ_DONE))
            continue;
        if (w->subtime < first)
            first = w->subtime;
        if (j->state != FBF_RJ_DONE)
            continue;
        double wait = j->start - w->subtime, run = j->end - j->start;
        started++;
        sum_wait += wait;
        if (wait > st->max_wait)
            st->max_wait = wait;
        double b = (wait + run) / (run > 10 ? run : 10);
        sum_bsld += b > 1 ? b : 1;
        area += (double)w->res * run;
        if (j->end > last)
            last = j->end;
        if (j->pred == FBF_PRED_VALUE && j->end_kind != FBF_END_FAILED &&
            !(j->end_kind == FBF_END_KILLED && j->nranges == 0)) {
            double e = fabs(j->pred_start - j->start);
            st->pred_n++;
            st->pred_exact += e < 1e-6;
            st->pred_mae += e;
            if (e > st->pred_max_err)
                st->pred_max_err = e;
        }
    }
    if (st->pred_n)
        st->pred_mae /= (double)st->pred_n;
    if (started) {
        st->first_subtime = first;
        st->last_end = last;
        st->makespan = last - first;
        st->mean_wait = sum_wait / (double)started;
        st->mean_bsld = sum_bsld / (double)started;
        if (st->makespan > 0)
            st->utilization = area / ((double)r->cfg.nb_res * st->makespan);
    }
    qsort(r->lat, r->nlat, sizeof *r->lat, float_cmp);
    double sum = 0;
    for (size_t i = 0; i < r->nlat; i++)
        sum += r->lat[i];
    st->exchanges = r->nlat;
    st->lat_p50 = rank(r->lat, r->nlat, 0.50);
    st->lat_p99 = rank(r->lat, r->nlat, 0.99);
    st->lat_max = r->nlat ? r->lat[r->nlat - 1] : 0;
    st->lat_mean = r->nlat ? sum / (double)r->nlat : 0;
    st->loop_rate = r->nlat > 1 && r->loop_to > r->loop_from
                        ? (double)(r->nlat - 1) / (r->loop_to - r->loop_from)
                        : 0;
    size_t jobs = r->truncated ? r->done : r->wl->nb_jobs;
    st->jobs_per_s = r->wall_total > 0 ? (double)jobs / r->wall_total : 0;
}

void fbf_replay_print_summary(const fbf_replay *r, const fbf_replay_stats *st, const char *label,
                              FILE *out)
{
    const fbf_workload *wl = r->wl;
    fprintf(out, "workload     %s (%zu jobs, %u resources)\n", wl->path ? wl->path : wl->name,
            wl->nb_jobs, r->cfg.nb_res);
    fprintf(out, "scheduler    %s\n", label);
    if (r->truncated) {
        fprintf(out, "TRUNCATED    stopped after %zu exchanges: %zu jobs done, %zu waiting, "
                "%zu running", r->cfg.max_exchanges, r->done, r->waiting, r->running);
        if (r->next_sub < r->nb_static)
            fprintf(out, ", %zu not submitted yet", r->nb_static - r->next_sub);
        fprintf(out, "; the figures below are over the %zu done jobs only\n", r->done);
    }
    fprintf(out,
            "jobs         %zu submitted, %zu completed (%zu successfully, %zu at walltime), "
            "%zu killed, %zu rejected, %zu skipped\n",
            r->submitted, r->success + r->walltime_reached, r->success, r->walltime_reached,
            r->killed, r->rejected, fbf_workload_skipped_total(wl));
    for (int k = 0; k < FBF_WL_SKIP_COUNT; k++)
        if (wl->skipped[k])
            fprintf(out, "  skipped    %zu: %s (first at line %zu)\n", wl->skipped[k],
                    fbf_wl_skip_reason(k), wl->first_skipped_line[k]);
    fprintf(out, "makespan     %.0f s (first submission %.0f s, last end %.0f s)\n", st->makespan,
            st->first_subtime, st->last_end);
    fprintf(out, "wait         mean %.1f s, max %.0f s\n", st->mean_wait, st->max_wait);
    fprintf(out, "bounded sld  mean %.3f (tau = 10 s)\n", st->mean_bsld);
    fprintf(out, "utilization  %.4f\n", st->utilization);
    if (r->cfg.dyn_jobs)
        fprintf(out, "registration %zu jobs registered, %zu profiles, %zu re-openings\n",
                r->registered, r->nrprof, r->continues);
    if (r->cfg.query_wait)
        fprintf(out, "predictions  %zu answers (%zu unknown); over %zu started jobs: mean abs "
                "error %.3f s, max %.3f s, %zu exact\n", r->answered, r->answered_unknown,
                st->pred_n, st->pred_mae, st->pred_max_err, st->pred_exact);
    fprintf(out, "exchanges    %zu, latency p50 %.2f us, p99 %.2f us, max %.2f us\n",
            st->exchanges, st->lat_p50 * 1e6, st->lat_p99 * 1e6, st->lat_max * 1e6);
    fprintf(out, "wall time    %.3f s: %.3f s waiting for the scheduler, %.3f s in the replayer "
            "(%.0f jobs/s; %.0f exchanges/s after the first)\n",
            r->wall_total, r->wall_sched, r->wall_total - r->wall_sched, st->jobs_per_s,
            st->loop_rate);
    fbf_counters_print(out, "policy work ", r->sched_work, r->nsched_work);
    if (r->mach)
        fbf_machines_print(r, out);
}

static int write_json(const fbf_replay *r, const fbf_replay_stats *st, const char *label,
                      const char *path, fbf_error *err)
{
    cJSON *o = cJSON_CreateObject();
    cJSON *jobs = cJSON_AddObjectToObject(o, "jobs");
    cJSON *skip = cJSON_AddObjectToObject(o, "skipped");
    cJSON *lat = cJSON_AddObjectToObject(o, "latency_s");
    cJSON *wall = cJSON_AddObjectToObject(o, "wall_s");
    if (!o || !jobs || !skip || !lat || !wall) {
        cJSON_Delete(o);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    cJSON_AddStringToObject(o, "workload", r->wl->path ? r->wl->path : r->wl->name);
    cJSON_AddStringToObject(o, "scheduler", label);
    cJSON_AddNumberToObject(o, "nb_res", r->cfg.nb_res);
    cJSON_AddNumberToObject(jobs, "in_workload", (double)r->wl->nb_jobs);
    cJSON_AddNumberToObject(jobs, "submitted", (double)r->submitted);
    cJSON_AddNumberToObject(jobs, "completed", (double)(r->success + r->walltime_reached));
    cJSON_AddNumberToObject(jobs, "completed_successfully", (double)r->success);
    cJSON_AddNumberToObject(jobs, "walltime_reached", (double)r->walltime_reached);
    cJSON_AddNumberToObject(jobs, "killed", (double)r->killed);
    cJSON_AddNumberToObject(jobs, "rejected", (double)r->rejected);
    cJSON_AddNumberToObject(jobs, "skipped", (double)fbf_workload_skipped_total(r->wl));
    cJSON_AddNumberToObject(jobs, "registered", (double)r->registered);
    cJSON_AddNumberToObject(jobs, "registration_reopenings", (double)r->continues);
    /* waiting, running, not_submitted: 0 unless truncated (--max-exchanges). */
    cJSON_AddNumberToObject(jobs, "done", (double)r->done);
    cJSON_AddNumberToObject(jobs, "waiting", (double)r->waiting);
    cJSON_AddNumberToObject(jobs, "running", (double)r->running);
    cJSON_AddNumberToObject(jobs, "not_submitted", (double)(r->nb_static - r->next_sub));
    cJSON_AddBoolToObject(o, "truncated", r->truncated);
    if (r->truncated)
        cJSON_AddNumberToObject(o, "stopped_after_exchanges", (double)r->cfg.max_exchanges);
    else
        cJSON_AddNullToObject(o, "stopped_after_exchanges");
    if (r->cfg.query_wait) {
        cJSON *q = cJSON_AddObjectToObject(o, "predictions");
        cJSON_AddNumberToObject(q, "answers", (double)r->answered);
        cJSON_AddNumberToObject(q, "unknown", (double)r->answered_unknown);
        cJSON_AddNumberToObject(q, "started_with_value", (double)st->pred_n);
        cJSON_AddNumberToObject(q, "exact", (double)st->pred_exact);
        cJSON_AddNumberToObject(q, "mean_abs_error_s", st->pred_mae);
        cJSON_AddNumberToObject(q, "max_abs_error_s", st->pred_max_err);
    }
    for (int k = 0; k < FBF_WL_SKIP_COUNT; k++)
        cJSON_AddNumberToObject(skip, fbf_wl_skip_reason(k), (double)r->wl->skipped[k]);
    cJSON_AddNumberToObject(o, "makespan", st->makespan);
    cJSON_AddNumberToObject(o, "first_subtime", st->first_subtime);
    cJSON_AddNumberToObject(o, "last_end", st->last_end);
    cJSON_AddNumberToObject(o, "mean_wait", st->mean_wait);
    cJSON_AddNumberToObject(o, "max_wait", st->max_wait);
    cJSON_AddNumberToObject(o, "mean_bounded_slowdown", st->mean_bsld);
    cJSON_AddNumberToObject(o, "utilization", st->utilization);
    cJSON_AddNumberToObject(o, "exchanges", (double)st->exchanges);
    cJSON_AddNumberToObject(lat, "p50", st->lat_p50);
    cJSON_AddNumberToObject(lat, "p99", st->lat_p99);
    cJSON_AddNumberToObject(lat, "max", st->lat_max);
    cJSON_AddNumberToObject(lat, "mean", st->lat_mean);
    cJSON_AddNumberToObject(wall, "total", r->wall_total);
    cJSON_AddNumberToObject(wall, "scheduler", r->wall_sched);
    cJSON_AddNumberToObject(wall, "replayer", r->wall_total - r->wall_sched);
    cJSON_AddNumberToObject(o, "jobs_per_s", st->jobs_per_s);
    cJSON_AddNumberToObject(o, "exchanges_per_s_after_first", st->loop_rate);
    if (r->nsched_work) {
        cJSON *work = cJSON_AddObjectToObject(o, "scheduler_work");
        for (size_t i = 0; work && i < r->nsched_work; i++)
            cJSON_AddNumberToObject(work, r->sched_work[i].name, (double)r->sched_work[i].value);
    }
    if (r->mach)
        fbf_machines_json(r, o);
    char *text = cJSON_Print(o);
    cJSON_Delete(o);
    if (!text)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    FILE *f = fopen(path, "w");
    int rc = 0;
    if (!f) {
        rc = fbf_errorf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
    } else {
        fputs(text, f);
        fputc('\n', f);
        if (ferror(f) | (fclose(f) != 0))
            rc = fbf_errorf(err, -EIO, "error writing '%s'", path);
    }
    cJSON_free(text);
    return rc;
}

int fbf_replay_write_outputs(const fbf_replay *r, const fbf_replay_stats *st, const char *label,
                             const char *dir, fbf_error *err)
{
    if (mkdir(dir, 0777) < 0 && errno != EEXIST)
        return fbf_errorf(err, -errno, "cannot create '%s': %s", dir, strerror(errno));
    size_t n = strlen(dir) + 32;
    char *path = malloc(n);
    if (!path)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    char *sched = malloc(n);
    if (!sched) {
        free(path);
        return fbf_errorf(err, -ENOMEM, "out of memory");
    }
    snprintf(path, n, "%s/out_jobs.csv", dir);
    snprintf(sched, n, "%s/out_schedule.csv", dir);
    int rc = fbf_replay_write_batsim_files(r, path, sched, err);
    free(sched);
    if (!rc) {
        snprintf(path, n, "%s/summary.json", dir);
        rc = write_json(r, st, label, path, err);
    }
    free(path);
    return rc;
}

void fbf_replay_progress(fbf_replay *r, double wall_now, bool last)
{
    bool lines = r->cfg.progress == FBF_PROGRESS_LINES;
    if (r->progress_ended ||
        (!last && wall_now - r->progress_last < (lines ? FBF_PROGRESS_PERIOD_S : 0.5)))
        return;
    r->progress_last = wall_now;
    char t[40];
    fbf_jbuf_fmt(t, sizeof t, r->clock);
    size_t done = r->done + r->rejected, all = r->wl->nb_jobs;
    double elapsed = wall_now - r->progress_t0;
    double pct = all ? 100.0 * (double)done / (double)all : 100.0;
    char left[48] = "";
    if (!last && done > 0 && done < all && elapsed >= 1)
        snprintf(left, sizeof left, ", about %.0f s left",
                 elapsed * (double)(all - done) / (double)done);
    fprintf(stderr, "%sfastbf-replay: %5.1f%% (%zu/%zu jobs done), t=%s s, %zu running, %zu "
            "waiting, %.0f s%s%s", lines ? "" : "\r\033[K", pct, done, all, t, r->running,
            r->waiting, elapsed, left, lines || last ? "\n" : "");
    if (last)
        r->progress_ended = true;
    fflush(stderr);
}
