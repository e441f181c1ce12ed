/* test_pickle.c - unit tests of decoders/pickle.c, the safe pickle decoder:
 *   1. fixtures written by Debian's python3 (tests/unit/gen_pickles.py ->
 *      tests/fixtures/pickle/<case>_p<N>.pkl + expected.json, protocols 2-5):
 *      every value compared in typed JSON, hostile globals (posix.system,
 *      builtins.eval, builtins.getattr, subprocess) come back as
 *      DS_V_UNSUPPORTED naming them; every proper prefix of each pickle
 *      is an error; random byte mutations never crash (run under ASan);
 *   2. hand-built pickles: opcodes Python does not write here (DUP, POP,
 *      POP_MARK, BINUNICODE8, BINBYTES8, GLOBAL os.system, STACK_GLOBAL
 *      operands from the memo), numpy argument checks, and every error
 *      (unsupported opcodes, truncation, huge lengths, memo, stack
 *      underflow, MARK misuse, limits, recursion, shared-DAG expansion);
 *   3. conformance: every block of every dataset in
 *      tests/fixtures/upstream/atlas (index.npy offsets into data.bin,
 *      strategies 0-3 with libzstd) decoded and each example compared with
 *      expected/<case>.json (mid.json: examples_sampled).
 * With DS_PICKLE_BENCH=<dir> it also writes the decompressed mid/ blocks
 * there and prints the decode time per block (build with -O2 for that). */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "check.h"
#include "fixture.h"
#include "core/npy.h"
#include "decoders/pickle.h"

#define PFIX "tests/fixtures/pickle/"
#define AFIX "tests/fixtures/upstream/atlas/"

static ds_arena g_arena;

/* ------------------------------------------------------------ helpers */

/* Decode with default limits into the global arena (reset first). */
static int dec(const uint8_t *p, size_t n, ds_value *v, char **err) {
  ds_arena_reset(&g_arena);
  return ds_pickle_decode(p, n, NULL, &g_arena, v, err);
}

/* Hex digit value or -1. */
static int hexval(int c) {
  return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* Bytes from hex text (spaces allowed) into buf; returns the length. */
static size_t unhex(const char *h, uint8_t *buf) {
  size_t k = 0;
  int hi = -1;
  for (; *h; h++) {
    int d = hexval(*h);
    if (d < 0) continue;
    if (hi < 0) hi = d;
    else { buf[k++] = (uint8_t)(hi << 4 | d); hi = -1; }
  }
  return k;
}

/* Standard base64 decode into a malloc'd buffer. */
static uint8_t *unb64(const char *s, size_t *n) {
  size_t len = strlen(s);
  uint8_t *out = malloc(len / 4 * 3 + 3);
  unsigned acc = 0;
  int bits = 0;
  size_t k = 0;
  for (size_t i = 0; i < len; i++) {
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *q = s[i] ? strchr(tab, s[i]) : NULL;
    if (!q) continue;
    acc = acc << 6 | (unsigned)(q - tab);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[k++] = (uint8_t)(acc >> bits);
    }
  }
  *n = k;
  return out;
}

/* JSON text of a value (for messages); static buffer. */
static const char *vjson(const ds_value *v) {
  static char text[300];
  ds_buf b = {0};
  char *e = NULL;
  if (ds_value_json(&b, v, &e)) snprintf(text, sizeof text, "<json error: %s>", e);
  else snprintf(text, sizeof text, "%.*s", (int)(b.len > 280 ? 280 : b.len), (const char *)b.data);
  free(e);
  ds_buf_free(&b);
  return text;
}

/* ------------------------------------------------------------ typed JSON compare */

static char g_why[512];

/* Record why a comparison failed (first reason wins). */
__attribute__((format(printf, 1, 2)))
static int why(const char *fmt, ...) {
  if (!g_why[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_why, sizeof g_why, fmt, ap);
    va_end(ap);
  }
  return 0;
}

static int cmp(const json_t *e, const ds_value *v);

/* A number in typed JSON (number or "NaN"/"Infinity"/"-Infinity"). */
static int num_of(const json_t *e, double *d) {
  if (json_is_number(e)) { *d = json_number_value(e); return 1; }
  if (!json_is_string(e)) return 0;
  const char *s = json_string_value(e);
  if (!strcmp(s, "NaN")) *d = NAN;
  else if (!strcmp(s, "Infinity")) *d = INFINITY;
  else if (!strcmp(s, "-Infinity")) *d = -INFINITY;
  else return 0;
  return 1;
}

/* Two doubles equal, NaN == NaN, and -0.0 != 0.0. */
static int same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* Hex text vs BYTES. */
static int cmp_hex(const char *h, const ds_value *v) {
  if (v->type != DS_V_BYTES) return why("want bytes, got %s", vjson(v));
  size_t n = strlen(h) / 2;
  if (n != v->u.s.n) return why("bytes length %zu, want %zu", v->u.s.n, n);
  for (size_t i = 0; i < n; i++)
    if (v->u.s.p[i] != (uint8_t)(hexval(h[2 * i]) << 4 | hexval(h[2 * i + 1])))
      return why("bytes differ at %zu", i);
  return 1;
}

/* JSON array vs the items of a LIST/TUPLE/SET (ordered or not). */
static int cmp_items(const json_t *e, const ds_value *v, ds_vtype t, int ordered) {
  if (v->type != t) return why("want type %d, got %s", (int)t, vjson(v));
  if (json_array_size(e) != v->u.list.n)
    return why("want %zu items, got %zu: %s", json_array_size(e), v->u.list.n, vjson(v));
  if (ordered) {
    for (size_t i = 0; i < v->u.list.n; i++)
      if (!cmp(json_array_get(e, i), &v->u.list.items[i])) return 0;
    return 1;
  }
  char used[4096] = {0};
  if (v->u.list.n > sizeof used) return why("set too large for the test");
  for (size_t i = 0; i < v->u.list.n; i++) {
    size_t j = 0;
    for (; j < v->u.list.n; j++) {
      if (used[j]) continue;
      char keep[sizeof g_why];
      memcpy(keep, g_why, sizeof keep);
      int ok = cmp(json_array_get(e, i), &v->u.list.items[j]);
      memcpy(g_why, keep, sizeof keep);
      if (ok) break;
    }
    if (j == v->u.list.n) return why("set item %zu not found in %s", i, vjson(v));
    used[j] = 1;
  }
  return 1;
}

/* [[k, v], ...] vs a MAP. */
static int cmp_pairs(const json_t *e, const ds_value *v) {
  if (v->type != DS_V_MAP) return why("want a map, got %s", vjson(v));
  if (json_array_size(e) != v->u.list.n)
    return why("want %zu pairs, got %zu", json_array_size(e), v->u.list.n);
  for (size_t i = 0; i < v->u.list.n; i++) {
    json_t *pr = json_array_get(e, i);
    if (!cmp(json_array_get(pr, 0), &v->u.list.items[2 * i]) ||
        !cmp(json_array_get(pr, 1), &v->u.list.items[2 * i + 1]))
      return 0;
  }
  return 1;
}

/* A plain JSON object vs a MAP with TEXT keys in the same order. */
static int cmp_object(const json_t *e, const ds_value *v) {
  if (v->type != DS_V_MAP) return why("want a map, got %s", vjson(v));
  if (json_object_size(e) != v->u.list.n)
    return why("want %zu keys, got %zu", json_object_size(e), v->u.list.n);
  size_t i = 0;
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)e, key, val) {
    const ds_value *k = &v->u.list.items[2 * i];
    if (k->type != DS_V_TEXT || k->u.s.n != strlen(key) || memcmp(k->u.s.p, key, k->u.s.n))
      return why("key %zu: want '%s', got %s", i, key, vjson(k));
    if (!cmp(val, &v->u.list.items[2 * i + 1])) return 0;
    i++;
  }
  return 1;
}

