/* test_bcolz_filter.c - unit tests of the bcolz comparison pre-filter:
 * each comparison against SQLite's rules exactly (integers and floats
 * compared exactly, NaN / NaT as NULL, BINARY text), the cells it must keep
 * because SQL decides them, and the tight scan loops agreeing with the
 * row-at-a-time test on every dtype and operator. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "formats/bcolz/bcolz_filter.h"

static bcolz_dtype dtype(char kind, char order, uint32_t itemsize) {
  bcolz_dtype d;
  memset(&d, 0, sizeof d);
  d.kind = kind;
  d.byteorder = order;
  d.itemsize = itemsize;
  d.unit = -1;
  d.mult = 1;
  d.nelem = 1;
  d.atom = itemsize;
  return d;
}

static bcolz_filter num_filter(bcolz_op op, int is_int, int64_t i, double f) {
  bcolz_filter x;
  memset(&x, 0, sizeof x);
  x.op = op;
  x.vkind = is_int ? BCOLZ_FV_INT : BCOLZ_FV_FLOAT;
  x.i = i;
  x.f = f;
  return x;
}

/* One cell of any little/big-endian integer width. */
static void store_int(uint8_t *p, uint32_t size, int big, int64_t v) {
  for (uint32_t k = 0; k < size; k++)
    p[big ? size - 1 - k : k] = (uint8_t)((uint64_t)v >> (8 * k));
}

static void test_numbers(void) {
  bcolz_dtype i8 = dtype('i', '<', 8), f8 = dtype('f', '<', 8);
  uint8_t cell[8];
  /* integer against float, exactly: 2^53 + 1 is not 2^53 */
  int64_t big = (INT64_C(1) << 53) + 1;
  store_int(cell, 8, 0, big);
  bcolz_filter f = num_filter(BCOLZ_OP_GT, 0, 0, 9007199254740992.0);
  CHECK(bcolz_filter_test(&f, &i8, cell));
  f.op = BCOLZ_OP_EQ;
  CHECK(!bcolz_filter_test(&f, &i8, cell));
  /* 3 vs 2.5 and -3 vs -2.5 */
  store_int(cell, 8, 0, 3);
  f = num_filter(BCOLZ_OP_GT, 0, 0, 2.5);
  CHECK(bcolz_filter_test(&f, &i8, cell));
  store_int(cell, 8, 0, -3);
  CHECK(!bcolz_filter_test(&f, &i8, cell));
  f.op = BCOLZ_OP_LT;
  CHECK(bcolz_filter_test(&f, &i8, cell));
  /* INT64_MAX against 2^63 (a double just above it) */
  store_int(cell, 8, 0, INT64_MAX);
  f = num_filter(BCOLZ_OP_LT, 0, 0, 9223372036854775808.0);
  CHECK(bcolz_filter_test(&f, &i8, cell));
  f.op = BCOLZ_OP_GE;
  CHECK(!bcolz_filter_test(&f, &i8, cell));
  /* float cell against an integer value */
  double d = 2.0;
  memcpy(cell, &d, 8);
  f = num_filter(BCOLZ_OP_EQ, 1, 2, 0);
  CHECK(bcolz_filter_test(&f, &f8, cell));
  f.op = BCOLZ_OP_LE;
  f.i = 1;
  CHECK(!bcolz_filter_test(&f, &f8, cell));
  /* NaN is NULL: no comparison holds, IS NULL does */
  d = NAN;
  memcpy(cell, &d, 8);
  for (int op = BCOLZ_OP_EQ; op <= BCOLZ_OP_GE; op++) {
    f = num_filter((bcolz_op)op, 0, 0, 1.0);
    CHECK(!bcolz_filter_test(&f, &f8, cell));
  }
  f.op = BCOLZ_OP_ISNULL;
  CHECK(bcolz_filter_test(&f, &f8, cell));
  f.op = BCOLZ_OP_NOTNULL;
  CHECK(!bcolz_filter_test(&f, &f8, cell));
  /* NaT is NULL for timedelta; other ticks compare as integers */
  bcolz_dtype m8 = dtype('m', '<', 8);
  store_int(cell, 8, 0, INT64_MIN);
  f = num_filter(BCOLZ_OP_LT, 1, 0, 0);
  CHECK(!bcolz_filter_test(&f, &m8, cell));
  f.op = BCOLZ_OP_ISNULL;
  CHECK(bcolz_filter_test(&f, &m8, cell));
  store_int(cell, 8, 0, -5);
  f.op = BCOLZ_OP_LT;
  CHECK(bcolz_filter_test(&f, &m8, cell));
  /* a uint64 above INT64_MAX is TEXT in SQL: kept for SQLite to decide */
  bcolz_dtype u8 = dtype('u', '<', 8);
  memset(cell, 0xff, 8);
  f = num_filter(BCOLZ_OP_LT, 1, 0, 0);
  CHECK(bcolz_filter_test(&f, &u8, cell));
  /* big-endian int16 */
  bcolz_dtype i2be = dtype('i', '>', 2);
  store_int(cell, 2, 1, -300);
  f = num_filter(BCOLZ_OP_EQ, 1, -300, 0);
  CHECK(bcolz_filter_test(&f, &i2be, cell));
  f.i = 300;
  CHECK(!bcolz_filter_test(&f, &i2be, cell));
  /* float16 1.5 (0x3E00) */
  bcolz_dtype f2 = dtype('f', '<', 2);
  cell[0] = 0x00, cell[1] = 0x3E;
  f = num_filter(BCOLZ_OP_EQ, 0, 0, 1.5);
  CHECK(bcolz_filter_test(&f, &f2, cell));
  /* bool is 0/1 */
  bcolz_dtype b1 = dtype('b', '|', 1);
  cell[0] = 1;
  f = num_filter(BCOLZ_OP_EQ, 1, 1, 0);
  CHECK(bcolz_filter_test(&f, &b1, cell));
  f.i = 0;
  CHECK(!bcolz_filter_test(&f, &b1, cell));
  /* compared with NULL: nothing; with a value it cannot judge: everything */
  f.vkind = BCOLZ_FV_NONE;
  CHECK(!bcolz_filter_test(&f, &b1, cell));
  f.vkind = BCOLZ_FV_ANY;
  CHECK(bcolz_filter_test(&f, &b1, cell));
}

