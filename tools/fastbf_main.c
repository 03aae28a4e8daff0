/*
 * fastbf: the decision process. Reads the command line (tools/fastbf_cli.h),
 * builds the front end of the chosen protocol over a session with the
 * chosen policy, and serves it: Batsim v4 over ZeroMQ (the default),
 * Batsim 5 as an EDC process, the Batsim v2 text protocol over Batsim's
 * Unix socket, or Flux's RFC 27.
 *
 * Exit codes: 0 after the simulation's end, 1 on a protocol violation or a
 * transport failure (one line on stderr says what), 2 on a bad command
 * line or a --register-workload file that cannot be read or registered.
 */
#define _GNU_SOURCE /* pthread_setattr_default_np */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/bv2_client.h"
#include "io/bv2_frame.h"
#include "io/bv4_session.h"
#include "io/bv5_process.h"
#include "io/flux_server.h"
#include "io/jsc_server.h"
#include "io/submitter.h"
#include "io/zmq_server.h"
#include "tools/fastbf_cli.h"
#include "tools/lib/counters.h"
#include "tools/lib/edc_init.h"
#include "tools/lib/memstat.h"
#include "tools/lib/register_plan.h"
#include "tools/lib/sched_choice.h"

/* Batsim 5's init string over the command line's options (a process EDC's
 * handshake). */
static int configure_edc(void *ctx, const char *init, size_t len, fbf_bv5_options *o,
                         fbf_error *err)
{
    fbf_edc_setup *c = ctx;
    int rc = fbf_edc_init_read(init, len, o, c, err);
    o->session.power = &c->power;
    o->session.log = c->verbose ? stderr : NULL;
    return rc;
}
/* Every thread of the process (ZeroMQ's two, the disconnect watcher, the
 * parse helper, the workers) gets a stack of FBF_THREAD_STACK rather than
 * the 8 MiB RLIMIT_STACK default: the whole stack is address space from the
 * start, so four default stacks alone were half of what `ulimit -v 64M`
 * allows, and ZeroMQ aborts when it cannot start a thread. The deepest
 * recursion is JSON's, bounded by cJSON's nesting limit of 1000 levels. */
#define FBF_THREAD_STACK (1u << 20)

static void use_small_thread_stacks(void)
{
    pthread_attr_t a;
    if (pthread_getattr_default_np(&a) != 0)
        return;
    size_t cur = 0;
    if (pthread_attr_getstacksize(&a, &cur) == 0 && cur > FBF_THREAD_STACK &&
        pthread_attr_setstacksize(&a, FBF_THREAD_STACK) == 0)
        pthread_setattr_default_np(&a);
    pthread_attr_destroy(&a);
}

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
/* libzmq ends the process with abort() when it cannot allocate memory
 * (alloc_assert: "FATAL ERROR: OUT OF MEMORY") or start a thread, after
 * printing where; fastbf itself never aborts. Memory exhaustion is an exit
 * status and a line, not a signal. Only async-signal-safe calls here. */
static void on_abort(int sig)
{
    (void)sig;
    static const char line[] =
        "fastbf: ZeroMQ gave up at the place named above, as it does when it cannot "
        "allocate memory or start a thread: out of memory\n";
    ssize_t w = write(STDERR_FILENO, line, sizeof line - 1);
    (void)w;
    _exit(1);
}
#endif

/* The front end of one protocol, over its session. */
typedef struct front {
    fbf_bv4_session *s;
    fbf_bv2_client *c;
    fbf_flux_session *fx;
    fbf_bv5_process p5;
    fbf_edc_setup p5cfg;
} front;

/* Builds the front end that o->v2 / v5 / flux (else Batsim v4) names.
 * 0, or negative with err set. */
