/*
 * counters: see counters.h. The benchmarks parse this line
 * (bench/run_case.py), so its shape is part of the contract.
 */
#include "tools/lib/counters.h"

#include <inttypes.h>

void fbf_counters_print(FILE *f, const char *label, const fbf_policy_counter *c, size_t n)
{
    if (n == 0)
        return;
    fputs(label, f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s %s %" PRIu64, i ? "," : "", c[i].name, c[i].value);
    fputc('\n', f);
}
