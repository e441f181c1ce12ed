/* test_npy.c - unit tests of the .npy module: header parsing (including
 * hostile headers), the header writer, tolist()-style JSON for every dtype,
 * single elements, and the npy_* SQL functions in an in-memory database. */
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/npy.h"
#include "sql/npy_sql.h"

#define SHAPE(...) ((const uint64_t[]){__VA_ARGS__})

/* ------------------------------------------------------------ helpers */

/* A blob from our writer: header for (descr, order, shape) + n data bytes.
 * On a writer error the blob is empty. */
static ds_buf npy(const char *descr, int fortran, int ndim,
                  const uint64_t *shape, const void *data, size_t n) {
  ds_buf b = {0};
  char *err = NULL;
  if (ds_npy_write_header(&b, descr, fortran, ndim, shape, &err) == 0)
    ds_buf_append(&b, data, n);
  free(err);
  return b;
}

/* A blob with a hand-written header dict (format `major`), then data. */
static ds_buf raw(int major, const char *hdr, const void *data, size_t n) {
  ds_buf b = {0};
  size_t hl = strlen(hdr);
  ds_buf_append(&b, "\x93NUMPY", 6);
  uint8_t v[6] = {(uint8_t)major, 0, (uint8_t)hl, (uint8_t)(hl >> 8),
                  (uint8_t)(hl >> 16), (uint8_t)(hl >> 24)};
  ds_buf_append(&b, v, major == 1 ? 4 : 6);
  ds_buf_append(&b, hdr, hl);
  ds_buf_append(&b, data, n);
  return b;
}

/* "ok" or the parse error, malloc'd. */
static char *parse_msg(const ds_buf *b) {
  ds_npy a;
  char *err = NULL;
  if (ds_npy_parse(b->data, b->len, &a, &err) == 0) return ds_strf("ok");
  char *s = ds_strf("%s", err ? err : "(no message)");
  free(err);
  return s;
}

/* tolist() JSON of a blob, or "ERR: <message>", malloc'd. */
static char *tojson(const ds_buf *b) {
  ds_npy a;
  ds_buf out = {0};
  char *err = NULL, *s;
  if (ds_npy_parse(b->data, b->len, &a, &err) || ds_npy_to_json(&a, &out, &err))
    s = ds_strf("ERR: %s", err ? err : "?");
  else
    s = ds_strf("%.*s", (int)out.len, out.data ? (const char *)out.data : "");
  free(err);
  ds_buf_free(&out);
  return s;
}

#define CHECK_PARSE(blob, want)      \
  do {                               \
    ds_buf b_ = (blob);              \
    char *s_ = parse_msg(&b_);       \
    CHECK_STR(s_, want);             \
    free(s_);                        \
    ds_buf_free(&b_);                \
  } while (0)

#define CHECK_TOJSON(blob, want)     \
  do {                               \
    ds_buf b_ = (blob);              \
    char *s_ = tojson(&b_);          \
    CHECK_STR(s_, want);             \
    free(s_);                        \
    ds_buf_free(&b_);                \
  } while (0)

/* The dict text of a written header (between the length and the padding). */
static char *header_text(const ds_buf *b) {
  size_t start = b->data[6] == 1 ? 10 : 12;
  size_t hl = b->data[6] == 1 ? (size_t)(b->data[8] | b->data[9] << 8)
                              : (size_t)ds_le32(b->data + 8);
  size_t n = hl;
  while (n > 0 && (b->data[start + n - 1] == ' ' || b->data[start + n - 1] == '\n')) n--;
  return ds_strf("%.*s", (int)n, (const char *)b->data + start);
}

/* ------------------------------------------------------------ writer */

static void test_writer(void) {
  float f6[6] = {0};
  ds_buf b = npy("<f4", 0, 2, SHAPE(2, 3), f6, sizeof f6);
  /* byte for byte what numpy 1.24 np.save writes */
  const char *want_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(b.len == 128 + 24);
  CHECK(memcmp(b.data, "\x93NUMPY\x01\x00\x76\x00", 10) == 0);
  CHECK(memcmp(b.data + 10, want_dict, strlen(want_dict)) == 0);
  int spaces = 1;
  for (size_t k = 10 + strlen(want_dict); k < 127; k++) if (b.data[k] != ' ') spaces = 0;
  CHECK(spaces);
  CHECK(b.data[127] == '\n');
  ds_buf_free(&b);

  b = npy("<f8", 0, 0, NULL, "\0\0\0\0\0\0\0\0", 8);
  char *h = header_text(&b);
  CHECK_STR(h, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }");
  CHECK(b.len == 136);
  free(h);
  ds_buf_free(&b);

  b = npy("<f8", 1, 2, SHAPE(2, 3), NULL, 0);
  h = header_text(&b);
  CHECK_STR(h, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }");
  CHECK(b.len == 128);
  free(h);
  ds_buf_free(&b);

  b = npy("=i4", 0, 1, SHAPE(5), NULL, 0);
  h = header_text(&b);
  CHECK_STR(h, "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }");
  free(h);
  ds_buf_free(&b);

  b = npy(">u1", 0, 1, SHAPE(5), NULL, 0);
  h = header_text(&b);
  CHECK_STR(h, "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }");
  free(h);
  ds_buf_free(&b);

  ds_buf out = {0};
  char *err = NULL;
  CHECK(ds_npy_write_header(&out, "<f3", 0, 1, SHAPE(1), &err) == -1);
  CHECK_STR(err, "npy header: unsupported dtype '<f3'");
  CHECK(out.len == 0);
  CHECK(ds_npy_write_header(&out, "<f4", 0, 33, SHAPE(1), &err) == -1);
  CHECK_STR(err, "npy header: 33 dimensions (at most 32)");
  CHECK(ds_npy_write_header(&out, "<f8", 0, 2, SHAPE(1ull << 62, 4), &err) == -1);
  CHECK_STR(err, "npy header: array too large");
  CHECK(ds_npy_write_header(&out, "[('a', '<i4')", 0, 1, SHAPE(1), &err) == -1);
  CHECK_STR(err, "npy header: malformed structured dtype");
  free(err);
  ds_buf_free(&out);

  /* structured: the list is written as given and parsed back */
  const char *sd = "[('a', '<i4'), ('b', '<f8', (2,))]";
  b = npy(sd, 0, 1, SHAPE(1), "0123456789012345678", 20);
  ds_npy a;
  err = NULL;
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0);
  CHECK_STR(a.descr, sd);
  CHECK(a.kind == 'V' && a.structured && a.itemsize == 20 && !a.has_object);
  char *j = tojson(&b);
  CHECK_STR(j, "[[858927408,[9.182183538391944e-72,1.3470414069119736e-307]]]");
  free(j);
  ds_buf_free(&b);

  /* a dict too long for a 16-bit length: version 2.0, still 64-aligned */
  ds_buf big = {0};
  ds_buf_puts(&big, "[");
  for (int i = 0; i < 4000; i++) ds_buf_printf(&big, "('field%05d', '<f8'), ", i);
  ds_buf_puts(&big, "]");
  ds_buf_append(&big, "", 1);
  b = npy((const char *)big.data, 0, 1, SHAPE(0), NULL, 0);
  CHECK(b.len > 65536 && b.data[6] == 2 && b.data[7] == 0);
  CHECK(b.len % 64 == 0 && b.data[b.len - 1] == '\n');
  CHECK(12 + ds_le32(b.data + 8) == b.len);
  char *m = parse_msg(&b);
  CHECK_STR(m, "invalid .npy header: structured dtype description longer than 255 bytes");
  free(m);
  ds_buf_free(&b);
  ds_buf_free(&big);

  /* a non-ASCII field name: version 3.0 (UTF-8) */
  b = npy("[('\xc3\xa9t\xc3\xa9', '<i2')]", 0, 1, SHAPE(1), "\x05\x00", 2);
  CHECK(b.data[6] == 3 && b.len % 64 == 2);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.version == 3 && a.itemsize == 2);
  ds_buf_free(&b);
}

