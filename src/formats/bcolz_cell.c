/* bcolz_cell.c - fast reading of scalar cells from a decompressed chunk
 * (see bcolz_cell.h). */
#include "bcolz_cell.h"

#include <math.h>
#include <string.h>

#include "core/value.h"

/* The fast kinds: native-order numbers and S text. */
enum { FAST_NONE, FAST_I8, FAST_I4, FAST_I2, FAST_I1, FAST_U4, FAST_U2, FAST_U1, FAST_B1,
       FAST_F8, FAST_F4, FAST_S };

int bcolz_fast_kind(const bcolz_dtype *dt, int flags) {
  if (dt->kind == 'S' && dt->ndim == 0 && !(flags & BCOLZ_BYTES_BLOB)) return FAST_S;
  int native = 1;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  native = dt->itemsize == 1;
#endif
  if (dt->ndim != 0 || dt->byteorder == '>' || !native) return FAST_NONE;
  switch (dt->kind) {
  case 'i':
    return dt->itemsize == 8 ? FAST_I8 : dt->itemsize == 4 ? FAST_I4
         : dt->itemsize == 2 ? FAST_I2 : FAST_I1;
  case 'b':
    return FAST_B1;
  case 'u':
    return dt->itemsize == 4 ? FAST_U4 : dt->itemsize == 2 ? FAST_U2
         : dt->itemsize == 1 ? FAST_U1 : FAST_NONE;
  case 'f':
    return dt->itemsize == 8 ? FAST_F8 : dt->itemsize == 4 ? FAST_F4 : FAST_NONE;
  default:
    return FAST_NONE;
  }
}

/* A float cell: NULL for NaN. */
static void set_float(bcolz_cell *out, double f) {
  out->kind = isnan(f) ? BCOLZ_NUM_NULL : BCOLZ_NUM_FLOAT;
  out->f = f;
}

void bcolz_fast_cell(int fast, const bcolz_dtype *dt, const uint8_t *p, uint64_t i,
                     bcolz_cell *out) {
  union { int64_t i8; int32_t i4; int16_t i2; int8_t i1; uint32_t u4; uint16_t u2;
          double f8; float f4; } v;
  out->kind = BCOLZ_NUM_INT;
  switch (fast) {
  case FAST_I8: memcpy(&v.i8, p + 8 * i, 8); out->i = v.i8; return;
  case FAST_I4: memcpy(&v.i4, p + 4 * i, 4); out->i = v.i4; return;
  case FAST_I2: memcpy(&v.i2, p + 2 * i, 2); out->i = v.i2; return;
  case FAST_I1: memcpy(&v.i1, p + i, 1); out->i = v.i1; return;
  case FAST_U4: memcpy(&v.u4, p + 4 * i, 4); out->i = v.u4; return;
  case FAST_U2: memcpy(&v.u2, p + 2 * i, 2); out->i = v.u2; return;
  case FAST_U1: out->i = p[i]; return;
  case FAST_B1: out->i = p[i] != 0; return;
  case FAST_F8: memcpy(&v.f8, p + 8 * i, 8); set_float(out, v.f8); return;
  case FAST_F4: memcpy(&v.f4, p + 4 * i, 4); set_float(out, v.f4); return;
  case FAST_S: { /* TEXT without trailing NULs; BYTES when not UTF-8 */
    size_t w = dt->itemsize, n = w;
    const uint8_t *e = p + w * i;
    while (n > 0 && e[n - 1] == 0) n--;
    out->kind = ds_utf8_valid(e, n) ? BCOLZ_CELL_TEXT : BCOLZ_CELL_BYTES;
    out->s = e;
    out->n = n;
    return;
  }
  default:
    out->kind = BCOLZ_NUM_NONE;
  }
}
