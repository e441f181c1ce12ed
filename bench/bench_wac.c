/* bench_wac.c - the writing workloads W-A1 and W-C1 (BENCHMARK.md), one
 * measurement per process so bench/run_w.sh can take peak RSS too.
 *
 *   bench_wac EXT wa1 SRC OUT        copy atlas A1 into a new
 *       shared-dictionary atlas (strategy 2, blocks of 64, level 3,
 *       dict_size 0.01, A1's shard size) by INSERT ... SELECT
 *   bench_wac EXT wa1-bare SRC DICT RUNS   the yardstick: our pickle
 *       encoder alone over A1's examples (already in memory as values) in
 *       blocks of 64 of 8 shards (the copy's blocks); the dictionary
 *       trained on shard 0's pickles with the copy's parameters
 *       (atlas_writer.c's train: ZDICT_optimizeTrainFromBuffer_fastCover,
 *       d=8, steps=4, level 3, dict_size 0.01 of the shard's bytes, the
 *       copy's nbThreads); bare ZSTD_compress_usingCDict of every pickle at
 *       level 3 with that dictionary; prints ms=<enc + train + zstd>
 *       enc=<ms> train=<ms> zstd=<ms>, each the min of RUNS, and
 *       dict_same=1 when the dictionary is byte for byte DICT (the one the
 *       copy wrote)
 *   bench_wac EXT wc1 SRC OUT        copy bcolz C1 into a new ctable of
 *       the same dtypes and chunklen (expectedlen 10,000,000) by INSERT ...
 *       SELECT
 *   bench_wac EXT wc1-bare SRC RUNS  the yardstick: bare single-thread
 *       blosc_compress_ctx (lz4, clevel 5, shuffle, blocksize 0) of every
 *       chunk of C1's five columns, already decompressed in memory; min of
 *       RUNS
 *   bench_wac EXT wc1-floor SRC      the floor SQLite itself puts under the
 *       copy: the same INSERT ... SELECT into a table of this program's
 *       `nullsink` module (declared as the copy's table, an xUpdate that
 *       does nothing)
 *   bench_wac EXT wc1-read SRC       the copy's read alone: SELECT of the
 *       five columns, every value fetched by its sqlite3_column_* call
 * Prints "ms=<time of the work> rows=<n>"; the copies (wa1, wc1) also
 * "commit=<ms> fsync=<ms> nsync=<calls>": each runs as BEGIN; INSERT ...
 * SELECT; COMMIT, ms is the whole, commit the COMMIT alone (the writer's
 * xSync and xCommit: last data out, every file fsynced, published), fsync
 * the time inside fsync/fdatasync during the COMMIT (on any thread) and
 * fsync_all during the whole (bench/sync_clock.c). */
#include <blosc.h>
#include <dirent.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#define ZDICT_STATIC_LINKING_ONLY
#include <zdict.h>

#include "bench_common.h"
#include "bench_sync.h"
#include "decoders/pickle_write.h"

#define A1_COLS "id INTEGER, label INTEGER, score REAL, text TEXT"
#define C1_COLS "id int64, label i4, score f8, flag bool, name S16"

static sqlite3 *open_db_flags(const char *ext, int flags) {
  sqlite3 *db;
  char *err = NULL;
  if (sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | flags,
                      NULL) != SQLITE_OK ||
      bench_load_ext(db, ext, &err)) {
    fprintf(stderr, "bench_wac: %s\n", err ? err : sqlite3_errmsg(db));
    exit(1);
  }
  return db;
}

/* An in-memory database with the extension loaded. */
static sqlite3 *open_db(const char *ext) { return open_db_flags(ext, 0); }

static void run(sqlite3 *db, const char *sql) {
  if (bench_exec(db, sql, 0)) exit(1);
}

static long long count_rows(sqlite3 *db, const char *table) {
  char sql[256];
  sqlite3_stmt *s;
  long long v = -1;
  snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int64(s, 0);
  sqlite3_finalize(s);
  return v;
}

