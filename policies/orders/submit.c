/* submit: D1 itself, submission time then arrival; the default order. */
#include "engine/order_api.h"

const fbf_order_ops fbf_order_submit = {
    .name = "submit",
    .summary = "submission time, then arrival (D1, the default)",
};