static bcolz_filter text_filter(bcolz_op op, const char *s, const bcolz_dtype *dt) {
  bcolz_filter x;
  memset(&x, 0, sizeof x);
  x.op = op;
  x.vkind = BCOLZ_FV_TEXT;
  x.s = (const uint8_t *)s;
  x.n = strlen(s);
  bcolz_filter_prepare(&x, dt);
  return x;
}

static void test_text(void) {
  bcolz_dtype s4 = dtype('S', '|', 4);
  bcolz_filter f = text_filter(BCOLZ_OP_EQ, "ab", &s4);
  CHECK(bcolz_filter_test(&f, &s4, (const uint8_t *)"ab\0\0"));
  CHECK(!bcolz_filter_test(&f, &s4, (const uint8_t *)"abc\0"));
  f.op = BCOLZ_OP_LT;
  CHECK(!bcolz_filter_test(&f, &s4, (const uint8_t *)"abc\0"));
  CHECK(bcolz_filter_test(&f, &s4, (const uint8_t *)"a\0\0\0"));
  CHECK(bcolz_filter_test(&f, &s4, (const uint8_t *)"\0\0\0\0")); /* '' < 'ab' */
  /* not ASCII: maybe a BLOB in SQL, kept */
  f.op = BCOLZ_OP_EQ;
  CHECK(bcolz_filter_test(&f, &s4, (const uint8_t *)"\xff\0\0\0"));
  bcolz_filter_free(&f);

  /* U: code point order = UTF-8 byte order; trailing U+0000 dropped */
  bcolz_dtype u2 = dtype('U', '<', 8);
  uint8_t cell[8] = {0};
  cell[0] = 0x16, cell[1] = 0x04; /* U+0416 */
  f = text_filter(BCOLZ_OP_EQ, "\xd0\x96", &u2);
  CHECK(bcolz_filter_test(&f, &u2, cell));
  f.op = BCOLZ_OP_GT;
  CHECK(!bcolz_filter_test(&f, &u2, cell));
  cell[4] = 'a'; /* "Жa" > "Ж" */
  CHECK(bcolz_filter_test(&f, &u2, cell));
  bcolz_filter_free(&f);
  f = text_filter(BCOLZ_OP_LT, "z", &u2); /* U+0416 > 'z' */
  CHECK(!bcolz_filter_test(&f, &u2, cell));
  bcolz_filter_free(&f);
  /* a value that is not UTF-8 keeps every cell */
  f = text_filter(BCOLZ_OP_EQ, "\xff", &u2);
  CHECK(bcolz_filter_test(&f, &u2, cell));
  bcolz_filter_free(&f);
  /* text columns are never NULL */
  f.op = BCOLZ_OP_ISNULL;
  CHECK(!bcolz_filter_test(&f, &u2, cell));
}

