/* json_file.h - JSON metadata files read with jansson (atlas meta.json,
 * bcolz __attrs__, __rootdirs__, meta/storage, meta/sizes). Errors name the
 * file and the line and column. Kept apart from json.c so that only the
 * readers that read JSON files need jansson. */
#ifndef DS_JSON_FILE_H
#define DS_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Parse p[0..n) as JSON with jansson's decoding `flags`; errors name `path`
 * and the position ("PATH: invalid JSON (line L, column C): ..."; an empty
 * input is "PATH: invalid JSON: empty file"). NULL with *err on failure. */
json_t *ds_json_parse(const uint8_t *p, size_t n, size_t flags,
                      const char *path, char **err);

/* The file `path` parsed as by ds_json_parse. */
json_t *ds_json_load_file(const char *path, size_t flags, char **err);

/* The file `path` parsed, and required to be a JSON object ("PATH: not a
 * JSON object" otherwise). */
json_t *ds_json_load_object(const char *path, size_t flags, char **err);

#endif
