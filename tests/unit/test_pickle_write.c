/* test_pickle_write.c - unit tests of decoders/pickle_write.c, the pickle
 * encoder:
 *   1. hand-built values (ints at every opcode boundary, big ints, floats,
 *      strings, bytes, nested containers, >1000-item batches, numpy arrays
 *      of every supported dtype, C and Fortran order, 0-d and empty) are
 *      encoded, read back by our decoder (same JSON) and by CPython's
 *      pickle.loads (/usr/bin/python3 compares with a Python literal);
 *   2. what it must refuse (complex, unsupported objects, structured and
 *      object arrays, invalid UTF-8, unhashable dict keys) fails with a
 *      message, and a failed list item leaves the pickle as it was;
 *   3. every example of the upstream atlas fixtures, decoded by our
 *      decoder, re-encoded block by block: our decoder reads back the same
 *      JSON, and CPython reads back what it reads from upstream's own block
 *      (tuples and sets as lists, bytearray as bytes, numpy scalars as
 *      Python numbers; fixtures with numpy 2 names are checked with our
 *      decoder only, as Debian's numpy 1.24 cannot load them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fixture.h"
#include "core/npy.h"
#include "formats/atlas/atlas.h"
#include "decoders/pickle.h"
#include "decoders/pickle_write.h"

/* The window blocks are read through (pread). */
static ds_view t_view;

#define AFIX "tests/fixtures/upstream/atlas/"
#define PY "/usr/bin/python3"

static ds_arena g_arena;
static ds_pickler g_pk;
static FILE *g_cases;  /* lines for the Python checker */
static int g_ncases;

/* ------------------------------------------------------------ values */

static ds_value v_int(int64_t i) { ds_value v = {DS_V_INT, {.i = i}}; return v; }
static ds_value v_uint(uint64_t u) { ds_value v = {DS_V_UINT, {.u = u}}; return v; }
static ds_value v_float(double f) { ds_value v = {DS_V_FLOAT, {.f = f}}; return v; }
static ds_value v_str(const char *s) {
  ds_value v = {DS_V_TEXT, {.s = {(const uint8_t *)s, strlen(s)}}};
  return v;
}
static ds_value v_big(const char *s) {
  ds_value v = v_str(s);
  v.type = DS_V_BIGINT;
  return v;
}
static ds_value v_bytes(const void *p, size_t n) {
  ds_value v = {DS_V_BYTES, {.s = {p, n}}};
  return v;
}
static ds_value v_list(ds_vtype t, ds_value *items, size_t n) {
  ds_value v = {t, {.list = {items, n}}};
  return v;
}

/* A .npy value with the given header and data, kept in the arena. */
static ds_value v_npy(const char *descr, int fortran, int ndim,
                      const uint64_t *shape, const void *data, size_t n) {
  ds_buf b = {0};
  char *err = NULL;
  ds_value v = {DS_V_NULL, {0}};
  if (ds_npy_write_header(&b, descr, fortran, ndim, shape, &err) ||
      ds_buf_append(&b, data, n)) {
    printf("FAIL npy header %s: %s\n", descr, err ? err : "oom");
    free(err);
    return v;
  }
  uint8_t *p = ds_arena_alloc(&g_arena, b.len);
  memcpy(p, b.data, b.len);
  v.type = DS_V_NDARRAY;
  v.u.s.p = p;
  v.u.s.n = b.len;
  ds_buf_free(&b);
  return v;
}

/* ------------------------------------------------------------ helpers */

static void put_hex(FILE *f, const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", p[i]);
}

/* JSON text of v (malloc'd; "<error>" when it cannot be written). */
static char *json_of(const ds_value *v) { return fx_json_of(v, "<error>"); }

/* Encode v, decode it with our decoder, compare JSON with v's own, and
 * queue a CPython check against the Python literal `py`. */
