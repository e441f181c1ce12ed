/* json_file.c - JSON metadata files parsed into jansson trees (see
 * json_file.h). The text is parsed by our own parser (value_from_json.c,
 * numbers by decimal.c) and the tree built with jansson's constructors:
 * jansson's own number parser follows the process's locale and fails an
 * assertion (aborting the host) where the decimal point is more than one
 * byte (ps_AF). For the same reason trees are written back as text here,
 * not with json_dumps. */
#include "json_file.h"

#include <string.h>

#include "common.h"
#include "json.h"
#include "mapped_file.h"
#include "value.h"

/* A parsed value as a new jansson value; NULL with *err on failure. */
static json_t *to_jansson(const ds_value *v, char **err) {
  switch (v->type) {
  case DS_V_NULL: return json_null();
  case DS_V_BOOL: return json_boolean(v->u.i);
  case DS_V_INT: return json_integer((json_int_t)v->u.i);
  case DS_V_FLOAT: {
    json_t *r = json_real(v->u.f);
    if (!r) ds_err(err, "real number out of range");
    return r;
  }
  case DS_V_TEXT: {
    json_t *s = json_stringn_nocheck((const char *)v->u.s.p, v->u.s.n);
    if (!s) ds_err(err, "out of memory");
    return s;
  }
  case DS_V_LIST: {
    json_t *a = json_array();
    for (size_t i = 0; a && i < v->u.list.n; i++) {
      json_t *x = to_jansson(&v->u.list.items[i], err);
      if (!x || json_array_append_new(a, x)) {
        json_decref(a);
        return NULL;
      }
    }
    if (!a && err && !*err) ds_err(err, "out of memory");
    return a;
  }
  case DS_V_MAP: {
    json_t *o = json_object();
    for (size_t i = 0; o && i < v->u.list.n; i++) {
      const ds_value *k = &v->u.list.items[2 * i];
      json_t *x = to_jansson(&v->u.list.items[2 * i + 1], err);
      if (!x || json_object_setn_new_nocheck(o, (const char *)k->u.s.p, k->u.s.n, x)) {
        json_decref(o);
        return NULL;
      }
    }
    if (!o && err && !*err) ds_err(err, "out of memory");
    return o;
  }
  case DS_V_UINT:
    ds_err(err, "integer out of range: %llu", (unsigned long long)v->u.u);
    return NULL;
  default: /* BIGINT: past int64 (as jansson) */
    ds_err(err, "integer out of range: %.*s", (int)(v->u.s.n > 40 ? 40 : v->u.s.n),
           (const char *)v->u.s.p);
    return NULL;
  }
}

/* Parse bytes; errors name path and the character offset. */
json_t *ds_json_parse(const uint8_t *p, size_t n, const char *path, char **err) {
  if (n == 0) {
    ds_err(err, "%s: invalid JSON: empty file", path);
    return NULL;
  }
  ds_arena a = {0};
  ds_value v;
  char *why = NULL;
  json_t *j = NULL;
  if (ds_value_from_json((const char *)p, n, &a, &v, &why) == 0) j = to_jansson(&v, &why);
  ds_arena_free(&a);
  if (!j) {
    const char *w = why ? why : "out of memory";
    /* the parser's errors start "invalid JSON at character N" already */
    int said = strncmp(w, "invalid JSON", 12) == 0;
    ds_err(err, "%s: %s%s", path, said ? "" : "invalid JSON: ", w);
  }
  free(why);
  return j;
}

/* Load a file (read into memory, never mapped) and parse it. */
json_t *ds_json_load_file(const char *path, char **err) {
  ds_file f;
  if (ds_file_load_index(&f, path, err)) return NULL;
  json_t *j = ds_json_parse(f.data, (size_t)f.size, path, err);
  ds_file_close(&f);
  return j;
}

/* Parse a file that must hold a JSON object. */
json_t *ds_json_load_object(const char *path, char **err) {
  json_t *j = ds_json_load_file(path, err);
  if (j && !json_is_object(j)) {
    json_decref(j);
    ds_err(err, "%s: not a JSON object", path);
    return NULL;
  }
  return j;
}

/* Append the compact JSON text of j; 0, or -1 when out of memory. */
static int dump(ds_buf *out, const json_t *j) {
  switch (json_typeof(j)) {
  case JSON_OBJECT: {
    const char *k;
    size_t kn;
    json_t *x;
    int first = 1;
    if (ds_buf_puts(out, "{")) return -1;
    json_object_keylen_foreach((json_t *)j, k, kn, x) {
      if ((!first && ds_buf_puts(out, ",")) || ds_json_string(out, (const uint8_t *)k, kn) ||
          ds_buf_puts(out, ":") || dump(out, x))
        return -1;
      first = 0;
    }
    return ds_buf_puts(out, "}");
  }
  case JSON_ARRAY:
    if (ds_buf_puts(out, "[")) return -1;
    for (size_t i = 0; i < json_array_size(j); i++)
      if ((i && ds_buf_puts(out, ",")) || dump(out, json_array_get(j, i))) return -1;
    return ds_buf_puts(out, "]");
  case JSON_STRING:
    return ds_json_string(out, (const uint8_t *)json_string_value(j), json_string_length(j));
  case JSON_INTEGER: return ds_buf_printf(out, "%lld", (long long)json_integer_value(j));
  case JSON_REAL: return ds_json_double(out, json_real_value(j));
  case JSON_TRUE: return ds_buf_puts(out, "true");
  case JSON_FALSE: return ds_buf_puts(out, "false");
  default: return ds_buf_puts(out, "null");
  }
}

/* Compact JSON text of any value, NUL-terminated; NULL when out of memory. */
char *ds_json_dumps(const json_t *j) {
  ds_buf b = {0};
  if (dump(&b, j) || ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    return NULL;
  }
  return (char *)b.data;
}
