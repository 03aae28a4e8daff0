/*
 * flux_kit: the RFC 27 session in process (see flux_kit.h).
 */
#include "support/flux_kit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/flux_codec.h"
#include "io/flux_job.h"
#include "io/jbuf.h"
#include "policies/orders/registry.h"
#include "policies/registry.h"

void fbf_test_flux_open(fbf_test_flux *t, const char *policy, fbf_flux_mode mode,
                        uint32_t ranks, uint32_t cores)
{
    memset(t, 0, sizeof *t);
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    assert_non_null(pe);
    t->kvs = fbf_flux_kvs_memory();
    t->warn = tmpfile();
    assert_non_null(t->kvs);
    assert_non_null(t->warn);
    fbf_flux_options o = {
        /* RFC 27's queue order, as fastbf --protocol flux sets it. */
        .session = {.engine = {.policy = pe->ops,
                               .reservation_depth = pe->default_depth,
                               .workers = 1,
                               .order = fbf_order_lookup("priority")}},
        .mode = mode,
        .nranks = ranks,
        .cores_per_rank = cores,
        .kvs = t->kvs,
        .warn = t->warn,
        .annotate = pe->ops == fbf_policy_lookup("easy")->ops,
    };
    fbf_error err = {{0}};
    t->s = fbf_flux_session_create(&o, &err);
    if (!t->s)
        fail_msg("fbf_flux_session_create: %s", err.text);
    t->ranks = ranks;
    t->cores = cores;
}

void fbf_test_flux_close(fbf_test_flux *t)
{
    fbf_flux_session_destroy(t->s);
    fbf_flux_kvs_destroy(t->kvs);
    if (t->warn)
        fclose(t->warn);
    memset(t, 0, sizeof *t);
}

/* The outbox as text. */
int fbf_test_flux_setup(void **state)
{
    fbf_test_flux_open(*state, "easy", FBF_FLUX_MODE_UNLIMITED, 1, 4);
    return 0;
}

int fbf_test_flux_teardown(void **state)
{
    fbf_test_flux_close(*state);
    return 0;
}