/* The timed BEGIN; INSERT ... SELECT; COMMIT of a copy; prints the whole,
 * the COMMIT alone, the fsyncs and the copy's rows. */
static int timed_copy(sqlite3 *db, const char *insert) {
  bench_sync_reset();
  double t0 = bench_now_ms();
  run(db, "BEGIN");
  run(db, insert);
  double t1 = bench_now_ms(), s1 = bench_sync_ms();
  long long n1 = bench_sync_calls();
  run(db, "COMMIT");
  double t2 = bench_now_ms();
  printf("ms=%.1f commit=%.1f fsync=%.1f nsync=%lld fsync_all=%.1f nsync_all=%lld rows=%lld\n",
         t2 - t0, t2 - t1, bench_sync_ms() - s1, bench_sync_calls() - n1, bench_sync_ms(),
         bench_sync_calls(), count_rows(db, "out"));
  sqlite3_close(db);
  return 0;
}

static int wa1(const char *ext, const char *src, const char *out) {
  sqlite3 *db = open_db(ext);
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING atlas('%s')", src);
  run(db, sql);
  long long n = count_rows(db, "src");
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE temp.out USING atlas('%s', mode=replace, strategy=2, "
           "block_size=64, level=3, dict_size=0.01, shard_size=%lld, columns='%s')",
           out, (n + 7) / 8, A1_COLS);
  run(db, sql);
  return timed_copy(db, "INSERT INTO out(id, label, score, text) "
                        "SELECT id, label, score, text FROM src");
}

/* A1's examples as values: {"id", "label", "score", "text"} maps. */
typedef struct a1_values {
  ds_value *ex;   /* n maps */
  ds_value *kv;   /* 8 items per map */
  uint8_t *text;  /* every text back to back */
  size_t n;
} a1_values;

static const char *const A1_KEYS[4] = {"id", "label", "score", "text"};

static void load_a1(const char *ext, const char *src, a1_values *a) {
  sqlite3 *db = open_db(ext);
  char sql[1024];
  sqlite3_stmt *s;
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING atlas('%s')", src);
  run(db, sql);
  if (sqlite3_prepare_v2(db, "SELECT id, label, score, text FROM src", -1, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "bench_wac: %s\n", sqlite3_errmsg(db));
    exit(1);
  }
  size_t cap = 0, tlen = 0, tcap = 0;
  size_t *toff = NULL;
  memset(a, 0, sizeof *a);
  while (sqlite3_step(s) == SQLITE_ROW) {
    if (a->n == cap) {
      cap = cap ? 2 * cap : 1 << 16;
      a->kv = realloc(a->kv, cap * 8 * sizeof *a->kv);
      toff = realloc(toff, cap * sizeof *toff);
      if (!a->kv || !toff) exit(1);
    }
    size_t k = (size_t)sqlite3_column_bytes(s, 3);
    if (tlen + k > tcap && !(a->text = realloc(a->text, tcap = 2 * (tlen + k) + (1 << 20))))
      exit(1);
    memcpy(a->text + tlen, sqlite3_column_text(s, 3), k);
    ds_value *v = a->kv + 8 * a->n;
    for (int i = 0; i < 4; i++) {
      v[2 * i].type = DS_V_TEXT;
      v[2 * i].u.s.p = (const uint8_t *)A1_KEYS[i];
      v[2 * i].u.s.n = strlen(A1_KEYS[i]);
    }
    v[1].type = v[3].type = DS_V_INT;
    v[1].u.i = sqlite3_column_int64(s, 0);
    v[3].u.i = sqlite3_column_int64(s, 1);
    v[5].type = DS_V_FLOAT;
    v[5].u.f = sqlite3_column_double(s, 2);
    v[7].type = DS_V_TEXT;
    v[7].u.s.n = k;
    toff[a->n++] = tlen;
    tlen += k;
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  if (!(a->ex = malloc((a->n ? a->n : 1) * sizeof *a->ex))) exit(1);
  for (size_t i = 0; i < a->n; i++) {
    a->kv[8 * i + 7].u.s.p = a->text + toff[i];
    a->ex[i].type = DS_V_MAP;
    a->ex[i].u.list.items = a->kv + 8 * i;
    a->ex[i].u.list.n = 4;
  }
  free(toff);
}

static uint8_t *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  uint8_t *p = NULL;
  long s;
  if (f && fseek(f, 0, SEEK_END) == 0 && (s = ftell(f)) >= 0 && (p = malloc((size_t)s + 1))) {
    rewind(f);
    if (fread(p, 1, (size_t)s, f) != (size_t)s) {
      free(p);
      p = NULL;
    }
    *n = (size_t)s;
  }
  if (f) fclose(f);
  return p;
}

