/*
 * json_strict: what fastbf refuses in a JSON text that cJSON accepts, so
 * that each message has one reading:
 *   - an object that names a member twice: cJSON keeps both, a look-up
 *     finds the first, and a streamed reading would keep the last;
 *   - a string holding \u0000: cJSON decodes it into a NUL byte, which
 *     ends the C string there ("w0!1\u0000garbage" would read as "w0!1").
 *
 * fbf_json_strict_text() scans a text for \u0000 escapes (an escaped
 * backslash before "u0000" is not one); fbf_json_strict_tree() checks a
 * parsed tree's objects for repeated names. Both cost one pass: the text
 * at memchr speed, the tree once per node (objects of more than 16
 * members are sorted, not compared pairwise).
 *
 * Errors: -EPROTO, one line: "duplicate key \"now\" (one member named
 * twice)", "duplicate key \"job_id\" in \"data\" (...)" when the object
 * is a member, "a string holds \u0000 (a NUL byte) near byte 41";
 * -ENOMEM (a large object's sort).
 */
#ifndef FBF_JSON_STRICT_H
#define FBF_JSON_STRICT_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "engine/error.h"

int fbf_json_strict_text(const char *text, size_t len, fbf_error *err);
int fbf_json_strict_tree(const cJSON *root, fbf_error *err);

/* Both, for a text and the tree parsed from it. */
int fbf_json_strict(const char *text, size_t len, const cJSON *root, fbf_error *err);

#endif
