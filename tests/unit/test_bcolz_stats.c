/* test_bcolz_stats.c - unit tests of the bcolz statistics loops
 * (formats/bcolz/bcolz_stats_chunk.c) and of bcolz_column_stats over written
 * tables:
 *   1. every integer type and bool, chunk by chunk in pieces of every
 *      length around the loops' steps (0..9 rows, odd sizes), with and
 *      without the AVX2 loops, against a
 *      plain one-cell-at-a-time reference; int64 sums past 2^63 both ways;
 *      bools stored as any non-zero byte;
 *   2. float64 with NaN, +-inf, +-0, huge and tiny values: min, max, NaN
 *      count and the compensated sum bit for bit against the branchy
 *      Neumaier loop the statistics used before;
 *   3. S cells of widths 1 to 17: empty cells, embedded and leading NULs,
 *      min, max and longest length against memcmp and strip;
 *   4. bcolz_column_stats of a ctable written with a short chunklen (a
 *      partial last chunk) of every numeric dtype, NaN and S, against the
 *      values written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "core/common.h"
#include "formats/bcolz/bcolz.h"
#include "formats/bcolz/bcolz_stats_chunk.h"
#include "formats/bcolz/bcolz_writer.h"

static char g_tmp[] = "/tmp/ds_bcolz_stats_XXXXXX";
static uint64_t g_rng = 0x5eed5eedULL;

/* splitmix64: the next pseudo-random 64-bit number. */
static uint64_t rnd(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* ---------------------------------------------------------- integers */

/* One cell of width w (1, 2, 4, 8 bytes; signed or not) at p as int64 /
 * uint64 (the reference's loads). */
static int64_t ref_load_i(const uint8_t *p, int w) {
  int8_t a; int16_t b; int32_t c; int64_t d;
  switch (w) {
  case 1: memcpy(&a, p, 1); return a;
  case 2: memcpy(&b, p, 2); return b;
  case 4: memcpy(&c, p, 4); return c;
  default: memcpy(&d, p, 8); return d;
  }
}
static uint64_t ref_load_u(const uint8_t *p, int w) {
  uint8_t a; uint16_t b; uint32_t c;
  switch (w) {
  case 1: memcpy(&a, p, 1); return a;
  case 2: memcpy(&b, p, 2); return b;
  default: memcpy(&c, p, 4); return c;
  }
}

/* The reference: cell by cell into r. */
static void ref_int_add(bcolz_int_run *r, char code, const uint8_t *p, uint64_t rows) {
  int w = code == 'l' ? 8 : code == 'i' || code == 'I' ? 4 : code == 'h' || code == 'H' ? 2 : 1;
  for (uint64_t i = 0; i < rows; i++) {
    const uint8_t *e = p + i * (uint64_t)w;
    if (code == '?' || (code >= 'a' && code <= 'z')) {
      int64_t v = code == '?' ? e[0] != 0 : ref_load_i(e, w);
      r->sum += v;
      if (v < r->imin) r->imin = v;
      if (v > r->imax) r->imax = v;
    } else {
      uint64_t v = ref_load_u(e, w);
      r->sum += v;
      if (v < r->umin) r->umin = v;
      if (v > r->umax) r->umax = v;
    }
    r->have = 1;
  }
}

/* Fill n cells of width w with random bytes; `mode` 1: int64 near the
 * top (sums past 2^63), 2: near the bottom, 3: bools of any non-zero
 * byte or zero. */
static void fill(uint8_t *p, size_t bytes, int mode) {
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t x = rnd();
    if (mode == 1) x = (uint64_t)INT64_MAX - (x & 0xffff);
    if (mode == 2) x = (uint64_t)INT64_MIN + (x & 0xffff);
    memcpy(p + i, &x, bytes - i < 8 ? bytes - i : 8);
  }
  if (mode == 3) {
    static const uint8_t vals[] = {0, 1, 0x80, 0xff, 0x7f, 0, 2, 0x40};
    for (size_t i = 0; i < bytes; i++) p[i] = rnd() % 3 ? 0 : vals[rnd() % 8];
  }
}

/* Two runs agree. */
static int same_int(const bcolz_int_run *a, const bcolz_int_run *b) {
  return a->sum == b->sum && a->imin == b->imin && a->imax == b->imax && a->umin == b->umin &&
         a->umax == b->umax && a->have == b->have;
}