/* The dictionary of the copy's shard 0 trained as atlas_writer.c's train
 * does (the same parameters): pickles all[0..off[nb0]) cut at off[].
 * Returns the dictionary's length in dict (0: zstd refused). */
static size_t train_dict(const uint8_t *all, const size_t *off, size_t nb0, uint8_t **dict) {
  size_t bytes = off[nb0], cap = (size_t)(0.01 * (double)bytes) + 1;
  if (cap < 1024) cap = 1024; /* AW_MIN_DICT */
  size_t *sizes = malloc((nb0 ? nb0 : 1) * sizeof *sizes);
  *dict = malloc(cap);
  if (!sizes || !*dict) exit(1);
  for (size_t i = 0; i < nb0; i++) sizes[i] = off[i + 1] - off[i];
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ZDICT_fastCover_params_t fp;
  memset(&fp, 0, sizeof fp);
  fp.d = 8;
  fp.steps = 4;
  fp.nbThreads = cpus < 1 ? 1 : cpus > 4 ? 4 : (unsigned)cpus; /* the copy's threads=2 rule */
  fp.zParams.compressionLevel = 3;
  size_t r = ZDICT_optimizeTrainFromBuffer_fastCover(*dict, cap, all, sizes, (unsigned)nb0, &fp);
  free(sizes);
  return ZDICT_isError(r) ? 0 : r;
}

