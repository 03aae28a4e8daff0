/*
 * registry: the policies fastbf ships, by name.
 *
 * "fcfs", "easy" and "conservative" name the policies of
 * scheduling-semantics.md; easy and conservative are the backfilling base
 * with a default reservation depth of 1 and unlimited. A new policy is one
 * file plus one line in registry.c.
 */
#ifndef FBF_POLICY_REGISTRY_H
#define FBF_POLICY_REGISTRY_H

#include <stdint.h>

#include "engine/engine.h"

typedef struct fbf_policy_entry {
    const char *name;
    const fbf_policy_ops *ops;
    int64_t default_depth; /* reservation depth used unless overridden */
    const char *summary;
} fbf_policy_entry;

/* NULL if no policy has that name. */
const fbf_policy_entry *fbf_policy_lookup(const char *name);

/* NULL-terminated by an entry whose name is NULL. */
const fbf_policy_entry *fbf_policy_list(void);

#endif