static void roundtrip(const char *name, const ds_value *v, const char *py) {
  ds_buf out = {0};
  char *err = NULL;
  int rc = ds_pickle_encode(&g_pk, v, &out, &err);
  CHECK_MSG(rc == 0, "%s: encode: %s", name, err ? err : "");
  if (rc) { free(err); return; }
  CHECK_MSG(out.len > 11 && out.data[0] == 0x80 && out.data[1] == 4 &&
                out.data[2] == 0x95 && out.data[out.len - 1] == '.',
            "%s: PROTO 4, FRAME, STOP", name);
  ds_value back;
  char *want = json_of(v);
  rc = ds_pickle_decode(out.data, out.len, NULL, &g_arena, &back, &err);
  char *got = rc ? strdup("<decode error>") : json_of(&back);
  CHECK_MSG(rc == 0 && strcmp(got, want) == 0, "%s: our decoder: %s / %s (%s)",
            name, got, want, err ? err : "");
  free(err);
  free(got);
  free(want);
  if (py) {
    fputs("V ", g_cases);
    for (const char *c = name; *c; c++) fputc(*c == ' ' ? '_' : *c, g_cases);
    fputc(' ', g_cases);
    put_hex(g_cases, out.data, out.len);
    fprintf(g_cases, " %s\n", py);
    g_ncases++;
  }
  ds_buf_free(&out);
}

/* Encoding v must fail with a message containing `needle`. */
static void refused(const char *name, const ds_value *v, const char *needle) {
  ds_buf out = {0};
  char *err = NULL;
  int rc = ds_pickle_encode(&g_pk, v, &out, &err);
  CHECK_MSG(rc != 0 && err && strstr(err, needle) && out.len == 0,
            "%s: refused with '%s', got rc %d '%s'", name, needle, rc,
            err ? err : "");
  free(err);
  ds_buf_free(&out);
}

/* ------------------------------------------------------------ part 1 */

static void test_scalars(void) {
  static const int64_t ints[] = {0, 1, 255, 256, 65535, 65536, -1, -256,
                                 2147483647, -2147483648LL, 2147483648LL,
                                 -2147483649LL, INT64_MAX, INT64_MIN,
                                 1LL << 40, -(1LL << 40)};
  ds_value items[16];
  char py[1024] = "[";
  for (size_t i = 0; i < 16; i++) {
    items[i] = v_int(ints[i]);
    snprintf(py + strlen(py), sizeof py - strlen(py), "%s%lld", i ? "," : "",
             (long long)ints[i]);
  }
  strcat(py, "]");
  ds_value l = v_list(DS_V_LIST, items, 16);
  roundtrip("ints", &l, py);

  ds_value u = v_uint(UINT64_MAX);
  roundtrip("uint64 max", &u, "18446744073709551615");
  ds_value b1 = v_big("123456789012345678901234567890");
  roundtrip("bigint", &b1, "123456789012345678901234567890");
  ds_value b2 = v_big("-340282366920938463463374607431768211456");
  roundtrip("bigint -2**128", &b2, "-2**128");
  ds_value b3 = v_big("-170141183460469231731687303715884105728");
  roundtrip("bigint -2**127", &b3, "-2**127");
  static char digits[700];
  memset(digits, '9', 699);
  ds_value b4 = v_big(digits);
  roundtrip("bigint 699 digits (LONG4)", &b4, "10**699-1");

  ds_value f[6] = {v_float(1.5), v_float(-0.0), v_float(5e-324),
                   v_float(1.0 / 0.0), v_float(-1.0 / 0.0), v_float(0.1)};
  ds_value fl = v_list(DS_V_LIST, f, 6);
  roundtrip("floats", &fl, "[1.5,-0.0,5e-324,float('inf'),float('-inf'),0.1]");
  ds_value nan = v_float(0.0 / 0.0);
  roundtrip("nan", &nan, "float('nan')");

  ds_value t = {DS_V_BOOL, {.i = 1}}, fa = {DS_V_BOOL, {.i = 0}},
           no = {DS_V_NULL, {0}};
  ds_value misc[3] = {t, fa, no};
  ds_value ml = v_list(DS_V_TUPLE, misc, 3);
  roundtrip("bool none (tuple as list)", &ml, "[True,False,None]");
}

