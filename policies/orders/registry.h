/*
 * registry: the orders over waiting jobs fastbf ships (scheduling-
 * semantics.md D9), by name, for --order and --backfill-order. An order
 * is one file of this folder, defining fbf_order_<name>, plus one line in
 * registry.c.
 */
#ifndef FBF_ORDER_REGISTRY_H
#define FBF_ORDER_REGISTRY_H

#include "engine/order_api.h"

/* NULL if no order has that name. */
const fbf_order_ops *fbf_order_lookup(const char *name);

/* Every order, the default (submit) first, NULL-terminated. */
const fbf_order_ops *const *fbf_order_list(void);

/* "submit, sjf, ..." into buf (for messages); returns buf. */
const char *fbf_order_names(char *buf, size_t cap);

#endif