/* The .npy descr text for a MANIFEST "fields" list. */
static void fields_descr(const json_t *fields, char *out, size_t n) {
  size_t k = (size_t)snprintf(out, n, "[");
  for (size_t i = 0; i < json_array_size(fields); i++) {
    json_t *f = json_array_get(fields, i);
    k += (size_t)snprintf(out + k, n - k, "%s('%s', '%s')", i ? ", " : "",
                          json_string_value(json_array_get(f, 0)),
                          json_string_value(json_array_get(f, 1)));
  }
  snprintf(out + k, n - k, "]");
}

/* {"$ndarray": ...} vs an NDARRAY (or a LIST for object arrays). */
static int cmp_ndarray(const json_t *e, const ds_value *v) {
  json_t *items = json_object_get(e, "items");
  if (items) return cmp_items(items, v, DS_V_LIST, 1);
  if (v->type != DS_V_NDARRAY) return why("want an ndarray, got %s", vjson(v));
  ds_npy a;
  char *err = NULL;
  if (ds_npy_parse(v->u.s.p, v->u.s.n, &a, &err)) {
    why("npy parse: %s", err);
    free(err);
    return 0;
  }
  char want[512];
  json_t *descr = json_object_get(e, "descr"), *fields = json_object_get(e, "fields");
  if (descr) snprintf(want, sizeof want, "%s", json_string_value(descr));
  else if (fields) fields_descr(fields, want, sizeof want);
  else snprintf(want, sizeof want, "%s", json_string_value(json_object_get(e, "dtype")));
  if (strcmp(want, a.descr)) return why("dtype '%s', want '%s'", a.descr, want);
  if (a.fortran_order) return why("not C order");
  json_t *shape = json_object_get(e, "shape");
  if ((size_t)a.ndim != json_array_size(shape)) return why("ndim %d", a.ndim);
  for (int k = 0; k < a.ndim; k++)
    if (a.shape[k] != (uint64_t)json_integer_value(json_array_get(shape, (size_t)k)))
      return why("shape[%d] = %llu", k, (unsigned long long)a.shape[k]);
  size_t n;
  uint8_t *data = unb64(json_string_value(json_object_get(e, "data_b64")), &n);
  int ok = n == a.data_len && (n == 0 || memcmp(data, a.data, n) == 0);
  free(data);
  return ok ? 1 : why("array data differs (%zu vs %zu bytes)", a.data_len, n);
}

/* The ISO text Python's isoformat() gives for a datetime/date repr. */
static void iso_from_repr(const char *name, const char *repr, char *out, size_t n) {
  int f[7] = {0, 0, 0, 0, 0, 0, 0};
  const char *p = strchr(repr, '(');
  for (int k = 0; p && k < 7; k++) {
    f[k] = atoi(p + 1);
    p = strchr(p + 1, ',');
  }
  if (!strcmp(name, "datetime.date")) snprintf(out, n, "%04d-%02d-%02d", f[0], f[1], f[2]);
  else if (f[6])
    snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d.%06d", f[0], f[1], f[2], f[3], f[4], f[5], f[6]);
  else snprintf(out, n, "%04d-%02d-%02dT%02d:%02d:%02d", f[0], f[1], f[2], f[3], f[4], f[5]);
}

/* {"$object": name}: datetime objects are ISO text, anything else an
 * unsupported value naming the global. */
static int cmp_pyobject(const json_t *e, const ds_value *v) {
  const char *name = json_string_value(json_object_get(e, "$object"));
  json_t *repr = json_object_get(e, "repr");
  if (repr && (!strcmp(name, "datetime.datetime") || !strcmp(name, "datetime.date"))) {
    char iso[64];
    iso_from_repr(name, json_string_value(repr), iso, sizeof iso);
    if (v->type != DS_V_TEXT || v->u.s.n != strlen(iso) || memcmp(v->u.s.p, iso, v->u.s.n))
      return why("want '%s', got %s", iso, vjson(v));
    return 1;
  }
  if (v->type != DS_V_UNSUPPORTED || v->u.s.n != strlen(name) || memcmp(v->u.s.p, name, v->u.s.n))
    return why("want unsupported '%s', got %s", name, vjson(v));
  return 1;
}

/* {"$bigint": text} vs BIGINT (or INT/UINT with the same digits). */
static int cmp_bigint(const char *s, const ds_value *v) {
  char buf[32];
  const uint8_t *p = v->u.s.p;
  size_t n = v->u.s.n;
  if (v->type == DS_V_INT || v->type == DS_V_UINT) {
    n = (size_t)(v->type == DS_V_INT ? snprintf(buf, sizeof buf, "%lld", (long long)v->u.i)
                                     : snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->u.u));
    p = (const uint8_t *)buf;
  } else if (v->type != DS_V_BIGINT) {
    return why("want bigint %s, got %s", s, vjson(v));
  }
  if (n != strlen(s) || memcmp(p, s, n)) return why("bigint %.*s, want %s", (int)n, (const char *)p, s);
  return 1;
}

/* An object with a "$..." tag. */
static int cmp_tagged(const json_t *e, const ds_value *v) {
  json_t *x;
  if ((x = json_object_get(e, "$bigint"))) return cmp_bigint(json_string_value(x), v);
  if ((x = json_object_get(e, "$bytes_hex")) || (x = json_object_get(e, "$bytearray_hex")))
    return cmp_hex(json_string_value(x), v);
  if ((x = json_object_get(e, "$tuple"))) return cmp_items(x, v, DS_V_TUPLE, 1);
  if ((x = json_object_get(e, "$set")) || (x = json_object_get(e, "$frozenset")))
    return cmp_items(x, v, DS_V_SET, 0);
  if ((x = json_object_get(e, "$dict"))) return cmp_pairs(x, v);
  if (json_object_get(e, "$dict_subclass")) return cmp(json_object_get(e, "items"), v);
  if ((x = json_object_get(e, "$complex"))) {
    double re, im;
    if (!num_of(json_array_get(x, 0), &re) || !num_of(json_array_get(x, 1), &im)) return why("bad $complex");
    if (v->type != DS_V_COMPLEX || !same_double(re, v->u.c.re) || !same_double(im, v->u.c.im))
      return why("want complex (%g, %g), got %s", re, im, vjson(v));
    return 1;
  }
  if ((x = json_object_get(e, "$ndarray"))) return cmp_ndarray(x, v);
  if ((x = json_object_get(e, "$npscalar"))) return cmp(json_object_get(x, "value"), v);
  if (json_object_get(e, "$object")) return cmp_pyobject(e, v);
  return -1; /* not tagged */
}

/* Typed JSON e vs value v: 1 equal, 0 not (g_why says why). */
static int cmp(const json_t *e, const ds_value *v) {
  double d;
  switch (json_typeof(e)) {
    case JSON_NULL: return v->type == DS_V_NULL ? 1 : why("want null, got %s", vjson(v));
    case JSON_TRUE: case JSON_FALSE:
      if (v->type != DS_V_BOOL || v->u.i != json_is_true(e)) return why("want bool, got %s", vjson(v));
      return 1;
    case JSON_INTEGER: {
      json_int_t w = json_integer_value(e);
      if ((v->type == DS_V_INT && v->u.i == w) || (v->type == DS_V_UINT && w >= 0 && v->u.u == (uint64_t)w))
        return 1;
      return why("want %lld, got %s", (long long)w, vjson(v));
    }
    case JSON_REAL:
      if (v->type != DS_V_FLOAT || !same_double(json_real_value(e), v->u.f))
        return why("want %.17g, got %s", json_real_value(e), vjson(v));
      return 1;
    case JSON_STRING:
      if (v->type == DS_V_FLOAT && num_of(e, &d)) return same_double(d, v->u.f) ? 1 : why("float");
      if (v->type != DS_V_TEXT || v->u.s.n != json_string_length(e) ||
          memcmp(v->u.s.p, json_string_value(e), v->u.s.n))
        return why("want \"%.60s\", got %s", json_string_value(e), vjson(v));
      return 1;
    case JSON_ARRAY: return cmp_items(e, v, DS_V_LIST, 1);
    case JSON_OBJECT: {
      int r = cmp_tagged(e, v);
      return r >= 0 ? r : cmp_object(e, v);
    }
  }
  return why("unknown JSON");
}

