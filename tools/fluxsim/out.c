/*
 * out: what fastbf-fluxsim reports (see fluxsim.h): out_jobs.csv, one row
 * per job in submission order, with the columns of Batsim's jobs file
 * that a comparison needs (times "%f", allocated_resources in Batsim's
 * interval-set form, so that a v4 replay's file compares column by
 * column), summary.json, and the summary on stdout.
 */
#include "tools/fluxsim/fluxsim.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *final_state(const sjob *j)
{
    switch (j->end_kind) {
    case END_DONE: return "COMPLETED_SUCCESSFULLY";
    case END_WALLTIME: return "COMPLETED_WALLTIME_REACHED";
    case END_CANCELED: return "CANCELED";
    case END_DENIED: return "DENIED";
    }
    return "UNFINISHED";
}

static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void put_time(FILE *f, double t)
{
    if (!isnan(t))
        fprintf(f, "%f", t);
}

int fs_write_outputs(fluxsim *fs, int status, const char *why, fbf_error *err)
{
    if (!fs->o.out_dir)
        return 0;
    mkdir(fs->o.out_dir, 0777);
    char path[4200];
    snprintf(path, sizeof path, "%s/out_jobs.csv", fs->o.out_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return fbf_errorf(err, -errno, "%s: %s", path, strerror(errno));
    fprintf(f, "job_id,flux_id,submission_time,starting_time,finish_time,requested_number_of_"
               "resources,requested_time,allocated_resources,final_state,last_t_estimate,note\n");
    char *cores = NULL;
    for (size_t k = 0; k < fs->njobs; k++) {
        const sjob *j = &fs->jobs[fs->order[k]];
        if (j->st == SJ_FUTURE)
            continue;
        cores = fbf_idset_to_string(&j->cores);
        fprintf(f, "%s,%llu,", fs->wl->jobs[j->wl].id, (unsigned long long)j->id);
        put_time(f, j->t_submit);
        fputc(',', f);
        put_time(f, j->start);
        fputc(',', f);
        put_time(f, j->st == SJ_INACTIVE && j->end_kind != END_CANCELED ? j->end
                    : j->end_kind == END_CANCELED && !isnan(j->start) ? j->end
                                                                      : NAN);
        fprintf(f, ",%lld,%f,%s,%s,", (long long)j->ncores,
                j->duration > 0 ? j->duration : -1.0, cores ? cores : "", final_state(j));
        put_time(f, j->est_announced ? j->last_est : NAN);
        fputc(',', f);
        csv_text(f, j->note);
        fputc('\n', f);
        free(cores);
    }
    if (fclose(f) != 0)
        return fbf_errorf(err, -EIO, "%s: write failed", path);
    snprintf(path, sizeof path, "%s/summary.json", fs->o.out_dir);
    if (!(f = fopen(path, "w")))
        return fbf_errorf(err, -errno, "%s: %s", path, strerror(errno));
    fprintf(f, "{\"status\": %d, \"error\": ", status);
    if (why) {
        fputc('"', f);
        for (const char *p = why; *p; p++)
            fprintf(f, *p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
        fputc('"', f);
    } else {
        fputs("null", f);
    }
    fprintf(f, ", \"mode\": \"%s\", \"jobs\": %zu, \"submitted\": %zu, \"started\": %zu, "
               "\"done\": %zu, \"walltime_reached\": %zu, \"denied\": %zu, \"canceled\": %zu, "
               "\"requeued\": %zu, \"restarts\": %zu, \"instants\": %llu, \"messages_in\": %llu, "
               "\"messages_out\": %llu, \"annotate\": %zu, \"annotate_redundant\": %zu, "
               "\"t_estimate_jobs\": %zu, \"t_estimate_past\": %zu, \"started_after_t_estimate\": "
               "%zu, \"wall_s\": %.6f}\n",
            fs->single ? "single" : "unlimited", fs->njobs, fs->submitted, fs->started, fs->done,
            fs->walltime, fs->denied, fs->canceled, fs->requeued, fs->restarts,
            (unsigned long long)fs->instants, (unsigned long long)fs->messages_in,
            (unsigned long long)fs->messages_out, fs->annotates, fs->redundant, fs->est_jobs,
            fs->est_past, fs->est_late, fs->wall_s);
    if (fclose(f) != 0)
        return fbf_errorf(err, -EIO, "%s: write failed", path);
    return 0;
}

void fs_print_summary(fluxsim *fs, FILE *f, int status, const char *why)
{
    fprintf(f, "fastbf-fluxsim: %s, %zu jobs on %u ranks x %u cores, %s mode\n",
            status == FS_OK ? "done" : "STOPPED", fs->njobs, fs->o.ranks, fs->o.cores,
            fs->single ? "single" : "unlimited");
    if (why)
        fprintf(f, "  stopped    %s\n", why);
    fprintf(f, "  jobs       %zu submitted, %zu started, %zu done (%zu at their walltime), %zu "
               "denied, %zu canceled\n",
            fs->submitted, fs->started, fs->done, fs->walltime, fs->denied, fs->canceled);
    fprintf(f, "  protocol   %llu instants, %llu messages to the scheduler, %llu from it, %zu "
               "allocs sent again, %zu restarts\n",
            (unsigned long long)fs->instants, (unsigned long long)fs->messages_out,
            (unsigned long long)fs->messages_in, fs->requeued, fs->restarts);
    fprintf(f, "  annotate   %zu (%zu changing nothing); t_estimate on %zu jobs, %zu in the past, "
               "%zu jobs started after their last\n",
            fs->annotates, fs->redundant, fs->est_jobs, fs->est_past, fs->est_late);
    fprintf(f, "  wall       %.3f s\n", fs->wall_s);
}