/* bcolz_filter_scan must find the same first match as the row test, on
 * the fast loops (<f8, <i8, <i4) and the generic path. */
static void test_scan_agrees(void) {
  const struct { char kind, order; uint32_t size; } types[] = {
      {'f', '<', 8}, {'i', '<', 8}, {'i', '<', 4}, {'i', '>', 4}, {'f', '<', 4},
      {'u', '<', 2}, {'i', '|', 1}};
  enum { N = 512 };
  uint8_t *data = malloc(N * 8);
  int bad = 0, checked = 0;
  uint64_t seed = 12345;
  for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
    bcolz_dtype dt = dtype(types[t].kind, types[t].order, types[t].size);
    for (int r = 0; r < N; r++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      int64_t v = (int64_t)(seed >> 58) - 16; /* -16..47: many ties */
      if (dt.kind == 'f' && dt.itemsize == 8) {
        double d = r % 97 == 5 ? NAN : (double)v / 2;
        memcpy(data + 8 * r, &d, 8);
      } else if (dt.kind == 'f') {
        float x = (float)v / 2;
        memcpy(data + 4 * r, &x, 4);
      } else {
        store_int(data + r * dt.itemsize, dt.itemsize, dt.byteorder == '>', v);
      }
    }
    for (int op = BCOLZ_OP_EQ; op <= BCOLZ_OP_NOTNULL; op++)
      for (int vk = 0; vk < 2; vk++)
        for (int64_t x = -18; x <= 50; x += 7) {
          bcolz_filter f = num_filter((bcolz_op)op, vk, x, (double)x + (vk ? 0 : 0.5));
          uint64_t from = (uint64_t)(x + 18), to = N - (uint64_t)(x + 18) / 2;
          uint64_t want = to;
          for (uint64_t r = to; r-- > from;) {
            /* the oracle: C's own comparison of the cell as a double */
            int64_t iv = 0;
            double dv = 0;
            int k = bcolz_cell_number(&dt, data + r * dt.atom, &iv, &dv);
            double cv = k == BCOLZ_NUM_INT ? (double)iv : dv, y = vk ? (double)x : f.f;
            int null = k == BCOLZ_NUM_NULL;
            int hold = op == BCOLZ_OP_EQ ? cv == y : op == BCOLZ_OP_LT ? cv < y
                     : op == BCOLZ_OP_LE ? cv <= y : op == BCOLZ_OP_GT ? cv > y
                     : op == BCOLZ_OP_GE ? cv >= y : op == BCOLZ_OP_ISNULL ? null : !null;
            if (null && op <= BCOLZ_OP_GE) hold = 0;
            if (bcolz_filter_test(&f, &dt, data + r * dt.atom) != hold) bad++;
            if (hold) want = r;
          }
          checked++;
          if (bcolz_filter_scan(&f, &dt, data, from, to) != want) bad++;
        }
  }
  CHECK_MSG(bad == 0 && checked > 500, "%d of %d scans disagree", bad, checked);
  free(data);
}

int main(void) {
  test_numbers();
  test_text();
  test_scan_agrees();
  return check_failures_ != 0;
}