/* ------------------------------------------------------------ parsing */

static void test_parse_ok(void) {
  ds_npy a;
  char *err = NULL;
  /* numpy's own header, with double quotes, odd spacing and key order */
  ds_buf b = raw(1, "{ \"shape\" :(2,3) ,'fortran_order':False,\n 'descr':'<i2'}  \n",
                 "\1\0\2\0\3\0\4\0\5\0\6\0", 12);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0);
  CHECK(a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 3 && a.count == 6);
  CHECK(a.kind == 'i' && a.itemsize == 2 && a.byteorder == '<' && !a.fortran_order);
  CHECK(a.data == b.data + b.len - 12 && a.data_len == 12);
  CHECK_STR(a.descr, "<i2");
  ds_buf_free(&b);

  /* Python 2 long integers in a 1.0 header; trailing bytes are ignored */
  b = raw(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (2L, 1L), }",
          "\7\x08\x09", 3);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.data_len == 2 && a.fortran_order);
  ds_buf_free(&b);
  CHECK_PARSE(raw(3, "{'descr': '|u1', 'fortran_order': False, 'shape': (2L,), }", "ab", 2),
              "invalid .npy header: malformed integer");

  /* descr normalisation, as numpy's dtype.str prints it */
  struct { const char *in, *out; char kind; uint32_t size; } d[] = {
      {"=f8", "<f8", 'f', 8},   {"|f4", "<f4", 'f', 4},    {"f2", "<f2", 'f', 2},
      {"<b1", "|b1", 'b', 1},   {">S3", "|S3", 'S', 3},    {">U2", ">U2", 'U', 8},
      {"<c16", "<c16", 'c', 16}, {"|O", "|O", 'O', 8},    {"|V7", "|V7", 'V', 7},
      {"<M8[10s]", "<M8[10s]", 'M', 8}, {"<M8[1s]", "<M8[s]", 'M', 8},
      {"M8", "<M8", 'M', 8},    {">m8[ns]", ">m8[ns]", 'm', 8},
      {">i1", "|i1", 'i', 1},   {"<f16", "<f16", 'f', 16},
  };
  for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
    char hdr[128];
    snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (0,), }",
             d[k].in);
    b = raw(1, hdr, NULL, 0);
    int rc = ds_npy_parse(b.data, b.len, &a, &err);
    CHECK_MSG(rc == 0 && strcmp(a.descr, d[k].out) == 0 && a.kind == d[k].kind &&
                  a.itemsize == d[k].size,
              "%s -> rc %d descr %s size %u (%s)", d[k].in, rc, rc ? "-" : a.descr,
              rc ? 0 : a.itemsize, rc && err ? err : "");
    ds_buf_free(&b);
  }
  b = raw(1, "{'descr': '<M8[10s]', 'fortran_order': False, 'shape': (), }",
          "\0\0\0\0\0\0\0\0", 8);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.dt_unit == DS_NPY_UNIT_s &&
        a.dt_mult == 10 && a.ndim == 0 && a.count == 1);
  ds_buf_free(&b);

  /* object arrays: data is a pickle, not checked against count */
  b = raw(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1000,), }", "\x80\x02.", 3);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.has_object && a.data_len == 3);
  char *j = tojson(&b);
  CHECK_STR(j, "ERR: object arrays are not supported");
  free(j);
  ds_buf_free(&b);
  b = raw(1, "{'descr': [('a', '<i4'), (('t', 'b'), '|O'), ('c', [('x', '<f8')], 3)], "
             "'fortran_order': False, 'shape': (7,), }", "xx", 2);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.has_object &&
        a.itemsize == 4 + 8 + 24 && a.structured);
  ds_buf_free(&b);

  /* zero-length dims: count 0 even next to huge ones (numpy's limit: the
   * non-zero dims times the itemsize fit in int64) */
  b = raw(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (0, 576460752303423488), }",
          NULL, 0);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0 && a.count == 0 && a.data_len == 0);
  ds_buf_free(&b);
  free(err);
}

