/* bagz_tfex.h - records=tfexample in the bagz CREATE form (docs/INTERFACE.md,
 * "Records that are protocol buffers"): one column per feature of the
 * tf.train.Example records, then HIDDEN record, shard and shard_index.
 *
 *   CREATE VIRTUAL TABLE temp.t USING bagz('train@*.bagz', records=tfexample
 *       [, infer=N | columns='label INTEGER, image BLOB'] [, bytes=blob|text]);
 *
 * The table keeps the schema (bagz_tfex); each cursor decodes the record
 * of its row once, on the first feature column a query reads, and keeps
 * it for the other columns of that row (bagz_tfex_row). */
#ifndef DS_BAGZ_TFEX_H
#define DS_BAGZ_TFEX_H

#include <stdint.h>

#include "core/options.h"
#include "vtab/bagz_options.h"
#include "core/schema.h"
#include "formats/bagz/bagz.h"
#include "decoders/tfexample.h"
#include "decoders/tfexample_write.h"
#include "sql/sqlite_api.h"


typedef struct bagz_tfex {
  int on;           /* records=tfexample */
  int bytes_text;   /* bytes=text */
  ds_schema schema; /* feature columns 0 .. schema.n-1 */
  ds_tfex_builder builder; /* writing: the record being encoded */
  ds_tfex check;    /* writing: a record given whole, decoded to check it */
} bagz_tfex;

/* Take records= and bytes= (bound in v) and check the combination:
 * records=tfexample only in the CREATE form (tvf 0), bytes=, infer= and
 * columns= (given in o) only with it. 0, or -1 with *err. */
int bagz_tfex_options(bagz_tfex *x, const bagz_tfex_opts *v, int tvf, const ds_options *o,
                      char **err);
/* The CREATE TABLE text of a records=tfexample table over reader r: the
 * feature columns (columns= or inferred from the first `infer` records),
 * then HIDDEN record, shard, shard_index under names no feature took.
 * malloc'd; NULL with *err. */
char *bagz_tfex_declaration(bagz_tfex *x, const bagz_tfex_opts *v, int writing,
                            const bagz_reader *r, uint64_t max_value_bytes, char **err);
void bagz_tfex_free(bagz_tfex *x);

/* Writing (INSERT): the record of one row, whose feature columns are
 * cols[0 .. schema.n-1] and whose record column is rec. A non-NULL rec is
 * the record itself (checked to be an Example); otherwise each non-NULL
 * feature becomes one: INTEGER an int64 list, REAL a float list, a BLOB
 * holding a bool/int/float .npy the list of its values, any other BLOB or
 * TEXT one bytes value. The record is appended to out. 0, or -1 with
 * *err. */
int bagz_tfex_encode_row(bagz_tfex *x, sqlite3_value **cols, sqlite3_value *rec,
                         ds_buf *out, char **err);

/* A cursor's decoded record. Zero-initialise. */
typedef struct bagz_tfex_row {
  ds_tfex ex;
  uint64_t row;    /* the row ex holds, when valid */
  int valid;
  size_t *hint;    /* per column: where its feature was last found */
} bagz_tfex_row;

/* Forget the decoded record (a new scan). */
static inline void bagz_tfex_row_reset(bagz_tfex_row *r) { r->valid = 0; }
void bagz_tfex_row_free(bagz_tfex_row *r);

/* Set ctx to feature column col of row g, whose record is rec[0..n)
 * (decoded here unless r holds row g already). `file` names the record's
 * file in errors ("<file>: record <g>: not a tf.train.Example: ..."). */
void bagz_tfex_result(const bagz_tfex *x, bagz_tfex_row *r, int col, uint64_t g,
                      const uint8_t *rec, size_t n, uint64_t max_value_bytes,
                      const char *file, sqlite3_context *ctx);

#endif
