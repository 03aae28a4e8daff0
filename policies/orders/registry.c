/*
 * registry: order names -> ops tables (see registry.h). ORDERS lists
 * them once, the default first; each name expands to its declaration and
 * its table entry.
 */
#include "policies/orders/registry.h"

#include <stdio.h>
#include <string.h>

#define ORDERS(X)                                                                          \
    X(submit)                                                                              \
    X(sjf)                                                                                 \
    X(saf)                                                                                 \
    X(priority)                                                                            \
    X(lxf)                                                                                 \
    X(wfp3)                                                                                \
    /* one line per order, above this one */

#define DECLARE(n) extern const fbf_order_ops fbf_order_##n;
ORDERS(DECLARE)

#define ENTRY(n) &fbf_order_##n,
static const fbf_order_ops *const table[] = {ORDERS(ENTRY) NULL};

const fbf_order_ops *fbf_order_lookup(const char *name)
{
    for (size_t i = 0; table[i]; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

const fbf_order_ops *const *fbf_order_list(void) { return table; }

const char *fbf_order_names(char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; table[i] && len < cap; i++) {
        int w = snprintf(buf + len, cap - len, "%s%s", i ? ", " : "", table[i]->name);
        if (w < 0)
            break;
        len += (size_t)w;
    }
    return buf;
}