/* 1 when typed JSON e holds a {"$unrepresentable": ...} anywhere. */
static int has_unrepresentable(const json_t *e) {
  if (json_is_object(e)) {
    if (json_object_get(e, "$unrepresentable")) return 1;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)e, k, x) if (has_unrepresentable(x)) return 1;
  } else if (json_is_array(e)) {
    for (size_t i = 0; i < json_array_size(e); i++)
      if (has_unrepresentable(json_array_get(e, i))) return 1;
  }
  return 0;
}

/* ------------------------------------------------------------ robustness */

/* Every proper prefix of p must fail cleanly with a message. */
static int all_prefixes_fail(const uint8_t *p, size_t n, size_t *bad) {
  for (size_t k = 0; k < n; k++) {
    ds_value v;
    char *err = NULL;
    int rc = dec(p, k, &v, &err);
    int ok = rc == -1 && err && *err;
    free(err);
    if (!ok) {
      *bad = k;
      return 0;
    }
  }
  return 1;
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;

/* xorshift64* */
static uint64_t rnd(void) {
  g_rng ^= g_rng >> 12;
  g_rng ^= g_rng << 25;
  g_rng ^= g_rng >> 27;
  return g_rng * 0x2545F4914F6CDD1Dull;
}

/* Decode `rounds` random mutations of p (1-4 bytes changed); successes are
 * JSON-serialised. Returns how many decoded. */
static int mutate_decode(const uint8_t *p, size_t n, int rounds) {
  uint8_t *m = malloc(n ? n : 1);
  int okn = 0;
  ds_pickle_limits lim = {.max_bytes = 8u << 20, .max_depth = 200};
  for (int r = 0; r < rounds && n; r++) {
    memcpy(m, p, n);
    int k = 1 + (int)(rnd() % 4);
    for (int i = 0; i < k; i++) {
      size_t at = (size_t)(rnd() % n);
      uint64_t how = rnd() % 4;
      m[at] = how == 0 ? (uint8_t)rnd() : how == 1 ? (uint8_t)(m[at] ^ (1u << (rnd() % 8)))
            : how == 2 ? 0xFF : (uint8_t)(m[at] + 1);
    }
    ds_value v;
    char *err = NULL;
    ds_arena_reset(&g_arena);
    if (ds_pickle_decode(m, n, &lim, &g_arena, &v, &err) == 0) {
      ds_buf b = {0};
      if (ds_value_json(&b, &v, &err) == 0) okn++;
      ds_buf_free(&b);
    }
    free(err);
  }
  free(m);
  return okn;
}

/* ------------------------------------------------------------ 1. python fixtures */

/* Decode every pickle of tests/fixtures/pickle and compare with
 * expected.json; then prefixes and mutations. */
static void test_python_fixtures(void) {
  json_error_t je;
  json_t *root = json_load_file(PFIX "expected.json", JSON_ALLOW_NUL, &je);
  CHECK_MSG(root != NULL, "%s: %s", PFIX "expected.json", je.text);
  if (!root) return;
  json_t *cases = json_object_get(root, "cases");
  size_t ncmp = 0, nfail = 0, nprefix_files = 0, nmut = 0, njson = 0;
  for (size_t i = 0; i < json_array_size(cases); i++) {
    json_t *c = json_array_get(cases, i);
    const char *file = json_string_value(json_object_get(c, "file"));
    char path[512];
    snprintf(path, sizeof path, PFIX "%s", file);
    size_t n;
    uint8_t *p = fx_slurp(path, &n);
    CHECK_MSG(p != NULL, "missing %s", path);
    if (!p) continue;
    ds_value v;
    char *err = NULL;
    json_t *want_err = json_object_get(c, "error");
    int rc = dec(p, n, &v, &err);
    if (want_err) {
      CHECK_MSG(rc == -1 && err && strstr(err, json_string_value(want_err)), "%s: error '%s', want '%s'",
                file, err ? err : "(none)", json_string_value(want_err));
    } else {
      g_why[0] = 0;
      int ok = rc == 0 && cmp(json_object_get(c, "value"), &v);
      CHECK_MSG(ok, "%s: %s", file, rc ? err : g_why);
      ncmp++;
      if (!ok) nfail++;
      if (rc == 0) { /* every decoded fixture must serialise */
        ds_buf b = {0};
        char *je2 = NULL;
        if (ds_value_json(&b, &v, &je2) == 0) njson++;
        else check_note("    json of %s: %s\n", file, je2);
        free(je2);
        ds_buf_free(&b);
      }
    }
    free(err);
    size_t bad = 0;
    if (n <= 20000) {
      int ok = all_prefixes_fail(p, n, &bad);
      CHECK_MSG(ok, "%s: prefix of %zu bytes did not fail", file, bad);
      nprefix_files++;
    }
    mutate_decode(p, n, 300);
    nmut += 300;
    free(p);
  }
  printf("    python fixtures: %zu compared (%zu failed), %zu serialised, %zu files "
         "prefix-checked, %zu mutations\n", ncmp, nfail, njson, nprefix_files, nmut);
  CHECK(ncmp >= 60);
  json_decref(root);
}

/* ------------------------------------------------------------ 2. hand-built pickles */

/* A pickle being built. */
typedef struct pb {
  uint8_t b[1 << 16];
  size_t n;
} pb;

/* Append raw bytes. */
static void pb_raw(pb *q, const void *p, size_t n) {
  memcpy(q->b + q->n, p, n);
  q->n += n;
}
/* Append one opcode byte. */
static void pb_op(pb *q, uint8_t op) { q->b[q->n++] = op; }
/* SHORT_BINUNICODE / BINUNICODE of a C string. */
static void pb_str(pb *q, const char *s) {
  size_t n = strlen(s);
  if (n < 256) { pb_op(q, 0x8C); pb_op(q, (uint8_t)n); }
  else { pb_op(q, 'X'); uint32_t l = (uint32_t)n; pb_raw(q, &l, 4); }
  pb_raw(q, s, n);
}
/* SHORT_BINBYTES / BINBYTES. */
static void pb_bytes(pb *q, const void *p, size_t n) {
  if (n < 256) { pb_op(q, 'C'); pb_op(q, (uint8_t)n); }
  else { pb_op(q, 'B'); uint32_t l = (uint32_t)n; pb_raw(q, &l, 4); }
  pb_raw(q, p, n);
}
/* BININT (any int32). */
static void pb_int(pb *q, int32_t v) { pb_op(q, 'J'); pb_raw(q, &v, 4); }
/* STACK_GLOBAL module.name. */
static void pb_global(pb *q, const char *mod, const char *name) {
  pb_str(q, mod);
  pb_str(q, name);
  pb_op(q, 0x93);
}
/* A numpy dtype from typestr with byte order `order` (REDUCE + BUILD). */
static void pb_dtype(pb *q, const char *typestr, const char *order) {
  pb_global(q, "numpy", "dtype");
  pb_str(q, typestr);
  pb_op(q, 0x89);
  pb_op(q, 0x88);
  pb_op(q, 0x87);
  pb_op(q, 'R');
  pb_op(q, '(');
  pb_int(q, 3);
  pb_str(q, order);
  pb_op(q, 'N'); pb_op(q, 'N'); pb_op(q, 'N');
  pb_int(q, -1); pb_int(q, -1); pb_int(q, 0);
  pb_op(q, 't');
  pb_op(q, 'b');
}
/* A shape tuple. */
static void pb_shape(pb *q, int nd, const int32_t *shape) {
  pb_op(q, '(');
  for (int k = 0; k < nd; k++) pb_int(q, shape[k]);
  pb_op(q, 't');
}
/* numpy _reconstruct + BUILD of an array. */
static void pb_array(pb *q, const char *typestr, const char *order, int nd,
                     const int32_t *shape, int fortran, const void *data, size_t n) {
  pb_global(q, "numpy.core.multiarray", "_reconstruct");
  pb_global(q, "numpy", "ndarray");
  pb_int(q, 0);
  pb_op(q, 0x85);
  pb_bytes(q, "b", 1);
  pb_op(q, 0x87);
  pb_op(q, 'R');
  pb_op(q, '(');
  pb_int(q, 1);
  pb_shape(q, nd, shape);
  pb_dtype(q, typestr, order);
  pb_op(q, fortran ? 0x88 : 0x89);
  pb_bytes(q, data, n);
  pb_op(q, 't');
  pb_op(q, 'b');
}
/* _frombuffer(bytes, dtype, shape, order[, axes]) REDUCE. */
static void pb_frombuffer(pb *q, const char *typestr, int nd, const int32_t *shape,
                          const char *order, const int32_t *axes, const void *data, size_t n) {
  pb_global(q, "numpy._core.numeric", "_frombuffer");
  pb_op(q, '(');
  pb_bytes(q, data, n);
  pb_dtype(q, typestr, "<");
  pb_shape(q, nd, shape);
  pb_str(q, order);
  if (axes) pb_shape(q, nd, axes);
  pb_op(q, 't');
  pb_op(q, 'R');
}
/* Start a protocol-4 pickle. */
static void pb_start(pb *q) { q->n = 0; pb_op(q, 0x80); pb_op(q, 4); }

/* Decode q: expect success and the value's JSON text == want. */
static void expect_json(const pb *q, const char *want, const char *what) {
  ds_value v;
  char *err = NULL;
  int rc = dec(q->b, q->n, &v, &err);
  CHECK_MSG(rc == 0 && !strcmp(vjson(&v), want), "%s: got %s, want %s", what,
            rc ? err : vjson(&v), want);
  free(err);
}

/* Decode q with limits: expect an error containing `want`. */
static void expect_err_lim(const pb *q, const ds_pickle_limits *lim, const char *want,
                           const char *what) {
  ds_value v;
  char *err = NULL;
  ds_arena_reset(&g_arena);
  int rc = ds_pickle_decode(q->b, q->n, lim, &g_arena, &v, &err);
  CHECK_MSG(rc == -1 && err && strstr(err, want), "%s: got %s, want error '%s'", what,
            rc ? err : vjson(&v), want);
  free(err);
}

/* expect_err_lim with default limits. */
static void expect_err(const pb *q, const char *want, const char *what) {
  expect_err_lim(q, NULL, want, what);
}

/* Hex pickle: expect JSON text. */
static void hex_json(const char *hex, const char *want) {
  static pb q;
  q.n = unhex(hex, q.b);
  expect_json(&q, want, hex);
}

/* Hex pickle: expect an error containing want. */
static void hex_err(const char *hex, const char *want) {
  static pb q;
  q.n = unhex(hex, q.b);
  expect_err(&q, want, hex);
}

/* Hex pickle: expect an unsupported value naming `name`. */
static void hex_unsupported(const char *hex, const char *name) {
  static pb q;
  q.n = unhex(hex, q.b);
  ds_value v;
  char *err = NULL;
  int rc = dec(q.b, q.n, &v, &err);
  CHECK_MSG(rc == 0 && v.type == DS_V_UNSUPPORTED && v.u.s.n == strlen(name) &&
                !memcmp(v.u.s.p, name, v.u.s.n),
            "%s: got %s, want unsupported %s", hex, rc ? err : vjson(&v), name);
  free(err);
}

/* Opcodes and forms Python does not write in the fixtures. */
static void test_opcodes(void) {
  hex_json("80 04 4b 05 32 86 2e", "[5,5]");                         /* DUP */
  hex_json("80 04 4b 01 4b 02 30 2e", "1");                          /* POP */
  hex_json("80 04 4b 01 28 30 2e", "1");                             /* POP of a MARK */
  hex_json("80 04 4b 07 28 4b 01 4b 02 31 2e", "7");                 /* POP_MARK */
  hex_json("80 04 8d 03 00 00 00 00 00 00 00 61 62 63 2e", "\"abc\""); /* BINUNICODE8 */
  hex_json("80 04 8e 02 00 00 00 00 00 00 00 ff 00 2e", "\"/wA=\""); /* BINBYTES8 */
  hex_json("80 05 96 01 00 00 00 00 00 00 00 41 2e", "\"QQ==\"");    /* BYTEARRAY8 */
  hex_json("80 04 95 03 00 00 00 00 00 00 00 4b 2a 2e", "42");       /* FRAME */
  hex_json("4b 2a 2e", "42");                                        /* no PROTO */
  hex_json("80 04 8a 00 2e", "0");                                   /* LONG1 empty */
  hex_json("80 04 8a 02 ff ff 2e", "-1");                            /* sign extension */
  hex_json("80 04 8a 08 ff ff ff ff ff ff ff 7f 2e", "9223372036854775807");
  hex_json("80 04 8a 08 00 00 00 00 00 00 00 80 2e", "-9223372036854775808");
  hex_json("80 04 8a 09 00 00 00 00 00 00 00 00 01 2e", "18446744073709551616");
  hex_json("80 04 8a 09 ff ff ff ff ff ff ff ff 00 2e", "18446744073709551615");
  hex_json("80 04 8a 09 00 00 00 00 00 00 00 00 ff 2e", "-18446744073709551616");
  hex_json("80 04 8b 02 00 00 00 00 01 2e", "256");                  /* LONG4 */
  hex_json("80 04 4a ff ff ff ff 2e", "-1");                         /* BININT */
  hex_json("80 04 4d ff ff 2e", "65535");                            /* BININT2 */
  hex_json("80 04 47 3f f8 00 00 00 00 00 00 2e", "1.5");            /* BINFLOAT BE */
  hex_json("80 04 4b 09 71 05 94 30 68 01 68 05 86 2e", "[9,9]");    /* BINPUT + MEMOIZE */
  hex_json("80 04 4b 09 72 00 01 00 00 30 6a 00 01 00 00 2e", "9");  /* LONG_BINPUT/GET */
  hex_json("80 04 8f 94 28 4b 01 4b 02 90 2e", "[1,2]");             /* EMPTY_SET ADDITEMS */
  hex_json("80 04 28 4b 01 91 2e", "[1]");                           /* FROZENSET */
  hex_json("80 04 7d 4b 01 4b 02 73 2e", "{\"1\":2}");               /* SETITEM int key */
  hex_json("80 04 28 5d 28 4b 01 65 74 2e", "[[1]]");                /* APPENDS under a MARK */
  /* invalid UTF-8 becomes U+FFFD (Python's errors='replace' subparts) */
  hex_json("80 04 8c 03 61 ff 62 2e", "\"a\xef\xbf\xbd" "b\"");
  hex_json("80 04 8c 03 ed a0 80 2e", "\"\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\"");
  /* GLOBAL (protocol <= 3 form); __builtin__ is builtins below protocol 3 */
  hex_unsupported("80 02 63 6f 73 0a 73 79 73 74 65 6d 0a 29 52 2e", "os.system");
  hex_unsupported("80 02 63 5f 5f 62 75 69 6c 74 69 6e 5f 5f 0a 65 76 61 6c 0a 29 52 2e",
                  "builtins.eval");
  hex_unsupported("80 04 63 5f 5f 62 75 69 6c 74 69 6e 5f 5f 0a 65 76 61 6c 0a 29 52 2e",
                  "__builtin__.eval");
  /* a bare global is a token, not data */
  hex_unsupported("80 04 8c 05 6e 75 6d 70 79 8c 05 64 74 79 70 65 93 2e", "numpy.dtype");
  /* NEWOBJ / NEWOBJ_EX on an allow-listed class still make opaque objects */
  hex_unsupported("80 04 8c 0b 63 6f 6c 6c 65 63 74 69 6f 6e 73 8c 0b 4f 72 64 65 72 65 64 44 69 "
                  "63 74 93 29 81 2e", "collections.OrderedDict");
  hex_unsupported("80 04 8c 01 6d 8c 01 43 93 29 7d 92 2e", "m.C");
  /* operands of REDUCE/APPENDS/SETITEMS/BUILD on an opaque object are consumed */
  hex_unsupported("80 04 8c 01 6d 8c 01 43 93 29 52 28 4b 01 4b 02 65 28 4b 01 4b 02 75 "
                  "4b 03 61 4b 04 4b 05 73 28 4b 06 90 7d 62 2e", "m.C");
  hex_unsupported("80 04 8c 01 6d 8c 01 43 93 29 52 29 52 2e", "m.C"); /* calling it */
}

/* Hostile globals: always tokens, never executed; STACK_GLOBAL checks the
 * strings it pops, whatever opcodes produced them. */
static void test_hostile(void) {
  pb q;
  /* module and name from the memo, with allow-listed decoys as literals */
  pb_start(&q);
  pb_str(&q, "posix"); pb_op(&q, 0x94);
  pb_str(&q, "system"); pb_op(&q, 0x94);
  pb_op(&q, '0'); pb_op(&q, '0');
  pb_str(&q, "numpy"); pb_str(&q, "dtype"); pb_op(&q, '0'); pb_op(&q, '0');
  pb_op(&q, 'h'); pb_op(&q, 0); pb_op(&q, 'h'); pb_op(&q, 1); pb_op(&q, 0x93);
  pb_str(&q, "touch /tmp/pickle-pwned"); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "{\"$unsupported\":\"posix.system\"}", "posix.system via BINGET");
  /* the reverse: allow-listed names from the memo still work */
  pb_start(&q);
  pb_str(&q, "numpy"); pb_op(&q, 0x94); pb_str(&q, "dtype"); pb_op(&q, 0x94);
  pb_op(&q, '0'); pb_op(&q, '0');
  pb_op(&q, 'h'); pb_op(&q, 0); pb_op(&q, 'h'); pb_op(&q, 1); pb_op(&q, 0x93);
  pb_str(&q, "f4"); pb_op(&q, 0x89); pb_op(&q, 0x88); pb_op(&q, 0x87); pb_op(&q, 'R');
  pb_op(&q, '.');
  expect_json(&q, "\"<f4\"", "numpy.dtype via BINGET");
  /* globals that resemble allowed ones */
  const char *near[][2] = {{"numpy", "load"}, {"numpy.core.multiarray", "ndarray"},
                           {"numpy.testing._private.utils", "runstring"},
                           {"builtins", "getattr"}, {"builtins", "__import__"},
                           {"builtins", "exec"}, {"datetime", "datetime.now"},
                           {"numpy.core", "multiarray._reconstruct"}, {"builtins ", "set"},
                           {"subprocess", "Popen"}, {"nt", "system"}};
  for (size_t k = 0; k < sizeof near / sizeof *near; k++) {
    pb_start(&q);
    pb_global(&q, near[k][0], near[k][1]);
    pb_str(&q, "x"); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
    char want[200];
    snprintf(want, sizeof want, "{\"$unsupported\":\"%s.%s\"}", near[k][0], near[k][1]);
    expect_json(&q, want, want);
  }
  hex_err("80 04 4b 01 4b 02 93 2e", "STACK_GLOBAL requires str");
  hex_err("80 04 8c 01 61 4b 02 93 2e", "STACK_GLOBAL requires str");
}

