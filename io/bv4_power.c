/*
 * bv4_power: resource states and energy messages (see bv4_power.h).
 * Machine state names follow Batsim's compute_resources[].state; pstates
 * travel as strings of digits ("1") and numbers are accepted as well.
 */
#include "io/bv4_power.h"

#include "io/host_pstates.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fbf_bv4_power_pstate(const cJSON *st, uint32_t *out, fbf_error *err)
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

int fbf_bv4_power_pstates(const cJSON *data, fbf_begins *b, fbf_error *err)
{
    fbf_host_pstates r;
    fbf_host_pstates_start(&r, "data.compute_resources[].properties.sleep_pstates");
    const cJSON *m;
    cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(data, "compute_resources"))
    {
        uint32_t id = (uint32_t)cJSON_GetObjectItemCaseSensitive(m, "id")->valuedouble;
        const cJSON *props = cJSON_GetObjectItemCaseSensitive(m, "properties");
        const cJSON *sp = cJSON_GetObjectItemCaseSensitive(props, "sleep_pstates");
        const cJSON *w = cJSON_GetObjectItemCaseSensitive(props, "wattage_per_state");
        if (sp && !cJSON_IsString(sp))
            return fbf_errorf(err, -EPROTO, "%s: machine %u: expected sleep:off:on pstate "
                              "triplets separated by commas (at most 8), got something else",
                              r.field, id);
        int rc = fbf_host_pstates_add(&r, id, sp ? sp->valuestring : NULL,
                                      cJSON_IsString(w) ? w->valuestring : NULL, err);
        if (rc < 0)
            return rc;
    }
    fbf_host_pstates_finish(&r, b);
    return 0;
}

int fbf_bv4_power_state(const cJSON *st, uint32_t id, fbf_machine_state *out, fbf_error *err)
{
    static const struct {
        const char *name;
        fbf_machine_state st;
    } names[] = {
        {"idle", FBF_MACHINE_ON},         {"computing", FBF_MACHINE_ON},
        {"sleeping", FBF_MACHINE_OFF},    {"switching_on", FBF_MACHINE_SWITCHING_ON},
        {"switching_off", FBF_MACHINE_SWITCHING_OFF},
    };
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
    *out = names[k].st;
    return 0;
}

int fbf_bv4_power_energy(const cJSON *data, double *joules, fbf_error *err)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(data, "consumed_energy");
    if (!v)
        return fbf_errorf(err, -EPROTO, "data: expected consumed_energy (the only query fastbf "
                          "makes), got %s", data->child ? data->child->string : "nothing");
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
        return fbf_errorf(err, -EPROTO, "data.consumed_energy: expected a number of joules >= 0");
    *joules = v->valuedouble;
    return 0;
}

void fbf_bv4_power_put_set(fbf_jbuf *b, const fbf_out *d)
{
    fbf_jbuf_lit(b, "{\"resources\":\"");
    fbf_jbuf_ranges(b, d->machines->r, d->machines->n);
    fbf_jbuf_lit(b, "\",\"state\":\"");
    fbf_jbuf_int(b, d->pstate);
    fbf_jbuf_lit(b, "\"}");
}

void fbf_bv4_power_put_query(fbf_jbuf *b)
{
    fbf_jbuf_lit(b, "{\"requests\":{\"consumed_energy\":{}}}");
}
