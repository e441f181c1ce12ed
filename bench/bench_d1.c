/* bench_d1.c - benchmark driver for workload D1 (datadings, see
 * shared/BENCHMARK.md).
 *
 *   bench_d1 [--ext PATH] [--runs N] DIR
 *       the full D1 table on DIR/d1.msgpack (written by gen_d1). Yardsticks:
 *       the native table in DIR/d1native.db (created from the datadings
 *       virtual table if missing, with an index on key; while the module
 *       is missing, by the driver's own msgpack-c reader, marked as such
 *       and rebuilt later) and the bare msgpack-c unpacking of the same
 *       samples in memory.
 *   bench_d1 [--ext PATH] --scan-only MSGPACK
 *       one scan of a fresh datadings table over MSGPACK, for peak-RSS
 *       measurement by the caller (/usr/bin/time -f %M).
 *   bench_d1 [--ext PATH] --fresh open|key MSGPACK
 *       (used by the full run) one measurement in a fresh process: `open` =
 *       CREATE VIRTUAL TABLE + read row 0; `key` = the first WHERE key = ?
 *       lookup on a fresh table and the process RSS growth it causes.
 *
 * The timed part is one process and one connection: the native database is
 * the main database, the datadings table is the temp virtual table d1 and
 * `meta` (the join's 10,000 keys) a temp native table. Point and key
 * lookups run inside BEGIN..COMMIT. PATH defaults to build/datasets (run
 * from the repo root). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <msgpack.h>

#include "bench_common.h"

#define LOOKUPS 100000
#define JOIN_KEYS 10000
#define POINT_SEED UINT64_C(0xD1D1D1D1)
#define KEY_SEED UINT64_C(0xD1C0FFEE)
#define JOIN_SEED UINT64_C(0xD1501E)
#define NPY_HEADER 64

static volatile unsigned g_sink;

static int usage(void);

typedef char keybuf[24];

typedef struct d1_ctx {
  sqlite3 *db;
  uint8_t *data; /* d1.msgpack in memory */
  uint64_t size;
  uint64_t *offs; /* n + 1 start offsets */
  uint64_t n;
  msgpack_zone *zone;
  int64_t *rowids;        /* point lookups */
  keybuf *present, *absent; /* key lookups */
} d1_ctx;

/* ---- files in memory ---- */

/* The data file and its offsets (datadings.md section 4), checked. */
static int load_dataset(d1_ctx *c, const char *path) {
  char opath[4200];
  uint64_t osize = 0;
  snprintf(opath, sizeof opath, "%s.offsets", path);
  c->data = bench_read_file(path, &c->size);
  uint8_t *raw = bench_read_file(opath, &osize);
  if (!c->data || !raw || osize < 8 || osize % 8 != 0) {
    fprintf(stderr, "bench_d1: cannot read %s / %s\n", path, opath);
    free(raw);
    return -1;
  }
  c->n = osize / 8 - 1;
  c->offs = malloc(osize);
  for (uint64_t i = 0; c->offs && i <= c->n; i++) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = v << 8 | raw[8 * i + k];
    c->offs[i] = v;
  }
  free(raw);
  if (!c->offs || c->offs[0] != 0 || c->offs[c->n] != c->size) {
    fprintf(stderr, "bench_d1: %s: offsets do not match the data file\n",
            opath);
    return -1;
  }
  return 0;
}

/* ---- bare msgpack-c ---- */

/* Unpack sample i into *o (zero-copy, strings point into c->data). */
static int unpack_sample(d1_ctx *c, uint64_t i, msgpack_object *o) {
  uint64_t start = c->offs[i], end = c->offs[i + 1];
  size_t off = 0;
  if (start > end || end > c->size) return -1;
  msgpack_zone_clear(c->zone);
  msgpack_unpack_return rc = msgpack_unpack((const char *)c->data + start,
                                            end - start, &off, c->zone, o);
  return rc == MSGPACK_UNPACK_SUCCESS ? 0 : -1;
}

/* Value of the str-keyed field `name` of map o, or NULL. */
static const msgpack_object *field(const msgpack_object *o, const char *name) {
  if (o->type != MSGPACK_OBJECT_MAP) return NULL;
  size_t len = strlen(name);
  for (uint32_t k = 0; k < o->via.map.size; k++) {
    const msgpack_object *key = &o->via.map.ptr[k].key;
    if (key->type == MSGPACK_OBJECT_STR && key->via.str.size == len &&
        memcmp(key->via.str.ptr, name, len) == 0)
      return &o->via.map.ptr[k].val;
  }
  return NULL;
}

/* Length of the sample's "text" str (-1 if missing). */
static int64_t text_len(const msgpack_object *o) {
  const msgpack_object *t = field(o, "text");
  return t && t->type == MSGPACK_OBJECT_STR ? (int64_t)t->via.str.size : -1;
}

/* Every sample unpacked from memory, one thread; r0 = count,
 * r1 = sum of text lengths (the scan query's answer). */
