/* test_msgpack_value.c - unit tests of decoders/msgpack_value.c:
 *   1. hand-made msgpack bytes for every type and every parse error
 *      (truncation, trailing bytes, 0xc1, bad UTF-8, hostile counts and
 *      lengths, nesting), ds_msgpack_field, and msgpack-numpy maps built
 *      with msgpack-c's packer (ndarrays, structured dtypes, scalars of
 *      every dtype, Python complex repr shapes, maps that stay maps);
 *   2. conformance: every sample of every dataset in
 *      tests/fixtures/upstream/datadings is cut out with the .offsets file
 *      (the legacy .index for `legacy`), parsed, converted and compared
 *      value by value with the upstream reader's expected/<name>.json
 *      (typed JSON: $int, $bytes_b64, $map, $complex, $npscalar, $ndarray);
 *   3. robustness: every proper prefix of real samples must be reported as
 *      truncated, and byte mutations must never crash (run under ASan). */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixture.h"
#include "core/npy.h"
#include "decoders/msgpack_value.h"

#define FIX "tests/fixtures/upstream/datadings/"
#define PICKLE_MSG "object array (kind O): "

static ds_msgpack_doc g_doc;
static ds_arena g_arena;

/* ------------------------------------------------------------ helpers */

/* Bytes from hex text (spaces allowed) into a static buffer. */
static const uint8_t *unhex(const char *h, size_t *n) {
  static uint8_t buf[8192];
  size_t k = 0;
  int hi = -1;
  for (; *h; h++) {
    int d = *h >= '0' && *h <= '9' ? *h - '0'
          : *h >= 'a' && *h <= 'f' ? *h - 'a' + 10
          : *h >= 'A' && *h <= 'F' ? *h - 'A' + 10 : -1;
    if (d < 0) continue;
    if (hi < 0) hi = d;
    else { buf[k++] = (uint8_t)(hi << 4 | d); hi = -1; }
  }
  *n = k;
  return buf;
}

/* Parse and convert p[0..n): 0, or -1 with *err (freed by the caller). */
static int conv_bytes(const uint8_t *p, size_t n, ds_value *v, char **err) {
  ds_arena_reset(&g_arena);
  if (ds_msgpack_parse(&g_doc, p, n, err)) return -1;
  return ds_msgpack_to_value(&g_doc.root, &g_arena, v, err);
}

/* conv_bytes on hex text. */
static int conv_hex(const char *h, ds_value *v, char **err) {
  size_t n;
  const uint8_t *p = unhex(h, &n);
  return conv_bytes(p, n, v, err);
}

/* The error text of converting hex h ("" when it succeeded). */
static const char *hex_err(const char *h) {
  static char msg[512];
  char *err = NULL;
  ds_value v;
  msg[0] = 0;
  if (conv_hex(h, &v, &err)) snprintf(msg, sizeof msg, "%s", err ? err : "(null)");
  free(err);
  return msg;
}

/* Convert hex h, expecting success; the value (zeroed on failure). */
static ds_value hex_val(const char *h) {
  ds_value v;
  char *err = NULL;
  if (conv_hex(h, &v, &err)) {
    check_note("    unexpected error for %s: %s\n", h, err);
    memset(&v, 0, sizeof v);
    v.type = (ds_vtype)-1;
  }
  free(err);
  return v;
}

/* 1 when v is TEXT/BYTES of type t holding s[0..n). */
static int is_bytes(const ds_value *v, ds_vtype t, const void *s, size_t n) {
  return v->type == t && v->u.s.n == n && v->u.s.p &&
         (n == 0 || memcmp(v->u.s.p, s, n) == 0);
}

/* Two doubles equal bit for bit in meaning: NaN == NaN, -0.0 != 0.0. */
static int same_double(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  return a == b && signbit(a) == signbit(b);
}

/* ------------------------------------------------- msgpack-c packing */

/* A packer writing into one reusable sbuffer. */
static msgpack_sbuffer g_sb;
static msgpack_packer g_pk;

/* Start a new packed message. */
static msgpack_packer *pk_begin(void) {
  msgpack_sbuffer_clear(&g_sb);
  msgpack_packer_init(&g_pk, &g_sb, msgpack_sbuffer_write);
  return &g_pk;
}

/* Pack a str. */
static void pk_str(msgpack_packer *pk, const char *s) {
  msgpack_pack_str_with_body(pk, s, strlen(s));
}

/* Pack a bin of n bytes. */
static void pk_binn(msgpack_packer *pk, const void *p, size_t n) {
  msgpack_pack_bin_with_body(pk, p, n);
}

/* Pack a bin holding a C string. */
static void pk_bin(msgpack_packer *pk, const char *s) { pk_binn(pk, s, strlen(s)); }

/* Convert what was packed since pk_begin. */
static int pk_conv(ds_value *v, char **err) {
  return conv_bytes((const uint8_t *)g_sb.data, g_sb.size, v, err);
}

/* A numpy scalar map {nd: false, type, data}. */
static int np_scalar(const char *dtype, const void *data, size_t n, ds_value *v,
                     char **err) {
  msgpack_packer *pk = pk_begin();
  msgpack_pack_map(pk, 3);
  pk_bin(pk, "nd");
  msgpack_pack_false(pk);
  pk_bin(pk, "type");
  pk_str(pk, dtype);
  pk_bin(pk, "data");
  pk_binn(pk, data, n);
  return pk_conv(v, err);
}

/* A Python complex map {complex: true, data: text}. */
static int py_complex(const char *text, ds_value *v, char **err) {
  msgpack_packer *pk = pk_begin();
  msgpack_pack_map(pk, 2);
  pk_bin(pk, "complex");
  msgpack_pack_true(pk);
  pk_bin(pk, "data");
  pk_str(pk, text);
  return pk_conv(v, err);
}

/* Pack a descr field [name, type] with an optional one-dim shape. */
static void pk_field(msgpack_packer *pk, const char *name, const char *type,
                     int dim) {
  msgpack_pack_array(pk, dim ? 3 : 2);
  pk_str(pk, name);
  pk_str(pk, type);
  if (dim) {
    msgpack_pack_array(pk, 1);
    msgpack_pack_int(pk, dim);
  }
}

/* Begin an ndarray map {nd: true, type: <caller packs>, ...}: packs the map
 * header, nd and the `type` key; the caller packs the type value next and
 * then calls nd_finish. */
static msgpack_packer *nd_begin(int entries) {
  msgpack_packer *pk = pk_begin();
  msgpack_pack_map(pk, (size_t)entries);
  pk_bin(pk, "nd");
  msgpack_pack_true(pk);
  pk_bin(pk, "type");
  return pk;
}

/* The rest of an ndarray map: kind, a 1-d shape, data. */
static void nd_finish(msgpack_packer *pk, const char *kind, int dim0,
                      const void *data, size_t n) {
  pk_bin(pk, "kind");
  pk_bin(pk, kind);
  pk_bin(pk, "shape");
  msgpack_pack_array(pk, 1);
  msgpack_pack_int(pk, dim0);
  pk_bin(pk, "data");
  pk_binn(pk, data, n);
}

/* ------------------------------------------------ 1. hand-made bytes */

/* nil, bool and every integer encoding. */
static void test_ints(void) {
  ds_value v;
  CHECK(hex_val("c0").type == DS_V_NULL);
  v = hex_val("c3"); CHECK(v.type == DS_V_BOOL && v.u.i == 1);
  v = hex_val("c2"); CHECK(v.type == DS_V_BOOL && v.u.i == 0);
  v = hex_val("00"); CHECK(v.type == DS_V_INT && v.u.i == 0);
  v = hex_val("7f"); CHECK(v.type == DS_V_INT && v.u.i == 127);
  v = hex_val("ff"); CHECK(v.type == DS_V_INT && v.u.i == -1);
  v = hex_val("e0"); CHECK(v.type == DS_V_INT && v.u.i == -32);
  v = hex_val("ccff"); CHECK(v.type == DS_V_INT && v.u.i == 255);
  v = hex_val("cd0100"); CHECK(v.type == DS_V_INT && v.u.i == 256);
  v = hex_val("ce00010000"); CHECK(v.type == DS_V_INT && v.u.i == 65536);
  v = hex_val("cf0000000100000000"); CHECK(v.type == DS_V_INT && v.u.i == 4294967296LL);
  v = hex_val("cf7fffffffffffffff"); CHECK(v.type == DS_V_INT && v.u.i == INT64_MAX);
  v = hex_val("cf8000000000000000");
  CHECK(v.type == DS_V_UINT && v.u.u == (uint64_t)INT64_MAX + 1);
  v = hex_val("cfffffffffffffffff"); CHECK(v.type == DS_V_UINT && v.u.u == UINT64_MAX);
  v = hex_val("d080"); CHECK(v.type == DS_V_INT && v.u.i == -128);
  v = hex_val("d005"); CHECK(v.type == DS_V_INT && v.u.i == 5);
  v = hex_val("d1ff00"); CHECK(v.type == DS_V_INT && v.u.i == -256);
  v = hex_val("d2ffff0000"); CHECK(v.type == DS_V_INT && v.u.i == -65536);
  v = hex_val("d3ffffffff00000000"); CHECK(v.type == DS_V_INT && v.u.i == -4294967296LL);
  v = hex_val("d38000000000000000"); CHECK(v.type == DS_V_INT && v.u.i == INT64_MIN);
}

