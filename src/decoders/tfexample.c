/* tfexample.c - decode a serialized tf.train.Example with libprotobuf-c
 * (code generated from proto/example.proto into build/gen at build time)
 * into features in record order, and print them as JSON. protobuf-c
 * allocates from the record's arena, so arena.limit caps what a hostile
 * record can make it allocate, and the next record frees everything at
 * once. When protobuf-c refuses a record, tfexample_diag.c says where.
 * Two things protobuf-c lets through are refused here, as Google's runtime
 * refuses them: feature names that are not UTF-8, and field number 0. */
#include "core/json.h"
#include "core/lib_versions.h"
#include "core/utf8.h"
#include "tfexample.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "example.pb-c.h"
#include "tfexample_diag.h"

/* protobuf-c's allocator over a ds_arena: free does nothing, the arena is
 * reset for the next record. */
static void *arena_alloc(void *arena, size_t size) {
  return ds_arena_alloc(arena, size);
}
static void arena_free(void *arena, void *p) {
  (void)arena;
  (void)p;
}

/* One map entry as a feature. */
static void fill_feature(ds_tfex_feature *f,
                         const Tensorflow__Features__FeatureEntry *e) {
  memset(f, 0, sizeof *f);
  f->name = e->key.len ? (const char *)e->key.data : "";
  f->name_len = e->key.len;
  const Tensorflow__Feature *v = e->value;
  if (!v) return;
  switch (v->kind_case) {
    case TENSORFLOW__FEATURE__KIND_BYTES_LIST:
      f->kind = DS_TFEX_BYTES;
      f->n = v->bytes_list->n_value;
      f->bytes = v->bytes_list->value;
      break;
    case TENSORFLOW__FEATURE__KIND_FLOAT_LIST:
      f->kind = DS_TFEX_FLOAT;
      f->n = v->float_list->n_value;
      f->f32 = v->float_list->value;
      break;
    case TENSORFLOW__FEATURE__KIND_INT64_LIST:
      f->kind = DS_TFEX_INT64;
      f->n = v->int64_list->n_value;
      f->i64 = v->int64_list->value;
      break;
    default: break; /* no list set: an empty feature */
  }
}

/* 1 when protobuf-c kept an unknown field numbered 0 in m: it lets one
 * through when the tag varint is not minimal (0x81 0x00), where Google's
 * runtime refuses the record. */
static int field_zero(const ProtobufCMessage *m) {
  if (!m) return 0;
  for (unsigned i = 0; i < m->n_unknown_fields; i++)
    if (m->unknown_fields[i].tag == 0) return 1;
  return 0;
}

/* field_zero over a map entry and everything in it. */
static int entry_field_zero(const Tensorflow__Features__FeatureEntry *e) {
  const Tensorflow__Feature *v = e->value;
  if (field_zero(&e->base)) return 1;
  if (!v) return 0;
  const ProtobufCMessage *list =
      v->kind_case == TENSORFLOW__FEATURE__KIND_BYTES_LIST   ? &v->bytes_list->base
      : v->kind_case == TENSORFLOW__FEATURE__KIND_FLOAT_LIST ? &v->float_list->base
      : v->kind_case == TENSORFLOW__FEATURE__KIND_INT64_LIST ? &v->int64_list->base
                                                             : NULL;
  return field_zero(&v->base) || field_zero(list);
}

/* 1 when two features have the same name. */
static int same_name(const ds_tfex_feature *a, const ds_tfex_feature *b) {
  return a->name_len == b->name_len && !memcmp(a->name, b->name, a->name_len);
}

/* A feature and its position, sorted to find duplicates. */
typedef struct named_index {
  const ds_tfex_feature *f;
  size_t index;
} named_index;

