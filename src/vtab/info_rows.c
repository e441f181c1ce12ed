/* info_rows.c - dataset_info's rows and the helpers the formats' row
 * builders share (see info_rows.h). */
#include "info_rows.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/json_file.h"
#include "formats/format.h"

void ds_info_put(ds_info *l, const char *name, json_t *v) {
  ds_info_row *r = ds_grow(l->rows, l->n, sizeof *r);
  if (!r) {
    json_decref(v);
    l->oom = 1;
    return;
  }
  l->rows = r;
  r[l->n].name = name;
  r[l->n].value = v ? v : json_null();
  l->n++;
}

void ds_info_common(ds_info *l, const char *format, uint64_t rows,
                    uint64_t shards, json_t *compression) {
  json_t *columns = l->columns;
  l->columns = NULL;
  ds_info_put(l, "format", json_string(format));
  ds_info_put(l, "rows", ds_info_int(rows));
  ds_info_put(l, "shards", ds_info_int(shards));
  ds_info_put(l, "bytes_on_disk",
              l->bytes == DS_BYTES_UNKNOWN ? json_null() : ds_info_int(l->bytes));
  ds_info_put(l, "compression", compression);
  ds_info_put(l, "columns", columns);
}

void ds_info_free(ds_info *l) {
  for (size_t i = 0; i < l->n; i++) json_decref(l->rows[i].value);
  json_decref(l->columns);
  free(l->rows);
  memset(l, 0, sizeof *l);
}

json_t *ds_info_int(uint64_t v) { return json_integer((json_int_t)v); }

json_t *ds_info_uniform(json_t *a) {
  size_t n = json_array_size(a);
  if (n == 0) {
    json_decref(a);
    return json_null();
  }
  for (size_t i = 1; i < n; i++)
    if (!json_equal(json_array_get(a, 0), json_array_get(a, i))) return a;
  json_t *v = json_incref(json_array_get(a, 0));
  json_decref(a);
  return v;
}

json_t *ds_info_parse_json(const char *text) {
  char *why = NULL;
  const char *t = text ? text : "null";
  json_t *j = ds_json_parse((const uint8_t *)t, strlen(t), "dataset_info", &why);
  free(why);
  return j;
}
