/* bcolz_meta.c - bcolz attributes and Blosc flags in listable form (see
 * bcolz_meta.h). */
#include "bcolz_meta.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/json_file.h"

int bcolz_attrs_each(const char *json, const char *column,
                     int (*fn)(void *ctx, const char *name, const char *value),
                     void *ctx, char **err) {
  char *why = NULL;
  json_t *o = ds_json_parse((const uint8_t *)json, strlen(json), "__attrs__", &why);
  free(why);
  if (!o || !json_is_object(o)) {
    json_decref(o);
    return ds_err(err, "__attrs__%s%s is not a JSON object", column ? " of " : "",
                  column ? column : "");
  }
  const char *k;
  json_t *x;
  int rc = 0;
  json_object_foreach(o, k, x) {
    char *text = ds_json_dumps(x);
    rc = text ? fn(ctx, k, text) : ds_err(err, "out of memory");
    free(text);
    if (rc) break;
  }
  json_decref(o);
  return rc;
}

void bcolz_blosc_flags(unsigned flags, const char **codec, const char **shuffle,
                       int *memcpyed) {
  static const char *const names[] = {"blosclz", "lz4", "snappy", "zlib", "zstd"};
  *codec = (flags >> 5) < 5 ? names[flags >> 5] : "unknown"; /* bits 5-7; lz4 also lz4hc */
  *shuffle = flags & 0x4 ? "bit" : flags & 0x1 ? "byte" : "none";
  *memcpyed = (flags & 0x2) != 0;
}