/* numpy and builtins recipes built by hand, including bad arguments. */
static void test_numpy_builtins(void) {
  pb q;
  int32_t s23[] = {2, 3}, s3[] = {3}, axes[] = {1, 0}, bad_axes[] = {0, 0};
  int16_t fdata[] = {0, 3, 1, 4, 2, 5}; /* column-major 2x3 of 0..5 */
  pb_start(&q);
  pb_array(&q, "i2", "<", 2, s23, 1, fdata, sizeof fdata);
  pb_op(&q, '.');
  expect_json(&q, "[[0,1,2],[3,4,5]]", "fortran array");
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "F", NULL, fdata, sizeof fdata);
  pb_op(&q, '.');
  expect_json(&q, "[[0,1,2],[3,4,5]]", "_frombuffer F");
  int16_t kdata[] = {0, 1, 2, 3, 4, 5}; /* C buffer of shape (2,3), transposed (1,0) */
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "K", axes, kdata, sizeof kdata);
  pb_op(&q, '.');
  expect_json(&q, "[[0,3],[1,4],[2,5]]", "_frombuffer K");
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "K", NULL, kdata, sizeof kdata);
  pb_op(&q, '.');
  expect_err(&q, "order 'K' needs an axis order", "K without axes");
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "K", bad_axes, kdata, sizeof kdata);
  pb_op(&q, '.');
  expect_err(&q, "not a permutation", "K bad axes");
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "Z", NULL, kdata, sizeof kdata);
  pb_op(&q, '.');
  expect_err(&q, "order must be", "bad order");
  pb_start(&q);
  pb_frombuffer(&q, "i2", 2, s23, "C", NULL, kdata, 11);
  pb_op(&q, '.');
  expect_err(&q, "numpy array data has 11 bytes", "buffer length");
  pb_start(&q);
  pb_array(&q, "i2", "<", 1, s3, 0, kdata, 4);
  pb_op(&q, '.');
  expect_err(&q, "numpy array data has 4 bytes, its shape and dtype need 6", "data length");
  int32_t neg[] = {-1};
  pb_start(&q);
  pb_array(&q, "i2", "<", 1, neg, 0, kdata, 2);
  pb_op(&q, '.');
  expect_err(&q, "negative dimension", "negative dimension");
  int32_t huge[] = {0x7fffffff, 0x7fffffff, 0x7fffffff};
  pb_start(&q);
  pb_array(&q, "f8", "<", 3, huge, 0, kdata, 2);
  pb_op(&q, '.');
  expect_err(&q, "too large", "huge shape");
  pb_start(&q);
  pb_dtype(&q, "x9", "<");
  pb_op(&q, '.');
  expect_err(&q, "unsupported numpy dtype 'x9'", "bad typestr");
  pb_start(&q);
  pb_dtype(&q, "i3", "<");
  pb_op(&q, '.');
  expect_err(&q, "unsupported numpy dtype 'i3'", "bad int size");
  pb_start(&q);
  pb_dtype(&q, "f4", "?");
  pb_op(&q, '.');
  expect_err(&q, "bad byte order", "bad byte order");
  /* big-endian dtype: swapped to little-endian */
  uint8_t be[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
  int32_t s2[] = {2};
  pb_start(&q);
  pb_array(&q, "i4", ">", 1, s2, 0, be, sizeof be);
  pb_op(&q, '.');
  expect_json(&q, "[1,-2]", "big-endian array");
  /* scalars */
  float one5 = 1.5f;
  pb_start(&q);
  pb_global(&q, "numpy.core.multiarray", "scalar");
  pb_dtype(&q, "f4", "<");
  pb_bytes(&q, &one5, 4);
  pb_op(&q, 0x86); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "1.5", "float32 scalar");
  pb_start(&q);
  pb_global(&q, "numpy.core.multiarray", "scalar");
  pb_dtype(&q, "f4", "<");
  pb_bytes(&q, &one5, 3);
  pb_op(&q, 0x86); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_err(&q, "3 bytes for a 4-byte dtype", "scalar length");
  /* an array from _reconstruct that never gets its BUILD */
  pb_start(&q);
  pb_global(&q, "numpy.core.multiarray", "_reconstruct");
  pb_global(&q, "numpy", "ndarray");
  pb_int(&q, 0); pb_op(&q, 0x85); pb_bytes(&q, "b", 1); pb_op(&q, 0x87); pb_op(&q, 'R');
  pb_op(&q, '.');
  expect_err(&q, "without its state", "array without BUILD");
  /* an ndarray subclass: opaque, and its BUILD is consumed */
  pb_start(&q);
  pb_global(&q, "numpy.core.multiarray", "_reconstruct");
  pb_global(&q, "numpy", "matrix");
  pb_int(&q, 0); pb_op(&q, 0x85); pb_bytes(&q, "b", 1); pb_op(&q, 0x87); pb_op(&q, 'R');
  pb_op(&q, 'N'); pb_op(&q, 'b'); pb_op(&q, '.');
  expect_json(&q, "{\"$unsupported\":\"numpy.matrix\"}", "ndarray subclass");
  /* builtins */
  pb_start(&q);
  pb_global(&q, "builtins", "complex");
  pb_int(&q, 2); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "[2.0,0.0]", "complex(2)");
  pb_start(&q);
  pb_global(&q, "builtins", "complex");
  pb_str(&q, "1+2j"); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_err(&q, "complex: expected a number", "complex(str)");
  pb_start(&q);
  pb_global(&q, "_codecs", "encode");
  pb_str(&q, "\xe4\xb8\xad"); pb_str(&q, "latin1"); pb_op(&q, 0x86); pb_op(&q, 'R');
  pb_op(&q, '.');
  expect_err(&q, "does not fit latin-1", "encode non-latin1");
  pb_start(&q);
  pb_global(&q, "_codecs", "encode");
  pb_str(&q, "\xc3\xbf" "a"); pb_str(&q, "latin1"); pb_op(&q, 0x86); pb_op(&q, 'R');
  pb_op(&q, '.');
  expect_json(&q, "\"/2E=\"", "encode latin1");
  pb_start(&q);
  pb_global(&q, "collections", "OrderedDict");
  pb_op(&q, ']'); pb_op(&q, '('); pb_str(&q, "a"); pb_int(&q, 1); pb_op(&q, 0x86);
  pb_str(&q, "b"); pb_int(&q, 2); pb_op(&q, 0x86); pb_op(&q, 'e'); pb_op(&q, 0x85);
  pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "{\"a\":1,\"b\":2}", "OrderedDict(list of pairs)");
  pb_start(&q);
  pb_global(&q, "datetime", "datetime");
  pb_op(&q, '('); pb_int(&q, 2020); pb_int(&q, 5); pb_int(&q, 17); pb_int(&q, 1); pb_int(&q, 2);
  pb_op(&q, 't'); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "\"2020-05-17T01:02:00\"", "datetime(ints)");
  pb_start(&q);
  pb_global(&q, "datetime", "date");
  pb_bytes(&q, "\x07\xe8\x02\x1e", 4); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_err(&q, "value out of range", "Feb 30");
  pb_start(&q);
  pb_global(&q, "datetime", "timedelta");
  pb_int(&q, -1); pb_int(&q, 86399); pb_int(&q, 500000); pb_op(&q, 0x87); pb_op(&q, 'R');
  pb_op(&q, '.');
  expect_json(&q, "-0.5", "timedelta");
  pb_start(&q);
  pb_global(&q, "builtins", "set");
  pb_op(&q, ')'); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_json(&q, "[]", "set()");
  pb_start(&q);
  pb_global(&q, "builtins", "set");
  pb_int(&q, 5); pb_op(&q, 0x85); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_err(&q, "set: expected", "set(5)");
  pb_start(&q);
  pb_global(&q, "numpy", "dtype");
  pb_int(&q, 5); pb_op(&q, 'R'); pb_op(&q, '.');
  expect_err(&q, "REDUCE arguments: expected a tuple", "args not a tuple");
}

