/* bench_w.c - the writing workloads W-B1 and W-D1 (BENCHMARK.md), one
 * measurement per process so bench/run_w.sh can take peak RSS too.
 *
 *   bench_w EXT wb1 SRC_SPEC OUT_SPEC THREADS   copy a bag with
 *       INSERT INTO out(record) SELECT record FROM src (zstd level 3)
 *   bench_w EXT wb1-bare SRC_SPEC               ZSTD_compressCCtx, level 3,
 *       one thread, over the same records already in memory
 *   bench_w EXT wd1 SRC OUT raw|typed           copy a datadings dataset by
 *       key, raw or through typed columns
 *   bench_w EXT wd1-native SRC DB               CREATE TABLE AS of the same
 *       typed rows in a native database file
 *   bench_w EXT wd1-cp SRC OUT                  copy the six files (the cp
 *       yardstick, copy_file_range like cp)
 *   bench_w EXT wd1-index OUT                   build OUT's five index files
 *       anew from its data file, in C without SQLite (the yardstick's
 *       second part, cp + index: bench/wd1_index.c)
 * Prints "ms=<time of the work> rows=<n>"; the copies and wd1-native also
 * "commit=<ms> fsync=<ms> nsync=<calls>": each runs its statement as
 * BEGIN; <statement>; COMMIT, ms is the whole, commit the COMMIT alone
 * (the writer's xSync and xCommit: last data out, every file fsynced,
 * published), fsync the time inside fsync/fdatasync during the COMMIT and
 * fsync_all during the whole (bench/sync_clock.c: every such call of the
 * process, on any thread, SQLite's own included); wd1-cp prints fsync too
 * (cp_file fsyncs each file). */
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "bench_common.h"
#include "bench_sync.h"

int wd1_index(const char *data_path); /* wd1_index.c */

static sqlite3 *open_db(const char *ext, const char *path) {
  sqlite3 *db;
  char *err = NULL;
  if (sqlite3_open(path, &db) != SQLITE_OK || bench_load_ext(db, ext, &err)) {
    fprintf(stderr, "bench_w: %s\n", err ? err : sqlite3_errmsg(db));
    exit(1);
  }
  return db;
}

static int64_t one_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *s;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
    v = sqlite3_column_int64(s, 0);
  else
    fprintf(stderr, "bench_w: %s: %s\n", sql, sqlite3_errmsg(db));
  sqlite3_finalize(s);
  return v;
}

/* Run SQL, exit on error. */
static void run(sqlite3 *db, const char *sql) {
  if (bench_exec(db, sql, 0)) exit(1);
}

/* BEGIN; sql; COMMIT, timed: *ms the whole, *commit the COMMIT alone;
 * the fsync clock counts from the BEGIN. */
static double sync_before_commit; /* the fsync clock when COMMIT began */
static long long nsync_before_commit;

static void run_txn(sqlite3 *db, const char *sql, double *ms, double *commit) {
  bench_sync_reset();
  double t0 = bench_now_ms();
  run(db, "BEGIN");
  run(db, sql);
  double t1 = bench_now_ms();
  sync_before_commit = bench_sync_ms();
  nsync_before_commit = bench_sync_calls();
  run(db, "COMMIT");
  double t2 = bench_now_ms();
  *ms = t2 - t0;
  *commit = t2 - t1;
}

/* The line of a copy: ms, COMMIT, the fsyncs in COMMIT and in the whole,
 * rows. */
static void print_copy(double ms, double commit, long long rows) {
  printf("ms=%.1f commit=%.1f fsync=%.1f nsync=%lld fsync_all=%.1f nsync_all=%lld rows=%lld\n",
         ms, commit, bench_sync_ms() - sync_before_commit,
         bench_sync_calls() - nsync_before_commit, bench_sync_ms(), bench_sync_calls(), rows);
}

static int wb1(const char *ext, const char *src, const char *out, const char *threads) {
  sqlite3 *db = open_db(ext, ":memory:");
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING bagz('%s')", src);
  run(db, sql);
  snprintf(sql, sizeof sql,
           "CREATE VIRTUAL TABLE temp.out USING bagz('%s', mode=replace, level=3, "
           "compression=zstd, threads=%s)", out, threads);
  run(db, sql);
  double ms, commit;
  run_txn(db, "INSERT INTO out(record) SELECT record FROM src", &ms, &commit);
  print_copy(ms, commit, (long long)one_int(db, "SELECT count(*) FROM out"));
  sqlite3_close(db);
  return 0;
}