static void test_ints(void) {
  static const char codes[] = "lihbIHB?";
  uint8_t buf[8 * 1100];
  for (const char *c = codes; *c; c++) {
    int w = *c == 'l' ? 8 : *c == 'i' || *c == 'I' ? 4 : *c == 'h' || *c == 'H' ? 2 : 1;
    int ok = 1;
    /* pieces of 0..9 rows then longer ones, added to one run (chunks) */
    for (int mode = 0; mode < 3; mode++) {
      bcolz_int_run got, plain, want;
      bcolz_int_run_init(&got);
      bcolz_int_run_init(&plain);
      bcolz_int_run_init(&want);
      static const uint64_t sizes[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 63, 1000, 1031};
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        uint64_t rows = sizes[s];
        fill(buf, rows * (uint64_t)w, *c == '?' ? 3 : *c == 'l' ? mode : 0);
        ok &= bcolz_int_run_add(&got, *c, buf, rows) == 0;
        ok &= bcolz_int_run_add_plain(&plain, *c, buf, rows) == 0;
        ref_int_add(&want, *c, buf, rows);
        ok &= same_int(&got, &want) && same_int(&plain, &want);
      }
      if (*c != 'l') break; /* modes 1 and 2 are int64's */
    }
    CHECK_MSG(ok, "int run '%c' (width %d), with and without AVX2, matches the "
                  "cell-by-cell reference", *c, w);
  }
  /* int64 sums that pass 2^63 and come back */
  bcolz_int_run r;
  bcolz_int_run_init(&r);
  int64_t v[6] = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN, INT64_MIN};
  bcolz_int_run_add(&r, 'l', (const uint8_t *)v, 3);
  __int128 three = (__int128)INT64_MAX * 3;
  CHECK(r.sum == three && r.imin == INT64_MAX && r.imax == INT64_MAX);
  bcolz_int_run_add(&r, 'l', (const uint8_t *)(v + 3), 3);
  CHECK(r.sum == -3 && r.imin == INT64_MIN && r.imax == INT64_MAX);
  int64_t mix[5] = {INT64_MIN, INT64_MIN, 5, INT64_MAX, INT64_MAX};
  bcolz_int_run_init(&r);
  bcolz_int_run_add(&r, 'l', (const uint8_t *)mix, 5);
  CHECK(r.sum == 3);
  CHECK(bcolz_int_run_add(&r, 'd', (const uint8_t *)mix, 1) == -1 && r.sum == 3);
  /* bools: all false, all true, empty */
  uint8_t f[9] = {0}, t[9] = {1, 2, 3, 4, 5, 6, 7, 0x80, 0xff};
  bcolz_int_run_init(&r);
  bcolz_int_run_add(&r, '?', f, 9);
  CHECK(r.sum == 0 && r.imin == 0 && r.imax == 0 && r.have);
  bcolz_int_run_init(&r);
  bcolz_int_run_add(&r, '?', t, 9);
  CHECK(r.sum == 9 && r.imin == 1 && r.imax == 1);
  bcolz_int_run_init(&r);
  bcolz_int_run_add(&r, '?', t, 0);
  CHECK(!r.have && r.sum == 0);
}

/* ------------------------------------------------------------ floats */

/* The float64 loop the statistics used before (branchy Neumaier, the
 * careful loop for chunks whose sum stops being finite). */
