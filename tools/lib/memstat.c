/*
 * memstat: see memstat.h. jemalloc is looked up with dlsym so that the
 * tools that link it (fastbf, fastbf-replay) and the tests that do not
 * share one object file.
 */
#define _GNU_SOURCE
#include "tools/lib/memstat.h"

#include <dlfcn.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long fbf_memstat_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}

typedef int (*mallctl_fn)(const char *, void *, size_t *, void *, size_t);

long fbf_memstat_settled_rss_kib(void)
{
    mallctl_fn mallctl = (mallctl_fn)dlsym(RTLD_DEFAULT, "mallctl");
    if (mallctl) {
        /* This thread's cache first, then every arena (4096 is jemalloc's
         * MALLCTL_ARENAS_ALL). Failures only leave the figure higher. */
        (void)mallctl("thread.tcache.flush", NULL, NULL, NULL, 0);
        (void)mallctl("arena.4096.purge", NULL, NULL, NULL, 0);
    } else {
        (void)malloc_trim(0);
    }
    return fbf_memstat_rss_kib();
}
