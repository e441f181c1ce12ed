/* tfexample.h - records that are serialized tf.train.Example messages
 * (docs/INTERFACE.md, "Records that are protocol buffers"), decoded with
 * libprotobuf-c from proto/example.proto. No SQLite here.
 *
 *   ds_tfex ex = {0};
 *   ex.arena.limit = max_value_bytes;        (optional cap on decoded memory)
 *   if (ds_tfex_decode(&ex, rec, len, &err)) ... err: "not a tf.train.Example: ..."
 *   for (size_t i = 0; i < ex.n; i++) ex.features[i].name, .kind, .n, values
 *   ds_tfex_json(&ex, &out, &err);           {"label":[3],"img":["<base64>"]}
 *   ds_tfex_free(&ex);
 *
 * Features come in the record's order. A name that occurs more than once
 * keeps its last value at the place of its last occurrence (protocol
 * buffer maps keep the last entry of a key). Unknown fields are skipped;
 * packed and unpacked numbers are both accepted. */
#ifndef DS_TFEXAMPLE_H
#define DS_TFEXAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/value.h"

/* Which list a feature holds; EMPTY when the Feature sets none. */
typedef enum ds_tfex_kind {
  DS_TFEX_EMPTY = 0,
  DS_TFEX_BYTES,
  DS_TFEX_FLOAT,
  DS_TFEX_INT64
} ds_tfex_kind;

/* One feature of a decoded record. Pointers stay valid until the next
 * ds_tfex_decode or ds_tfex_free on the same ds_tfex. */
typedef struct ds_tfex_feature {
  const char *name;   /* UTF-8, name_len bytes (may hold U+0000) */
  size_t name_len;
  ds_tfex_kind kind;
  size_t n;           /* number of values */
  const float *f32;   /* FLOAT: n values */
  const int64_t *i64; /* INT64: n values */
  const void *bytes;  /* BYTES: read with ds_tfex_bytes_at */
} ds_tfex_feature;

/* A decoded record. Zero-initialise; reuse for many records. */
typedef struct ds_tfex {
  ds_arena arena;            /* everything decoded lives here; set
                                arena.limit to cap it (max_value_bytes) */
  size_t n;                  /* features[0..n) in record order */
  ds_tfex_feature *features;
} ds_tfex;

/* Decode record p[0..len) into ex (forgetting its previous record).
 * 0 ok; -1 with *err = "not a tf.train.Example: <what> at byte offset N"
 * (or the max_value_bytes error when decoding would pass arena.limit). */
int ds_tfex_decode(ds_tfex *ex, const uint8_t *p, size_t len, char **err);

/* Value i of a BYTES feature (i < f->n). */
void ds_tfex_bytes_at(const ds_tfex_feature *f, size_t i, const uint8_t **p,
                      size_t *n);

/* The feature called name[0..len), or NULL when the record lacks it. */
const ds_tfex_feature *ds_tfex_find(const ds_tfex *ex, const char *name,
                                    size_t len);

/* The record as one JSON object appended to out: one list per feature, in
 * record order; bytes as base64 strings, floats as JSON numbers (the
 * shortest text that reads back to the same float32, null when not
 * finite), int64 exact. 0 ok, -1 out of memory. */
int ds_tfex_json(const ds_tfex *ex, ds_buf *out, char **err);

/* One feature's list as JSON ("[1,2]"), as in ds_tfex_json. */
int ds_tfex_feature_json(const ds_tfex_feature *f, ds_buf *out);

/* Free everything ex holds. */
void ds_tfex_free(ds_tfex *ex);

#endif