static void ref_float_add(bcolz_float_run *r, const uint8_t *p, uint64_t rows) {
  double mn = r->min, mx = r->max, sum = r->sum, comp = r->comp;
  uint64_t nn = 0;
  for (uint64_t i = 0; i < rows; i++) {
    double v;
    memcpy(&v, p + i * 8, 8);
    if (v != v) {
      nn++;
      continue;
    }
    mn = v < mn ? v : mn;
    mx = v > mx ? v : mx;
    double t = sum + v;
    comp += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  if (!isfinite(sum) || !isfinite(comp)) {
    sum = r->sum, comp = r->comp;
    for (uint64_t i = 0; i < rows; i++) {
      double v;
      memcpy(&v, p + i * 8, 8);
      if (v != v) continue;
      if (isinf(v) || isinf(sum)) {
        if (isinf(v)) {
          if (isinf(sum) && (sum > 0) != (v > 0)) r->nan_sum = 1;
          sum += v;
        }
        continue;
      }
      double t = sum + v;
      comp += fabs(sum) >= fabs(v) ? (sum - t) + v : (v - t) + sum;
      sum = t;
    }
  }
  r->have |= nn < rows;
  r->nulls += nn;
  r->min = mn, r->max = mx, r->sum = sum, r->comp = comp;
}

/* Bit-for-bit equality of two doubles (NaN included). */
static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static int same_float(const bcolz_float_run *a, const bcolz_float_run *b) {
  return same_bits(a->min, b->min) && same_bits(a->max, b->max) && same_bits(a->sum, b->sum) &&
         same_bits(a->comp, b->comp) && a->nulls == b->nulls && a->nan_sum == b->nan_sum &&
         a->have == b->have;
}

/* A random double of the kind `mode` asks for: 0 ordinary spread, 1 with
 * NaN, infinities and zeros, 2 huge magnitudes (overflowing sums), 3
 * cancelling pairs of very different size. */
static double rnd_double(int mode) {
  uint64_t x = rnd();
  double d = ((double)(x >> 11) / 9007199254740992.0 - 0.5) * pow(2, (int)(x % 80) - 40);
  if (mode == 1) {
    switch (x % 11) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: return 0.0;
    case 4: return -0.0;
    default: return d;
    }
  }
  if (mode == 2) return (x & 1 ? 1 : -1) * 1.5e308 * ((double)(x % 1000) / 1000.0);
  if (mode == 3) return x % 2 ? 1e16 * (double)(x % 7) : 1e-3 * (double)(x % 13);
  return d;
}

static void test_floats(void) {
  double buf[1100];
  for (int mode = 0; mode < 4; mode++) {
    bcolz_float_run got, want;
    bcolz_float_run_init(&got);
    bcolz_float_run_init(&want);
    int ok = 1;
    static const uint64_t sizes[] = {0, 1, 2, 3, 5, 8, 13, 100, 1000, 1099};
    for (int round = 0; round < 3; round++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        for (uint64_t i = 0; i < sizes[s]; i++) buf[i] = rnd_double(mode);
        bcolz_float_run_add(&got, (const uint8_t *)buf, sizes[s]);
        ref_float_add(&want, (const uint8_t *)buf, sizes[s]);
        ok &= same_float(&got, &want);
      }
    CHECK_MSG(ok, "float64 run, mode %d: bit for bit the branchy Neumaier loop "
                  "(sum %.17g/%.17g comp %g/%g nulls %llu/%llu)", mode, got.sum, want.sum,
              got.comp, want.comp, (unsigned long long)got.nulls,
              (unsigned long long)want.nulls);
  }
  /* compensation: 1 + 1e-16 * 10 + -1 is 1e-15, not 0 */
  double c[12] = {1.0, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, 1e-16, -1.0};
  bcolz_float_run r;
  bcolz_float_run_init(&r);
  bcolz_float_run_add(&r, (const uint8_t *)c, 12);
  CHECK_MSG(fabs(r.sum + r.comp - 1e-15) < 1e-30, "compensated: %g", r.sum + r.comp);
  /* only NaN: no value; +inf and -inf: nan_sum */
  double n[3] = {NAN, NAN, NAN}, inf[3] = {INFINITY, 1.0, -INFINITY};
  bcolz_float_run_init(&r);
  bcolz_float_run_add(&r, (const uint8_t *)n, 3);
  CHECK(!r.have && r.nulls == 3);
  bcolz_float_run_init(&r);
  bcolz_float_run_add(&r, (const uint8_t *)inf, 3);
  CHECK(r.have && r.nan_sum == 1 && r.min == -INFINITY && r.max == INFINITY);
}

/* ------------------------------------------------------------ S cells */

/* Stripped length of an S cell (trailing NULs off). */
static size_t ref_len(const uint8_t *e, size_t w) {
  while (w > 0 && e[w - 1] == 0) w--;
  return w;
}