/* Malformed pickles: every one is an error with a message, none crashes. */
static void test_errors(void) {
  hex_err("80 04 49 31 0a 2e", "unsupported pickle opcode 0x49 at byte 2");
  hex_err("80 04 4b 01 50 2e", "unsupported pickle opcode 0x50 at byte 4");   /* PERSID */
  hex_err("80 04 82 01 2e", "unsupported pickle opcode 0x82 at byte 2");      /* EXT1 */
  hex_err("80 04 97 2e", "unsupported pickle opcode 0x97");                   /* NEXT_BUFFER */
  hex_err("80 04 55 01 61 2e", "unsupported pickle opcode 0x55");             /* SHORT_BINSTRING */
  hex_err("80 06 4b 01 2e", "unsupported pickle protocol 6");
  hex_err("", "no STOP");
  hex_err("80 04", "no STOP");
  hex_err("80 04 4b 01", "no STOP");
  hex_err("80", "truncated");
  hex_err("80 04 2e", "stack underflow");
  hex_err("80 04 4b 01 4b 02 2e", "STOP with 2 values");
  hex_err("80 04 28 4b 01 2e", "STOP with an open MARK");
  hex_err("80 04 61 2e", "stack underflow");
  hex_err("80 04 5d 4b 01 28 61 2e", "stack underflow");                     /* APPEND over MARK */
  hex_err("80 04 5d 4b 01 65 2e", "without a MARK");
  hex_err("80 04 4b 01 74 2e", "without a MARK");
  hex_err("80 04 31 2e", "without a MARK");
  hex_err("80 04 5d 28 28 65 2e", "stack underflow");                        /* list below fence */
  hex_err("80 04 28 65 2e", "stack underflow");
  hex_err("80 04 28 4b 01 86 2e", "stack underflow");                        /* TUPLE2 over MARK */
  hex_err("80 04 28 32 2e", "stack underflow");                              /* DUP over MARK */
  hex_err("80 04 28 94 2e", "stack underflow");                              /* MEMOIZE over MARK */
  hex_err("80 04 30 2e", "stack underflow");
  hex_err("80 04 7d 28 4b 01 75 2e", "odd number of items");
  hex_err("80 04 4b 01 4b 02 61 2e", "APPEND on a value that is not a list");
  hex_err("80 04 5d 4b 01 4b 02 73 2e", "SETITEM on a value that is not a dict");
  hex_err("80 04 28 91 28 4b 01 90 2e", "ADDITEMS on a value that is not a set");
  hex_err("80 04 29 28 4b 01 65 2e", "APPENDS on a value that is not a list");
  hex_err("80 04 68 05 2e", "memo key 5 is not defined");
  hex_err("80 04 4b 01 94 68 01 2e", "memo key 1 is not defined");
  hex_err("80 04 6a ff ff ff ff 2e", "memo key 4294967295 is not defined");
  hex_err("80 04 4b 01 72 ff ff ff ff 2e", "exceeds the limit");
  hex_err("80 04 94 2e", "stack underflow");
  hex_err("80 04 58 ff ff ff ff 61 2e", "truncated");                        /* huge lengths */
  hex_err("80 04 8d ff ff ff ff ff ff ff ff 61 2e", "truncated");
  hex_err("80 04 8e ff ff ff ff ff ff ff 7f 61 2e", "truncated");
  hex_err("80 05 96 00 00 00 00 01 00 00 00 61 2e", "truncated");
  hex_err("80 04 42 00 00 00 80 2e", "truncated");
  hex_err("80 04 43 05 61 2e", "truncated");
  hex_err("80 04 8c 09 61 2e", "truncated");
  hex_err("80 04 95 ff ff ff ff ff ff ff ff 4b 01 2e", "truncated");
  hex_err("80 04 95 0a 00 00 00 00 00 00 00 4b 01 2e", "truncated");
  hex_err("80 04 8b ff ff ff 7f 01 2e", "truncated");
  hex_err("80 04 8b ff ff ff ff 2e", "negative length");
  hex_err("80 04 8a 05 01 2e", "truncated");
  hex_err("80 04 47 3f f8 2e", "truncated");
  hex_err("80 04 4a 01 02", "truncated");
  hex_err("80 04 63 6f 73 0a 73 79 73", "truncated");                        /* GLOBAL */
  hex_err("80 04 63 6f 73", "truncated");
  hex_err("80 04 4b 01 29 52 2e", "REDUCE on a value that is not a global");
  hex_err("80 04 4b 01 4e 62 2e", "BUILD on a value that takes no state");
  hex_err("80 04 4b 01 29 81 2e", "NEWOBJ on a value that is not a class");
  hex_err("80 04 5d 94 68 00 61 2e", "recursive structure");                 /* l.append(l) */
  hex_err("80 04 7d 94 4b 01 68 00 73 2e", "recursive structure");           /* d[1] = d */
  /* the same list twice is fine (shared, not recursive) */
  hex_json("80 04 5d 94 4b 01 61 30 68 00 68 00 86 2e", "[[1],[1]]");
}