static int run_bare(void *ctx, bench_variant *v) {
  d1_ctx *c = ctx;
  int64_t count = 0, sum = 0;
  for (uint64_t i = 0; i < c->n; i++) {
    msgpack_object o;
    int64_t len;
    if (unpack_sample(c, i, &o) != 0 || (len = text_len(&o)) < 0) {
      fprintf(stderr, "bench_d1: bare: sample %llu corrupt\n",
              (unsigned long long)i);
      return -1;
    }
    count++;
    sum += len;
  }
  v->r0 = count;
  v->r1 = sum;
  return 0;
}

/* The same 100,000 random samples as the point workload, unpacked. */
static int run_point_bare(void *ctx, bench_variant *v) {
  d1_ctx *c = ctx;
  int64_t found = 0, bytes = 0;
  for (int k = 0; k < LOOKUPS; k++) {
    msgpack_object o;
    int64_t len;
    if (unpack_sample(c, (uint64_t)c->rowids[k], &o) != 0 ||
        (len = text_len(&o)) < 0)
      return -1;
    found++;
    bytes += len;
  }
  v->r0 = found;
  v->r1 = bytes;
  return 0;
}

/* ---- SQL workloads ---- */

/* 100,000 lookups of the fixed rowid sequence inside BEGIN..COMMIT;
 * r0 = rows found, r1 = text bytes (every text is touched). */
static int run_point(void *ctx, bench_variant *v) {
  d1_ctx *c = ctx;
  return bench_run_point(c->db, v, c->rowids, LOOKUPS);
}

/* 100,000 `WHERE key = ?` lookups inside BEGIN..COMMIT; r0 = rows found,
 * r1 = sum of the labels. */
static int run_keys(d1_ctx *c, bench_variant *v, const keybuf *keys) {
  int64_t found = 0, sum = 0;
  if (bench_exec(c->db, "BEGIN", 0) != 0) return -1;
  for (int k = 0; k < LOOKUPS; k++) {
    sqlite3_bind_text(v->stmt, 1, keys[k], -1, SQLITE_STATIC);
    int rc = sqlite3_step(v->stmt);
    while (rc == SQLITE_ROW) {
      found++;
      sum += sqlite3_column_int64(v->stmt, 0);
      rc = sqlite3_step(v->stmt);
    }
    sqlite3_reset(v->stmt);
    if (rc != SQLITE_DONE) {
      fprintf(stderr, "bench_d1: %s: %s\n", v->name, sqlite3_errmsg(c->db));
      bench_exec(c->db, "COMMIT", 1);
      return -1;
    }
  }
  v->r0 = found;
  v->r1 = sum;
  return bench_exec(c->db, "COMMIT", 0);
}

static int run_present(void *ctx, bench_variant *v) {
  d1_ctx *c = ctx;
  return run_keys(c, v, c->present);
}

static int run_absent(void *ctx, bench_variant *v) {
  d1_ctx *c = ctx;
  return run_keys(c, v, c->absent);
}

/* The join; r0 = groups, r1 = a hash of (tag, count-weighted avg bits).
 * Scores are multiples of 1/1024, so every avg is exact whatever the
 * summation order and the two sides must agree bit for bit. */
static int run_join(void *ctx, bench_variant *v) {
  (void)ctx;
  int64_t rows = 0;
  uint64_t h = 0;
  int rc;
  while ((rc = sqlite3_step(v->stmt)) == SQLITE_ROW) {
    double avg = sqlite3_column_double(v->stmt, 1);
    uint64_t bits;
    memcpy(&bits, &avg, 8);
    h = h * 1000003u + (uint64_t)sqlite3_column_int64(v->stmt, 0);
    h = h * 1000003u + bits;
    rows++;
  }
  sqlite3_reset(v->stmt);
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "bench_d1: %s: %s\n", v->name,
            sqlite3_errmsg(sqlite3_db_handle(v->stmt)));
    return -1;
  }
  v->r0 = rows;
  v->r1 = (int64_t)(h >> 1);
  return 0;
}

/* ---- inputs of the lookups ---- */

static void key_of(keybuf out, char prefix, uint64_t i) {
  snprintf(out, sizeof(keybuf), "%c%07llu", prefix, (unsigned long long)i);
}

static int make_inputs(d1_ctx *c) {
  c->rowids = malloc(sizeof *c->rowids * LOOKUPS);
  c->present = malloc(sizeof *c->present * LOOKUPS);
  c->absent = malloc(sizeof *c->absent * LOOKUPS);
  if (!c->rowids || !c->present || !c->absent) return -1;
  uint64_t sp = POINT_SEED, sk = KEY_SEED;
  for (int k = 0; k < LOOKUPS; k++) {
    c->rowids[k] = (int64_t)(bench_splitmix64(&sp) % c->n);
    key_of(c->present[k], 's', bench_splitmix64(&sk) % c->n);
    key_of(c->absent[k], 'x', bench_splitmix64(&sk) % c->n);
  }
  return 0;
}

