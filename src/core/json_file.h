/* json_file.h - JSON metadata files (atlas meta.json, bcolz __attrs__,
 * __rootdirs__, meta/storage, meta/sizes) as jansson trees, parsed and
 * written back as text by our own code, never by jansson's, whose number
 * handling follows the host's locale (see json_file.c). Errors name the
 * file and the character offset. Kept apart from json.c so that only the
 * readers that read JSON files need jansson. */
#ifndef DS_JSON_FILE_H
#define DS_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Parse p[0..n) as one JSON value of any type (strings may hold U+0000; a
 * repeated object key, an integer past int64 or a real past double are
 * errors). Errors name `path` and the position ("PATH: invalid JSON at
 * character N: ..."; an empty input is "PATH: invalid JSON: empty file").
 * NULL with *err on failure. */
json_t *ds_json_parse(const uint8_t *p, size_t n, const char *path, char **err);
/* The file `path` parsed as by ds_json_parse. */
json_t *ds_json_load_file(const char *path, char **err);
/* The file `path` parsed, and required to be a JSON object ("PATH: not a
 * JSON object" otherwise). */
json_t *ds_json_load_object(const char *path, char **err);
/* Compact JSON text of any value (object keys in their order, doubles as
 * their shortest round-trip text, whatever the locale), malloc'd and
 * NUL-terminated; NULL when out of memory. */
char *ds_json_dumps(const json_t *j);

#endif
