/*
 * host_pstates: machines' pstates from Batsim's energy-platform
 * properties (see host_pstates.h).
 */
#include "io/host_pstates.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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

void fbf_host_pstates_start(fbf_host_pstates *r, const char *field)
{
    *r = (fbf_host_pstates){.field = field, .first = -1};
}

int fbf_host_pstates_add(fbf_host_pstates *r, uint32_t id, const char *sleep_pstates,
                         const char *wattage_per_state, fbf_error *err)
{
    if (!sleep_pstates)
        return 0;
    fbf_host_pstates m = {0};
    const char *p = sleep_pstates;
    for (bool more = true; more;) {
        uint32_t t[3];
        bool ok = m.nsleep < 8 && read_uint(&p, &t[0]) && *p++ == ':' && read_uint(&p, &t[1]) &&
                  *p++ == ':' && read_uint(&p, &t[2]);
        if (!ok || (*p && *p != ','))
            return fbf_errorf(err, -EPROTO, "%s: machine %u: expected sleep:off:on pstate "
                              "triplets separated by commas (at most 8), got \"%s\"", r->field,
                              id, sleep_pstates);
        m.sleep[m.nsleep++] = t[0];
        m.virt[m.nvirt++] = t[1];
        m.virt[m.nvirt++] = t[2];
        more = *p == ',';
        p += more;
    }
    if (wattage_per_state && wattage_per_state[0]) {
        m.count = 1;
        for (const char *c = wattage_per_state; *c; c++)
            m.count += *c == ',';
    }
    if (r->first < 0) {
        memcpy(r->sleep, m.sleep, sizeof m.sleep);
        memcpy(r->virt, m.virt, sizeof m.virt);
        r->nsleep = m.nsleep;
        r->nvirt = m.nvirt;
        r->count = m.count;
        r->first = id;
        return 0;
    }
    if (m.nsleep != r->nsleep || m.count != r->count ||
        memcmp(m.sleep, r->sleep, m.nsleep * sizeof *m.sleep) ||
        memcmp(m.virt, r->virt, m.nvirt * sizeof *m.virt))
        return fbf_errorf(err, -EINVAL, "%s: machines %ld and %u have different pstates; "
                          "fastbf puts every machine to sleep in the same pstate", r->field,
                          r->first, id);
    return 0;
}

void fbf_host_pstates_finish(const fbf_host_pstates *r, fbf_begins *b)
{
    if (r->first < 0)
        return;
    b->pstates.found = true;
    memcpy(b->pstates.sleep, r->sleep, sizeof r->sleep);
    memcpy(b->pstates.virt, r->virt, sizeof r->virt);
    b->pstates.nsleep = r->nsleep;
    b->pstates.nvirt = r->nvirt;
    b->pstates.count = r->count;
    b->pstates.machine = (uint32_t)r->first;
    b->pstates.field = r->field;
}
