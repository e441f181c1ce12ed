/* json.h - JSON output atoms shared by value.c, npy.c and the format
 * decoders: strings, doubles and base64 bytes, by the rules of
 * docs/INTERFACE.md's Values section (bytes base64, non-finite floats null).
 * Depends on common.c and utf8.c only, so npy.c and value.c both sit on
 * it without calling each other. */
#ifndef DS_JSON_H
#define DS_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* Each returns 0, or -1 when out of memory. */
/* A double as JSON: shortest text that reads back to the same double, with
 * ".0" added to integral values ("1.0", as Python prints); null when not
 * finite. */
int ds_json_double(ds_buf *out, double d);
/* A float32 as JSON: the shortest text that reads back to the same float
 * (0.1f is "0.1", not 0.10000000149011612), ".0" added to integral values;
 * null when not finite. */
int ds_json_float(ds_buf *out, float f);
/* A JSON string literal (quotes included) for UTF-8 bytes: control characters
 * as \u00XX, invalid UTF-8 replaced by U+FFFD (one per maximal invalid
 * subsequence, like Python's errors='replace'). */
int ds_json_string(ds_buf *out, const uint8_t *p, size_t n);
/* A JSON string literal holding the standard base64 (with padding) of p. */
int ds_json_base64(ds_buf *out, const uint8_t *p, size_t n);

#endif
