/*
 * fbf_flux_bench: the RFC 27 service's alloc throughput with a deep queue,
 * and the cost of job status and control per state change, in process
 * (io/flux_session.h, no socket: what fastbf itself spends).
 *
 *   fbf_flux_bench [--redis HOST:PORT] [--depth N] [--batch B] [--instants K]
 *                  [--policy easy|conservative] [--jsc] [--cores C]
 *
 * A platform of 100 ranks of C cores (default 16) is taken whole by a job
 * of 1e9 s; then N jobs of one core (durations 100 to 10,099 s, seeded)
 * come in instants of 10,000 allocs: they wait, the queue is N deep (not
 * timed). Then K instants (default 20) of B new allocs each (default
 * 1000, at most a tenth of N) are timed: jobspec look-ups (Redis
 * pipelined with --redis, else the store in memory), the pass, the
 * annotations, the answers; after each, an instant that is not timed
 * cancels the B jobs, so that every timed instant finds N waiting. The line
 * printed: depth, policy, store, jobs/s (B x K over the time), the mean
 * and the worst instant. With --jsc the job status and control records
 * are made and handed to a control thread as fastbf does (its endpoint
 * in a temporary ipc:// folder, nobody attached); the records per second
 * go out too, so that two runs, with and without, give the cost of one.
 *
 *   fbf_flux_bench --jsc-micro N
 *
 * times job status and control alone: N jobs, each queued, started on 4
 * cores and completed (3 state changes), the records handed over every
 * 1000 jobs as a decision point does, on this thread (the I/O thread's
 * cost per state change); then the time until the control thread, which
 * applies and publishes them meanwhile, has the last one (a query sees
 * the last job complete): its rate.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "io/flux_kvs.h"
#include "io/flux_session.h"
#include "io/jsc.h"
#include "io/jsc_client.h"
#include "io/jsc_server.h"
#include "policies/registry.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what, const char *why)
{
    fprintf(stderr, "fbf_flux_bench: %s: %s\n", what, why);
    exit(1);
}

static void send(fbf_flux_session *s, uint8_t type, uint8_t flags, uint32_t tag,
                 const char *topic, const char *payload, size_t len)
{
    fbf_flux_msg m = {.type = type, .flags = flags, .matchtag = tag, .aux1 = 0,
                      .topic = topic, .topic_len = strlen(topic), .payload = payload,
                      .payload_len = len};
    m.flags = fbf_flux_msg_flags(&m);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&m, proto);
    const void *data[3] = {topic, payload, proto};
    size_t lens[3] = {m.topic_len, len, sizeof proto};
    if (!payload) {
        data[1] = proto;
        lens[1] = sizeof proto;
    }
    fbf_error err;
    if (fbf_flux_session_receive(s, data, lens, payload ? 3 : 2, &err) < 0)
        die(topic, err.text);
}

/* Stores the jobspecs of ids [first, first + n) in one batch. */
static void jobspecs(fbf_flux_kvs *kvs, uint64_t first, size_t n, int64_t cores,
                     uint64_t *rng)
{
    fbf_store_item *it = calloc(n, sizeof *it);
    char (*keys)[64] = calloc(n, sizeof *keys);
    fbf_jbuf b = {0};
    size_t *off = calloc(n + 1, sizeof *off);
    for (size_t i = 0; i < n; i++) {
        *rng = *rng * 6364136223846793005ULL + 1442695040888963407ULL;
        double d = first == 1 ? 1e9 : 100 + (double)((*rng >> 33) % 10000);
        off[i] = b.len;
        fbf_flux_jobspec_put(&b, first == 1 ? cores : 1, d, "bench");
        fbf_flux_key(keys[i], sizeof keys[i], first + i, "jobspec");
        it[i].name = keys[i];
    }
    off[n] = b.len;
    for (size_t i = 0; i < n; i++) {
        it[i].value = b.p + off[i];
        it[i].len = off[i + 1] - off[i];
    }
    fbf_error err;
    if (fbf_flux_kvs_put(kvs, it, n, &err) < 0)
        die("jobspecs", err.text);
    free(it);
    free(keys);
    free(off);
    fbf_jbuf_fini(&b);
}

