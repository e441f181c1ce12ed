/* bench_b1.c - benchmark driver for workload B1 (bagz, see
 * shared/BENCHMARK.md).
 *
 *   bench_b1 [--ext PATH] [--runs N] DIR
 *       the full B1 table on DIR/b1@4.bagz, yardsticks: the native table in
 *       DIR/b1native.db (created from bagz(...) if missing) and the bare
 *       zstd decompression of the same frames in memory.
 *   bench_b1 [--ext PATH] --scan-only SPEC THREADS
 *       one scan of SPEC through a bagz virtual table with threads=THREADS,
 *       for peak-RSS measurement by the caller (/usr/bin/time -f %M).
 *
 * Everything runs in one process and, for the timed part, one connection:
 * the native database is the main database, the bagz tables are temp
 * virtual tables. PATH defaults to build/datasets (run from the repo root). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "bench_common.h"

#define MAX_SHARDS 64
#define POINT_LOOKUPS 100000
#define POINT_SEED UINT64_C(0xB1B1B1B1)

typedef bench_bagz_shard shard;

typedef struct b1_ctx {
  sqlite3 *db;
  shard sh[MAX_SHARDS];
  int nsh;
  uint64_t total;
  ZSTD_DCtx *dctx;
  uint8_t *buf;
  size_t cap;
  int64_t *rowids;
} b1_ctx;

/* ---- bagz files in memory (the bare-decompression yardstick) ---- */

/* Shard i of a spec "prefix@N.suffix" (or the spec itself without '@').
 * Returns the shard count, 0 on a malformed spec. */
static int expand_spec(const char *spec, int i, char *out, size_t cap) {
  const char *slash = strrchr(spec, '/');
  const char *at = strchr(slash ? slash : spec, '@');
  if (!at) {
    snprintf(out, cap, "%s", spec);
    return 1;
  }
  char *end;
  long n = strtol(at + 1, &end, 10);
  if (end == at + 1 || n <= 0 || n > MAX_SHARDS) return 0;
  snprintf(out, cap, "%.*s-%05d-of-%05ld%s", (int)(at - spec), spec, i, n, end);
  return (int)n;
}

static int load_spec(b1_ctx *c, const char *spec) {
  char path[4096];
  c->nsh = expand_spec(spec, 0, path, sizeof path);
  if (c->nsh == 0) {
    fprintf(stderr, "bench_b1: bad spec %s\n", spec);
    return -1;
  }
  for (int i = 0; i < c->nsh; i++) {
    expand_spec(spec, i, path, sizeof path);
    if (bench_load_bagz_shard("bench_b1", path, &c->sh[i]) != 0) return -1;
    c->total += c->sh[i].n;
  }
  return 0;
}

/* Decompress record k of shard s into c->buf; returns its length or -1. */
static int64_t decode_record(b1_ctx *c, const shard *s, uint64_t k) {
  const uint8_t *lim = s->data + s->records_size;
  uint64_t start = k ? bench_le64(lim + 8 * (k - 1)) : 0, end = bench_le64(lim + 8 * k);
  if (start > end || end > s->records_size) return -1;
  if (start == end) return 0;
  unsigned long long want = ZSTD_getFrameContentSize(s->data + start, end - start);
  if (want == ZSTD_CONTENTSIZE_ERROR || want == ZSTD_CONTENTSIZE_UNKNOWN)
    return -1;
  if (want > c->cap) {
    free(c->buf);
    c->cap = (size_t)want * 2;
    c->buf = malloc(c->cap);
    if (!c->buf) return -1;
  }
  size_t got = ZSTD_decompressDCtx(c->dctx, c->buf, c->cap, s->data + start,
                                   end - start);
  return ZSTD_isError(got) ? -1 : (int64_t)got;
}

/* Bare decompression: every record, one thread; r0 = count, r1 = bytes. */
static int run_bare(void *ctx, bench_variant *v) {
  b1_ctx *c = ctx;
  int64_t count = 0, sum = 0;
  for (int i = 0; i < c->nsh; i++) {
    for (uint64_t k = 0; k < c->sh[i].n; k++) {
      int64_t len = decode_record(c, &c->sh[i], k);
      if (len < 0) {
        fprintf(stderr, "bench_b1: bare: shard %d record %llu corrupt\n", i,
                (unsigned long long)k);
        return -1;
      }
      count++;
      sum += len;
    }
  }
  v->r0 = count;
  v->r1 = sum;
  return 0;
}

/* ---- point lookups ---- */

/* 100,000 lookups of the fixed rowid sequence inside BEGIN..COMMIT;
 * r0 = rows found, r1 = bytes read (every blob's bytes are touched). */
