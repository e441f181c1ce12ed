/* tfexample_write.h - build serialized tf.train.Example records (writing a
 * bagz table with records=tfexample), with libprotobuf-c from
 * proto/example.proto. No SQLite here.
 *
 *   ds_tfex_builder b = {0};
 *   ds_tfex_put_int64(&b, "label", 5, &label, 1, &err);
 *   ds_tfex_put_npy(&b, "emb", 3, npy, npy_len, &err);   (or bytes when not numeric)
 *   ds_tfex_build(&b, &out, &err);   out: the record; b is empty again
 *   ds_tfex_builder_free(&b);
 *
 * Features are written in the order they were put. */
#ifndef DS_TFEXAMPLE_WRITE_H
#define DS_TFEXAMPLE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/common.h"
#include "core/value.h"

typedef struct ds_tfex_builder {
  ds_arena arena;   /* the features put since the last build */
  void **entries;   /* their map entries (malloc'd array, reused) */
  size_t n, cap;
} ds_tfex_builder;

/* One feature: n int64 values, n float values, or one bytes value. The
 * values are copied. 0, or -1 with *err (out of memory). */
int ds_tfex_put_int64(ds_tfex_builder *b, const char *name, size_t name_len,
                      const int64_t *v, size_t n, char **err);
int ds_tfex_put_float(ds_tfex_builder *b, const char *name, size_t name_len,
                      const float *v, size_t n, char **err);
int ds_tfex_put_bytes(ds_tfex_builder *b, const char *name, size_t name_len,
                      const uint8_t *p, size_t n, char **err);
/* A whole .npy file p[0..n): a bool/int/uint array becomes an int64 list,
 * a float array a float list (float32), in C order. 1 when p is not a
 * .npy of those kinds (nothing is put), 0 when put, -1 with *err (an
 * unsigned value above INT64_MAX, out of memory). */
int ds_tfex_put_npy(ds_tfex_builder *b, const char *name, size_t name_len,
                    const uint8_t *p, size_t n, char **err);

/* Append the Example of the features put to out and forget them. 0, or -1
 * with *err. */
int ds_tfex_build(ds_tfex_builder *b, ds_buf *out, char **err);
/* Forget the features put since the last build. */
void ds_tfex_builder_reset(ds_tfex_builder *b);
void ds_tfex_builder_free(ds_tfex_builder *b);

#endif
