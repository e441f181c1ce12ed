/* value.c - what every format shares about a ds_value tree apart from its
 * JSON text (value_json.c): BIGINT text as int64, the nesting bound, the
 * search for unsupported objects. */
#include "value.h"

#include <stdint.h>
#include <stdlib.h>

/* ---------------------------------------------------------- integers */

int ds_bigint_to_i64(const uint8_t *p, size_t n, int64_t *out) {
  size_t i = 0;
  int neg = 0;
  if (n && p[0] == '-') { neg = 1; i = 1; }
  if (i == n) return -1;
  uint64_t v = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
  int fits = 1;
  for (; i < n; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    unsigned dgt = (unsigned)(p[i] - '0');
    if (!fits || v > (lim - dgt) / 10) fits = 0;
    else v = v * 10 + dgt;
  }
  if (!fits) return 0;
  *out = neg ? (v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v)
             : (int64_t)v;
  return 1;
}

/* Depth-first search for an unsupported object, bounded like the JSON. */
static const ds_value *find_unsupported(const ds_value *v, int depth) {
  if (v->type == DS_V_UNSUPPORTED) return v;
  if (v->type != DS_V_LIST && v->type != DS_V_TUPLE && v->type != DS_V_SET &&
      v->type != DS_V_MAP)
    return NULL;
  if (depth >= DS_VALUE_MAX_DEPTH) return NULL; /* JSON output reports it */
  size_t n = v->type == DS_V_MAP ? 2 * v->u.list.n : v->u.list.n;
  for (size_t i = 0; i < n; i++) {
    const ds_value *u = find_unsupported(&v->u.list.items[i], depth + 1);
    if (u) return u;
  }
  return NULL;
}

const ds_value *ds_value_find_unsupported(const ds_value *v) {
  return find_unsupported(v, 0);
}

int ds_value_check_depth(int depth, char **err) {
  if (depth > DS_VALUE_MAX_DEPTH)
    return ds_err(err, "value nested deeper than %d levels", DS_VALUE_MAX_DEPTH);
  return 0;
}