static void test_s(void) {
  uint8_t cells[17 * 300], want_min[17], want_max[17], got_min[17], got_max[17];
  for (size_t w = 1; w <= 17; w++) {
    int ok = 1;
    for (int round = 0; round < 4; round++) {
      uint64_t rows = round == 0 ? 0 : round == 1 ? 1 : round == 2 ? 7 : 300;
      for (uint64_t i = 0; i < rows; i++) {
        uint8_t *e = cells + i * w;
        size_t len = rnd() % (w + 1);
        memset(e, 0, w);
        for (size_t j = 0; j < len; j++) e[j] = (uint8_t)(rnd() % 4 ? 'a' + rnd() % 3 : rnd() % 2);
        if (rnd() % 9 == 0) memset(e, 0, w); /* empty */
        if (round == 3 && rnd() % 5 == 0) { /* long shared prefixes: ties on 8 bytes */
          memset(e, 'b', w);
          e[w - 1] = (uint8_t)(rnd() % 3);
        }
      }
      bcolz_s_run run = {got_min, got_max, 0, 0, 0};
      /* in two pieces, as two chunks */
      bcolz_s_run_add(&run, w, cells, rows / 2);
      bcolz_s_run_add(&run, w, cells + rows / 2 * w, rows - rows / 2);
      uint64_t empty = 0, maxlen = 0;
      for (uint64_t i = 0; i < rows; i++) {
        const uint8_t *e = cells + i * w;
        size_t n = ref_len(e, w);
        empty += n == 0;
        if (n > maxlen) maxlen = n;
        if (i == 0 || memcmp(e, want_min, w) < 0) memcpy(want_min, e, w);
        if (i == 0 || memcmp(e, want_max, w) > 0) memcpy(want_max, e, w);
      }
      ok &= run.have == (rows > 0) && run.empty == empty && run.max_len == maxlen;
      if (rows) ok &= memcmp(got_min, want_min, w) == 0 && memcmp(got_max, want_max, w) == 0;
    }
    CHECK_MSG(ok, "S%zu run: min, max, empty cells and longest length", w);
  }
}

/* --------------------------------------- bcolz_column_stats end to end */

#define NROWS 2503 /* chunks of 1000: a partial last chunk */

/* The S8 value of row r ("" every 50th row) into s; its length. */
static int s_value(uint64_t r, char s[16]) {
  int n = snprintf(s, 16, "%c%llu", 'a' + (int)(r % 26), (unsigned long long)(r * 7919 % 1000));
  return r % 50 == 0 ? 0 : n;
}

/* Write a ctable of i8, i4, u2, b1, f8 (with NaN), S8 columns into dir. */
static int write_table(const char *dir, char **err) {
  static const char *const names[] = {"a", "b", "c", "d", "e", "f"};
  static const char *const types[] = {"i8", "i4", "u2", "bool", "f8", "S8"};
  bcolz_wtype ty[6];
  for (int i = 0; i < 6; i++)
    if (bcolz_write_parse_type(types[i], &ty[i], err)) return -1;
  bcolz_write_options o;
  bcolz_write_defaults(&o);
  o.chunklen = 1000;
  bcolz_writer *w = NULL;
  int rc = bcolz_writer_open(dir, 0, 6, names, ty, &o, &w, err);
  for (uint64_t r = 0; rc == 0 && r < NROWS; r++) {
    char s[16];
    int n = s_value(r, s);
    ds_value row[6] = {
        {DS_V_INT, {.i = (int64_t)(r * 2654435761u % 100000) - 50000}},
        {DS_V_INT, {.i = -(int64_t)r}},
        {DS_V_INT, {.i = (int64_t)(r % 65536)}},
        {DS_V_BOOL, {.i = r % 3 == 0}},
        {DS_V_FLOAT, {.f = r % 10 == 0 ? NAN : (double)r / 8}},
        {DS_V_TEXT, {.s = {(const uint8_t *)s, (size_t)n}}},
    };
    rc = bcolz_writer_add(w, row, err);
  }
  if (rc == 0) rc = bcolz_writer_finish(w, err);
  bcolz_writer_free(w);
  return rc;
}

