/*
 * batsim_out: the two files Batsim 4.2.1 writes at the end of a run,
 * out_jobs.csv and out_schedule.csv, as its JobsTracer (src/export.cpp)
 * writes them, so that a replay's files can be read, diffed and plotted
 * like Batsim's.
 *
 * out_jobs.csv: one row per job that ended (completed, killed or
 * rejected), in the order Batsim writes them: a completion when its
 * JOB_COMPLETED is sent, a kill when its JOB_KILLED is, a rejection at
 * its decision's time; rows are then ordered by that time (a rejection
 * stamped past completions that come before it follows them), ties in
 * the order they happened. Columns and numbers as Batsim's: times "%f" of
 * Batsim's long double arithmetic (finish = start + run time, turnaround
 * = start + run time - submission, stretch = turnaround / run time), a
 * run time of 0 written as Batsim's 1e-5 s (it puts that epsilon instead),
 * allocated_resources "0-3 8", consumed_energy -1.000000 without --energy,
 * metadata always between double quotes and never escaped (Batsim refuses
 * a double quote in it). A rejected job has success 0, final_state
 * REJECTED and empty time, allocation and energy columns. workload_name is
 * the job's workload, its id's prefix. One deviation: a job id, workload
 * or profile name holding a comma, a double quote or a line break is
 * quoted as CSV wants, where Batsim writes it raw and shifts the columns. Under --query-wait
 * one column follows Batsim's: predicted_waiting_time (now + estimate -
 * subtime; -1 when the answer was -1, empty when nothing was asked).
 *
 * out_schedule.csv: Batsim's 26 keys in its order (sorted by name) on one
 * line, their values on the next, computed as Batsim computes them over
 * the rows above: nb_jobs counts every row (rejected ones too) and divides
 * every mean; nb_jobs_killed counts every finished job that did not
 * succeed (walltime reached included); makespan is the latest finish
 * time (not minus the first submission); slowdown is turnaround / run
 * time. time_<state> sums, over machines, the intervals each machine has
 * left (the state it ends in is not counted, as in Batsim), from job
 * starts and ends and, with --energy, switches. consumed_joules is the
 * energy at the last job end minus the energy at the first submission,
 * 0.000000 without --energy (Batsim's -1 - -1). scheduling_time and
 * simulation_time are this replay's wall-clock seconds spent waiting for
 * the scheduler and in the whole run; batsim_version is "fastbf-replay"
 * and its version. A mean over no job is -nan, as Batsim prints 0.0 / 0
 * on x86-64.
 *
 * A truncated run (--max-exchanges) lists its ended jobs only.
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/replay/machines.h"

#ifndef FBF_VERSION
#define FBF_VERSION "dev"
#endif

void fbf_replay_note_row(fbf_replay *r, uint32_t job)
{
    fbf_rjob *j = &r->jobs[job];
    if (j->flags & FBF_RJF_ROW)
        return;
    if (!fbf_replay_grow((void **)&r->rows, &r->rows_cap, r->nrows + 1, sizeof *r->rows)) {
        r->oom = true;
        return;
    }
    r->rows[r->nrows++] = job;
    j->flags |= FBF_RJF_ROW;
}

/* ---------- the rows' order ---------- */

typedef struct row {
    double t;   /* when Batsim writes it */
    size_t seq; /* the order it was noted in */
    uint32_t job;
} row;

static int row_cmp(const void *a, const void *b)
{
    const row *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The ended jobs in Batsim's order; *n of them. A job ended but not noted
 * (a kill whose JOB_KILLED a truncated run never sent) comes at its time. */
static row *ordered_rows(const fbf_replay *r, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < r->wl->nb_jobs; i++)
        total += r->jobs[i].state == FBF_RJ_DONE || r->jobs[i].state == FBF_RJ_REJECTED;
    row *v = malloc((total ? total : 1) * sizeof *v);
    if (!v)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < r->nrows; i++, k++)
        v[k] = (row){r->jobs[r->rows[i]].end, k, r->rows[i]};
    for (size_t i = 0; i < r->wl->nb_jobs && k < total; i++) {
        const fbf_rjob *j = &r->jobs[i];
        if ((j->state == FBF_RJ_DONE || j->state == FBF_RJ_REJECTED) &&
            !(j->flags & FBF_RJF_ROW)) {
            v[k] = (row){j->end, k, (uint32_t)i};
            k++;
        }
    }
    qsort(v, k, sizeof *v, row_cmp);
    *n = k;
    return v;
}

/* ---------- out_jobs.csv ---------- */

