/* tfexample_write.c - serialize tf.train.Example records with
 * libprotobuf-c (see tfexample_write.h). The protobuf-c structs of one
 * record live in the builder's arena; tensorflow__example__pack writes
 * them (packed numbers, as TensorFlow writes them). */
#include "tfexample_write.h"

#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "core/npy.h"
#include "example.pb-c.h"

/* A copy of p[0..n) in the arena (n may be 0). */
static void *arena_copy(ds_arena *a, const void *p, size_t n) {
  void *q = ds_arena_alloc(a, n ? n : 1);
  if (q && n) memcpy(q, p, n);
  return q;
}

/* A new map entry called name with an empty Feature, appended to b. */
static Tensorflow__Feature *new_feature(ds_tfex_builder *b, const char *name,
                                        size_t name_len) {
  void **entries = ds_grow_cap(b->entries, &b->cap, b->n, sizeof *entries, 16);
  if (!entries) return NULL;
  b->entries = entries;
  Tensorflow__Features__FeatureEntry *e = ds_arena_alloc(&b->arena, sizeof *e);
  Tensorflow__Feature *f = ds_arena_alloc(&b->arena, sizeof *f);
  uint8_t *key = arena_copy(&b->arena, name, name_len);
  if (!e || !f || !key) return NULL;
  tensorflow__features__feature_entry__init(e);
  tensorflow__feature__init(f);
  e->key.data = key;
  e->key.len = name_len;
  e->value = f;
  b->entries[b->n++] = e;
  return f;
}

/* The error for a failed allocation. */
static int fail(ds_tfex_builder *b, char **err) { return ds_arena_fail(&b->arena, err); }

/* A new feature called name holding an empty list of the given kind (an
 * Int64List, FloatList or BytesList in the arena, attached to the
 * feature); the list, or NULL when out of memory. */
static void *new_list(ds_tfex_builder *b, const char *name, size_t name_len,
                      Tensorflow__Feature__KindCase kind) {
  const ProtobufCMessageDescriptor *d =
      kind == TENSORFLOW__FEATURE__KIND_INT64_LIST   ? &tensorflow__int64_list__descriptor
      : kind == TENSORFLOW__FEATURE__KIND_FLOAT_LIST ? &tensorflow__float_list__descriptor
                                                     : &tensorflow__bytes_list__descriptor;
  Tensorflow__Feature *f = new_feature(b, name, name_len);
  void *l = f ? ds_arena_alloc(&b->arena, d->sizeof_message) : NULL;
  if (!l) return NULL;
  protobuf_c_message_init(d, l);
  f->kind_case = kind;
  if (kind == TENSORFLOW__FEATURE__KIND_INT64_LIST) f->int64_list = l;
  else if (kind == TENSORFLOW__FEATURE__KIND_FLOAT_LIST) f->float_list = l;
  else f->bytes_list = l;
  return l;
}

/* Append feature name: a list of the kind (int64 or float) holding a copy
 * of the n values of `size` bytes at v. */
static int put_numbers(ds_tfex_builder *b, const char *name, size_t name_len,
                       Tensorflow__Feature__KindCase kind, const void *v, size_t n,
                       size_t size, char **err) {
  void *vals = arena_copy(&b->arena, v, n * size);
  void *l = vals ? new_list(b, name, name_len, kind) : NULL;
  if (!l) return fail(b, err);
  if (kind == TENSORFLOW__FEATURE__KIND_INT64_LIST) {
    Tensorflow__Int64List *il = l;
    il->n_value = n;
    il->value = vals;
  } else {
    Tensorflow__FloatList *fl = l;
    fl->n_value = n;
    fl->value = vals;
  }
  return 0;
}

int ds_tfex_put_int64(ds_tfex_builder *b, const char *name, size_t name_len,
                      const int64_t *v, size_t n, char **err) {
  return put_numbers(b, name, name_len, TENSORFLOW__FEATURE__KIND_INT64_LIST, v, n,
                     sizeof *v, err);
}