static int wa1_bare(const char *ext, const char *src, const char *dict, int runs) {
  a1_values a;
  load_a1(ext, src, &a);
  size_t dn = 0;
  uint8_t *d = slurp(dict, &dn);
  if (!d) {
    fprintf(stderr, "bench_wac: cannot read %s\n", dict);
    return 1;
  }
  ZSTD_CCtx *cc = ZSTD_createCCtx();
  /* blocks of 64 within each of 8 shards, as the copy writes them */
  size_t shard = (a.n + 7) / 8, nb = 0, nb0 = 0;
  for (size_t lo = 0; lo < a.n; lo += shard) nb += ((a.n - lo < shard ? a.n - lo : shard) + 63) / 64;
  size_t *first = malloc((nb + 1) * sizeof *first);
  nb = 0;
  for (size_t lo = 0; lo < a.n; lo += shard)
    for (size_t i = lo; i < a.n && i < lo + shard; i += 64) first[nb++] = i;
  first[nb] = a.n;
  while (nb0 < nb && first[nb0] < shard) nb0++; /* shard 0's blocks */
  ds_buf all = {0}, one = {0};
  size_t *off = malloc((nb + 1) * sizeof *off);
  uint8_t *dst = NULL;
  size_t dcap = 0, tn = 0;
  double best_enc = -1, best_train = -1, best_z = -1, stored = 0;
  int same = 0;
  ds_pickler pk = {0};
  char *err = NULL;
  for (int r = 0; r < runs; r++) {
    /* the encoder alone: one pickle per block into a reused buffer, as the
     * writer does; each block kept (untimed) for the compression */
    double enc = 0;
    all.len = 0;
    for (size_t b = 0; b < nb; b++) {
      size_t lo = first[b], hi = first[b + 1];
      one.len = 0;
      double t0 = bench_now_ms();
      int rc = ds_pickle_list_begin(&pk, &one, &err);
      for (size_t i = lo; i < hi && rc == 0; i++) rc = ds_pickle_list_add(&pk, &a.ex[i], &err);
      if (rc == 0) rc = ds_pickle_list_end(&pk, &err);
      enc += bench_now_ms() - t0;
      if (rc) {
        fprintf(stderr, "bench_wac: pickle: %s\n", err);
        return 1;
      }
      off[b] = all.len;
      if (ds_buf_append(&all, one.data, one.len)) {
        fprintf(stderr, "bench_wac: out of memory\n");
        return 1;
      }
    }
    off[nb] = all.len;
    /* the dictionary, trained as the copy trains it */
    uint8_t *td;
    double t0 = bench_now_ms();
    tn = train_dict(all.data, off, nb0, &td);
    double train = bench_now_ms() - t0;
    if (!tn) {
      fprintf(stderr, "bench_wac: zstd could not train a dictionary\n");
      return 1;
    }
    same = tn == dn && memcmp(td, d, dn) == 0;
    /* bare zstd with that dictionary over the same pickles */
    t0 = bench_now_ms();
    ZSTD_CDict *cd = ZSTD_createCDict(td, tn, 3);
    stored = 0;
    for (size_t b = 0; b < nb; b++) {
      size_t n = off[b + 1] - off[b], bound = ZSTD_compressBound(n);
      if (bound > dcap && !(dst = realloc(dst, dcap = 2 * bound))) return 1;
      size_t z = ZSTD_compress_usingCDict(cc, dst, dcap, all.data + off[b], n, cd);
      if (ZSTD_isError(z)) {
        fprintf(stderr, "bench_wac: zstd: %s\n", ZSTD_getErrorName(z));
        return 1;
      }
      stored += (double)z;
    }
    double z = bench_now_ms() - t0;
    ZSTD_freeCDict(cd);
    free(td);
    if (best_enc < 0 || enc < best_enc) best_enc = enc;
    if (best_train < 0 || train < best_train) best_train = train;
    if (best_z < 0 || z < best_z) best_z = z;
  }
  printf("ms=%.1f enc=%.1f train=%.1f zstd=%.1f rows=%zu blocks=%zu pickles=%zu stored=%.0f "
         "dict=%zu dict_same=%d\n",
         best_enc + best_train + best_z, best_enc, best_train, best_z, a.n, nb, all.len, stored,
         tn, same);
  return 0;
}

/* C1 as table src (flags: sqlite3_open_v2's extra flags). */
static sqlite3 *open_c1(const char *ext, const char *src, int flags) {
  sqlite3 *db = open_db_flags(ext, flags);
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING bcolz('%s')", src);
  run(db, sql);
  return db;
}

static int wc1(const char *ext, const char *src, const char *out) {
  sqlite3 *db = open_c1(ext, src, 0);
  char sql[1024];
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE temp.out USING bcolz('%s', mode=replace, "
           "expectedlen=10000000, columns='%s')", out, C1_COLS);
  run(db, sql);
  return timed_copy(db, "INSERT INTO out(id, label, score, flag, name) "
                        "SELECT id, label, score, flag, name FROM src");
}

/* ------------------------------------------------ nullsink (test only) */

/* A virtual table that accepts INSERTs and keeps nothing:
 * CREATE VIRTUAL TABLE temp.t USING nullsink(<column definitions>). */
typedef struct null_vtab {
  sqlite3_vtab base;
  sqlite3_int64 rows;
} null_vtab;