/* float32, float64 and their special values. */
static void test_floats(void) {
  ds_value v;
  v = hex_val("ca3fc00000"); CHECK(v.type == DS_V_FLOAT && v.u.f == 1.5);
  v = hex_val("ca3dcccccd"); CHECK(v.type == DS_V_FLOAT && v.u.f == (double)0.1f);
  v = hex_val("ca7f800000"); CHECK(v.type == DS_V_FLOAT && isinf(v.u.f) && v.u.f > 0);
  v = hex_val("cb400921fb54442d18"); CHECK(v.type == DS_V_FLOAT && v.u.f == 3.141592653589793);
  v = hex_val("cb8000000000000000"); CHECK(v.type == DS_V_FLOAT && v.u.f == 0 && signbit(v.u.f));
  v = hex_val("cb7ff8000000000000"); CHECK(v.type == DS_V_FLOAT && isnan(v.u.f));
  v = hex_val("cbfff0000000000000"); CHECK(v.type == DS_V_FLOAT && isinf(v.u.f) && v.u.f < 0);
  v = hex_val("cb0000000000000001"); CHECK(v.type == DS_V_FLOAT && v.u.f == 5e-324);
}

/* str and bin in every width, empty ones, embedded NUL. */
static void test_str_bin(void) {
  ds_value v;
  v = hex_val("a3616263"); CHECK(is_bytes(&v, DS_V_TEXT, "abc", 3));
  v = hex_val("a0"); CHECK(is_bytes(&v, DS_V_TEXT, "", 0));
  v = hex_val("a3610062"); CHECK(is_bytes(&v, DS_V_TEXT, "a\0b", 3));
  v = hex_val("d903616263"); CHECK(is_bytes(&v, DS_V_TEXT, "abc", 3));
  v = hex_val("da0003616263"); CHECK(is_bytes(&v, DS_V_TEXT, "abc", 3));
  v = hex_val("db00000003616263"); CHECK(is_bytes(&v, DS_V_TEXT, "abc", 3));
  v = hex_val("a4f09f9880"); CHECK(is_bytes(&v, DS_V_TEXT, "\xf0\x9f\x98\x80", 4));
  v = hex_val("c403010203"); CHECK(is_bytes(&v, DS_V_BYTES, "\1\2\3", 3));
  v = hex_val("c400"); CHECK(is_bytes(&v, DS_V_BYTES, "", 0));
  v = hex_val("c4021f80"); CHECK(is_bytes(&v, DS_V_BYTES, "\x1f\x80", 2));
  v = hex_val("c50002ffff"); CHECK(is_bytes(&v, DS_V_BYTES, "\xff\xff", 2));
  v = hex_val("c60000000100"); CHECK(is_bytes(&v, DS_V_BYTES, "\0", 1));
  /* a 300-byte str16 */
  char h[2 * 310 + 1] = "da012c";
  for (int i = 0; i < 300; i++) strcat(h, "78");
  v = hex_val(h);
  CHECK(v.type == DS_V_TEXT && v.u.s.n == 300 && v.u.s.p[299] == 'x');
}

/* arrays and maps in every width, nesting, non-str keys. */
static void test_containers(void) {
  ds_value v;
  v = hex_val("93 01 a161 c0");
  CHECK(v.type == DS_V_LIST && v.u.list.n == 3 && v.u.list.items[0].u.i == 1 &&
        is_bytes(&v.u.list.items[1], DS_V_TEXT, "a", 1) &&
        v.u.list.items[2].type == DS_V_NULL);
  v = hex_val("90"); CHECK(v.type == DS_V_LIST && v.u.list.n == 0);
  v = hex_val("dc0002 c3 c2"); CHECK(v.type == DS_V_LIST && v.u.list.n == 2);
  v = hex_val("dd00000001 c0"); CHECK(v.type == DS_V_LIST && v.u.list.n == 1);
  v = hex_val("82 a162 01 a161 02");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 2 &&
        is_bytes(&v.u.list.items[0], DS_V_TEXT, "b", 1) &&
        v.u.list.items[1].u.i == 1 && is_bytes(&v.u.list.items[2], DS_V_TEXT, "a", 1));
  v = hex_val("80"); CHECK(v.type == DS_V_MAP && v.u.list.n == 0);
  v = hex_val("de0001 a161 90"); CHECK(v.type == DS_V_MAP && v.u.list.n == 1);
  v = hex_val("df00000002 01 a3 6f6e65 ff c0");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 2 && v.u.list.items[0].type == DS_V_INT &&
        v.u.list.items[2].u.i == -1 && v.u.list.items[3].type == DS_V_NULL);
  /* keys of any type, converted too: bin key, nil key, array key */
  v = hex_val("83 c40161 01 c0 02 9101 03");
  CHECK(v.type == DS_V_MAP && v.u.list.items[0].type == DS_V_BYTES &&
        v.u.list.items[2].type == DS_V_NULL && v.u.list.items[4].type == DS_V_LIST);
  /* duplicate keys stay, in file order */
  v = hex_val("82 a161 01 a161 02");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 2 && v.u.list.items[3].u.i == 2);
  v = hex_val("91 91 91 81 a161 90");
  CHECK(v.type == DS_V_LIST && v.u.list.items[0].u.list.items[0].type == DS_V_LIST);
  /* an array16 of 1000 nils */
  static char big[3000 * 2 + 16];
  strcpy(big, "dc03e8");
  for (int i = 0; i < 1000; i++) strcat(big, "c0");
  v = hex_val(big);
  CHECK(v.type == DS_V_LIST && v.u.list.n == 1000 &&
        v.u.list.items[999].type == DS_V_NULL);
  /* the zone's first chunk grew to hold it, so the next parse reuses it */
  CHECK(g_doc.zone_ready && g_doc.zone.chunk_size >= 1000 * sizeof(msgpack_object));
}

/* n nested one-element arrays around a nil, as hex. */
static const char *nested_hex(int n, const char *inner) {
  static char h[2 * 1100 + 64];
  h[0] = 0;
  for (int i = 0; i < n && i < 1100; i++) strcat(h, "91");
  strcat(h, inner);
  return h;
}

/* ext types parse but have no value mapping; nesting limits. */
static void test_ext_and_depth(void) {
  size_t n;
  const uint8_t *p = unhex("d40501", &n);
  char *err = NULL;
  CHECK(ds_msgpack_parse(&g_doc, p, n, &err) == 0);
  CHECK(g_doc.root.type == MSGPACK_OBJECT_EXT);
  CHECK_CONTAINS(hex_err("d40501"), "ext type 5 (1 bytes)");
  CHECK_CONTAINS(hex_err("c70205 0102"), "ext type 5 (2 bytes)");
  CHECK_CONTAINS(hex_err("d8ff 00112233445566778899aabbccddeeff"), "ext type -1");
  CHECK_CONTAINS(hex_err("c9 00000001 07 00"), "ext type 7");
  CHECK_CONTAINS(hex_err("91 d6ff 00000000"), "ext type -1");
  /* msgpack-c's parser holds 32 open containers */
  ds_value v = hex_val(nested_hex(32, "c0"));
  CHECK(v.type == DS_V_LIST);
  CHECK_STR(hex_err(nested_hex(31, "90")), "");
  CHECK_STR(hex_err(nested_hex(32, "90")),
            "msgpack containers nested deeper than 32 levels at byte 32 "
            "(the limit of msgpack-c)");
  CHECK_CONTAINS(hex_err(nested_hex(33, "c0")), "nested deeper than 32 levels");
  CHECK_CONTAINS(hex_err(nested_hex(1000, "c0")), "nested deeper than 32 levels");
  /* wide but shallow is fine: [[], [], ...] */
  CHECK_STR(hex_err("94 90 90 90 80"), "");
  free(err);
}

/* Every parse error, with its exact text. */
static void test_errors(void) {
  CHECK_STR(hex_err(""), "msgpack object truncated (needs more than 0 bytes)");
  CHECK_STR(hex_err("c0c0"), "1 bytes after the msgpack object at byte 1");
  CHECK_STR(hex_err("92 01 02 03 04 05"), "3 bytes after the msgpack object at byte 3");
  CHECK_STR(hex_err("cd01"), "msgpack object truncated (needs more than 2 bytes)");
  CHECK_STR(hex_err("cb00"), "msgpack object truncated (needs more than 2 bytes)");
  CHECK_STR(hex_err("da00"), "msgpack object truncated (needs more than 2 bytes)");
  CHECK_STR(hex_err("a3 6162"), "msgpack object truncated (needs more than 3 bytes)");
  CHECK_STR(hex_err("93 01 02"), "msgpack object truncated (needs more than 3 bytes)");
  CHECK_STR(hex_err("81 a161"), "msgpack object truncated (needs more than 3 bytes)");
  CHECK_STR(hex_err("9f"), "msgpack object truncated (needs more than 1 bytes)");
  CHECK_STR(hex_err("d4"), "msgpack object truncated (needs more than 1 bytes)");
  CHECK_STR(hex_err("c1"), "invalid msgpack byte 0xc1 at byte 0");
  CHECK_STR(hex_err("93 01 02 c1"), "invalid msgpack byte 0xc1 at byte 3");
  CHECK_STR(hex_err("81 c1 01"), "invalid msgpack byte 0xc1 at byte 1");
  /* strict UTF-8 in str (not in bin) */
  CHECK_STR(hex_err("a2 c328"), "invalid UTF-8 in the msgpack str at byte 0");
  CHECK_STR(hex_err("92 01 a1ff"), "invalid UTF-8 in the msgpack str at byte 2");
  CHECK_CONTAINS(hex_err("a3 eda080"), "invalid UTF-8");   /* surrogate */
  CHECK_CONTAINS(hex_err("a2 c0af"), "invalid UTF-8");     /* overlong */
  CHECK_CONTAINS(hex_err("a4 f4908080"), "invalid UTF-8"); /* > U+10FFFF */
  CHECK_CONTAINS(hex_err("a1 80"), "invalid UTF-8");
  CHECK_CONTAINS(hex_err("81 a1fe 01"), "invalid UTF-8");  /* keys too */
  CHECK_STR(hex_err("c401ff"), "");
  /* counts and lengths the bytes cannot hold: no huge allocation first */
  const char *trunc10 = "msgpack object truncated (needs more than 10 bytes)";
  CHECK_STR(hex_err("dd ffffffff 0000000000"), trunc10);
  CHECK_STR(hex_err("df ffffffff 0000000000"), trunc10);
  CHECK_STR(hex_err("db ffffffff 4141414141"), trunc10);
  CHECK_STR(hex_err("c6 ffffffff 4141414141"), trunc10);
  CHECK_STR(hex_err("c9 ffffffff 0141414141"), trunc10);
  CHECK_STR(hex_err("dc ffff c0c0c0c0c0c0c0"), trunc10);
  CHECK_STR(hex_err("de 0005 c0c0c0c0c0c0c0"), trunc10); /* 10 elements, 7 bytes */
  /* nested claims together exceed the input */
  CHECK_STR(hex_err("92 dd 00000004 c0 c0 c0"),
            "msgpack object truncated (needs more than 9 bytes)");
  CHECK_STR(hex_err("95 9f 9f 9f 9f 9f"),
            "msgpack object truncated (needs more than 6 bytes)");
  /* after a failed parse the root is nil, and a good parse still works */
  CHECK(g_doc.root.type == MSGPACK_OBJECT_NIL);
  CHECK(hex_val("05").u.i == 5);
}

