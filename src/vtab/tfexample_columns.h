/* tfexample_columns.h - records=tfexample in the CREATE form of a module
 * whose rows are records (docs/INTERFACE.md, "Records that are protocol
 * buffers"): one column per feature of the tf.train.Example records, then
 * HIDDEN record, shard and shard_index. A layer over any source of
 * records (ds_record_source: bagz today, TFRecord next): the module gives
 * the records, this file the columns.
 *
 *   CREATE VIRTUAL TABLE temp.t USING bagz('train@*.bagz', records=tfexample
 *       [, infer=N | columns='label INTEGER, image BLOB'] [, bytes=blob|text]);
 *
 * The table keeps the schema (ds_tfex_columns); each cursor decodes the
 * record of its row once, on the first feature column a query reads, and
 * keeps it for the other columns of that row (ds_tfex_columns_row). */
#ifndef DS_TFEXAMPLE_COLUMNS_H
#define DS_TFEXAMPLE_COLUMNS_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/options.h"
#include "core/schema.h"
#include "decoders/tfexample.h"
#include "decoders/tfexample_schema.h"
#include "decoders/tfexample_write.h"
#include "sql/sqlite_api.h"

/* records=, bytes=, infer=, columns=: the options of this form (besides
 * the module's own), one spec each; a module binds them into its options
 * struct (bagz: bagz_opts.tfex) and passes them here. */
typedef struct ds_tfex_columns_opts {
  int64_t records, bytes, infer;
  const char *columns;
} ds_tfex_columns_opts;
extern const ds_opt_spec ds_tfex_columns_specs[];

/* The records of a dataset, as inference reads them: count, and record i
 * (get(ctx, i, ...): *p valid until the next call; bagz: bagz_records). */
typedef struct ds_record_source {
  uint64_t count;
  ds_tfex_record_fn get;
  void *ctx;
} ds_record_source;

typedef struct ds_tfex_columns {
  int on;           /* records=tfexample */
  int bytes_text;   /* bytes=text */
  ds_schema schema; /* feature columns 0 .. schema.n-1 */
  ds_tfex_builder builder; /* writing: the record being encoded */
  ds_tfex check;    /* writing: a record given whole, decoded to check it */
} ds_tfex_columns;

/* Take records= and bytes= (bound in v) and check the combination:
 * records=tfexample only in the CREATE form (tvf 0), bytes=, infer= and
 * columns= (given in o) only with it. 0, or -1 with *err. */
int ds_tfex_columns_options(ds_tfex_columns *x, const ds_tfex_columns_opts *v, int tvf,
                            const ds_options *o, char **err);
/* The CREATE TABLE text of a records=tfexample table over the records of
 * src: the feature columns (columns= or inferred from the first `infer`
 * records), then HIDDEN record, shard, shard_index under names no feature
 * took. malloc'd; NULL with *err. */
char *ds_tfex_columns_declaration(ds_tfex_columns *x, const ds_tfex_columns_opts *v,
                                  int writing, const ds_record_source *src,
                                  uint64_t max_value_bytes, char **err);
void ds_tfex_columns_free(ds_tfex_columns *x);

/* Writing (INSERT): the record of one row, whose feature columns are
 * cols[0 .. schema.n-1] and whose record column is rec. A non-NULL rec is
 * the record itself (checked to be an Example); otherwise each non-NULL
 * feature becomes one: INTEGER an int64 list, REAL a float list, a BLOB
 * holding a bool/int/float .npy the list of its values, any other BLOB or
 * TEXT one bytes value. The record is appended to out. 0, or -1 with
 * *err. */
int ds_tfex_columns_encode_row(ds_tfex_columns *x, sqlite3_value **cols,
                               sqlite3_value *rec, ds_buf *out, char **err);

/* A cursor's decoded record. Zero-initialise. */
typedef struct ds_tfex_columns_row {
  ds_tfex ex;
  uint64_t row;    /* the row ex holds, when valid */
  int valid;
  size_t *hint;    /* per column: where its feature was last found */
} ds_tfex_columns_row;

/* Forget the decoded record (a new scan). */
static inline void ds_tfex_columns_row_reset(ds_tfex_columns_row *r) { r->valid = 0; }
void ds_tfex_columns_row_free(ds_tfex_columns_row *r);

/* Set ctx to feature column col of row g, whose record is rec[0..n)
 * (decoded here unless r holds row g already). `file` names the record's
 * file in errors ("module: <file>: record <g>: not a tf.train.Example:
 * ..."). */
void ds_tfex_columns_result(const ds_tfex_columns *x, ds_tfex_columns_row *r,
                            int col, uint64_t g, const uint8_t *rec, size_t n,
                            uint64_t max_value_bytes, const char *module,
                            const char *file, sqlite3_context *ctx);

#endif