static int null_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **err) {
  (void)aux;
  char sql[1024];
  size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE x(");
  for (int i = 3; i < argc && n < sizeof sql; i++)
    n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s", i > 3 ? ", " : "", argv[i]);
  if (n < sizeof sql) snprintf(sql + n, sizeof sql - n, ")");
  null_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  int rc = sqlite3_declare_vtab(db, sql);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("nullsink: %s", sqlite3_errmsg(db));
    sqlite3_free(t);
    return rc;
  }
  *out = &t->base;
  return SQLITE_OK;
}
static int null_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}
static int null_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->estimatedCost = 1e9;
  return SQLITE_OK;
}
static int null_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  (void)v;
  sqlite3_vtab_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  *out = c;
  return SQLITE_OK;
}
static int null_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}
static int null_filter(sqlite3_vtab_cursor *c, int idx, const char *s, int argc,
                       sqlite3_value **argv) {
  (void)c, (void)idx, (void)s, (void)argc, (void)argv;
  return SQLITE_OK;
}
static int null_next(sqlite3_vtab_cursor *c) {
  (void)c;
  return SQLITE_OK;
}
static int null_eof(sqlite3_vtab_cursor *c) {
  (void)c;
  return 1;
}
static int null_column(sqlite3_vtab_cursor *c, sqlite3_context *ctx, int i) {
  (void)c, (void)ctx, (void)i;
  return SQLITE_OK;
}
static int null_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *r) {
  (void)c;
  *r = 0;
  return SQLITE_OK;
}
/* xUpdate: nothing kept, the next rowid handed back. */
static int null_update(sqlite3_vtab *v, int argc, sqlite3_value **argv, sqlite3_int64 *rowid) {
  (void)argc, (void)argv;
  *rowid = ((null_vtab *)v)->rows++;
  return SQLITE_OK;
}

static const sqlite3_module null_module = {
    .iVersion = 1, .xCreate = null_connect, .xConnect = null_connect,
    .xBestIndex = null_best_index, .xDisconnect = null_disconnect,
    .xDestroy = null_disconnect, .xOpen = null_open, .xClose = null_close,
    .xFilter = null_filter, .xNext = null_next, .xEof = null_eof,
    .xColumn = null_column, .xRowid = null_rowid, .xUpdate = null_update};

/* The copy into a nullsink table declared as the copy's table declares
 * its columns (bcolz_vtab.c: int64/i4/bool INTEGER, f8 REAL, S16 TEXT). */
static int wc1_floor(const char *ext, const char *src) {
  sqlite3 *db = open_c1(ext, src, 0);
  if (sqlite3_create_module(db, "nullsink", &null_module, NULL) != SQLITE_OK) {
    fprintf(stderr, "bench_wac: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  run(db, "CREATE VIRTUAL TABLE temp.out USING nullsink(id INTEGER, label INTEGER, "
          "score REAL, flag INTEGER, name TEXT)");
  double t0 = bench_now_ms();
  run(db, "INSERT INTO out(id, label, score, flag, name) "
          "SELECT id, label, score, flag, name FROM src");
  double t1 = bench_now_ms();
  sqlite3_int64 n = sqlite3_changes64(db);
  printf("ms=%.1f rows=%lld\n", t1 - t0, (long long)n);
  sqlite3_close(db);
  return 0;
}

/* The copy's read alone: every value of the five columns fetched (a
 * connection without its mutex: inside an INSERT ... SELECT no API call
 * takes it per value, here five sqlite3_column_* calls per row would). */
static int wc1_read(const char *ext, const char *src) {
  sqlite3 *db = open_c1(ext, src, SQLITE_OPEN_NOMUTEX);
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(db, "SELECT id, label, score, flag, name FROM src", -1, &s, NULL)) {
    fprintf(stderr, "bench_wac: %s\n", sqlite3_errmsg(db));
    return 1;
  }
  double t0 = bench_now_ms(), fsum = 0;
  long long rows = 0, isum = 0, bytes = 0;
  while (sqlite3_step(s) == SQLITE_ROW) {
    isum += sqlite3_column_int64(s, 0) + sqlite3_column_int64(s, 1) + sqlite3_column_int64(s, 3);
    fsum += sqlite3_column_double(s, 2);
    if (sqlite3_column_text(s, 4)) bytes += sqlite3_column_bytes(s, 4);
    rows++;
  }
  double t1 = bench_now_ms();
  sqlite3_finalize(s);
  printf("ms=%.1f rows=%lld isum=%lld fsum=%.6g bytes=%lld\n", t1 - t0, rows, isum, fsum,
         bytes);
  sqlite3_close(db);
  return 0;
}

/* One decompressed chunk of a column. */
typedef struct raw_chunk {
  uint8_t *p;
  size_t n, typesize;
} raw_chunk;

/* Every chunk file of SRC/COL/data, decompressed, appended to *c. */
static int load_column(const char *src, const char *col, raw_chunk **c, size_t *nc,
                       size_t *cap) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s/data", src, col);
  for (size_t k = 0;; k++) {
    char path[1200];
    size_t n;
    snprintf(path, sizeof path, "%s/__%zu.blp", dir, k);
    uint8_t *f = slurp(path, &n);
    if (!f) return k ? 0 : -1;
    size_t nbytes, cbytes, bsize, typesize;
    int flags;
    if (n < 16 + BLOSC_MIN_HEADER_LENGTH) return -1;
    blosc_cbuffer_sizes(f + 16, &nbytes, &cbytes, &bsize);
    blosc_cbuffer_metainfo(f + 16, &typesize, &flags);
    if (*nc == *cap && !(*c = realloc(*c, (*cap = *cap ? 2 * *cap : 256) * sizeof **c)))
      return -1;
    raw_chunk *r = &(*c)[(*nc)++];
    r->n = nbytes;
    r->typesize = typesize;
    if (!(r->p = malloc(nbytes ? nbytes : 1)) ||
        blosc_decompress_ctx(f + 16, r->p, nbytes, 1) != (int)nbytes)
      return -1;
    free(f);
  }
}