/* Resource limits. */
static void test_limits(void) {
  static pb q;
  ds_pickle_limits lim;
  /* nesting: 1000 levels pass, 1001 fail (default max_depth 1000) */
  for (int depth = 1000; depth <= 1001; depth++) {
    pb_start(&q);
    for (int k = 0; k < depth; k++) pb_op(&q, ']');
    for (int k = 1; k < depth; k++) pb_op(&q, 'a');
    pb_op(&q, '.');
    ds_value v;
    char *err = NULL;
    int rc = dec(q.b, q.n, &v, &err);
    if (depth == 1000) CHECK_MSG(rc == 0, "depth 1000: %s", err);
    else CHECK_MSG(rc == -1 && err && strstr(err, "nested deeper than 1000"), "depth 1001: %s", err);
    free(err);
  }
  memset(&lim, 0, sizeof lim);
  lim.max_depth = 10;
  pb_start(&q);
  for (int k = 0; k < 11; k++) pb_op(&q, ']');
  for (int k = 1; k < 11; k++) pb_op(&q, 'a');
  pb_op(&q, '.');
  expect_err_lim(&q, &lim, "nested deeper than 10", "max_depth 10");
  /* allocation */
  memset(&lim, 0, sizeof lim);
  lim.max_bytes = 4096;
  pb_start(&q);
  pb_op(&q, ']');
  pb_op(&q, '(');
  for (int k = 0; k < 1000; k++) pb_int(&q, k);
  pb_op(&q, 'e');
  pb_op(&q, '.');
  expect_err_lim(&q, &lim, "more than 4096 bytes", "max_bytes");
  /* memo entries */
  memset(&lim, 0, sizeof lim);
  lim.max_memo = 10;
  pb_start(&q);
  pb_int(&q, 1);
  for (int k = 0; k < 11; k++) pb_op(&q, 0x94);
  pb_op(&q, '.');
  expect_err_lim(&q, &lim, "memo index 10 exceeds the limit 10", "max_memo");
  /* stack entries and MARKs */
  memset(&lim, 0, sizeof lim);
  lim.max_stack = 200;
  pb_start(&q);
  for (int k = 0; k < 201; k++) pb_op(&q, 'N');
  pb_op(&q, '.');
  expect_err_lim(&q, &lim, "stack exceeds 200 entries", "max_stack");
  pb_start(&q);
  for (int k = 0; k < 201; k++) pb_op(&q, '(');
  pb_op(&q, '.');
  expect_err_lim(&q, &lim, "MARK stack exceeds 200", "max_stack marks");
  /* LONG4 length */
  memset(&lim, 0, sizeof lim);
  pb_start(&q);
  pb_op(&q, 0x8B);
  uint32_t len = 9000;
  pb_raw(&q, &len, 4);
  memset(q.b + q.n, 0x11, len);
  q.n += len;
  pb_op(&q, '.');
  expect_err(&q, "integer of 9000 bytes exceeds the limit of 8192", "LONG4 limit");
  lim.max_long = 16384;
  {
    ds_value v;
    char *err = NULL;
    ds_arena_reset(&g_arena);
    int rc = ds_pickle_decode(q.b, q.n, &lim, &g_arena, &v, &err);
    CHECK_MSG(rc == 0 && v.type == DS_V_BIGINT && v.u.s.n > 21000, "LONG4 9000 bytes: %s",
              err ? err : vjson(&v));
    free(err);
  }
  /* a DAG of shared tuples that would expand to 2^64 nodes */
  pb_start(&q);
  pb_op(&q, 'N');
  for (int k = 0; k < 64; k++) { pb_op(&q, '2'); pb_op(&q, 0x86); }
  pb_op(&q, '.');
  expect_err(&q, "with shared references expanded", "shared DAG");
  /* ... but 10 doublings (1024 leaves) are fine */
  pb_start(&q);
  pb_op(&q, 'N');
  for (int k = 0; k < 10; k++) { pb_op(&q, '2'); pb_op(&q, 0x86); }
  pb_op(&q, '.');
  {
    ds_value v;
    char *err = NULL;
    int rc = dec(q.b, q.n, &v, &err);
    CHECK_MSG(rc == 0 && v.type == DS_V_TUPLE, "10 doublings: %s", err);
    free(err);
  }
}

