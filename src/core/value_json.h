/* value_json.h - JSON text for a ds_value tree (value_json.c), the rules
 * of the Values table of docs/INTERFACE.md. Apart from value.h because it
 * needs the .npy reader for NDARRAY values, and npy.h needs value.h. */
#ifndef DS_VALUE_JSON_H
#define DS_VALUE_JSON_H

#include <stdint.h>

#include "common.h"
#include "json.h" /* the JSON atoms, for the callers of ds_value_json */
#include "value.h"

/* JSON text of v appended to out. 0 ok, -1 with *err set (out is then left
 * as it was). */
int ds_value_json(ds_buf *out, const ds_value *v, char **err);
/* ds_value_json held to max_value_bytes (max, 0: none): the JSON text, plus
 * the decoded values it was made from (`values`, NULL when they do not
 * count), may not take more than max bytes; more is an error that says
 * so, found before the text grows past the cap. */
int ds_value_json_capped(ds_buf *out, const ds_value *v, uint64_t max,
                         const ds_arena *values, char **err);

#endif
