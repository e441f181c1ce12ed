/* bench_a1.c - benchmark driver for workload A1 (atlas, see
 * shared/BENCHMARK.md).
 *
 *   bench_a1 [--ext PATH] [--runs N] DIR
 *       the full A1 table on the dataset DIR/a1 (written by gen_a1.py).
 *       Yardsticks: the native table in DIR/a1native.db (created once from
 *       the atlas virtual table if missing), the bare decompression of the
 *       blocks in C (ZSTD_decompress_usingDDict with the shared dictionary,
 *       blocks located through index.npy, files in memory), and CPython's
 *       C unpickler (/usr/bin/python3, pickle.loads) on the same
 *       decompressed blocks as our pickle decoder.
 *   bench_a1 [--ext PATH] --scan-only DATASET
 *       one scan of a fresh atlas table over DATASET, for peak-RSS
 *       measurement by the caller (/usr/bin/time -f %M).
 *   bench_a1 [--ext PATH] --fresh open DATASET
 *       (used by the full run) CREATE VIRTUAL TABLE + read every column of
 *       row 0, timed, in this fresh process.
 *
 * The timed part is one process and one connection: the native database is
 * the main database and the atlas table the temp virtual table a1. Point
 * lookups run inside BEGIN..COMMIT. Info rows: the scan on a table with
 * threads=1 (no read-ahead thread; the default is 2) and the lookups on a table with
 * cache_mb=512 (decoded blocks kept between lookups). The pickle decoder is this tree's
 * src/decoders/pickle.c compiled into the driver. PATH defaults to
 * build/datasets (run from the repo root). */
#include <errno.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <jansson.h>
#include <zstd.h>

#include "bench_common.h"
#include "core/npy.h"
#include "core/value.h"
#include "decoders/pickle.h"

#define LOOKUPS 100000
#define POINT_SEED UINT64_C(0xA1A1A1A1)
#define MAX_SHARDS 64
#define PYTHON "/usr/bin/python3"

static volatile unsigned g_sink;

/* One shard in memory: data.bin and its block offsets from index.npy. */
typedef struct a1_shard {
  uint8_t *data;
  uint64_t size;
  uint64_t *offs;   /* nblocks + 1 */
  uint64_t nblocks;
  uint64_t count;   /* stored_examples */
  uint64_t bsize;   /* block_size */
  uint64_t first;   /* global index of its first example */
} a1_shard;

typedef struct a1_ctx {
  sqlite3 *db;
  a1_shard sh[MAX_SHARDS];
  size_t nsh;
  uint64_t n, nblocks, raw_bytes, dict_size;
  ZSTD_DDict *ddict;
  ZSTD_DCtx *dctx;
  uint8_t *out;      /* reused decompression buffer */
  size_t out_cap;
  /* every block decompressed once: the pickle decoder's input */
  uint8_t *pk;
  uint64_t *pk_offs; /* nblocks + 1 */
  ds_arena arena;
  int64_t *rowids;
  /* the CPython child */
  pid_t py_pid;
  FILE *py_in, *py_out;
  int py_calls;
  double py_best;
  int py_n;                          /* the child's timed loops (spread) */
  double py_ms[BENCH_MAX_TIMED];
  int64_t py_items, py_text;
  int64_t our_text;
} a1_ctx;

static int usage(void);

/* ---- files (bench_read_file) ---- */

static int json_u64(json_t *o, const char *key, uint64_t *v) {
  json_t *x = json_object_get(o, key);
  if (!json_is_integer(x) || json_integer_value(x) < 0) return -1;
  *v = (uint64_t)json_integer_value(x);
  return 0;
}

/* index.npy of a shard as widened offsets, through src/core/npy.c. */
static int load_index(a1_shard *s, const char *path) {
  uint64_t n = 0;
  uint8_t *raw = bench_read_file(path, &n);
  ds_npy a;
  char *err = NULL;
  int rc = -1;
  if (!raw || ds_npy_parse(raw, n, &a, &err) != 0) {
    fprintf(stderr, "bench_a1: %s: %s\n", path, err ? err : "cannot read");
  } else if (a.kind != 'u' || a.ndim != 1 || a.count < 1 ||
             a.byteorder == '>') {
    fprintf(stderr, "bench_a1: %s: not a 1-D little-endian unsigned array\n",
            path);
  } else if ((s->offs = malloc(a.count * sizeof *s->offs)) != NULL) {
    for (uint64_t i = 0; i < a.count; i++) {
      const uint8_t *p = a.data + i * a.itemsize;
      uint64_t v = 0;
      for (uint32_t k = 0; k < a.itemsize; k++) v |= (uint64_t)p[k] << (8 * k);
      s->offs[i] = v;
    }
    s->nblocks = a.count - 1;
    rc = 0;
  }
  free(err);
  free(raw);
  return rc;
}

