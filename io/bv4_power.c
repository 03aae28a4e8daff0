/*
 * bv4_power: resource states and energy messages (see bv4_power.h).
 * Machine state names follow Batsim's compute_resources[].state; pstates
 * travel as strings of digits ("1") and numbers are accepted as well.
 */
#include "io/bv4_power.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int parse_pstate(const cJSON *st, uint32_t *out, fbf_error *err)
{
    double v = NAN;
    if (cJSON_IsNumber(st)) {
        v = st->valuedouble;
    } else if (cJSON_IsString(st) && st->valuestring[0]) {
        char *end;
        v = strtod(st->valuestring, &end);
        if (*end)
            v = NAN;
    }
    if (!(v >= 0 && v <= UINT32_MAX && v == floor(v)))
        return fbf_errorf(err, -EPROTO, "data.state: expected a pstate number, got %s%s%s",
                          cJSON_IsString(st) ? "\"" : "",
                          cJSON_IsString(st) ? st->valuestring : "something else",
                          cJSON_IsString(st) ? "\"" : "");
    *out = (uint32_t)v;
    return 0;
}

int fbf_bv4_power_begins(fbf_engine *e, const cJSON *data, fbf_error *err)
{
    static const struct {
        const char *name;
        fbf_machine_state st;
    } names[] = {
        {"idle", FBF_MACHINE_ON},         {"computing", FBF_MACHINE_ON},
        {"sleeping", FBF_MACHINE_OFF},    {"switching_on", FBF_MACHINE_SWITCHING_ON},
        {"switching_off", FBF_MACHINE_SWITCHING_OFF},
    };
    const cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(data, "compute_resources"))
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "state");
        uint32_t id = (uint32_t)cJSON_GetObjectItemCaseSensitive(r, "id")->valuedouble;
        if (!st)
            continue;
        size_t k = 0, n = sizeof names / sizeof names[0];
        while (k < n && !(cJSON_IsString(st) && strcmp(st->valuestring, names[k].name) == 0))
            k++;
        if (k == n)
            return fbf_errorf(err, -EPROTO,
                              "data.compute_resources[].state: machine %u: unknown state %s%s%s "
                              "(idle, computing, sleeping, switching_on, switching_off)",
                              id, cJSON_IsString(st) ? "\"" : "",
                              cJSON_IsString(st) ? st->valuestring : "(not a string)",
                              cJSON_IsString(st) ? "\"" : "");
        fbf_error inner;
        int rc = fbf_engine_set_machine_state(e, id, names[k].st, &inner);
        if (rc < 0)
            return fbf_errorf(err, rc, "data.compute_resources[].state: %s", inner.text);
    }
    return 0;
}

int fbf_bv4_power_changed(fbf_engine *e, const cJSON *data, fbf_error *err)
{
    uint32_t pstate = 0;
    int rc = parse_pstate(cJSON_GetObjectItemCaseSensitive(data, "state"), &pstate, err);
    if (rc < 0)
        return rc;
    fbf_idset set;
    fbf_idset_init(&set);
    fbf_error inner;
    /* bv4_check parsed it already: this cannot fail but for memory. */
    rc = fbf_idset_parse(&set, cJSON_GetObjectItemCaseSensitive(data, "resources")->valuestring,
                         &inner);
    if (rc == 0 && (rc = fbf_engine_state_changed(e, &set, pstate, &inner)) < 0)
        fbf_errorf(err, rc, "%s: %s", strstr(inner.text, "pstate (") ? "data.state"
                                                                       : "data.resources",
                   inner.text);
    else if (rc < 0)
        fbf_errorf(err, rc, "data.resources: %s", inner.text);
    fbf_idset_fini(&set);
    return rc;
}

int fbf_bv4_power_answer(const cJSON *data, FILE *log, double *joules, fbf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, "consumed_energy");
    if (!v)
        return fbf_errorf(err, -EPROTO, "data: expected consumed_energy (the only query fastbf "
                          "makes), got %s", data->child ? data->child->string : "nothing");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return fbf_errorf(err, -EPROTO, "data.consumed_energy: expected a number of joules >= 0");
    *joules = v->valuedouble;
    if (log)
        fprintf(log, "fastbf: consumed energy %.6f J\n", *joules);
    return 0;
}

void fbf_bv4_power_put_set(fbf_jbuf *b, const fbf_decision *d)
{
    fbf_jbuf_lit(b, "{\"resources\":\"");
    fbf_jbuf_ranges(b, d->set->r, d->set->n);
    fbf_jbuf_lit(b, "\",\"state\":\"");
    fbf_jbuf_int(b, d->pstate);
    fbf_jbuf_lit(b, "\"}");
}

void fbf_bv4_power_put_query(fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"requests\":{\"consumed_energy\":{}}}");
}