/* Expected sum of labels of the present keys (label = i % 1000). */
static int64_t expected_label_sum(const d1_ctx *c) {
  int64_t s = 0;
  for (int k = 0; k < LOOKUPS; k++) s += atoll(c->present[k] + 1) % 1000;
  return s;
}

/* temp.meta: JOIN_KEYS distinct random present keys, tag = i % 10. */
static int make_meta(d1_ctx *c) {
  uint8_t *seen = calloc(c->n / 8 + 1, 1);
  sqlite3_stmt *ins = NULL;
  int rc = seen ? 0 : -1;
  if (rc == 0)
    rc = bench_exec(c->db,
                    "DROP TABLE IF EXISTS temp.meta;"
                    "CREATE TEMP TABLE meta(key TEXT, tag INTEGER)", 0);
  if (rc == 0 && sqlite3_prepare_v2(c->db, "INSERT INTO meta VALUES(?, ?)", -1,
                                    &ins, NULL) != SQLITE_OK)
    rc = -1;
  if (rc == 0) rc = bench_exec(c->db, "BEGIN", 0);
  uint64_t st = JOIN_SEED;
  uint64_t want = c->n < JOIN_KEYS ? c->n : JOIN_KEYS;
  for (uint64_t i = 0; rc == 0 && i < want;) {
    uint64_t g = bench_splitmix64(&st) % c->n;
    if (seen[g / 8] & (1u << (g % 8))) continue;
    seen[g / 8] |= (uint8_t)(1u << (g % 8));
    keybuf k;
    key_of(k, 's', g);
    sqlite3_bind_text(ins, 1, k, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(ins, 2, (int64_t)(i % 10));
    if (sqlite3_step(ins) != SQLITE_DONE) rc = -1;
    sqlite3_reset(ins);
    i++;
  }
  if (rc == 0) rc = bench_exec(c->db, "COMMIT", 0);
  sqlite3_finalize(ins);
  free(seen);
  if (rc != 0) fprintf(stderr, "bench_d1: cannot build temp.meta\n");
  return rc;
}

/* ---- the native yardstick database ---- */

/* Rows in dbpath's d1native and how it was filled ("" when unknown). */
static int64_t native_state(const char *dbpath, char *how, size_t cap) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  how[0] = '\0';
  if (access(dbpath, R_OK) != 0 ||
      sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  if (sqlite3_prepare_v2(db,
                         "SELECT (SELECT count(*) FROM d1native),"
                         " (SELECT filled_by FROM d1native_src)",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    n = sqlite3_column_int64(st, 0);
    const unsigned char *t = sqlite3_column_text(st, 1);
    snprintf(how, cap, "%s", t ? (const char *)t : "");
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Can this build of the extension open the dataset as a virtual table? */
static int have_module(const char *ext, const char *path) {
  sqlite3 *db = NULL;
  char *err = NULL, note[1024];
  int ok = sqlite3_open(":memory:", &db) == SQLITE_OK &&
           bench_load_ext(db, ext, &err) == 0 &&
           bench_create_vtab(db, "probe", "datadings", path, "", note,
                             sizeof note) == 0;
  sqlite3_free(err);
  sqlite3_close(db);
  return ok;
}

/* A .npy v1.0 file of a float32 array [16] (what the extension returns
 * for msgpack-numpy arrays; only used by the fallback fill). */
static size_t make_npy(const msgpack_object *emb, uint8_t *out) {
  const msgpack_object *d = NULL;
  for (uint32_t k = 0; emb->type == MSGPACK_OBJECT_MAP && k < emb->via.map.size;
       k++) {
    const msgpack_object *key = &emb->via.map.ptr[k].key;
    if (key->type == MSGPACK_OBJECT_BIN && key->via.bin.size == 4 &&
        memcmp(key->via.bin.ptr, "data", 4) == 0)
      d = &emb->via.map.ptr[k].val;
  }
  if (!d || d->type != MSGPACK_OBJECT_BIN || d->via.bin.size != 64) return 0;
  char hdr[NPY_HEADER];
  int hl = snprintf(hdr, sizeof hdr,
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }");
  memset(hdr + hl, ' ', sizeof hdr - (size_t)hl);
  memcpy(out, "\x93NUMPY\x01\x00", 8);
  out[8] = NPY_HEADER - 10;
  out[9] = 0;
  memcpy(out + 10, hdr, NPY_HEADER - 10);
  out[NPY_HEADER - 1] = '\n';
  memcpy(out + NPY_HEADER, d->via.bin.ptr, 64);
  return NPY_HEADER + 64;
}

/* Fallback fill from the in-memory samples, used only while the datadings
 * module is missing (marked, and rebuilt once the module exists). */
static int fill_from_memory(d1_ctx *c, sqlite3 *db) {
  sqlite3_stmt *ins = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO d1native VALUES(?, ?, ?, ?, ?, ?)",
                         -1, &ins, NULL) != SQLITE_OK)
    return -1;
  int rc = 0;
  for (uint64_t i = 0; rc == 0 && i < c->n; i++) {
    msgpack_object o;
    uint8_t npy[NPY_HEADER + 64];
    if (unpack_sample(c, i, &o) != 0) {
      rc = -1;
      break;
    }
    const msgpack_object *key = field(&o, "key"), *label = field(&o, "label"),
                         *score = field(&o, "score"), *text = field(&o, "text"),
                         *emb = field(&o, "emb");
    size_t nl = emb ? make_npy(emb, npy) : 0;
    if (!key || !label || !score || !text || !nl ||
        key->type != MSGPACK_OBJECT_STR || text->type != MSGPACK_OBJECT_STR ||
        label->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
        score->type != MSGPACK_OBJECT_FLOAT64) {
      rc = -1;
      break;
    }
    sqlite3_bind_int64(ins, 1, (int64_t)i);
    sqlite3_bind_text(ins, 2, key->via.str.ptr, (int)key->via.str.size,
                      SQLITE_STATIC);
    sqlite3_bind_int64(ins, 3, (int64_t)label->via.u64);
    sqlite3_bind_double(ins, 4, score->via.f64);
    sqlite3_bind_text(ins, 5, text->via.str.ptr, (int)text->via.str.size,
                      SQLITE_STATIC);
    sqlite3_bind_blob(ins, 6, npy, (int)nl, SQLITE_STATIC);
    if (sqlite3_step(ins) != SQLITE_DONE) rc = -1;
    sqlite3_reset(ins);
  }
  sqlite3_finalize(ins);
  return rc;
}

/* Fill d1native from the datadings virtual table, or the fallback. */
static int fill_native(d1_ctx *c, sqlite3 *db, const char *path,
                       const char *ext, const char **how) {
  char *err = NULL, note[1024];
  if (bench_load_ext(db, ext, &err) == 0 &&
      bench_create_vtab(db, "d1", "datadings", path, "", note, sizeof note) ==
          0) {
    if (bench_exec(db,
                   "INSERT INTO d1native SELECT rowid, key, label, score, text,"
                   " emb FROM d1",
                   0) == 0) {
      bench_exec(db, "DROP TABLE temp.d1", 0);
      printf("native table filled from the datadings table over %s\n", path);
      *how = "datadings";
      return 0;
    }
    bench_exec(db, "DELETE FROM d1native", 0);
  } else {
    fprintf(stderr, "bench_d1: datadings table unavailable: %s\n",
            err ? err : note);
  }
  sqlite3_free(err);
  printf("NOTE: datadings module unavailable; native table filled by the "
         "driver's own msgpack-c reader (emb as .npy); rebuilt once the "
         "module exists\n");
  *how = "fallback";
  return fill_from_memory(c, db);
}

/* Create DIR/d1native.db unless it holds every sample and was filled
 * through the module (or the module is still missing). Built in a
 * temporary file and renamed, so an interrupted build leaves nothing. */
static int ensure_native(d1_ctx *c, const char *dbpath, const char *path,
                         const char *ext) {
  char how_now[32];
  if (native_state(dbpath, how_now, sizeof how_now) == (int64_t)c->n &&
      (strcmp(how_now, "datadings") == 0 || !have_module(ext, path)))
    return 0;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", dbpath);
  remove(tmp);
  printf("building %s ...\n", dbpath);
  fflush(stdout);
  sqlite3 *db = NULL;
  const char *how = "";
  int rc = sqlite3_open(tmp, &db) == SQLITE_OK ? 0 : -1;
  if (rc == 0)
    rc = bench_exec(db,
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                    "CREATE TABLE d1native(id INTEGER PRIMARY KEY, key TEXT,"
                    " label INTEGER, score REAL, text TEXT, emb BLOB)",
                    0);
  if (rc == 0) rc = fill_native(c, db, path, ext, &how);
  if (rc == 0)
    rc = bench_exec(db, "CREATE INDEX d1native_key ON d1native(key);"
                        "CREATE TABLE d1native_src(filled_by TEXT)", 0);
  if (rc == 0) {
    char *sql = sqlite3_mprintf("INSERT INTO d1native_src VALUES(%Q); COMMIT",
                                how);
    rc = bench_exec(db, sql, 0);
    sqlite3_free(sql);
  }
  sqlite3_close(db);
  if (rc == 0) rc = rename(tmp, dbpath);
  if (rc != 0) {
    fprintf(stderr, "bench_d1: could not build %s\n", dbpath);
    remove(tmp);
  }
  return rc;
}

/* ---- fresh-process measurements (open, first key lookup) ---- */

/* Read every column of the statement's current row. */
static void touch_row(sqlite3_stmt *st) {
  for (int i = 0; i < sqlite3_column_count(st); i++) {
    const unsigned char *p = sqlite3_column_blob(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (p && n > 0) g_sink += p[0];
  }
}

static int64_t dataset_count(sqlite3 *db, const char *table) {
  char sql[128];
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* RSS figures (KiB) of this process. */
typedef struct rss_now {
  long rss, anon, file;
} rss_now;

static rss_now rss_read(void) {
  rss_now r = {bench_proc_status_kib("VmRSS"), bench_proc_status_kib("RssAnon"),
               bench_proc_status_kib("RssFile")};
  return r;
}

/* CREATE VIRTUAL TABLE temp.<name> + read every column of row 0; 1 if ok. */
static int open_read_row0(sqlite3 *db, const char *name, const char *path,
                          double *create_ms, char *note, size_t cap) {
  char sql[128];
  sqlite3_stmt *st = NULL;
  int ok = 0;
  double t0 = bench_now_ms();
  if (bench_create_vtab(db, name, "datadings", path, "", note, cap) != 0)
    return 0;
  *create_ms = bench_now_ms() - t0;
  snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE rowid = 0", name);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    touch_row(st);
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  return ok;
}

/* One measurement in this (fresh) process; prints one line
 * "ms=... rss_kib=... anon_kib=... file_kib=... n=... ok=... create_ms=...
 * again_ms=... conn_ms=...": the time of the measured step, the RSS growth
 * over it, the dataset size; for `open` also the CREATE part alone, a
 * second open + row 0 of another table in the same connection, and an
 * open + row 0 in a fresh connection (BENCHMARK.md's "open": a new
 * connection, the extension loaded, in this now warm process). */
static int fresh(const char *what, const char *path, const char *ext) {
  sqlite3 *db = NULL;
  char *err = NULL, note[1024] = "";
  int key = strcmp(what, "key") == 0;
  if (!key && strcmp(what, "open") != 0) return usage();
  sqlite3_open(":memory:", &db);
  if (bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "bench_d1: load %s: %s\n", ext, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 1;
  }
  int ok = 0;
  int64_t n = -1;
  double ms = 0, create_ms = 0, again_ms = 0, conn_ms = 0, t0;
  rss_now r0 = rss_read();
  if (!key) {
    t0 = bench_now_ms();
    ok = open_read_row0(db, "t", path, &create_ms, note, sizeof note);
    ms = bench_now_ms() - t0;
    double t1 = bench_now_ms(), unused;
    if (ok) ok = open_read_row0(db, "t2", path, &unused, note, sizeof note);
    again_ms = bench_now_ms() - t1;
    sqlite3_close(db);
    db = NULL;
    sqlite3_open(":memory:", &db);
    if (ok && bench_load_ext(db, ext, &err) == 0) {
      double t2 = bench_now_ms();
      ok = open_read_row0(db, "t3", path, &unused, note, sizeof note);
      conn_ms = bench_now_ms() - t2;
    } else {
      ok = 0;
    }
  } else if (bench_create_vtab(db, "t", "datadings", path, "", note,
                               sizeof note) == 0 &&
             (n = dataset_count(db, "t")) > 0) {
    sqlite3_stmt *st = NULL;
    keybuf k;
    uint64_t g = ((uint64_t)n / 2 + 7) % (uint64_t)n;
    key_of(k, 's', g);
    r0 = rss_read();
    t0 = bench_now_ms();
    if (sqlite3_prepare_v2(db, "SELECT label FROM t WHERE key = ?", -1, &st,
                           NULL) == SQLITE_OK) {
      sqlite3_bind_text(st, 1, k, -1, SQLITE_STATIC);
      ok = sqlite3_step(st) == SQLITE_ROW &&
           sqlite3_column_int64(st, 0) == (int64_t)(g % 1000) &&
           sqlite3_step(st) == SQLITE_DONE;
    }
    sqlite3_finalize(st);
    ms = bench_now_ms() - t0;
  }
  rss_now r1 = rss_read();
  if (!ok)
    fprintf(stderr, "bench_d1: fresh %s failed: %s\n", what,
            note[0] ? note : sqlite3_errmsg(db));
  printf("ms=%.4f rss_kib=%ld anon_kib=%ld file_kib=%ld n=%lld ok=%d "
         "create_ms=%.4f again_ms=%.4f conn_ms=%.4f\n",
         ms, r1.rss - r0.rss, r1.anon - r0.anon, r1.file - r0.file,
         (long long)n, ok, create_ms, again_ms, conn_ms);
  sqlite3_close(db);
  return ok ? 0 : 1;
}

/* Results of the fresh-process runs: min times, max RSS growth (KiB). */
typedef struct fresh_result {
  int ok;
  double ms, create_ms, again_ms, conn_ms;
  long rss_kib, anon_kib, file_kib;
  int64_t n;
} fresh_result;

/* Shell-quote s into out ('...' with ' as '\''). */
static void shell_quote(const char *s, char *out, size_t cap) {
  size_t o = 0;
  if (cap < 3) return;
  out[o++] = '\'';
  for (; *s && o + 6 < cap; s++) {
    if (*s == '\'') {
      memcpy(out + o, "'\\''", 4);
      o += 4;
    } else {
      out[o++] = *s;
    }
  }
  out[o++] = '\'';
  out[o] = '\0';
}

static void keep_min(double *best, double v) {
  if (*best < 0 || v < *best) *best = v;
}

static void keep_max(long *best, long v) {
  if (v > *best) *best = v;
}

/* A warm-up and `runs` runs of `bench_d1 --fresh WHAT PATH`, each in a new
 * process. */
static fresh_result run_fresh(const char *what, const char *path,
                              const char *ext, int runs) {
  fresh_result r = {0, -1, -1, -1, -1, 0, 0, 0, -1};
  char exe[4096], qe[8300], qx[8300], qp[8300], cmd[26000];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (el <= 0) return r;
  exe[el] = '\0';
  shell_quote(exe, qe, sizeof qe);
  shell_quote(ext, qx, sizeof qx);
  shell_quote(path, qp, sizeof qp);
  snprintf(cmd, sizeof cmd, "%s --ext %s --fresh %s %s", qe, qx, what, qp);
  r.ok = 1;
  for (int i = 0; i <= runs && r.ok; i++) {
    FILE *p = popen(cmd, "r");
    char line[512] = "";
    double ms, cms, ams, nms;
    long rss, anon, file;
    long long n;
    int ok = 0;
    if (!p || !fgets(line, sizeof line, p) ||
        sscanf(line,
               "ms=%lf rss_kib=%ld anon_kib=%ld file_kib=%ld n=%lld ok=%d "
               "create_ms=%lf again_ms=%lf conn_ms=%lf",
               &ms, &rss, &anon, &file, &n, &ok, &cms, &ams, &nms) != 9)
      ok = 0;
    if (p && pclose(p) != 0) ok = 0;
    if (!ok) {
      r.ok = 0;
      break;
    }
    if (i == 0) continue; /* warm-up */
    keep_min(&r.ms, ms);
    keep_min(&r.create_ms, cms);
    keep_min(&r.again_ms, ams);
    keep_min(&r.conn_ms, nms);
    keep_max(&r.rss_kib, rss);
    keep_max(&r.anon_kib, anon);
    keep_max(&r.file_kib, file);
    r.n = n;
  }
  return r;
}

/* ---- the full benchmark ---- */

enum {
  V_SNATIVE, V_SD1, V_BARE, V_PNATIVE, V_PD1, V_PBARE, V_KNATIVE, V_KD1,
  V_ANATIVE, V_AD1, V_JNATIVE, V_JD1, V_FLOOR, NV
};

static const char *const SCAN_SQL = "SELECT count(*), sum(length(text)) FROM ";
static const char *const JOIN_SQL =
    "SELECT m.tag, avg(d.score) FROM meta m JOIN %s d ON d.key = m.key "
    "GROUP BY m.tag";

/* The variants over table `t`: side 0 = d1native (the V_*NATIVE slots),
 * side 1 = d1 (the slot after each). */
static void prepare_side(sqlite3 *db, bench_variant *v, const char *t,
                         int side, const char *const names[5]) {
  char sql[256];
  snprintf(sql, sizeof sql, "%s%s", SCAN_SQL, t);
  bench_prepare_variant(db, &v[V_SNATIVE + side], names[0], sql, bench_run_sql);
  snprintf(sql, sizeof sql, "SELECT text FROM %s WHERE rowid = ?", t);
  bench_prepare_variant(db, &v[V_PNATIVE + side], names[1], sql, run_point);
  snprintf(sql, sizeof sql, "SELECT label FROM %s WHERE key = ?", t);
  bench_prepare_variant(db, &v[V_KNATIVE + side], names[2], sql, run_present);
  bench_prepare_variant(db, &v[V_ANATIVE + side], names[3], sql, run_absent);
  snprintf(sql, sizeof sql, JOIN_SQL, t);
  bench_prepare_variant(db, &v[V_JNATIVE + side], names[4], sql, run_join);
}

static void setup_variants(d1_ctx *c, bench_variant *v, int have) {
  static const char *const native[5] = {"scan native", "point native",
                                        "key present native",
                                        "key absent native", "join native"};
  static const char *const d1[5] = {"scan d1", "point d1", "key present d1",
                                    "key absent d1", "join d1"};
  static const int d1_slot[5] = {V_SD1, V_PD1, V_KD1, V_AD1, V_JD1};
  memset(v, 0, sizeof *v * NV);
  prepare_side(c->db, v, "d1native", 0, native);
  if (have) prepare_side(c->db, v, "d1", 1, d1);
  else
    for (int k = 0; k < 5; k++) v[d1_slot[k]].name = d1[k];
  v[V_BARE] = (bench_variant){.name = "bare msgpack-c", .run = run_bare, .ok = 1};
  v[V_PBARE] = (bench_variant){
      .name = "point bare msgpack-c", .run = run_point_bare, .ok = 1};
  char note[512];
  v[V_FLOOR].name = "row floor";
  v[V_FLOOR].run = bench_run_sql;
  bench_row_floor(c->db, (int64_t)c->n, &v[V_FLOOR], note, sizeof note);
  if (note[0]) printf("NOTE: %s\n", note);
}

/* A variant's results against known values (r1 < 0: not checked). */
static int check_known(const bench_variant *v, int64_t r0, int64_t r1) {
  if (!v->ok || (v->r0 == r0 && (r1 < 0 || v->r1 == r1))) return 0;
  printf("!!!!!!!! MISMATCH: %s gave (%lld, %lld), expected (%lld, %lld)\n",
         v->name, (long long)v->r0, (long long)v->r1, (long long)r0,
         (long long)r1);
  return 1;
}

static int check_results(const d1_ctx *c, const bench_variant *v) {
  int64_t n = (int64_t)c->n;
  int bad = 0;
  bad += bench_check_same(&v[V_BARE], &v[V_SNATIVE], 1);
  bad += bench_check_same(&v[V_BARE], &v[V_SD1], 1);
  bad += check_known(&v[V_BARE], n, -1);
  bad += bench_check_same(&v[V_PBARE], &v[V_PNATIVE], 1);
  bad += bench_check_same(&v[V_PBARE], &v[V_PD1], 1);
  bad += check_known(&v[V_KNATIVE], LOOKUPS, expected_label_sum(c));
  bad += check_known(&v[V_KD1], LOOKUPS, expected_label_sum(c));
  bad += check_known(&v[V_ANATIVE], 0, 0);
  bad += check_known(&v[V_AD1], 0, 0);
  bad += check_known(&v[V_JNATIVE], n < 10 ? n : 10, -1);
  bad += bench_check_same(&v[V_JNATIVE], &v[V_JD1], 1);
  bad += check_known(&v[V_FLOOR], n * (n - 1) / 2, -1);
  return bad;
}

/* A row of the table for an absolute figure against a limit. */
static void absolute_row(const char *workload, int ok, double value,
                         const char *unit, double limit, int strict) {
  char o[32] = "n/a", t[64];
  if (ok) snprintf(o, sizeof o, "%.2f", value);
  snprintf(t, sizeof t, "%s %g %s %s", strict ? "<" : "<=", limit, unit,
           !ok ? "n/a"
           : (strict ? value < limit : value <= limit) ? "PASS"
                                                       : "MISS");
  printf("%-46s %10s %10s %7s  %s\n", workload, o, "-", "-", t);
}

static void print_table(const bench_variant *v, const fresh_result *open,
                        const fresh_result *key) {
  printf("\n");
  bench_table_header();
  bench_table_row("scan / native", &v[V_SD1], &v[V_SNATIVE], 1.5);
  bench_table_row("key present 100k, BEGIN..COMMIT / native idx",
                  &v[V_KD1], &v[V_KNATIVE], 1.0);
  bench_table_row("key absent 100k, BEGIN..COMMIT / native idx", &v[V_AD1],
                  &v[V_ANATIVE], 1.5);
  bench_table_row("join 10k keys / native indexed", &v[V_JD1], &v[V_JNATIVE],
                  1.5);
  bench_table_row("point 100k, BEGIN..COMMIT / native", &v[V_PD1],
                  &v[V_PNATIVE], 0);
  bench_table_row("scan / bare msgpack-c", &v[V_SD1], &v[V_BARE], 0);
  bench_table_row("point d1 / bare msgpack-c of the same samples", &v[V_PD1],
                  &v[V_PBARE], 0);
  bench_table_row("scan / vtab row floor", &v[V_SD1], &v[V_FLOOR], 0);
  bench_table_row("scan native / bare msgpack-c", &v[V_SNATIVE], &v[V_BARE],
                  0);
  absolute_row("open: CREATE VIRTUAL TABLE + row 0, fresh connection (ms)", open->ok,
               open->conn_ms, "ms", 1, 1);
  {
    char o[32] = "n/a";
    if (open->ok) snprintf(o, sizeof o, "%.2f", open->ms);
    printf("%-46s %10s %10s %7s  %s\n", "open: the same, first in a fresh process (ms)", o,
           "-", "-", "(info, absolute)");
  }
  absolute_row("first key lookup, fresh table (ms)", key->ok, key->ms, "ms",
               50, 1);
  double per = key->ok && key->n > 0 ? key->rss_kib * 1024.0 / (double)key->n
                                     : 0;
  absolute_row("first key lookup: RSS growth (bytes/sample)", key->ok, per,
               "B", 24, 0);
  if (open->ok)
    printf("  open: CREATE VIRTUAL TABLE alone %.2f ms; a second table + row 0 "
           "in the same process %.2f ms; RSS growth %ld KiB (RssAnon %+ld, "
           "RssFile %+ld)\n",
           open->create_ms, open->again_ms, open->rss_kib, open->anon_kib,
           open->file_kib);
  if (key->ok && key->n > 0)
    printf("  first key lookup RSS growth: %ld KiB = RssAnon %+ld (%.1f "
           "B/sample) + RssFile %+ld (%.1f B/sample) for %lld samples; max "
           "over the runs\n",
           key->rss_kib, key->anon_kib, key->anon_kib * 1024.0 / (double)key->n,
           key->file_kib, key->file_kib * 1024.0 / (double)key->n,
           (long long)key->n);
}

/* EXPLAIN QUERY PLAN of sql, one line per plan row. */
static void print_plan(sqlite3 *db, const char *label, const char *sql) {
  char *q = sqlite3_mprintf("EXPLAIN QUERY PLAN %s", sql);
  sqlite3_stmt *st = NULL;
  printf("query plan, %s:\n", label);
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
    printf("  (%s)\n", sqlite3_errmsg(db));
  while (st && sqlite3_step(st) == SQLITE_ROW)
    printf("  %s\n", (const char *)sqlite3_column_text(st, 3));
  sqlite3_finalize(st);
  sqlite3_free(q);
}

static int open_main(d1_ctx *c, const char *dbpath, const char *ext,
                     const char *path) {
  if (sqlite3_open_v2(dbpath, &c->db, SQLITE_OPEN_READWRITE, NULL) !=
      SQLITE_OK) {
    fprintf(stderr, "bench_d1: open %s: %s\n", dbpath, sqlite3_errmsg(c->db));
    return -1;
  }
  char *err = NULL, note[1024];
  if (bench_load_ext(c->db, ext, &err) != 0) {
    printf("NOTE: extension %s not loaded (%s): d1 rows are n/a\n", ext,
           err ? err : "?");
    sqlite3_free(err);
    return 0;
  }
  if (bench_create_vtab(c->db, "d1", "datadings", path, "", note,
                        sizeof note) != 0) {
    printf("NOTE: no datadings virtual table (%s): d1 rows are n/a\n", note);
    return 0;
  }
  return 1;
}

static int bench_full(d1_ctx *c, const char *dir, const char *ext, int runs) {
  char path[4096], dbpath[4096];
  snprintf(path, sizeof path, "%s/d1.msgpack", dir);
  snprintf(dbpath, sizeof dbpath, "%s/d1native.db", dir);
  if (load_dataset(c, path) != 0 || c->n == 0) return 1;
  if (ensure_native(c, dbpath, path, ext) != 0) return 1;
  if (make_inputs(c) != 0) return 1;
  int have = open_main(c, dbpath, ext, path);
  if (have < 0 || make_meta(c) != 0) return 1;
  printf("D1: %s, %llu samples, %.1f MB; sqlite %s, msgpack-c %s; %d CPUs\n",
         path, (unsigned long long)c->n, (double)c->size / 1e6,
         sqlite3_libversion(), msgpack_version(),
         (int)sysconf(_SC_NPROCESSORS_ONLN));
  char sql[256];
  snprintf(sql, sizeof sql, JOIN_SQL, "d1native");
  print_plan(c->db, "join native", sql);
  if (have) {
    snprintf(sql, sizeof sql, JOIN_SQL, "d1");
    print_plan(c->db, "join d1", sql);
  }
  fflush(stdout);
  bench_variant v[NV];
  setup_variants(c, v, have);
  bench_measure(c, v, NV, runs);
  fresh_result open = {0}, key = {0};
  if (have) {
    open = run_fresh("open", path, ext, runs);
    key = run_fresh("key", path, ext, runs);
  }
  int bad = check_results(c, v);
  bench_print_absolute(v, NV, runs, 22);
  print_table(v, &open, &key);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  for (int i = 0; i < NV; i++) sqlite3_finalize(v[i].stmt);
  return bad ? 3 : 0;
}

/* ---- peak-memory mode: one scan in a fresh process ---- */

static int scan_only(const char *path, const char *ext) {
  char sql[128];
  snprintf(sql, sizeof sql, "%st", SCAN_SQL);
  return bench_scan_only("bench_d1", ext, "datadings", path, "", sql, path);
}

static void free_ctx(d1_ctx *c) {
  if (c->db) sqlite3_close(c->db);
  if (c->zone) msgpack_zone_free(c->zone);
  free(c->data);
  free(c->offs);
  free(c->rowids);
  free(c->present);
  free(c->absent);
}

static int usage(void) {
  fprintf(stderr,
          "usage: bench_d1 [--ext PATH] [--runs N] DIR\n"
          "       bench_d1 [--ext PATH] --scan-only MSGPACK\n"
          "       bench_d1 [--ext PATH] --fresh open|key MSGPACK\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = bench_options(argc, argv, &ext, &runs);
  if (i < argc && strncmp(argv[i], "--", 2) == 0 && strcmp(argv[i], "--scan-only") != 0 &&
      strcmp(argv[i], "--fresh") != 0)
    return usage();
  if (i < argc && strcmp(argv[i], "--scan-only") == 0)
    return i + 2 == argc ? scan_only(argv[i + 1], ext) : usage();
  if (i < argc && strcmp(argv[i], "--fresh") == 0)
    return i + 3 == argc ? fresh(argv[i + 1], argv[i + 2], ext) : usage();
  if (i + 1 != argc || runs < 1) return usage();
  d1_ctx c = {0};
  c.zone = msgpack_zone_new(MSGPACK_ZONE_CHUNK_SIZE);
  int rc = c.zone ? bench_full(&c, argv[i], ext, runs) : 1;
  free_ctx(&c);
  return rc;
}
