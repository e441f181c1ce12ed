/* json_file.c - JSON metadata files parsed with jansson (see
 * json_file.h). */
#include "json_file.h"

#include "common.h"
#include "mapped_file.h"

/* Parse bytes with jansson; errors name path, line and column. */
json_t *ds_json_parse(const uint8_t *p, size_t n, size_t flags,
                      const char *path, char **err) {
  if (n == 0) {
    ds_err(err, "%s: invalid JSON: empty file", path);
    return NULL;
  }
  json_error_t e;
  json_t *j = json_loadb((const char *)p, n, flags, &e);
  if (!j)
    ds_err(err, "%s: invalid JSON (line %d, column %d): %s", path, e.line,
           e.column, e.text);
  return j;
}

/* Load a file (read into memory, never mapped) and parse it. */
json_t *ds_json_load_file(const char *path, size_t flags, char **err) {
  ds_file f;
  if (ds_file_load(&f, path, err)) return NULL;
  json_t *j = ds_json_parse(f.data, (size_t)f.size, flags, path, err);
  ds_file_close(&f);
  return j;
}

/* Parse a file that must hold a JSON object. */
json_t *ds_json_load_object(const char *path, size_t flags, char **err) {
  json_t *j = ds_json_load_file(path, flags, err);
  if (j && !json_is_object(j)) {
    json_decref(j);
    ds_err(err, "%s: not a JSON object", path);
    return NULL;
  }
  return j;
}