/* The dataset root: meta.json, zstd_dict.bin and every shard in memory. */
static int load_dataset(a1_ctx *c, const char *root) {
  char path[4200];
  json_error_t je;
  snprintf(path, sizeof path, "%s/meta.json", root);
  json_t *meta = json_load_file(path, 0, &je);
  json_t *sizes = meta ? json_object_get(meta, "shard_sizes") : NULL;
  if (!json_is_array(sizes) || json_array_size(sizes) == 0 ||
      json_array_size(sizes) > MAX_SHARDS) {
    fprintf(stderr, "bench_a1: %s: no usable shard_sizes\n", path);
    json_decref(meta);
    return -1;
  }
  c->nsh = json_array_size(sizes);
  json_decref(meta);
  int width = snprintf(NULL, 0, "%zu", c->nsh - 1);
  for (size_t k = 0; k < c->nsh; k++) {
    a1_shard *s = &c->sh[k];
    snprintf(path, sizeof path, "%s/%0*zu/meta.json", root, width, k);
    json_t *m = json_load_file(path, 0, &je);
    int bad = !m || json_u64(m, "stored_examples", &s->count) ||
              json_u64(m, "block_size", &s->bsize) || s->bsize == 0;
    json_decref(m);
    if (bad) {
      fprintf(stderr, "bench_a1: %s: unreadable\n", path);
      return -1;
    }
    snprintf(path, sizeof path, "%s/%0*zu/index.npy", root, width, k);
    if (load_index(s, path) != 0) return -1;
    snprintf(path, sizeof path, "%s/%0*zu/data.bin", root, width, k);
    s->data = bench_read_file(path, &s->size);
    if (!s->data || s->offs[0] != 0 || s->offs[s->nblocks] != s->size ||
        s->nblocks != (s->count + s->bsize - 1) / s->bsize) {
      fprintf(stderr, "bench_a1: %s: missing or does not match index.npy\n",
              path);
      return -1;
    }
    s->first = c->n;
    c->n += s->count;
    c->nblocks += s->nblocks;
  }
  uint64_t dn = 0;
  snprintf(path, sizeof path, "%s/zstd_dict.bin", root);
  uint8_t *dict = bench_read_file(path, &dn);
  c->dict_size = dn;
  c->ddict = dict ? ZSTD_createDDict(dict, dn) : NULL;
  free(dict);
  c->dctx = ZSTD_createDCtx();
  if (!c->ddict || !c->dctx) {
    fprintf(stderr, "bench_a1: %s: cannot load the dictionary\n", path);
    return -1;
  }
  return 0;
}

/* ---- bare decompression ---- */

/* Decompress block b of shard s into c->out; returns its size, or -1. */
static int64_t decompress_block(a1_ctx *c, const a1_shard *s, uint64_t b) {
  const uint8_t *src = s->data + s->offs[b];
  size_t n = s->offs[b + 1] - s->offs[b];
  unsigned long long cs = ZSTD_getFrameContentSize(src, n);
  if (cs == ZSTD_CONTENTSIZE_UNKNOWN || cs == ZSTD_CONTENTSIZE_ERROR ||
      cs > ((size_t)1 << 30))
    return -1;
  if (cs > c->out_cap) {
    size_t cap = c->out_cap ? c->out_cap : 4096;
    while (cap < cs) cap *= 2;
    uint8_t *p = realloc(c->out, cap);
    if (!p) return -1;
    c->out = p;
    c->out_cap = cap;
  }
  size_t r = ZSTD_decompress_usingDDict(c->dctx, c->out, c->out_cap, src, n,
                                        c->ddict);
  if (ZSTD_isError(r) || r != cs) return -1;
  g_sink += c->out[r - 1];
  return (int64_t)r;
}

/* Every block of every shard, one thread; r0 = blocks, r1 = bytes out. */
static int run_bare(void *ctx, bench_variant *v) {
  a1_ctx *c = ctx;
  int64_t blocks = 0, bytes = 0;
  for (size_t k = 0; k < c->nsh; k++)
    for (uint64_t b = 0; b < c->sh[k].nblocks; b++) {
      int64_t r = decompress_block(c, &c->sh[k], b);
      if (r < 0) {
        fprintf(stderr, "bench_a1: bare: shard %zu block %llu corrupt\n", k,
                (unsigned long long)b);
        return -1;
      }
      blocks++;
      bytes += r;
    }
  v->r0 = blocks;
  v->r1 = bytes;
  return 0;
}

/* Shard and block of global example g. */
static void locate(const a1_ctx *c, uint64_t g, size_t *k, uint64_t *b) {
  size_t s = 0;
  while (s + 1 < c->nsh && g >= c->sh[s + 1].first) s++;
  *k = s;
  *b = (g - c->sh[s].first) / c->sh[s].bsize;
}

/* The block of each looked-up row, same sequence as the point workload;
 * r0 = lookups, r1 = bytes out. */
static int run_point_bare(void *ctx, bench_variant *v) {
  a1_ctx *c = ctx;
  int64_t found = 0, bytes = 0;
  for (int i = 0; i < LOOKUPS; i++) {
    size_t k;
    uint64_t b;
    locate(c, (uint64_t)c->rowids[i], &k, &b);
    int64_t r = decompress_block(c, &c->sh[k], b);
    if (r < 0) return -1;
    found++;
    bytes += r;
  }
  v->r0 = found;
  v->r1 = bytes;
  return 0;
}

/* ---- the pickle decoders ---- */

