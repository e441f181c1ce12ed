/* bench_c1.c - benchmark driver for workload C1 (bcolz, see
 * shared/BENCHMARK.md and the Performance section of the bcolz issue).
 *
 *   bench_c1 [--ext PATH] [--runs N] DIR
 *       the full C1 table on the ctable DIR/c1 (written by gen_c1).
 *       Yardsticks: the native table c1native in DIR/c1native.db (made
 *       once by CREATE TABLE AS SELECT from the bcolz table), the bare
 *       single-thread blosc_decompress_ctx of every chunk of the five
 *       columns (already in memory), and SQLite's virtual-table row floor.
 *   bench_c1 [--ext PATH] --scan-only TABLEDIR
 *       one scan of every column of a fresh bcolz table, for peak-RSS
 *       measurement by the caller (/usr/bin/time -f %M).
 *   bench_c1 [--ext PATH] --fresh-open TABLEDIR
 *       (used by the full run) in this fresh process: CREATE VIRTUAL TABLE
 *       + read every column of row 0; prints "ms=... ok=...".
 *
 * The timed part is one process and one connection: the native database
 * is the main database, the bcolz table is the temp virtual table c1.
 * Point lookups run inside BEGIN..COMMIT. Every result is checked against
 * values computed from the decompressed columns. PATH defaults to
 * build/datasets (run from the repo root). */
#include <blosc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_common.h"

#define NCOLS 5
#define LOOKUPS 100000
/* the bare blosc_getitem yardstick does the first BARE_LOOKUPS of them
 * (it costs about as much per lookup as the vtab does today); its time is
 * scaled to LOOKUPS */
#define BARE_LOOKUPS (LOOKUPS / 10)
/* a variant whose first run takes longer than this is measured by that
 * run alone (the data is already in the page cache by then) */
#define SLOW_MS 20000.0
#define POINT_SEED UINT64_C(0xC1C1C1C1)
#define NLABELS 1000
/* score > SEL_X: scores are k/1024, k uniform in [0, 2^20): about 1% */
#define SEL_X "1013.76"

static const char *const COLNAMES[NCOLS] = {"id", "label", "score", "flag",
                                            "name"};
static const size_t ATOMS[NCOLS] = {8, 4, 8, 1, 16};
static volatile unsigned g_sink;

static int usage(void);

/* One column's chunks, as the files hold them (Blosc buffers). */
typedef struct c1col {
  uint64_t chunklen, nchunks;
  uint8_t **chunk; /* file bytes; the Blosc buffer starts at +16 */
  uint64_t *size;  /* file sizes */
  uint64_t cbytes; /* sum of the Blosc buffers */
} c1col;

/* What the queries must return, from the decompressed columns. */
typedef struct c1_expect {
  int64_t scan_sum, sum_id, sum_label;
  int64_t agg_groups, agg_hash;
  int64_t sel_count, sel_sum;
  int64_t point_sum, point_bare_sum; /* all lookups; the first BARE_LOOKUPS */
} c1_expect;

typedef struct c1_ctx {
  sqlite3 *db;
  char path[4096];
  uint64_t n;
  c1col col[NCOLS];
  uint8_t *buf; /* bare decompression target */
  size_t cap;
  int64_t *rowids;
  int64_t native_off; /* native rowid of row 0 */
  c1_expect ex;
} c1_ctx;

/* ---- the ctable files in memory (bench_read_file) ---- */

/* The unsigned integer after "key": (and an optional '[') in JSON text,
 * or -1. Enough for the one-line meta files gen_c1 and upstream write. */
static int64_t meta_uint(const char *text, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = text ? strstr(text, pat) : NULL;
  if (!p) return -1;
  p += strlen(pat);
  while (*p == ' ' || *p == '[') p++;
  return *p >= '0' && *p <= '9' ? (int64_t)strtoll(p, NULL, 10) : -1;
}

/* meta/<file> of column c as text (free it), or NULL. */
static char *col_meta(const c1_ctx *c, int col, const char *file) {
  char p[4300];
  uint64_t size;
  snprintf(p, sizeof p, "%s/%s/meta/%s", c->path, COLNAMES[col], file);
  return (char *)bench_read_file(p, &size);
}

/* Load column col: rows from meta/sizes, chunklen from meta/storage, every
 * chunk file checked (blpk header, blosc_cbuffer_validate, sizes). */