/* ------------------------------------------------------------ 3. atlas conformance */

static int64_t g_examples, g_blocks, g_bench_blocks;
static double g_bench_ns;

/* The index.npy entries of a shard as uint64 (malloc'd), or NULL. */
static uint64_t *read_index(const char *path, size_t *count) {
  size_t n;
  uint8_t *p = fx_slurp(path, &n);
  if (!p) return NULL;
  ds_npy a;
  char *err = NULL;
  uint64_t *out = NULL;
  if (ds_npy_parse(p, n, &a, &err) == 0 && a.kind == 'u' && a.byteorder != '>') {
    out = malloc((a.count ? a.count : 1) * sizeof *out);
    for (uint64_t i = 0; i < a.count; i++) {
      uint64_t x = 0;
      for (uint32_t b = 0; b < a.itemsize; b++) x |= (uint64_t)a.data[i * a.itemsize + b] << (8 * b);
      out[i] = x;
    }
    *count = (size_t)a.count;
  }
  free(err);
  free(p);
  return out;
}

/* A block's pickle bytes: raw, or decompressed with the dictionary (may be
 * NULL). Returns a malloc'd buffer. */
static uint8_t *block_pickle(const uint8_t *src, size_t n, int strategy, ZSTD_DDict *dd,
                             size_t *out_n) {
  if (strategy == 0) {
    uint8_t *p = malloc(n ? n : 1);
    memcpy(p, src, n);
    *out_n = n;
    return p;
  }
  unsigned long long cs = ZSTD_getFrameContentSize(src, n);
  if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR || cs > (1u << 30)) return NULL;
  uint8_t *p = malloc(cs ? (size_t)cs : 1);
  ZSTD_DCtx *dc = ZSTD_createDCtx();
  size_t r = dd ? ZSTD_decompress_usingDDict(dc, p, (size_t)cs, src, n, dd)
                : ZSTD_decompressDCtx(dc, p, (size_t)cs, src, n);
  ZSTD_freeDCtx(dc);
  if (ZSTD_isError(r) || r != cs) {
    free(p);
    return NULL;
  }
  *out_n = (size_t)r;
  return p;
}

/* A zstd dictionary file, or NULL. */
static ZSTD_DDict *load_dict(const char *path) {
  size_t n;
  uint8_t *p = fx_slurp(path, &n);
  if (!p) return NULL;
  ZSTD_DDict *d = ZSTD_createDDict(p, n);
  free(p);
  return d;
}

