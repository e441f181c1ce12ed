/* tfexample_cell.c - a decoded tf.train.Example feature as one cell value
 * (see tfexample_cell.h for the mapping). Long numeric lists become .npy
 * BLOBs written here: a header from ds_npy_write_header, then the values
 * little-endian. */
#include "core/utf8.h"
#include "tfexample_cell.h"

#include <string.h>

#include "core/npy.h"

/* Bytes value i of f as a BYTES or (bytes_text and UTF-8) TEXT value. */
static ds_value bytes_value(const ds_tfex_feature *f, size_t i, int bytes_text) {
  ds_value v = {.type = DS_V_BYTES};
  ds_tfex_bytes_at(f, i, &v.u.s.p, &v.u.s.n);
  if (bytes_text && ds_utf8_valid(v.u.s.p, v.u.s.n)) v.type = DS_V_TEXT;
  return v;
}

ds_vtype ds_tfex_cell_type(const ds_tfex_feature *f, int bytes_text) {
  if (!f || f->n == 0) return DS_V_NULL;
  switch (f->kind) {
    case DS_TFEX_INT64: return f->n == 1 ? DS_V_INT : DS_V_NDARRAY;
    case DS_TFEX_FLOAT: return f->n == 1 ? DS_V_FLOAT : DS_V_NDARRAY;
    case DS_TFEX_BYTES: return f->n == 1 ? bytes_value(f, 0, bytes_text).type : DS_V_LIST;
    default: return DS_V_NULL;
  }
}

/* Store v little-endian in p[0..8). */
static void put_le64(uint8_t *p, uint64_t v) {
  for (int k = 0; k < 8; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* A numeric list as a .npy BLOB of shape (n,) in the arena. */
static int numeric_array(const ds_tfex_feature *f, ds_arena *a, ds_value *out,
                         char **err) {
  int ints = f->kind == DS_TFEX_INT64;
  size_t item = ints ? 8 : 4;
  uint64_t shape = f->n;
  ds_buf hb = {0};
  if (ds_npy_write_header(&hb, ints ? "<i8" : "<f4", 0, 1, &shape, err)) return -1;
  size_t hn = hb.len;
  uint8_t *blob = ds_arena_alloc(a, hn + f->n * item); /* n * 8 < record size * 8 */
  if (blob) memcpy(blob, hb.data, hn);
  ds_buf_free(&hb);
  if (!blob) return ds_arena_fail(a, err);
  uint8_t *p = blob + hn;
  for (size_t i = 0; i < f->n; i++) {
    if (ints) {
      put_le64(p + 8 * i, (uint64_t)f->i64[i]);
    } else {
      uint32_t bits;
      memcpy(&bits, &f->f32[i], 4);
      for (int k = 0; k < 4; k++) p[4 * i + k] = (uint8_t)(bits >> (8 * k));
    }
  }
  out->type = DS_V_NDARRAY;
  out->u.s.p = blob;
  out->u.s.n = hn + f->n * item;
  return 0;
}

/* A bytes list as a LIST value in the arena. */
static int bytes_list(const ds_tfex_feature *f, int bytes_text, ds_arena *a,
                      ds_value *out, char **err) {
  ds_value *items = ds_arena_alloc(a, f->n * sizeof *items);
  if (!items) return ds_arena_fail(a, err);
  for (size_t i = 0; i < f->n; i++) items[i] = bytes_value(f, i, bytes_text);
  out->type = DS_V_LIST;
  out->u.list.items = items;
  out->u.list.n = f->n;
  return 0;
}

int ds_tfex_cell(const ds_tfex_feature *f, int bytes_text, ds_arena *a,
                 ds_value *out, char **err) {
  memset(out, 0, sizeof *out);
  out->type = DS_V_NULL;
  if (!f || f->n == 0) return 0;
  if (f->n > 1) {
    if (f->kind == DS_TFEX_BYTES) return bytes_list(f, bytes_text, a, out, err);
    return numeric_array(f, a, out, err);
  }
  if (f->kind == DS_TFEX_INT64) {
    out->type = DS_V_INT;
    out->u.i = f->i64[0];
  } else if (f->kind == DS_TFEX_FLOAT) {
    out->type = DS_V_FLOAT;
    out->u.f = f->f32[0];
  } else if (f->kind == DS_TFEX_BYTES) {
    *out = bytes_value(f, 0, bytes_text);
  }
  return 0;
}
