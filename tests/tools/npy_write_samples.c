/* npy_write_samples.c - writes .npy files with ds_npy_write_header into the
 * directory given as argv[1], so that tests/conformance/test_npy_numpy.py
 * can check that numpy.load reads what our writer produces.
 *
 *   build/tools/npy_write_samples /tmp/dir
 *
 * Every file holds a known array; the Python test rebuilds the same array
 * with numpy and compares. Data bytes are written explicitly (little- or
 * big-endian as the dtype says), not from host memory. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/npy.h"

/* Write header + data into <dir>/<name>.npy; 0 ok, 1 on failure. */
static int write_sample(const char *dir, const char *name, const char *descr,
                        int fortran, int ndim, const uint64_t *shape,
                        const ds_buf *data) {
  ds_buf b = {0};
  char *err = NULL;
  if (ds_npy_write_header(&b, descr, fortran, ndim, shape, &err) ||
      ds_buf_append(&b, data->data, data->len)) {
    fprintf(stderr, "%s: %s\n", name, err ? err : "out of memory");
    free(err);
    ds_buf_free(&b);
    return 1;
  }
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE *f = fopen(path, "wb");
  int bad = !f || fwrite(b.data, 1, b.len, f) != b.len;
  if (f && fclose(f)) bad = 1;
  if (bad) fprintf(stderr, "%s: cannot write\n", path);
  ds_buf_free(&b);
  return bad;
}

/* Append an unsigned value of `size` bytes in the given byte order. */
static void put(ds_buf *d, uint64_t v, int size, int big) {
  for (int k = 0; k < size; k++) {
    int shift = 8 * (big ? size - 1 - k : k);
    uint8_t byte = (uint8_t)(v >> shift);
    ds_buf_append(d, &byte, 1);
  }
}

/* Append a double's bits (8 bytes) in the given byte order. */
static void put_f8(ds_buf *d, double x, int big) {
  uint64_t u;
  memcpy(&u, &x, 8);
  put(d, u, 8, big);
}

/* Append a float's bits (4 bytes) in the given byte order. */
static void put_f4(ds_buf *d, float x, int big) {
  uint32_t u;
  memcpy(&u, &x, 4);
  put(d, u, 4, big);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s <output dir>\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  int bad = 0;
  ds_buf d = {0};

  /* f4_2x3: arange(6) * 1.5 as '<f4', C order */
  for (int i = 0; i < 6; i++) put_f4(&d, (float)(i * 1.5), 0);
  bad |= write_sample(dir, "f4_2x3", "<f4", 0, 2, (uint64_t[]){2, 3}, &d);
  d.len = 0;

  /* i8_be: [-1, 0, 1, INT64_MAX, INT64_MIN] as '>i8' */
  int64_t iv[5] = {-1, 0, 1, INT64_MAX, INT64_MIN};
  for (int i = 0; i < 5; i++) put(&d, (uint64_t)iv[i], 8, 1);
  bad |= write_sample(dir, "i8_be", ">i8", 0, 1, (uint64_t[]){5}, &d);
  d.len = 0;

  /* u1_fortran: arange(6).reshape(2, 3) stored in Fortran order */
  for (int j = 0; j < 3; j++)
    for (int i = 0; i < 2; i++) put(&d, (uint64_t)(i * 3 + j), 1, 0);
  bad |= write_sample(dir, "u1_fortran", "|u1", 1, 2, (uint64_t[]){2, 3}, &d);
  d.len = 0;

  /* f8_scalar: 0-d 3.25 */
  put_f8(&d, 3.25, 0);
  bad |= write_sample(dir, "f8_scalar", "<f8", 0, 0, NULL, &d);
  d.len = 0;

  /* i4_empty: shape (0, 3) */
  bad |= write_sample(dir, "i4_empty", "<i4", 0, 2, (uint64_t[]){0, 3}, &d);

  /* u3_text: ['ab', 'xyz', 'é'] as '<U3' */
  const uint32_t u3[3][3] = {{'a', 'b', 0}, {'x', 'y', 'z'}, {0xE9, 0, 0}};
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 3; k++) put(&d, u3[i][k], 4, 0);
  bad |= write_sample(dir, "u3_text", "<U3", 0, 1, (uint64_t[]){3}, &d);
  d.len = 0;

  /* s4_bytes: [b'ab', b'\xff\x00\x01'] as '|S4' */
  ds_buf_append(&d, "ab\0\0\xff\0\x01\0", 8);
  bad |= write_sample(dir, "s4_bytes", "|S4", 0, 1, (uint64_t[]){2}, &d);
  d.len = 0;

  /* b1_bool: [True, False, True] */
  ds_buf_append(&d, "\1\0\1", 3);
  bad |= write_sample(dir, "b1_bool", "|b1", 0, 1, (uint64_t[]){3}, &d);
  d.len = 0;

  /* dt_seconds: datetime64[s] [0, 1614834367, NaT] */
  put(&d, 0, 8, 0);
  put(&d, 1614834367, 8, 0);
  put(&d, (uint64_t)INT64_MIN, 8, 0);
  bad |= write_sample(dir, "dt_seconds", "<M8[s]", 0, 1, (uint64_t[]){3}, &d);
  d.len = 0;

  /* c16_be: [1.5 - 2j] as '>c16' */
  put_f8(&d, 1.5, 1);
  put_f8(&d, -2.0, 1);
  bad |= write_sample(dir, "c16_be", ">c16", 0, 1, (uint64_t[]){1}, &d);
  d.len = 0;

  /* f2_half: [1.0, -2.5, 65504] as '<f2' */
  put(&d, 0x3C00, 2, 0);
  put(&d, 0xC100, 2, 0);
  put(&d, 0x7BFF, 2, 0);
  bad |= write_sample(dir, "f2_half", "<f2", 0, 1, (uint64_t[]){3}, &d);
  d.len = 0;

  /* struct_rec: [(1, 2.5)] as [('a', '<i4'), ('b', '<f8')] */
  put(&d, 1, 4, 0);
  put_f8(&d, 2.5, 0);
  bad |= write_sample(dir, "struct_rec", "[('a', '<i4'), ('b', '<f8')]", 0, 1,
                      (uint64_t[]){1}, &d);
  d.len = 0;

  /* f8_3d_fortran: arange(24).reshape(2, 3, 4) in Fortran order */
  for (int k = 0; k < 4; k++)
    for (int j = 0; j < 3; j++)
      for (int i = 0; i < 2; i++) put_f8(&d, i * 12 + j * 4 + k, 0);
  bad |= write_sample(dir, "f8_3d_fortran", "<f8", 1, 3, (uint64_t[]){2, 3, 4}, &d);
  d.len = 0;

  /* v2_long: a dtype list too long for a 1.0 header: 5000 '<u1' fields */
  ds_buf descr = {0};
  ds_buf_puts(&descr, "[");
  for (int i = 0; i < 5000; i++) ds_buf_printf(&descr, "%s('f%d', '|u1')", i ? ", " : "", i);
  ds_buf_puts(&descr, "]");
  ds_buf_append(&descr, "", 1);
  for (int i = 0; i < 5000; i++) put(&d, (uint64_t)(i % 251), 1, 0);
  bad |= write_sample(dir, "v2_long", (const char *)descr.data, 0, 1, (uint64_t[]){1}, &d);
  ds_buf_free(&descr);

  ds_buf_free(&d);
  return bad ? 1 : 0;
}