/* One instant with allocs for ids [first, first + n); its seconds. */
static double instant(fbf_flux_session *s, uint64_t first, size_t n, double t)
{
    char p[128];
    double t0 = now_s();
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(p, sizeof p, "{\"id\":%llu,\"priority\":16,\"userid\":1}",
                           (unsigned long long)(first + i));
        send(s, FBF_FLUX_REQUEST, 0, 0, FBF_FLUX_ALLOC, p, (size_t)len);
    }
    int len = snprintf(p, sizeof p, "{\"now\":%.17g}", t);
    send(s, FBF_FLUX_REQUEST, 0, 7, FBF_FLUX_INSTANT, p, (size_t)len);
    size_t k;
    fbf_flux_session_outbox(s, &k);
    return now_s() - t0;
}

/* An instant that cancels the allocs of ids [first, first + n). */
static void cancel(fbf_flux_session *s, uint64_t first, size_t n, double t)
{
    char p[64];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(p, sizeof p, "{\"id\":%llu}", (unsigned long long)(first + i));
        send(s, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE, 0, FBF_FLUX_CANCEL, p, (size_t)len);
    }
    int len = snprintf(p, sizeof p, "{\"now\":%.17g}", t);
    send(s, FBF_FLUX_REQUEST, 0, 7, FBF_FLUX_INSTANT, p, (size_t)len);
}

