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

/* What shortcut a column takes. */
typedef enum bcolz_fast_kind {
  BCOLZ_FAST_NONE = 0,
  BCOLZ_FAST_INT,   /* i1..i8, u1..u4 in the host's order: DS_V_INT in [lo, hi] */
  BCOLZ_FAST_BOOL,  /* b1: DS_V_INT or DS_V_BOOL of 0 or 1 */
  BCOLZ_FAST_F8,    /* f8 in the host's order: DS_V_FLOAT */
  BCOLZ_FAST_S      /* S<n> scalar cells: DS_V_TEXT or DS_V_BYTES of at most n bytes */
} bcolz_fast_kind;

/* A column's shortcut and, for BCOLZ_FAST_INT, its range. */
typedef struct bcolz_fast {
  bcolz_fast_kind kind;
  uint32_t size;   /* bytes per cell */
  int64_t lo, hi;  /* BCOLZ_FAST_INT: the values the dtype holds */
} bcolz_fast;

/* The shortcut for cells of dtype dt (kind BCOLZ_FAST_NONE: none). */
void bcolz_fast_for(const bcolz_dtype *dt, bcolz_fast *out);

/* The shortcut's cell for an integer (BCOLZ_FAST_INT in range, or
 * BCOLZ_FAST_BOOL of 0 or 1) at out: 1, else 0 (nothing written). */
static inline int bcolz_fast_put_int(const bcolz_fast *f, int64_t i, uint8_t *out) {
  if (f->kind == BCOLZ_FAST_BOOL) {
    if ((uint64_t)i > 1) return 0;
    out[0] = (uint8_t)i;
    return 1;
  }
  if (f->kind != BCOLZ_FAST_INT || i < f->lo || i > f->hi) return 0;
  switch (f->size) {
    case 8: memcpy(out, &i, 8); return 1;
    case 4: { int32_t x = (int32_t)i; memcpy(out, &x, 4); return 1; }
    case 2: { int16_t x = (int16_t)i; memcpy(out, &x, 2); return 1; }
    default: out[0] = (uint8_t)i; return 1;
  }
}

/* The shortcut's cell for a float64 (BCOLZ_FAST_F8) at out: 1, else 0. */
static inline int bcolz_fast_put_f8(const bcolz_fast *f, double d, uint8_t *out) {
  if (f->kind != BCOLZ_FAST_F8) return 0;
  memcpy(out, &d, 8);
  return 1;
}

/* The shortcut's cell for n bytes at p (BCOLZ_FAST_S, at most size bytes,
 * not ending in NUL: bcolz_cell_encode refuses those) at out: 1, else 0. */
static inline int bcolz_fast_put_s(const bcolz_fast *f, const uint8_t *p, size_t n,
                                   uint8_t *out) {
  if (f->kind != BCOLZ_FAST_S || n > f->size || (n && p[n - 1] == 0)) return 0;
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

/* Write v as a cell at out when the shortcut applies: 1, else 0 (nothing
 * written; bcolz_cell_encode decides). */
static inline int bcolz_fast_put(const bcolz_fast *f, const ds_value *v, uint8_t *out) {
  switch (v->type) {
    case DS_V_INT: return bcolz_fast_put_int(f, v->u.i, out);
    case DS_V_BOOL: return f->kind == BCOLZ_FAST_BOOL && bcolz_fast_put_int(f, v->u.i, out);
    case DS_V_FLOAT: return bcolz_fast_put_f8(f, v->u.f, out);
    case DS_V_TEXT:
    case DS_V_BYTES: return bcolz_fast_put_s(f, v->u.s.p, v->u.s.n, out);
    default: return 0;
  }
}

#endif