static int wc1_bare(const char *src, int runs) {
  static const char *const cols[] = {"id", "label", "score", "flag", "name"};
  raw_chunk *c = NULL;
  size_t nc = 0, cap = 0, raw = 0;
  for (int i = 0; i < 5; i++)
    if (load_column(src, cols[i], &c, &nc, &cap)) {
      fprintf(stderr, "bench_wac: cannot read column %s of %s\n", cols[i], src);
      return 1;
    }
  size_t dcap = 0;
  for (size_t i = 0; i < nc; i++) {
    raw += c[i].n;
    if (c[i].n + BLOSC_MAX_OVERHEAD > dcap) dcap = c[i].n + BLOSC_MAX_OVERHEAD;
  }
  uint8_t *dst = malloc(dcap);
  double best = -1, stored = 0;
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_ms();
    stored = 0;
    for (size_t i = 0; i < nc; i++) {
      int z = blosc_compress_ctx(5, 1, c[i].typesize, c[i].n, c[i].p, dst, dcap, "lz4", 0, 1);
      if (z <= 0) return 1;
      stored += z;
    }
    double t = bench_now_ms() - t0;
    if (best < 0 || t < best) best = t;
  }
  printf("ms=%.1f chunks=%zu raw=%zu stored=%.0f\n", best, nc, raw, stored);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 5 && !strcmp(argv[2], "wa1")) return wa1(argv[1], argv[3], argv[4]);
  if (argc >= 6 && !strcmp(argv[2], "wa1-bare"))
    return wa1_bare(argv[1], argv[3], argv[4], atoi(argv[5]));
  if (argc >= 5 && !strcmp(argv[2], "wc1")) return wc1(argv[1], argv[3], argv[4]);
  if (argc >= 5 && !strcmp(argv[2], "wc1-bare")) return wc1_bare(argv[3], atoi(argv[4]));
  if (argc >= 4 && !strcmp(argv[2], "wc1-floor")) return wc1_floor(argv[1], argv[3]);
  if (argc >= 4 && !strcmp(argv[2], "wc1-read")) return wc1_read(argv[1], argv[3]);
  fprintf(stderr, "usage: see the comment at the top of bench/bench_wac.c\n");
  return 2;
}