static int jsc_micro(long n)
{
    char dir[] = "/tmp/fbf-flux-bench-XXXXXX", url[128], p[200];
    if (!mkdtemp(dir))
        die("mkdtemp", strerror(errno));
    snprintf(url, sizeof url, "ipc://%s/ctl", dir);
    fbf_error err;
    fbf_jsc *j = fbf_jsc_create(FBF_JSC_BATSIM, 1, &err);
    fbf_jsc_server *srv = j ? fbf_jsc_server_start(j, url, &err) : NULL;
    fbf_jsc_client *c = srv ? fbf_jsc_client_open(url, 60000, &err) : NULL;
    if (!c)
        die("control endpoint", err.text);
    fbf_idset alloc;
    fbf_idset_init(&alloc);
    fbf_idset_add_range(&alloc, 0, 3);
    char id[32];
    double t0 = now_s();
    for (long i = 0; i < n; i++) {
        snprintf(id, sizeof id, "w0!%ld", i);
        fbf_jsc_queued(j, id, 4, 100, (double)i);
        fbf_jsc_started(j, id, &alloc);
        fbf_jsc_completed(j, id);
        if (i % 1000 == 999)
            fbf_jsc_publish(j);
    }
    fbf_jsc_publish(j);
    double produced = now_s() - t0;
    snprintf(id, sizeof id, "w0!%ld", n - 1);
    char *jcb = NULL;
    for (;;) { /* the control thread has them all once the last is complete */
        if (fbf_jsc_query_jcb(c, id, "state-pair", &jcb, &err) == 0 && strstr(jcb, "\"nstate\":11"))
            break;
        free(jcb);
        jcb = NULL;
    }
    double consumed = now_s() - t0;
    free(jcb);
    printf("JSC alone: %ld jobs, %ld state changes: the I/O thread %.3f us per state change "
           "(%.0f/s); the control thread had them all after %.3f s (%.0f state changes/s, "
           "applied and published, nobody subscribed)\n",
           n, 3 * n, produced * 1e6 / (double)(3 * n), (double)(3 * n) / produced, consumed,
           (double)(3 * n) / consumed);
    fbf_idset_fini(&alloc);
    fbf_jsc_client_close(c);
    fbf_jsc_server_stop(srv);
    fbf_jsc_destroy(j);
    snprintf(p, sizeof p, "%s/ctl", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/ctl.pub", dir);
    unlink(p);
    rmdir(dir);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--jsc-micro") == 0)
        return jsc_micro(atol(argv[2]));
    const char *redis = NULL, *policy = "easy";
    long depth = 1000, batch = 0, instants = 20, cores = 16;
    bool jsc_on = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--jsc") == 0) {
            jsc_on = true;
            continue;
        }
        if (!v)
            die(a, "needs a value");
        i++;
        if (strcmp(a, "--redis") == 0)
            redis = v;
        else if (strcmp(a, "--policy") == 0)
            policy = v;
        else if (strcmp(a, "--depth") == 0)
            depth = atol(v);
        else if (strcmp(a, "--batch") == 0)
            batch = atol(v);
        else if (strcmp(a, "--instants") == 0)
            instants = atol(v);
        else if (strcmp(a, "--cores") == 0)
            cores = atol(v);
        else
            die(a, "unknown option");
    }
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    if (!batch)
        batch = depth / 10 < 1 ? 1 : depth / 10 > 1000 ? 1000 : depth / 10;
    if (!pe || depth < 0 || batch < 1 || instants < 1 || cores < 1)
        die("options", "bad value");
    fbf_error err;
    fbf_flux_kvs *kvs = NULL;
    if (redis) {
        char host[256];
        const char *colon = strrchr(redis, ':');
        if (!colon)
            die("--redis", "HOST:PORT");
        snprintf(host, sizeof host, "%.*s", (int)(colon - redis), redis);
        kvs = fbf_flux_kvs_redis(host, atoi(colon + 1), 60, &err);
        if (!kvs)
            die("redis", err.text);
    } else {
        kvs = fbf_flux_kvs_memory();
    }
    fbf_jsc *jsc = NULL;
    fbf_jsc_server *srv = NULL;
    char dir[] = "/tmp/fbf-flux-bench-XXXXXX", url[128];
    if (jsc_on) {
        if (!mkdtemp(dir))
            die("mkdtemp", strerror(errno));
        snprintf(url, sizeof url, "ipc://%s/ctl", dir);
        jsc = fbf_jsc_create(FBF_JSC_FLUX, (uint32_t)cores, &err);
        srv = jsc ? fbf_jsc_server_start(jsc, url, &err) : NULL;
        if (!srv)
            die("control endpoint", err.text);
    }
    FILE *devnull = fopen("/dev/null", "w");
    fbf_flux_options o = {
        .session = {.engine = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                               .workers = 1},
                    .jsc = jsc},
        .nranks = 100,
        .cores_per_rank = (uint32_t)cores,
        .kvs = kvs,
        .warn = devnull,
        .annotate = pe->ops == fbf_policy_lookup("easy")->ops,
    };
    fbf_flux_session *s = fbf_flux_session_create(&o, &err);
    if (!s)
        die("session", err.text);
    send(s, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE, 0, FBF_FLUX_ATTACH, NULL, 0);
    send(s, FBF_FLUX_RESPONSE, 0, 1, FBF_FLUX_HELLO, "{\"alloc\":[]}", 12);
    send(s, FBF_FLUX_RESPONSE, 0, 2, FBF_FLUX_READY, NULL, 0);
    uint64_t rng = 42;
    /* The blocker, then the queue. */
    jobspecs(kvs, 1, 1, 100 * cores, &rng);
    instant(s, 1, 1, 0);
    double t = 1;
    uint64_t next = 2;
    double setup0 = now_s();
    for (long left = depth; left > 0; left -= 10000) {
        size_t n = (size_t)(left < 10000 ? left : 10000);
        jobspecs(kvs, next, n, 1, &rng);
        instant(s, next, n, t++);
        next += n;
    }
    double setup = now_s() - setup0;
    uint64_t rec0 = jsc ? fbf_jsc_records(jsc) : 0;
    double total = 0, worst = 0;
    for (long k = 0; k < instants; k++) {
        jobspecs(kvs, next, (size_t)batch, 1, &rng); /* the job manager's work: not timed */
        double dt = instant(s, next, (size_t)batch, t++);
        total += dt;
        worst = dt > worst ? dt : worst;
        cancel(s, next, (size_t)batch, t++); /* back to N waiting, not timed */
        next += (uint64_t)batch;
    }
    fbf_engine *e = fbf_flux_session_engine(s);
    printf("depth %ld, %s, %s, %zu waiting: %.0f allocs/s (batches of %ld; mean instant %.3f ms, "
           "worst %.3f ms); queue built in %.2f s",
           depth, policy, redis ? "Redis" : "memory", fbf_engine_nb_waiting(e),
           (double)(batch * instants) / total, batch, total / (double)instants * 1e3,
           worst * 1e3, setup);
    if (jsc)
        printf("; JSC: %llu records in the timed instants, %.3f us of instant per record",
               (unsigned long long)(fbf_jsc_records(jsc) - rec0),
               total * 1e6 / (double)(fbf_jsc_records(jsc) - rec0));
    printf("\n");
    fbf_flux_session_destroy(s);
    fbf_jsc_server_stop(srv);
    fbf_jsc_destroy(jsc);
    if (jsc_on) {
        char p[200];
        snprintf(p, sizeof p, "%s/ctl", dir);
        unlink(p);
        snprintf(p, sizeof p, "%s/ctl.pub", dir);
        unlink(p);
        rmdir(dir);
    }
    fbf_flux_kvs_destroy(kvs);
    fclose(devnull);
    return 0;
}