static int front_create(front *f, fbf_cli *o, fbf_submitter *reg, fbf_jsc *jsc, fbf_error *err)
{
    FILE *log = o->verbose ? stderr : NULL;
    if (o->v5) {
        f->p5cfg = (fbf_edc_setup){.power = o->power, .verbose = o->verbose};
        fbf_bv5_options o5 = {.session = {.engine = o->engine,
                                          .log = log,
                                          .submitter = reg,
                                          .power = &f->p5cfg.power,
                                          .sleep_pstate_given = o->sleep_given,
                                          .compute_pstate_given = o->compute_given,
                                          .call_margin = 1e-3,
                                          .call_per_event = 2e-5,
                                          .jsc = jsc},
                              .format = FBF_BV5_FORMAT_JSON};
        fbf_bv5_process_init(&f->p5, &o5, configure_edc, &f->p5cfg);
        return 0;
    }
    if (o->flux) {
        fbf_flux_options of = {
            .session = {.engine = o->engine, .log = log, .jsc = jsc},
            .mode = o->flux_mode,
            .nranks = (uint32_t)o->flux_ranks,
            .cores_per_rank = (uint32_t)o->flux_cores,
            .redis_host = o->redis_host,
            .redis_port = (int)o->redis_port,
            .annotate = o->policy->ops == fbf_policy_lookup("easy")->ops,
        };
        f->fx = fbf_flux_session_create(&of, err);
        return f->fx ? 0 : -1;
    }
    if (o->v2) {
        fbf_bv2_options o2 = {
            .session = {.engine = o->engine,
                        .log = log,
                        .power = &o->power,
                        .sleep_pstate_given = o->sleep_given,
                        .compute_pstate_given = o->compute_given,
                        .query_energy = o->query_energy,
                        .jsc = jsc},
            .socket = o->socket_path,
            .redis_host = o->redis_host,
            .redis_port = (int)o->redis_port,
            .max_message = o->max_message ? (size_t)o->max_message : FBF_BV2_FRAME_MAX_DEFAULT,
            .connect_timeout_s = 30,
        };
        f->c = fbf_bv2_client_create(&o2, err);
        return f->c ? 0 : -1;
    }
    fbf_bv4_options o4 = {
        .engine = o->engine,
        .log = log,
        .tag_starts = o->tag_starts,
        .submitter = reg,
        .power = &o->power,
        .sleep_pstate_given = o->sleep_given,
        .compute_pstate_given = o->compute_given,
        .query_energy = o->query_energy,
        .jsc = jsc,
    };
    f->s = fbf_bv4_session_create(&o4, err);
    return f->s ? 0 : -1;
}

static fbf_engine *front_engine(const front *f, const fbf_cli *o)
{
    if (o->v5)
        return f->p5.edc ? fbf_bv5_edc_engine(f->p5.edc) : NULL;
    if (o->v2)
        return fbf_bv2_client_engine(f->c);
    return o->flux ? fbf_flux_session_engine(f->fx) : fbf_bv4_session_engine(f->s);
}

static void front_destroy(front *f, const fbf_cli *o)
{
    fbf_bv2_client_destroy(f->c);
    fbf_flux_session_destroy(f->fx);
    if (o->v5) {
        fbf_bv5_process_fini(&f->p5);
        fbf_submitter_destroy(f->p5cfg.submitter);
    }
    fbf_bv4_session_destroy(f->s);
}

/* One line says what runs and where the peer finds it. */
static void describe(const fbf_cli *o, char *out, size_t cap)
{
    char depth_text[48] = "", choice_text[120];
    fbf_sched_choice_describe(&o->engine, choice_text, sizeof choice_text);
    if (o->policy->ops == fbf_policy_lookup("easy")->ops)
        snprintf(depth_text, sizeof depth_text,
                 o->depth == FBF_DEPTH_UNLIMITED ? "reservation depth unlimited, "
                                                 : "reservation depth %lld, ",
                 o->depth);
    snprintf(out, cap, "fastbf: %s (%s%lld worker%s%s), %s,", o->policy->name, depth_text,
             o->workers, o->workers > 1 ? "s" : "", choice_text,
             o->v5     ? "Batsim 5 EDC"
             : o->v2   ? "Batsim v2"
             : o->flux ? "Flux RFC 27"
                       : "Batsim v4");
}

static int serve(front *f, const fbf_cli *o, const char *announce, fbf_serve_stats *st,
                 fbf_error *err)
{
    fbf_zmq_options zo = {.endpoint = o->endpoint,
                          .allow_remote = o->allow_remote,
                          .max_message = (size_t)o->max_message,
                          .warn = stderr,
                          .announce = announce};
    if (o->v5) {
        fbf_zmq_handler h = fbf_bv5_process_handler(&f->p5);
        return fbf_zmq_serve_with(&zo, &h, st, err);
    }
    if (o->flux)
        return fbf_flux_serve(&zo, f->fx, st, err);
    if (o->v2) {
        fprintf(stderr, "%s connected to %s\n", announce, fbf_bv2_client_socket(f->c));
        return fbf_bv2_client_serve(f->c, st, err);
    }
    return fbf_zmq_serve(&zo, f->s, st, err);
}