/* Decompress every block once into c->pk (the decoders' input). */
static int decompress_all(a1_ctx *c) {
  uint64_t cap = 0, pos = 0, i = 0;
  for (size_t k = 0; k < c->nsh; k++)
    for (uint64_t b = 0; b < c->sh[k].nblocks; b++) {
      const a1_shard *s = &c->sh[k];
      cap += ZSTD_getFrameContentSize(s->data + s->offs[b],
                                      s->offs[b + 1] - s->offs[b]);
    }
  c->pk = malloc(cap ? cap : 1);
  c->pk_offs = malloc((c->nblocks + 1) * sizeof *c->pk_offs);
  if (!c->pk || !c->pk_offs) return -1;
  for (size_t k = 0; k < c->nsh; k++)
    for (uint64_t b = 0; b < c->sh[k].nblocks; b++) {
      int64_t r = decompress_block(c, &c->sh[k], b);
      if (r < 0 || pos + (uint64_t)r > cap) return -1;
      memcpy(c->pk + pos, c->out, (size_t)r);
      c->pk_offs[i++] = pos;
      pos += (uint64_t)r;
    }
  c->pk_offs[i] = pos;
  c->raw_bytes = pos;
  return 0;
}

/* Sum of the lengths (in characters) of every example's "text" value. */
static int64_t text_chars(const ds_value *list) {
  int64_t sum = 0;
  for (size_t e = 0; e < list->u.list.n; e++) {
    const ds_value *m = &list->u.list.items[e];
    if (m->type != DS_V_MAP) return -1;
    for (size_t j = 0; j < m->u.list.n; j++) {
      const ds_value *key = &m->u.list.items[2 * j], *val = key + 1;
      if (key->type == DS_V_TEXT && key->u.s.n == 4 &&
          memcmp(key->u.s.p, "text", 4) == 0 && val->type == DS_V_TEXT)
        for (size_t q = 0; q < val->u.s.n; q++)
          sum += (val->u.s.p[q] & 0xC0) != 0x80;
    }
  }
  return sum;
}

/* Our decoder over block i; the list's length, or -1. */
static int64_t decode_one(a1_ctx *c, uint64_t i, ds_value *list) {
  char *err = NULL;
  ds_arena_reset(&c->arena);
  if (ds_pickle_decode(c->pk + c->pk_offs[i], c->pk_offs[i + 1] - c->pk_offs[i],
                       NULL, &c->arena, list, &err) != 0 ||
      list->type != DS_V_LIST) {
    fprintf(stderr, "bench_a1: block %llu: %s\n", (unsigned long long)i,
            err ? err : "not a list");
    free(err);
    return -1;
  }
  return (int64_t)list->u.list.n;
}

/* ds_pickle_decode over every decompressed block, reusing one arena;
 * r0 = blocks, r1 = examples. */
static int run_pickle_ours(void *ctx, bench_variant *v) {
  a1_ctx *c = ctx;
  int64_t items = 0;
  for (uint64_t i = 0; i < c->nblocks; i++) {
    ds_value list;
    int64_t n = decode_one(c, i, &list);
    if (n < 0) return -1;
    items += n;
  }
  v->r0 = (int64_t)c->nblocks;
  v->r1 = items;
  return 0;
}

/* The CPython side: reads the blocks (u32 LE length + bytes each) from
 * argv[1], checks them once (examples and text characters, untimed), says
 * "ready", then for each "run" line times pickle.loads over every block
 * (gc disabled during the loop, as timeit does) and prints the
 * milliseconds, blocks and examples. */
static const char *const PY_SCRIPT =
    "import gc, pickle, sys, time\n"
    "data = open(sys.argv[1], 'rb').read()\n"
    "blocks = []\n"
    "pos = 0\n"
    "while pos < len(data):\n"
    "    n = int.from_bytes(data[pos:pos + 4], 'little')\n"
    "    blocks.append(data[pos + 4:pos + 4 + n])\n"
    "    pos += 4 + n\n"
    "del data\n"
    "items = text = 0\n"
    "for b in blocks:\n"
    "    lst = pickle.loads(b)\n"
    "    items += len(lst)\n"
    "    text += sum(len(e['text']) for e in lst)\n"
    "del lst\n"
    "out = sys.stdout\n"
    "out.write('ready %d %d %d\\n' % (len(blocks), items, text))\n"
    "out.flush()\n"
    "loads = pickle.loads\n"
    "for line in sys.stdin:\n"
    "    if line.strip() != 'run':\n"
    "        break\n"
    "    gc.disable()\n"
    "    t0 = time.perf_counter_ns()\n"
    "    n = 0\n"
    "    for b in blocks:\n"
    "        n += len(loads(b))\n"
    "    t1 = time.perf_counter_ns()\n"
    "    gc.enable()\n"
    "    out.write('%.6f %d %d\\n' % ((t1 - t0) / 1e6, len(blocks), n))\n"
    "    out.flush()\n";

