/* bcolz_cell_fast.h - the bcolz writer's shortcut for the common cells:
 * a native-order integer, bool or float64 column given a value of its own
 * kind in range, an S column given text or bytes that fit. Each writes
 * the same bytes bcolz_cell_encode would; anything else (other dtypes,
 * other value types, values out of range, errors) is left to
 * bcolz_cell_encode. Knows no SQLite. */
#ifndef DS_BCOLZ_CELL_FAST_H
#define DS_BCOLZ_CELL_FAST_H

#include <stdint.h>
#include <string.h>

#include "core/value.h"
#include "formats/bcolz/bcolz.h"

/* What shortcut a column takes, kind and cell size as one code (a row
 * loop decides once per cell: bcolz_put_int). */
typedef enum bcolz_put {
  BCOLZ_PUT_NONE = 0,
  BCOLZ_PUT_I8,     /* i8 in the host's order: any int64 */
  BCOLZ_PUT_I4,     /* i4, u4 in the host's order: an integer in [lo, hi] */
  BCOLZ_PUT_I2,     /* i2, u2: the same */
  BCOLZ_PUT_I1,     /* i1, u1: the same */
  BCOLZ_PUT_B1,     /* bool: an integer (or DS_V_BOOL) 0 or 1 */
  BCOLZ_PUT_F8,     /* f8 in the host's order: DS_V_FLOAT */
  BCOLZ_PUT_S       /* S<n> scalar cells: DS_V_TEXT or DS_V_BYTES of at most n bytes */
} bcolz_put;

/* A column's shortcut and, for the integer codes, its range. */
typedef struct bcolz_fast {
  bcolz_put put;   /* BCOLZ_PUT_NONE: none */
  uint32_t size;   /* bytes per cell */
  int64_t lo, hi;  /* BCOLZ_PUT_I8 .. I1: the values the dtype holds */
} bcolz_fast;

/* The shortcut for cells of dtype dt (BCOLZ_PUT_NONE: none). */
void bcolz_fast_for(const bcolz_dtype *dt, bcolz_fast *out);

/* The cell for integer i of a column whose code is `put` (BCOLZ_PUT_I8 ..
 * BCOLZ_PUT_B1; a constant where the caller switches on the code, so each
 * case compiles to its own check and store) at out: 1, else 0 (out of the
 * column's range, nothing written). The same bytes as bcolz_fast_put_int. */
static inline int bcolz_put_int(const bcolz_fast *f, bcolz_put put, int64_t i, uint8_t *out) {
  if (put == BCOLZ_PUT_I8) {
    memcpy(out, &i, 8);
    return 1;
  }
  if (put == BCOLZ_PUT_B1) {
    if ((uint64_t)i > 1) return 0;
    out[0] = (uint8_t)i;
    return 1;
  }
  if (i < f->lo || i > f->hi) return 0;
  if (put == BCOLZ_PUT_I4) {
    uint32_t x = (uint32_t)i;
    memcpy(out, &x, 4);
  } else if (put == BCOLZ_PUT_I2) {
    uint16_t x = (uint16_t)i;
    memcpy(out, &x, 2);
  } else {
    out[0] = (uint8_t)i;
  }
  return 1;
}

/* The shortcut's cell for an integer (an integer code in range, or
 * BCOLZ_PUT_B1 of 0 or 1) at out: 1, else 0 (nothing written). */
static inline int bcolz_fast_put_int(const bcolz_fast *f, int64_t i, uint8_t *out) {
  switch (f->put) {
    case BCOLZ_PUT_I8: return bcolz_put_int(f, BCOLZ_PUT_I8, i, out);
    case BCOLZ_PUT_I4: return bcolz_put_int(f, BCOLZ_PUT_I4, i, out);
    case BCOLZ_PUT_I2: return bcolz_put_int(f, BCOLZ_PUT_I2, i, out);
    case BCOLZ_PUT_I1: return bcolz_put_int(f, BCOLZ_PUT_I1, i, out);
    case BCOLZ_PUT_B1: return bcolz_put_int(f, BCOLZ_PUT_B1, i, out);
    default: return 0;
  }
}

/* The shortcut's cell for a float64 (BCOLZ_PUT_F8) at out: 1, else 0. */
static inline int bcolz_fast_put_f8(const bcolz_fast *f, double d, uint8_t *out) {
  if (f->put != BCOLZ_PUT_F8) return 0;
  memcpy(out, &d, 8);
  return 1;
}

/* The cell for n bytes at p of a column whose code is BCOLZ_PUT_S (at
 * most size bytes, not ending in NUL: bcolz_cell_encode refuses those) at
 * out: 1, else 0. */
static inline int bcolz_put_s(const bcolz_fast *f, const uint8_t *p, size_t n, uint8_t *out) {
  if (n > f->size || (n && p[n - 1] == 0)) return 0;
  size_t z = f->size - n;
  /* up to 16 bytes in two overlapping fixed-size copies (no call) */
  if (n >= 8 && n <= 16) {
    memcpy(out, p, 8);
    memcpy(out + n - 8, p + n - 8, 8);
  } else if (n >= 4 && n < 8) {
    memcpy(out, p, 4);
    memcpy(out + n - 4, p + n - 4, 4);
  } else {
    for (size_t i = 0; i < n && i < 4; i++) out[i] = p[i];
    if (n > 16) memcpy(out + 4, p + 4, n - 4);
  }
  static const uint8_t zeros[16] = {0};
  if (z >= 8 && z <= 16) {
    memcpy(out + n, zeros, 8);
    memcpy(out + f->size - 8, zeros, 8);
  } else if (z >= 4 && z < 8) {
    memcpy(out + n, zeros, 4);
    memcpy(out + f->size - 4, zeros, 4);
  } else if (z < 4) {
    for (size_t i = n; i < f->size; i++) out[i] = 0;
  } else {
    memset(out + n, 0, z);
  }
  return 1;
}

/* The same for any column (BCOLZ_PUT_S only): 1, else 0. */
static inline int bcolz_fast_put_s(const bcolz_fast *f, const uint8_t *p, size_t n,
                                   uint8_t *out) {
  return f->put == BCOLZ_PUT_S && bcolz_put_s(f, p, n, out);
}

/* Write v as a cell at out when the shortcut applies: 1, else 0 (nothing
 * written; bcolz_cell_encode decides). */
static inline int bcolz_fast_put(const bcolz_fast *f, const ds_value *v, uint8_t *out) {
  switch (v->type) {
    case DS_V_INT: return bcolz_fast_put_int(f, v->u.i, out);
    case DS_V_BOOL: return f->put == BCOLZ_PUT_B1 && bcolz_fast_put_int(f, v->u.i, out);
    case DS_V_FLOAT: return bcolz_fast_put_f8(f, v->u.f, out);
    case DS_V_TEXT:
    case DS_V_BYTES: return bcolz_fast_put_s(f, v->u.s.p, v->u.s.n, out);
    default: return 0;
  }
}

#endif