static int load_column(c1_ctx *c, int col) {
  c1col *k = &c->col[col];
  char *sizes = col_meta(c, col, "sizes"), *storage = col_meta(c, col, "storage");
  int64_t n = meta_uint(sizes, "shape"), cl = meta_uint(storage, "chunklen");
  free(sizes);
  free(storage);
  if (n < 0 || cl <= 0 || (col > 0 && (uint64_t)n != c->n)) {
    fprintf(stderr, "bench_c1: %s/%s: bad or disagreeing meta\n", c->path,
            COLNAMES[col]);
    return -1;
  }
  c->n = (uint64_t)n;
  k->chunklen = (uint64_t)cl;
  k->nchunks = (c->n + k->chunklen - 1) / k->chunklen;
  k->chunk = calloc(k->nchunks + 1, sizeof *k->chunk);
  k->size = calloc(k->nchunks + 1, sizeof *k->size);
  if (!k->chunk || !k->size) return -1;
  for (uint64_t i = 0; i < k->nchunks; i++) {
    char p[4400];
    size_t nbytes = 0, want = (size_t)((i + 1 < k->nchunks
                                            ? k->chunklen
                                            : c->n - i * k->chunklen) *
                                       ATOMS[col]);
    snprintf(p, sizeof p, "%s/%s/data/__%llu.blp", c->path, COLNAMES[col],
             (unsigned long long)i);
    k->chunk[i] = bench_read_file(p, &k->size[i]);
    if (!k->chunk[i] || k->size[i] < 32 || memcmp(k->chunk[i], "blpk", 4) ||
        blosc_cbuffer_validate(k->chunk[i] + 16, k->size[i] - 16, &nbytes) ||
        nbytes != want) {
      fprintf(stderr, "bench_c1: %s: missing or bad chunk file\n", p);
      return -1;
    }
    k->cbytes += k->size[i] - 16;
    if (nbytes > c->cap) c->cap = nbytes;
  }
  return 0;
}

static int load_table(c1_ctx *c) {
  for (int col = 0; col < NCOLS; col++)
    if (load_column(c, col)) return -1;
  c->buf = malloc(c->cap ? c->cap : 1);
  return c->buf && c->n > 0 ? 0 : -1;
}

/* Column col decompressed whole into a new array (n * atom bytes). */
static uint8_t *column_array(const c1_ctx *c, int col) {
  const c1col *k = &c->col[col];
  uint8_t *a = malloc(c->n * ATOMS[col]);
  for (uint64_t i = 0; a && i < k->nchunks; i++) {
    size_t off = (size_t)(i * k->chunklen * ATOMS[col]);
    size_t want = (size_t)(c->n * ATOMS[col]) - off;
    if (want > k->chunklen * ATOMS[col]) want = k->chunklen * ATOMS[col];
    if (blosc_decompress_ctx(k->chunk[i] + 16, a + off, want, 1) != (int)want) {
      free(a);
      return NULL;
    }
  }
  return a;
}

/* ---- the expected results, computed once from the decompressed columns */

static int compute_expected(c1_ctx *c) {
  uint8_t *a[NCOLS];
  int ok = 1;
  for (int col = 0; col < NCOLS; col++) ok &= (a[col] = column_array(c, col)) != NULL;
  int64_t count[NLABELS] = {0}, ksum[NLABELS] = {0};
  const double sel_x = atof(SEL_X);
  c1_expect *e = &c->ex;
  memset(e, 0, sizeof *e);
  int64_t *rowk = ok ? malloc(sizeof *rowk * c->n) : NULL; /* per-row checksum */
  for (uint64_t i = 0; rowk && i < c->n; i++) {
    int64_t id;
    int32_t label;
    double score;
    memcpy(&id, a[0] + 8 * i, 8);
    memcpy(&label, a[1] + 4 * i, 4);
    memcpy(&score, a[2] + 8 * i, 8);
    int64_t flag = a[3][i] != 0, k = (int64_t)(score * 1024);
    int64_t len = (int64_t)strnlen((const char *)a[4] + 16 * i, 16);
    if (label < 0 || label >= NLABELS || (double)k != score * 1024) ok = 0;
    rowk[i] = id + label + flag + len + k;
    e->scan_sum += rowk[i];
    e->sum_id += id;
    e->sum_label += label;
    if (flag && label >= 0 && label < NLABELS) {
      count[label]++;
      ksum[label] += k;
    }
    if (score > sel_x) {
      e->sel_count++;
      e->sel_sum += id + len;
    }
  }
  for (int l = 0; l < NLABELS; l++)
    if (count[l]) {
      e->agg_groups++;
      e->agg_hash += (l + 1) * count[l] + ksum[l];
    }
  for (int q = 0; rowk && q < LOOKUPS; q++) {
    e->point_sum += rowk[c->rowids[q]];
    if (q < BARE_LOOKUPS) e->point_bare_sum += rowk[c->rowids[q]];
  }
  free(rowk);
  for (int col = 0; col < NCOLS; col++) free(a[col]);
  if (!ok || !rowk)
    fprintf(stderr, "bench_c1: could not decompress %s or a value is not "
                    "what gen_c1 writes\n", c->path);
  return ok && rowk ? 0 : -1;
}

static int64_t *make_rowids(uint64_t n) {
  int64_t *r = malloc(sizeof *r * LOOKUPS);
  uint64_t st = POINT_SEED;
  for (int k = 0; r && k < LOOKUPS; k++)
    r[k] = (int64_t)(bench_splitmix64(&st) % n);
  return r;
}

/* ---- bare blosc ---- */

