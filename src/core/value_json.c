/* value_json.c - JSON text for a ds_value tree (docs/INTERFACE.md, "Values");
 * the JSON atoms (strings, doubles, base64) are json.c's, UTF-8 is utf8.c's,
 * NDARRAY lists npy.c's (which is why this is not value.c: npy.h includes
 * value.h, and value.c includes nothing of npy).
 *
 * Output is compact JSON ("[1,2]", "{"a":1}"). Rules:
 *   NULL -> null, BOOL -> true/false, INT/UINT/BIGINT -> exact decimal,
 *   FLOAT -> shortest round-trip text, "1.0" for integral values, null when
 *   not finite; TEXT -> string (invalid UTF-8 replaced by U+FFFD);
 *   BYTES -> base64 string; LIST/TUPLE/SET -> array; MAP -> object;
 *   NDARRAY -> nested lists (ds_npy_to_json); COMPLEX -> [re, im].
 * Map keys: TEXT keys as they are, BYTES keys as their base64 text, any other
 * key as its own JSON text ({"1": ..}, {"[1,2]": ..}, {"null": ..}). */
#include "value_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "npy.h"

/* A BIGINT as a JSON number: its digits without leading zeros. */
static int json_bigint(ds_buf *out, const ds_value *v, char **err) {
  const uint8_t *p = v->u.s.p;
  size_t n = v->u.s.n;
  int64_t dummy;
  if (ds_bigint_to_i64(p, n, &dummy) < 0)
    return ds_err(err, "invalid big integer text");
  int neg = p[0] == '-';
  size_t i = (size_t)neg;
  while (i + 1 < n && p[i] == '0') i++;
  if (neg && !(n - i == 1 && p[i] == '0') && ds_buf_append(out, "-", 1))
    return ds_err(err, "out of memory");
  if (ds_buf_append(out, p + i, n - i)) return ds_err(err, "out of memory");
  return 0;
}

/* ---------------------------------------------------------- the tree */

static int json_value(ds_buf *out, const ds_value *v, int depth, char **err);

/* Items of a LIST/TUPLE/SET as a JSON array. */
static int json_array(ds_buf *out, const ds_value *v, int depth, char **err) {
  if (ds_buf_append(out, "[", 1)) return ds_err(err, "out of memory");
  for (size_t i = 0; i < v->u.list.n; i++) {
    if (i && ds_buf_append(out, ",", 1)) return ds_err(err, "out of memory");
    if (json_value(out, &v->u.list.items[i], depth + 1, err)) return -1;
  }
  if (ds_buf_append(out, "]", 1)) return ds_err(err, "out of memory");
  return 0;
}

/* A map key as a JSON string: text as is, bytes as base64, anything else
 * as the string of its JSON text. That text is held to the room left in
 * out (its escaped form is longer still): keys nested in keys double
 * their backslashes at every level, so without the bound a hostile value
 * of a few hundred bytes asks for 2^depth bytes. */
static int json_key(ds_buf *out, const ds_value *k, int depth, char **err) {
  int rc;
  if (k->type == DS_V_TEXT) rc = ds_json_string(out, k->u.s.p, k->u.s.n);
  else if (k->type == DS_V_BYTES) rc = ds_json_base64(out, k->u.s.p, k->u.s.n);
  else {
    ds_buf tmp = {0};
    if (out->max) tmp.max = out->max > out->len ? out->max - out->len : 1;
    if (json_value(&tmp, k, depth + 1, err)) {
      if (tmp.over) out->over = 1;
      ds_buf_free(&tmp);
      return -1;
    }
    rc = ds_json_string(out, tmp.data, tmp.len);
    ds_buf_free(&tmp);
  }
  return rc ? ds_err(err, "out of memory") : 0;
}

/* A MAP (n pairs stored as 2n items) as a JSON object. */
static int json_map(ds_buf *out, const ds_value *v, int depth, char **err) {
  if (ds_buf_append(out, "{", 1)) return ds_err(err, "out of memory");
  for (size_t i = 0; i < v->u.list.n; i++) {
    if (i && ds_buf_append(out, ",", 1)) return ds_err(err, "out of memory");
    if (json_key(out, &v->u.list.items[2 * i], depth, err)) return -1;
    if (ds_buf_append(out, ":", 1)) return ds_err(err, "out of memory");
    if (json_value(out, &v->u.list.items[2 * i + 1], depth + 1, err))
      return -1;
  }
  if (ds_buf_append(out, "}", 1)) return ds_err(err, "out of memory");
  return 0;
}

