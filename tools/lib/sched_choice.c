/*
 * sched_choice: --order, --backfill-order, --estimate, --preset (see
 * sched_choice.h).
 */
#include "tools/lib/sched_choice.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "engine/order_api.h"
#include "policies/orders/registry.h"

static int order_of(const char *opt, const char *name, const fbf_order_ops **out,
                    fbf_error *err)
{
    if (!name)
        return 0;
    if (!(*out = fbf_order_lookup(name))) {
        char names[160];
        return fbf_errorf(err, -EINVAL, "%s: unknown order '%s' (%s)", opt, name,
                          fbf_order_names(names, sizeof names));
    }
    return 0;
}

int fbf_sched_choice_apply(const fbf_sched_choice *c, fbf_engine_config *cfg,
                           const char **policy, fbf_error *err)
{
    const char *estimate = c->estimate, *backfill = c->backfill_order;
    if (c->preset) {
        if (strcmp(c->preset, "easy++") != 0)
            return fbf_errorf(err, -EINVAL, "--preset: unknown preset '%s' (easy++)", c->preset);
        if (!c->policy)
            *policy = "easy";
        estimate = estimate ? estimate : "predict";
        backfill = backfill ? backfill : "sjf";
    }
    int rc = order_of("--order", c->order, &cfg->order, err);
    if (rc == 0)
        rc = order_of("--backfill-order", backfill, &cfg->backfill_order, err);
    if (rc < 0)
        return rc;
    if (estimate) {
        int k = fbf_estimate_lookup(estimate);
        if (k < 0)
            return fbf_errorf(err, -EINVAL,
                              "--estimate: unknown estimate '%s' (walltime, exact, predict)",
                              estimate);
        cfg->estimate = (fbf_estimate)k;
    }
    return 0;
}

void fbf_sched_choice_describe(const fbf_engine_config *cfg, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    if (!fbf_order_is_submit(cfg->order))
        len += (size_t)snprintf(buf + len, cap - len, ", order %s", cfg->order->name);
    if (cfg->backfill_order && cfg->backfill_order != cfg->order && len < cap)
        len += (size_t)snprintf(buf + len, cap - len, ", backfill order %s",
                                cfg->backfill_order->name);
    if (cfg->estimate != FBF_ESTIMATE_WALLTIME && len < cap)
        snprintf(buf + len, cap - len, ", estimate %s", fbf_estimate_name(cfg->estimate));
}

void fbf_sched_choice_usage(FILE *out, int indent)
{
    const fbf_order_ops *const *all = fbf_order_list();
    fprintf(out, "%*s--order NAME             queue order (D9): the head, who holds\n"
                 "%*s                         reservations, FCFS's order (default submit):\n",
            indent, "", indent, "");
    for (size_t i = 0; all[i]; i++)
        fprintf(out, "%*s                           %-9s %s\n", indent, "", all[i]->name,
                all[i]->summary);
    fprintf(out,
            "%*s--backfill-order NAME    the order EASY's scan and depth k's backfilling\n"
            "%*s                         consider the other jobs in (default: --order's)\n"
            "%*s--estimate NAME          what reservations plan with (D10): walltime\n"
            "%*s                         (default), exact (the delay profile forwarded on\n"
            "%*s                         submission, at most the walltime) or predict (the\n"
            "%*s                         user's last two run times, at most the walltime)\n"
            "%*s--preset easy++          --policy easy --estimate predict --backfill-order\n"
            "%*s                         sjf (EASY++); options given beside it win\n",
            indent, "", indent, "", indent, "", indent, "", indent, "", indent, "", indent, "",
            indent, "");
}