/* Write the decompressed blocks to `path` for the Python child. */
static int dump_blocks(const a1_ctx *c, const char *path) {
  char tmp[4300];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *f = fopen(tmp, "wb");
  int ok = f != NULL;
  for (uint64_t i = 0; ok && i < c->nblocks; i++) {
    uint64_t n = c->pk_offs[i + 1] - c->pk_offs[i];
    uint8_t le[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16),
                     (uint8_t)(n >> 24)};
    ok = fwrite(le, 1, 4, f) == 4 &&
         fwrite(c->pk + c->pk_offs[i], 1, n, f) == n;
  }
  if (f && fclose(f) != 0) ok = 0;
  if (ok && rename(tmp, path) != 0) ok = 0;
  if (!ok) remove(tmp);
  return ok ? 0 : -1;
}

/* Start the Python child on the dumped blocks; 0 once it said ready. */
static int py_start(a1_ctx *c, const char *blocks_path) {
  int in[2], out[2];
  if (access(PYTHON, X_OK) != 0 || pipe(in) != 0) return -1;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return -1;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    execl(PYTHON, PYTHON, "-c", PY_SCRIPT, blocks_path, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  c->py_pid = pid;
  c->py_in = fdopen(in[1], "w");
  c->py_out = fdopen(out[0], "r");
  char line[256];
  long long nb, items, text;
  if (!c->py_in || !c->py_out || !fgets(line, sizeof line, c->py_out) ||
      sscanf(line, "ready %lld %lld %lld", &nb, &items, &text) != 3 ||
      (uint64_t)nb != c->nblocks) {
    fprintf(stderr, "bench_a1: the python child did not start\n");
    return -1;
  }
  c->py_items = items;
  c->py_text = text;
  return 0;
}

static void py_stop(a1_ctx *c) {
  if (c->py_in) fclose(c->py_in); /* EOF: the child's loop ends */
  if (c->py_out) fclose(c->py_out);
  c->py_in = c->py_out = NULL;
  if (c->py_pid > 0) waitpid(c->py_pid, NULL, 0);
  c->py_pid = 0;
}

/* One timed pickle.loads loop in the child. The time kept is the one the
 * child measured around its loop (the first call is the warm-up, as in
 * bench_measure); r0 = blocks, r1 = examples. */
static int run_pickle_py(void *ctx, bench_variant *v) {
  a1_ctx *c = ctx;
  char line[256];
  double ms;
  long long nb, items;
  int cpu = bench_round_cpu();
  if (cpu >= 0 && c->py_pid > 0) { /* the child runs on this round's CPU */
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(c->py_pid, sizeof one, &one);
  }
  if (fputs("run\n", c->py_in) == EOF || fflush(c->py_in) != 0 ||
      !fgets(line, sizeof line, c->py_out) ||
      sscanf(line, "%lf %lld %lld", &ms, &nb, &items) != 3)
    return -1;
  if (c->py_calls++ > 0) {
    if (c->py_best < 0 || ms < c->py_best) c->py_best = ms;
    if (c->py_n < BENCH_MAX_TIMED) c->py_ms[c->py_n++] = ms;
  }
  v->r0 = nb;
  v->r1 = items;
  return 0;
}

/* ---- SQL workloads ---- */

/* 100,000 lookups of the fixed rowid sequence inside BEGIN..COMMIT;
 * r0 = rows found, r1 = text bytes (every text is touched). */
static int run_point(void *ctx, bench_variant *v) {
  a1_ctx *c = ctx;
  int64_t found = 0, bytes = 0;
  unsigned touch = 0;
  if (bench_exec(c->db, "BEGIN", 0) != 0) return -1;
  for (int k = 0; k < LOOKUPS; k++) {
    sqlite3_bind_int64(v->stmt, 1, c->rowids[k]);
    int rc = sqlite3_step(v->stmt);
    if (rc == SQLITE_ROW) {
      const unsigned char *t = sqlite3_column_text(v->stmt, 0);
      int n = sqlite3_column_bytes(v->stmt, 0);
      if (t && n > 0) touch += t[n - 1];
      found++;
      bytes += n;
      rc = sqlite3_step(v->stmt);
    }
    sqlite3_reset(v->stmt);
    if (rc != SQLITE_DONE) {
      fprintf(stderr, "bench_a1: %s: %s\n", v->name, sqlite3_errmsg(c->db));
      bench_exec(c->db, "COMMIT", 1);
      return -1;
    }
  }
  g_sink += touch;
  v->r0 = found;
  v->r1 = bytes;
  return bench_exec(c->db, "COMMIT", 0);
}

static int make_rowids(a1_ctx *c) {
  c->rowids = malloc(LOOKUPS * sizeof *c->rowids);
  if (!c->rowids) return -1;
  uint64_t st = POINT_SEED;
  for (int k = 0; k < LOOKUPS; k++)
    c->rowids[k] = (int64_t)(bench_splitmix64(&st) % c->n);
  return 0;
}

/* ---- the native yardstick database ---- */

static int64_t native_rows(const char *dbpath) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  int64_t n = -1;
  if (access(dbpath, R_OK) == 0 &&
      sqlite3_open_v2(dbpath, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "SELECT count(*) FROM a1native", -1, &st,
                         NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(db);
  return n;
}

/* Create DIR/a1native.db from the atlas table unless it holds every
 * example; built in a temporary file and renamed. */
static int ensure_native(a1_ctx *c, const char *dbpath, const char *path,
                         const char *ext) {
  if (native_rows(dbpath) == (int64_t)c->n) return 0;
  char tmp[4200], note[1024];
  snprintf(tmp, sizeof tmp, "%s.tmp", dbpath);
  remove(tmp);
  printf("building %s ...\n", dbpath);
  fflush(stdout);
  sqlite3 *db = NULL;
  char *err = NULL;
  int rc = sqlite3_open(tmp, &db) == SQLITE_OK ? 0 : -1;
  if (rc == 0 && bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "bench_a1: load %s: %s\n", ext, err ? err : "?");
    rc = -1;
  }
  sqlite3_free(err);
  if (rc == 0 &&
      bench_create_vtab(db, "a1", "atlas", path, "", note, sizeof note) != 0) {
    fprintf(stderr, "bench_a1: atlas table: %s\n", note);
    rc = -1;
  }
  if (rc == 0)
    rc = bench_exec(db,
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"
                    "CREATE TABLE a1native(id INTEGER PRIMARY KEY,"
                    " label INTEGER, score REAL, text TEXT);"
                    "INSERT INTO a1native SELECT id, label, score, text FROM a1;"
                    "COMMIT; DROP TABLE temp.a1",
                    0);
  sqlite3_close(db);
  if (rc == 0) rc = rename(tmp, dbpath);
  if (rc != 0) {
    fprintf(stderr, "bench_a1: could not build %s\n", dbpath);
    remove(tmp);
  }
  return rc;
}

/* ---- fresh-process measurement (open) ---- */

/* CREATE VIRTUAL TABLE temp.<name> + read every column of row 0; 1 if ok. */
static int open_read_row0(sqlite3 *db, const char *name, const char *path,
                          double *create_ms, char *note, size_t cap) {
  char sql[128];
  sqlite3_stmt *st = NULL;
  int ok = 0;
  double t0 = bench_now_ms();
  if (bench_create_vtab(db, name, "atlas", path, "", note, cap) != 0) return 0;
  *create_ms = bench_now_ms() - t0;
  snprintf(sql, sizeof sql, "SELECT * FROM %s WHERE rowid = 0", name);
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); i++) {
      const unsigned char *p = sqlite3_column_blob(st, i);
      int n = sqlite3_column_bytes(st, i);
      if (p && n > 0) g_sink += p[0];
    }
    ok = sqlite3_step(st) == SQLITE_DONE;
  }
  sqlite3_finalize(st);
  return ok;
}