/* An NDARRAY (a whole .npy blob) as nested lists. */
static int json_ndarray(ds_buf *out, const ds_value *v, char **err) {
  ds_npy a;
  if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, err) ||
      ds_npy_to_json(&a, out, err)) {
    ds_err_prefix(err, "ndarray");
    return -1;
  }
  return 0;
}

/* Scalars that cannot fail except by running out of memory. */
static int json_scalar(ds_buf *out, const ds_value *v) {
  switch (v->type) {
    case DS_V_NULL: return ds_buf_puts(out, "null");
    case DS_V_BOOL: return ds_buf_puts(out, v->u.i ? "true" : "false");
    case DS_V_INT: return ds_buf_printf(out, "%lld", (long long)v->u.i);
    case DS_V_UINT:
      return ds_buf_printf(out, "%llu", (unsigned long long)v->u.u);
    case DS_V_FLOAT: return ds_json_double(out, v->u.f);
    case DS_V_TEXT: return ds_json_string(out, v->u.s.p, v->u.s.n);
    case DS_V_BYTES: return ds_json_base64(out, v->u.s.p, v->u.s.n);
    case DS_V_COMPLEX:
      if (ds_buf_append(out, "[", 1) || ds_json_double(out, v->u.c.re) ||
          ds_buf_append(out, ",", 1) || ds_json_double(out, v->u.c.im))
        return -1;
      return ds_buf_append(out, "]", 1);
    default: return -1;
  }
}

/* One value at nesting level `depth`. */
static int json_value(ds_buf *out, const ds_value *v, int depth, char **err) {
  switch (v->type) {
    case DS_V_LIST:
    case DS_V_TUPLE:
    case DS_V_SET:
    case DS_V_MAP:
      /* a container at depth d is nesting level d + 1 */
      if (depth >= DS_VALUE_MAX_DEPTH)
        return ds_err(err, "value nested deeper than %d levels",
                      DS_VALUE_MAX_DEPTH);
      return v->type == DS_V_MAP ? json_map(out, v, depth, err)
                                 : json_array(out, v, depth, err);
    case DS_V_BIGINT: return json_bigint(out, v, err);
    case DS_V_NDARRAY: return json_ndarray(out, v, err);
    case DS_V_UNSUPPORTED:
      if (ds_buf_puts(out, "{\"$unsupported\":") ||
          ds_json_string(out, v->u.s.p, v->u.s.n) || ds_buf_puts(out, "}"))
        return ds_err(err, "out of memory");
      return 0;
    case DS_V_NULL:
    case DS_V_BOOL:
    case DS_V_INT:
    case DS_V_UINT:
    case DS_V_FLOAT:
    case DS_V_TEXT:
    case DS_V_BYTES:
    case DS_V_COMPLEX:
      return json_scalar(out, v) ? ds_err(err, "out of memory") : 0;
  }
  return ds_err(err, "unknown value type %d", (int)v->type);
}

int ds_value_json_capped(ds_buf *out, const ds_value *v, uint64_t max,
                         const ds_arena *values, char **err) {
  size_t used = values ? values->total : 0;
  size_t room = !max ? 0 : max > used ? (size_t)(max - used) : 1;
  if (room && (!out->max || room < out->max)) out->max = room;
  out->over = 0;
  if (ds_value_json(out, v, err) == 0) return 0;
  if (out->over && max)
    ds_err(err, "JSON text of more than %zu bytes%s: more than max_value_bytes=%llu", room,
           used ? " (on top of the decoded values)" : "", (unsigned long long)max);
  return -1;
}

int ds_value_json(ds_buf *out, const ds_value *v, char **err) {
  size_t start = out->len;
  if (json_value(out, v, 0, err)) {
    out->len = start;
    return -1;
  }
  return 0;
}
