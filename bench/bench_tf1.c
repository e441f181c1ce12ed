/* bench_tf1.c - benchmark driver for workload TF-1 (issue 25: the tfrecord
 * module; see bench/README.md).
 *
 *   bench_tf1 [--ext PATH] [--runs N] DIR
 *
 * DIR/tf1.tfrecord is the 1M tf.Example records of T-B1 (DIR/tb1@4.bag,
 * gen_tb1) as one uncompressed TFRecord file, written once by the
 * extension's tfrecord writer (INSERT ... SELECT record FROM bagz(...)).
 * Rows, each ours / yardstick, all in this process, interleaved:
 *   - full scan with the CRC checks (count, sum of lengths; the table
 *     indexed) / the same loop in bare C: read() 1 MiB at a time, each
 *     frame's length CRC and data CRC (masked CRC-32C: the CPU's
 *     instruction for the 8 length bytes, ISA-L for the data) checked;
 *   - index build (a new table (idx=false) read at rowid 0: the index
 *     pass, not a step over every row) / a bare read() of the file;
 *   - 100,000 random rowids (one statement each, BEGIN..COMMIT) once
 *     indexed / the same on T-B1's uncompressed bag (the same records);
 *   - tf.Example GROUP BY label (records=tfexample) / the same on T-B1's bag;
 *   - convert TF-1 to a zstd-3 bag (INSERT ... SELECT, COMMIT) / the same
 *     copy from T-B1's bag (a W-B1 style bag copy of the same records);
 *   - information: SQLite's own floor under the scan, the same query over
 *     this driver's `memrec` vtab (the file's records already in memory,
 *     each returned as tfrecord's xColumn does: SQLITE_TRANSIENT, no CRC)
 *     / the bare loop, and the scan / (that floor + the bare CRC work).
 * After the table, the least CPU time (all threads) of a scan run and of
 * a bare-loop run: what the scan costs whatever the machine's other load.
 * Answers are compared between each pair. Every variant but the scan
 * and the index build runs pinned to the round's CPU (bench_common.h,
 * one_cpu); those two run at threads=2, the default, and need their two
 * CPUs (information: the index build at threads=1, pinned). PATH
 * defaults to build/datasets. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/crc.h>

#include "bench_common.h"

#define POINT_LOOKUPS 100000
#define POINT_SEED 0x7f1u
#define CHUNK (1u << 20)

typedef struct tf1_ctx {
  sqlite3 *db;
  char file[4200], bag[4200], outdir[4200];
  int64_t *rowids;
  uint64_t total;
} tf1_ctx;

static volatile unsigned g_sink;

#if defined(__x86_64__)
#include <nmmintrin.h>
/* CRC-32C of a short input with the CPU's instruction (SSE4.2). */
__attribute__((target("sse4.2"))) static uint32_t crc_hw(const uint8_t *p, size_t n) {
  uint64_t c = 0xffffffffu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v;
    memcpy(&v, p, 8);
    c = _mm_crc32_u64(c, v);
  }
  uint32_t crc = (uint32_t)c;
  for (; n > 0; p++, n--) crc = _mm_crc32_u8(crc, *p);
  return crc;
}
#endif

#if defined(__x86_64__)
#include <immintrin.h>
/* vzeroupper after ISA-L's AVX-512 code, as the extension does
 * (core/upper_vectors.h). */
__attribute__((target("avx"))) static void zeroupper(void) { _mm256_zeroupper(); }
#endif

/* Masked CRC-32C, the fastest way this machine has for each length (as
 * the extension: the CPU's instruction up to 128 bytes when it has one,
 * ISA-L's crc32_iscsi above, the vector registers' upper halves cleared
 * after it: ISA-L takes about 40 ns for 8 bytes). */
