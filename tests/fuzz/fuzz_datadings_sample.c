/* fuzz_datadings_sample.c - libFuzzer harness for the datadings sample
 * decoder (src/decoders/msgpack_value.c) without the file reader.
 *
 * Input: the bytes of one sample, exactly as datadings_sample() hands them
 * to the vtab (the corpus is seeded with real samples cut out of the
 * fixtures by their .offsets files, see run.sh). Per input:
 *   eager: ds_msgpack_parse into a doc reused across inputs (as a cursor
 *   does), ds_msgpack_to_value of the root into a reused arena,
 *   ds_value_json of the result, ds_msgpack_field lookups ("key", the root
 *   map's first str key, a name that is absent) and ds_msgpack_to_value of
 *   what they find;
 *   lazy (what the vtab does): ds_msgpack_scan into a second reused doc,
 *   ds_msgpack_get_field of the same names, then ds_msgpack_get_root, each
 *   converted and compared with the eager result; and again with a want
 *   list ("key" and the first key, as the vtab after its first row), where
 *   the scan may stop early and an unwanted name or the root must then
 *   find what lies past the stop.
 * Every byte of every TEXT/BYTES/NDARRAY value is touched so that ASan sees
 * a pointer outside the input or the arena. Contract checks (abort =
 * finding):
 *   - a failing call sets a non-empty *err;
 *   - parsing is prefix-free: when p[0..n) parses, p[0..n-1) must not
 *     (a sample is exactly one object; the reader relies on this to
 *     report trailing bytes and truncation);
 *   - a fresh doc parses and converts to the same JSON as the reused one
 *     (no state leaks from one sample into the next), for inputs < 4 KiB;
 *   - TEXT values are valid UTF-8 (the parser checks every str), and the
 *     JSON text is accepted by SQLite's json_valid() when it is < 1 MiB;
 *   - the field lookup returns the first entry with that str key;
 *   - scan accepts what parse accepts, and rejects what parse rejects
 *     except for invalid UTF-8 (which the lazy form checks per converted
 *     str); on a sample parse accepts, get_field finds the same fields and
 *     get_root + conversion give the same JSON as the eager path.
 *
 * Build: make fuzz. Run: tests/fuzz/run.sh SECONDS. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/value.h"
#include "core/value_json.h"
#include "decoders/msgpack_value.h"

#include "fuzz_limits.h"

#define CHECK_FRESH_MAX 4096
#define JSON_VALID_MAX (1u << 20)

static ds_msgpack_doc g_doc, g_fresh_doc, g_lazy, g_want;
static ds_arena g_arena, g_fresh_arena, g_lazy_arena;
static sqlite3 *g_db;
static sqlite3_stmt *g_json_valid;
static int g_ready;

#define FUZZ_HARNESS "fuzz_datadings_sample"
#include "fuzz_common.h"
/* The contract broken, with an optional detail; expect_err names the call. */
#define fail(what, detail) fuzz_fail("%s%s%s", (what), (detail) ? ": " : "", \
                                     (detail) ? (const char *)(detail) : "")
#define expect_err(err, what) \
  fuzz_expect_err((err), "error without a message: %s", (what))
#define touch fuzz_touch

static void cleanup(void) {
  ds_msgpack_doc_free(&g_doc);
  ds_msgpack_doc_free(&g_fresh_doc);
  ds_msgpack_doc_free(&g_lazy);
  ds_msgpack_doc_free(&g_want);
  ds_arena_free(&g_arena);
  ds_arena_free(&g_fresh_arena);
  ds_arena_free(&g_lazy_arena);
  sqlite3_finalize(g_json_valid);
  sqlite3_close(g_db);
}

static void setup(void) {
  if (g_ready) return;
  g_ready = 1;
  ds_msgpack_doc_init(&g_doc);
  ds_msgpack_doc_init(&g_fresh_doc);
  ds_msgpack_doc_init(&g_lazy);
  ds_msgpack_doc_init(&g_want);
  if (sqlite3_open(":memory:", &g_db) != SQLITE_OK ||
      sqlite3_prepare_v2(g_db, "SELECT json_valid(?)", -1, &g_json_valid, NULL) != SQLITE_OK)
    fail("cannot prepare json_valid", sqlite3_errmsg(g_db));
  atexit(cleanup);
}

