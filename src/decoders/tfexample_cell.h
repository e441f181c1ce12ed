/* tfexample_cell.h - one feature of a tf.train.Example as one table cell
 * (the bagz CREATE form with records=tfexample, docs/INTERFACE.md "Records
 * that are protocol buffers"). No SQLite here: cells are ds_values.
 *
 *   missing feature, no list, empty list   NULL
 *   one int64 / float / bytes value        INT / FLOAT / BYTES
 *                                          (TEXT with bytes_text when UTF-8)
 *   2+ int64 or float values               NDARRAY: a .npy of '<i8' / '<f4',
 *                                          shape (n,)
 *   2+ bytes values                        LIST of BYTES (JSON base64 strings;
 *                                          TEXT items with bytes_text when
 *                                          UTF-8) */
#ifndef DS_TFEXAMPLE_CELL_H
#define DS_TFEXAMPLE_CELL_H

#include "core/value.h"
#include "tfexample.h"

/* The type ds_tfex_cell gives f (DS_V_NULL for a NULL cell), for column
 * inference with ds_schema_observe. f may be NULL (a missing feature). */
ds_vtype ds_tfex_cell_type(const ds_tfex_feature *f, int bytes_text);

/* The cell of feature f (NULL: missing) in *out; arrays and lists are
 * allocated in arena a (reset with the record). 0 ok, -1 with *err. */
int ds_tfex_cell(const ds_tfex_feature *f, int bytes_text, ds_arena *a,
                 ds_value *out, char **err);

#endif
