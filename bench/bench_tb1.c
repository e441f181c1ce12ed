/* bench_tb1.c - benchmark driver for workload T-B1 (bagz records that are
 * tf.train.Example, issue 16; see shared/BENCHMARK.md).
 *
 *   bench_tb1 [--ext PATH] [--runs N] DIR
 *
 * DIR/tb1@4.bag (gen_tb1: 1M Examples, label int64, score float, a 32-float
 * embedding, a 64-byte image) is opened as
 *   CREATE VIRTUAL TABLE temp.tb1 USING bagz('DIR/tb1@4.bag', records=tfexample)
 * and the workload is
 *   SELECT label, count(*), avg(score) FROM tb1 GROUP BY label
 * (wrapped as sum(n), sum(CAST(avg * 1e6 AS INTEGER)) over the groups so
 * every variant's answer can be compared). Yardsticks, in the same process:
 *   - bare protobuf-c: every record unpacked from memory with
 *     tensorflow__example__unpack (malloc allocator), label and score found
 *     by name, the same per-label sums, free_unpacked;
 *   - native: the same rows (label, score, embedding, image) in a main
 *     database table DIR/tb1native.db (built once from tb1).
 * Also reported: count(*) (decodes nothing) and the scan of the raw records.
 * PATH defaults to build/datasets (run from the repo root). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"
#include "example.pb-c.h"

#define MAX_SHARDS 4
#define NLABELS 100

typedef bench_bagz_shard shard;

typedef struct tb1_ctx {
  sqlite3 *db;
  shard sh[MAX_SHARDS];
  int nsh;
  uint64_t total;
} tb1_ctx;

/* The per-label answer: r0 = rows, r1 = sum over labels of avg*1e6. */
static void answer(const int64_t *n, const double *sum, bench_variant *v) {
  int64_t rows = 0, avgs = 0;
  for (int l = 0; l < NLABELS; l++) {
    rows += n[l];
    if (n[l]) avgs += (int64_t)(sum[l] / (double)n[l] * 1e6);
  }
  v->r0 = rows;
  v->r1 = avgs;
}

/* A feature of an unpacked Example by name, or NULL. */
static const Tensorflow__Feature *feature(const Tensorflow__Example *ex,
                                          const char *name) {
  size_t len = strlen(name);
  const Tensorflow__Features *fs = ex->features;
  for (size_t i = 0; fs && i < fs->n_feature; i++)
    if (fs->feature[i]->key.len == len && !memcmp(fs->feature[i]->key.data, name, len))
      return fs->feature[i]->value;
  return NULL;
}

/* Bare protobuf-c: unpack every record, sum score per label. */
static int run_bare(void *ctx, bench_variant *v) {
  tb1_ctx *c = ctx;
  int64_t n[NLABELS] = {0};
  double sum[NLABELS] = {0};
  for (int i = 0; i < c->nsh; i++) {
    const shard *s = &c->sh[i];
    const uint8_t *lim = s->data + s->records_size;
    uint64_t start = 0;
    for (uint64_t k = 0; k < s->n; k++) {
      uint64_t end = bench_le64(lim + 8 * k);
      Tensorflow__Example *ex = tensorflow__example__unpack(NULL, end - start, s->data + start);
      start = end;
      if (!ex) return fprintf(stderr, "bench_tb1: bare: record %llu\n", (unsigned long long)k), -1;
      const Tensorflow__Feature *l = feature(ex, "label"), *sc = feature(ex, "score");
      if (l && l->kind_case == TENSORFLOW__FEATURE__KIND_INT64_LIST &&
          l->int64_list->n_value == 1 && (uint64_t)l->int64_list->value[0] < NLABELS) {
        int64_t lab = l->int64_list->value[0];
        n[lab]++;
        if (sc && sc->kind_case == TENSORFLOW__FEATURE__KIND_FLOAT_LIST &&
            sc->float_list->n_value == 1)
          sum[lab] += sc->float_list->value[0];
      }
      tensorflow__example__free_unpacked(ex, NULL);
    }
  }
  answer(n, sum, v);
  return 0;
}

enum { V_TB1, V_BARE, V_NATIVE, V_COUNT, V_RAW, NV };

