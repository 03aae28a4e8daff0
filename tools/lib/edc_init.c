/*
 * edc_init: an External Decision Component's init string (Batsim 5's
 * `-l LIB INIT` / `-s ENDPOINT INIT`): a JSON object of fastbf's options
 * under their command-line names, read over options already set (see
 * edc_init.h).
 */
#include "tools/lib/edc_init.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policies/orders/registry.h"
#include "policies/registry.h"
#include "tools/lib/register_plan.h"

static int bad(fbf_error *err, const char *key, const char *want)
{
    return fbf_errorf(err, -EINVAL, "init: \"%s\": expected %s", key, want);
}

static bool seconds(const cJSON *v, double *out, bool zero_ok)
{
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0 ||
        (!zero_ok && v->valuedouble == 0))
        return false;
    *out = v->valuedouble;
    return true;
}

static bool count(const cJSON *v, double min, double max, double *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < min ||
        v->valuedouble > max)
        return false;
    *out = v->valuedouble;
    return true;
}

static int read_options(const cJSON *init, fbf_bv5_options *o, fbf_edc_setup *setup,
                        fbf_error *err)
{
    fbf_power_config *power = &setup->power;
    const char *policy = NULL;
    const cJSON *depth = NULL;
    double v;
    const cJSON *m;
    cJSON_ArrayForEach(m, init)
    {
        const char *k = m->string;
        if (strcmp(k, "policy") == 0) {
            if (!cJSON_IsString(m) || !fbf_policy_lookup(m->valuestring))
                return bad(err, k, "fcfs, easy or conservative");
            policy = m->valuestring;
        } else if (strcmp(k, "reservation_depth") == 0) {
            depth = m;
        } else if (strcmp(k, "order") == 0 || strcmp(k, "backfill_order") == 0) {
            const fbf_order_ops *ord = cJSON_IsString(m) ? fbf_order_lookup(m->valuestring)
                                                         : NULL;
            char names[160];
            if (!ord)
                return bad(err, k, fbf_order_names(names, sizeof names));
            *(k[0] == 'o' ? &o->session.engine.order : &o->session.engine.backfill_order) = ord;
        } else if (strcmp(k, "estimate") == 0) {
            int e = cJSON_IsString(m) ? fbf_estimate_lookup(m->valuestring) : -1;
            if (e < 0)
                return bad(err, k, "walltime, exact or predict");
            o->session.engine.estimate = (fbf_estimate)e;
        } else if (strcmp(k, "workers") == 0) {
            if (!count(m, 1, 256, &v))
                return bad(err, k, "a number from 1 to 256");
            o->session.engine.workers = (unsigned)v;
        } else if (strcmp(k, "format") == 0) {
            if (!cJSON_IsString(m) || (strcmp(m->valuestring, "json") != 0 &&
                                       strcmp(m->valuestring, "binary") != 0))
                return bad(err, k, "\"json\" or \"binary\"");
            o->format = m->valuestring[0] == 'j' ? FBF_BV5_FORMAT_JSON : FBF_BV5_FORMAT_BINARY;
        } else if (strcmp(k, "kill_after") == 0) {
            if (!seconds(m, &o->session.engine.kill_after, false))
                return bad(err, k, "a number of seconds > 0");
        } else if (strcmp(k, "max_wait") == 0) {
            if (!seconds(m, &o->session.engine.max_wait, false))
                return bad(err, k, "a number of seconds > 0");
        } else if (strcmp(k, "energy_saving") == 0) {
            if (!seconds(m, &power->timeout, true))
                return bad(err, k, "a number of seconds >= 0");
            power->saving = true;
        } else if (strcmp(k, "switch_delays") == 0) {
            char *end;
            if (!cJSON_IsString(m) || (power->off_delay = strtod(m->valuestring, &end)) < 0 ||
                *end != ':' || (power->on_delay = strtod(end + 1, &end)) < 0 || *end)
                return bad(err, k, "\"OFF:ON\" (seconds >= 0)");
        } else if (strcmp(k, "sleep_pstate") == 0 || strcmp(k, "compute_pstate") == 0) {
            if (!count(m, 0, UINT32_MAX, &v))
                return bad(err, k, "a pstate number");
            bool sleep = k[0] == 's';
            *(sleep ? &power->sleep_pstate : &power->compute_pstate) = (uint32_t)v;
            *(sleep ? &o->session.sleep_pstate_given : &o->session.compute_pstate_given) = true;
        } else if (strcmp(k, "verbose") == 0) {
            if (!cJSON_IsBool(m))
                return bad(err, k, "true or false");
            setup->verbose = cJSON_IsTrue(m);
        } else if (strcmp(k, "register_workload") == 0) {
            if (!cJSON_IsString(m) || !m->valuestring[0])
                return bad(err, k, "the path of a workload file (SWF or Batsim JSON)");
            fbf_error inner = {{0}};
            fbf_submitter *plan = fbf_register_plan_load(m->valuestring, 0, false, &inner);
            if (!plan)
                return fbf_errorf(err, -EINVAL, "init: \"%s\": %s", k, inner.text);
            fbf_submitter_destroy(setup->submitter);
            o->session.submitter = setup->submitter = plan;
        } else {
            return fbf_errorf(err, -EINVAL, "init: unknown key \"%s\" (policy, "
                              "reservation_depth, order, backfill_order, estimate, workers, "
                              "format, kill_after, max_wait, "
                              "energy_saving, switch_delays, sleep_pstate, compute_pstate, "
                              "verbose, register_workload)", k);
        }
    }
    if (policy) {
        const fbf_policy_entry *pe = fbf_policy_lookup(policy);
        o->session.engine.policy = pe->ops;
        o->session.engine.reservation_depth = pe->default_depth;
    }
    if (depth) {
        if (o->session.engine.policy != fbf_policy_lookup("easy")->ops)
            return bad(err, "reservation_depth", "nothing with this policy (backfilling only)");
        if (cJSON_IsString(depth) && strcmp(depth->valuestring, "unlimited") == 0)
            o->session.engine.reservation_depth = FBF_DEPTH_UNLIMITED;
        else if (count(depth, 1, 9e15, &v))
            o->session.engine.reservation_depth = (int64_t)v;
        else
            return bad(err, "reservation_depth", "a number >= 1 or \"unlimited\"");
    }
    if (power->sleep_pstate == power->compute_pstate)
        return bad(err, "sleep_pstate", "a pstate other than compute_pstate");
    return 0;
}

int fbf_edc_init_read(const char *init, size_t len, fbf_bv5_options *o, fbf_edc_setup *setup,
                      fbf_error *err)
{
    while (len && (init[len - 1] == '\0' || init[len - 1] == ' ' || init[len - 1] == '\n'))
        len--;
    if (len == 0)
        return 0;
    cJSON *j = cJSON_ParseWithLength(init, len);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return fbf_errorf(err, -EINVAL, "init: expected a JSON object of options, got \"%.*s\"",
                          (int)(len > 200 ? 200 : len), init);
    }
    int rc = read_options(j, o, setup, err);
    cJSON_Delete(j);
    return rc;
}