/* ds_msgpack_field: str keys of a map root, byte-exact, first match. */
static void test_field(void) {
  size_t n;
  char *err = NULL;
  const uint8_t *p = unhex("85 c4036b6579 01 a36b6579 a161 a2 6b65 02 a36b6579 a162 "
                           "a0 03", &n);
  CHECK(ds_msgpack_parse(&g_doc, p, n, &err) == 0);
  const msgpack_object *o = ds_msgpack_field(&g_doc, "key", 3);
  CHECK(o && o->type == MSGPACK_OBJECT_STR && o->via.str.size == 1 &&
        o->via.str.ptr[0] == 'a');
  o = ds_msgpack_field(&g_doc, "ke", 2);
  CHECK(o && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER && o->via.u64 == 2);
  o = ds_msgpack_field(&g_doc, "", 0);
  CHECK(o && o->via.u64 == 3);
  CHECK(ds_msgpack_field(&g_doc, "k", 1) == NULL);
  CHECK(ds_msgpack_field(&g_doc, "KEY", 3) == NULL);
  CHECK(ds_msgpack_field(&g_doc, "key\0", 4) == NULL);
  p = unhex("81 a4 6b00 6579 07", &n); /* key with an embedded NUL */
  CHECK(ds_msgpack_parse(&g_doc, p, n, &err) == 0);
  o = ds_msgpack_field(&g_doc, "k\0ey", 4);
  CHECK(o && o->via.u64 == 7);
  p = unhex("92 a36b6579 01", &n);
  CHECK(ds_msgpack_parse(&g_doc, p, n, &err) == 0);
  CHECK(ds_msgpack_field(&g_doc, "key", 3) == NULL);
  free(err);
}

/* ds_msgpack_map_entry: one map, its first str "key" entry, no unpacking. */
static void test_map_entry(void) {
  size_t n;
  char *err = NULL;
  int is_map, found;
  msgpack_object v;
  /* bin "key" first (not a str key), then "key": "a", a nested map, "key": "b" */
  const uint8_t *p = unhex("84 c4036b6579 01 a36b6579 a161 a1 78 81 a1 79 92 01 02 "
                           "a36b6579 a162", &n);
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == 0);
  CHECK(is_map && found && v.type == MSGPACK_OBJECT_STR && v.via.str.size == 1 &&
        v.via.str.ptr[0] == 'a');
  CHECK(ds_msgpack_map_entry(p, n, "x", 1, &is_map, &found, &v, &err) == 0);
  CHECK(found && v.type == MSGPACK_OBJECT_MAP); /* a container: its type only */
  CHECK(ds_msgpack_map_entry(p, n, "k", 1, &is_map, &found, &v, &err) == 0 && !found);
  CHECK(ds_msgpack_map_entry(p, n - 1, "key", 3, &is_map, &found, &v, &err) == -1);
  CHECK_CONTAINS(err, "truncated");
  free(err);
  err = NULL;
  p = unhex("81 a36b6579 a161 c0", &n); /* a trailing byte */
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == -1);
  CHECK_CONTAINS(err, "1 bytes after the msgpack object at byte 7");
  free(err);
  err = NULL;
  p = unhex("81 a2 ff fe 01", &n); /* a str key that is not UTF-8 */
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == -1);
  CHECK_CONTAINS(err, "invalid UTF-8");
  free(err);
  err = NULL;
  p = unhex("92 a36b6579 01", &n); /* an array */
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == 0);
  CHECK(!is_map && !found);
  p = unhex("80", &n);
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == 0);
  CHECK(is_map && !found);
  p = unhex("c1", &n);
  CHECK(ds_msgpack_map_entry(p, n, "key", 3, &is_map, &found, &v, &err) == -1);
  free(err);
}

/* ------------------------------------------------- msgpack-numpy maps */

/* Parse the .npy blob of an NDARRAY value (0 ok). */
static int npy_of(const ds_value *v, ds_npy *a) {
  char *err = NULL;
  if (v->type != DS_V_NDARRAY) return -1;
  int rc = ds_npy_parse(v->u.s.p, v->u.s.n, a, &err);
  if (rc) check_note("    npy: %s\n", err);
  free(err);
  return rc;
}

/* The ndarray example of datadings.md 3.1 and its variants. */
static void test_ndarray(void) {
  ds_value v;
  ds_npy a;
  v = hex_val("85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
              "c40573686170659102 c40464617461 c40401000200");
  CHECK(npy_of(&v, &a) == 0);
  CHECK_STR(a.descr, "<i2");
  CHECK(a.ndim == 1 && a.shape[0] == 2 && a.data_len == 4 &&
        memcmp(a.data, "\1\0\2\0", 4) == 0 && !a.fortran_order);
  CHECK((a.data - v.u.s.p) % 64 == 0); /* numpy's 64-byte aligned header */
  /* very old files: no kind entry */
  v = hex_val("84 c4026e64 c3 c40474797065 a37c7531 "
              "c405736861706592 0201 c40464617461 c4020102");
  CHECK(npy_of(&v, &a) == 0 && a.ndim == 2 && a.shape[0] == 2 && a.shape[1] == 1);
  CHECK_STR(a.descr, "|u1");
  /* 0-d, and a zero dimension */
  v = hex_val("85 c4026e64 c3 c40474797065 a33e6638 c4046b696e64 c400 "
              "c405736861706590 c40464617461 c408 3ff0000000000000");
  CHECK(npy_of(&v, &a) == 0 && a.ndim == 0 && a.count == 1);
  CHECK_STR(a.descr, ">f8");
  v = hex_val("85 c4026e64 c3 c40474797065 a33c6634 c4046b696e64 c400 "
              "c40573686170659203 00 c40464617461 c400");
  CHECK(npy_of(&v, &a) == 0 && a.count == 0 && a.data_len == 0);
  /* data length must match exactly */
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
                         "c40573686170659102 c40464617461 c403010002"),
                 "array data has 3 bytes, fewer than dtype <i2 and the shape need");
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
                         "c40573686170659102 c40464617461 c405 0100020003"),
                 "array data has 5 bytes");
  /* bad entries are errors */
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a33c7834 c4046b696e64 c400 "
                         "c40573686170659101 c40464617461 c40401000200"),
                 "unsupported dtype");
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
                         "c405736861706591ff c40464617461 c40401000200"),
                 "shape is not a list of non-negative integers");
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a37c4f38 c4046b696e64 c400 "
                         "c40573686170659101 c40464617461 c408 0000000000000000"),
                 "object dtype");
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
                         "c40573686170659101 c40464617461 a2 0100"),
                 "array data is not bin");
  /* shape dimensions that overflow */
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 a37c7531 c4046b696e64 c400 "
                         "c4057368617065 92 cf4000000000000000 04 c40464617461 c400"),
                 "too large");
  /* a required entry missing: the map stays a map */
  v = hex_val("84 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
              "c40464617461 c40401000200");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 4 && v.u.list.items[0].type == DS_V_BYTES);
  /* keys must be exactly bin "nd": "ndx" and "n" do not trigger */
  v = hex_val("85 c4036e6478 c3 c40474797065 a33c6932 c4046b696e64 c400 "
              "c40573686170659102 c40464617461 c40401000200");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 5);
  v = hex_val("85 c4016e c3 c40474797065 a33c6932 c4046b696e64 c400 "
              "c40573686170659102 c40464617461 c40401000200");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 5);
  /* str keys do not trigger */
  v = hex_val("85 a26e64 c3 a474797065 a33c6932 a46b696e64 c400 "
              "a573686170659102 a464617461 c40401000200");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 5);
  /* kind O: the data is a pickle; a truncated one is an error that says so */
  CHECK_CONTAINS(hex_err("85 c4026e64 c3 c40474797065 9192a0a27c4f c4046b696e64 c4014f "
                         "c40573686170659101 c40464617461 c4 02 8003"),
                 "msgpack-numpy: " PICKLE_MSG);
  v = hex_val("84 c4026e64 c3 c40474797065 9192a0a27c4f c4046b696e64 c4014f "
              "c40573686170659101");
  CHECK(v.type == DS_V_MAP); /* no data: stays a map */
  /* arrays inside containers */
  v = hex_val("91 81 a161 85 c4026e64 c3 c40474797065 a33c6932 c4046b696e64 c400 "
              "c40573686170659102 c40464617461 c40401000200");
  CHECK(v.type == DS_V_LIST && v.u.list.items[0].type == DS_V_MAP &&
        v.u.list.items[0].u.list.items[1].type == DS_V_NDARRAY);
}

