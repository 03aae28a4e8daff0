/*
 * json_exact: number tokens paired with cJSON's number nodes (json_exact.h).
 *
 * cJSON reads a number as the longest run of [0-9+-.eE] that strtod
 * takes; in a text it parsed whole, the run after a '-' or a digit
 * outside a string is exactly that token, since what follows a number is
 * a delimiter. Letters outside strings start true, false or null, never a
 * number.
 */
#include "io/json_exact.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool num_char(char c)
{
    return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E';
}

static int push(fbf_json_exact *x, const char *at, size_t len)
{
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 16;
        const char **a = realloc(x->at, cap * sizeof *a);
        if (!a)
            return -ENOMEM;
        x->at = a;
        uint32_t *l = realloc(x->len, cap * sizeof *l);
        if (!l)
            return -ENOMEM;
        x->len = l;
        x->cap = cap;
    }
    x->at[x->n] = at;
    x->len[x->n++] = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
    return 0;
}

/* Pre-order: values in document order. Depth is bounded by cJSON's
 * nesting limit. */
static int number_nodes(cJSON *n, size_t *k, size_t total)
{
    for (; n; n = n->next) {
        if (cJSON_IsNumber(n)) {
            if (*k >= total || *k > INT32_MAX)
                return -EPROTO;
            n->valueint = (int)(*k)++;
        } else if (n->child && (cJSON_IsObject(n) || cJSON_IsArray(n))) {
            int rc = number_nodes(n->child, k, total);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

int fbf_json_exact_index(fbf_json_exact *x, const char *text, size_t len, cJSON *root,
                         fbf_error *err)
{
    x->n = 0;
    const char *p = text, *end = text + len;
    while (p < end) {
        char c = *p;
        if (c == '"') {
            for (p++; p < end && *p != '"'; p++)
                if (*p == '\\')
                    p++;
            p++;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            const char *s = p;
            while (p < end && num_char(*p))
                p++;
            if (push(x, s, (size_t)(p - s)) < 0)
                return fbf_errorf(err, -ENOMEM, "out of memory");
        } else {
            p++;
        }
    }
    size_t k = 0;
    cJSON one = *root;
    one.next = NULL; /* the root alone, not its siblings */
    int rc = number_nodes(&one, &k, x->n);
    if (cJSON_IsNumber(root))
        root->valueint = one.valueint;
    if (rc < 0 || k != x->n)
        return fbf_errorf(err, -EPROTO, "the text's numbers are not the parsed tree's");
    return 0;
}

int fbf_json_exact_u64(const fbf_json_exact *x, const cJSON *num, uint64_t max, uint64_t *out)
{
    if (!cJSON_IsNumber(num) || num->valueint < 0 || (size_t)num->valueint >= x->n)
        return -EDOM;
    const char *s = x->at[num->valueint];
    uint32_t n = x->len[num->valueint];
    if (n == 0 || (n > 1 && s[0] == '0'))
        return -EDOM;
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -EDOM;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -ERANGE;
        v = v * 10 + d;
    }
    if (v > max)
        return -ERANGE;
    *out = v;
    return 0;
}

void fbf_json_exact_fini(fbf_json_exact *x)
{
    free(x->at);
    free(x->len);
    *x = (fbf_json_exact){0};
}