/* Every chunk of the five columns, blosc_decompress_ctx with one thread
 * into a reused buffer; r0 = chunks, r1 = bytes. */
static int run_bare(void *ctx, bench_variant *v) {
  c1_ctx *c = ctx;
  int64_t chunks = 0, bytes = 0;
  for (int col = 0; col < NCOLS; col++)
    for (uint64_t i = 0; i < c->col[col].nchunks; i++) {
      int got = blosc_decompress_ctx(c->col[col].chunk[i] + 16, c->buf, c->cap, 1);
      if (got <= 0) return -1;
      g_sink += c->buf[got - 1];
      chunks++;
      bytes += got;
    }
  v->r0 = chunks;
  v->r1 = bytes;
  return 0;
}

/* The cells of the first BARE_LOOKUPS point lookups: blosc_getitem of the
 * row's cell of each of the five columns (what decompressing "only the
 * block holding the row" costs with nothing else; items are Blosc typesize
 * units, so 16 one-byte items for name); r0 = rows, r1 = their checksums. */
static int run_point_bare(void *ctx, bench_variant *v) {
  c1_ctx *c = ctx;
  int64_t found = 0, sum = 0;
  for (int q = 0; q < BARE_LOOKUPS; q++) {
    uint64_t r = (uint64_t)c->rowids[q];
    uint8_t cell[NCOLS][16];
    for (int col = 0; col < NCOLS; col++) {
      const c1col *k = &c->col[col];
      int per = col == 4 ? 16 : 1; /* S16: Blosc typesize 1 */
      if (blosc_getitem(k->chunk[r / k->chunklen] + 16,
                        (int)(r % k->chunklen) * per, per,
                        cell[col]) != (int)ATOMS[col])
        return -1;
    }
    int64_t id;
    int32_t label;
    double score;
    memcpy(&id, cell[0], 8);
    memcpy(&label, cell[1], 4);
    memcpy(&score, cell[2], 8);
    found++;
    sum += id + label + (cell[3][0] != 0) + (int64_t)(score * 1024) +
           (int64_t)strnlen((const char *)cell[4], 16);
  }
  v->r0 = found;
  v->r1 = sum;
  return 0;
}

/* ---- SQL workloads with more than one result row ---- */

/* Step v->stmt to the end calling row(v, acc) per row; 0 or -1. */
static int step_all(bench_variant *v, void (*row)(sqlite3_stmt *, int64_t *),
                    int64_t acc[2]) {
  int rc;
  acc[0] = acc[1] = 0;
  while ((rc = sqlite3_step(v->stmt)) == SQLITE_ROW) row(v->stmt, acc);
  sqlite3_reset(v->stmt);
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "bench_c1: %s: %s\n", v->name,
            sqlite3_errmsg(sqlite3_db_handle(v->stmt)));
    return -1;
  }
  v->r0 = acc[0];
  v->r1 = acc[1];
  return 0;
}

/* label, sum(score), count(*): groups; (label + 1) * count + sum * 1024 */
static void agg_row(sqlite3_stmt *st, int64_t *acc) {
  acc[0]++;
  acc[1] += (sqlite3_column_int64(st, 0) + 1) * sqlite3_column_int64(st, 2) +
            llround(sqlite3_column_double(st, 1) * 1024);
}

/* id, name: rows; id + bytes of name */
static void sel_row(sqlite3_stmt *st, int64_t *acc) {
  const unsigned char *p = sqlite3_column_text(st, 1);
  int n = sqlite3_column_bytes(st, 1);
  if (p && n > 0) g_sink += p[n - 1];
  acc[0]++;
  acc[1] += sqlite3_column_int64(st, 0) + n;
}

/* bcolz_stats rows: rows; sum of count */
static void stats_row(sqlite3_stmt *st, int64_t *acc) {
  acc[0]++;
  acc[1] += sqlite3_column_int64(st, 2);
}

static int run_agg(void *ctx, bench_variant *v) {
  int64_t acc[2];
  (void)ctx;
  return step_all(v, agg_row, acc);
}

static int run_sel(void *ctx, bench_variant *v) {
  int64_t acc[2];
  (void)ctx;
  return step_all(v, sel_row, acc);
}

static int run_stats(void *ctx, bench_variant *v) {
  int64_t acc[2];
  (void)ctx;
  return step_all(v, stats_row, acc);
}

/* 100,000 lookups of the fixed rowid sequence (+ off) inside BEGIN..COMMIT,
 * every column read; r0 = rows found, r1 = sum of the row checksums. */