static uint32_t masked_crc(const uint8_t *p, size_t n) {
  uint32_t c;
#if defined(__x86_64__)
  if (n <= 128 && __builtin_cpu_supports("sse4.2")) {
    c = ~crc_hw(p, n);
  } else {
    c = ~crc32_iscsi((unsigned char *)p, (int)n, 0xffffffffu);
    if (__builtin_cpu_supports("avx")) zeroupper();
  }
#else
  c = ~crc32_iscsi((unsigned char *)p, (int)n, 0xffffffffu);
#endif
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}
static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Bare scan: frames parsed from 1 MiB reads, both CRCs checked. */
static int run_bare_scan(void *ctx, bench_variant *v) {
  tf1_ctx *c = ctx;
  int fd = open(c->file, O_RDONLY);
  if (fd < 0) return -1;
  size_t cap = CHUNK * 2, have = 0, at = 0;
  uint8_t *buf = malloc(cap);
  int64_t n = 0, bytes = 0;
  int bad = 0;
  for (;;) {
    if (have - at < 12 || have - at < 16 + bench_le64(buf + at)) {
      memmove(buf, buf + at, have - at);
      have -= at;
      at = 0;
      if (have >= 12 && 16 + bench_le64(buf) > cap) {
        cap = 16 + bench_le64(buf) + CHUNK;
        buf = realloc(buf, cap);
      }
      ssize_t r = read(fd, buf + have, cap - have);
      if (r <= 0) break;
      have += (size_t)r;
      continue;
    }
    uint64_t len = bench_le64(buf + at);
    bad |= masked_crc(buf + at, 8) != le32(buf + at + 8);
    bad |= masked_crc(buf + at + 12, len) != le32(buf + at + 12 + len);
    n++;
    bytes += (int64_t)len;
    at += 16 + len;
  }
  close(fd);
  free(buf);
  v->r0 = n;
  v->r1 = bytes;
  return bad ? -1 : 0;
}

/* Bare read of the whole file, 1 MiB at a time (r0: 1, r1: bytes). */
static int run_bare_read(void *ctx, bench_variant *v) {
  tf1_ctx *c = ctx;
  int fd = open(c->file, O_RDONLY);
  if (fd < 0) return -1;
  uint8_t *buf = malloc(CHUNK);
  int64_t bytes = 0;
  ssize_t r;
  while ((r = read(fd, buf, CHUNK)) > 0) bytes += r;
  g_sink += buf[0];
  close(fd);
  free(buf);
  v->r0 = 1;
  v->r1 = bytes;
  return 0;
}

/* The process's CPU time in ms (every thread's). */
static double process_cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The least CPU time (all threads) a timed run of the scan and of the
 * bare loop took: what the scan costs whatever the other load (its wall
 * time needs two free CPUs). Warm-up runs count too (min only). */
static double g_cpu_scan = -1, g_cpu_bare = -1;

/* Run `run` and lower *best to the CPU time it took. */
static int run_cpu(bench_run_fn run, void *ctx, bench_variant *v, double *best) {
  double t0 = process_cpu_ms();
  int rc = run(ctx, v);
  double ms = process_cpu_ms() - t0;
  if (rc == 0 && (*best < 0 || ms < *best)) *best = ms;
  return rc;
}
static int run_scan(void *ctx, bench_variant *v) {
  return run_cpu(bench_run_sql, ctx, v, &g_cpu_scan);
}
static int run_bare_scan_cpu(void *ctx, bench_variant *v) {
  return run_cpu(run_bare_scan, ctx, v, &g_cpu_bare);
}