static void test_parse_errors(void) {
  const char *hdr = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  CHECK_PARSE(raw(1, hdr, "", 0),
              "truncated .npy: the data needs 24 bytes at offset 67, the blob has 0");
  CHECK_PARSE(raw(1, hdr, "12345678901234567890123", 23),
              "truncated .npy: the data needs 24 bytes at offset 67, the blob has 23");
  CHECK_PARSE(raw(1, hdr, "123456789012345678901234", 24), "ok");
  ds_buf b = raw(1, hdr, NULL, 0);
  b.len = 40; /* cut inside the header */
  CHECK_PARSE(b, "truncated .npy: the header needs 67 bytes, the blob has 40");
  CHECK_PARSE((ds_buf){0}, "not a .npy file (bad magic)");
  ds_buf junk = {0};
  ds_buf_puts(&junk, "\x93NUMPZ\x01\x00\x10\x00{}");
  CHECK_PARSE(junk, "not a .npy file (bad magic)");
  junk = (ds_buf){0};
  ds_buf_puts(&junk, "\x93NUMPY\x01");
  CHECK_PARSE(junk, "not a .npy file (bad magic)");
  CHECK_PARSE(raw(4, hdr, NULL, 0), "unsupported .npy format version 4.0");
  b = raw(1, hdr, NULL, 0);
  b.data[7] = 1;
  CHECK_PARSE(b, "unsupported .npy format version 1.1");
  b = raw(2, hdr, NULL, 0);
  b.len = 11;
  CHECK_PARSE(b, "truncated .npy: 11 bytes, the header length alone needs 12");
  b = raw(2, hdr, NULL, 0);
  b.data[11] = 0xff; /* a 4 GB header length */
  CHECK_PARSE(b, "truncated .npy: the header needs 4278190149 bytes, the blob has 69");

  struct { const char *hdr, *err; } bad[] = {
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3), }", "shape is not a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': [3], }", "shape is not a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': 3, }", "shape is not a tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (-1,), }", "negative dimension"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3 4), }", "malformed shape tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (,), }", "expected an integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (03,), }", "integer with leading zeros"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3.0,), }", "malformed shape tuple"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (3j,), }", "malformed integer"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (18446744073709551616,), }",
       "integer too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }",
       "array too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }",
       "array too large"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,"
       "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1), }", "more than 32 dimensions"},
      {"{'descr': '<f8', 'fortran_order': False}", "missing key 'shape'"},
      {"{'descr': '<f8', 'shape': (), }", "missing key 'fortran_order'"},
      {"{}", "missing key 'descr'"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': (), 'x': 1}", "unexpected key 'x'"},
      {"{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': ()}",
       "duplicate key 'descr'"},
      {"{'descr': '<f8', 'fortran_order': 0, 'shape': ()}", "fortran_order is not True or False"},
      {"{'descr': '<f8', 'fortran_order': Falsey, 'shape': ()}", "fortran_order is not True or False"},
      {"{'descr': '<f8', 'fortran_order': False, 'shape': ()} x", "text after the header dict"},
      {"['descr']", "header is not a dict"},
      {"{'descr': '<f8' 'fortran_order': False, 'shape': ()}", "malformed dict"},
      {"{'descr': '<f8, 'fortran_order': False, 'shape': ()}", "unsupported dtype '<f8, '"},
      {"{'descr' '<f8', 'fortran_order': False, 'shape': ()}", "expected ':'"},
      {"{'descr': '<f8", "unterminated string"},
      {"{'descr': '<q8', 'fortran_order': False, 'shape': ()}", "unsupported dtype '<q8'"},
      {"{'descr': '<i3', 'fortran_order': False, 'shape': ()}", "unsupported dtype '<i3'"},
      {"{'descr': '<f8x', 'fortran_order': False, 'shape': ()}", "unsupported dtype '<f8x'"},
      {"{'descr': '', 'fortran_order': False, 'shape': ()}", "unsupported dtype ''"},
      {"{'descr': '|S', 'fortran_order': False, 'shape': ()}", "dtype '|S' has no size"},
      {"{'descr': '|S99999999999', 'fortran_order': False, 'shape': ()}",
       "dtype '|S99999999999': size too large"},
      {"{'descr': '<U1000000000', 'fortran_order': False, 'shape': ()}",
       "dtype '<U1000000000': size too large"},
      {"{'descr': '<M8[xs]', 'fortran_order': False, 'shape': ()}", "unknown datetime unit 'xs'"},
      {"{'descr': '<M8[0s]', 'fortran_order': False, 'shape': ()}", "bad unit multiplier"},
      {"{'descr': '<M8[s', 'fortran_order': False, 'shape': ()}", "malformed datetime unit"},
      {"{'descr': '<M4', 'fortran_order': False, 'shape': ()}", "unsupported dtype '<M4'"},
      {"{'descr': '<\\x66\\x38', 'fortran_order': False, 'shape': ()}", "escape in dtype string"},
      {"{'descr': 5, 'fortran_order': False, 'shape': ()}", "expected a string"},
      {"{'descr': '|S0', 'fortran_order': False, 'shape': (5,)}", "zero-size dtype"},
      {"{'descr': [('a', '<i4'), ('b')], 'fortran_order': False, 'shape': ()}",
       "malformed structured dtype"},
      {"{'descr': [('a', '<i4', (2147483647,))], 'fortran_order': False, 'shape': ()}",
       "dtype too large"},
  };
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    ds_buf x = raw(1, bad[k].hdr, "0123456789abcdef", 16);
    char *m = parse_msg(&x);
    char *want = ds_strf("invalid .npy header: %s", bad[k].err);
    CHECK_MSG(strcmp(m, want) == 0, "header %s: got \"%s\", want \"%s\"", bad[k].hdr, m, want);
    free(want);
    free(m);
    ds_buf_free(&x);
  }
  /* structured dtypes nested 40 deep */
  ds_buf deep = {0};
  ds_buf_puts(&deep, "{'descr': ");
  for (int i = 0; i < 40; i++) ds_buf_puts(&deep, "[('a', ");
  ds_buf_puts(&deep, "'<i4'");
  for (int i = 0; i < 40; i++) ds_buf_puts(&deep, ")]");
  ds_buf_puts(&deep, ", 'fortran_order': False, 'shape': ()}");
  ds_buf_append(&deep, "", 1);
  CHECK_PARSE(raw(1, (const char *)deep.data, "0123", 4),
              "invalid .npy header: dtype nested too deeply");
  ds_buf_free(&deep);
}

/* Every truncation of a valid blob fails cleanly; every single-byte change
 * of the header either parses or fails, never reads out of bounds (the
 * sanitizer build checks the reading part). */
static void test_parse_fuzzish(void) {
  ds_buf b = npy("<i4", 0, 2, SHAPE(2, 2), "\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0", 16);
  int all_fail = 1;
  for (size_t n = 0; n < b.len; n++) {
    uint8_t *copy = malloc(n ? n : 1);
    memcpy(copy, b.data, n);
    ds_npy a;
    char *err = NULL;
    if (ds_npy_parse(copy, n, &a, &err) == 0) all_fail = 0;
    free(err);
    free(copy);
  }
  CHECK(all_fail);
  int survived = 1;
  for (size_t i = 0; i < 128; i++) {
    for (int v = 0; v < 256; v += 7) {
      uint8_t *copy = malloc(b.len);
      memcpy(copy, b.data, b.len);
      copy[i] = (uint8_t)v;
      ds_npy a;
      ds_buf out = {0};
      char *err = NULL;
      if (ds_npy_parse(copy, b.len, &a, &err) == 0) {
        if (a.data + a.data_len > copy + b.len) survived = 0;
        ds_npy_to_json(&a, &out, &err);
      }
      ds_buf_free(&out);
      free(err);
      free(copy);
    }
  }
  CHECK(survived);
  ds_buf_free(&b);
}