/* Structured dtypes: the descr list rendered as numpy's repr. */
static void test_structured(void) {
  ds_value v;
  ds_npy a;
  char *err = NULL;
  uint8_t rec[32] = {1, 0, 0, 0};
  msgpack_packer *pk = nd_begin(5);
  msgpack_pack_array(pk, 2);
  pk_field(pk, "a", "<i4", 0);
  pk_field(pk, "b", "<f8", 2);
  nd_finish(pk, "V", 1, rec, 20);
  CHECK(pk_conv(&v, &err) == 0 && npy_of(&v, &a) == 0);
  CHECK_STR(a.descr, "[('a', '<i4'), ('b', '<f8', (2,))]");
  CHECK(a.structured && a.itemsize == 20 && a.count == 1);
  /* nested record */
  pk = nd_begin(5);
  msgpack_pack_array(pk, 2);
  msgpack_pack_array(pk, 2);
  pk_str(pk, "p");
  msgpack_pack_array(pk, 2);
  pk_field(pk, "x", "<f4", 0);
  pk_field(pk, "y", "<f4", 0);
  pk_field(pk, "n", "|u1", 0);
  nd_finish(pk, "V", 2, rec, 18);
  CHECK(pk_conv(&v, &err) == 0 && npy_of(&v, &a) == 0);
  CHECK_STR(a.descr, "[('p', [('x', '<f4'), ('y', '<f4')]), ('n', '|u1')]");
  CHECK(a.itemsize == 9 && a.count == 2);
  /* names that need quoting, padding fields, a two-dim subarray */
  pk = nd_begin(5);
  msgpack_pack_array(pk, 4);
  pk_field(pk, "it's", "<i2", 0);
  pk_field(pk, "q\"'\\\n", "|u1", 0);
  pk_field(pk, "", "|V1", 0);
  msgpack_pack_array(pk, 3);
  pk_str(pk, "m");
  pk_str(pk, "|u1");
  msgpack_pack_array(pk, 2);
  msgpack_pack_int(pk, 2);
  msgpack_pack_int(pk, 3);
  nd_finish(pk, "V", 1, rec, 10);
  CHECK(pk_conv(&v, &err) == 0 && npy_of(&v, &a) == 0);
  CHECK_STR(a.descr,
            "[(\"it's\", '<i2'), ('q\"\\'\\\\\\n', '|u1'), ('', '|V1'), ('m', '|u1', (2, 3))]");
  CHECK(a.itemsize == 10);
  /* a field title pair */
  pk = nd_begin(5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_array(pk, 2);
  msgpack_pack_array(pk, 2);
  pk_str(pk, "Title");
  pk_str(pk, "t");
  pk_str(pk, "<u2");
  nd_finish(pk, "V", 1, rec, 2);
  CHECK(pk_conv(&v, &err) == 0 && npy_of(&v, &a) == 0);
  CHECK_STR(a.descr, "[(('Title', 't'), '<u2')]");
  /* malformed descr lists */
  pk = nd_begin(5);
  msgpack_pack_array(pk, 1);
  msgpack_pack_array(pk, 1);
  pk_str(pk, "a");
  nd_finish(pk, "V", 1, rec, 4);
  free(err);
  err = NULL;
  CHECK(pk_conv(&v, &err) == -1);
  CHECK_CONTAINS(err, "a field is not [name, type(, shape)]");
  pk = nd_begin(5);
  msgpack_pack_array(pk, 1);
  pk_field(pk, "a", "<i4", 0);
  nd_finish(pk, "V", 1, rec, 5);
  CHECK(pk_conv(&v, &err) == -1);
  CHECK_CONTAINS(err, "array data has 5 bytes");
  /* a descr too long for core/npy.c (255 bytes) */
  pk = nd_begin(5);
  msgpack_pack_array(pk, 30);
  for (int i = 0; i < 30; i++) {
    char name[24];
    snprintf(name, sizeof name, "field%02d", i);
    pk_field(pk, name, "|u1", 0);
  }
  nd_finish(pk, "V", 1, rec, 30);
  CHECK(pk_conv(&v, &err) == -1);
  CHECK_CONTAINS(err, "longer than 255 bytes");
  free(err);
}

/* numpy scalars of every dtype kind and byte order. */
static void test_scalars(void) {
  ds_value v;
  char *err = NULL;
  v = hex_val("83 c4026e64 c2 c40474797065 a33c6634 c40464617461 c4040000c03f");
  CHECK(v.type == DS_V_FLOAT && v.u.f == 1.5);
  CHECK(np_scalar("<f2", "\x00\x3e", 2, &v, &err) == 0 && v.type == DS_V_FLOAT && v.u.f == 1.5);
  CHECK(np_scalar("<f2", "\x01\x00", 2, &v, &err) == 0 && v.u.f == ldexp(1, -24));
  CHECK(np_scalar("<f2", "\xff\x7b", 2, &v, &err) == 0 && v.u.f == 65504.0);
  CHECK(np_scalar("<f2", "\x00\x7c", 2, &v, &err) == 0 && isinf(v.u.f) && v.u.f > 0);
  CHECK(np_scalar("<f2", "\x00\xfc", 2, &v, &err) == 0 && isinf(v.u.f) && v.u.f < 0);
  CHECK(np_scalar("<f2", "\x00\x7e", 2, &v, &err) == 0 && isnan(v.u.f));
  CHECK(np_scalar("<f2", "\x00\x80", 2, &v, &err) == 0 && v.u.f == 0 && signbit(v.u.f));
  CHECK(np_scalar(">f2", "\xc0\x00", 2, &v, &err) == 0 && v.u.f == -2.0);
  CHECK(np_scalar(">f4", "\x3f\xc0\x00\x00", 4, &v, &err) == 0 && v.u.f == 1.5);
  CHECK(np_scalar("<f8", "\0\0\0\0\0\0\xf0\xbf", 8, &v, &err) == 0 && v.u.f == -1.0);
  CHECK(np_scalar(">f8", "\xbf\xf0\0\0\0\0\0\0", 8, &v, &err) == 0 && v.u.f == -1.0);
  CHECK(np_scalar("<i2", "\xfe\xff", 2, &v, &err) == 0 && v.type == DS_V_INT && v.u.i == -2);
  CHECK(np_scalar(">i2", "\xff\xfe", 2, &v, &err) == 0 && v.u.i == -2);
  CHECK(np_scalar("|i1", "\x80", 1, &v, &err) == 0 && v.u.i == -128);
  CHECK(np_scalar("<i4", "\0\0\0\x80", 4, &v, &err) == 0 && v.u.i == INT32_MIN);
  CHECK(np_scalar("<i8", "\0\0\0\0\0\0\0\x80", 8, &v, &err) == 0 && v.u.i == INT64_MIN);
  CHECK(np_scalar("|u1", "\xff", 1, &v, &err) == 0 && v.type == DS_V_INT && v.u.i == 255);
  CHECK(np_scalar("<u4", "\xff\xff\xff\xff", 4, &v, &err) == 0 && v.u.i == 4294967295LL);
  CHECK(np_scalar("<u8", "\xff\xff\xff\xff\xff\xff\xff\x7f", 8, &v, &err) == 0 &&
        v.type == DS_V_INT && v.u.i == INT64_MAX);
  CHECK(np_scalar("<u8", "\xff\xff\xff\xff\xff\xff\xff\xff", 8, &v, &err) == 0 &&
        v.type == DS_V_UINT && v.u.u == UINT64_MAX);
  CHECK(np_scalar("|b1", "\x01", 1, &v, &err) == 0 && v.type == DS_V_BOOL && v.u.i == 1);
  CHECK(np_scalar("|b1", "\x00", 1, &v, &err) == 0 && v.type == DS_V_BOOL && v.u.i == 0);
  CHECK(np_scalar("<c8", "\0\0\x80\x3f\0\0\0\xc0", 8, &v, &err) == 0 &&
        v.type == DS_V_COMPLEX && v.u.c.re == 1.0 && v.u.c.im == -2.0);
  CHECK(np_scalar("<c16", "\0\0\0\0\0\0\x08\x40\0\0\0\0\0\0\x10\x40", 16, &v, &err) == 0 &&
        v.type == DS_V_COMPLEX && v.u.c.re == 3.0 && v.u.c.im == 4.0);
  /* several elements: the first one (np.frombuffer(...)[0]) */
  CHECK(np_scalar("<i2", "\x05\x00\x06\x00", 4, &v, &err) == 0 && v.u.i == 5);
  /* other dtypes through core/npy.c */
  CHECK(np_scalar("<U3", "a\0\0\0b\0\0\0\0\0\0\0", 12, &v, &err) == 0 &&
        is_bytes(&v, DS_V_TEXT, "ab", 2));
  CHECK(np_scalar("|S4", "ab\0\0", 4, &v, &err) == 0 && is_bytes(&v, DS_V_BYTES, "ab", 2));
  CHECK(np_scalar("<M8[s]", "\0\0\0\0\0\0\0\0", 8, &v, &err) == 0 &&
        is_bytes(&v, DS_V_TEXT, "1970-01-01T00:00:00", 19));
  CHECK(np_scalar("<m8[s]", "\x05\0\0\0\0\0\0\0", 8, &v, &err) == 0 &&
        v.type == DS_V_INT && v.u.i == 5);
  CHECK(np_scalar("|V2", "\x01\x02", 2, &v, &err) == 0 && is_bytes(&v, DS_V_BYTES, "\1\2", 2));
  /* errors */
  CHECK(np_scalar("<f4", "\0\0\0", 3, &v, &err) == -1);
  CHECK_STR(err, "msgpack-numpy: numpy scalar of dtype <f4 has 3 data bytes");
  CHECK(np_scalar("<i2", "", 0, &v, &err) == -1);
  CHECK_CONTAINS(err, "has 0 data bytes");
  CHECK(np_scalar("<U2", "a\0\0\0b", 5, &v, &err) == -1);
  CHECK_CONTAINS(err, "has 5 data bytes");
  CHECK(np_scalar("<x4", "\0\0\0\0", 4, &v, &err) == -1);
  CHECK_CONTAINS(err, "unsupported dtype '<x4'");
  CHECK(np_scalar("|O8", "\0\0\0\0\0\0\0\0", 8, &v, &err) == -1);
  CHECK_CONTAINS(err, "object dtype");
  CHECK(np_scalar("<f16", "0123456789abcdef", 16, &v, &err) == -1);
  CHECK_CONTAINS(err, "not supported");
  /* nd present but no type: a plain map; nd = nil: a scalar */
  v = hex_val("82 c4026e64 c2 c40464617461 c4020000");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 2);
  v = hex_val("83 c4026e64 c0 c40474797065 a37c7531 c40464617461 c40107");
  CHECK(v.type == DS_V_INT && v.u.i == 7);
  /* the last of duplicate entries counts, as in a Python dict */
  v = hex_val("84 c4026e64 c3 c4026e64 c2 c40474797065 a37c7531 c40464617461 c40107");
  CHECK(v.type == DS_V_INT && v.u.i == 7);
  free(err);
}