/* Prints "ms=... create_ms=... again_ms=... rss_kib=... ok=...": open +
 * row 0, the CREATE part alone, a second open + row 0 in this (now warm)
 * process, and the RSS growth over the first. */
static int fresh(const char *what, const char *path, const char *ext) {
  sqlite3 *db = NULL;
  char *err = NULL, note[1024] = "";
  if (strcmp(what, "open") != 0) return usage();
  sqlite3_open(":memory:", &db);
  if (bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "bench_a1: load %s: %s\n", ext, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 1;
  }
  double create_ms = 0, unused;
  long rss0 = bench_proc_status_kib("VmRSS");
  double t0 = bench_now_ms();
  int ok = open_read_row0(db, "t", path, &create_ms, note, sizeof note);
  double ms = bench_now_ms() - t0;
  long rss1 = bench_proc_status_kib("VmRSS");
  double t1 = bench_now_ms();
  if (ok) ok = open_read_row0(db, "t2", path, &unused, note, sizeof note);
  double again_ms = bench_now_ms() - t1;
  if (!ok)
    fprintf(stderr, "bench_a1: fresh open failed: %s\n",
            note[0] ? note : sqlite3_errmsg(db));
  printf("ms=%.4f create_ms=%.4f again_ms=%.4f rss_kib=%ld ok=%d\n", ms,
         create_ms, again_ms, rss1 - rss0, ok);
  sqlite3_close(db);
  return ok ? 0 : 1;
}

typedef struct fresh_result {
  int ok;
  double ms, create_ms, again_ms;
  long rss_kib;
} fresh_result;

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

/* A warm-up and `runs` runs of `bench_a1 --fresh open PATH`, each in a new
 * process: minimum times, maximum RSS growth. */
static fresh_result run_fresh(const char *path, const char *ext, int runs) {
  fresh_result r = {0, -1, -1, -1, 0};
  char exe[4096], qe[8300], qx[8300], qp[8300], cmd[26000];
  ssize_t el = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (el <= 0) return r;
  exe[el] = '\0';
  shell_quote(exe, qe, sizeof qe);
  shell_quote(ext, qx, sizeof qx);
  shell_quote(path, qp, sizeof qp);
  snprintf(cmd, sizeof cmd, "%s --ext %s --fresh open %s", qe, qx, qp);
  r.ok = 1;
  for (int i = 0; i <= runs && r.ok; i++) {
    fflush(NULL);
    FILE *p = popen(cmd, "r");
    char line[512] = "";
    double ms, cms, ams;
    long rss;
    int ok = 0;
    if (!p || !fgets(line, sizeof line, p) ||
        sscanf(line, "ms=%lf create_ms=%lf again_ms=%lf rss_kib=%ld ok=%d",
               &ms, &cms, &ams, &rss, &ok) != 5)
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
    if (rss > r.rss_kib) r.rss_kib = rss;
  }
  return r;
}