static int run_point(void *ctx, bench_variant *v) {
  b1_ctx *c = ctx;
  return bench_run_point(c->db, v, c->rowids, POINT_LOOKUPS);
}

/* The bare cost of the point workload: decompress the same 100,000 random
 * records from memory (concatenated layout: 4 equal shards in order). */
static int run_point_bare(void *ctx, bench_variant *v) {
  b1_ctx *c = ctx;
  int64_t found = 0, bytes = 0;
  for (int k = 0; k < POINT_LOOKUPS; k++) {
    uint64_t g = (uint64_t)c->rowids[k];
    int i = 0;
    while (i < c->nsh && g >= c->sh[i].n) g -= c->sh[i++].n;
    if (i == c->nsh) continue;
    int64_t len = decode_record(c, &c->sh[i], g);
    if (len < 0) return -1;
    found++;
    bytes += len;
  }
  v->r0 = found;
  v->r1 = bytes;
  return 0;
}

/* ---- the native yardstick database ---- */

static int64_t native_count(const char *dbpath) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  if (access(dbpath, R_OK) == 0 &&
      sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT count(*) FROM b1native", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Fallback fill from the in-memory shards (only when bagz() is missing). */
static int fill_from_memory(b1_ctx *c, sqlite3 *db) {
  sqlite3_stmt *ins = NULL;
  if (sqlite3_prepare_v2(db, "INSERT INTO b1native VALUES(?, ?)", -1, &ins,
                         NULL) != SQLITE_OK)
    return -1;
  int64_t rowid = 0;
  int rc = 0;
  for (int i = 0; rc == 0 && i < c->nsh; i++) {
    for (uint64_t k = 0; rc == 0 && k < c->sh[i].n; k++) {
      int64_t len = decode_record(c, &c->sh[i], k);
      sqlite3_bind_int64(ins, 1, rowid++);
      sqlite3_bind_blob(ins, 2, c->buf, (int)(len > 0 ? len : 0), SQLITE_STATIC);
      if (len < 0 || sqlite3_step(ins) != SQLITE_DONE) rc = -1;
      sqlite3_reset(ins);
    }
  }
  sqlite3_finalize(ins);
  return rc;
}

/* Fill b1native through the extension's bagz() table-valued function,
 * falling back to the driver's own reader. */
static int fill_native(b1_ctx *c, sqlite3 *db, const char *spec,
                       const char *ext) {
  char *err = NULL;
  if (bench_load_ext(db, ext, &err) == 0) {
    char *sql = sqlite3_mprintf(
        "INSERT INTO b1native SELECT rowid, record FROM bagz(%Q)", spec);
    int rc = bench_exec(db, sql, 0);
    sqlite3_free(sql);
    if (rc == 0) {
      printf("native table filled from bagz(%s)\n", spec);
      return 0;
    }
    bench_exec(db, "DELETE FROM b1native", 0);
  } else {
    fprintf(stderr, "bench_b1: load %s: %s\n", ext, err ? err : "?");
    sqlite3_free(err);
  }
  printf("NOTE: bagz() unavailable; native table filled by the driver's own "
         "bagz reader (same bytes)\n");
  return fill_from_memory(c, db);
}

/* Create DIR/b1native.db unless it already holds every record. Built in a
 * temporary file and renamed, so an interrupted build leaves nothing. */
static int ensure_native(b1_ctx *c, const char *dbpath, const char *spec,
                         const char *ext) {
  if (native_count(dbpath) == (int64_t)c->total) return 0;
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", dbpath);
  remove(tmp);
  sqlite3 *db = NULL;
  int rc = sqlite3_open(tmp, &db) == SQLITE_OK ? 0 : -1;
  if (rc == 0)
    rc = bench_exec(db,
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                    "CREATE TABLE b1native(id INTEGER PRIMARY KEY, record BLOB)",
                    0);
  if (rc == 0) rc = fill_native(c, db, spec, ext);
  if (rc == 0) rc = bench_exec(db, "COMMIT", 0);
  sqlite3_close(db);
  if (rc == 0) rc = rename(tmp, dbpath);
  if (rc != 0) {
    fprintf(stderr, "bench_b1: could not build %s\n", dbpath);
    remove(tmp);
  }
  return rc;
}

/* ---- the full benchmark ---- */

enum {
  V_NATIVE, V_B1, V_B1RT, V_BARE, V_COUNT, V_NCOUNT, V_PNATIVE, V_PB1,
  V_PBARE, V_PSHARD, V_FLOOR, NV
};

/* Create the two bagz tables; prints any fallback. Returns 1 if b1 exists,
 * 2 if both exist. */
static int make_vtabs(sqlite3 *db, const char *spec) {
  char note[1024];
  int have = 0;
  if (bench_create_vtab(db, "b1", "bagz", spec, "threads=1", note,
                        sizeof note) == 0)
    have = 1;
  if (note[0]) printf("NOTE: %s\n", note);
  if (have && bench_create_vtab(db, "b1rt", "bagz", spec, "threads=2", note,
                                sizeof note) == 0)
    have = 2;
  if (have && note[0]) printf("NOTE: %s\n", note);
  return have;
}

static void setup_variants(b1_ctx *c, bench_variant *v, int have) {
  memset(v, 0, sizeof *v * NV);
  sqlite3 *db = c->db;
  const char *scan = "SELECT count(*), sum(length(record)) FROM ";
  char sql[128];
  snprintf(sql, sizeof sql, "%sb1native", scan);
  bench_prepare_variant(db, &v[V_NATIVE], "scan native", sql, bench_run_sql);
  v[V_BARE] = (bench_variant){.name = "bare zstd", .run = run_bare, .ok = 1};
  bench_prepare_variant(db, &v[V_NCOUNT], "count(*) native",
              "SELECT count(*) FROM b1native", bench_run_sql);
  bench_prepare_variant(db, &v[V_PNATIVE], "point native",
              "SELECT record FROM b1native WHERE rowid = ?", run_point);
  if (have >= 1) {
    snprintf(sql, sizeof sql, "%sb1", scan);
    bench_prepare_variant(db, &v[V_B1], "scan b1 threads=1", sql, bench_run_sql);
    bench_prepare_variant(db, &v[V_COUNT], "count(*) b1", "SELECT count(*) FROM b1",
                bench_run_sql);
    bench_prepare_variant(db, &v[V_PB1], "point b1",
                "SELECT record FROM b1 WHERE rowid = ?", run_point);
    bench_prepare_variant(db, &v[V_PSHARD], "point b1 shard only",
                "SELECT CAST(shard AS BLOB) FROM b1 WHERE rowid = ?", run_point);
    v[V_PBARE] = (bench_variant){.name = "point bare zstd", .run = run_point_bare, .ok = 1};
  }
  if (have >= 2) {
    snprintf(sql, sizeof sql, "%sb1rt", scan);
    bench_prepare_variant(db, &v[V_B1RT], "scan b1rt threads=2", sql, bench_run_sql);
  }
  char note[512];
  v[V_FLOOR].name = "row floor";
  v[V_FLOOR].run = bench_run_sql;
  bench_row_floor(db, (int64_t)c->total, &v[V_FLOOR], note, sizeof note);
  if (note[0]) printf("NOTE: %s\n", note);
}

static int check_results(const bench_variant *v, int64_t total) {
  int bad = 0;
  bad += bench_check_same(&v[V_BARE], &v[V_NATIVE], 1);
  bad += bench_check_same(&v[V_BARE], &v[V_B1], 1);
  bad += bench_check_same(&v[V_BARE], &v[V_B1RT], 1);
  bad += bench_check_same(&v[V_BARE], &v[V_COUNT], 0);
  bad += bench_check_same(&v[V_BARE], &v[V_NCOUNT], 0);
  bad += bench_check_same(&v[V_PNATIVE], &v[V_PB1], 1);
  if (v[V_BARE].ok && v[V_BARE].r0 != total) bad++;
  if (v[V_FLOOR].ok && v[V_FLOOR].r0 != total * (total - 1) / 2) {
    printf("!!!!!!!! MISMATCH: row floor sum %lld\n", (long long)v[V_FLOOR].r0);
    bad++;
  }
  return bad;
}

static void print_table(const bench_variant *v) {
  printf("\n");
  bench_table_header();
  bench_table_row("scan threads=1 / bare zstd", &v[V_B1], &v[V_BARE], 1.1);
  bench_table_row("scan threads=2 / bare zstd", &v[V_B1RT], &v[V_BARE], 0.6);
  bench_table_row("point 100k, BEGIN..COMMIT / native", &v[V_PB1],
                  &v[V_PNATIVE], 1.5);
  bench_table_row("scan threads=1 / native", &v[V_B1], &v[V_NATIVE], 0);
  bench_table_row("scan threads=2 / native", &v[V_B1RT], &v[V_NATIVE], 0);
  bench_table_row("count(*) (no decompression) / scan threads=1",
                  &v[V_COUNT], &v[V_B1], 0);
  bench_table_row("count(*) / native count(*)", &v[V_COUNT], &v[V_NCOUNT], 0);
  bench_table_row("scan threads=1 / vtab row floor", &v[V_B1], &v[V_FLOOR], 0);
  bench_table_row("point b1 / bare zstd of the same records", &v[V_PB1], &v[V_PBARE], 0);
  bench_table_row("point b1 without record / native", &v[V_PSHARD], &v[V_PNATIVE], 0);
  bench_table_row("scan native / bare zstd", &v[V_NATIVE], &v[V_BARE], 0);
}

static void finalize_variants(bench_variant *v, int n) {
  for (int i = 0; i < n; i++) sqlite3_finalize(v[i].stmt);
}

static int open_main(b1_ctx *c, const char *dbpath, const char *ext,
                     const char *spec) {
  if (sqlite3_open_v2(dbpath, &c->db, SQLITE_OPEN_READWRITE, NULL) !=
      SQLITE_OK) {
    fprintf(stderr, "bench_b1: open %s: %s\n", dbpath, sqlite3_errmsg(c->db));
    return -1;
  }
  char *err = NULL;
  if (bench_load_ext(c->db, ext, &err) != 0) {
    printf("NOTE: extension %s not loaded (%s): bagz rows are n/a\n", ext,
           err ? err : "?");
    sqlite3_free(err);
    return 0;
  }
  int have = make_vtabs(c->db, spec);
  if (!have) printf("NOTE: no bagz virtual table: bagz rows are n/a\n");
  return have;
}

static int bench_full(b1_ctx *c, const char *dir, const char *ext, int runs) {
  char spec[4096], dbpath[4096];
  snprintf(spec, sizeof spec, "%s/b1@4.bagz", dir);
  snprintf(dbpath, sizeof dbpath, "%s/b1native.db", dir);
  if (load_spec(c, spec) != 0 || c->total == 0) return 1;
  if (ensure_native(c, dbpath, spec, ext) != 0) return 1;
  c->rowids = bench_random_rowids(POINT_LOOKUPS, c->total, POINT_SEED);
  int have = open_main(c, dbpath, ext, spec);
  if (have < 0 || !c->rowids) return 1;
  printf("B1: %s, %llu records, %d shards; sqlite %s, zstd %s; %d CPUs\n",
         spec, (unsigned long long)c->total, c->nsh, sqlite3_libversion(),
         ZSTD_versionString(), (int)sysconf(_SC_NPROCESSORS_ONLN));
  bench_variant v[NV];
  setup_variants(c, v, have);
  for (int i = 0; i < NV; i++) v[i].one_cpu = i != V_B1RT; /* all but threads=2 */
  printf("single-threaded variants (all but threads=2) run pinned to one CPU, "
         "the same for all in a round, the next CPU in the next round\n");
  bench_measure(c, v, NV, runs);
  int bad = check_results(v, (int64_t)c->total);
  bench_print_absolute(v, NV, runs, 22);
  print_table(v);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  finalize_variants(v, NV);
  return bad ? 3 : 0;
}

/* ---- peak-memory mode: one scan in a fresh process ---- */

static int scan_only(const char *spec, const char *threads, const char *ext) {
  char opts[64], label[512];
  snprintf(opts, sizeof opts, "threads=%s", threads);
  snprintf(label, sizeof label, "%s threads=%s", spec, threads);
  return bench_scan_only("bench_b1", ext, "bagz", spec, opts,
                         "SELECT count(*), sum(length(record)) FROM t", label);
}

static void free_ctx(b1_ctx *c) {
  for (int i = 0; i < c->nsh; i++) free(c->sh[i].data);
  if (c->db) sqlite3_close(c->db);
  ZSTD_freeDCtx(c->dctx);
  free(c->buf);
  free(c->rowids);
}

static int usage(void) {
  fprintf(stderr,
          "usage: bench_b1 [--ext PATH] [--runs N] DIR\n"
          "       bench_b1 [--ext PATH] --scan-only SPEC THREADS\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = bench_options(argc, argv, &ext, &runs);
  if (i < argc && strncmp(argv[i], "--", 2) == 0 && strcmp(argv[i], "--scan-only") != 0)
    return usage();
  if (i < argc && strcmp(argv[i], "--scan-only") == 0)
    return i + 3 == argc ? scan_only(argv[i + 1], argv[i + 2], ext) : usage();
  if (i + 1 != argc || runs < 1) return usage();
  b1_ctx c = {0};
  c.dctx = ZSTD_createDCtx();
  int rc = c.dctx ? bench_full(&c, argv[i], ext, runs) : 1;
  free_ctx(&c);
  return rc;
}