/* One complex repr text: 1 when it parses to (re, im) exactly. */
static int complex_is(const char *text, double re, double im) {
  ds_value v;
  char *err = NULL;
  int rc = py_complex(text, &v, &err);
  int ok = rc == 0 && v.type == DS_V_COMPLEX && same_double(v.u.c.re, re) &&
           same_double(v.u.c.im, im);
  if (!ok) check_note("    %s -> %s (%g, %g)\n", text, err ? err : "", v.u.c.re, v.u.c.im);
  free(err);
  return ok;
}

/* Python complex maps: every repr shape of datadings.md 3.3. */
static void test_complex(void) {
  CHECK(complex_is("(1+2j)", 1, 2));
  CHECK(complex_is("(1.5-2.25j)", 1.5, -2.25));
  CHECK(complex_is("2j", 0, 2));
  CHECK(complex_is("-0j", 0, -0.0));
  CHECK(complex_is("0j", 0, 0));
  CHECK(complex_is("(-0+1j)", -0.0, 1));
  CHECK(complex_is("(-0-0j)", -0.0, -0.0));
  CHECK(complex_is("(nan+infj)", NAN, INFINITY));
  CHECK(complex_is("(-inf-nanj)", -INFINITY, NAN));
  CHECK(complex_is("infj", 0, INFINITY));
  CHECK(complex_is("(1e+300+1e-300j)", 1e300, 1e-300));
  CHECK(complex_is("(-1e-300-1E+300j)", -1e-300, -1e300));
  CHECK(complex_is("(-3+0j)", -3, 0));
  CHECK(complex_is("(5e-324+1.7976931348623157e+308j)", 5e-324, 1.7976931348623157e308));
  CHECK(complex_is("(0.1+.5j)", 0.1, 0.5));
  /* what Python's complex() also takes */
  CHECK(complex_is("j", 0, 1));
  CHECK(complex_is("(1-j)", 1, -1));
  CHECK(complex_is(" ( 2+3J ) ", 2, 3));
  CHECK(complex_is("(3)", 3, 0));
  /* malformed */
  ds_value v;
  char *err = NULL;
  const char *bad[] = {"", "()", "(1+2)", "abc", "(1+2jj)", "1+2j+", "(1++2j)",
                       "(e+1j)", "(1e+j)", "--1j", "(1 + 2j)", "1.2.3j", "(1+2j"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = py_complex(bad[i], &v, &err);
    CHECK_MSG(rc == -1 && strstr(err, "is malformed"), "'%s' gave %d %s", bad[i], rc,
              err ? err : "");
  }
  /* the exported parser, directly */
  double re = 9, im = 9;
  CHECK(ds_msgpack_parse_complex("(1.5-2.25j)", 11, &re, &im) == 0 && re == 1.5 &&
        im == -2.25);
  CHECK(ds_msgpack_parse_complex("-0j", 3, &re, &im) == 0 && re == 0 && !signbit(re) &&
        im == 0 && signbit(im));
  CHECK(ds_msgpack_parse_complex("1\0j", 3, &re, &im) == -1);
  CHECK(ds_msgpack_parse_complex("(1+2j)", 5, &re, &im) == -1); /* cut: "(1+2j" */
  /* data as bin works (msgpack-numpy decodes it); other types do not */
  v = hex_val("82 c407636f6d706c6578 c3 c40464617461 c406 28312b326a29");
  CHECK(v.type == DS_V_COMPLEX && v.u.c.re == 1 && v.u.c.im == 2);
  CHECK_CONTAINS(hex_err("82 c407636f6d706c6578 c3 c40464617461 05"), "not text");
  /* spec example; no data -> map; str key -> map */
  v = hex_val("82 c407636f6d706c6578 c3 c40464617461 a6 28312b326a29");
  CHECK(v.type == DS_V_COMPLEX && v.u.c.re == 1 && v.u.c.im == 2);
  v = hex_val("81 c407636f6d706c6578 c3");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 1);
  v = hex_val("82 a7636f6d706c6578 c3 a464617461 a6 28312b326a29");
  CHECK(v.type == DS_V_MAP && v.u.list.n == 2);
  /* nd wins over complex */
  v = hex_val("84 c407636f6d706c6578 c3 c4026e64 c2 c40474797065 a37c7531 "
              "c40464617461 c40109");
  CHECK(v.type == DS_V_INT && v.u.i == 9);
  free(err);
}

/* ------------------------------------------------------ 2. conformance */

/* Counters of the conformance run. */
static struct {
  size_t samples, values, mismatches, pickle_errors;
} g_st;
static char g_why[1024]; /* first mismatch of the current sample */

/* Record a mismatch at path (keeps the first). */
static int miss(const char *path, const char *what) {
  if (!g_why[0]) snprintf(g_why, sizeof g_why, "%s: %s", path, what);
  return 0;
}

/* Standard base64 (with padding) decoded into a malloc'd buffer. */
static uint8_t *b64_decode(const char *s, size_t *n) {
  size_t len = strlen(s);
  uint8_t *out = malloc(len / 4 * 3 + 3);
  uint32_t acc = 0;
  int bits = 0;
  *n = 0;
  for (size_t i = 0; i < len && s[i] != '='; i++) {
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *c = strchr(tab, s[i]);
    if (!c || !s[i]) continue;
    acc = acc << 6 | (uint32_t)(c - tab);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[(*n)++] = (uint8_t)(acc >> bits);
    }
  }
  return out;
}

/* A fixture float: JSON real, integer, or "NaN"/"Infinity"/"-Infinity". */
static int json_double(const json_t *e, double *d) {
  if (json_is_real(e)) *d = json_real_value(e);
  else if (json_is_integer(e)) *d = (double)json_integer_value(e);
  else if (json_is_string(e) && !strcmp(json_string_value(e), "NaN")) *d = NAN;
  else if (json_is_string(e) && !strcmp(json_string_value(e), "Infinity")) *d = INFINITY;
  else if (json_is_string(e) && !strcmp(json_string_value(e), "-Infinity")) *d = -INFINITY;
  else return 0;
  return 1;
}

static int cmp(const json_t *e, const ds_value *v, const char *path);

/* Python repr of an expected structured descr (JSON list), as our reader
 * should render it (plain names only). */
static void descr_repr(const json_t *d, ds_buf *b) {
  ds_buf_puts(b, "[");
  for (size_t i = 0; i < json_array_size(d); i++) {
    const json_t *f = json_array_get(d, i);
    ds_buf_printf(b, "%s('%s', ", i ? ", " : "", json_string_value(json_array_get(f, 0)));
    const json_t *t = json_array_get(f, 1);
    if (json_is_array(t)) descr_repr(t, b);
    else ds_buf_printf(b, "'%s'", json_string_value(t));
    const json_t *sh = json_array_get(f, 2);
    if (sh) {
      ds_buf_puts(b, ", (");
      for (size_t k = 0; k < json_array_size(sh); k++)
        ds_buf_printf(b, "%s%lld", k ? ", " : "", json_integer_value(json_array_get(sh, k)));
      ds_buf_puts(b, json_array_size(sh) == 1 ? ",)" : ")");
    }
    ds_buf_puts(b, ")");
  }
  ds_buf_puts(b, "]");
}