static int run_point(c1_ctx *c, bench_variant *v, int64_t off) {
  int64_t found = 0, sum = 0;
  if (bench_exec(c->db, "BEGIN", 0) != 0) return -1;
  for (int k = 0; k < LOOKUPS; k++) {
    sqlite3_bind_int64(v->stmt, 1, c->rowids[k] + off);
    int rc = sqlite3_step(v->stmt);
    if (rc == SQLITE_ROW) {
      const unsigned char *p = sqlite3_column_text(v->stmt, 4);
      int n = sqlite3_column_bytes(v->stmt, 4);
      if (p && n > 0) g_sink += p[0];
      found++;
      sum += sqlite3_column_int64(v->stmt, 0) + sqlite3_column_int64(v->stmt, 1) +
             llround(sqlite3_column_double(v->stmt, 2) * 1024) +
             sqlite3_column_int64(v->stmt, 3) + n;
      rc = sqlite3_step(v->stmt);
    }
    sqlite3_reset(v->stmt);
    if (rc != SQLITE_DONE) {
      fprintf(stderr, "bench_c1: %s: %s\n", v->name, sqlite3_errmsg(c->db));
      bench_exec(c->db, "COMMIT", 1);
      return -1;
    }
  }
  v->r0 = found;
  v->r1 = sum;
  return bench_exec(c->db, "COMMIT", 0);
}

static int run_point_native(void *ctx, bench_variant *v) {
  c1_ctx *c = ctx;
  return run_point(c, v, c->native_off);
}

static int run_point_c1(void *ctx, bench_variant *v) {
  return run_point(ctx, v, 0);
}

/* ---- the native yardstick database ---- */

/* Rows recorded in c1native_src by a complete build, or -1. */
static int64_t native_rows(const char *dbpath) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  if (access(dbpath, R_OK) == 0 &&
      sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT rows FROM c1native_src", -1, &st, NULL) ==
          SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Create DIR/c1native.db (CREATE TABLE AS SELECT from the bcolz table)
 * unless it holds every row. Built in a temporary file and renamed. */
static int ensure_native(c1_ctx *c, const char *dbpath, const char *ext) {
  if (native_rows(dbpath) == (int64_t)c->n) return 0;
  char tmp[4300], note[1024], *err = NULL;
  snprintf(tmp, sizeof tmp, "%s.tmp", dbpath);
  remove(tmp);
  printf("building %s ...\n", dbpath);
  fflush(stdout);
  sqlite3 *db = NULL;
  int rc = sqlite3_open(tmp, &db) == SQLITE_OK ? 0 : -1;
  if (rc == 0 && bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "bench_c1: load %s: %s\n", ext, err ? err : "?");
    rc = -1;
  }
  sqlite3_free(err);
  if (rc == 0 &&
      bench_create_vtab(db, "c1src", "bcolz", c->path, "", note, sizeof note)) {
    fprintf(stderr, "bench_c1: %s\n", note);
    rc = -1;
  }
  if (rc == 0)
    rc = bench_exec(db,
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                    "CREATE TABLE c1native AS SELECT id, label, score, flag, "
                    "name FROM temp.c1src;"
                    "CREATE TABLE c1native_src(rows INTEGER);"
                    "INSERT INTO c1native_src SELECT count(*) FROM c1native;"
                    "COMMIT",
                    0);
  sqlite3_close(db);
  if (rc == 0) rc = rename(tmp, dbpath);
  if (rc != 0) {
    fprintf(stderr, "bench_c1: could not build %s\n", dbpath);
    remove(tmp);
  }
  return rc;
}

/* ---- open, in a fresh process ---- */

/* CREATE VIRTUAL TABLE + every column of row 0, timed, in this process. */
static int fresh_open(const char *path, const char *ext) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *err = NULL, note[1024] = "";
  int ok = 0;
  sqlite3_open(":memory:", &db);
  if (bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "bench_c1: load %s: %s\n", ext, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 1;
  }
  double t0 = bench_now_ms();
  if (bench_create_vtab(db, "t", "bcolz", path, "", note, sizeof note) == 0 &&
      sqlite3_prepare_v2(db, "SELECT * FROM t WHERE rowid = 0", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++)
      g_sink += (unsigned)sqlite3_column_bytes(st, i);
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  double ms = bench_now_ms() - t0;
  if (!ok)
    fprintf(stderr, "bench_c1: fresh open failed: %s\n",
            note[0] ? note : sqlite3_errmsg(db));
  printf("ms=%.4f ok=%d\n", ms, ok);
  sqlite3_close(db);
  return ok ? 0 : 1;
}

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

/* A warm-up and `runs` runs of `bench_c1 --fresh-open PATH`, each in a new
 * process; the minimum time, or -1. */
static double run_fresh_open(const char *path, const char *ext, int runs) {
  char exe[4096], qe[8300], qx[8300], qp[8300], cmd[26000];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  double best = -1;
  if (el <= 0) return -1;
  exe[el] = '\0';
  shell_quote(exe, qe, sizeof qe);
  shell_quote(ext, qx, sizeof qx);
  shell_quote(path, qp, sizeof qp);
  snprintf(cmd, sizeof cmd, "%s --ext %s --fresh-open %s", qe, qx, qp);
  for (int i = 0; i <= runs; i++) {
    FILE *p = popen(cmd, "r");
    char line[256] = "";
    double ms;
    int ok = 0;
    if (!p || !fgets(line, sizeof line, p) ||
        sscanf(line, "ms=%lf ok=%d", &ms, &ok) != 2)
      ok = 0;
    if (p && pclose(p) != 0) ok = 0;
    if (!ok) return -1;
    if (i > 0 && (best < 0 || ms < best)) best = ms;
  }
  return best;
}