/* ---- the full benchmark ---- */

enum {
  V_SNATIVE, V_SA1, V_BARE, V_PNATIVE, V_PA1, V_PBARE, V_POURS, V_PPY,
  V_FLOOR, V_SA1T2, V_PA1C, NV
};

static const char *const SCAN_SQL = "SELECT count(*), sum(length(text)) FROM ";

static void prepare_sql(sqlite3 *db, bench_variant *v, const char *name,
                        const char *sql, bench_run_fn run) {
  v->name = name;
  v->run = run;
  bench_prepare(db, sql, v);
}

static void setup_variants(a1_ctx *c, bench_variant *v, int have, int have_py) {
  char sql[256];
  memset(v, 0, sizeof *v * NV);
  snprintf(sql, sizeof sql, "%sa1native", SCAN_SQL);
  prepare_sql(c->db, &v[V_SNATIVE], "scan native", sql, bench_run_sql);
  prepare_sql(c->db, &v[V_PNATIVE], "point native",
              "SELECT text FROM a1native WHERE rowid = ?", run_point);
  v[V_SA1].name = "scan a1";
  v[V_PA1].name = "point a1";
  if (have) {
    snprintf(sql, sizeof sql, "%sa1", SCAN_SQL);
    prepare_sql(c->db, &v[V_SA1], "scan a1", sql, bench_run_sql);
    prepare_sql(c->db, &v[V_PA1], "point a1",
                "SELECT text FROM a1 WHERE rowid = ?", run_point);
    /* info: the same without the read-ahead thread, and with a cache */
    snprintf(sql, sizeof sql, "%sa1t2", SCAN_SQL);
    prepare_sql(c->db, &v[V_SA1T2], "scan a1 threads=1", sql, bench_run_sql);
    prepare_sql(c->db, &v[V_PA1C], "point a1 cache_mb=512",
                "SELECT text FROM a1c WHERE rowid = ?", run_point);
  }
  v[V_BARE] = (bench_variant){
      .name = "bare zstd+dict", .run = run_bare, .ok = 1};
  v[V_PBARE] = (bench_variant){
      .name = "point bare zstd+dict", .run = run_point_bare, .ok = 1};
  v[V_POURS] = (bench_variant){
      .name = "pickle ours", .run = run_pickle_ours, .ok = 1};
  v[V_PPY] = (bench_variant){
      .name = "pickle CPython", .run = run_pickle_py, .ok = have_py};
  char note[512];
  v[V_FLOOR].name = "row floor";
  v[V_FLOOR].run = bench_run_sql;
  bench_row_floor(c->db, (int64_t)c->n, &v[V_FLOOR], note, sizeof note);
  if (note[0]) printf("NOTE: %s\n", note);
}

static int check_same(const bench_variant *ref, const bench_variant *v) {
  if (!ref->ok || !v->ok) return 0;
  if (v->r0 == ref->r0 && v->r1 == ref->r1) return 0;
  printf("!!!!!!!! MISMATCH: %s gave (%lld, %lld), %s gave (%lld, %lld)\n",
         v->name, (long long)v->r0, (long long)v->r1, ref->name,
         (long long)ref->r0, (long long)ref->r1);
  return 1;
}

static int check_known(const bench_variant *v, int64_t r0, int64_t r1) {
  if (!v->ok || (v->r0 == r0 && (r1 < 0 || v->r1 == r1))) return 0;
  printf("!!!!!!!! MISMATCH: %s gave (%lld, %lld), expected (%lld, %lld)\n",
         v->name, (long long)v->r0, (long long)v->r1, (long long)r0,
         (long long)r1);
  return 1;
}

