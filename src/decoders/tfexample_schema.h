/* tfexample_schema.h - the columns of a table whose rows are
 * tf.train.Example records (bagz with records=tfexample): one per feature
 * name, in first-seen order over the first records, typed by the cells
 * they give (tfexample_cell.h). No SQLite here. */
#ifndef DS_TFEXAMPLE_SCHEMA_H
#define DS_TFEXAMPLE_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "core/schema.h"

/* Record i (i < count) of the dataset: 0 and p[0..n), or -1 with *err. */
typedef int (*ds_tfex_record_fn)(void *ctx, uint64_t i, const uint8_t **p,
                                 size_t *n, char **err);

/* Observe every feature of records 0 .. min(count, infer)-1 in s, with the
 * cell types ds_tfex_cell would give (bytes_text as there). max_value_bytes
 * caps each record's decoded memory. 0, or -1 with *err: a record that
 * cannot be read or is not a tf.train.Example (named by number, with the
 * reason), records that hold no feature at all (the table would have no
 * columns), out of memory. */
int ds_tfex_infer(ds_schema *s, uint64_t count, uint64_t infer,
                  ds_tfex_record_fn get, void *ctx, int bytes_text,
                  uint64_t max_value_bytes, char **err);

#endif