/* ------------------------------------------------------------ JSON */

static void test_json_layout(void) {
  CHECK_TOJSON(npy("<i4", 0, 2, SHAPE(2, 3),
                   "\0\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0\5\0\0\0", 24),
               "[[0,1,2],[3,4,5]]");
  CHECK_TOJSON(npy("|u1", 1, 2, SHAPE(2, 3), "\0\1\2\3\4\5", 6), "[[0,2,4],[1,3,5]]");
  CHECK_TOJSON(npy("|u1", 1, 3, SHAPE(2, 2, 2), "\0\1\2\3\4\5\6\7", 8),
               "[[[0,4],[2,6]],[[1,5],[3,7]]]");
  CHECK_TOJSON(npy("|u1", 0, 3, SHAPE(2, 2, 2), "\0\1\2\3\4\5\6\7", 8),
               "[[[0,1],[2,3]],[[4,5],[6,7]]]");
  CHECK_TOJSON(npy("|u1", 1, 1, SHAPE(3), "\7\10\11", 3), "[7,8,9]");
  CHECK_TOJSON(npy("<i2", 0, 0, NULL, "\7\0", 2), "7");
  CHECK_TOJSON(npy("<i2", 0, 1, SHAPE(0), NULL, 0), "[]");
  CHECK_TOJSON(npy("<i2", 0, 2, SHAPE(2, 0), NULL, 0), "[[],[]]");
  CHECK_TOJSON(npy("<i2", 1, 2, SHAPE(2, 0), NULL, 0), "[[],[]]");
  CHECK_TOJSON(npy("<i2", 0, 2, SHAPE(0, 2), NULL, 0), "[]");
  CHECK_TOJSON(npy("<i2", 0, 3, SHAPE(2, 1, 0), NULL, 0), "[[[]],[[]]]");
  CHECK_TOJSON(npy("<i2", 0, 2, SHAPE(1ull << 40, 0), NULL, 0),
               "ERR: empty array with too many sub-lists to print");
}

static void test_json_numbers(void) {
  CHECK_TOJSON(npy("|b1", 0, 1, SHAPE(3), "\1\0\2", 3), "[true,false,true]");
  CHECK_TOJSON(npy("|i1", 0, 1, SHAPE(3), "\x80\x7f\xff", 3), "[-128,127,-1]");
  CHECK_TOJSON(npy(">i2", 0, 1, SHAPE(2), "\x80\x00\x01\x02", 4), "[-32768,258]");
  CHECK_TOJSON(npy("<i4", 0, 1, SHAPE(1), "\xfe\xff\xff\xff", 4), "[-2]");
  CHECK_TOJSON(npy("<i8", 0, 1, SHAPE(2), "\0\0\0\0\0\0\0\x80\xff\xff\xff\xff\xff\xff\xff\x7f", 16),
               "[-9223372036854775808,9223372036854775807]");
  CHECK_TOJSON(npy("<u8", 0, 1, SHAPE(1), "\xff\xff\xff\xff\xff\xff\xff\xff", 8),
               "[18446744073709551615]");
  CHECK_TOJSON(npy(">u2", 0, 1, SHAPE(1), "\x12\x34", 2), "[4660]");
  CHECK_TOJSON(npy(">u4", 0, 1, SHAPE(1), "\x12\x34\x56\x78", 4), "[305419896]");
  /* float16: 1, -2.5, 65504, smallest subnormal, inf, nan, -0 */
  CHECK_TOJSON(npy("<f2", 0, 1, SHAPE(7),
                   "\x00\x3c\x00\xc1\xff\x7b\x01\x00\x00\x7c\x00\x7e\x00\x80", 14),
               "[1.0,-2.5,65504.0,5.9604644775390625e-08,null,null,-0.0]");
  CHECK_TOJSON(npy(">f2", 0, 1, SHAPE(2), "\x3c\x00\x35\x55", 4), "[1.0,0.333251953125]");
  CHECK_TOJSON(npy("<f4", 0, 1, SHAPE(2), "\xcd\xcc\xcc\x3d\x00\x00\xc0\x7f", 8),
               "[0.10000000149011612,null]");
  CHECK_TOJSON(npy(">f8", 0, 1, SHAPE(2), "\x3f\xf8\0\0\0\0\0\0\x7f\xf0\0\0\0\0\0\0", 16),
               "[1.5,null]");
  CHECK_TOJSON(npy("<f8", 0, 0, NULL, "\x9a\x99\x99\x99\x99\x99\xb9\x3f", 8), "0.1");
  CHECK_TOJSON(npy("<c8", 0, 1, SHAPE(1), "\0\0\xc0\x3f\0\0\0\xc0", 8), "[[1.5,-2.0]]");
  CHECK_TOJSON(npy(">c16", 0, 0, NULL, "\x3f\xf0\0\0\0\0\0\0\x7f\xf8\0\0\0\0\0\0", 16),
               "[1.0,null]");
  CHECK_TOJSON(npy("<f16", 0, 1, SHAPE(1), "0123456789abcdef", 16),
               "ERR: dtype <f16 is not supported");
  CHECK_TOJSON(npy("<c32", 0, 1, SHAPE(1), "0123456789abcdef0123456789abcdef", 32),
               "ERR: dtype <c32 is not supported");
}

