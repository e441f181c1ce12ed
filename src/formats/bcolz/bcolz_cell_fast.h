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

/* Write v as a cell at out when the shortcut applies: 1, else 0 (nothing
 * written; bcolz_cell_encode decides). */
static inline int bcolz_fast_put(const bcolz_fast *f, const ds_value *v, uint8_t *out) {
  switch (f->kind) {
    case BCOLZ_FAST_INT:
      if (v->type != DS_V_INT || v->u.i < f->lo || v->u.i > f->hi) return 0;
      switch (f->size) {
        case 8: memcpy(out, &v->u.i, 8); return 1;
        case 4: { int32_t x = (int32_t)v->u.i; memcpy(out, &x, 4); return 1; }
        case 2: { int16_t x = (int16_t)v->u.i; memcpy(out, &x, 2); return 1; }
        default: out[0] = (uint8_t)v->u.i; return 1;
      }
    case BCOLZ_FAST_BOOL:
      if ((v->type != DS_V_INT && v->type != DS_V_BOOL) || (uint64_t)v->u.i > 1) return 0;
      out[0] = (uint8_t)v->u.i;
      return 1;
    case BCOLZ_FAST_F8:
      if (v->type != DS_V_FLOAT) return 0;
      memcpy(out, &v->u.f, 8);
      return 1;
    case BCOLZ_FAST_S:
      if ((v->type != DS_V_TEXT && v->type != DS_V_BYTES) || v->u.s.n > f->size ||
          (v->u.s.n && v->u.s.p[v->u.s.n - 1] == 0)) /* refused by bcolz_cell_encode */
        return 0;
      memcpy(out, v->u.s.p, v->u.s.n);
      memset(out + v->u.s.n, 0, f->size - v->u.s.n);
      return 1;
    default: return 0;
  }
}

#endif