/* Index build: a new table over the file, its row 0 (the index pass). */
static int run_index_threads(void *ctx, bench_variant *v, int threads) {
  tf1_ctx *c = ctx;
  char *sql = sqlite3_mprintf("DROP TABLE IF EXISTS temp.ix;"
                              "CREATE VIRTUAL TABLE temp.ix USING tfrecord(%Q, idx=false, "
                              "threads=%d)",
                              c->file, threads);
  int rc = bench_exec(c->db, sql, 0);
  sqlite3_free(sql);
  sqlite3_stmt *st = NULL;
  if (rc == 0 && sqlite3_prepare_v2(c->db, "SELECT count(*) FROM ix WHERE rowid = 0", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    v->r0 = 1;
    v->r1 = sqlite3_column_int64(st, 0);
  } else {
    rc = -1;
  }
  sqlite3_finalize(st);
  return rc;
}

/* The index build at threads=2 (the default: windows read ahead on a
 * helper thread) and at threads=1 (all on the query thread). */
static int run_index(void *ctx, bench_variant *v) { return run_index_threads(ctx, v, 2); }
static int run_index1(void *ctx, bench_variant *v) { return run_index_threads(ctx, v, 1); }

/* 100,000 point lookups inside BEGIN..COMMIT (r0 rows, r1 bytes). */
static int run_point(void *ctx, bench_variant *v) {
  tf1_ctx *c = ctx;
  return bench_run_point(c->db, v, c->rowids, POINT_LOOKUPS);
}

/* Convert into DIR/tf1-conv-<name>.bagz (zstd level 3, mode=replace), from
 * `from` (a table name); r0 rows, r1 1. */
static int convert(tf1_ctx *c, bench_variant *v, const char *from) {
  char *sql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE temp.conv USING bagz('%q/tf1-conv-%q.bagz', mode=replace, "
      "level=3);"
      "BEGIN; INSERT INTO conv(record) SELECT record FROM %s; COMMIT;",
      c->outdir, from, from);
  int rc = bench_exec(c->db, sql, 0);
  sqlite3_free(sql);
  sqlite3_stmt *st = NULL;
  if (rc == 0 && sqlite3_prepare_v2(c->db, "SELECT count(*) FROM conv", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    v->r0 = sqlite3_column_int64(st, 0);
    v->r1 = 1;
  } else {
    rc = -1;
  }
  sqlite3_finalize(st);
  bench_exec(c->db, "DROP TABLE IF EXISTS temp.conv", 0);
  return rc;
}
static int run_conv_tf(void *ctx, bench_variant *v) { return convert(ctx, v, "tf1"); }
static int run_conv_bag(void *ctx, bench_variant *v) { return convert(ctx, v, "tb1"); }

/* ------------------------------------------------ memrec (floor only) */

/* The floor vtab: the records of the file (in memory) as rows of one
 * column `record`, returned as the extension's record column returns
 * them (sqlite3_result_blob64, SQLITE_TRANSIENT). Test only. */
typedef struct memrec_set {
  uint8_t *file;
  const uint8_t **p;
  size_t *n;
  int64_t count;
} memrec_set;
typedef struct memrec_cursor {
  sqlite3_vtab_cursor base;
  const memrec_set *set;
  int64_t i;
} memrec_cursor;
typedef struct memrec_vtab {
  sqlite3_vtab base;
  const memrec_set *set;
} memrec_vtab;

static int memrec_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                          sqlite3_vtab **out, char **err) {
  (void)argc, (void)argv, (void)err;
  int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(record BLOB)");
  if (rc != SQLITE_OK) return rc;
  memrec_vtab *t = sqlite3_malloc(sizeof *t);
  if (!t) return SQLITE_NOMEM;
  memset(t, 0, sizeof *t);
  t->set = aux;
  *out = &t->base;
  return SQLITE_OK;
}
static int memrec_disconnect(sqlite3_vtab *v) {
  sqlite3_free(v);
  return SQLITE_OK;
}
static int memrec_best_index(sqlite3_vtab *v, sqlite3_index_info *info) {
  (void)v;
  info->estimatedCost = 1e6;
  return SQLITE_OK;
}
static int memrec_open(sqlite3_vtab *v, sqlite3_vtab_cursor **out) {
  memrec_cursor *c = sqlite3_malloc(sizeof *c);
  if (!c) return SQLITE_NOMEM;
  memset(c, 0, sizeof *c);
  c->set = ((memrec_vtab *)v)->set;
  *out = &c->base;
  return SQLITE_OK;
}
static int memrec_close(sqlite3_vtab_cursor *c) {
  sqlite3_free(c);
  return SQLITE_OK;
}
static int memrec_filter(sqlite3_vtab_cursor *c, int idx, const char *s, int argc,
                         sqlite3_value **argv) {
  (void)idx, (void)s, (void)argc, (void)argv;
  ((memrec_cursor *)c)->i = 0;
  return SQLITE_OK;
}
static int memrec_next(sqlite3_vtab_cursor *c) {
  ((memrec_cursor *)c)->i++;
  return SQLITE_OK;
}
static int memrec_eof(sqlite3_vtab_cursor *c) {
  return ((memrec_cursor *)c)->i >= ((memrec_cursor *)c)->set->count;
}
static int memrec_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i) {
  memrec_cursor *c = (memrec_cursor *)cur;
  (void)i;
  sqlite3_result_blob64(ctx, c->set->p[c->i], c->set->n[c->i], SQLITE_TRANSIENT);
  return SQLITE_OK;
}
static int memrec_rowid(sqlite3_vtab_cursor *c, sqlite3_int64 *r) {
  *r = ((memrec_cursor *)c)->i;
  return SQLITE_OK;
}
static const sqlite3_module memrec_module = {
    .iVersion = 1, .xCreate = memrec_connect, .xConnect = memrec_connect,
    .xBestIndex = memrec_best_index, .xDisconnect = memrec_disconnect,
    .xDestroy = memrec_disconnect, .xOpen = memrec_open, .xClose = memrec_close,
    .xFilter = memrec_filter, .xNext = memrec_next, .xEof = memrec_eof,
    .xColumn = memrec_column, .xRowid = memrec_rowid};

