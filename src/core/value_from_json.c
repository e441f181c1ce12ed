/* value_from_json.c - JSON text into the shared value model (the reverse
 * of ds_value_json), with jansson: objects become MAPs with TEXT keys in
 * their written order, arrays LISTs, integers INT, other numbers FLOAT,
 * strings TEXT (U+0000 allowed), true/false BOOL, null NULL. A repeated
 * object key is an error. Writers use it for JSON columns. */
#include <jansson.h>
#include <string.h>

#include "value.h"

/* Convert one jansson node (depth-limited) into v, allocating in a. */
static int convert(json_t *j, ds_arena *a, ds_value *v, int depth, char **err) {
  if (depth > DS_VALUE_MAX_DEPTH)
    return ds_err(err, "JSON nested deeper than %d levels", DS_VALUE_MAX_DEPTH);
  memset(v, 0, sizeof *v);
  switch (json_typeof(j)) {
    case JSON_NULL: v->type = DS_V_NULL; return 0;
    case JSON_TRUE: v->type = DS_V_BOOL; v->u.i = 1; return 0;
    case JSON_FALSE: v->type = DS_V_BOOL; v->u.i = 0; return 0;
    case JSON_INTEGER: v->type = DS_V_INT; v->u.i = json_integer_value(j); return 0;
    case JSON_REAL: v->type = DS_V_FLOAT; v->u.f = json_real_value(j); return 0;
    case JSON_STRING: {
      size_t n = json_string_length(j);
      uint8_t *p = ds_arena_alloc(a, n + 1);
      if (!p) return ds_arena_fail(a, err);
      memcpy(p, json_string_value(j), n);
      v->type = DS_V_TEXT;
      v->u.s.p = p;
      v->u.s.n = n;
      return 0;
    }
    case JSON_ARRAY: {
      size_t n = json_array_size(j);
      ds_value *items = ds_arena_alloc(a, (n ? n : 1) * sizeof *items);
      if (!items) return ds_arena_fail(a, err);
      for (size_t i = 0; i < n; i++)
        if (convert(json_array_get(j, i), a, &items[i], depth + 1, err)) return -1;
      v->type = DS_V_LIST;
      v->u.list.items = items;
      v->u.list.n = n;
      return 0;
    }
    case JSON_OBJECT: {
      size_t n = json_object_size(j), i = 0;
      ds_value *items = ds_arena_alloc(a, (n ? 2 * n : 1) * sizeof *items);
      if (!items) return ds_arena_fail(a, err);
      const char *k;
      size_t klen;
      json_t *val;
      json_object_keylen_foreach(j, k, klen, val) {
        uint8_t *p = ds_arena_alloc(a, klen + 1);
        if (!p) return ds_arena_fail(a, err);
        memcpy(p, k, klen);
        items[2 * i] = (ds_value){.type = DS_V_TEXT, .u.s = {p, klen}};
        if (convert(val, a, &items[2 * i + 1], depth + 1, err)) return -1;
        i++;
      }
      v->type = DS_V_MAP;
      v->u.list.items = items;
      v->u.list.n = n;
      return 0;
    }
  }
  return ds_err(err, "unknown JSON node");
}

int ds_value_from_json(const char *text, size_t n, ds_arena *a, ds_value *out,
                       char **err) {
  json_error_t e;
  json_t *j = json_loadb(text, n, JSON_DECODE_ANY | JSON_ALLOW_NUL |
                                      JSON_REJECT_DUPLICATES, &e);
  if (!j)
    return ds_err(err, "invalid JSON at character %d: %s", e.position, e.text);
  int rc = convert(j, a, out, 0, err);
  json_decref(j);
  return rc;
}