static void test_json_text(void) {
  CHECK_TOJSON(npy("<U3", 0, 1, SHAPE(3),
                   "a\0\0\0b\0\0\0\0\0\0\0"
                   "\xe9\0\0\0\x00\xf6\x01\0x\0\0\0"
                   "a\0\0\0\0\0\0\0b\0\0\0", 36),
               "[\"ab\",\"\xc3\xa9\xf0\x9f\x98\x80x\",\"a\\u0000b\"]");
  CHECK_TOJSON(npy(">U2", 0, 1, SHAPE(2), "\0\0\0h\0\0\0i\0\0\xd8\0\0\x11\0\0", 16),
               "[\"hi\",\"\xef\xbf\xbd\xef\xbf\xbd\"]");
  CHECK_TOJSON(npy("<U0", 0, 1, SHAPE(0), NULL, 0), "[]");
  CHECK_TOJSON(npy("|S4", 0, 1, SHAPE(4),
                   "ab\0\0" "\xff\xfe\0\0" "a\0b\0" "\xc3\xa9\0\0", 16),
               "[\"YWI=\",\"//4=\",\"YQBi\",\"w6k=\"]");
  CHECK_TOJSON(npy("|S2", 0, 0, NULL, "\0\0", 2), "\"\"");
  CHECK_TOJSON(npy("|V2", 0, 1, SHAPE(2), "\1\2\3\4", 4), "[\"AQI=\",\"AwQ=\"]");
}

/* '<M8[unit]' 1-d array of the given int64 values, as JSON. */
static char *dt_json(const char *descr, const int64_t *v, int n) {
  uint8_t data[8 * 8];
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 8; k++) data[8 * i + k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
  ds_buf b = npy(descr, 0, 1, SHAPE((uint64_t)n), data, 8 * (size_t)n);
  char *s = tojson(&b);
  ds_buf_free(&b);
  return s;
}

static void test_json_datetime(void) {
  /* what numpy.datetime_as_string prints for 0, 1, -1, 1000000, 123456789 */
  const int64_t v[5] = {0, 1, -1, 1000000, 123456789};
  struct { const char *descr, *want; } t[] = {
      {"<M8[Y]", "[\"1970\",\"1971\",\"1969\",\"1001970\",\"123458759\"]"},
      {"<M8[M]", "[\"1970-01\",\"1970-02\",\"1969-12\",\"85303-05\",\"10290035-10\"]"},
      {"<M8[W]", "[\"1970-01-01\",\"1970-01-08\",\"1969-12-25\",\"21135-05-09\",\"2368062-06-15\"]"},
      {"<M8[D]", "[\"1970-01-01\",\"1970-01-02\",\"1969-12-31\",\"4707-11-29\",\"339983-03-18\"]"},
      {"<M8[h]", "[\"1970-01-01T00\",\"1970-01-01T01\",\"1969-12-31T23\",\"2084-01-29T16\","
                 "\"16053-11-18T21\"]"},
      {"<M8[m]", "[\"1970-01-01T00:00\",\"1970-01-01T00:01\",\"1969-12-31T23:59\","
                 "\"1971-11-26T10:40\",\"2204-09-24T21:09\"]"},
      {"<M8[s]", "[\"1970-01-01T00:00:00\",\"1970-01-01T00:00:01\",\"1969-12-31T23:59:59\","
                 "\"1970-01-12T13:46:40\",\"1973-11-29T21:33:09\"]"},
      {"<M8[ms]", "[\"1970-01-01T00:00:00.000\",\"1970-01-01T00:00:00.001\","
                  "\"1969-12-31T23:59:59.999\",\"1970-01-01T00:16:40.000\","
                  "\"1970-01-02T10:17:36.789\"]"},
      {"<M8[us]", "[\"1970-01-01T00:00:00.000000\",\"1970-01-01T00:00:00.000001\","
                  "\"1969-12-31T23:59:59.999999\",\"1970-01-01T00:00:01.000000\","
                  "\"1970-01-01T00:02:03.456789\"]"},
      {"<M8[ns]", "[\"1970-01-01T00:00:00.000000000\",\"1970-01-01T00:00:00.000000001\","
                  "\"1969-12-31T23:59:59.999999999\",\"1970-01-01T00:00:00.001000000\","
                  "\"1970-01-01T00:00:00.123456789\"]"},
      {"<M8[ps]", "[\"1970-01-01T00:00:00.000000000000\",\"1970-01-01T00:00:00.000000000001\","
                  "\"1969-12-31T23:59:59.999999999999\",\"1970-01-01T00:00:00.000001000000\","
                  "\"1970-01-01T00:00:00.000123456789\"]"},
      {"<M8[fs]", "[\"1970-01-01T00:00:00.000000000000000\","
                  "\"1970-01-01T00:00:00.000000000000001\","
                  "\"1969-12-31T23:59:59.999999999999999\","
                  "\"1970-01-01T00:00:00.000000001000000\","
                  "\"1970-01-01T00:00:00.000000123456789\"]"},
      {"<M8[as]", "[\"1970-01-01T00:00:00.000000000000000000\","
                  "\"1970-01-01T00:00:00.000000000000000001\","
                  "\"1969-12-31T23:59:59.999999999999999999\","
                  "\"1970-01-01T00:00:00.000000000001000000\","
                  "\"1970-01-01T00:00:00.000000000123456789\"]"},
      {"<M8[10s]", "[\"1970-01-01T00:00:00\",\"1970-01-01T00:00:10\",\"1969-12-31T23:59:50\","
                   "\"1970-04-26T17:46:40\",\"2009-02-13T23:31:30\"]"},
      {"<M8[3D]", "[\"1970-01-01\",\"1970-01-04\",\"1969-12-29\",\"10183-09-21\","
                  "\"1016009-08-16\"]"},
      {"<m8[ns]", "[0,1,-1,1000000,123456789]"},
  };
  for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
    char *s = dt_json(t[k].descr, v, 5);
    CHECK_MSG(strcmp(s, t[k].want) == 0, "%s: got %s", t[k].descr, s);
    free(s);
  }
  struct { const char *descr; int64_t v; const char *want; } e[] = {
      {"<M8[D]", -800000, "[\"-221-09-04\"]"},
      {"<M8[D]", 3000000, "[\"10183-09-21\"]"},
      {"<M8[D]", INT64_C(1) << 62, "[\"12626367463885247-04-15\"]"},
      {"<M8[D]", -(INT64_C(1) << 62), "[\"-12626367463881308-09-18\"]"},
      {"<M8[s]", INT64_C(1) << 62, "[\"146138514283-06-19T07:45:04\"]"},
      {"<M8[Y]", INT64_C(1) << 62, "[\"4611686018427389874\"]"},
      {"<M8[Y]", INT64_MAX, "ERR: datetime64 value out of range"},
      {"<M8[W]", INT64_MAX, "ERR: datetime64 value out of range"},
      {"<M8[2D]", INT64_MIN / 2, "[\"-25252734927764585-06-07\"]"},
      {"<M8[2D]", INT64_MIN / 2 - 1, "ERR: datetime64 value out of range"},
      {"<M8[D]", INT64_MIN + 1, "[\"-25252734927764585-06-08\"]"},
      {"<M8[M]", INT64_MIN + 1, "[\"-768614336404562681-06\"]"},
      {"<M8[as]", INT64_MIN + 1, "[\"1969-12-31T23:59:50.776627963145224193\"]"},
      {"<M8[s]", DS_NPY_NAT, "[null]"},
      {"<m8[s]", DS_NPY_NAT, "[null]"},
      {"<M8", DS_NPY_NAT, "[null]"},
      {"<M8", 5, "ERR: datetime64 without a unit"},
  };
  for (size_t k = 0; k < sizeof e / sizeof e[0]; k++) {
    char *s = dt_json(e[k].descr, &e[k].v, 1);
    CHECK_MSG(strcmp(s, e[k].want) == 0, "%s %lld: got %s", e[k].descr, (long long)e[k].v, s);
    free(s);
  }
  CHECK_TOJSON(npy(">M8[D]", 0, 0, NULL, "\0\0\0\0\0\0\0\1", 8), "\"1970-01-02\"");
}

