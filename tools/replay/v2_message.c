/*
 * v2_message: Batsim's side of the Batsim v2 text protocol (--protocol
 * batsim2): the texts of its messages and the Redis keys that carry what
 * the messages do not.
 *
 * A message is "3:NOW|T1:S1[:C1]|T2:S2[:C2]..." (version 3, as the last
 * Batsim of that protocol sent), every time printed "%f" as Batsim printed
 * it while the clock stays exact; message.c decides which events go in it, in
 * the same order as in a v4 message:
 *   A        the first message, alone, once nb_res is in Redis
 *   C:ID     a job ended (completed or cut at its walltime)
 *   S:ID     a job was submitted; its keys are in Redis before the
 *            message is sent
 *   N        the wake-up an n asked for
 *   p:M=P    machines M reached pstate P (--energy), one per P
 *   e:J      the joules consumed since time 0 (--energy), one per E
 *   Z        the end: in the message whose events leave every job done
 *            or rejected with nothing pending (Batsim sent it with the
 *            last C), or alone when the end comes from a reply (the last
 *            job rejected) or from --max-exchanges
 * The v4 NOTIFY no_more_static_job_to_submit has no v2 counterpart.
 *
 * Redis keys (prefix: the absolute socket path and ':'), written by
 * Batsim, read by the scheduler:
 *   nb_res         the platform size, decimal (store.c, before A)
 *   job_<ID>       {"id":N,"subtime":..,"walltime":..,"res":..,"profile":"P"}
 *                  where id is the job's name within its workload (the
 *                  part after '!'), a JSON number when it is all digits
 *   profile_<ID>   {"type":"delay","delay":D}, the job's profile
 * both for every job a message submits, in one pipeline before it is sent.
 */
#include "tools/replay/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fbf_v2_event(fbf_replay *r, size_t *count, double t, char stamp)
{
    static const char *const kinds[128] = {
        ['A'] = "A", ['C'] = "C", ['S'] = "S", ['N'] = "N",
        ['p'] = "p", ['e'] = "e", ['Z'] = "Z",
    };
    if (!(*count)++)
        r->msg_kind = kinds[(unsigned char)stamp & 127] ? kinds[(unsigned char)stamp & 127] : "?";
    fbf_jbuf *b = &r->msg;
    fbf_jbuf_lit(b, "|");
    fbf_replay_put_f(b, t);
    char s[2] = {':', stamp};
    fbf_jbuf_raw(b, s, 2);
}

void fbf_v2_ranges(fbf_jbuf *b, const fbf_range *rg, uint32_t n)
{
    for (uint32_t k = 0; k < n; k++) {
        if (k)
            fbf_jbuf_lit(b, ",");
        fbf_jbuf_int(b, rg[k].lo);
        if (rg[k].hi != rg[k].lo) {
            fbf_jbuf_lit(b, "-");
            fbf_jbuf_int(b, rg[k].hi);
        }
    }
}

int fbf_v2_check_ids(const fbf_workload *wl, fbf_error *err)
{
    for (size_t i = 0; i < wl->nb_jobs; i++) {
        const char *id = wl->jobs[i].id;
        for (const char *c = id; *c; c++)
            if (*c < 0x21 || *c > 0x7e || strchr("|:;=,", *c))
                return fbf_errorf(err, -EINVAL, "job id '%.60s' cannot be sent in the v2 text "
                                  "protocol: it holds '%c' (byte 0x%02x), which the protocol "
                                  "uses or does not allow", id, *c, (unsigned char)*c);
    }
    return 0;
}

void fbf_v2_begins(fbf_replay *r)
{
    size_t count = 0;
    fbf_replay_msg_open(r, 0);
    fbf_v2_event(r, &count, 0, 'A');
}

bool fbf_v2_end_due(fbf_replay *r)
{
    if (r->next_sub < r->nb_static || r->done + r->rejected < r->wl->nb_jobs)
        return false;
    /* Entries of jobs no longer running are stale (message.c drops them). */
    for (size_t i = 0; i < r->heap_n; i++) {
        const fbf_rev *e = &r->heap[i];
        if (e->kind != FBF_EV_COMPLETED || r->jobs[e->arg].state == FBF_RJ_RUNNING)
            return false;
    }
    return true;
}