/* {"$ndarray": {dtype, shape, data_b64[, descr]}} against our .npy. */
static int cmp_ndarray(const json_t *e, const ds_value *v, const char *path) {
  ds_npy a;
  if (v->type != DS_V_NDARRAY) return miss(path, "not an ndarray");
  if (npy_of(v, &a)) return miss(path, "our .npy does not parse");
  const json_t *shape = json_object_get(e, "shape");
  if ((size_t)a.ndim != json_array_size(shape)) return miss(path, "ndim differs");
  for (int k = 0; k < a.ndim; k++)
    if ((json_int_t)a.shape[k] != json_integer_value(json_array_get(shape, (size_t)k)))
      return miss(path, "shape differs");
  const char *dtype = json_string_value(json_object_get(e, "dtype"));
  const json_t *descr = json_object_get(e, "descr");
  if (descr) {
    ds_buf want = {0};
    descr_repr(descr, &want);
    ds_buf_append(&want, "", 1);
    char vn[32];
    snprintf(vn, sizeof vn, "|V%u", a.itemsize);
    int ok = a.structured && !strcmp(vn, dtype) && !strcmp((char *)want.data, a.descr);
    if (!ok) check_note("    descr %s vs %s (%s)\n", a.descr, (char *)want.data, dtype);
    ds_buf_free(&want);
    if (!ok) return miss(path, "structured dtype differs");
  } else if (strcmp(dtype, a.descr)) {
    return miss(path, "dtype differs");
  }
  size_t n;
  uint8_t *data = b64_decode(json_string_value(json_object_get(e, "data_b64")), &n);
  int ok = n == a.data_len && (n == 0 || !memcmp(data, a.data, n)) &&
           a.data + a.data_len == v->u.s.p + v->u.s.n;
  free(data);
  return ok ? 1 : miss(path, "data bytes differ");
}

/* A float or the special strings against a FLOAT value. */
static int cmp_float(const json_t *e, double f, const char *path) {
  double d;
  if (!json_double(e, &d)) return miss(path, "expected no float");
  if (!same_double(d, f)) {
    char m[96];
    snprintf(m, sizeof m, "float %.17g != %.17g", f, d);
    return miss(path, m);
  }
  return 1;
}

/* {"$int": "digits"} against INT/UINT. */
static int cmp_bigint(const json_t *e, const ds_value *v, const char *path) {
  char got[32];
  if (v->type == DS_V_UINT) snprintf(got, sizeof got, "%llu", (unsigned long long)v->u.u);
  else if (v->type == DS_V_INT) snprintf(got, sizeof got, "%lld", (long long)v->u.i);
  else return miss(path, "not an integer");
  return strcmp(got, json_string_value(e)) ? miss(path, "big integer differs") : 1;
}

/* {"$map": [[k, v], ...]} against MAP. */
static int cmp_pairs(const json_t *e, const ds_value *v, const char *path) {
  if (v->type != DS_V_MAP || v->u.list.n != json_array_size(e))
    return miss(path, "map size differs");
  for (size_t i = 0; i < v->u.list.n; i++) {
    const json_t *pair = json_array_get(e, i);
    char p[256];
    snprintf(p, sizeof p, "%s{%zu}", path, i);
    if (!cmp(json_array_get(pair, 0), &v->u.list.items[2 * i], p) ||
        !cmp(json_array_get(pair, 1), &v->u.list.items[2 * i + 1], p))
      return 0;
  }
  return 1;
}

/* A typed object ({"$...": x}); -1 when e is not one. */
static int cmp_typed(const json_t *e, const ds_value *v, const char *path) {
  if (json_object_size(e) != 1) return -1;
  const char *k = json_object_iter_key(json_object_iter((json_t *)e));
  const json_t *x = json_object_iter_value(json_object_iter((json_t *)e));
  if (!strcmp(k, "$int")) return cmp_bigint(x, v, path);
  if (!strcmp(k, "$bytes_b64")) {
    size_t n;
    uint8_t *b = b64_decode(json_string_value(x), &n);
    int ok = is_bytes(v, DS_V_BYTES, b, n);
    free(b);
    return ok ? 1 : miss(path, "bytes differ");
  }
  if (!strcmp(k, "$map")) return cmp_pairs(x, v, path);
  if (!strcmp(k, "$complex")) {
    if (v->type != DS_V_COMPLEX) return miss(path, "not complex");
    return cmp_float(json_array_get(x, 0), v->u.c.re, path) &&
           cmp_float(json_array_get(x, 1), v->u.c.im, path);
  }
  if (!strcmp(k, "$npscalar")) return cmp(json_object_get(x, "value"), v, path);
  if (!strcmp(k, "$ndarray") && json_object_get(x, "items")) { /* object array: a list */
    const json_t *items = json_object_get(x, "items");
    if (v->type != DS_V_LIST || v->u.list.n != json_array_size(items))
      return miss(path, "object array is not a list of its items");
    for (size_t j = 0; j < v->u.list.n; j++)
      if (!cmp(json_array_get(items, j), &v->u.list.items[j], path)) return 0;
    g_st.pickle_errors++;
    return 1;
  }
  if (!strcmp(k, "$ndarray")) return cmp_ndarray(x, v, path);
  return -1;
}

/* A plain JSON object against a MAP with str keys, in order. */
static int cmp_object(const json_t *e, const ds_value *v, const char *path) {
  if (v->type != DS_V_MAP || v->u.list.n != json_object_size(e))
    return miss(path, "object size differs");
  size_t i = 0;
  for (void *it = json_object_iter((json_t *)e); it;
       it = json_object_iter_next((json_t *)e, it), i++) {
    const char *k = json_object_iter_key(it);
    size_t kn = json_object_iter_key_len(it);
    char p[256];
    snprintf(p, sizeof p, "%s.%s", path, k);
    if (!is_bytes(&v->u.list.items[2 * i], DS_V_TEXT, k, kn)) return miss(p, "key differs");
    if (!cmp(json_object_iter_value(it), &v->u.list.items[2 * i + 1], p)) return 0;
  }
  return 1;
}

/* Expected fixture JSON e against our value v; 1 when equal. */
static int cmp(const json_t *e, const ds_value *v, const char *path) {
  g_st.values++;
  if (!e) return miss(path, "nothing expected");
  switch (json_typeof(e)) {
    case JSON_NULL: return v->type == DS_V_NULL ? 1 : miss(path, "not null");
    case JSON_TRUE:
    case JSON_FALSE:
      return v->type == DS_V_BOOL && v->u.i == json_is_true(e) ? 1 : miss(path, "bool");
    case JSON_INTEGER:
      return v->type == DS_V_INT && v->u.i == json_integer_value(e) ? 1
                                                                    : miss(path, "int");
    case JSON_REAL:
      return v->type == DS_V_FLOAT ? cmp_float(e, v->u.f, path) : miss(path, "not float");
    case JSON_STRING:
      if (v->type == DS_V_FLOAT) return cmp_float(e, v->u.f, path);
      return is_bytes(v, DS_V_TEXT, json_string_value(e), json_string_length(e))
                 ? 1 : miss(path, "text differs");
    case JSON_ARRAY:
      if (v->type != DS_V_LIST || v->u.list.n != json_array_size(e))
        return miss(path, "list size differs");
      for (size_t i = 0; i < v->u.list.n; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s[%zu]", path, i);
        if (!cmp(json_array_get(e, i), &v->u.list.items[i], p)) return 0;
      }
      return 1;
    case JSON_OBJECT: {
      int r = cmp_typed(e, v, path);
      return r >= 0 ? r : cmp_object(e, v, path);
    }
  }
  return miss(path, "unknown JSON");
}

/* 1 when expected JSON e holds an object array ($ndarray with items). */
static int has_object_array(const json_t *e) {
  if (json_is_array(e)) {
    for (size_t i = 0; i < json_array_size(e); i++)
      if (has_object_array(json_array_get(e, i))) return 1;
  } else if (json_is_object(e)) {
    const json_t *nd = json_object_get(e, "$ndarray");
    if (nd && json_object_get(nd, "items")) return 1;
    const char *k;
    json_t *x;
    json_object_foreach((json_t *)e, k, x) if (has_object_array(x)) return 1;
  }
  return 0;
}

/* A sample with an object array: each top-level entry on its own; the
 * ones holding the array must give the pickle error. */
static int cmp_entries(const json_t *e, const char *label) {
  const msgpack_object *root = &g_doc.root;
  if (root->type != MSGPACK_OBJECT_MAP || !json_is_object(e))
    return miss(label, "object array sample is not a map");
  for (uint32_t i = 0; i < root->via.map.size; i++) {
    const msgpack_object *k = &root->via.map.ptr[i].key;
    const json_t *x = json_object_getn(e, k->via.str.ptr, k->via.str.size);
    ds_value v;
    char *err = NULL;
    int rc = ds_msgpack_to_value(&root->via.map.ptr[i].val, &g_arena, &v, &err);
    int ok;
    if (has_object_array(x)) { /* decoded by the pickle decoder: a list */
      const json_t *items = json_object_get(json_object_get(x, "$ndarray"), "items");
      ok = rc == 0 && v.type == DS_V_LIST && items && v.u.list.n == json_array_size(items);
      for (size_t j = 0; ok && j < v.u.list.n; j++)
        ok = cmp(json_array_get(items, j), &v.u.list.items[j], label);
      g_st.pickle_errors += ok;
      if (!ok) miss(label, err ? err : "object array differs from upstream's items");
    } else {
      ok = rc == 0 && cmp(x, &v, label);
    }
    free(err);
    if (!ok) return 0;
  }
  return 1;
}

/* One sample's bytes against its expected JSON. */
static int cmp_sample(const uint8_t *p, size_t n, const json_t *e, const char *label) {
  ds_value v;
  char *err = NULL;
  int ok;
  g_why[0] = 0;
  g_st.samples++;
  ds_arena_reset(&g_arena);
  if (ds_msgpack_parse(&g_doc, p, n, &err)) {
    ok = miss(label, err);
  } else if (ds_msgpack_to_value(&g_doc.root, &g_arena, &v, &err)) {
    ok = has_object_array(e) && strstr(err, PICKLE_MSG) ? cmp_entries(e, label)
                                                         : miss(label, err);
  } else {
    ok = cmp(e, &v, label);
  }
  free(err);
  if (!ok) {
    g_st.mismatches++;
    if (g_st.mismatches <= 10) check_note("    mismatch %s\n", g_why);
  }
  return ok;
}

