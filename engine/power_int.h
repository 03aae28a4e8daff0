/*
 * power_int: the state of engine/power.c, shared with the waking rule in
 * engine/power_wake.c. Private to engine/.
 */
#ifndef FBF_POWER_INT_H
#define FBF_POWER_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "engine/engine_int.h"
#include "engine/machine_runs.h"
#include "engine/power.h"

typedef struct power_cand { /* a run of candidates to a wake */
    double end, back;
    uint32_t lo;
    uint64_t n, suf; /* machines; of this run and those after it */
} power_cand;

typedef struct power_ending {
    double end;
    uint64_t n, cum; /* machines; of this and the earlier ends */
} power_ending;

typedef struct power_move { /* machines whose hold now ends at tw */
    uint32_t lo, hi;
    double tw;
} power_move;

typedef struct power_leaving { /* machines leaving their hold */
    uint32_t lo, hi;
    fbf_job_h hold;
} power_leaving;

typedef struct power_remap {
    fbf_job_h from, to;
} power_remap;

struct fbf_power {
    fbf_power_config cfg;
    fbf_idset compute;
    fbf_mruns runs;
    uint64_t held;
    fbf_idset wake, sleep; /* this decision point's requests */
    bool replanned;        /* this decision point re-planned a wake */
    power_cand *cand;
    size_t nc, cand_cap;
    power_ending *ends; /* running jobs ending after now + on_delay */
    size_t ne, ne_cap;
    power_move *moves;
    size_t nm, moves_cap;
    power_leaving *leave;
    size_t nl, leave_cap;
    power_remap *map;
    size_t nmap, map_cap;
    fbf_idset set, rest; /* scratch */
};

/* Makes room for one more element of a scratch array. */
static inline int fbf_power_grow(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 16;
    void *x = realloc(*v, c * size);
    if (!x)
        return -ENOMEM;
    *v = x;
    *cap = c;
    return 0;
}

/* A change of runs at now (fbf_mruns_change's ctx). */
typedef struct power_wake_ctx {
    fbf_power *p;
    double now;
} power_wake_ctx;

/* The machines of set (all held) leave their holds; to the free set when
 * to_free. Each hold they leave ends, and the machines it keeps are held
 * again for the same time. The runs of the machines that leave still name
 * their old hold: the caller gives them their new state next, then calls
 * fbf_power_rehold_runs(). -ENOMEM. */
int fbf_power_leave_holds(fbf_power *p, fbf_engine *e, const fbf_idset *set, bool to_free);
/* The machines that stayed in a hold that others left name its successor. */
int fbf_power_rehold_runs(fbf_power *p);

/* power_wake.c: the waking rule (power.h, "Waking"), before the pass,
 * when jobs wait. -ENOMEM. */
int fbf_power_wake_for_waiting(fbf_power *p, fbf_engine *e, double now);

#endif