int ds_tfex_put_float(ds_tfex_builder *b, const char *name, size_t name_len,
                      const float *v, size_t n, char **err) {
  return put_numbers(b, name, name_len, TENSORFLOW__FEATURE__KIND_FLOAT_LIST, v, n,
                     sizeof *v, err);
}

int ds_tfex_put_bytes(ds_tfex_builder *b, const char *name, size_t name_len,
                      const uint8_t *p, size_t n, char **err) {
  Tensorflow__BytesList *l = new_list(b, name, name_len, TENSORFLOW__FEATURE__KIND_BYTES_LIST);
  ProtobufCBinaryData *v = l ? ds_arena_alloc(&b->arena, sizeof *v) : NULL;
  if (!v || !(v->data = arena_copy(&b->arena, p, n))) return fail(b, err);
  v->len = n;
  l->n_value = 1;
  l->value = v;
  return 0;
}

int ds_tfex_put_npy(ds_tfex_builder *b, const char *name, size_t name_len,
                    const uint8_t *p, size_t n, char **err) {
  ds_npy a;
  char *e = NULL;
  if (ds_npy_parse(p, n, &a, &e)) {
    free(e);
    return 1;
  }
  int ints = a.kind == 'b' || a.kind == 'i' || a.kind == 'u';
  if ((!ints && a.kind != 'f') || a.structured || a.has_object) return 1;
  if (a.count > SIZE_MAX / 8) return ds_err(err, "array of %llu values is too big",
                                            (unsigned long long)a.count);
  int64_t *iv = ints ? ds_arena_alloc(&b->arena, a.count * 8 + 1) : NULL;
  float *fv = ints ? NULL : ds_arena_alloc(&b->arena, a.count * 4 + 1);
  if (!iv && !fv) return fail(b, err);
  ds_buf scratch = {0};
  int rc = 0;
  for (uint64_t i = 0; i < a.count && rc == 0; i++) {
    ds_value v;
    /* logical C order: element i of the flattened array */
    uint64_t idx[DS_NPY_MAX_DIMS], rest = i, pos;
    for (int d = a.ndim - 1; d >= 0; d--) {
      idx[d] = a.shape[d] ? rest % a.shape[d] : 0;
      rest = a.shape[d] ? rest / a.shape[d] : 0;
    }
    rc = ds_npy_offset(&a, idx, &pos, err) || ds_npy_element(&a, pos, &v, &scratch, err);
    if (rc) break;
    if (v.type == DS_V_UINT && v.u.u > INT64_MAX)
      rc = ds_err(err, "uint64 value %llu does not fit an int64 list",
                  (unsigned long long)v.u.u);
    else if (ints) iv[i] = v.type == DS_V_UINT ? (int64_t)v.u.u : v.u.i;
    else fv[i] = v.type == DS_V_FLOAT ? (float)v.u.f : 0.0f;
  }
  ds_buf_free(&scratch);
  if (rc) return -1;
  return ints ? ds_tfex_put_int64(b, name, name_len, iv, (size_t)a.count, err)
              : ds_tfex_put_float(b, name, name_len, fv, (size_t)a.count, err);
}

int ds_tfex_build(ds_tfex_builder *b, ds_buf *out, char **err) {
  Tensorflow__Features fs = TENSORFLOW__FEATURES__INIT;
  Tensorflow__Example ex = TENSORFLOW__EXAMPLE__INIT;
  fs.n_feature = b->n;
  fs.feature = (Tensorflow__Features__FeatureEntry **)b->entries;
  ex.features = &fs;
  size_t n = tensorflow__example__get_packed_size(&ex);
  int rc = ds_buf_reserve(out, out->len + n);
  if (rc == 0) out->len += tensorflow__example__pack(&ex, out->data + out->len);
  ds_tfex_builder_reset(b);
  if (rc) return out->over ? ds_err_too_big(err, "record", n, out->max)
                           : ds_err(err, "out of memory");
  return 0;
}

void ds_tfex_builder_reset(ds_tfex_builder *b) {
  b->n = 0;
  ds_arena_reset(&b->arena);
}

void ds_tfex_builder_free(ds_tfex_builder *b) {
  ds_arena_free(&b->arena);
  free(b->entries);
  memset(b, 0, sizeof *b);
}