/* ------------------------------------------------------------ elements */

static void test_elements(void) {
  ds_buf b = npy("|u1", 1, 2, SHAPE(2, 3), "\0\1\2\3\4\5", 6);
  ds_npy a;
  char *err = NULL;
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0);
  uint64_t pos = 99;
  CHECK(ds_npy_offset(&a, SHAPE(1, 2), &pos, &err) == 0 && pos == 5);
  CHECK(ds_npy_offset(&a, SHAPE(0, 1), &pos, &err) == 0 && pos == 2);
  CHECK(ds_npy_offset(&a, SHAPE(2, 0), &pos, &err) == -1);
  CHECK_STR(err, "index 2 is out of bounds for axis 0 with size 2");
  CHECK(ds_npy_offset(&a, SHAPE(0, 3), &pos, &err) == -1);
  CHECK_STR(err, "index 3 is out of bounds for axis 1 with size 3");
  ds_value v;
  ds_buf scratch = {0};
  CHECK(ds_npy_element(&a, 5, &v, &scratch, &err) == 0 && v.type == DS_V_UINT && v.u.u == 5);
  CHECK(ds_npy_element(&a, 6, &v, &scratch, &err) == -1);
  CHECK_STR(err, "element 6 is out of range");
  ds_buf_free(&b);

  b = npy("<U2", 0, 0, NULL, "\xe9\0\0\0\0\0\0\0", 8);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0);
  CHECK(ds_npy_element(&a, 0, &v, &scratch, &err) == 0 && v.type == DS_V_TEXT &&
        v.u.s.n == 2 && memcmp(v.u.s.p, "\xc3\xa9", 2) == 0);
  ds_buf_free(&b);

  b = npy("<M8[D]", 0, 1, SHAPE(2), "\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80", 16);
  CHECK(ds_npy_parse(b.data, b.len, &a, &err) == 0);
  CHECK(ds_npy_element(&a, 0, &v, &scratch, &err) == 0 && v.type == DS_V_TEXT &&
        v.u.s.n == 10 && memcmp(v.u.s.p, "1970-01-02", 10) == 0);
  CHECK(ds_npy_element(&a, 1, &v, &scratch, &err) == 0 && v.type == DS_V_NULL);
  ds_buf_free(&b);

  ds_buf iso = {0};
  CHECK(ds_npy_datetime_iso(&iso, 86400 + 3661, DS_NPY_UNIT_s, 1, &err) == 0 &&
        iso.len == 19 && memcmp(iso.data, "1970-01-02T01:01:01", 19) == 0);
  ds_buf_free(&iso);
  ds_buf_free(&scratch);
  free(err);
}

/* ------------------------------------------------------------ SQL */

/* The single result of `sql` with ?1 bound to blob b (when b is not NULL)
 * as "type:value", or "error:<message>" (malloc'd). */
static char *sqlb(sqlite3 *db, const char *sql, const ds_buf *b) {
  sqlite3_stmt *st = NULL;
  char *out;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
    return ds_strf("error:%s", sqlite3_errmsg(db));
  if (b) sqlite3_bind_blob(st, 1, b->data ? (const void *)b->data : "", (int)b->len,
                           SQLITE_TRANSIENT);
  if (sqlite3_step(st) != SQLITE_ROW) {
    out = ds_strf("error:%s", sqlite3_errmsg(db));
  } else {
    switch (sqlite3_column_type(st, 0)) {
      case SQLITE_NULL: out = ds_strf("null"); break;
      case SQLITE_INTEGER: out = ds_strf("integer:%lld", (long long)sqlite3_column_int64(st, 0)); break;
      case SQLITE_FLOAT: out = ds_strf("real:%.17g", sqlite3_column_double(st, 0)); break;
      case SQLITE_TEXT: out = ds_strf("text:%s", (const char *)sqlite3_column_text(st, 0)); break;
      default: {
        const uint8_t *p = sqlite3_column_blob(st, 0);
        int n = sqlite3_column_bytes(st, 0);
        ds_buf h = {0};
        ds_buf_puts(&h, "blob:");
        for (int i = 0; i < n; i++) ds_buf_printf(&h, "%02x", p[i]);
        ds_buf_append(&h, "", 1);
        out = (char *)h.data;
      }
    }
  }
  sqlite3_finalize(st);
  return out;
}

#define CHECK_SQL(db, sql, blob, want)  \
  do {                                  \
    char *s_ = sqlb(db, sql, blob);     \
    CHECK_STR(s_, want);                \
    free(s_);                           \
  } while (0)