/* qsort order for duplicate detection: by name, then by position. */
static int by_name_then_index(const void *a, const void *b) {
  const named_index *x = a, *y = b;
  size_t n = x->f->name_len < y->f->name_len ? x->f->name_len : y->f->name_len;
  int c = memcmp(x->f->name, y->f->name, n);
  if (!c) c = (x->f->name_len > y->f->name_len) - (x->f->name_len < y->f->name_len);
  if (c) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Mark dropped[i] for every feature whose name occurs again later (the map
 * keeps the last entry of a key). 0 ok, -1 when the arena is out of room. */
static int mark_duplicates(ds_tfex *ex, uint8_t *dropped) {
  size_t n = ex->n;
  const ds_tfex_feature *f = ex->features;
  if (n <= 16) { /* the usual record: a few features, compare pairwise */
    for (size_t i = 0; i < n; i++)
      for (size_t j = i + 1; j < n && !dropped[i]; j++)
        if (same_name(&f[i], &f[j])) dropped[i] = 1;
    return 0;
  }
  named_index *order = ds_arena_alloc(&ex->arena, n * sizeof *order);
  if (!order) return -1;
  for (size_t i = 0; i < n; i++) order[i] = (named_index){&f[i], i};
  qsort(order, n, sizeof *order, by_name_then_index);
  for (size_t i = 0; i + 1 < n; i++)
    if (same_name(order[i].f, order[i + 1].f)) dropped[order[i].index] = 1;
  return 0;
}

/* Drop the features that a later one of the same name replaces, keeping
 * the order of the rest. 0 ok, -1 when the arena is out of room. */
static int drop_duplicates(ds_tfex *ex) {
  if (ex->n < 2) return 0;
  uint8_t small[16] = {0};
  uint8_t *dropped = ex->n <= 16 ? small : ds_arena_alloc(&ex->arena, ex->n);
  if (!dropped) return -1;
  if (ex->n > 16) memset(dropped, 0, ex->n);
  if (mark_duplicates(ex, dropped)) return -1;
  size_t k = 0;
  for (size_t i = 0; i < ex->n; i++)
    if (!dropped[i]) ex->features[k++] = ex->features[i];
  ex->n = k;
  return 0;
}

int ds_tfex_decode(ds_tfex *ex, const uint8_t *p, size_t len, char **err) {
  ds_arena_reset(&ex->arena);
  ex->n = 0;
  ex->features = NULL;
  ProtobufCAllocator alloc = {arena_alloc, arena_free, &ex->arena};
  Tensorflow__Example *msg = tensorflow__example__unpack(&alloc, len, p);
  if (!msg) {
    if (ex->arena.over) return ds_arena_fail(&ex->arena, err);
    return ds_tfex_diagnose(p, len, err);
  }
  const Tensorflow__Features *fs = msg->features;
  if (field_zero(&msg->base) || (fs && field_zero(&fs->base)))
    return ds_tfex_diagnose(p, len, err);
  size_t n = fs ? fs->n_feature : 0;
  if (n == 0) return 0;
  if (n > SIZE_MAX / sizeof(ds_tfex_feature)) return ds_err(err, "out of memory");
  ex->features = ds_arena_alloc(&ex->arena, n * sizeof(ds_tfex_feature));
  if (!ex->features) return ds_arena_fail(&ex->arena, err);
  for (size_t i = 0; i < n; i++) {
    fill_feature(&ex->features[i], fs->feature[i]);
    if (!ds_utf8_valid((const uint8_t *)ex->features[i].name, ex->features[i].name_len) ||
        entry_field_zero(fs->feature[i]))
      return ds_tfex_diagnose(p, len, err); /* says what and where */
  }
  ex->n = n;
  if (drop_duplicates(ex)) {
    ex->n = 0;
    return ds_arena_fail(&ex->arena, err);
  }
  return 0;
}

void ds_tfex_bytes_at(const ds_tfex_feature *f, size_t i, const uint8_t **p,
                      size_t *n) {
  const ProtobufCBinaryData *b = (const ProtobufCBinaryData *)f->bytes + i;
  *p = b->data;
  *n = b->len;
}

const ds_tfex_feature *ds_tfex_find(const ds_tfex *ex, const char *name,
                                    size_t len) {
  for (size_t i = 0; i < ex->n; i++)
    if (ex->features[i].name_len == len && !memcmp(ex->features[i].name, name, len))
      return &ex->features[i];
  return NULL;
}

int ds_tfex_feature_json(const ds_tfex_feature *f, ds_buf *out) {
  if (ds_buf_puts(out, "[")) return -1;
  for (size_t i = 0; i < f->n; i++) {
    if (i && ds_buf_puts(out, ",")) return -1;
    int rc = 0;
    if (f->kind == DS_TFEX_INT64) {
      rc = ds_buf_printf(out, "%" PRId64, f->i64[i]);
    } else if (f->kind == DS_TFEX_FLOAT) {
      rc = ds_json_float(out, f->f32[i]);
    } else {
      const uint8_t *p;
      size_t n;
      ds_tfex_bytes_at(f, i, &p, &n);
      rc = ds_json_base64(out, p, n);
    }
    if (rc) return -1;
  }
  return ds_buf_puts(out, "]");
}

int ds_tfex_json(const ds_tfex *ex, ds_buf *out, char **err) {
  size_t start = out->len;
  int rc = ds_buf_puts(out, "{");
  for (size_t i = 0; i < ex->n && !rc; i++) {
    const ds_tfex_feature *f = &ex->features[i];
    rc = (i && ds_buf_puts(out, ",")) ||
         ds_json_string(out, (const uint8_t *)f->name, f->name_len) ||
         ds_buf_puts(out, ":") || ds_tfex_feature_json(f, out);
  }
  if (!rc) rc = ds_buf_puts(out, "}");
  if (rc) {
    out->len = start;
    if (out->over)
      return ds_err(err, "JSON text longer than %zu bytes", out->max);
    return ds_err(err, "out of memory");
  }
  return 0;
}

void ds_tfex_free(ds_tfex *ex) {
  ds_arena_free(&ex->arena);
  ex->n = 0;
  ex->features = NULL;
}

const char *ds_protobuf_c_version(void) { return protobuf_c_version(); }
