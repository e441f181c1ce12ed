/* info_rows.h - the rows of dataset_info (vtab/dataset_info.c) as the
 * formats' row builders (vtab/<fmt>_info.c, reached through the format
 * table) add them: `property, value` with the value as a JSON value. */
#ifndef DS_INFO_ROWS_H
#define DS_INFO_ROWS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* One row: the value as JSON (integer, real, string, null, or a container
 * given back as JSON text). */
typedef struct ds_info_row {
  const char *name;
  json_t *value;
} ds_info_row;

typedef struct ds_info {
  ds_info_row *rows;
  size_t n;
  int oom;
  uint64_t bytes;  /* bytes on disk of the dataset's files */
  json_t *columns; /* the declared columns, until ds_info_common takes them */
} ds_info;

/* Add a row, taking the reference to v (NULL v: SQL NULL). */
void ds_info_put(ds_info *l, const char *name, json_t *v);
/* The rows every format has, first: format, rows, shards, bytes_on_disk,
 * compression (taken), columns (l->columns, taken). */
void ds_info_common(ds_info *l, const char *format, uint64_t rows,
                    uint64_t shards, json_t *compression);
/* Free the rows and columns of l. */
void ds_info_free(ds_info *l);
/* An unsigned number as a JSON integer. */
json_t *ds_info_int(uint64_t v);
/* The per-shard rule: one value when all agree, else the array (takes a). */
json_t *ds_info_uniform(json_t *a);
/* JSON text as a value (JSON null when it is NULL or does not parse). */
json_t *ds_info_parse_json(const char *text);

#endif