static void test_sql_basic(sqlite3 *db) {
  ds_buf m = npy("<i4", 0, 2, SHAPE(2, 3), "\0\0\0\0\1\0\0\0\2\0\0\0\3\0\0\0\4\0\0\0\5\0\0\0", 24);
  ds_buf f = npy("|u1", 1, 2, SHAPE(2, 3), "\0\1\2\3\4\5", 6);
  ds_buf z = npy("<f8", 0, 0, NULL, "\0\0\0\0\0\0\x04\x40", 8); /* 2.5 */
  ds_buf e = npy("<i2", 0, 2, SHAPE(0, 3), NULL, 0);
  CHECK_SQL(db, "SELECT npy_shape(?1)", &m, "text:[2,3]");
  CHECK_SQL(db, "SELECT npy_shape(?1)", &z, "text:[]");
  CHECK_SQL(db, "SELECT npy_shape(?1)", &e, "text:[0,3]");
  CHECK_SQL(db, "SELECT json_array(npy_shape(?1))", &m, "text:[[2,3]]");
  CHECK_SQL(db, "SELECT npy_shape(?1) ->> '$[1]'", &m, "integer:3");
  CHECK_SQL(db, "SELECT npy_dtype(?1)", &m, "text:<i4");
  CHECK_SQL(db, "SELECT npy_dtype(?1)", &f, "text:|u1");
  CHECK_SQL(db, "SELECT npy_size(?1)", &m, "integer:6");
  CHECK_SQL(db, "SELECT npy_size(?1)", &z, "integer:1");
  CHECK_SQL(db, "SELECT npy_size(?1)", &e, "integer:0");
  CHECK_SQL(db, "SELECT npy_json(?1)", &m, "text:[[0,1,2],[3,4,5]]");
  CHECK_SQL(db, "SELECT npy_json(?1)", &f, "text:[[0,2,4],[1,3,5]]");
  CHECK_SQL(db, "SELECT npy_json(?1)", &z, "text:2.5");
  CHECK_SQL(db, "SELECT npy_json(?1)", &e, "text:[]");
  CHECK_SQL(db, "SELECT json_array(npy_json(?1))", &m, "text:[[[0,1,2],[3,4,5]]]");
  CHECK_SQL(db, "SELECT sum(value) FROM json_each(npy_json(?1), '$[1]')", &m, "integer:12");
  CHECK_SQL(db, "SELECT npy_get(?1, 1, 2)", &m, "integer:5");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 1)", &m, "integer:1");
  CHECK_SQL(db, "SELECT npy_get(?1, 1, 2.0)", &m, "integer:5");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 1)", &f, "integer:2");
  CHECK_SQL(db, "SELECT npy_get(?1, 1, 0)", &f, "integer:1");
  CHECK_SQL(db, "SELECT npy_get(?1)", &z, "real:2.5");
  CHECK_SQL(db, "SELECT npy_get(?1, NULL, 1)", &m, "null");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &m,
            "error:npy_get: the array has 2 dimensions but 1 index was given");
  CHECK_SQL(db, "SELECT npy_get(?1, 1, 1, 1)", &m,
            "error:npy_get: the array has 2 dimensions but 3 indices were given");
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &z,
            "error:npy_get: the array has 0 dimensions but 1 index was given");
  CHECK_SQL(db, "SELECT npy_get(?1, -1, 0)", &m,
            "error:npy_get: index 1 is negative (-1); negative indices are not allowed");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 3)", &m,
            "error:npy_get: index 3 is out of bounds for axis 1 with size 3");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 0)", &e,
            "error:npy_get: index 0 is out of bounds for axis 0 with size 0");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 'a')", &m, "error:npy_get: index 2 is not an integer");
  CHECK_SQL(db, "SELECT npy_get(?1, 0, 0.5)", &m, "error:npy_get: index 2 is not an integer");
  CHECK_SQL(db, "SELECT npy_get()", NULL, "error:npy_get: needs a BLOB argument");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &m, "integer:15");
  CHECK_SQL(db, "SELECT npy_min(?1)", &m, "integer:0");
  CHECK_SQL(db, "SELECT npy_max(?1)", &m, "integer:5");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &m, "real:2.5");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &z, "real:2.5");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &e, "integer:0");
  CHECK_SQL(db, "SELECT npy_min(?1)", &e, "null");
  CHECK_SQL(db, "SELECT npy_max(?1)", &e, "null");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &e, "null");
  ds_buf_free(&m);
  ds_buf_free(&f);
  ds_buf_free(&z);
  ds_buf_free(&e);
}

