/*
 * bv4_kit: a Batsim v4 session driven in process, every reply checked
 * (see bv4_kit.h).
 */
#include "support/bv4_kit.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/idset.h"
#include "policies/registry.h"
#include "support/testkit.h"

const char *fbf_test_bv4_begins(int n, const char *config)
{
    char res[4096] = "";
    size_t off = 0;
    for (int i = 0; i < n; i++)
        off += (size_t)snprintf(res + off, sizeof res - off,
                                "%s{'id':%d,'name':'h%d','state':'idle','properties':{}}",
                                i ? "," : "", i, i);
    return fbf_test_msg("{'now':0,'events':[{'timestamp':0,'type':'SIMULATION_BEGINS','data':{"
                        "'nb_resources':%d,'nb_compute_resources':%d,'nb_storage_resources':0,"
                        "'config':{%s},'compute_resources':[%s],'storage_resources':[],"
                        "'workloads':{},'profiles':{}}}]}",
                        n, n, config, res);
}

fbf_bv4_session *fbf_test_bv4_session(const char *policy, unsigned workers)
{
    return fbf_test_bv4_session_opts(policy, workers, 0, false);
}

fbf_bv4_session *fbf_test_bv4_session_opts(const char *policy, unsigned workers,
                                           double kill_after, bool tag_starts)
{
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    assert_non_null(pe);
    fbf_bv4_options o = {
        .engine = {.policy = pe->ops, .reservation_depth = pe->default_depth,
                   .workers = workers, .kill_after = kill_after},
        .log = NULL,
        .tag_starts = tag_starts,
    };
    fbf_error err = {{0}};
    fbf_bv4_session *s = fbf_bv4_session_create(&o, &err);
    if (!s)
        fail_msg("session_create: %s", err.text);
    return s;
}

static int rank_of(const char *type)
{
    if (strcmp(type, "REJECT_JOB") == 0)
        return 0;
    if (strcmp(type, "KILL_JOB") == 0)
        return 1;
    if (strcmp(type, "EXECUTE_JOB") == 0)
        return 2;
    if (strcmp(type, "CALL_ME_LATER") == 0)
        return 3;
    return -1; /* NOTIFY, ANSWER, SET_JOB_METADATA: not ordered by D0 */
}

cJSON *fbf_test_bv4_check_reply(const char *req, const char *reply, size_t reply_len)
{
    assert_int_equal(strlen(reply), reply_len);
    cJSON *rq = cJSON_Parse(req);
    cJSON *rp = cJSON_Parse(reply);
    if (!rp)
        fail_msg("reply is not JSON: %s", reply);
    assert_non_null(rq);
    /* The reply is written as text, not printed from a tree: it must be
     * exactly what cJSON prints for the same events (compact, same
     * numbers), so that peers comparing texts see no change. */
    char *again = cJSON_PrintUnformatted(rp);
    assert_non_null(again);
    if (strcmp(again, reply) != 0)
        fail_msg("reply is not in cJSON's compact form:\n  got  %s\n  want %s", reply, again);
    cJSON_free(again);
    const cJSON *rq_now = cJSON_GetObjectItemCaseSensitive(rq, "now");
    const cJSON *rp_now = cJSON_GetObjectItemCaseSensitive(rp, "now");
    assert_true(cJSON_IsNumber(rp_now));
    if (rp_now->valuedouble != rq_now->valuedouble)
        fail_msg("reply now %.17g != request now %.17g", rp_now->valuedouble,
                 rq_now->valuedouble);
    double now = rq_now->valuedouble;
    cJSON_Delete(rq);
    const cJSON *events = cJSON_GetObjectItemCaseSensitive(rp, "events");
    assert_true(cJSON_IsArray(events));
    int last_rank = 0;
    fbf_idset used;
    fbf_idset_init(&used);
    const cJSON *ev;
    cJSON_ArrayForEach(ev, events)
    {
        const cJSON *ts = cJSON_GetObjectItemCaseSensitive(ev, "timestamp");
        const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
        const cJSON *data = cJSON_GetObjectItemCaseSensitive(ev, "data");
        assert_true(cJSON_IsNumber(ts));
        assert_true(cJSON_IsString(type));
        assert_true(cJSON_IsObject(data));
        if (ts->valuedouble != now)
            fail_msg("%s stamped %.17g, not now %.17g", type->valuestring, ts->valuedouble,
                     now);
        int r = rank_of(type->valuestring);
        if (r >= 0) {
            if (r < last_rank)
                fail_msg("D0 order broken: %s after a later kind in %s", type->valuestring,
                         reply);
            last_rank = r;
        }
        if (strcmp(type->valuestring, "EXECUTE_JOB") == 0) {
            const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(data, "alloc");
            assert_true(cJSON_IsString(alloc));
            assert_true(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(data, "job_id")));
            fbf_idset a;
            fbf_idset_init(&a);
            fbf_error e = {{0}};
            if (fbf_idset_parse(&a, alloc->valuestring, &e) != 0)
                fail_msg("alloc \"%s\": %s", alloc->valuestring, e.text);
            char canon[256];
            fbf_idset_format(&a, canon, sizeof canon);
            assert_string_equal(canon, alloc->valuestring);
            assert_true(fbf_idset_count(&a) >= 1);
            if (fbf_idset_intersects(&a, &used))
                fail_msg("allocations overlap in %s", reply);
            assert_int_equal(fbf_idset_union(&used, &a), 0);
            fbf_idset_fini(&a);
        }
    }
    fbf_idset_fini(&used);
    return rp;
}

