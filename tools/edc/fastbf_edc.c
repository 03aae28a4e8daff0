/*
 * libfastbf-edc: fastbf as a Batsim 5 External Decision Component that
 * Batsim loads (`batsim -l libfastbf-edc.so INIT`). The three functions
 * of Batsim's EDC API are the only symbols exported; each library copy
 * holds one EDC (Batsim's dlmopen gives each copy its own).
 *
 * The init string is a JSON object choosing the policy and its options
 * with fastbf's command-line names (tools/lib/edc_init.h), e.g.
 *   {"policy": "conservative", "reservation_depth": 4, "workers": 2,
 *    "format": "json"}
 * An empty string takes the defaults (easy, JSON). An unknown key or a bad
 * value fails init (non-zero) with one line on stderr naming it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/edc/fastbf_edc.h"

#include "io/bv5_edc.h"
#include "policies/registry.h"
#include "tools/lib/edc_init.h"

/* The API is process-wide by Batsim's design: one EDC per library copy. */
static fbf_bv5_edc *edc;
static fbf_edc_setup setup;

uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags,
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
    const fbf_policy_entry *pe = fbf_policy_lookup("easy");
    o.session.engine.policy = pe->ops;
    o.session.engine.reservation_depth = pe->default_depth;
    setup = (fbf_edc_setup){.power = fbf_power_config_default()};
    fbf_error err = {{0}};
    if (fbf_edc_init_read((const char *)init_data, init_size, &o, &setup, &err) < 0) {
        fprintf(stderr, "fastbf-edc: %s\n", err.text);
        fbf_submitter_destroy(setup.submitter);
        setup.submitter = NULL;
        return 1;
    }
    o.session.power = &setup.power;
    o.session.log = setup.verbose ? stderr : NULL;
    const uint8_t *hello;
    size_t len;
    edc = fbf_bv5_edc_create(&o, &err);
    if (!edc || fbf_bv5_edc_hello(edc, &hello, &len, &err) < 0) {
        fprintf(stderr, "fastbf-edc: init: %s\n", err.text);
        fbf_bv5_edc_destroy(edc);
        edc = NULL;
        fbf_submitter_destroy(setup.submitter);
        setup.submitter = NULL;
        return 1;
    }
    *flags = o.format;
    *reply_data = (uint8_t *)hello;
    *reply_size = (uint32_t)len;
    return 0;
}

uint8_t batsim_edc_take_decisions(const uint8_t *what_happened,
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

uint8_t batsim_edc_deinit(void)
{
    fbf_bv5_edc_destroy(edc);
    edc = NULL;
    fbf_submitter_destroy(setup.submitter);
    setup.submitter = NULL;
    return 0;
}