/* --stats and --verbose: what answering cost, and what the jobs still
 * known hold at the end. */
static void report(const fbf_cli *o, const fbf_serve_stats *st, double served_s, int rc,
                   fbf_engine *e, long start_kib)
{
    if (st->messages)
        fprintf(stderr,
                "fastbf: %lu messages answered in %.6f s (%.2f us each; the first in %.6f s) "
                "of %.6f s served; the rest in %s and waiting for %s\n",
                st->messages, st->handling_s, st->handling_s / (double)st->messages * 1e6,
                st->first_s, served_s, o->v2 ? "the socket" : "ZeroMQ",
                o->flux ? "the job manager" : "Batsim");
    if (o->verbose && rc == 0 && e) {
        /* The benchmarks read this line (bench/run_case.py). */
        fprintf(stderr,
                "fastbf: memory at the end: %ld KiB resident with %zu jobs waiting and %zu "
                "running, %ld KiB at the start (free pages returned to the system first)\n",
                fbf_memstat_settled_rss_kib(), fbf_engine_nb_waiting(e), fbf_engine_nb_running(e),
                start_kib);
        fbf_policy_counter work[8];
        fbf_counters_print(stderr, "fastbf: policy work:", work,
                           fbf_engine_policy_counters(e, work, sizeof work / sizeof work[0]));
    }
}

int main(int argc, char **argv)
{
    fbf_cli o;
    int status = fbf_cli_parse(&o, argc, argv);
    if (status >= 0)
        return status;
    fbf_error err = {{0}};
    fbf_submitter *reg = NULL;
    if (o.reg_path && !(reg = fbf_register_plan_load(o.reg_path, o.pause, o.skip_short, &err))) {
        fprintf(stderr, "fastbf: --register-workload: %s\n", err.text);
        return 2;
    }
    if (o.control) {
        char a[512], b[512];
        if (fbf_jsc_endpoints(o.control, a, sizeof a, b, sizeof b, &err) < 0) {
            fprintf(stderr, "fastbf: %s\nTry 'fastbf --help'.\n", err.text);
            fbf_submitter_destroy(reg);
            return 2;
        }
    }
    /* A write to a dead pipe must be an error, not a silent death. */
    signal(SIGPIPE, SIG_IGN);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    signal(SIGABRT, on_abort); /* sanitizers report through abort when asked to */
#endif
    use_small_thread_stacks();
    fbf_jsc *jsc = NULL;
    fbf_jsc_server *jsrv = NULL;
    if (o.control) {
        fbf_jsc_life life = o.flux ? FBF_JSC_FLUX : o.v2 ? FBF_JSC_BATSIM_NOKILL : FBF_JSC_BATSIM;
        jsc = fbf_jsc_create(life, o.flux ? (uint32_t)o.flux_cores : 1, &err);
        jsrv = jsc ? fbf_jsc_server_start(jsc, o.control, &err) : NULL;
        if (!jsrv) {
            fprintf(stderr, "fastbf: %s\n", err.text);
            fbf_jsc_destroy(jsc);
            fbf_submitter_destroy(reg);
            return 1;
        }
    }
    front f = {0};
    if (front_create(&f, &o, reg, jsc, &err) < 0) {
        fprintf(stderr, "fastbf: %s\n", err.text);
        fbf_submitter_destroy(reg);
        fbf_jsc_server_stop(jsrv);
        fbf_jsc_destroy(jsc);
        return 1;
    }
    long start_kib = o.verbose ? fbf_memstat_settled_rss_kib() : -1;
    char announce[320];
    describe(&o, announce, sizeof announce);
    fbf_serve_stats st = {0};
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = serve(&f, &o, announce, o.stats || o.verbose ? &st : NULL, &err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    report(&o, &st, (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9, rc,
           front_engine(&f, &o), start_kib);
    front_destroy(&f, &o);
    fbf_submitter_destroy(reg);
    fbf_jsc_server_stop(jsrv);
    fbf_jsc_destroy(jsc);
    if (rc < 0) {
        fprintf(stderr, "fastbf: %s\n", err.text);
        return 1;
    }
    return 0;
}