/* Walk a value tree, touching every byte it points to. */
static void walk(const ds_value *v, int depth) {
  if (depth > DS_VALUE_MAX_DEPTH + 10) fail("value tree deeper than any limit", NULL);
  switch (v->type) {
    case DS_V_TEXT:
      if (v->u.s.n && !v->u.s.p) fail("TEXT with a length but no bytes", NULL);
      touch(v->u.s.p, v->u.s.n);
      if (!ds_utf8_valid(v->u.s.p, v->u.s.n)) fail("TEXT value is not UTF-8", NULL);
      break;
    case DS_V_BIGINT:
    case DS_V_BYTES:
    case DS_V_NDARRAY:
      if (v->u.s.n && !v->u.s.p) fail("bytes value with a length but no bytes", NULL);
      touch(v->u.s.p, v->u.s.n);
      break;
    case DS_V_LIST:
    case DS_V_TUPLE:
    case DS_V_SET:
      for (size_t i = 0; i < v->u.list.n; i++) walk(&v->u.list.items[i], depth + 1);
      break;
    case DS_V_MAP:
      for (size_t i = 0; i < 2 * v->u.list.n; i++) walk(&v->u.list.items[i], depth + 1);
      break;
    default:
      break;
  }
}

/* JSON of the root of a parsed doc, or -1 (error freed). */
static int root_json(ds_msgpack_doc *d, ds_arena *a, ds_buf *out) {
  char *err = NULL;
  ds_value v;
  if (ds_msgpack_to_value(&d->root, a, &v, &err)) {
    expect_err(&err, "ds_msgpack_to_value");
    return -1;
  }
  walk(&v, 0);
  if (ds_value_json_capped(out, &v, FUZZ_JSON_CAP, NULL, &err)) {
    expect_err(&err, "ds_value_json");
    return -1;
  }
  return 0;
}

/* Look `name` up and check it against a scan of the root map. */
static void field(const char *name, size_t n) {
  const msgpack_object *got = ds_msgpack_field(&g_doc, name, n);
  const msgpack_object *want = NULL;
  if (g_doc.root.type == MSGPACK_OBJECT_MAP) {
    const msgpack_object_map *m = &g_doc.root.via.map;
    for (uint32_t i = 0; i < m->size && !want; i++) {
      const msgpack_object *k = &m->ptr[i].key;
      if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
          (n == 0 || memcmp(k->via.str.ptr, name, n) == 0))
        want = &m->ptr[i].val;
    }
  }
  if (got != want) fail("ds_msgpack_field is not the first entry with that key", name);
  if (!got) return;
  char *err = NULL;
  ds_value v;
  if (ds_msgpack_to_value(got, &g_arena, &v, &err)) {
    expect_err(&err, "field ds_msgpack_to_value");
    return;
  }
  walk(&v, 0);
  ds_buf j = {0};
  if (ds_value_json_capped(&j, &v, FUZZ_JSON_CAP, NULL, &err)) expect_err(&err, "field ds_value_json");
  else touch(j.data, j.len);
  ds_buf_free(&j);
}

/* Convert o and render it as JSON into out: 0, or -1 (error freed). */
static int obj_json(const msgpack_object *o, ds_arena *a, ds_buf *out, const char *what) {
  char *err = NULL;
  ds_value v;
  if (ds_msgpack_to_value(o, a, &v, &err)) {
    expect_err(&err, what);
    return -1;
  }
  walk(&v, 0);
  if (ds_value_json_capped(out, &v, FUZZ_JSON_CAP, NULL, &err)) {
    expect_err(&err, what);
    return -1;
  }
  touch(out->data, out->len);
  return 0;
}

static int same_json(int rc1, const ds_buf *a, int rc2, const ds_buf *b) {
  if (rc1 != rc2) return 0;
  return rc1 != 0 || (a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0));
}

/* Lazy lookup of `name`; with eager (parse accepted the sample) the
 * result must match ds_msgpack_field's. */
