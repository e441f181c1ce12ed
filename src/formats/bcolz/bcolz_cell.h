/* bcolz_cell.h - scalar cells read straight out of a decompressed chunk
 * into a plain number or text, for scans that show many rows of a column:
 * the kind of reading is chosen once per column (bcolz_fast_kind), then
 * each cell costs one load (bcolz_fast_cell is inline, so a scan's xColumn
 * makes no call per cell). Columns without a fast kind go through
 * bcolz_cell_number / bcolz_cell_value (bcolz.h). */
#ifndef DS_BCOLZ_CELL_H
#define DS_BCOLZ_CELL_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/utf8.h"
#include "formats/bcolz/bcolz.h"

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

/* The fast kinds: native-order numbers (int64 ... bool, float64/32) and S
 * text; BCOLZ_FAST_NONE (0) for every other column. */
enum {
  BCOLZ_FAST_NONE, BCOLZ_FAST_I8, BCOLZ_FAST_I4, BCOLZ_FAST_I2, BCOLZ_FAST_I1,
  BCOLZ_FAST_U4, BCOLZ_FAST_U2, BCOLZ_FAST_U1, BCOLZ_FAST_B1, BCOLZ_FAST_F8,
  BCOLZ_FAST_F4, BCOLZ_FAST_S
};

/* The fast reading of a column of dtype dt (flags: BCOLZ_BYTES_BLOB), or 0
 * when there is none (non-native byte order, arrays, other kinds). */
int bcolz_fast_kind(const bcolz_dtype *dt, int flags);

/* Cell i of a chunk of BCOLZ_FAST_I8 cells. */
static inline int64_t bcolz_fast_i8(const uint8_t *p, uint64_t i) {
  int64_t v;
  memcpy(&v, p + 8 * i, 8);
  return v;
}

/* Cell i of a chunk whose column has fast kind `fast` (non-zero) and
 * itemsize bytes per cell (used by BCOLZ_FAST_S only). */
static inline void bcolz_fast_cell(int fast, size_t itemsize, const uint8_t *p, uint64_t i,
                                   bcolz_cell *out) {
  union { int32_t i4; int16_t i2; int8_t i1; uint32_t u4; uint16_t u2;
          double f8; float f4; } v;
  out->kind = BCOLZ_NUM_INT;
  switch (fast) {
  case BCOLZ_FAST_I8: out->i = bcolz_fast_i8(p, i); return;
  case BCOLZ_FAST_I4: memcpy(&v.i4, p + 4 * i, 4); out->i = v.i4; return;
  case BCOLZ_FAST_I2: memcpy(&v.i2, p + 2 * i, 2); out->i = v.i2; return;
  case BCOLZ_FAST_I1: memcpy(&v.i1, p + i, 1); out->i = v.i1; return;
  case BCOLZ_FAST_U4: memcpy(&v.u4, p + 4 * i, 4); out->i = v.u4; return;
  case BCOLZ_FAST_U2: memcpy(&v.u2, p + 2 * i, 2); out->i = v.u2; return;
  case BCOLZ_FAST_U1: out->i = p[i]; return;
  case BCOLZ_FAST_B1: out->i = p[i] != 0; return;
  case BCOLZ_FAST_F8: memcpy(&v.f8, p + 8 * i, 8); out->f = v.f8; break;
  case BCOLZ_FAST_F4: memcpy(&v.f4, p + 4 * i, 4); out->f = v.f4; break;
  case BCOLZ_FAST_S: { /* TEXT without trailing NULs; BYTES when not UTF-8 */
    const uint8_t *e = p + itemsize * i;
    size_t n = bcolz_s_len(e, itemsize);
    out->kind = ds_utf8_valid(e, n) ? BCOLZ_CELL_TEXT : BCOLZ_CELL_BYTES;
    out->s = e;
    out->n = n;
    return;
  }
  default: out->kind = BCOLZ_NUM_NONE; return;
  }
  out->kind = isnan(out->f) ? BCOLZ_NUM_NULL : BCOLZ_NUM_FLOAT; /* floats: NaN is NULL */
}

#endif