/* A CSV field of n bytes, quoted only when it must be. */
static void csv_textn(FILE *f, const char *s, size_t n)
{
    bool quote = false;
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
    if (!quote) {
        fwrite(s, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            fputc('"', f);
        fputc(s[i], f);
    }
    fputc('"', f);
}

/* A job's times as Batsim holds them (long double, src/jobs.hpp). */
typedef struct times {
    long double sub, start, run; /* run: Batsim's runtime, 1e-5 for 0 */
} times;

static times job_times(const fbf_replay *r, uint32_t i)
{
    const fbf_rjob *j = &r->jobs[i];
    times t = {r->wl->jobs[i].subtime, j->start, (long double)j->end - (long double)j->start};
    if (t.run == 0)
        t.run = 1e-5L; /* src/jobs_execution.cpp: "computed in null time" */
    return t;
}

static void write_row(FILE *f, const fbf_replay *r, uint32_t i, fbf_jbuf *alloc)
{
    static const char *const states[] = {"", "COMPLETED_SUCCESSFULLY",
                                         "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED",
                                         "COMPLETED_FAILED"};
    const fbf_rjob *j = &r->jobs[i];
    const fbf_wl_job *w = &r->wl->jobs[i];
    const char *bang = strchr(w->id, '!');
    csv_textn(f, bang + 1, strlen(bang + 1));
    fputc(',', f);
    csv_textn(f, w->id, (size_t)(bang - w->id));
    fputc(',', f);
    const char *prof = r->wl->profiles[w->profile].name;
    csv_textn(f, prof, strlen(prof));
    fprintf(f, ",%f,%lld,%f,", w->subtime, (long long)w->res, w->walltime);
    if (j->state == FBF_RJ_REJECTED) {
        fprintf(f, "0,REJECTED,,,,,,,,,\"%s\"", r->text + j->meta);
    } else {
        times t = job_times(r, i);
        fprintf(f, "%d,%s,%f,%f,%f,%f,%f,%f,", j->end_kind == FBF_END_SUCCESS,
                states[j->end_kind], (double)t.start, (double)t.run, (double)(t.start + t.run),
                (double)(t.start - t.sub), (double)(t.start + t.run - t.sub),
                (double)((t.start + t.run - t.sub) / t.run));
        fbf_jbuf_reset(alloc);
        fbf_replay_alloc_text(r, i, alloc);
        fprintf(f, "%s,%f,\"%s\"", alloc->p ? alloc->p : "",
                r->mach ? fbf_machines_job_energy(r, i) : -1.0, r->text + j->meta);
    }
    if (r->cfg.query_wait && j->pred == FBF_PRED_VALUE)
        fprintf(f, ",%f", j->pred_start - w->subtime);
    else if (r->cfg.query_wait)
        fputs(j->pred == FBF_PRED_UNKNOWN ? ",-1" : ",", f);
    fputc('\n', f);
}

static int write_jobs(const fbf_replay *r, const row *rows, size_t n, const char *path,
                      fbf_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return fbf_errorf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
    fputs("job_id,workload_name,profile,submission_time,requested_number_of_resources,"
          "requested_time,success,final_state,starting_time,execution_time,finish_time,"
          "waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata",
          f);
    fputs(r->cfg.query_wait ? ",predicted_waiting_time\n" : "\n", f);
    fbf_jbuf alloc = {0};
    for (size_t k = 0; k < n; k++)
        write_row(f, r, rows[k].job, &alloc);
    fbf_jbuf_fini(&alloc);
    if (ferror(f) | (fclose(f) != 0))
        return fbf_errorf(err, -EIO, "error writing '%s'", path);
    return 0;
}

/* ---------- out_schedule.csv ---------- */

/* JobsTracer::write_job's counters and sums (src/export.cpp). */
typedef struct sched {
    int nb, finished, success, killed, rejected;
    long double makespan, sum_wait, sum_turn, sum_sld, max_wait, max_turn, max_sld;
    long double computing;   /* machine-seconds of the jobs that ended */
    double last_end;         /* the last job end (-1: none) */
} sched;

static void add_row(const fbf_replay *r, uint32_t i, sched *s)
{
    const fbf_rjob *j = &r->jobs[i];
    s->nb++;
    if (j->state == FBF_RJ_REJECTED) {
        s->rejected++;
        return;
    }
    s->finished++;
    if (j->end_kind == FBF_END_SUCCESS)
        s->success++;
    else
        s->killed++;
    times t = job_times(r, i);
    long double wait = t.start - t.sub, completion = t.start + t.run;
    long double turn = completion - t.sub, sld = turn / t.run;
    s->sum_wait += wait;
    s->sum_turn += turn;
    s->sum_sld += sld;
    if (completion > s->makespan)
        s->makespan = completion;
    if (wait > s->max_wait)
        s->max_wait = wait;
    if (turn > s->max_turn)
        s->max_turn = turn;
    if (sld > s->max_sld)
        s->max_sld = sld;
    uint32_t machines = 0;
    for (uint32_t g = 0; g < j->nranges; g++)
        machines += r->ranges[j->ranges + g].hi - r->ranges[j->ranges + g].lo + 1;
    /* Machines count the clock's run time, without the epsilon. */
    s->computing += machines * ((long double)j->end - (long double)j->start);
    s->last_end = j->end;
}

/* Batsim prints a double with std::to_string, "%f"; a mean over no job
 * is its 0.0 / 0, which x86-64 makes a negative NaN. */
static void put_mean(FILE *f, long double sum, int n)
{
    if (n)
        fprintf(f, ",%f", (double)sum / n);
    else
        fputs(",-nan", f);
}

/* Sum over machines of the time of each one's last state change: every
 * state's closed intervals added up. */
static long double last_changes(const fbf_replay *r, const double *since, fbf_error *err,
                                int *rc)
{
    double *lc = calloc(r->cfg.nb_res, sizeof *lc);
    if (!lc) {
        *rc = fbf_errorf(err, -ENOMEM, "out of memory");
        return 0;
    }
    if (since)
        memcpy(lc, since, r->cfg.nb_res * sizeof *lc);
    for (size_t i = 0; i < r->wl->nb_jobs; i++) {
        const fbf_rjob *j = &r->jobs[i];
        if (j->state != FBF_RJ_DONE && j->state != FBF_RJ_RUNNING)
            continue;
        double t = j->state == FBF_RJ_DONE ? j->end : j->start;
        for (uint32_t g = 0; g < j->nranges; g++)
            for (uint32_t id = r->ranges[j->ranges + g].lo; id <= r->ranges[j->ranges + g].hi;
                 id++)
                if (t > lc[id])
                    lc[id] = t;
    }
    long double sum = 0;
    for (uint32_t id = 0; id < r->cfg.nb_res; id++)
        sum += lc[id];
    free(lc);
    return sum;
}

static int write_schedule(const fbf_replay *r, const row *rows, size_t n, const char *path,
                          fbf_error *err)
{
    sched s = {.last_end = -1};
    for (size_t k = 0; k < n; k++)
        add_row(r, rows[k].job, &s);
    fbf_machines_figures m = {0};
    long double joules = 0; /* Batsim's -1 - -1 without energy */
    if (r->mach) {
        fbf_machines_batsim_figures(r, &m);
        long double first = r->next_sub ? fbf_machines_energy_at(
                                              r, r->wl->jobs[r->order[0]].subtime)
                                        : -1;
        long double last = s.last_end >= 0 ? fbf_machines_energy_at(r, s.last_end) : -1;
        joules = last - first;
    }
    int rc = 0;
    long double closed = last_changes(r, m.since, err, &rc);
    if (rc)
        return rc;
    long double idle = closed - s.computing - m.sleeping - m.switching_on - m.switching_off;
    FILE *f = fopen(path, "w");
    if (!f)
        return fbf_errorf(err, -errno, "cannot write '%s': %s", path, strerror(errno));
    fputs("batsim_version,consumed_joules,makespan,max_slowdown,max_turnaround_time,"
          "max_waiting_time,mean_slowdown,mean_turnaround_time,mean_waiting_time,"
          "nb_computing_machines,nb_grouped_switches,nb_jobs,nb_jobs_finished,nb_jobs_killed,"
          "nb_jobs_rejected,nb_jobs_success,nb_machine_switches,scheduling_time,"
          "simulation_time,success_rate,time_computing,time_idle,time_sleeping,"
          "time_switching_off,time_switching_on,time_unavailable\n", f);
    fprintf(f, "fastbf-replay %s,%f,%f,%f,%f,%f", FBF_VERSION, (double)joules,
            (double)s.makespan, (double)s.max_sld, (double)s.max_turn, (double)s.max_wait);
    put_mean(f, s.sum_sld, s.nb);
    put_mean(f, s.sum_turn, s.nb);
    put_mean(f, s.sum_wait, s.nb);
    fprintf(f, ",%u,%llu,%d,%d,%d,%d,%d,%llu,%f,%f", r->cfg.nb_res, m.grouped_switches, s.nb,
            s.finished, s.killed, s.rejected, s.success, m.machine_switches, r->wall_sched,
            r->wall_total);
    put_mean(f, s.success, s.nb);
    fprintf(f, ",%f,%f,%f,%f,%f,%f\n", (double)s.computing, (double)idle, (double)m.sleeping,
            (double)m.switching_off, (double)m.switching_on, 0.0);
    if (ferror(f) | (fclose(f) != 0))
        return fbf_errorf(err, -EIO, "error writing '%s'", path);
    return 0;
}

int fbf_replay_write_batsim_files(const fbf_replay *r, const char *jobs_path,
                                  const char *schedule_path, fbf_error *err)
{
    size_t n = 0;
    row *rows = ordered_rows(r, &n);
    if (!rows)
        return fbf_errorf(err, -ENOMEM, "out of memory");
    int rc = write_jobs(r, rows, n, jobs_path, err);
    if (!rc)
        rc = write_schedule(r, rows, n, schedule_path, err);
    free(rows);
    return rc;
}
