/*
 * options: the option strings of a campaign file (its `options` items,
 * spec.h) turned into fastbf-replay's words, and checked.
 *
 * `{seed}` in a string (an option string, or a trace's path) becomes the
 * cell's seed. An option string is split into words on blanks; '...' and
 * "..." keep their blanks in the word, the quotes themselves dropped. The
 * options the campaign sets itself for every cell (--out,
 * --policy, --reservation-depth, --nb-res, --max-jobs), and those that
 * would put another scheduler in place of the in-process one
 * (--scheduler, --endpoint, --edc-library), are refused, as is any unique
 * prefix of them that getopt_long would take.
 *
 * Errors: a negative errno with one line in the fbf_error.
 */
#ifndef FBF_CAMPAIGN_OPTIONS_H
#define FBF_CAMPAIGN_OPTIONS_H

#include <stddef.h>

#include "engine/error.h"

/* s with every "{seed}" replaced by seed (caller frees); NULL when out of
 * memory. */
char *fbf_cmp_expand_seed(const char *s, const char *seed);

/* Splits an option string into words (see above) into a fresh
 * NULL-terminated array (free each word, then the array; *n words).
 * -EINVAL for an unterminated quote, with the reason in err. */
int fbf_cmp_split_words(const char *s, char ***words, size_t *n, fbf_error *err);

/* Checks the options item opt, found at file:line, against the refused
 * options ({seed} stands for 0 while it is split). 0; -EINVAL with
 * "FILE:LINE: options: ..." naming the word and why; -ENOMEM. */
int fbf_cmp_check_options(const char *file, int line, const char *opt, fbf_error *err);

#endif