static int check_results(const a1_ctx *c, const bench_variant *v) {
  int64_t n = (int64_t)c->n, nb = (int64_t)c->nblocks;
  int bad = 0;
  /* the scans against the text characters our decoder counted (and
   * CPython's, below) */
  bad += check_known(&v[V_SNATIVE], n, c->our_text);
  bad += check_known(&v[V_SA1], n, c->our_text);
  bad += check_known(&v[V_BARE], nb, (int64_t)c->raw_bytes);
  bad += check_same(&v[V_PNATIVE], &v[V_PA1]);
  bad += check_same(&v[V_PNATIVE], &v[V_PA1C]);
  bad += check_known(&v[V_SA1T2], n, c->our_text);
  bad += check_known(&v[V_PNATIVE], LOOKUPS, -1);
  bad += check_known(&v[V_PBARE], LOOKUPS, -1);
  bad += check_known(&v[V_POURS], nb, n);
  bad += check_known(&v[V_PPY], nb, n);
  bad += check_known(&v[V_FLOOR], n * (n - 1) / 2, -1);
  if (v[V_PPY].ok && (c->py_items != n || c->py_text != c->our_text)) {
    printf("!!!!!!!! MISMATCH: CPython counted %lld examples, %lld text "
           "characters; our decoder %lld, %lld\n",
           (long long)c->py_items, (long long)c->py_text, (long long)n,
           (long long)c->our_text);
    bad++;
  }
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

static void print_table(const a1_ctx *c, const bench_variant *v,
                        const fresh_result *open) {
  /* bare decompression + our pickle decoder: what a scan cannot avoid */
  bench_variant floor2 = {.name = "bare + pickle ours",
                          .ok = v[V_BARE].ok && v[V_POURS].ok,
                          .best_ms = v[V_BARE].best_ms + v[V_POURS].best_ms};
  printf("\n");
  bench_table_header();
  bench_table_row("scan / native", &v[V_SA1], &v[V_SNATIVE], 2.0);
  bench_table_row("point 100k, BEGIN..COMMIT / bare blocks hit",
                  &v[V_PA1], &v[V_PBARE], 1.2);
  /* ours >= 2x faster than CPython: ours / CPython <= 0.5 */
  bench_table_row("pickle decode: ours / CPython pickle.loads", &v[V_POURS],
                  &v[V_PPY], 0.5);
  bench_table_row("scan / bare zstd+dict", &v[V_SA1], &v[V_BARE], 0);
  bench_table_row("scan / (bare zstd+dict + pickle ours)", &v[V_SA1], &floor2,
                  0);
  bench_table_row("point 100k, BEGIN..COMMIT / native", &v[V_PA1],
                  &v[V_PNATIVE], 0);
  bench_table_row("scan / vtab row floor", &v[V_SA1], &v[V_FLOOR], 0);
  bench_table_row("scan native / bare zstd+dict", &v[V_SNATIVE], &v[V_BARE],
                  0);
  bench_table_row("scan threads=1 / native", &v[V_SA1T2], &v[V_SNATIVE], 0);
  bench_table_row("point, cache_mb=512 / bare blocks hit", &v[V_PA1C],
                  &v[V_PBARE], 0);
  char o[32] = "n/a";
  if (open->ok) snprintf(o, sizeof o, "%.2f", open->ms);
  printf("%-46s %10s %10s %7s  %s\n", "open: CREATE VIRTUAL TABLE + row 0 (ms)",
         o, "-", "-", "(info, absolute)");
  if (open->ok)
    printf("  open: CREATE VIRTUAL TABLE alone %.2f ms (infers the columns "
           "from the first 100 examples); a second table + row 0 in the "
           "same process %.2f ms; RSS growth %ld KiB\n",
           open->create_ms, open->again_ms, open->rss_kib);
  printf("  (pickle decode: the %llu blocks, %.1f MB of pickles, already "
         "decompressed in memory; target ours >= 2x faster than CPython = "
         "ratio <= 0.50)\n",
         (unsigned long long)c->nblocks, (double)c->raw_bytes / 1e6);
}

static int open_main(a1_ctx *c, const char *dbpath, const char *ext,
                     const char *path) {
  if (sqlite3_open_v2(dbpath, &c->db, SQLITE_OPEN_READWRITE, NULL) !=
      SQLITE_OK) {
    fprintf(stderr, "bench_a1: open %s: %s\n", dbpath, sqlite3_errmsg(c->db));
    return -1;
  }
  char *err = NULL, note[1024];
  if (bench_load_ext(c->db, ext, &err) != 0) {
    printf("NOTE: extension %s not loaded (%s): a1 rows are n/a\n", ext,
           err ? err : "?");
    sqlite3_free(err);
    return 0;
  }
  if (bench_create_vtab(c->db, "a1", "atlas", path, "", note, sizeof note) !=
      0) {
    printf("NOTE: no atlas virtual table (%s): a1 rows are n/a\n", note);
    return 0;
  }
  if (bench_create_vtab(c->db, "a1t2", "atlas", path, "threads=1", note, sizeof note) ||
      bench_create_vtab(c->db, "a1c", "atlas", path, "cache_mb=512", note, sizeof note))
    printf("NOTE: %s\n", note);
  else if (note[0])
    printf("NOTE: %s\n", note);
  return 1;
}

/* Decode every block once with our decoder (untimed): checks the counts
 * and sums the text characters the scans must report. */
static int check_blocks(a1_ctx *c) {
  int64_t items = 0, text = 0;
  uint64_t i = 0;
  for (size_t k = 0; k < c->nsh; k++)
    for (uint64_t b = 0; b < c->sh[k].nblocks; b++, i++) {
      ds_value list;
      int64_t n = decode_one(c, i, &list);
      uint64_t want = b + 1 < c->sh[k].nblocks
                          ? c->sh[k].bsize
                          : c->sh[k].count - b * c->sh[k].bsize;
      int64_t t = n < 0 ? -1 : text_chars(&list);
      if (n < 0 || (uint64_t)n != want || t < 0) {
        fprintf(stderr, "bench_a1: shard %zu block %llu: bad block\n", k,
                (unsigned long long)b);
        return -1;
      }
      items += n;
      text += t;
    }
  c->our_text = text;
  return items == (int64_t)c->n ? 0 : -1;
}

static int bench_full(a1_ctx *c, const char *dir, const char *ext, int runs) {
  char path[4096], dbpath[4096], bpath[4096];
  snprintf(path, sizeof path, "%s/a1", dir);
  snprintf(dbpath, sizeof dbpath, "%s/a1native.db", dir);
  snprintf(bpath, sizeof bpath, "%s/a1-pickles.bin", dir);
  if (load_dataset(c, path) != 0 || c->n == 0) return 1;
  if (decompress_all(c) != 0 || check_blocks(c) != 0) {
    fprintf(stderr, "bench_a1: %s: cannot decode the blocks\n", path);
    return 1;
  }
  if (ensure_native(c, dbpath, path, ext) != 0) return 1;
  if (make_rowids(c) != 0) return 1;
  int have = open_main(c, dbpath, ext, path);
  if (have < 0) return 1;
  int have_py = dump_blocks(c, bpath) == 0 && py_start(c, bpath) == 0;
  remove(bpath); /* the child holds the blocks in memory */
  if (!have_py) printf("NOTE: no %s child: the CPython row is n/a\n", PYTHON);
  uint64_t csize = 0;
  for (size_t k = 0; k < c->nsh; k++) csize += c->sh[k].size;
  printf("A1: %s, %llu examples in %zu shards, %llu blocks, %.1f MB of zstd "
         "frames (%.1f MB of pickles), dictionary %llu bytes; sqlite %s, "
         "zstd %s; %d CPUs\n",
         path, (unsigned long long)c->n, c->nsh,
         (unsigned long long)c->nblocks, (double)csize / 1e6,
         (double)c->raw_bytes / 1e6, (unsigned long long)c->dict_size,
         sqlite3_libversion(), ZSTD_versionString(),
         (int)sysconf(_SC_NPROCESSORS_ONLN));
  fflush(stdout);
  bench_variant v[NV];
  setup_variants(c, v, have, have_py);
  c->py_best = -1;
  /* every variant but the scan at threads=2 (its read-ahead thread) is
   * single-threaded: pinned per round (bench_common.h, one_cpu) */
  for (int i = 0; i < NV; i++) v[i].one_cpu = i != V_SA1;
  printf("single-threaded variants (all but the scan at threads=2; the CPython "
         "child too) run pinned to one CPU, the same for all in a round, the "
         "next CPU in the next round\n");
  bench_measure(c, v, NV, runs);
  if (v[V_PPY].ok) { /* the child's own times, not the round trips */
    v[V_PPY].ntimed = 0;
    for (int k = 0; k < c->py_n; k++) bench_record(&v[V_PPY], c->py_ms[k]);
    v[V_PPY].best_ms = c->py_best;
  }
  py_stop(c);
  fresh_result open = {0};
  if (have) open = run_fresh(path, ext, runs);
  int bad = check_results(c, v);
  print_absolute(v, NV, runs);
  print_table(c, v, &open);
  if (bad) printf("\n!!!!!!!! %d RESULT MISMATCH(ES) - see above\n", bad);
  for (int i = 0; i < NV; i++) sqlite3_finalize(v[i].stmt);
  return bad ? 3 : 0;
}

/* ---- peak-memory mode: one scan in a fresh process ---- */

static int scan_only(const char *path, const char *ext) {
  char sql[128];
  snprintf(sql, sizeof sql, "%st", SCAN_SQL);
  return bench_scan_only("bench_a1", ext, "atlas", path, "", sql, path);
}

static void free_ctx(a1_ctx *c) {
  py_stop(c);
  if (c->db) sqlite3_close(c->db);
  for (size_t k = 0; k < c->nsh; k++) {
    free(c->sh[k].data);
    free(c->sh[k].offs);
  }
  ZSTD_freeDDict(c->ddict);
  ZSTD_freeDCtx(c->dctx);
  free(c->out);
  free(c->pk);
  free(c->pk_offs);
  ds_arena_free(&c->arena);
  free(c->rowids);
}

static int usage(void) {
  fprintf(stderr,
          "usage: bench_a1 [--ext PATH] [--runs N] DIR\n"
          "       bench_a1 [--ext PATH] --scan-only DATASET\n"
          "       bench_a1 [--ext PATH] --fresh open DATASET\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *ext = "build/datasets";
  int runs = BENCH_RUNS, i = 1;
  signal(SIGPIPE, SIG_IGN);
  for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0 &&
         strcmp(argv[i], "--scan-only") != 0 && strcmp(argv[i], "--fresh") != 0;
       i += 2) {
    if (strcmp(argv[i], "--ext") == 0) ext = argv[i + 1];
    else if (strcmp(argv[i], "--runs") == 0) runs = atoi(argv[i + 1]);
    else return usage();
  }
  if (i < argc && strcmp(argv[i], "--scan-only") == 0)
    return i + 2 == argc ? scan_only(argv[i + 1], ext) : usage();
  if (i < argc && strcmp(argv[i], "--fresh") == 0)
    return i + 3 == argc ? fresh(argv[i + 1], argv[i + 2], ext) : usage();
  if (i + 1 != argc || runs < 1) return usage();
  a1_ctx c = {0};
  int rc = bench_full(&c, argv[i], ext, runs);
  free_ctx(&c);
  return rc;
}