static void lazy_field(ds_msgpack_doc *d, const char *name, size_t n, int eager) {
  const msgpack_object *o = NULL;
  char *err = NULL;
  int f = ds_msgpack_get_field(d, name, n, &o, &err);
  if (f < 0) {
    expect_err(&err, "ds_msgpack_get_field");
    if (eager) fail("get_field fails on a sample that parse accepts", name);
    return;
  }
  free(err);
  if (f != 0 && f != 1) fail("get_field returned neither -1, 0 nor 1", name);
  if (f == 1 && !o) fail("get_field found a field but gave no object", name);
  ds_buf lj = {0}, ej = {0};
  int lrc = f == 1 ? obj_json(o, &g_lazy_arena, &lj, "lazy field conversion") : -1;
  if (eager) {
    const msgpack_object *e = ds_msgpack_field(&g_doc, name, n);
    if ((e != NULL) != (f == 1)) fail("get_field and ds_msgpack_field disagree on presence", name);
    int erc = e ? obj_json(e, &g_arena, &ej, "eager field conversion") : -1;
    if (!same_json(lrc, &lj, erc, &ej)) fail("lazy and eager field values differ", name);
  }
  ds_buf_free(&lj);
  ds_buf_free(&ej);
}

/* The lazy path of the vtab on the same bytes. prc: the eager parse's
 * result; utf8_only: it failed for invalid UTF-8; jrc/json: the eager
 * root conversion. */
static void lazy(const uint8_t *data, size_t size, int prc, int utf8_only, int jrc,
                 const ds_buf *json, const char *first_key, size_t first_len) {
  char *err = NULL;
  ds_arena_reset(&g_lazy_arena);
  if (ds_msgpack_scan(&g_lazy, data, size, &err)) {
    expect_err(&err, "ds_msgpack_scan");
    if (prc == 0) fail("scan rejects a sample that parse accepts", NULL);
    return;
  }
  free(err);
  err = NULL;
  if (prc != 0 && !utf8_only) fail("scan accepts a sample that parse rejects (not for UTF-8)", NULL);
  int eager = prc == 0;
  lazy_field(&g_lazy, "key", 3, eager);
  if (first_key) lazy_field(&g_lazy, first_key, first_len, eager);
  lazy_field(&g_lazy, "no such field \x01", 15, eager);
  const msgpack_object *root = NULL;
  if (ds_msgpack_get_root(&g_lazy, &root, &err)) {
    expect_err(&err, "ds_msgpack_get_root");
    if (eager) fail("get_root fails on a sample that parse accepts", NULL);
    return;
  }
  if (!root) fail("get_root gave no object", NULL);
  ds_buf lj = {0};
  int lrc = obj_json(root, &g_lazy_arena, &lj, "lazy root conversion");
  if (eager && !same_json(lrc, &lj, jrc, json)) fail("lazy and eager root conversions differ", NULL);
  /* a field after the root was unpacked still answers the same */
  lazy_field(&g_lazy, "key", 3, eager);
  ds_buf_free(&lj);
}

/* The lazy path with a want list ("key" and the first key), as the vtab
 * scans after its first row: the scan may stop after the wanted fields,
 * so what lies past them is judged only when something else is asked
 * for. Arguments as for lazy(). */
