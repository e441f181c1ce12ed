/* bcolz_replay.c - the rows of a bcolz table, a chunk at a time per
 * column (see bcolz_replay.h). */
#include "formats/bcolz/bcolz_replay.h"

#include <stdlib.h>

#include "core/common.h"
#include "formats/bcolz/bcolz.h"

/* One column's current chunk. */
typedef struct col_chunk {
  ds_buf buf;
  const uint8_t *p;
  uint64_t first, rows; /* rows [first, first + rows) are at p */
} col_chunk;

/* The cell of `row` in column c: its bytes at *p, *n. */
static int cell_at(bcolz_table *t, size_t c, col_chunk *cc, uint64_t row,
                   const uint8_t **p, size_t *n, char **err) {
  const bcolz_dtype *dt = bcolz_col_dtype(t, c);
  if (dt->kind == 'O') { /* one pickle per row */
    if (bcolz_row_atom(t, c, row, &cc->buf, err)) return -1;
    *p = cc->buf.data;
    *n = cc->buf.len;
    return 0;
  }
  if (!cc->p || row < cc->first || row >= cc->first + cc->rows) {
    uint64_t k = bcolz_col_chunk_of(t, c, row);
    cc->first = bcolz_col_chunk_first(t, c, k);
    if (bcolz_chunk(t, c, k, &cc->buf, &cc->p, &cc->rows, err)) return -1;
    if (row < cc->first || row >= cc->first + cc->rows)
      return ds_err(err, "%s: chunk %llu does not hold row %llu", bcolz_col_path(t, c),
                    (unsigned long long)k, (unsigned long long)row);
  }
  *p = cc->p + (row - cc->first) * dt->atom;
  *n = dt->atom;
  return 0;
}

int bcolz_each_row(const char *dir,
                   int (*fn)(void *ctx, const ds_value *row, char **err), void *ctx,
                   char **err) {
  bcolz_table *t;
  if (bcolz_open(dir, &t, err)) return -1;
  size_t nc = bcolz_ncols(t);
  col_chunk *cc = calloc(nc ? nc : 1, sizeof *cc);
  ds_value *row = calloc(nc ? nc : 1, sizeof *row);
  int rc = cc && row ? 0 : ds_err(err, "out of memory");
  for (uint64_t r = 0; rc == 0 && r < bcolz_nrows(t); r++) {
    ds_arena a = {0};
    for (size_t c = 0; rc == 0 && c < nc; c++) {
      const uint8_t *p = NULL;
      size_t n = 0;
      rc = cell_at(t, c, &cc[c], r, &p, &n, err);
      if (rc == 0)
        rc = bcolz_cell_value(bcolz_col_dtype(t, c), p, n, BCOLZ_BYTES_BLOB, &a, &row[c], err);
    }
    if (rc == 0) rc = fn(ctx, row, err);
    ds_arena_free(&a);
  }
  for (size_t c = 0; cc && c < nc; c++) ds_buf_free(&cc[c].buf);
  free(cc);
  free(row);
  bcolz_close(t);
  return rc;
}
