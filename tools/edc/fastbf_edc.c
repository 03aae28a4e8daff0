/*
 * libfastbf-edc: fastbf as a Batsim 5 External Decision Component that
 * Batsim loads (`batsim -l libfastbf-edc.so INIT`). The three functions
 * of Batsim's EDC API are the only symbols exported; each library copy
 * holds one EDC (Batsim's dlmopen gives each copy its own).
 *
 * The init string is a JSON object choosing the policy and its options
 * with fastbf's command-line names (io/bv5_edc.h for what batprotocol
 * carries):
 *   {"policy": "easy", "reservation_depth": 4, "workers": 2,
 *    "format": "json", "kill_after": 60, "max_wait": 3600,
 *    "energy_saving": 60, "switch_delays": "6:150", "sleep_pstate": 1,
 *    "compute_pstate": 0, "verbose": false}
 * An empty string takes the defaults (easy, JSON). An unknown key or a
 * bad value fails init (non-zero) with one line on stderr naming it.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/bv5_edc.h"
#include "policies/registry.h"

#define EXPORT __attribute__((visibility("default")))

/* The API is process-wide by Batsim's design: one EDC per library copy. */
static fbf_bv5_edc *edc;
static fbf_power_config power;

static int bad(const char *key, const char *want)
{
    fprintf(stderr, "fastbf-edc: init: \"%s\": expected %s\n", key, want);
    return -EINVAL;
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

static int read_init(const cJSON *init, fbf_bv5_options *o, bool *verbose)
{
    const char *policy = "easy";
    const cJSON *depth = NULL;
    power = fbf_power_config_default();
    double v;
    const cJSON *m;
    cJSON_ArrayForEach(m, init)
    {
        const char *k = m->string;
        if (strcmp(k, "policy") == 0) {
            if (!cJSON_IsString(m) || !fbf_policy_lookup(m->valuestring))
                return bad(k, "fcfs, easy or conservative");
            policy = m->valuestring;
        } else if (strcmp(k, "reservation_depth") == 0) {
            depth = m;
        } else if (strcmp(k, "workers") == 0) {
            if (!count(m, 1, 256, &v))
                return bad(k, "a number from 1 to 256");
            o->session.engine.workers = (unsigned)v;
        } else if (strcmp(k, "format") == 0) {
            if (!cJSON_IsString(m) || (strcmp(m->valuestring, "json") != 0 &&
                                       strcmp(m->valuestring, "binary") != 0))
                return bad(k, "\"json\" or \"binary\"");
            o->format = m->valuestring[0] == 'j' ? FBF_BV5_FORMAT_JSON : FBF_BV5_FORMAT_BINARY;
        } else if (strcmp(k, "kill_after") == 0) {
            if (!seconds(m, &o->session.engine.kill_after, false))
                return bad(k, "a number of seconds > 0");
        } else if (strcmp(k, "max_wait") == 0) {
            if (!seconds(m, &o->session.engine.max_wait, false))
                return bad(k, "a number of seconds > 0");
        } else if (strcmp(k, "energy_saving") == 0) {
            if (!seconds(m, &power.timeout, true))
                return bad(k, "a number of seconds >= 0");
            power.saving = true;
        } else if (strcmp(k, "switch_delays") == 0) {
            char *end;
            if (!cJSON_IsString(m) || (power.off_delay = strtod(m->valuestring, &end)) < 0 ||
                *end != ':' || (power.on_delay = strtod(end + 1, &end)) < 0 || *end)
                return bad(k, "\"OFF:ON\" (seconds >= 0)");
        } else if (strcmp(k, "sleep_pstate") == 0 || strcmp(k, "compute_pstate") == 0) {
            if (!count(m, 0, UINT32_MAX, &v))
                return bad(k, "a pstate number");
            bool sleep = k[0] == 's';
            *(sleep ? &power.sleep_pstate : &power.compute_pstate) = (uint32_t)v;
            *(sleep ? &o->session.sleep_pstate_given : &o->session.compute_pstate_given) = true;
        } else if (strcmp(k, "verbose") == 0) {
            if (!cJSON_IsBool(m))
                return bad(k, "true or false");
            *verbose = cJSON_IsTrue(m);
        } else {
            fprintf(stderr, "fastbf-edc: init: unknown key \"%s\" (policy, reservation_depth, "
                    "workers, format, kill_after, max_wait, energy_saving, switch_delays, "
                    "sleep_pstate, compute_pstate, verbose)\n", k);
            return -EINVAL;
        }
    }
    const fbf_policy_entry *pe = fbf_policy_lookup(policy);
    o->session.engine.policy = pe->ops;
    o->session.engine.reservation_depth = pe->default_depth;
    if (depth) {
        if (pe->ops != fbf_policy_lookup("easy")->ops)
            return bad("reservation_depth", "nothing with this policy (backfilling only)");
        if (cJSON_IsString(depth) && strcmp(depth->valuestring, "unlimited") == 0)
            o->session.engine.reservation_depth = FBF_DEPTH_UNLIMITED;
        else if (count(depth, 1, 9e15, &v))
            o->session.engine.reservation_depth = (int64_t)v;
        else
            return bad("reservation_depth", "a number >= 1 or \"unlimited\"");
    }
    if (power.sleep_pstate == power.compute_pstate)
        return bad("sleep_pstate", "a pstate other than compute_pstate");
    return 0;
}

EXPORT uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags,
                               uint8_t **reply_data, uint32_t *reply_size)
{
    if (edc) {
        fprintf(stderr, "fastbf-edc: init called twice without deinit\n");
        return 1;
    }
    fbf_bv5_options o = {.session = {.engine = {.workers = 1},
                                     .call_margin = 1e-3,
                                     .call_per_event = 2e-5},
                         .format = FBF_BV5_FORMAT_JSON};
    bool verbose = false;
    if (init_size) {
        cJSON *init = cJSON_ParseWithLength((const char *)init_data, init_size);
        if (!cJSON_IsObject(init)) {
            fprintf(stderr, "fastbf-edc: init: expected a JSON object of options, got \"%.*s\"\n",
                    (int)(init_size > 200 ? 200 : init_size), (const char *)init_data);
            cJSON_Delete(init);
            return 1;
        }
        int rc = read_init(init, &o, &verbose);
        cJSON_Delete(init);
        if (rc < 0)
            return 1;
    }
    o.session.power = &power;
    o.session.log = verbose ? stderr : NULL;
    fbf_error err = {{0}};
    const uint8_t *hello;
    size_t len;
    edc = fbf_bv5_edc_create(&o, &err);
    if (!edc || fbf_bv5_edc_hello(edc, &hello, &len, &err) < 0) {
        fprintf(stderr, "fastbf-edc: init: %s\n", err.text);
        fbf_bv5_edc_destroy(edc);
        edc = NULL;
        return 1;
    }
    *flags = o.format;
    *reply_data = (uint8_t *)hello;
    *reply_size = (uint32_t)len;
    return 0;
}

EXPORT uint8_t batsim_edc_take_decisions(const uint8_t *what_happened,
                                         uint32_t what_happened_size, uint8_t **decisions,
                                         uint32_t *decisions_size)
{
    if (!edc) {
        fprintf(stderr, "fastbf-edc: take_decisions called before init\n");
        return 1;
    }
    fbf_error err = {{0}};
    const uint8_t *reply;
    size_t len;
    int rc = fbf_bv5_edc_take(edc, what_happened, what_happened_size, &reply, &len, &err);
    if (rc < 0) {
        /* Batsim stops on a non-zero return; the refusal says why if it
         * reads the decisions anyway. */
        fprintf(stderr, "fastbf-edc: %s\n", err.text);
        reply = fbf_bv5_edc_refusal(edc, &len);
        if (reply) {
            *decisions = (uint8_t *)reply;
            *decisions_size = (uint32_t)len;
        }
        return 1;
    }
    *decisions = (uint8_t *)reply;
    *decisions_size = (uint32_t)len;
    return 0;
}

EXPORT uint8_t batsim_edc_deinit(void)
{
    fbf_bv5_edc_destroy(edc);
    edc = NULL;
    return 0;
}
