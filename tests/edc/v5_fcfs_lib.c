/*
 * v5_fcfs_lib: the tests' Batsim 5 EDC (tests/support/v5_edc.c) as a
 * shared library, behind the C API Batsim 5 loads (batsim_edc_init,
 * batsim_edc_take_decisions, batsim_edc_deinit), JSON format only.
 *
 * The init data chooses what it does: "" or "fcfs" an FCFS; "fail-init"
 * returns 3 from batsim_edc_init; "fail-take" returns 4 from the first
 * batsim_edc_take_decisions; "no-nul" keeps answering but without the
 * terminating NUL in the size (both forms are valid replies).
 *
 * The API has no context argument, so the one EDC lives in file-scope
 * state, as the API forces on every EDC library. Each buffer handed back
 * stays valid until the next call, as the API requires.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/v5_edc.h"

#define EXPORT __attribute__((visibility("default")))

static struct {
    fbf_test_v5edc *edc;
    char *last; /* the buffer handed back last */
    int fail_take, with_nul;
} lib;

EXPORT uint8_t batsim_edc_init(const uint8_t *init_data, uint32_t init_size, uint32_t *flags,
                               uint8_t **reply_data, uint32_t *reply_size)
{
    char init[64] = "";
    memcpy(init, init_data, init_size < sizeof init - 1 ? init_size : sizeof init - 1);
    if (strcmp(init, "fail-init") == 0)
        return 3;
    lib.fail_take = strcmp(init, "fail-take") == 0;
    lib.with_nul = strcmp(init, "no-nul") != 0;
    lib.edc = fbf_test_v5edc_new(NULL);
    if (!lib.edc)
        return 1;
    free(lib.last);
    lib.last = fbf_test_v5edc_hello_parts(lib.edc, flags);
    if (!lib.last)
        return 1;
    *reply_data = (uint8_t *)lib.last;
    *reply_size = (uint32_t)strlen(lib.last) + (uint32_t)lib.with_nul;
    return 0;
}

EXPORT uint8_t batsim_edc_take_decisions(const uint8_t *what_happened, uint32_t size,
                                         uint8_t **decisions, uint32_t *decisions_size)
{
    if (lib.fail_take)
        return 4;
    free(lib.last);
    lib.last = fbf_test_v5edc_decide(lib.edc, (const char *)what_happened, size);
    if (!lib.last)
        return 1;
    *decisions = (uint8_t *)lib.last;
    *decisions_size = (uint32_t)strlen(lib.last) + (uint32_t)lib.with_nul;
    return 0;
}

EXPORT uint8_t batsim_edc_deinit(void)
{
    fbf_test_v5edc_free(lib.edc);
    free(lib.last);
    lib.edc = NULL;
    lib.last = NULL;
    return 0;
}