static void test_strings(void) {
  static char long_s[70001];
  for (int i = 0; i < 70000; i++) long_s[i] = (char)('a' + i % 26);
  ds_value s[6] = {v_str(""), v_str("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
                   {DS_V_TEXT, {.s = {(const uint8_t *)"a\0b", 3}}},
                   v_str(long_s), v_str("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80"),
                   v_str("")};
  ds_value l = v_list(DS_V_LIST, s, 6);
  roundtrip("strings (memo, NUL, 70000 chars)", &l,
            "['', 'h\\u00e9llo \\u20ac \\U0001f600', 'a\\x00b', "
            "''.join(chr(97 + i % 26) for i in range(70000)), "
            "'h\\u00e9llo \\u20ac \\U0001f600', '']");
  static uint8_t big[300];
  for (int i = 0; i < 300; i++) big[i] = (uint8_t)i;
  ds_value b[3] = {v_bytes("", 0), v_bytes("\x00\xff", 2), v_bytes(big, 300)};
  ds_value bl = v_list(DS_V_LIST, b, 3);
  roundtrip("bytes", &bl, "[b'', b'\\x00\\xff', bytes(i % 256 for i in range(300))]");
}

static void test_containers(void) {
  /* a 2500-item list: three MARK ... APPENDS batches */
  ds_value *many = ds_arena_alloc(&g_arena, 2500 * sizeof *many);
  for (int i = 0; i < 2500; i++) many[i] = v_int(i);
  ds_value ml = v_list(DS_V_LIST, many, 2500);
  roundtrip("list of 2500", &ml, "list(range(2500))");
  ds_value one[1] = {v_int(7)};
  ds_value l1 = v_list(DS_V_LIST, one, 1);
  roundtrip("list of 1", &l1, "[7]");
  ds_value l0 = v_list(DS_V_LIST, NULL, 0);
  roundtrip("empty list", &l0, "[]");

  /* a dict of 1001 keys "k0".."k1000" -> i */
  ds_value *kv = ds_arena_alloc(&g_arena, 2002 * sizeof *kv);
  for (int i = 0; i < 1001; i++) {
    char *k = ds_arena_alloc(&g_arena, 16);
    snprintf(k, 16, "k%d", i);
    kv[2 * i] = v_str(k);
    kv[2 * i + 1] = v_int(i);
  }
  ds_value d = v_list(DS_V_MAP, kv, 1001);
  roundtrip("dict of 1001", &d, "{'k%d' % i: i for i in range(1001)}");

  /* nested: {"a": [1, {"b": None}], 2: "x", "e": {}} */
  ds_value inner_kv[2] = {v_str("b"), {DS_V_NULL, {0}}};
  ds_value lst[2] = {v_int(1), v_list(DS_V_MAP, inner_kv, 1)};
  ds_value top[6] = {v_str("a"), v_list(DS_V_LIST, lst, 2), v_int(2),
                     v_str("x"), v_str("e"), v_list(DS_V_MAP, NULL, 0)};
  ds_value nested = v_list(DS_V_MAP, top, 3);
  roundtrip("nested", &nested, "{'a': [1, {'b': None}], 2: 'x', 'e': {}}");
}

static void test_arrays(void) {
  uint64_t s3[1] = {3}, s23[2] = {2, 3}, s0[1] = {0}, s20[2] = {2, 0};
  int16_t i2[3] = {0, -1, 300};
  ds_value a1 = v_npy("<i2", 0, 1, s3, i2, sizeof i2);
  roundtrip("array <i2", &a1, "np.array([0,-1,300], dtype='<i2')");
  uint8_t be[12] = {0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff};
  ds_value a2 = v_npy(">i4", 0, 1, s3, be, sizeof be);
  roundtrip("array >i4", &a2, "np.array([1,2,-1], dtype='>i4')");
  double f8[6] = {1, 2, 3, 4, 5, 6};
  ds_value a3 = v_npy("<f8", 1, 2, s23, f8, sizeof f8);
  roundtrip("array Fortran (2,3)", &a3,
            "np.asfortranarray(np.array([[1.,3,5],[2,4,6]]))");
  ds_value a4 = v_npy("<f8", 0, 2, s23, f8, sizeof f8);
  roundtrip("array C (2,3)", &a4, "np.arange(1.,7).reshape(2,3)");
  double zero_d = 2.5;
  ds_value a5 = v_npy("<f8", 0, 0, NULL, &zero_d, 8);
  roundtrip("array 0-d", &a5, "np.array(2.5)");
  ds_value a6 = v_npy("<f4", 0, 1, s0, "", 0);
  roundtrip("array empty", &a6, "np.zeros(0, dtype='<f4')");
  ds_value a7 = v_npy("|u1", 0, 2, s20, "", 0);
  roundtrip("array (2,0)", &a7, "np.zeros((2,0), dtype='|u1')");
  uint8_t b1[3] = {1, 0, 1};
  ds_value a8 = v_npy("|b1", 0, 1, s3, b1, 3);
  roundtrip("array bool", &a8, "np.array([True,False,True])");
  ds_value a9 = v_npy("|S2", 0, 1, s3, "abc\0ef", 6);
  roundtrip("array S2", &a9, "np.array([b'ab', b'c', b'ef'], dtype='S2')");
  uint32_t u2[6] = {'h', 'i', 0x1F600, 0, 'x', 0};
  ds_value a10 = v_npy("<U2", 0, 1, s3, u2, sizeof u2);
  roundtrip("array U2", &a10, "np.array(['hi', '\\U0001f600', 'x'], dtype='<U2')");
  int64_t ns[3] = {0, 1000000000, INT64_MIN};
  ds_value a11 = v_npy("<M8[ns]", 0, 1, s3, ns, sizeof ns);
  roundtrip("array M8[ns]", &a11,
            "np.array(['1970-01-01T00:00:00', '1970-01-01T00:00:01', 'NaT'], "
            "dtype='M8[ns]')");
  int64_t secs[3] = {1, 2, 3};
  ds_value a12 = v_npy("<m8[10s]", 0, 1, s3, secs, sizeof secs);
  roundtrip("array m8[10s]", &a12, "np.array([1,2,3], dtype='m8[10s]')");
  uint16_t half[3] = {0x3c00, 0xc000, 0x7c00};
  ds_value a13 = v_npy("<f2", 0, 1, s3, half, sizeof half);
  roundtrip("array f2", &a13, "np.array([1,-2,np.inf], dtype='<f2')");
  double c16[2] = {1, -2};
  uint64_t s1[1] = {1};
  ds_value a14 = v_npy("<c16", 0, 1, s1, c16, sizeof c16);
  roundtrip("array c16", &a14, "np.array([1-2j])");
  /* two arrays in one pickle: the globals come from the memo */
  ds_value two[2] = {a1, a3};
  ds_value l = v_list(DS_V_LIST, two, 2);
  roundtrip("two arrays", &l,
            "[np.array([0,-1,300], dtype='<i2'), "
            "np.asfortranarray(np.array([[1.,3,5],[2,4,6]]))]");
}

/* ------------------------------------------------------------ part 2 */

static void test_refusals(void) {
  ds_value c = {DS_V_COMPLEX, {.c = {1, 2}}};
  refused("complex", &c, "complex");
  ds_value u = v_str("decimal.Decimal");
  u.type = DS_V_UNSUPPORTED;
  refused("unsupported object", &u, "cannot be pickled");
  ds_value bad = v_str("a\xff");
  refused("invalid UTF-8", &bad, "UTF-8");
  ds_value lk[1] = {v_int(1)};
  ds_value kv[2] = {v_list(DS_V_LIST, lk, 1), v_int(2)};
  ds_value d = v_list(DS_V_MAP, kv, 1);
  refused("list as dict key", &d, "dict key");
  uint64_t s1[1] = {1};
  ds_value st = v_npy("[('a', '<i4')]", 0, 1, s1, "\1\0\0\0", 4);
  refused("structured array", &st, "cannot be written");
  ds_value bigbad = v_big("12x");
  refused("malformed bigint", &bigbad, "malformed");

  /* a failed item leaves the list pickle as it was */
  ds_buf out = {0};
  char *err = NULL;
  ds_value k1[2] = {v_str("name"), v_str("first")};
  ds_value k2[2] = {v_str("name"), c};
  ds_value k3[2] = {v_str("name"), v_str("third")};
  ds_value e1 = v_list(DS_V_MAP, k1, 1), e2 = v_list(DS_V_MAP, k2, 1),
           e3 = v_list(DS_V_MAP, k3, 1);
  int ok = ds_pickle_list_begin(&g_pk, &out, &err) == 0 &&
           ds_pickle_list_add(&g_pk, &e1, &err) == 0;
  size_t len = out.len;
  ok = ok && ds_pickle_list_add(&g_pk, &e2, &err) != 0 && out.len == len;
  free(err);
  err = NULL;
  ok = ok && ds_pickle_list_add(&g_pk, &e3, &err) == 0 &&
       ds_pickle_list_end(&g_pk, &err) == 0;
  CHECK_MSG(ok, "failed item undone: %s", err ? err : "");
  ds_value back;
  if (ok && ds_pickle_decode(out.data, out.len, NULL, &g_arena, &back, &err) == 0) {
    char *j = json_of(&back);
    CHECK_STR(j, "[{\"name\":\"first\"},{\"name\":\"third\"}]");
    free(j);
    fprintf(g_cases, "V after_failed_item ");
    put_hex(g_cases, out.data, out.len);
    fprintf(g_cases, " [{'name': 'first'}, {'name': 'third'}]\n");
    g_ncases++;
  } else {
    CHECK_MSG(0, "decode after failed item: %s", err ? err : "");
  }
  free(err);
  ds_buf_free(&out);
}

/* ------------------------------------------------------------ part 3 */

/* 1 when v holds something the encoder refuses on purpose. */
static int unwritable(const ds_value *v) {
  if (v->type == DS_V_COMPLEX || v->type == DS_V_UNSUPPORTED) return 1;
  if (v->type == DS_V_NDARRAY) {
    ds_npy a;
    char *err = NULL;
    int bad = ds_npy_parse(v->u.s.p, v->u.s.n, &a, &err) || a.structured ||
              a.has_object;
    free(err);
    return bad;
  }
  if (v->type == DS_V_MAP)
    for (size_t i = 0; i < v->u.list.n; i++)
      if (v->u.list.items[2 * i].type >= DS_V_LIST) return 1;
  if (v->type >= DS_V_LIST && v->type <= DS_V_MAP) {
    size_t n = v->u.list.n * (v->type == DS_V_MAP ? 2 : 1);
    for (size_t i = 0; i < n; i++)
      if (unwritable(&v->u.list.items[i])) return 1;
  }
  return 0;
}

/* Re-encode every block of one fixture; returns examples checked. */
static void reencode_fixture(const char *name, int cpython) {
  char path[256];
  snprintf(path, sizeof path, AFIX "%s", name);
  atlas_reader *r = NULL;
  char *err = NULL;
  if (atlas_open(path, &r, &err)) {
    CHECK_MSG(0, "%s: open: %s", name, err);
    free(err);
    return;
  }
  ds_zstd_ctx z;
  ds_zstd_ctx_init(&z, NULL);
  ds_buf buf = {0}, out = {0};
  size_t same = 0, diff = 0, skipped = 0, blocks = 0;
  for (size_t k = 0; k < atlas_nshards(r); k++) {
    for (uint64_t b = 0; b < atlas_num_blocks(r, k); b++) {
      const uint8_t *p;
      size_t n;
      ds_value orig, back;
      ds_arena_reset(&g_arena);
      if (atlas_block(r, &z, &t_view, k, b, &buf, &p, &n, &err) ||
          ds_pickle_decode(p, n, NULL, &g_arena, &orig, &err)) {
        /* exotic/ holds a cycle our decoder refuses: not ours to encode */
        free(err);
        err = NULL;
        skipped++;
        continue;
      }
      out.len = 0;
      ds_pickle_list_begin(&g_pk, &out, &err);
      int all = 1;
      for (size_t i = 0; i < orig.u.list.n; i++) {
        const ds_value *ex = &orig.u.list.items[i];
        int rc = ds_pickle_list_add(&g_pk, ex, &err);
        if (rc != (unwritable(ex) ? -1 : 0)) diff++;
        if (rc) { skipped++; all = 0; }
        free(err);
        err = NULL;
      }
      if (ds_pickle_list_end(&g_pk, &err) ||
          ds_pickle_decode(out.data, out.len, NULL, &g_arena, &back, &err)) {
        CHECK_MSG(0, "%s block %zu/%llu: %s", name, k, (unsigned long long)b,
                  err);
        free(err);
        err = NULL;
        continue;
      }
      /* compare the examples that were written, in order */
      size_t j = 0;
      for (size_t i = 0; i < orig.u.list.n; i++) {
        if (unwritable(&orig.u.list.items[i])) continue;
        char *a = json_of(&orig.u.list.items[i]);
        char *c = j < back.u.list.n ? json_of(&back.u.list.items[j]) : strdup("");
        j++;
        if (strcmp(a, c) == 0) same++; else diff++;
        if (strcmp(a, c) && diff < 3) check_note("    %s: %.200s\n    vs %.200s\n", name, a, c);
        free(a);
        free(c);
      }
      if (j != back.u.list.n) diff++;
      if (cpython && all && blocks++ < 64) {
        fprintf(g_cases, "B %s/%zu/%llu ", name, k, (unsigned long long)b);
        put_hex(g_cases, p, n);
        fputc(' ', g_cases);
        put_hex(g_cases, out.data, out.len);
        fputc('\n', g_cases);
        g_ncases++;
      }
    }
  }
  CHECK_MSG(diff == 0 && same > 0,
            "%s: %zu examples re-encoded read back equal (%zu differ, %zu "
            "refused or unreadable)", name, same, diff, skipped);
  ds_buf_free(&buf);
  ds_buf_free(&out);
  ds_zstd_ctx_free(&z);
  atlas_close(r);
}

/* Run the Python checker over the queued cases; one CHECK per line. */
static void run_cpython(const char *cases_path) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, PY " tests/unit/check_pickles.py %s 2>&1",
           cases_path);
  FILE *f = popen(cmd, "r");
  if (!f) { CHECK_MSG(0, "cannot run %s", PY); return; }
  char line[4096];
  int seen = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (strncmp(line, "OK ", 3) == 0 || strncmp(line, "BAD ", 4) == 0) {
      seen++;
      CHECK_MSG(line[0] == 'O', "CPython pickle.loads: %s", line);
    } else {
      printf("    %s\n", line);
    }
  }
  int rc = pclose(f);
  CHECK_MSG(rc == 0 && seen == g_ncases, "CPython checked %d of %d cases",
            seen, g_ncases);
}

int main(void) {
  char cases_path[] = "/tmp/ds_pickle_write_XXXXXX";
  int fd = mkstemp(cases_path);
  g_cases = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!g_cases) { CHECK(0); return check_exit(); }
  test_scalars();
  test_strings();
  test_containers();
  test_arrays();
  test_refusals();
  static const struct { const char *name; int cpython; } fx[] = {
      {"types", 1}, {"types_p5", 1}, {"standard", 1}, {"none", 1},
      {"shared_dict", 1}, {"mid", 1}, {"exotic", 0}, {"numpy2_p4", 0},
      {"numpy2_p5", 0}};
  for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++)
    reencode_fixture(fx[i].name, fx[i].cpython);
  fclose(g_cases);
  run_cpython(cases_path);
  unlink(cases_path);
  ds_pickler_free(&g_pk);
  ds_arena_free(&g_arena);
  return check_exit();
}