/* The file's records into s (frames parsed, no CRC), memrec registered
 * over them as temp.memrec; -1 when it cannot be read. */
static int memrec_load(sqlite3 *db, const char *path, memrec_set *s) {
  uint64_t size = 0, at = 0;
  if (!(s->file = bench_read_file(path, &size))) return -1;
  size_t cap = 0;
  while (size - at >= 16 && 16 + bench_le64(s->file + at) <= size - at) {
    if ((size_t)s->count == cap) {
      cap = cap ? 2 * cap : 1024;
      s->p = realloc(s->p, cap * sizeof *s->p);
      s->n = realloc(s->n, cap * sizeof *s->n);
      if (!s->p || !s->n) return -1;
    }
    s->n[s->count] = (size_t)bench_le64(s->file + at);
    s->p[s->count++] = s->file + at + 12;
    at += 16 + bench_le64(s->file + at);
  }
  if (sqlite3_create_module(db, "memrec", &memrec_module, s) != SQLITE_OK) return -1;
  return bench_exec(db, "CREATE VIRTUAL TABLE temp.memrec USING memrec", 0);
}

enum { V_SCAN, V_BSCAN, V_INDEX, V_BREAD, V_PTF, V_PBAG, V_GTF, V_GBAG, V_CTF, V_CBAG, V_FLOOR, V_INDEX1, NV };

/* A variant of the SQL kind, single-threaded (pinned per round). */
static void prepare(sqlite3 *db, bench_variant *v, const char *name, const char *sql,
                    bench_run_fn run) {
  bench_prepare_variant(db, v, name, sql, run);
  v->one_cpu = 1;
}

/* DIR/tf1.tfrecord from T-B1's bag, unless it is there. */
static int ensure_file(tf1_ctx *c) {
  if (access(c->file, R_OK) == 0) return 0;
  char *sql = sqlite3_mprintf(
      "CREATE VIRTUAL TABLE temp.mk USING tfrecord('%q.tmp', mode=create);"
      "BEGIN; INSERT INTO mk(record) SELECT record FROM bagz(%Q); COMMIT;"
      "DROP TABLE temp.mk;",
      c->file, c->bag);
  unlink(sqlite3_mprintf("%s.tmp", c->file));
  int rc = bench_exec(c->db, sql, 0);
  sqlite3_free(sql);
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", c->file);
  return rc == 0 ? rename(tmp, c->file) : rc;
}

