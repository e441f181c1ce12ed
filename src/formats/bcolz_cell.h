/* bcolz_cell.h - scalar cells read straight out of a decompressed chunk
 * into a plain number or text, for scans that show many rows of a column:
 * the kind of reading is chosen once per column (bcolz_fast_kind), then
 * each cell costs one load. Columns without a fast kind go through
 * bcolz_cell_number / bcolz_cell_value (bcolz.h). */
#ifndef DS_BCOLZ_CELL_H
#define DS_BCOLZ_CELL_H

#include <stddef.h>
#include <stdint.h>

#include "formats/bcolz.h"

/* What bcolz_fast_cell gives: BCOLZ_NUM_INT (i), BCOLZ_NUM_FLOAT (f),
 * BCOLZ_NUM_NULL (a NaN), or an S cell without its trailing NULs as
 * BCOLZ_CELL_TEXT (valid UTF-8) or BCOLZ_CELL_BYTES (s, n). */
#define BCOLZ_CELL_TEXT 5
#define BCOLZ_CELL_BYTES 6
typedef struct bcolz_cell {
  int kind;
  int64_t i;
  double f;
  const uint8_t *s;
  size_t n;
} bcolz_cell;

/* The fast reading of a column of dtype dt (flags: BCOLZ_BYTES_BLOB), or 0
 * when there is none (non-native byte order, arrays, other kinds). */
int bcolz_fast_kind(const bcolz_dtype *dt, int flags);
/* Cell i of a chunk whose column has fast kind `fast` (non-zero). */
void bcolz_fast_cell(int fast, const bcolz_dtype *dt, const uint8_t *chunk, uint64_t i,
                     bcolz_cell *out);

#endif