/* Build DIR/tb1native.db from tb1 unless it holds every row. */
static int ensure_native(tb1_ctx *c, const char *dbpath) {
  char *sql = sqlite3_mprintf("ATTACH %Q AS nat", dbpath);
  int rc = bench_exec(c->db, sql, 0);
  sqlite3_free(sql);
  sqlite3_stmt *st = NULL;
  int64_t have = -1;
  if (rc == 0 && sqlite3_prepare_v2(c->db, "SELECT count(*) FROM nat.tb1native", -1, &st,
                                    NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    have = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (rc == 0 && have != (int64_t)c->total)
    rc = bench_exec(c->db,
                    "DROP TABLE IF EXISTS nat.tb1native;"
                    "CREATE TABLE nat.tb1native(label INTEGER, score REAL, embedding BLOB,"
                    " image BLOB);"
                    "INSERT INTO nat.tb1native SELECT label, score, embedding, image FROM tb1",
                    0);
  return rc;
}

static int bench_full(tb1_ctx *c, const char *dir, const char *ext, int runs) {
  char spec[4096], path[4200], dbpath[4096], sql[512];
  snprintf(spec, sizeof spec, "%s/tb1@4.bag", dir);
  snprintf(dbpath, sizeof dbpath, "%s/tb1native.db", dir);
  c->nsh = MAX_SHARDS;
  for (int i = 0; i < c->nsh; i++) {
    snprintf(path, sizeof path, "%s/tb1-%05d-of-%05d.bag", dir, i, MAX_SHARDS);
    if (bench_load_bagz_shard("bench_tb1", path, &c->sh[i])) return 1;
    c->total += c->sh[i].n;
  }
  char *err = NULL, note[1024];
  if (sqlite3_open(":memory:", &c->db) != SQLITE_OK || bench_load_ext(c->db, ext, &err)) {
    fprintf(stderr, "bench_tb1: %s\n", err ? err : "cannot open");
    return 1;
  }
  if (bench_create_vtab(c->db, "tb1", "bagz", spec, "records=tfexample", note, sizeof note) ||
      note[0]) {
    printf("NOTE: records=tfexample unavailable: %s\n", note);
    return 1;
  }
  if (ensure_native(c, dbpath)) return 1;
  printf("T-B1: %s, %llu records, %d shards; sqlite %s, protobuf-c %s; %d CPUs\n", spec,
         (unsigned long long)c->total, c->nsh, sqlite3_libversion(), protobuf_c_version(),
         (int)sysconf(_SC_NPROCESSORS_ONLN));
  bench_variant v[NV];
  memset(v, 0, sizeof v);
  snprintf(sql, sizeof sql, BENCH_GROUP_LABEL_SQL, "tb1");
  bench_prepare_variant(c->db, &v[V_TB1], "GROUP BY label tb1", sql, bench_run_sql);
  v[V_BARE] = (bench_variant){.name = "bare protobuf-c", .run = run_bare, .ok = 1};
  snprintf(sql, sizeof sql, BENCH_GROUP_LABEL_SQL, "nat.tb1native");
  bench_prepare_variant(c->db, &v[V_NATIVE], "GROUP BY label native", sql, bench_run_sql);
  bench_prepare_variant(c->db, &v[V_COUNT], "count(*) tb1", "SELECT count(*) FROM tb1", bench_run_sql);
  bench_prepare_variant(c->db, &v[V_RAW], "raw records tb1",
                        "SELECT count(*), sum(length(record)) FROM tb1", bench_run_sql);
  bench_measure(c, v, NV, runs);
  int bad = bench_check_same(&v[V_BARE], &v[V_NATIVE], 1) +
            bench_check_same(&v[V_BARE], &v[V_TB1], 1);
  if (v[V_COUNT].ok && v[V_COUNT].r0 != (int64_t)c->total) bad++;
  bench_print_absolute(v, NV, runs, 24);
  printf("\n");
  bench_table_header();
  bench_table_row("GROUP BY label / bare protobuf-c", &v[V_TB1], &v[V_BARE], 1.3);
  bench_table_row("GROUP BY label / native table", &v[V_TB1], &v[V_NATIVE], 0);
  bench_table_row("count(*) (decodes nothing) / GROUP BY", &v[V_COUNT], &v[V_TB1], 0);
  bench_table_row("raw record scan / GROUP BY", &v[V_RAW], &v[V_TB1], 0);
  for (int i = 0; i < NV; i++) sqlite3_finalize(v[i].stmt);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  return bad ? 3 : 0;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = bench_options(argc, argv, &ext, &runs);
  if (i + 1 != argc || runs < 1) {
    fprintf(stderr, "usage: bench_tb1 [--ext PATH] [--runs N] DIR\n");
    return 2;
  }
  tb1_ctx c = {0};
  int rc = bench_full(&c, argv[i], ext, runs);
  for (int k = 0; k < MAX_SHARDS; k++) free(c.sh[k].data);
  if (c.db) sqlite3_close(c.db);
  return rc;
}
