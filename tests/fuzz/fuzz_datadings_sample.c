/* fuzz_datadings_sample.c - libFuzzer harness for the datadings sample
 * decoder (src/formats/msgpack_value.c) without the file reader.
 *
 * Input: the bytes of one sample, exactly as datadings_sample() hands them
 * to the vtab (the corpus is seeded with real samples cut out of the
 * fixtures by their .offsets files, see run.sh). Per input:
 *   ds_msgpack_parse into a doc reused across inputs (as a cursor does),
 *   ds_msgpack_to_value of the root into a reused arena, ds_value_json of
 *   the result, ds_msgpack_field lookups ("key", the root map's first str
 *   key, a name that is absent) and ds_msgpack_to_value of what they find.
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
 *   - the field lookup returns the first entry with that str key.
 *
 * Build: make fuzz. Run: tests/fuzz/run.sh SECONDS. */
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/value.h"
#include "formats/msgpack_value.h"

#define CHECK_FRESH_MAX 4096
#define JSON_VALID_MAX (1u << 20)

static ds_msgpack_doc g_doc, g_fresh_doc;
static ds_arena g_arena, g_fresh_arena;
static sqlite3 *g_db;
static sqlite3_stmt *g_json_valid;
static int g_ready;

static void fail(const char *what, const char *detail) {
  fprintf(stderr, "fuzz_datadings_sample: contract violated: %s%s%s\n", what,
          detail ? ": " : "", detail ? detail : "");
  abort();
}

static void cleanup(void) {
  ds_msgpack_doc_free(&g_doc);
  ds_msgpack_doc_free(&g_fresh_doc);
  ds_arena_free(&g_arena);
  ds_arena_free(&g_fresh_arena);
  sqlite3_finalize(g_json_valid);
  sqlite3_close(g_db);
}

static void setup(void) {
  if (g_ready) return;
  g_ready = 1;
  ds_msgpack_doc_init(&g_doc);
  ds_msgpack_doc_init(&g_fresh_doc);
  if (sqlite3_open(":memory:", &g_db) != SQLITE_OK ||
      sqlite3_prepare_v2(g_db, "SELECT json_valid(?)", -1, &g_json_valid, NULL) != SQLITE_OK)
    fail("cannot prepare json_valid", sqlite3_errmsg(g_db));
  atexit(cleanup);
}

/* A failed call must leave a non-empty message; it is freed here. */
static void expect_err(char **err, const char *what) {
  if (!*err || !**err) fail("error without a message", what);
  free(*err);
  *err = NULL;
}

static volatile uint8_t sink;
static void touch(const uint8_t *p, size_t n) {
  uint8_t x = 0;
  for (size_t i = 0; i < n; i++) x ^= p[i];
  sink = x;
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
  if (ds_value_json(out, &v, &err)) {
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
  if (ds_value_json(&j, &v, &err)) expect_err(&err, "field ds_value_json");
  else touch(j.data, j.len);
  ds_buf_free(&j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  char *err = NULL;
  ds_arena_reset(&g_arena);
  if (ds_msgpack_parse(&g_doc, data, size, &err)) {
    expect_err(&err, "ds_msgpack_parse");
    return 0;
  }
  free(err); /* tolerated on success, but must not leak */
  err = NULL;

  ds_buf json = {0};
  int jrc = root_json(&g_doc, &g_arena, &json);
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
  ds_buf_free(&json);

  /* field lookups: "key", the first str key of the root, an absent name */
  field("key", 3);
  if (g_doc.root.type == MSGPACK_OBJECT_MAP && g_doc.root.via.map.size > 0) {
    const msgpack_object *k = &g_doc.root.via.map.ptr[0].key;
    if (k->type == MSGPACK_OBJECT_STR && k->via.str.size < 256) {
      char name[256];
      if (k->via.str.size) memcpy(name, k->via.str.ptr, k->via.str.size);
      field(name, k->via.str.size);
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
  return 0;
}