static int bench_full(tf1_ctx *c, const char *dir, const char *ext, int runs) {
  snprintf(c->file, sizeof c->file, "%s/tf1.tfrecord", dir);
  snprintf(c->bag, sizeof c->bag, "%s/tb1@4.bag", dir);
  snprintf(c->outdir, sizeof c->outdir, "%s", dir);
  char *err = NULL, note[1024], sql[8600];
  if (sqlite3_open(":memory:", &c->db) != SQLITE_OK || bench_load_ext(c->db, ext, &err)) {
    fprintf(stderr, "bench_tf1: %s\n", err ? err : "cannot open");
    return 1;
  }
  if (ensure_file(c)) return 1;
  if (bench_create_vtab(c->db, "tf1", "tfrecord", c->file, "", note, sizeof note) ||
      bench_create_vtab(c->db, "tb1", "bagz", c->bag, "", note, sizeof note) ||
      bench_create_vtab(c->db, "tf1x", "tfrecord", c->file, "records=tfexample", note,
                        sizeof note) ||
      bench_create_vtab(c->db, "tb1x", "bagz", c->bag, "records=tfexample", note,
                        sizeof note)) {
    printf("NOTE: %s\n", note);
    return 1;
  }
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(c->db, "SELECT count(*) FROM tf1", -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    c->total = (uint64_t)sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (c->total == 0) return 1;
  c->rowids = bench_random_rowids(POINT_LOOKUPS, c->total, POINT_SEED);
  if (!c->rowids) return 1;
  printf("TF-1: %s, %llu records (T-B1's, from %s); sqlite %s; %d CPUs\n", c->file,
         (unsigned long long)c->total, c->bag, sqlite3_libversion(),
         (int)sysconf(_SC_NPROCESSORS_ONLN));
  printf("single-threaded variants (all but the scan and the index build at threads=2) run "
         "pinned to one CPU, the same for all in a round, the next CPU in the next round\n");
  bench_variant v[NV];
  memset(v, 0, sizeof v);
  prepare(c->db, &v[V_SCAN], "scan tf1 (CRCs)",
          "SELECT count(*), sum(length(record)) FROM tf1", run_scan);
  /* threads=2 (the default): its helper thread would inherit the pinned
   * CPU set and share the query's CPU, as B1's threads=2 scan is not */
  v[V_SCAN].one_cpu = 0;
  v[V_BSCAN] = (bench_variant){.name = "bare read + CRC-32C", .run = run_bare_scan_cpu, .ok = 1,
                               .one_cpu = 1};
  /* threads=2, unpinned as the scan; threads=1 pinned */
  v[V_INDEX] = (bench_variant){.name = "index build", .run = run_index, .ok = 1};
  v[V_INDEX1] = (bench_variant){.name = "index build threads=1", .run = run_index1, .ok = 1,
                                .one_cpu = 1};
  v[V_BREAD] = (bench_variant){.name = "bare read", .run = run_bare_read, .ok = 1, .one_cpu = 1};
  prepare(c->db, &v[V_PTF], "point tf1", "SELECT record FROM tf1 WHERE rowid = ?", run_point);
  prepare(c->db, &v[V_PBAG], "point tb1 bag", "SELECT record FROM tb1 WHERE rowid = ?",
          run_point);
  snprintf(sql, sizeof sql, BENCH_GROUP_LABEL_SQL, "tf1x");
  prepare(c->db, &v[V_GTF], "GROUP BY label tf1", sql, bench_run_sql);
  snprintf(sql, sizeof sql, BENCH_GROUP_LABEL_SQL, "tb1x");
  prepare(c->db, &v[V_GBAG], "GROUP BY label tb1", sql, bench_run_sql);
  v[V_CTF] = (bench_variant){.name = "convert tf1 -> zstd-3 bag", .run = run_conv_tf, .ok = 1,
                             .one_cpu = 1};
  v[V_CBAG] = (bench_variant){.name = "copy tb1 -> zstd-3 bag", .run = run_conv_bag, .ok = 1,
                              .one_cpu = 1};
  memrec_set mem = {0};
  v[V_FLOOR].name = "floor: memrec vtab"; /* not ok (n/a) unless loaded */
  if (memrec_load(c->db, c->file, &mem) == 0)
    prepare(c->db, &v[V_FLOOR], "floor: memrec vtab",
            "SELECT count(*), sum(length(record)) FROM memrec", bench_run_sql);
  bench_measure(c, v, NV, runs);
  int bad = 0;
  for (int i = 0; i + 1 < V_FLOOR; i += 2) /* each pair: ours, then its yardstick */
    bad += bench_check_same(&v[i + 1], &v[i], i != V_INDEX);
  if (v[V_FLOOR].ok) bad += bench_check_same(&v[V_BSCAN], &v[V_FLOOR], 1);
  bad += bench_check_same(&v[V_INDEX], &v[V_INDEX1], 1);
  bench_print_absolute(v, NV, runs, 28);
  printf("\n");
  bench_table_header();
  bench_table_row("TF-1 scan with CRCs / bare read+CRC", &v[V_SCAN], &v[V_BSCAN], 1.15);
  bench_table_row("TF-1 index build / bare read", &v[V_INDEX], &v[V_BREAD], 1.2);
  bench_table_row("TF-1 point 100k / T-B1 bag", &v[V_PTF], &v[V_PBAG], 1.2);
  bench_table_row("TF-1 GROUP BY label / T-B1 bag", &v[V_GTF], &v[V_GBAG], 1.1);
  bench_table_row("TF-1 -> zstd-3 bag / bag copy", &v[V_CTF], &v[V_CBAG], 1.1);
  bench_table_row("TF-1 index build threads=1 / bare read", &v[V_INDEX1], &v[V_BREAD], 0);
  bench_table_row("floor: memrec vtab scan / bare read+CRC", &v[V_FLOOR], &v[V_BSCAN], 0);
  /* the scan against the floor plus the CRC work of the bare loop */
  bench_variant fc = v[V_FLOOR];
  if (fc.ok && v[V_BSCAN].ok && v[V_BREAD].ok) {
    double crc = v[V_BSCAN].best_ms - v[V_BREAD].best_ms;
    fc.best_ms += crc > 0 ? crc : 0;
    fc.ntimed = 0;
  }
  bench_table_row("TF-1 scan / (floor + bare CRC work)", &v[V_SCAN], &fc, 0);
  if (g_cpu_scan > 0 && g_cpu_bare > 0)
    printf("\nCPU time per run (least, all threads): scan %.1f ms, bare read+CRC %.1f ms "
           "(%.2f); with two free CPUs the scan's wall time can come near half of its CPU "
           "time (its two threads share the work), with one shared CPU it is all of it\n",
           g_cpu_scan, g_cpu_bare, g_cpu_scan / g_cpu_bare);
  for (int i = 0; i < NV; i++) sqlite3_finalize(v[i].stmt);
  bench_exec(c->db, "DROP TABLE IF EXISTS temp.memrec", 1);
  free(mem.file);
  free(mem.p);
  free(mem.n);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  return bad ? 3 : 0;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = bench_options(argc, argv, &ext, &runs);
  if (i + 1 != argc || runs < 1) {
    fprintf(stderr, "usage: bench_tf1 [--ext PATH] [--runs N] DIR\n");
    return 2;
  }
  tf1_ctx c = {0};
  int rc = bench_full(&c, argv[i], ext, runs);
  free(c.rowids);
  if (c.db) sqlite3_close(c.db);
  return rc;
}