/* ---- chunks decompressed by sum(label): the bcolz_decoded counter ---- */

/* Per-column counts from bcolz_decoded(path) into cnt (by COLNAMES);
 * 1 = read, 0 = no such function (why in note), -1 = other error. */
static int read_decoded(c1_ctx *c, int64_t cnt[NCOLS], int64_t *other,
                        char *note, size_t cap) {
  sqlite3_stmt *st = NULL;
  memset(cnt, 0, sizeof(int64_t) * NCOLS);
  *other = 0;
  if (sqlite3_prepare_v2(c->db,
                         "SELECT key, value FROM json_each(bcolz_decoded(?1))",
                         -1, &st, NULL) != SQLITE_OK) {
    snprintf(note, cap, "%s", sqlite3_errmsg(c->db));
    sqlite3_finalize(st);
    return strstr(note, "no such function") ? 0 : -1;
  }
  sqlite3_bind_text(st, 1, c->path, -1, SQLITE_STATIC);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    const char *key = (const char *)sqlite3_column_text(st, 0);
    int64_t v = sqlite3_column_int64(st, 1);
    int hit = 0;
    for (int col = 0; key && col < NCOLS; col++) {
      size_t kl = strlen(key), nl = strlen(COLNAMES[col]);
      if (kl >= nl && strcmp(key + kl - nl, COLNAMES[col]) == 0 &&
          (kl == nl || key[kl - nl - 1] == '/')) {
        cnt[col] += v;
        hit = 1;
      }
    }
    if (!hit) *other += v;
  }
  if (rc != SQLITE_DONE) snprintf(note, cap, "%s", sqlite3_errmsg(c->db));
  sqlite3_finalize(st);
  return rc == SQLITE_DONE ? 1 : -1;
}

/* Run sum(label) once between two readings of the counter and print the
 * difference; one table-style row, PASS when only label chunks were
 * decompressed. */
static void decoded_check(c1_ctx *c, bench_variant *proj, char *row,
                          size_t cap) {
  int64_t before[NCOLS], after[NCOLS], ob, oa;
  char note[512] = "";
  int r = read_decoded(c, before, &ob, note, sizeof note);
  if (r == 1 && proj->ok && bench_run_sql(NULL, proj) == 0)
    r = read_decoded(c, after, &oa, note, sizeof note);
  else if (r == 1)
    r = -1;
  if (r != 1) {
    printf("proj: chunk counter not checked: %s\n",
           r == 0 ? "bcolz_decoded() is not in this build (no such function)"
                  : note);
    snprintf(row, cap, "%-46s %10s %10s %7s  %s", "proj: chunks of other columns decoded",
             "n/a", "-", "-",
             r == 0 ? "= 0 n/a (no bcolz_decoded)" : "= 0 n/a (error)");
    return;
  }
  int64_t others = oa - ob;
  printf("proj: chunks decompressed by one SELECT sum(label) (bcolz_decoded, "
         "after - before):");
  for (int col = 0; col < NCOLS; col++) {
    printf(" %s %+lld", COLNAMES[col], (long long)(after[col] - before[col]));
    if (col != 1) others += after[col] - before[col];
  }
  printf(" (label has %llu chunks)\n", (unsigned long long)c->col[1].nchunks);
  char o[32];
  snprintf(o, sizeof o, "%lld", (long long)others);
  snprintf(row, cap, "%-46s %10s %10s %7s  %s", "proj: chunks of other columns decoded", o,
           "-", "-",
           others == 0 && after[1] > before[1] ? "= 0 PASS" : "= 0 MISS");
}

/* ---- the full benchmark ---- */

enum {
  V_SNATIVE, V_SC1, V_BARE, V_IDNATIVE, V_IDC1, V_FLOOR, V_AGGNATIVE, V_AGGC1,
  V_LNATIVE, V_LC1, V_SELNATIVE, V_SELC1, V_STATS, V_PNATIVE, V_PC1, V_PBARE, NV
};

static const char *const SCAN_SQL =
    "SELECT count(*), sum(id) + sum(label) + sum(flag) + sum(length(name)) + "
    "CAST(sum(score) * 1024 AS INTEGER) FROM ";
static const char *const AGG_SQL =
    "SELECT label, sum(score), count(*) FROM %s WHERE flag GROUP BY label";
static const char *const SEL_SQL = "SELECT id, name FROM %s WHERE score > " SEL_X;

static void prepare_sql(sqlite3 *db, bench_variant *v, const char *name,
                        const char *sql, bench_run_fn run) {
  v->name = name;
  v->run = run;
  bench_prepare(db, sql, v);
}

/* The variants over table t: side 0 = native, side 1 = c1 (the slot after
 * each native one). */