/* The job's description as job_<ID> holds it. */
static void job_json(const fbf_replay *r, uint32_t job, fbf_jbuf *b)
{
    const fbf_wl_job *wj = &r->wl->jobs[job];
    const char *bang = strchr(wj->id, '!'), *name = bang ? bang + 1 : wj->id;
    size_t digits = strspn(name, "0123456789");
    fbf_jbuf_lit(b, "{\"id\":");
    /* A number as Batsim's workloads give it, unless it would not read
     * back as the same name (leading zeros, too long for a double). */
    if (name[0] && !name[digits] && digits <= 15 && (name[0] != '0' || digits == 1))
        fbf_jbuf_raw(b, name, digits);
    else
        fbf_jbuf_str(b, name);
    fbf_jbuf_lit(b, ",\"subtime\":");
    fbf_jbuf_num(b, wj->subtime);
    fbf_jbuf_lit(b, ",\"walltime\":");
    fbf_jbuf_num(b, wj->walltime);
    fbf_jbuf_lit(b, ",\"res\":");
    fbf_jbuf_int(b, wj->res);
    fbf_jbuf_lit(b, ",\"profile\":");
    fbf_jbuf_str(b, r->wl->profiles[wj->profile].name);
    if (wj->extra)
        fbf_jbuf_raw(b, wj->extra, strlen(wj->extra));
    fbf_jbuf_lit(b, "}");
}

int fbf_v2_store_pending(fbf_replay *r)
{
    size_t n = r->nstore;
    if (!r->cfg.redis || n == 0)
        return FBF_EXIT_OK;
    r->nstore = 0;
    /* Texts first (the buffer moves as it grows), NUL-separated, then the
     * items pointing into it: per job its id, job_ value, profile_ value. */
    fbf_jbuf *b = &r->store_text;
    fbf_jbuf_reset(b);
    size_t *at = malloc(3 * n * sizeof *at);
    fbf_store_item *items = malloc(2 * n * sizeof *items);
    fbf_store_kind *kinds = malloc(2 * n * sizeof *kinds);
    for (size_t i = 0; at && items && kinds && i < n; i++) {
        uint32_t job = r->store_q[i];
        const fbf_wl_job *wj = &r->wl->jobs[job];
        at[3 * i] = b->len;
        fbf_jbuf_raw(b, wj->id, strlen(wj->id) + 1);
        at[3 * i + 1] = b->len;
        job_json(r, job, b);
        fbf_jbuf_raw(b, "", 1);
        at[3 * i + 2] = b->len;
        fbf_jbuf_lit(b, "{\"type\":\"delay\",\"delay\":");
        fbf_jbuf_num(b, r->wl->profiles[wj->profile].delay);
        fbf_jbuf_lit(b, "}");
        fbf_jbuf_raw(b, "", 1);
    }
    if (!at || !items || !kinds || b->oom) {
        free(at);
        free(items);
        free(kinds);
        return fbf_errorf(&r->err, -ENOMEM, "out of memory"), FBF_EXIT_INTERNAL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *id = b->p + at[3 * i];
        const char *jv = b->p + at[3 * i + 1], *pv = b->p + at[3 * i + 2];
        kinds[2 * i] = FBF_STORE_JOB;
        items[2 * i] = (fbf_store_item){.name = id, .value = jv, .len = strlen(jv)};
        kinds[2 * i + 1] = FBF_STORE_PROFILE;
        items[2 * i + 1] = (fbf_store_item){.name = id, .value = pv, .len = strlen(pv)};
    }
    fbf_error e;
    int rc = fbf_store_set_kinds(r->cfg.redis, kinds, items, 2 * n, &e);
    free(at);
    free(items);
    free(kinds);
    if (rc < 0)
        return fbf_errorf(&r->err, rc, "message #%zu (%s): storing job descriptions: %s",
                          r->msg_index, r->msg_kind, e.text), FBF_EXIT_INVALID;
    return FBF_EXIT_OK;
}