/* n+1 offsets of a data file: from X.offsets (big-endian u64), or from a
 * legacy X.index map (key -> start, file order) plus the data size. */
static uint64_t *load_offsets(const char *data_path, size_t data_size, size_t *n) {
  char path[512];
  size_t len;
  snprintf(path, sizeof path, "%s.offsets", data_path);
  uint8_t *raw = fx_slurp(path, &len);
  uint64_t *off = NULL;
  if (raw) {
    *n = len / 8 - 1;
    off = malloc(len ? len : 8);
    for (size_t i = 0; i < len / 8; i++) {
      off[i] = 0;
      for (int b = 0; b < 8; b++) off[i] = off[i] << 8 | raw[8 * i + (size_t)b];
    }
  } else {
    char *err = NULL;
    snprintf(path, sizeof path, "%s.index", data_path);
    raw = fx_slurp(path, &len);
    if (!raw || ds_msgpack_parse(&g_doc, raw, len, &err) ||
        g_doc.root.type != MSGPACK_OBJECT_MAP) {
      check_note("    no offsets for %s: %s\n", data_path, err ? err : "");
      free(err);
      free(raw);
      return NULL;
    }
    *n = g_doc.root.via.map.size;
    off = malloc((*n + 1) * 8);
    for (size_t i = 0; i < *n; i++) off[i] = g_doc.root.via.map.ptr[i].val.via.u64;
    off[*n] = data_size;
  }
  free(raw);
  return off;
}

/* The samples of one data file, appended at `first` in expected samples. */
static size_t run_file(const char *data_path, const json_t *samples, size_t first,
                       const json_t *exp_offsets, int *bad) {
  size_t dn, n = 0;
  uint8_t *data = fx_slurp(data_path, &dn);
  uint64_t *off = data ? load_offsets(data_path, dn, &n) : NULL;
  if (!off) {
    *bad = 1;
    free(data);
    return 0;
  }
  if (off[n] != dn || off[0] != 0) *bad = 1;
  for (size_t i = 0; exp_offsets && i <= n; i++)
    if ((json_int_t)off[i] != json_integer_value(json_array_get(exp_offsets, i))) *bad = 1;
  for (size_t i = 0; i < n; i++) {
    char label[600];
    snprintf(label, sizeof label, "%s#%zu", data_path, i);
    if (off[i] > off[i + 1] || off[i + 1] > dn) { *bad = 1; break; }
    if (!cmp_sample(data + off[i], off[i + 1] - off[i],
                    json_array_get(samples, first + i), label))
      *bad = 1;
  }
  free(off);
  free(data);
  return n;
}

/* Load expected/<name>.json. */
static json_t *load_expected(const char *name) {
  char path[256];
  json_error_t je;
  snprintf(path, sizeof path, FIX "expected/%s.json", name);
  json_t *j = json_load_file(path, JSON_ALLOW_NUL, &je);
  if (!j) check_note("    %s: %s (line %d)\n", path, je.text, je.line);
  return j;
}

/* One single-file dataset against its expected samples. */
static void run_dataset(const char *name) {
  json_t *exp = load_expected(name);
  CHECK_MSG(exp != NULL, "expected/%s.json", name);
  if (!exp) return;
  char path[256];
  snprintf(path, sizeof path, FIX "%s/%s.msgpack", name, name);
  const json_t *samples = json_object_get(exp, "samples");
  int bad = 0;
  size_t before = g_st.samples;
  size_t n = run_file(path, samples, 0, json_object_get(exp, "offsets"), &bad);
  CHECK_MSG(!bad && n == json_array_size(samples) &&
                (json_int_t)n == json_integer_value(json_object_get(exp, "n")),
            "dataset %s: %zu samples, %zu compared", name, n, g_st.samples - before);
  printf("    %s: %zu samples compared\n", name, g_st.samples - before);
  json_decref(exp);
}

/* The four shards of `sharded`, concatenated. */
static void run_sharded(void) {
  json_t *exp = load_expected("sharded");
  CHECK(exp != NULL);
  if (!exp) return;
  const json_t *samples = json_object_get(exp, "samples");
  size_t total = 0;
  int bad = 0;
  for (int s = 0; s < 4; s++) {
    char path[256];
    snprintf(path, sizeof path, FIX "sharded/part-%05d.msgpack", s);
    size_t n = run_file(path, samples, total, NULL, &bad);
    if ((json_int_t)n != json_integer_value(json_array_get(json_object_get(exp, "shard_sizes"), (size_t)s)))
      bad = 1;
    total += n;
  }
  CHECK_MSG(!bad && total == 15 && total == json_array_size(samples),
            "sharded: %zu samples", total);
  printf("    sharded: %zu samples compared\n", total);
  json_decref(exp);
}

/* `mid`: 20000 samples; `sampled` and `last` from the JSON, the rest from
 * the documented key rule. */
static void run_mid(void) {
  json_t *exp = load_expected("mid");
  CHECK(exp != NULL);
  if (!exp) return;
  size_t n = (size_t)json_integer_value(json_object_get(exp, "n"));
  json_t *samples = json_array();
  for (size_t i = 0; i < n; i++) {
    char key[16];
    snprintf(key, sizeof key, "m%05zu", (i * 7919) % 20000);
    json_array_append_new(samples, json_pack("{s:s, s:I, s:I}", "key", key, "n",
                                             (json_int_t)i, "c", (json_int_t)(i % 10)));
  }
  const json_t *sampled = json_object_get(exp, "sampled");
  size_t from_json = 0;
  for (size_t k = 0; k <= json_array_size(sampled); k++) {
    const json_t *row = k < json_array_size(sampled) ? json_array_get(sampled, k)
                                                     : json_object_get(exp, "last");
    size_t i = (size_t)json_integer_value(json_array_get(row, 0));
    json_t *s = json_array_get(row, 2);
    if (!json_equal(s, json_array_get(samples, i))) check_note("    key rule differs at %zu\n", i);
    json_array_set(samples, i, s);
    from_json++;
  }
  int bad = 0;
  size_t before = g_st.samples;
  size_t got = run_file(FIX "mid/mid.msgpack", samples, 0, NULL, &bad);
  CHECK_MSG(!bad && got == n && n == 20000, "mid: %zu of %zu", got, n);
  printf("    mid: %zu samples compared (%zu of them against sampled/last)\n",
         g_st.samples - before, from_json);
  json_decref(samples);
  json_decref(exp);
}

/* Every dataset of the fixture folder. */
static void test_conformance(void) {
  const char *names[] = {"basic", "hetero", "keys", "empty", "ndarrays", "legacy",
                         "converted", "raw", "salt1"};
  memset(&g_st, 0, sizeof g_st);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) run_dataset(names[i]);
  run_sharded();
  run_mid();
  CHECK_MSG(g_st.mismatches == 0, "%zu mismatching samples", g_st.mismatches);
  CHECK_MSG(g_st.pickle_errors == 1, "%zu object arrays decoded", g_st.pickle_errors);
  printf("    conformance: %zu samples, %zu values compared, %zu mismatches, "
         "%zu object array(s) decoded through the pickle decoder\n",
         g_st.samples, g_st.values, g_st.mismatches, g_st.pickle_errors);
}

/* ------------------------------------------------------ 3. robustness */

/* Parse + convert without looking at the result (must not crash). */
static void poke(const uint8_t *p, size_t n) {
  ds_value v;
  char *err = NULL;
  (void)conv_bytes(p, n, &v, &err);
  free(err);
}

/* Prefixes and byte mutations of the first samples of a data file. */
static void mutate_file(const char *name, size_t max_samples, size_t *prefix_bad,
                        size_t *runs) {
  char path[256];
  size_t dn, n;
  snprintf(path, sizeof path, FIX "%s/%s.msgpack", name, name);
  uint8_t *data = fx_slurp(path, &dn);
  uint64_t *off = data ? load_offsets(path, dn, &n) : NULL;
  static const uint8_t subst[] = {0x00, 0xc1, 0xdd, 0xdf, 0xdb, 0xc6, 0x9f, 0x8f,
                                  0xff, 0xc3, 0xc2, 0xa0, 0xcb};
  for (size_t s = 0; off && s < n && s < max_samples; s++) {
    size_t len = off[s + 1] - off[s];
    uint8_t *buf = malloc(len);
    memcpy(buf, data + off[s], len);
    for (size_t k = 0; k < len; k++) { /* proper prefixes: truncated */
      char *err = NULL;
      uint8_t *cut = malloc(k ? k : 1);
      memcpy(cut, buf, k);
      if (ds_msgpack_parse(&g_doc, cut, k, &err) == 0 || !strstr(err, "truncated"))
        (*prefix_bad)++;
      free(err);
      free(cut);
      (*runs)++;
    }
    for (size_t k = 0; k < len; k++) {
      uint8_t keep = buf[k];
      for (size_t m = 0; m < sizeof subst; m++) {
        buf[k] = subst[m];
        poke(buf, len);
        (*runs)++;
      }
      buf[k] = keep ^ 0x01;
      poke(buf, len);
      buf[k] = keep;
    }
    free(buf);
  }
  free(off);
  free(data);
}

/* Hostile variants of real samples never crash; prefixes are truncated. */
static void test_mutations(void) {
  size_t prefix_bad = 0, runs = 0;
  mutate_file("ndarrays", 41, &prefix_bad, &runs);
  mutate_file("basic", 3, &prefix_bad, &runs);
  mutate_file("hetero", 60, &prefix_bad, &runs);
  mutate_file("raw", 6, &prefix_bad, &runs);
  CHECK_MSG(prefix_bad == 0, "%zu prefixes not reported as truncated", prefix_bad);
  printf("    mutations: %zu parses of cut or mutated samples\n", runs);
}