static void test_sql_dtypes(sqlite3 *db) {
  ds_buf b = npy("<u8", 0, 1, SHAPE(2), "\xff\xff\xff\xff\xff\xff\xff\xff\1\0\0\0\0\0\0\0", 16);
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "text:18446744073709551615");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "text:18446744073709551615");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "integer:1");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "error:npy_sum: integer overflow");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &b, "real:9.2233720368547758e+18");
  ds_buf_free(&b);
  b = npy("<u8", 0, 1, SHAPE(2), "\0\0\0\0\0\0\0\x80\1\0\0\0\0\0\0\0", 16);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "text:9223372036854775809");
  ds_buf_free(&b);
  b = npy("<i8", 0, 1, SHAPE(2), "\xff\xff\xff\xff\xff\xff\xff\x7f\1\0\0\0\0\0\0\0", 16);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "error:npy_sum: integer overflow");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "integer:9223372036854775807");
  ds_buf_free(&b);
  b = npy(">i2", 0, 1, SHAPE(3), "\xff\xfe\x00\x05\x01\x00", 6);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "integer:259");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "integer:-2");
  CHECK_SQL(db, "SELECT npy_get(?1, 2)", &b, "integer:256");
  ds_buf_free(&b);
  b = npy("|b1", 0, 1, SHAPE(4), "\1\0\1\1", 4);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "integer:3");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "integer:1");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "integer:0");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &b, "real:0.75");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "integer:0");
  ds_buf_free(&b);
  /* float16 1, -2.5, 65504 */
  b = npy("<f2", 0, 1, SHAPE(3), "\x00\x3c\x00\xc1\xff\x7b", 6);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "real:65502.5");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "real:-2.5");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "real:65504");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "real:-2.5");
  ds_buf_free(&b);
  /* a NaN makes every reduction NULL */
  b = npy("<f4", 0, 1, SHAPE(2), "\0\0\x80\x3f\0\0\xc0\x7f", 8);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "real:1");
  ds_buf_free(&b);
  b = npy("<f8", 0, 1, SHAPE(2), "\0\0\0\0\0\0\xf0\x7f\0\0\0\0\0\0\xf0\x3f", 16);
  CHECK_SQL(db, "SELECT npy_sum(?1) > 1e308", &b, "integer:1");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "real:1");
  ds_buf_free(&b);
  b = npy("<f8", 0, 1, SHAPE(2), "\0\0\0\0\0\0\xf0\x7f\0\0\0\0\0\0\xf0\xff", 16);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "null"); /* inf + -inf */
  ds_buf_free(&b);
  /* compensated summation: 1e16 + 1 + 1 - 1e16 */
  b = npy("<f8", 0, 1, SHAPE(4), "\0\x80\xe0\x37\x79\xc3\x41\x43" "\0\0\0\0\0\0\xf0\x3f"
          "\0\0\0\0\0\0\xf0\x3f" "\0\x80\xe0\x37\x79\xc3\x41\xc3", 32);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "real:2");
  ds_buf_free(&b);
  b = npy("<f8", 0, 1, SHAPE(0), NULL, 0);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "real:0");
  ds_buf_free(&b);
  b = npy("<c16", 0, 1, SHAPE(1), "\0\0\0\0\0\0\xf8\x3f\0\0\0\0\0\0\0\xc0", 16);
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "text:[1.5,-2.0]");
  CHECK_SQL(db, "SELECT json_array(npy_get(?1, 0))", &b, "text:[[1.5,-2.0]]");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "error:npy_sum: dtype <c16 is not a numeric dtype");
  ds_buf_free(&b);
  b = npy("<U2", 0, 1, SHAPE(2), "h\0\0\0i\0\0\0\xe9\0\0\0\0\0\0\0", 16);
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "text:hi");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "text:\xc3\xa9");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "error:npy_min: dtype <U2 is not a numeric dtype");
  ds_buf_free(&b);
  b = npy("|S3", 0, 1, SHAPE(2), "ab\0\xff\0\0", 6);
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "blob:6162");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "blob:ff");
  CHECK_SQL(db, "SELECT npy_json(?1)", &b, "text:[\"YWI=\",\"/w==\"]");
  ds_buf_free(&b);
  b = npy("<M8[s]", 0, 1, SHAPE(3), "\x80\x51\x01\0\0\0\0\0" "\0\0\0\0\0\0\0\0"
          "\x3c\0\0\0\0\0\0\0", 24);
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "text:1970-01-02T00:00:00");
  CHECK_SQL(db, "SELECT npy_min(?1)", &b, "text:1970-01-01T00:00:00");
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "text:1970-01-02T00:00:00");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "error:npy_sum: dtype <M8[s] cannot be summed");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &b, "error:npy_mean: dtype <M8[s] cannot be summed");
  ds_buf_free(&b);
  b = npy("<M8[s]", 0, 1, SHAPE(2), "\1\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80", 16);
  CHECK_SQL(db, "SELECT npy_max(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "null");
  ds_buf_free(&b);
  b = npy("<m8[ms]", 0, 1, SHAPE(2), "\5\0\0\0\0\0\0\0\xfe\xff\xff\xff\xff\xff\xff\xff", 16);
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "integer:-2");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "integer:3");
  CHECK_SQL(db, "SELECT npy_mean(?1)", &b, "real:1.5");
  ds_buf_free(&b);
  b = npy("<m8[ms]", 0, 1, SHAPE(2), "\5\0\0\0\0\0\0\0\0\0\0\0\0\0\0\x80", 16);
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b, "null");
  CHECK_SQL(db, "SELECT npy_get(?1, 1)", &b, "null");
  ds_buf_free(&b);
  b = npy("[('a', '<i4')]", 0, 1, SHAPE(1), "\1\0\0\0", 4);
  CHECK_SQL(db, "SELECT npy_dtype(?1)", &b, "text:[('a', '<i4')]");
  CHECK_SQL(db, "SELECT npy_json(?1)", &b, "text:[[1]]");
  CHECK_SQL(db, "SELECT npy_get(?1, 0)", &b, "error:npy_get: structured dtypes are not supported");
  CHECK_SQL(db, "SELECT npy_sum(?1)", &b,
            "error:npy_sum: dtype [('a', '<i4')] is not a numeric dtype");
  ds_buf_free(&b);
}

/* Every function fails with its own name on garbage, truncation and
 * non-BLOB arguments, and gives NULL for NULL. */
static void test_sql_errors(sqlite3 *db) {
  static const char *const fns[] = {"npy_shape", "npy_dtype", "npy_size", "npy_json",
                                    "npy_get",   "npy_sum",   "npy_min",  "npy_max",
                                    "npy_mean"};
  ds_buf garbage = {0};
  ds_buf_append(&garbage, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b", 12);
  ds_buf trunc = npy("<f8", 0, 1, SHAPE(3), "0123456789", 10);
  ds_buf trunc_hdr = npy("<f8", 0, 1, SHAPE(3), NULL, 0);
  trunc_hdr.len = 50;
  ds_buf empty = {0};
  for (size_t k = 0; k < sizeof fns / sizeof fns[0]; k++) {
    const char *extra = strcmp(fns[k], "npy_get") == 0 ? ", 0" : "";
    char sql[96], want[200];
    snprintf(sql, sizeof sql, "SELECT %s(?1%s)", fns[k], extra);
    snprintf(want, sizeof want, "error:%s: not a .npy file (bad magic)", fns[k]);
    CHECK_SQL(db, sql, &garbage, want);
    CHECK_SQL(db, sql, &empty, want);
    snprintf(want, sizeof want,
             "error:%s: truncated .npy: the data needs 24 bytes at offset 128, the blob has 10",
             fns[k]);
    CHECK_SQL(db, sql, &trunc, want);
    snprintf(want, sizeof want,
             "error:%s: truncated .npy: the header needs 128 bytes, the blob has 50", fns[k]);
    CHECK_SQL(db, sql, &trunc_hdr, want);
    snprintf(sql, sizeof sql, "SELECT %s('text'%s)", fns[k], extra);
    snprintf(want, sizeof want, "error:%s: argument is not a BLOB holding a .npy file", fns[k]);
    CHECK_SQL(db, sql, NULL, want);
    snprintf(sql, sizeof sql, "SELECT %s(NULL%s)", fns[k], extra);
    CHECK_SQL(db, sql, NULL, "null");
  }
  ds_buf_free(&garbage);
  ds_buf_free(&trunc);
  ds_buf_free(&trunc_hdr);
}

static void test_sql(void) {
  sqlite3 *db = NULL;
  CHECK(sqlite3_open(":memory:", &db) == SQLITE_OK);
  CHECK(ds_npy_register_functions(db) == SQLITE_OK);
  test_sql_basic(db);
  test_sql_dtypes(db);
  test_sql_errors(db);
  sqlite3_close(db);
}

int main(void) {
  test_writer();
  test_parse_ok();
  test_parse_errors();
  test_parse_fuzzish();
  test_json_layout();
  test_json_numbers();
  test_json_text();
  test_json_datetime();
  test_elements();
  test_sql();
  return check_exit();
}