/* Time decoding one block (for DS_PICKLE_BENCH). */
static void bench_block(const uint8_t *p, size_t n) {
  ds_arena a = {0};
  struct timespec t0, t1;
  int reps = 200;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int r = 0; r < reps; r++) {
    ds_value v;
    char *err = NULL;
    ds_arena_reset(&a);
    if (ds_pickle_decode(p, n, NULL, &a, &v, &err)) free(err);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  g_bench_ns += ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reps;
  g_bench_blocks++;
  ds_arena_free(&a);
}

/* Check one shard: decode each block and compare its examples. */
static void check_shard(const char *name, const char *root, const char *dir, size_t shard,
                        json_t *examples, json_t *jshard, ZSTD_DDict *root_dict) {
  char sdir[1024], path[1200];
  snprintf(sdir, sizeof sdir, "%s/%s", root, dir);
  snprintf(path, sizeof path, "%s/meta.json", sdir);
  json_t *meta = json_load_file(path, 0, NULL);
  CHECK_MSG(meta != NULL, "%s: %s", name, path);
  if (!meta) return;
  int strategy = (int)json_integer_value(json_object_get(meta, "compression_strategy"));
  uint64_t bsize = (uint64_t)json_integer_value(json_object_get(meta, "block_size"));
  uint64_t stored = (uint64_t)json_integer_value(json_object_get(meta, "stored_examples"));
  json_decref(meta);
  snprintf(path, sizeof path, "%s/index.npy", sdir);
  size_t nidx = 0;
  uint64_t *idx = read_index(path, &nidx);
  CHECK_MSG(idx && nidx >= 1, "%s: %s", name, path);
  if (!idx) return;
  size_t nblocks = nidx - 1, dn = 0;
  snprintf(path, sizeof path, "%s/data.bin", sdir);
  uint8_t *data = nblocks ? fx_slurp(path, &dn) : NULL;
  ZSTD_DDict *dd = strategy == 2 ? root_dict : NULL;
  if (strategy == 3) {
    snprintf(path, sizeof path, "%s/zstd_dict.bin", sdir);
    dd = load_dict(path);
    CHECK_MSG(dd != NULL, "%s: %s", name, path);
  }
  json_t *jblocks = json_object_get(jshard, "blocks");
  int offsets_ok = json_array_size(jblocks) == nblocks;
  const char *bench = getenv("DS_PICKLE_BENCH");
  for (size_t b = 0; b < nblocks; b++) {
    json_t *jb = json_array_get(jblocks, b);
    if (jb && (uint64_t)json_integer_value(json_object_get(jb, "offset")) != idx[b]) offsets_ok = 0;
    size_t pn = 0;
    uint8_t *pk = idx[b] <= idx[b + 1] && idx[b + 1] <= dn
                      ? block_pickle(data + idx[b], (size_t)(idx[b + 1] - idx[b]), strategy, dd, &pn)
                      : NULL;
    if (!pk) {
      CHECK_MSG(0, "%s shard %zu block %zu: cannot read/decompress", name, shard, b);
      continue;
    }
    if (bench && !strcmp(name, "mid")) {
      snprintf(path, sizeof path, "%s/mid_%zu_%05zu.pkl", bench, shard, b);
      FILE *f = fopen(path, "wb");
      if (f) { fwrite(pk, 1, pn, f); fclose(f); }
      bench_block(pk, pn);
    }
    ds_value v;
    char *err = NULL;
    int rc = dec(pk, pn, &v, &err);
    g_blocks++;
    uint64_t want_n = stored - b * bsize < bsize ? stored - b * bsize : bsize;
    /* the examples of this block in the expected file */
    for (size_t i = 0; i < json_array_size(examples); i++) {
      json_t *ex = json_array_get(examples, i);
      if ((size_t)json_integer_value(json_object_get(ex, "shard")) != shard ||
          (size_t)json_integer_value(json_object_get(ex, "block")) != b)
        continue;
      size_t pos = (size_t)json_integer_value(json_object_get(ex, "pos"));
      json_t *want = json_object_get(ex, "value");
      if (has_unrepresentable(want)) {
        CHECK_MSG(rc == -1 && err && strstr(err, "recursive structure"),
                  "%s example %lld: want 'recursive structure', got %s", name,
                  (long long)json_integer_value(json_object_get(ex, "i")), rc ? err : "success");
        g_examples++;
        continue;
      }
      g_why[0] = 0;
      int ok = rc == 0 && v.type == DS_V_LIST && pos < v.u.list.n && cmp(want, &v.u.list.items[pos]);
      if (!ok)
        CHECK_MSG(0, "%s example %lld (shard %zu block %zu pos %zu): %s", name,
                  (long long)json_integer_value(json_object_get(ex, "i")), shard, b, pos,
                  rc ? err : g_why);
      g_examples++;
    }
    if (rc == 0 && (v.type != DS_V_LIST || v.u.list.n != want_n))
      CHECK_MSG(0, "%s shard %zu block %zu: %s, want a list of %llu", name, shard, b, vjson(&v),
                (unsigned long long)want_n);
    free(err);
    free(pk);
  }
  CHECK_MSG(offsets_ok, "%s shard %zu: index offsets match the expected file", name, shard);
  if (strategy == 3 && dd) ZSTD_freeDDict(dd);
  free(data);
  free(idx);
}

/* Check one dataset or bare shard of the atlas fixtures. */
static void check_case(const char *name) {
  char path[1024], root[512];
  snprintf(path, sizeof path, AFIX "expected/%s.json", name);
  json_error_t je;
  json_t *j = json_load_file(path, JSON_ALLOW_NUL, &je);
  CHECK_MSG(j != NULL, "%s: %s", path, je.text);
  if (!j) return;
  snprintf(root, sizeof root, AFIX "%s", json_string_value(json_object_get(j, "path")));
  json_t *examples = json_object_get(j, "examples_sampled");
  if (!examples) examples = json_object_get(j, "examples");
  json_t *shards = json_object_get(j, "shards");
  json_t *dirs = json_object_get(j, "shard_dirs");
  snprintf(path, sizeof path, "%s/zstd_dict.bin", root);
  ZSTD_DDict *root_dict = load_dict(path);
  int64_t before = g_examples;
  for (size_t s = 0; s < json_array_size(shards); s++) {
    const char *dir = dirs ? json_string_value(json_array_get(dirs, s)) : ".";
    check_shard(name, root, dir, s, examples, json_array_get(shards, s), root_dict);
  }
  CHECK_MSG(g_examples - before == (int64_t)json_array_size(examples),
            "%s: %lld of %zu examples compared", name, (long long)(g_examples - before),
            json_array_size(examples));
  if (root_dict) ZSTD_freeDDict(root_dict);
  json_decref(j);
}

/* Every atlas fixture case. */
static void test_atlas_conformance(void) {
  const char *cases[] = {"none", "standard", "shared_dict", "per_shard_dict", "single_shard",
                         "many_shards", "shared_fallback", "empty", "types", "types_p5",
                         "numpy2_p4", "numpy2_p5", "exotic", "mid", "index_u8_255",
                         "index_u16_256"};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) check_case(cases[k]);
  printf("    atlas conformance: %lld blocks decoded, %lld examples compared\n",
         (long long)g_blocks, (long long)g_examples);
  CHECK(g_examples >= 850);
  if (g_bench_blocks)
    printf("    bench: C decode %.2f us per mid block (%lld blocks)\n",
           g_bench_ns / (double)g_bench_blocks / 1000.0, (long long)g_bench_blocks);
}

int main(void) {
  test_opcodes();
  test_hostile();
  test_numpy_builtins();
  test_errors();
  test_limits();
  test_python_fixtures();
  test_atlas_conformance();
  ds_arena_free(&g_arena);
  return check_exit();
}