static void prepare_side(sqlite3 *db, bench_variant *v, const char *t,
                         int side, const char *const names[6]) {
  char sql[512];
  snprintf(sql, sizeof sql, "%s%s", SCAN_SQL, t);
  prepare_sql(db, &v[V_SNATIVE + side], names[0], sql, bench_run_sql);
  snprintf(sql, sizeof sql, "SELECT sum(id) FROM %s", t);
  prepare_sql(db, &v[V_IDNATIVE + side], names[1], sql, bench_run_sql);
  snprintf(sql, sizeof sql, AGG_SQL, t);
  prepare_sql(db, &v[V_AGGNATIVE + side], names[2], sql, run_agg);
  snprintf(sql, sizeof sql, "SELECT sum(label) FROM %s", t);
  prepare_sql(db, &v[V_LNATIVE + side], names[3], sql, bench_run_sql);
  snprintf(sql, sizeof sql, SEL_SQL, t);
  prepare_sql(db, &v[V_SELNATIVE + side], names[4], sql, run_sel);
  snprintf(sql, sizeof sql,
           "SELECT id, label, score, flag, name FROM %s WHERE rowid = ?", t);
  prepare_sql(db, &v[V_PNATIVE + side], names[5], sql,
              side ? run_point_c1 : run_point_native);
}

static void setup_variants(c1_ctx *c, bench_variant *v, int have) {
  static const char *const native[6] = {
      "scan native", "sum(id) native", "agg native", "sum(label) native",
      "selective native", "point native"};
  static const char *const c1[6] = {"scan c1", "sum(id) c1", "agg c1",
                                    "sum(label) c1", "selective c1",
                                    "point c1"};
  static const int c1_slot[6] = {V_SC1, V_IDC1, V_AGGC1, V_LC1, V_SELC1, V_PC1};
  memset(v, 0, sizeof *v * NV);
  prepare_side(c->db, v, "c1native", 0, native);
  if (have) prepare_side(c->db, v, "c1", 1, c1);
  else
    for (int k = 0; k < 6; k++) v[c1_slot[k]].name = c1[k];
  v[V_BARE] = (bench_variant){.name = "bare blosc 5 columns", .run = run_bare,
                              .ok = 1};
  v[V_PBARE] = (bench_variant){.name = "point bare getitem x10",
                               .run = run_point_bare, .ok = 1};
  char sql[4400], note[512];
  v[V_STATS].name = "bcolz_stats";
  if (have) {
    char *q = sqlite3_mprintf("SELECT * FROM bcolz_stats(%Q)", c->path);
    snprintf(sql, sizeof sql, "%s", q);
    sqlite3_free(q);
    prepare_sql(c->db, &v[V_STATS], "bcolz_stats", sql, run_stats);
  }
  v[V_FLOOR].name = "row floor";
  v[V_FLOOR].run = bench_run_sql;
  bench_row_floor(c->db, (int64_t)c->n, &v[V_FLOOR], note, sizeof note);
  if (note[0]) printf("NOTE: %s\n", note);
}

/* bench_measure (a warm-up, then `runs` interleaved rounds) except that a
 * variant whose warm-up takes longer than SLOW_MS is not run again: that
 * one run is its figure (said in a NOTE). */
static void measure(c1_ctx *c, bench_variant *v, int n, int runs) {
  int slow[NV] = {0};
  for (int i = 0; i < n; i++) {
    v[i].best_ms = -1;
    v[i].ntimed = 0;
  }
  for (int r = 0; r <= runs; r++)
    for (int i = 0; i < n; i++) {
      if (!v[i].ok || slow[i]) continue;
      int rc;
      double ms = bench_run_in_round(c, &v[i], r, &rc);
      if (rc != 0) {
        fprintf(stderr, "bench: %s failed; dropped\n", v[i].name);
        v[i].ok = 0;
      } else if (r == 0 && ms > SLOW_MS && runs > 0) {
        slow[i] = 1;
        v[i].best_ms = ms;
        printf("NOTE: %s took %.1f s in its first run: measured by that run "
               "alone (data already in the page cache)\n", v[i].name, ms / 1e3);
        fflush(stdout);
      } else if (r > 0) {
        bench_record(&v[i], ms);
      }
    }
  if (v[V_PBARE].ok) bench_scale(&v[V_PBARE], (double)LOOKUPS / BARE_LOOKUPS);
}

/* A variant's results against the expected values (r1 < 0: not checked). */
static int check_known(const bench_variant *v, int64_t r0, int64_t r1) {
  if (!v->ok || (v->r0 == r0 && (r1 < 0 || v->r1 == r1))) return 0;
  printf("!!!!!!!! MISMATCH: %s gave (%lld, %lld), expected (%lld, %lld)\n",
         v->name, (long long)v->r0, (long long)v->r1, (long long)r0,
         (long long)r1);
  return 1;
}