/* The events of a reply, compactly: "EXECUTE_JOB w0!1 0-1|REJECT_JOB w0!2". */
static const char *summary(const cJSON *reply)
{
    static char buf[4096];
    size_t off = 0;
    buf[0] = '\0';
    const cJSON *ev;
    cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(reply, "events"))
    {
        const char *type = cJSON_GetObjectItemCaseSensitive(ev, "type")->valuestring;
        const cJSON *d = cJSON_GetObjectItemCaseSensitive(ev, "data");
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(d, "job_id");
        const cJSON *alloc = cJSON_GetObjectItemCaseSensitive(d, "alloc");
        off += (size_t)snprintf(buf + off, sizeof buf - off, "%s%s", off ? "|" : "", type);
        if (cJSON_IsString(id))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", id->valuestring);
        if (cJSON_IsString(alloc))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", alloc->valuestring);
        const cJSON *ids = cJSON_GetObjectItemCaseSensitive(d, "job_ids");
        const cJSON *k;
        cJSON_ArrayForEach(k, ids) off += (size_t)snprintf(buf + off, sizeof buf - off, " %s",
                                                          k->valuestring);
        const cJSON *meta = cJSON_GetObjectItemCaseSensitive(d, "metadata");
        if (cJSON_IsString(meta))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", meta->valuestring);
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(d, "type");
        if (cJSON_IsString(t))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s", t->valuestring);
        const cJSON *at = cJSON_GetObjectItemCaseSensitive(d, "timestamp");
        if (cJSON_IsNumber(at))
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %g", at->valuedouble);
        const cJSON *est = cJSON_GetObjectItemCaseSensitive(d, "estimate_waiting_time");
        if (est) {
            const cJSON *eid = cJSON_GetObjectItemCaseSensitive(est, "job_id");
            const cJSON *w = cJSON_GetObjectItemCaseSensitive(est, "estimated_waiting_time");
            off += (size_t)snprintf(buf + off, sizeof buf - off, " %s %g",
                                    cJSON_IsString(eid) ? eid->valuestring : "?",
                                    cJSON_IsNumber(w) ? w->valuedouble : NAN);
        }
    }
    return buf;
}

char *fbf_test_bv4_exchange(fbf_bv4_session *s, const char *req, int want_rc, const char *want,
                            bool keep)
{
    const char *reply = NULL;
    size_t len = 0;
    fbf_error err = {{0}};
    int rc = fbf_bv4_session_handle(s, req, strlen(req), &reply, &len, &err);
    if (rc != want_rc)
        fail_msg("handle() = %d (%s), want %d, on %s", rc, err.text, want_rc, req);
    assert_non_null(reply);
    cJSON *r = fbf_test_bv4_check_reply(req, reply, len);
    const char *got = summary(r);
    if (want && strcmp(got, want) != 0)
        fail_msg("reply to %s\n  is   \"%s\"\n  want \"%s\"\n  raw  %s", req, got, want, reply);
    cJSON_Delete(r);
    return keep ? strdup(reply) : NULL;
}

void fbf_test_bv4_ok(fbf_bv4_session *s, const char *req, const char *want)
{
    fbf_test_bv4_exchange(s, req, 0, want, false);
}