static void test_column_stats(void) {
  char dir[300], *err = NULL;
  snprintf(dir, sizeof dir, "%s/t", g_tmp);
  mkdir(dir, 0700);
  int ok = write_table(dir, &err) == 0;
  CHECK_MSG(ok, "write the table: %s", err ? err : "");
  free(err), err = NULL;
  bcolz_table *t = NULL;
  if (!ok || bcolz_open(dir, &t, &err)) {
    CHECK_MSG(0, "open: %s", err ? err : "");
    free(err);
    return;
  }
  /* the expected values, from the formulas written */
  int64_t amin = INT64_MAX, amax = INT64_MIN, asum = 0, csum = 0, dsum = 0, cmax = 0;
  double esum = 0, emax = -INFINITY;
  uint64_t enulls = 0, fempty = 0;
  char fmin[9] = {0}, fmax[9] = {0}; /* NUL-padded cells */
  for (uint64_t r = 0; r < NROWS; r++) {
    char v[16], cell[9] = {0};
    int n = s_value(r, v);
    memcpy(cell, v, (size_t)n);
    fempty += n == 0;
    if (r == 0 || memcmp(cell, fmin, 8) < 0) memcpy(fmin, cell, 8);
    if (r == 0 || memcmp(cell, fmax, 8) > 0) memcpy(fmax, cell, 8);
    int64_t a = (int64_t)(r * 2654435761u % 100000) - 50000;
    asum += a;
    if (a < amin) amin = a;
    if (a > amax) amax = a;
    csum += (int64_t)(r % 65536);
    if ((int64_t)(r % 65536) > cmax) cmax = (int64_t)(r % 65536);
    dsum += r % 3 == 0;
    if (r % 10 == 0) {
      enulls++;
    } else {
      esum += (double)r / 8; /* exact: multiples of 1/8 below 2^50 */
      if ((double)r / 8 > emax) emax = (double)r / 8;
    }
  }
  bcolz_stats s;
  CHECK(bcolz_column_stats(t, 0, &s, &err) == 0 && s.count == NROWS && s.nulls == 0 &&
        s.min.type == DS_V_INT && s.min.u.i == amin && s.max.u.i == amax &&
        s.sum.type == DS_V_INT && s.sum.u.i == asum);
  bcolz_stats_free(&s);
  CHECK(bcolz_column_stats(t, 1, &s, &err) == 0 && s.min.u.i == -(NROWS - 1) &&
        s.max.u.i == 0 && s.sum.u.i == -(int64_t)NROWS * (NROWS - 1) / 2);
  bcolz_stats_free(&s);
  CHECK(bcolz_column_stats(t, 2, &s, &err) == 0 && s.min.u.i == 0 && s.max.u.i == cmax &&
        s.sum.u.i == csum);
  bcolz_stats_free(&s);
  CHECK(bcolz_column_stats(t, 3, &s, &err) == 0 && s.min.u.i == 0 && s.max.u.i == 1 &&
        s.sum.u.i == dsum && fabs(s.mean - (double)dsum / NROWS) < 1e-12);
  bcolz_stats_free(&s);
  CHECK_MSG(bcolz_column_stats(t, 4, &s, &err) == 0 && s.nulls == enulls &&
                s.min.type == DS_V_FLOAT && s.min.u.f == 0.125 && s.max.u.f == emax &&
                s.sum.u.f == esum && s.mean == esum / (double)(NROWS - enulls),
            "f8 with NaN: nulls %llu sum %.17g want %.17g", (unsigned long long)s.nulls,
            s.sum.u.f, esum);
  bcolz_stats_free(&s);
  CHECK(bcolz_column_stats(t, 5, &s, &err) == 0 && s.empty_count == fempty &&
        s.max_len == 4 && s.min.type == DS_V_TEXT && s.min.u.s.n == strlen(fmin) &&
        s.max.u.s.n == strlen(fmax) && memcmp(s.max.u.s.p, fmax, strlen(fmax)) == 0 &&
        s.sum.type == DS_V_NULL);
  bcolz_stats_free(&s);
  free(err);
  bcolz_close(t);
  /* a missing chunk file in the middle: the error names it */
  char p[400];
  snprintf(p, sizeof p, "%s/b/data/__1.blp", dir);
  CHECK(unlink(p) == 0);
  err = NULL;
  ok = bcolz_open(dir, &t, &err) == 0;
  int rc = ok ? bcolz_column_stats(t, 1, &s, &err) : 0;
  CHECK_MSG(rc == -1 && err && strstr(err, "__1.blp") && strstr(err, "not found"),
            "missing chunk: %s", err ? err : "");
  bcolz_stats_free(&s);
  free(err);
  bcolz_close(t);
}

int main(void) {
  if (!mkdtemp(g_tmp)) {
    CHECK(0);
    return check_exit();
  }
  test_ints();
  test_floats();
  test_s();
  test_column_stats();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_tmp);
  if (system(cmd) != 0) printf("note: could not remove %s\n", g_tmp);
  return check_exit();
}
