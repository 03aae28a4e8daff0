/*
 * fastbf-jstat: watches and steers a running fastbf through its control
 * endpoint (fastbf --control URL; io/jsc_client.h), after flux-jstat:
 *
 *   fastbf-jstat --control URL notify [--count N] [--for SECONDS]
 *   fastbf-jstat --control URL query JOBID KEY
 *   fastbf-jstat --control URL update JOBID KEY JSON
 *   fastbf-jstat --control URL list
 *
 * Exit codes: 0 done, 1 fastbf refused or did not answer (one line says
 * why), 2 a bad command line.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "io/jsc.h"
#include "io/jsc_client.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: fastbf-jstat [--control URL] [--timeout S] notify [--count N] [--for S]\n"
            "                    [--ready FILE]\n"
            "       fastbf-jstat [--control URL] [--timeout S] query JOBID KEY\n"
            "       fastbf-jstat [--control URL] [--timeout S] update JOBID KEY JSON\n"
            "       fastbf-jstat [--control URL] [--timeout S] list\n"
            "       fastbf-jstat --help | --version\n"
            "\n"
            "Job status and control of a running fastbf (fastbf --control URL), after\n"
            "Flux's JSC and flux-jstat:\n"
            "  notify   one line per state change, \"JOBID OLD->NEW\" (JSC's states:\n"
            "           schedreq, running, allocated, complete, cancelled, failed, ...),\n"
            "           until --count N changes, --for S seconds, or an interrupt;\n"
            "           --ready FILE: create FILE once fastbf's welcome came (from then on\n"
            "           every change is heard), for scripts\n"
            "  query    the KEY of the job's JCB as JSON: jobid, state-pair, rdesc,\n"
            "           R_lite, sched (t_estimate and reason_pending), or jcb for all\n"
            "  update   JSON is {\"KEY\": ...}: rdesc '{\"rdesc\":{\"walltime\":W}}' (a waiting\n"
            "           job's walltime), state-pair '{\"state-pair\":{\"nstate\":10}}' (cancel:\n"
            "           a waiting job is rejected, a running Batsim job killed), priority\n"
            "           '{\"priority\":P}' (a waiting job's place under the priority order);\n"
            "           applied at\n"
            "           fastbf's next decision point\n"
            "  list     the waiting, then the running jobs, as flux jobs lists them\n"
            "\n"
            "  --control URL  fastbf's control endpoint (default: $FASTBF_CONTROL)\n"
            "  --timeout S    how long to wait for an answer (default 30)\n");
}

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "fastbf-jstat: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'fastbf-jstat --help'.\n");
    return 2;
}

static volatile sig_atomic_t stop;
static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

typedef struct watch {
    long count, seen;
} watch;

static int print_change(const char *jcb, void *arg, int errnum)
{
    watch *w = arg;
    cJSON *o = cJSON_Parse(jcb);
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "jobid");
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(o, "state-pair");
    const cJSON *os = cJSON_GetObjectItemCaseSensitive(sp, "ostate");
    const cJSON *ns = cJSON_GetObjectItemCaseSensitive(sp, "nstate");
    if (cJSON_IsNumber(os) && cJSON_IsNumber(ns)) {
        /* A Flux id is printed from the text: a double would round it. */
        const char *t = strstr(jcb, "\"jobid\":");
        if (cJSON_IsString(id))
            printf("%s", id->valuestring);
        else if (t)
            printf("%.*s", (int)strcspn(t + 8, ","), t + 8);
        printf(" %s->%s\n", fbf_jsc_state_name((int)os->valuedouble),
               fbf_jsc_state_name((int)ns->valuedouble));
        fflush(stdout);
    }
    cJSON_Delete(o);
    w->seen++;
    return w->count > 0 && w->seen >= w->count ? 1 : 0;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int notify(fbf_jsc_client *c, long count, double seconds, const char *ready)
{
    watch w = {.count = count};
    fbf_error err;
    if (fbf_jsc_notify_status(c, print_change, &w, &err) < 0) {
        fprintf(stderr, "fastbf-jstat: %s\n", err.text);
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    double end = seconds > 0 ? mono() + seconds : INFINITY;
    while (!stop && mono() < end) {
        int rc = fbf_jsc_dispatch(c, 200);
        if (ready && fbf_jsc_subscribed(c, 0) == 0) {
            FILE *f = fopen(ready, "w");
            if (!f) {
                fprintf(stderr, "fastbf-jstat: --ready %s: %s\n", ready, strerror(errno));
                return 1;
            }
            fclose(f);
            ready = NULL;
        }
        if (rc > 0 && rc != 0 && w.count > 0 && w.seen >= w.count)
            return 0;
        if (rc < 0) {
            fprintf(stderr, "fastbf-jstat: notify: %s\n", strerror(-rc));
            return 1;
        }
    }
    return 0;
}

static void cell_time(const cJSON *v, char *buf, size_t cap)
{
    if (cJSON_IsNumber(v) && v->valuedouble >= 0)
        snprintf(buf, cap, "%.1f", v->valuedouble);
    else
        snprintf(buf, cap, "-");
}

static int list(fbf_jsc_client *c)
{
    char *json = NULL;
    fbf_error err;
    if (fbf_jsc_list(c, &json, &err) < 0) {
        fprintf(stderr, "fastbf-jstat: list: %s\n", err.text);
        return 1;
    }
    cJSON *o = cJSON_Parse(json);
    const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(o, "jobs");
    printf("%20s %-10s %8s %12s %14s %s\n", "JOBID", "STATE", "NCORES", "WALLTIME",
           "T_ESTIMATE", "REASON");
    const char *raw = strstr(json, "\"jobs\":");
    for (const cJSON *j = jobs ? jobs->child : NULL; j; j = j->next) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "jobid");
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "state");
        const cJSON *nc = cJSON_GetObjectItemCaseSensitive(j, "ncores");
        const cJSON *wt = cJSON_GetObjectItemCaseSensitive(j, "walltime");
        const cJSON *sc = cJSON_GetObjectItemCaseSensitive(j, "sched");
        const cJSON *te = cJSON_GetObjectItemCaseSensitive(sc, "t_estimate");
        const cJSON *re = cJSON_GetObjectItemCaseSensitive(sc, "reason_pending");
        char idt[48], w[32], t[32];
        if (cJSON_IsString(id)) {
            snprintf(idt, sizeof idt, "%s", id->valuestring);
        } else { /* Flux's integer, from the text */
            raw = raw ? strstr(raw + 1, "{\"jobid\":") : NULL;
            snprintf(idt, sizeof idt, "%.*s", raw ? (int)strcspn(raw + 9, ",") : 1,
                     raw ? raw + 9 : "?");
        }
        cell_time(wt, w, sizeof w);
        cell_time(te, t, sizeof t);
        printf("%20s %-10s %8.0f %12s %14s %s\n", idt,
               cJSON_IsString(st) ? st->valuestring : "?",
               cJSON_IsNumber(nc) ? nc->valuedouble : 0, w, t,
               cJSON_IsString(re) ? re->valuestring : "");
    }
    cJSON_Delete(o);
    free(json);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"control", required_argument, NULL, 'c'}, {"timeout", required_argument, NULL, 't'},
        {"count", required_argument, NULL, 'n'},   {"for", required_argument, NULL, 'f'},
        {"ready", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},          {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *control = getenv("FASTBF_CONTROL"), *ready = NULL;
    double timeout = 30, seconds = 0;
    long count = 0;
    opterr = 0;
    for (int c; (c = getopt_long(argc, argv, "+:", opts, NULL)) != -1;) {
        char *end = NULL;
        switch (c) {
        case 'c': control = optarg; break;
        case 't':
        case 'f': {
            double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v > 0) || isinf(v))
                return bad_usage("--timeout/--for: '%s' is not a number of seconds > 0", optarg);
            *(c == 't' ? &timeout : &seconds) = v;
            break;
        }
        case 'n':
            count = strtol(optarg, &end, 10);
            if (end == optarg || *end || count < 1)
                return bad_usage("--count: '%s' is not a number >= 1", optarg);
            break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fastbf-jstat %s\n", FBF_VERSION); return 0;
        case ':': return bad_usage("option '%s' needs a value", argv[optind - 1]);
        default: return bad_usage("unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind >= argc)
        return bad_usage("%s", "a command is needed: notify, query, update or list");
    const char *cmd = argv[optind++];
    /* notify's own options may follow it */
    if (strcmp(cmd, "notify") == 0) {
        for (int c; (c = getopt_long(argc, argv, "+:", opts, NULL)) != -1;) {
            char *end = NULL;
            if (c == 'n') {
                count = strtol(optarg, &end, 10);
                if (end == optarg || *end || count < 1)
                    return bad_usage("--count: '%s' is not a number >= 1", optarg);
            } else if (c == 'f') {
                seconds = strtod(optarg, &end);
                if (end == optarg || *end || !(seconds > 0) || isinf(seconds))
                    return bad_usage("--for: '%s' is not a number of seconds > 0", optarg);
            } else if (c == 'r') {
                ready = optarg;
            } else {
                return bad_usage("notify takes --count N, --for S and --ready FILE, not '%s'",
                                 argv[optind - 1]);
            }
        }
    }
    int want = strcmp(cmd, "query") == 0 ? 2 : strcmp(cmd, "update") == 0 ? 3 : 0;
    if (!want && strcmp(cmd, "notify") != 0 && strcmp(cmd, "list") != 0)
        return bad_usage("unknown command '%s': notify, query, update or list", cmd);
    if (argc - optind != want)
        return bad_usage("%s: wrong number of arguments", cmd);
    if (!control)
        return bad_usage("%s", "no control endpoint: give --control URL or set FASTBF_CONTROL");
    fbf_error err;
    fbf_jsc_client *c = fbf_jsc_client_open(control, (int)(timeout * 1000), &err);
    if (!c) {
        fprintf(stderr, "fastbf-jstat: %s\n", err.text);
        return 2;
    }
    int rc = 0;
    if (strcmp(cmd, "notify") == 0) {
        rc = notify(c, count, seconds, ready);
    } else if (strcmp(cmd, "list") == 0) {
        rc = list(c);
    } else if (want == 2) {
        char *jcb = NULL;
        if (fbf_jsc_query_jcb(c, argv[optind], argv[optind + 1], &jcb, &err) < 0) {
            fprintf(stderr, "fastbf-jstat: query %s %s: %s\n", argv[optind], argv[optind + 1],
                    err.text);
            rc = 1;
        } else {
            printf("%s\n", jcb);
        }
        free(jcb);
    } else if (fbf_jsc_update_jcb(c, argv[optind], argv[optind + 1], argv[optind + 2], &err) < 0) {
        fprintf(stderr, "fastbf-jstat: update %s %s: %s\n", argv[optind], argv[optind + 1],
                err.text);
        rc = 1;
    }
    fbf_jsc_client_close(c);
    return rc;
}