/* Lazy scans: a scan told which fields a query reads stops after them;
 * other fields, the root and the bytes after them are checked on demand. */
static void test_lazy_want(void) {
  /* {"a": 1, "b": [1, 2], "c": "x"} followed by one stray byte */
  static const uint8_t good[] = {0x83, 0xa1, 'a', 0x01, 0xa1, 'b', 0x92, 0x01, 0x02,
                                 0xa1, 'c', 0xa1, 'x'};
  uint8_t bad[sizeof good + 1];
  memcpy(bad, good, sizeof good);
  bad[sizeof good] = 0xc0;
  static const char *const names[] = {"a"};
  static const size_t lens[] = {1};
  ds_msgpack_doc d;
  ds_msgpack_doc_init(&d);
  char *err = NULL;
  const msgpack_object *o;
  /* without a want list the stray byte is found at once */
  CHECK(ds_msgpack_scan(&d, bad, sizeof bad, &err) == -1);
  CHECK_CONTAINS(err, "1 bytes after the msgpack object");
  ds_msgpack_want(&d, names, lens, 1);
  CHECK(ds_msgpack_scan(&d, bad, sizeof bad, &err) == 0 && d.partial);
  CHECK(ds_msgpack_get_field(&d, "a", 1, &o, &err) == 1 && o->via.u64 == 1);
  /* a field it did not look for: the rest is walked, and the stray byte found */
  CHECK(ds_msgpack_get_field(&d, "c", 1, &o, &err) == -1);
  CHECK_CONTAINS(err, "1 bytes after the msgpack object");
  CHECK(ds_msgpack_scan(&d, bad, sizeof bad, &err) == 0);
  CHECK(ds_msgpack_get_root(&d, &o, &err) == -1);
  CHECK_CONTAINS(err, "1 bytes after the msgpack object");
  /* on good bytes the same calls succeed */
  CHECK(ds_msgpack_scan(&d, good, sizeof good, &err) == 0);
  CHECK(ds_msgpack_get_field(&d, "c", 1, &o, &err) == 1 && o->type == MSGPACK_OBJECT_STR);
  CHECK(ds_msgpack_get_field(&d, "zz", 2, &o, &err) == 0);
  CHECK(ds_msgpack_get_root(&d, &o, &err) == 0 && o->type == MSGPACK_OBJECT_MAP &&
        o->via.map.size == 3);
  ds_msgpack_doc_free(&d);
  free(err);
}

/* 1 when two msgpack-c objects hold the same scalar (str/bin: the same
 * bytes of the same input), or the same kind of container/ext. */
static int same_object(const msgpack_object *a, const msgpack_object *b) {
  if (a->type != b->type) return 0;
  switch (a->type) {
    case MSGPACK_OBJECT_NIL: return 1;
    case MSGPACK_OBJECT_BOOLEAN: return a->via.boolean == b->via.boolean;
    case MSGPACK_OBJECT_POSITIVE_INTEGER: return a->via.u64 == b->via.u64;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: return a->via.i64 == b->via.i64;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: return !memcmp(&a->via.f64, &b->via.f64, sizeof a->via.f64);
    case MSGPACK_OBJECT_STR:
      return a->via.str.size == b->via.str.size &&
             (a->via.str.size == 0 || a->via.str.ptr == b->via.str.ptr);
    case MSGPACK_OBJECT_BIN:
      return a->via.bin.size == b->via.bin.size &&
             (a->via.bin.size == 0 || a->via.bin.ptr == b->via.bin.ptr);
    case MSGPACK_OBJECT_ARRAY: return a->via.array.size == b->via.array.size;
    case MSGPACK_OBJECT_EXT:
      return a->via.ext.type == b->via.ext.type && a->via.ext.size == b->via.ext.size;
    default: return 0;
  }
}

/* Lazy field lookups decode every scalar encoding as msgpack-c does, with
 * and without a want list (the scan then records where the fields are). */
static void test_lazy_scalars(void) {
  static const uint8_t vals[][10] = {
      {1, 0x05}, {1, 0xff}, {1, 0xc0}, {1, 0xc2}, {1, 0xc3},          /* fix, nil, bool */
      {2, 0xcc, 0xff}, {3, 0xcd, 0x12, 0x34},                         /* uint8/16 */
      {5, 0xce, 0x89, 0xab, 0xcd, 0xef},                              /* uint32 */
      {9, 0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},      /* uint64 max */
      {2, 0xd0, 0x80}, {2, 0xd0, 0x05}, {3, 0xd1, 0xff, 0x00},        /* int8/16 */
      {5, 0xd2, 0x80, 0, 0, 0},                                       /* int32 min */
      {9, 0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0},                           /* int64 min */
      {9, 0xd3, 0, 0, 0, 0, 0, 0, 0, 7},                              /* int64 7 */
      {5, 0xca, 0x3f, 0xc0, 0, 0},                                    /* float32 1.5 */
      {9, 0xcb, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, 0x18},      /* float64 pi */
      {5, 0xca, 0x7f, 0xc0, 0, 1},                                    /* float32 NaN */
      {1, 0xa0}, {4, 0xa3, 'a', 'b', 'c'}, {4, 0xd9, 0x02, 'h', 'i'}, /* fixstr, str8 */
      {4, 0xda, 0x00, 0x01, 'z'}, {6, 0xdb, 0, 0, 0, 1, 'q'},         /* str16/32 */
      {2, 0xc4, 0x00}, {4, 0xc4, 0x02, 1, 2}, {4, 0xc5, 0, 1, 9},     /* bin8/16 */
      {6, 0xc6, 0, 0, 0, 1, 8},                                       /* bin32 */
      {2, 0x91, 0x01}, {3, 0xd4, 0x01, 0x02},                         /* array, fixext1 */
  };
  enum { NV = sizeof vals / sizeof vals[0] };
  uint8_t buf[512];
  size_t n = 0;
  buf[n++] = 0xde; /* map16 */
  buf[n++] = 0;
  buf[n++] = NV;
  char names[NV][16];
  const char *want[NV];
  size_t lens[NV];
  for (int i = 0; i < NV; i++) {
    snprintf(names[i], sizeof names[i], "k%02d", i);
    want[i] = names[i];
    lens[i] = 3;
    if (i % 2) { /* odd keys as str8, the others as fixstr */
      buf[n++] = 0xd9;
      buf[n++] = 3;
    } else {
      buf[n++] = 0xa3;
    }
    memcpy(buf + n, names[i], 3);
    n += 3;
    memcpy(buf + n, vals[i] + 1, vals[i][0]);
    n += vals[i][0];
  }
  ds_msgpack_doc eager, lazy;
  ds_msgpack_doc_init(&eager);
  ds_msgpack_doc_init(&lazy);
  char *err = NULL;
  CHECK(ds_msgpack_parse(&eager, buf, n, &err) == 0);
  for (int pass = 0; pass < 3; pass++) {
    /* pass 0: no want list; 1: all fields wanted; 2: only k05 wanted */
    if (pass == 1) ds_msgpack_want(&lazy, want, lens, NV);
    if (pass == 2) ds_msgpack_want(&lazy, want + 5, lens, 1);
    CHECK(ds_msgpack_scan(&lazy, buf, n, &err) == 0);
    CHECK(lazy.partial == (pass == 2));
    for (int i = 0; i < NV; i++) {
      int k = pass == 2 ? (i + 5) % NV : i; /* the wanted one first */
      const msgpack_object *o = NULL, *e = ds_msgpack_field(&eager, names[k], 3);
      int r = ds_msgpack_get_field(&lazy, names[k], 3, &o, &err);
      CHECK_MSG(r == 1 && e && same_object(o, e), "pass %d field %s (type %d)", pass,
                names[k], e ? (int)e->type : -1);
    }
    const msgpack_object *o = NULL;
    CHECK(ds_msgpack_get_field(&lazy, "k99", 3, &o, &err) == 0);
  }
  /* cut inside each field's value: the lazy scan reports truncation */
  ds_msgpack_want(&lazy, NULL, NULL, 0);
  size_t bad = 0;
  for (size_t k = 3; k < n; k++)
    if (ds_msgpack_scan(&lazy, buf, k, &err) == 0 || !strstr(err, "truncated")) bad++;
  CHECK_MSG(bad == 0, "%zu prefixes not reported as truncated", bad);
  /* a str8 key that is not UTF-8 is an error; a wanted field after it is not reached */
  static const uint8_t badkey[] = {0x82, 0xd9, 0x01, 0xff, 0x01, 0xa1, 'a', 0x02};
  static const char *const a_name[] = {"a"};
  static const size_t a_len[] = {1};
  ds_msgpack_want(&lazy, a_name, a_len, 1);
  CHECK(ds_msgpack_scan(&lazy, badkey, sizeof badkey, &err) == -1);
  CHECK_CONTAINS(err, "invalid UTF-8 in the msgpack str at byte 1");
  ds_msgpack_doc_free(&eager);
  ds_msgpack_doc_free(&lazy);
  free(err);
}

int main(void) {
  test_lazy_want();
  test_lazy_scalars();
  ds_msgpack_doc_init(&g_doc);
  msgpack_sbuffer_init(&g_sb);
  test_ints();
  test_floats();
  test_str_bin();
  test_containers();
  test_ext_and_depth();
  test_errors();
  test_field();
  test_map_entry();
  test_ndarray();
  test_structured();
  test_scalars();
  test_complex();
  test_conformance();
  test_mutations();
  ds_msgpack_doc_free(&g_doc);
  ds_arena_free(&g_arena);
  msgpack_sbuffer_destroy(&g_sb);
  return check_exit();
}