static int check_results(const c1_ctx *c, const bench_variant *v) {
  const c1_expect *e = &c->ex;
  int64_t n = (int64_t)c->n, chunks = 0;
  int bad = 0;
  for (int col = 0; col < NCOLS; col++) chunks += (int64_t)c->col[col].nchunks;
  for (int side = 0; side < 2; side++) {
    bad += check_known(&v[V_SNATIVE + side], n, e->scan_sum);
    bad += check_known(&v[V_IDNATIVE + side], e->sum_id, -1);
    bad += check_known(&v[V_AGGNATIVE + side], e->agg_groups, e->agg_hash);
    bad += check_known(&v[V_LNATIVE + side], e->sum_label, -1);
    bad += check_known(&v[V_SELNATIVE + side], e->sel_count, e->sel_sum);
    bad += check_known(&v[V_PNATIVE + side], LOOKUPS, e->point_sum);
  }
  bad += check_known(&v[V_PBARE], BARE_LOOKUPS, e->point_bare_sum);
  bad += check_known(&v[V_BARE], chunks, n * (8 + 4 + 8 + 1 + 16));
  bad += check_known(&v[V_STATS], NCOLS, NCOLS * n);
  bad += check_known(&v[V_FLOOR], n * (n - 1) / 2, -1);
  return bad;
}

static void print_absolute(const bench_variant *v, int n, int runs) {
  printf("\nabsolute times (min of %d runs after a warm-up, interleaved):\n",
         runs);
  for (int i = 0; i < n; i++)
    if (v[i].ok)
      printf("  %-22s %9.1f ms   -> (%lld, %lld)\n", v[i].name, v[i].best_ms,
             (long long)v[i].r0, (long long)v[i].r1);
    else if (v[i].name)
      printf("  %-22s       n/a\n", v[i].name);
}

static void print_table(const bench_variant *v, const char *decoded_row,
                        double open_ms) {
  printf("\n");
  bench_table_header();
  bench_table_row("sum(id) / vtab row floor", &v[V_IDC1], &v[V_FLOOR], 1.2);
  bench_table_row("sum(id) / native", &v[V_IDC1], &v[V_IDNATIVE], 1.0);
  bench_table_row("agg WHERE flag GROUP BY label / native", &v[V_AGGC1],
                  &v[V_AGGNATIVE], 1.0);
  bench_table_row("selective score > x (1%), id+name / native",
                  &v[V_SELC1], &v[V_SELNATIVE], 0.33);
  bench_table_row("bcolz_stats / bare blosc 5 columns", &v[V_STATS],
                  &v[V_BARE], 2.0);
  bench_table_row("point 100k, BEGIN..COMMIT / native", &v[V_PC1],
                  &v[V_PNATIVE], 8.0);
  bench_table_row("point c1 / bare getitem (10k lookups x10)",
                  &v[V_PC1], &v[V_PBARE], 0);
  bench_table_row("point bare getitem (10k lookups x10) / native", &v[V_PBARE],
                  &v[V_PNATIVE], 0);
  bench_table_row("proj sum(label) / scan all columns", &v[V_LC1], &v[V_SC1],
                  0);
  printf("%s\n", decoded_row);
  bench_table_row("sum(label) / native", &v[V_LC1], &v[V_LNATIVE], 0);
  bench_table_row("scan all columns / native", &v[V_SC1], &v[V_SNATIVE], 0);
  bench_table_row("scan all columns / bare blosc 5 columns", &v[V_SC1],
                  &v[V_BARE], 0);
  bench_table_row("bare blosc 5 columns / scan native", &v[V_BARE],
                  &v[V_SNATIVE], 0);
  bench_table_row("row floor / sum(id) native", &v[V_FLOOR], &v[V_IDNATIVE],
                  0);
  char o[32] = "n/a";
  if (open_ms >= 0) snprintf(o, sizeof o, "%.2f", open_ms);
  printf("%-46s %10s %10s %7s  %s\n", "open: CREATE VIRTUAL TABLE + row 0 (ms)",
         o, "-", "-", "(info, absolute)");
}

