/* bcolz_cell.c - the choice of fast cell reading for a column (see
 * bcolz_cell.h; the reading itself is inline there). */
#include "bcolz_cell.h"

/* The fast kind of a dtype: scalar native-order numbers and S text (not
 * with BCOLZ_BYTES_BLOB: those cells go through the value model). */
int bcolz_fast_kind(const bcolz_dtype *dt, int flags) {
  if (dt->kind == 'S' && dt->ndim == 0 && !(flags & BCOLZ_BYTES_BLOB)) return BCOLZ_FAST_S;
  int native = 1;
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
  native = dt->itemsize == 1;
#endif
  if (dt->ndim != 0 || dt->byteorder == '>' || !native) return BCOLZ_FAST_NONE;
  switch (dt->kind) {
  case 'i':
    return dt->itemsize == 8 ? BCOLZ_FAST_I8 : dt->itemsize == 4 ? BCOLZ_FAST_I4
         : dt->itemsize == 2 ? BCOLZ_FAST_I2 : BCOLZ_FAST_I1;
  case 'b':
    return BCOLZ_FAST_B1;
  case 'u':
    return dt->itemsize == 4 ? BCOLZ_FAST_U4 : dt->itemsize == 2 ? BCOLZ_FAST_U2
         : dt->itemsize == 1 ? BCOLZ_FAST_U1 : BCOLZ_FAST_NONE;
  case 'f':
    return dt->itemsize == 8 ? BCOLZ_FAST_F8 : dt->itemsize == 4 ? BCOLZ_FAST_F4
                             : BCOLZ_FAST_NONE;
  default:
    return BCOLZ_FAST_NONE;
  }
}