static void lazy_want(const uint8_t *data, size_t size, int prc, int utf8_only,
                      int jrc, const ds_buf *json, const char *first_key,
                      size_t first_len) {
  const char *names[2] = {"key", first_key};
  size_t lens[2] = {3, first_len};
  char *err = NULL;
  ds_msgpack_want(&g_want, names, lens, first_key ? 2 : 1);
  ds_arena_reset(&g_lazy_arena);
  int eager = prc == 0, strict = prc != 0 && !utf8_only;
  if (ds_msgpack_scan(&g_want, data, size, &err)) {
    expect_err(&err, "want scan");
    if (eager) fail("a want scan rejects a sample that parse accepts", NULL);
  } else {
    free(err);
    err = NULL;
    if (strict && !g_want.partial)
      fail("a want scan that walked everything accepts what parse rejects", NULL);
    lazy_field(&g_want, "key", 3, eager);
    if (first_key) lazy_field(&g_want, first_key, first_len, eager);
    const msgpack_object *o = NULL;
    /* an unwanted name walks the rest: a stopped scan's bad tail shows now */
    int f = ds_msgpack_get_field(&g_want, "no such field \x01", 15, &o, &err);
    if (f < 0) expect_err(&err, "want scan, unwanted field");
    free(err);
    err = NULL;
    if (strict && f >= 0) fail("an unwanted field past a bad tail was answered", NULL);
    if (eager && f != (ds_msgpack_field(&g_doc, "no such field \x01", 15) != NULL))
      fail("the unwanted field lookup disagrees with ds_msgpack_field", NULL);
    if (ds_msgpack_get_root(&g_want, &o, &err)) {
      expect_err(&err, "want scan, get_root");
      if (eager) fail("get_root after a want scan fails on a sample parse accepts", NULL);
    } else {
      if (strict) fail("get_root after a want scan accepts what parse rejects", NULL);
      ds_buf lj = {0};
      int lrc = obj_json(o, &g_lazy_arena, &lj, "want root conversion");
      if (eager && !same_json(lrc, &lj, jrc, json))
        fail("want-scan and eager root conversions differ", NULL);
      ds_buf_free(&lj);
    }
  }
  ds_msgpack_want(&g_want, NULL, NULL, 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  char *err = NULL;
  ds_arena_reset(&g_arena);
  ds_buf json = {0};
  int jrc = -1;
  char first_key[257];
  size_t first_len = 0;
  int have_first = 0;
  int prc = ds_msgpack_parse(&g_doc, data, size, &err);
  int utf8_only = 0;
  if (prc) {
    if (!err || !*err) fail("error without a message", "ds_msgpack_parse");
    utf8_only = strstr(err, "UTF-8") != NULL;
    free(err);
    err = NULL;
    lazy(data, size, prc, utf8_only, jrc, &json, NULL, 0);
    lazy_want(data, size, prc, utf8_only, jrc, &json, NULL, 0);
    return 0;
  }
  free(err); /* tolerated on success, but must not leak */
  err = NULL;

  jrc = root_json(&g_doc, &g_arena, &json);
  if (jrc == 0) {
    touch(json.data, json.len);
    if (json.len < JSON_VALID_MAX) {
      sqlite3_reset(g_json_valid);
      sqlite3_bind_text(g_json_valid, 1, json.len ? (const char *)json.data : "",
                        (int)json.len, SQLITE_STATIC);
      if (sqlite3_step(g_json_valid) != SQLITE_ROW ||
          sqlite3_column_int(g_json_valid, 0) != 1) {
        fprintf(stderr, "%.*s\n", (int)(json.len > 2000 ? 2000 : json.len),
                (const char *)json.data);
        fail("ds_value_json gave text that json_valid() rejects", NULL);
      }
      sqlite3_reset(g_json_valid);
    }
  }

  /* the same bytes through a fresh doc and arena give the same answer */
  if (size < CHECK_FRESH_MAX) {
    ds_msgpack_doc_free(&g_fresh_doc);
    ds_arena_free(&g_fresh_arena);
    if (ds_msgpack_parse(&g_fresh_doc, data, size, &err))
      fail("a fresh doc rejects what the reused doc parsed", err);
    ds_buf j2 = {0};
    int rc2 = root_json(&g_fresh_doc, &g_fresh_arena, &j2);
    if (rc2 != jrc || (jrc == 0 && (j2.len != json.len ||
                                    (json.len && memcmp(j2.data, json.data, json.len)))))
      fail("a fresh doc converts differently from the reused doc", NULL);
    ds_buf_free(&j2);
  }

  /* field lookups: "key", the first str key of the root, an absent name */
  field("key", 3);
  if (g_doc.root.type == MSGPACK_OBJECT_MAP && g_doc.root.via.map.size > 0) {
    const msgpack_object *k = &g_doc.root.via.map.ptr[0].key;
    if (k->type == MSGPACK_OBJECT_STR && k->via.str.size < 256) {
      if (k->via.str.size) memcpy(first_key, k->via.str.ptr, k->via.str.size);
      first_len = k->via.str.size;
      first_key[first_len] = 0; /* for messages only; the length is passed */
      have_first = 1;
      field(first_key, first_len);
    }
  }
  field("no such field \x01", 15);

  /* prefix-free: one byte less is never a complete object */
  if (size > 0) {
    ds_msgpack_doc d;
    ds_msgpack_doc_init(&d);
    if (ds_msgpack_parse(&d, data, size - 1, &err) == 0)
      fail("a proper prefix of a sample also parses", NULL);
    expect_err(&err, "prefix parse");
    ds_msgpack_doc_free(&d);
  }

  /* field() converted into g_arena; the eager root JSON is kept in json */
  lazy(data, size, prc, utf8_only, jrc, &json, have_first ? first_key : NULL, first_len);
  lazy_want(data, size, prc, utf8_only, jrc, &json, have_first ? first_key : NULL, first_len);
  ds_buf_free(&json);
  return 0;
}