static int open_main(c1_ctx *c, const char *dbpath, const char *ext) {
  if (sqlite3_open_v2(dbpath, &c->db, SQLITE_OPEN_READWRITE, NULL) !=
      SQLITE_OK) {
    fprintf(stderr, "bench_c1: open %s: %s\n", dbpath, sqlite3_errmsg(c->db));
    return -1;
  }
  sqlite3_stmt *st = NULL;
  c->native_off = -1;
  if (sqlite3_prepare_v2(c->db, "SELECT rowid - id FROM c1native WHERE id = 0 "
                                "AND rowid = (SELECT min(rowid) FROM c1native)",
                         -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    c->native_off = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  if (c->native_off < 0) {
    fprintf(stderr, "bench_c1: %s: c1native does not start with id 0\n", dbpath);
    return -1;
  }
  char *err = NULL, note[1024];
  if (bench_load_ext(c->db, ext, &err) != 0) {
    printf("NOTE: extension %s not loaded (%s): c1 rows are n/a\n", ext,
           err ? err : "?");
    sqlite3_free(err);
    return 0;
  }
  if (bench_create_vtab(c->db, "c1", "bcolz", c->path, "", note, sizeof note)) {
    printf("NOTE: no bcolz virtual table (%s): c1 rows are n/a\n", note);
    return 0;
  }
  return 1;
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

static void print_dataset(const c1_ctx *c) {
  uint64_t cb = 0;
  for (int col = 0; col < NCOLS; col++) cb += c->col[col].cbytes;
  printf("C1: %s, %llu rows, %.1f MB of Blosc chunks (%.1f MB raw); sqlite %s, "
         "c-blosc %s; %d CPUs\n",
         c->path, (unsigned long long)c->n, (double)cb / 1e6,
         (double)c->n * (8 + 4 + 8 + 1 + 16) / 1e6, sqlite3_libversion(),
         BLOSC_VERSION_STRING, (int)sysconf(_SC_NPROCESSORS_ONLN));
  for (int col = 0; col < NCOLS; col++)
    printf("  %-5s chunklen %7llu, %4llu chunks, %7.1f MB compressed\n",
           COLNAMES[col], (unsigned long long)c->col[col].chunklen,
           (unsigned long long)c->col[col].nchunks,
           (double)c->col[col].cbytes / 1e6);
  printf("  selective: score > %s matches %lld rows (%.2f%%)\n", SEL_X,
         (long long)c->ex.sel_count, 100.0 * (double)c->ex.sel_count / (double)c->n);
}

static int bench_full(c1_ctx *c, const char *dir, const char *ext, int runs) {
  char dbpath[4200];
  snprintf(c->path, sizeof c->path, "%s/c1", dir);
  snprintf(dbpath, sizeof dbpath, "%s/c1native.db", dir);
  if (load_table(c) != 0) return 1;
  if (!(c->rowids = make_rowids(c->n)) || compute_expected(c) != 0) return 1;
  if (ensure_native(c, dbpath, ext) != 0) return 1;
  int have = open_main(c, dbpath, ext);
  if (have < 0) return 1;
  print_dataset(c);
  char sql[512];
  snprintf(sql, sizeof sql, SEL_SQL, "c1");
  if (have) print_plan(c->db, "selective c1", sql);
  fflush(stdout);
  bench_variant v[NV];
  setup_variants(c, v, have);
  /* bcolz reads on the querying thread only: every variant pinned per
   * round (bench_common.h, one_cpu) */
  for (int i = 0; i < NV; i++) v[i].one_cpu = 1;
  printf("every variant runs pinned to one CPU, the same for all in a round, "
         "the next CPU in the next round\n");
  measure(c, v, NV, runs);
  char decoded[256];
  decoded_check(c, &v[V_LC1], decoded, sizeof decoded);
  double open_ms = have ? run_fresh_open(c->path, ext, runs) : -1;
  int bad = check_results(c, v);
  print_absolute(v, NV, runs);
  print_table(v, decoded, open_ms);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  for (int i = 0; i < NV; i++) sqlite3_finalize(v[i].stmt);
  return bad ? 3 : 0;
}

/* ---- peak-memory mode: one scan in a fresh process ---- */

static int scan_only(const char *path, const char *ext) {
  char sql[512];
  snprintf(sql, sizeof sql, "%st", SCAN_SQL);
  return bench_scan_only("bench_c1", ext, "bcolz", path, "", sql, path);
}

static void free_ctx(c1_ctx *c) {
  if (c->db) sqlite3_close(c->db);
  for (int col = 0; col < NCOLS; col++) {
    for (uint64_t i = 0; c->col[col].chunk && i < c->col[col].nchunks; i++)
      free(c->col[col].chunk[i]);
    free(c->col[col].chunk);
    free(c->col[col].size);
  }
  free(c->buf);
  free(c->rowids);
}

static int usage(void) {
  fprintf(stderr,
          "usage: bench_c1 [--ext PATH] [--runs N] DIR\n"
          "       bench_c1 [--ext PATH] --scan-only TABLEDIR\n"
          "       bench_c1 [--ext PATH] --fresh-open TABLEDIR\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = 1;
  for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0 &&
         strcmp(argv[i], "--scan-only") != 0 &&
         strcmp(argv[i], "--fresh-open") != 0;
       i += 2) {
    if (strcmp(argv[i], "--ext") == 0) ext = argv[i + 1];
    else if (strcmp(argv[i], "--runs") == 0) runs = atoi(argv[i + 1]);
    else return usage();
  }
  if (i < argc && strcmp(argv[i], "--scan-only") == 0)
    return i + 2 == argc ? scan_only(argv[i + 1], ext) : usage();
  if (i < argc && strcmp(argv[i], "--fresh-open") == 0)
    return i + 2 == argc ? fresh_open(argv[i + 1], ext) : usage();
  if (i + 1 != argc || runs < 1) return usage();
  c1_ctx c = {0};
  blosc_init();
  int rc = bench_full(&c, argv[i], ext, runs);
  free_ctx(&c);
  blosc_destroy();
  return rc;
}