static int wb1_bare(const char *ext, const char *src) {
  sqlite3 *db = open_db(ext, ":memory:");
  sqlite3_stmt *s;
  char sql[1024];
  snprintf(sql, sizeof sql, "SELECT record FROM bagz('%s')", src);
  if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) return 1;
  size_t n = 0, cap = 0, bytes = 0, bcap = 0;
  size_t *len = NULL;
  char *all = NULL;
  while (sqlite3_step(s) == SQLITE_ROW) {
    size_t k = (size_t)sqlite3_column_bytes(s, 0);
    if (n == cap) len = realloc(len, (cap = cap ? 2 * cap : 1 << 16) * sizeof *len);
    if (bytes + k > bcap) all = realloc(all, bcap = 2 * (bytes + k) + (1 << 20));
    memcpy(all + bytes, sqlite3_column_blob(s, 0), k);
    len[n++] = k;
    bytes += k;
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  ZSTD_CCtx *c = ZSTD_createCCtx();
  char *dst = malloc(ZSTD_compressBound(1 << 20));
  double t0 = bench_now_ms();
  size_t off = 0, sum = 0;
  for (size_t i = 0; i < n; i++) {
    if (len[i]) sum += ZSTD_compressCCtx(c, dst, ZSTD_compressBound(len[i]), all + off, len[i], 3);
    off += len[i];
  }
  double t1 = bench_now_ms();
  printf("ms=%.1f rows=%zu stored=%zu\n", t1 - t0, n, sum);
  return 0;
}

static const char *const typed_cols = "label INTEGER, score REAL, text TEXT, emb BLOB";

static int wd1(const char *ext, const char *src, const char *out, const char *how) {
  sqlite3 *db = open_db(ext, ":memory:");
  char sql[1024];
  int raw = strcmp(how, "raw") == 0;
  if (raw)
    snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.out USING datadings('%s', mode=replace)", out);
  else
    snprintf(sql, sizeof sql,
             "CREATE VIRTUAL TABLE temp.out USING datadings('%s', mode=replace, columns='%s')",
             out, typed_cols);
  run(db, sql);
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING datadings('%s', columns='%s')",
           src, typed_cols);
  run(db, sql);
  double ms, commit;
  if (raw)
    snprintf(sql, sizeof sql, "INSERT INTO out(key, raw) SELECT key, raw FROM datadings('%s')", src);
  else
    snprintf(sql, sizeof sql, "INSERT INTO out(key, label, score, text, emb) "
                              "SELECT key, label, score, text, emb FROM src");
  run_txn(db, sql, &ms, &commit);
  print_copy(ms, commit, (long long)one_int(db, "SELECT count(*) FROM out"));
  sqlite3_close(db);
  return 0;
}

static int wd1_native(const char *ext, const char *src, const char *dbpath) {
  unlink(dbpath);
  sqlite3 *db = open_db(ext, dbpath);
  char sql[1024];
  snprintf(sql, sizeof sql, "CREATE VIRTUAL TABLE temp.src USING datadings('%s', columns='%s')",
           src, typed_cols);
  run(db, sql);
  double ms, commit;
  run_txn(db, "CREATE TABLE nat AS SELECT key, label, score, text, emb FROM src", &ms, &commit);
  print_copy(ms, commit, (long long)one_int(db, "SELECT count(*) FROM nat"));
  sqlite3_close(db);
  unlink(dbpath);
  return 0;
}

/* cp of one file: copy_file_range as coreutils cp does, then fsync (our
 * writer makes its files durable too). */
static int cp_file(const char *from, const char *to) {
  int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  struct stat st;
  if (in < 0 || out < 0 || fstat(in, &st)) return -1;
  off_t left = st.st_size;
  while (left > 0) {
    ssize_t c = copy_file_range(in, NULL, out, NULL, (size_t)left, 0);
    if (c <= 0) return -1;
    left -= c;
  }
  fsync(out);
  close(in);
  close(out);
  return 0;
}

static int wd1_cp(const char *src, const char *out) {
  static const char *const suf[] = {"", ".offsets", ".keys", ".key_hashes", ".filter", ".md5"};
  bench_sync_reset();
  double t0 = bench_now_ms();
  for (int i = 0; i < 6; i++) {
    char a[1024], b[1024];
    snprintf(a, sizeof a, "%s%s", src, suf[i]);
    snprintf(b, sizeof b, "%s%s", out, suf[i]);
    if (cp_file(a, b)) {
      fprintf(stderr, "bench_w: cannot copy %s\n", a);
      return 1;
    }
  }
  double t1 = bench_now_ms();
  printf("ms=%.1f fsync=%.1f nsync=%lld rows=0\n", t1 - t0, bench_sync_ms(), bench_sync_calls());
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[2], "wb1-bare")) return wb1_bare(argv[1], argv[3]);
  if (argc >= 6 && !strcmp(argv[2], "wb1")) return wb1(argv[1], argv[3], argv[4], argv[5]);
  if (argc >= 6 && !strcmp(argv[2], "wd1")) return wd1(argv[1], argv[3], argv[4], argv[5]);
  if (argc >= 5 && !strcmp(argv[2], "wd1-native")) return wd1_native(argv[1], argv[3], argv[4]);
  if (argc >= 5 && !strcmp(argv[2], "wd1-cp")) return wd1_cp(argv[3], argv[4]);
  if (argc >= 4 && !strcmp(argv[2], "wd1-index")) return wd1_index(argv[3]);
  fprintf(stderr, "usage: see the comment at the top of bench/bench_w.c\n");
  return 2;
}
