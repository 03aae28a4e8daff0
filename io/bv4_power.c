/*
 * bv4_power: resource states and energy messages (see bv4_power.h).
 * Machine state names follow Batsim's compute_resources[].state; pstates
 * travel as strings of digits ("1") and numbers are accepted as well.
 */
#include "io/bv4_power.h"

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

/* What one machine's properties say of its pstates. */
typedef struct pstates {
    uint32_t sleep[8], nsleep; /* sleep pstates, in the property's order */
    uint32_t virt[16], nvirt;  /* their switch-off and switch-on pstates */
    uint32_t count;            /* pstates in wattage_per_state; 0: not said */
} pstates;

static bool read_uint(const char **p, uint32_t *out)
{
    while (**p == ' ')
        (*p)++;
    char *end;
    if (**p < '0' || **p > '9')
        return false;
    unsigned long v = strtoul(*p, &end, 10);
    if (v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    *p = end;
    while (**p == ' ')
        (*p)++;
    return true;
}

/* 1 when the machine states its sleep pstates, 0 when not, -EPROTO. */
static int machine_pstates(const cJSON *r, uint32_t id, pstates *ps, fbf_error *err)
{
    const cJSON *props = cJSON_GetObjectItemCaseSensitive(r, "properties");
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(props, "sleep_pstates");
    if (!sp)
        return 0;
    *ps = (pstates){0};
    const char *p = cJSON_IsString(sp) ? sp->valuestring : NULL;
    for (bool more = p != NULL; more;) {
        uint32_t t[3];
        bool ok = ps->nsleep < 8 && read_uint(&p, &t[0]) && *p++ == ':' &&
                  read_uint(&p, &t[1]) && *p++ == ':' && read_uint(&p, &t[2]);
        if (!ok || (*p && *p != ',')) {
            p = NULL;
            break;
        }
        ps->sleep[ps->nsleep++] = t[0];
        ps->virt[ps->nvirt++] = t[1];
        ps->virt[ps->nvirt++] = t[2];
        more = *p == ',';
        p += more;
    }
    if (!p)
        return fbf_errorf(err, -EPROTO, "data.compute_resources[].properties.sleep_pstates: "
                          "machine %u: expected sleep:off:on pstate triplets separated by "
                          "commas (at most 8), got %s%s%s", id, cJSON_IsString(sp) ? "\"" : "",
                          cJSON_IsString(sp) ? sp->valuestring : "something else",
                          cJSON_IsString(sp) ? "\"" : "");
    const cJSON *w = cJSON_GetObjectItemCaseSensitive(props, "wattage_per_state");
    if (cJSON_IsString(w) && w->valuestring[0]) {
        ps->count = 1;
        for (const char *c = w->valuestring; *c; c++)
            ps->count += *c == ',';
    }
    return 1;
}

int fbf_bv4_power_pstates(const cJSON *data, fbf_begins *b, fbf_error *err)
{
    static const char F[] = "data.compute_resources[].properties.sleep_pstates";
    const cJSON *r;
    pstates first = {0}, ps;
    long first_id = -1;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(data, "compute_resources"))
    {
        uint32_t id = (uint32_t)cJSON_GetObjectItemCaseSensitive(r, "id")->valuedouble;
        int rc = machine_pstates(r, id, &ps, err);
        if (rc <= 0) {
            if (rc < 0)
                return rc;
            continue;
        }
        if (first_id < 0) {
            first = ps;
            first_id = id;
        } else if (ps.nsleep != first.nsleep || ps.count != first.count ||
                   memcmp(ps.sleep, first.sleep, ps.nsleep * sizeof *ps.sleep) ||
                   memcmp(ps.virt, first.virt, ps.nvirt * sizeof *ps.virt)) {
            return fbf_errorf(err, -EINVAL, "%s: machines %ld and %u have different pstates; "
                              "fastbf puts every machine to sleep in the same pstate", F,
                              first_id, id);
        }
    }
    if (first_id < 0)
        return 0;
    b->pstates.found = true;
    memcpy(b->pstates.sleep, first.sleep, sizeof first.sleep);
    memcpy(b->pstates.virt, first.virt, sizeof first.virt);
    b->pstates.nsleep = first.nsleep;
    b->pstates.nvirt = first.nvirt;
    b->pstates.count = first.count;
    b->pstates.machine = (uint32_t)first_id;
    b->pstates.field = F;
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