static void render(fbf_test_flux *t)
{
    size_t n;
    const fbf_flux_out *o = fbf_flux_session_outbox(t->s, &n);
    size_t at = 0;
    t->out[0] = '\0';
    for (size_t i = 0; i < n && at < sizeof t->out; i++) {
        const fbf_flux_msg *m = &o[i].msg;
        size_t pl = m->payload ? m->payload_len : 0;
        if (pl && m->payload[pl - 1] == '\0')
            pl--;
        int w = snprintf(t->out + at, sizeof t->out - at, "%s %.*s e=%u m=%u %.*s\n",
                         m->type == 0x01 ? "req" : m->type == 0x02 ? "resp" : "?",
                         (int)m->topic_len, m->topic, m->aux1, m->matchtag,
                         m->payload ? (int)pl : 1, m->payload ? m->payload : "-");
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

const char *fbf_test_flux_frames(fbf_test_flux *t, const void *const *data, const size_t *len,
                                 size_t n)
{
    fbf_error err = {{0}};
    t->rc = fbf_flux_session_receive(t->s, data, len, n, &err);
    snprintf(t->err, sizeof t->err, "%s", t->rc < 0 ? err.text : "");
    if (t->rc < 0 && !t->may_fail)
        fail_msg("the session failed: %s", err.text);
    render(t);
    return t->out;
}

const char *fbf_test_flux_send(fbf_test_flux *t, uint8_t type, uint8_t flags, uint32_t aux1,
                               uint32_t matchtag, const char *topic, const char *payload)
{
    fbf_flux_msg m = {.type = type,
                      .flags = flags,
                      .aux1 = aux1,
                      .matchtag = matchtag,
                      .topic = topic,
                      .topic_len = topic ? strlen(topic) : 0,
                      .payload = payload,
                      .payload_len = payload ? strlen(payload) + 1 : 0};
    m.flags = fbf_flux_msg_flags(&m);
    unsigned char proto[FBF_FLUX_PROTO_SIZE];
    fbf_flux_msg_proto(&m, proto);
    const void *data[3];
    size_t len[3], n = 0;
    if (topic) {
        data[n] = topic;
        len[n++] = m.topic_len;
    }
    if (payload) {
        data[n] = payload;
        len[n++] = m.payload_len;
    }
    data[n] = proto;
    len[n++] = sizeof proto;
    return fbf_test_flux_frames(t, data, len, n);
}

const char *fbf_test_flux_req(fbf_test_flux *t, const char *topic, const char *payload)
{
    return fbf_test_flux_send(t, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, 0, topic, payload);
}

const char *fbf_test_flux_alloc(fbf_test_flux *t, uint64_t id)
{
    char p[128];
    snprintf(p, sizeof p, "{\"id\":%llu,\"priority\":16,\"userid\":5588}", (unsigned long long)id);
    return fbf_test_flux_req(t, FBF_FLUX_ALLOC, p);
}

const char *fbf_test_flux_free(fbf_test_flux *t, uint64_t id)
{
    char p[64];
    snprintf(p, sizeof p, "{\"id\":%llu}", (unsigned long long)id);
    return fbf_test_flux_req(t, FBF_FLUX_FREE, p);
}

const char *fbf_test_flux_instant(fbf_test_flux *t, double now)
{
    char p[64];
    snprintf(p, sizeof p, "{\"now\":%.17g}", now);
    return fbf_test_flux_send(t, FBF_FLUX_REQUEST, 0, FBF_FLUX_NODEID_ANY, 7, FBF_FLUX_INSTANT,
                              p);
}

void fbf_test_flux_handshake(fbf_test_flux *t, const char *held)
{
    const char *o = fbf_test_flux_send(t, FBF_FLUX_REQUEST, FBF_FLUX_F_NORESPONSE,
                                       FBF_FLUX_NODEID_ANY, 0, FBF_FLUX_ATTACH, NULL);
    assert_string_equal(o, "req job-manager.sched-hello e=4294967295 m=1 -\n");
    char p[4096];
    snprintf(p, sizeof p, "{\"alloc\":%s}", held ? held : "[]");
    fbf_test_flux_send(t, FBF_FLUX_RESPONSE, 0, 0, 1, FBF_FLUX_HELLO, p);
    assert_non_null(strstr(t->out, "req job-manager.sched-ready e=4294967295 m=2 {\"mode\":"));
    fbf_test_flux_send(t, FBF_FLUX_RESPONSE, 0, 0, 2, FBF_FLUX_READY, NULL);
    assert_string_equal(t->out, "");
    assert_true(fbf_flux_session_ready(t->s));
}

void fbf_test_flux_put(fbf_test_flux *t, uint64_t id, const char *name, const char *text)
{
    char key[64];
    fbf_flux_key(key, sizeof key, id, name);
    fbf_store_item it = {.name = key, .value = text, .len = strlen(text)};
    fbf_error err = {{0}};
    assert_int_equal(fbf_flux_kvs_put(t->kvs, &it, 1, &err), 0);
}

void fbf_test_flux_jobspec(fbf_test_flux *t, uint64_t id, int64_t ncores, double duration)
{
    fbf_jbuf b = {0};
    fbf_flux_jobspec_put(&b, ncores, duration, "sleep");
    assert_false(b.oom);
    fbf_test_flux_put(t, id, "jobspec", b.p);
    fbf_jbuf_fini(&b);
}

const char *fbf_test_flux_get(fbf_test_flux *t, uint64_t id, const char *name)
{
    static char buf[8192];
    char key[64];
    fbf_flux_key(key, sizeof key, id, name);
    fbf_store_item it = {.name = key};
    fbf_error err = {{0}};
    assert_int_equal(fbf_flux_kvs_get(t->kvs, &it, 1, &err), 0);
    if (!it.value)
        return NULL;
    snprintf(buf, sizeof buf, "%.*s", (int)it.len, it.value);
    return buf;
}

const char *fbf_test_flux_warned(fbf_test_flux *t)
{
    static char buf[65536];
    fflush(t->warn);
    long at = ftell(t->warn);
    rewind(t->warn);
    size_t n = fread(buf, 1, sizeof buf - 1, t->warn);
    buf[n] = '\0';
    fseek(t->warn, at, SEEK_SET);
    return buf;
}

const char *fbf_test_flux_line(const fbf_test_flux *t, int i)
{
    static char buf[8192];
    const char *p = t->out;
    for (; i > 0 && p; i--) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p || !*p)
        return NULL;
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    snprintf(buf, sizeof buf, "%.*s", (int)n, p);
    return buf;
}

int fbf_test_flux_nlines(const fbf_test_flux *t)
{
    int n = 0;
    for (const char *p = t->out; *p; p++)
        n += *p == '\n';
    return n;
}
