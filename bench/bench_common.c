/* bench_common.c - implementation of bench_common.h: timing, PRNG, the
 * interleaved min-of-N measurement loop (with per-round CPU pinning of
 * single-threaded variants), SQLite helpers, the result table and the
 * other pieces the benchmark drivers share. */
#include "bench_common.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <string.h>
#include <time.h>

#include "bench_series.h"

double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint64_t bench_splitmix64(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

/* /proc/loadavg's three averages into buf ("?" when unreadable). */
static void read_loadavg(char *buf, size_t cap) {
  double a = 0, b = 0, c = 0;
  FILE *f = fopen("/proc/loadavg", "r");
  int n = f ? fscanf(f, "%lf %lf %lf", &a, &b, &c) : 0;
  if (f) fclose(f);
  if (n == 3) snprintf(buf, cap, "%.2f %.2f %.2f", a, b, c);
  else snprintf(buf, cap, "?");
}

static char g_load_start[64] = "?";

/* The machine's load when the driver starts. */
__attribute__((constructor)) static void note_load_at_start(void) {
  read_loadavg(g_load_start, sizeof g_load_start);
}

void bench_load_line(char *buf, size_t cap) {
  char now[64];
  read_loadavg(now, sizeof now);
  snprintf(buf, cap, "load average (1/5/15 min) %s at start, %s at end", g_load_start, now);
}

void bench_record(bench_variant *v, double ms) {
  if (v->best_ms < 0 || ms < v->best_ms) v->best_ms = ms;
  if (v->ntimed < BENCH_MAX_TIMED) v->timed_ms[v->ntimed++] = ms;
}

void bench_scale(bench_variant *v, double f) {
  v->best_ms *= f;
  for (int i = 0; i < v->ntimed; i++) v->timed_ms[i] *= f;
}

/* Ascending order of doubles (qsort). */
static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median_ms(const bench_variant *v) {
  if (v->ntimed <= 0) return -1;
  double t[BENCH_MAX_TIMED];
  memcpy(t, v->timed_ms, (size_t)v->ntimed * sizeof *t);
  qsort(t, (size_t)v->ntimed, sizeof *t, cmp_double);
  int n = v->ntimed;
  return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

double bench_max_ms(const bench_variant *v) {
  double m = -1;
  for (int i = 0; i < v->ntimed; i++)
    if (v->timed_ms[i] > m) m = v->timed_ms[i];
  return m;
}

/* The k-th CPU (cyclically) of the set this thread may run on, or -1. */
static int nth_allowed_cpu(const cpu_set_t *allowed, int k) {
  int n = CPU_COUNT(allowed);
  if (n <= 0) return -1;
  k %= n;
  for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
    if (CPU_ISSET(cpu, allowed) && k-- == 0) return cpu;
  return -1;
}

static int g_round_cpu = -1;

int bench_round_cpu(void) { return g_round_cpu; }

double bench_run_in_round(void *ctx, bench_variant *v, int round, int *rc) {
  cpu_set_t allowed, one;
  CPU_ZERO(&allowed);
  int have = sched_getaffinity(0, sizeof allowed, &allowed) == 0;
  g_round_cpu = have ? nth_allowed_cpu(&allowed, round) : -1;
  int pinned = 0;
  if (v->one_cpu && g_round_cpu >= 0) {
    CPU_ZERO(&one);
    CPU_SET(g_round_cpu, &one);
    pinned = sched_setaffinity(0, sizeof one, &one) == 0;
  }
  double t0 = bench_now_ms();
  *rc = v->run(ctx, v);
  double ms = bench_now_ms() - t0;
  if (pinned) sched_setaffinity(0, sizeof allowed, &allowed);
  g_round_cpu = -1;
  return ms;
}

void bench_measure(void *ctx, bench_variant *v, int n, int runs) {
  for (int i = 0; i < n; i++) {
    v[i].best_ms = -1;
    v[i].ntimed = 0;
  }
  for (int r = 0; r <= runs; r++)
    for (int i = 0; i < n; i++) {
      if (!v[i].ok) continue;
      int rc;
      double ms = bench_run_in_round(ctx, &v[i], r, &rc);
      if (rc != 0) {
        fprintf(stderr, "bench: %s failed; dropped\n", v[i].name);
        v[i].ok = 0;
      } else if (r > 0) {
        bench_record(&v[i], ms);
      }
    }
}

int bench_run_sql(void *ctx, bench_variant *v) {
  (void)ctx;
  int rc = sqlite3_step(v->stmt);
  if (rc == SQLITE_ROW) {
    int nc = sqlite3_column_count(v->stmt);
    v->r0 = nc > 0 ? sqlite3_column_int64(v->stmt, 0) : 0;
    v->r1 = nc > 1 ? sqlite3_column_int64(v->stmt, 1) : 0;
    while (rc == SQLITE_ROW) rc = sqlite3_step(v->stmt);
  }
  if (rc != SQLITE_DONE) {
    fprintf(stderr, "bench: %s: %s\n", v->name,
            sqlite3_errmsg(sqlite3_db_handle(v->stmt)));
    sqlite3_reset(v->stmt);
    return -1;
  }
  sqlite3_reset(v->stmt);
  return 0;
}

int bench_exec(sqlite3 *db, const char *sql, int quiet) {
  char *err = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK) return 0;
  if (!quiet) fprintf(stderr, "bench: %s\n  in: %s\n", err, sql);
  sqlite3_free(err);
  return -1;
}

int bench_prepare(sqlite3 *db, const char *sql, bench_variant *v) {
  v->ok = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &v->stmt, NULL) != SQLITE_OK) {
    fprintf(stderr, "bench: %s: %s\n  in: %s\n", v->name, sqlite3_errmsg(db),
            sql);
    return -1;
  }
  v->ok = 1;
  return 0;
}

int bench_load_ext(sqlite3 *db, const char *path, char **err) {
  *err = NULL;
  sqlite3_enable_load_extension(db, 1);
  return sqlite3_load_extension(db, path, 0, err) == SQLITE_OK ? 0 : -1;
}

/* Execute CREATE VIRTUAL TABLE; on failure copy the message into note. */
static int create_vtab_sql(sqlite3 *db, const char *name, const char *module,
                           const char *spec, const char *opts, char *note,
                           size_t cap) {
  char *sql = sqlite3_mprintf("CREATE VIRTUAL TABLE temp.%s USING %s(%Q%s%s)",
                              name, module, spec, opts[0] ? ", " : "", opts);
  char *err = NULL;
  int rc = sqlite3_exec(db, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK) snprintf(note, cap, "%s", err ? err : "?");
  sqlite3_free(err);
  sqlite3_free(sql);
  return rc == SQLITE_OK ? 0 : -1;
}

int bench_create_vtab(sqlite3 *db, const char *name, const char *module,
                      const char *spec, const char *opts, char *note,
                      size_t note_cap) {
  char why[512] = "";
  note[0] = '\0';
  if (create_vtab_sql(db, name, module, spec, opts, why, sizeof why) == 0)
    return 0;
  if (!opts[0] ||
      create_vtab_sql(db, name, module, spec, "", note, note_cap) != 0) {
    if (!note[0]) snprintf(note, note_cap, "%s", why);
    return -1;
  }
  snprintf(note, note_cap, "%s: option '%s' rejected (%s); created without it",
           name, opts, why);
  return 0;
}

int bench_row_floor(sqlite3 *db, int64_t n, bench_variant *v, char *note,
                    size_t note_cap) {
  char sql[160];
  sqlite3_stmt *probe = NULL;
  note[0] = '\0';
  snprintf(sql, sizeof sql,
           "SELECT sum(value) FROM generate_series(0, %lld)", (long long)n - 1);
  if (sqlite3_prepare_v2(db, sql, -1, &probe, NULL) != SQLITE_OK) {
    sqlite3_finalize(probe);
    sqlite3_create_module(db, "bench_series", &bench_series_module, NULL);
    snprintf(sql, sizeof sql,
             "SELECT sum(value) FROM bench_series(0, %lld)", (long long)n - 1);
    snprintf(note, note_cap,
             "generate_series is not in this libsqlite3 (%s); the row floor "
             "uses the driver's own minimal eponymous vtab bench_series, "
             "same shape as series.c",
             sqlite3_libversion());
  } else {
    sqlite3_finalize(probe);
  }
  return bench_prepare(db, sql, v);
}

#define ROW_FMT "%-46s %10s %10s %7s %17s %17s %7s  %s\n"

void bench_table_header(void) {
  char load[200];
  bench_load_line(load, sizeof load);
  printf("%s\n", load);
  printf(ROW_FMT, "workload", "ours ms", "yardst. ms", "ratio", "ours med/max",
         "yardst. med/max", "med r.", "target");
  printf(ROW_FMT, "--------", "-------", "----------", "-----", "------------",
         "---------------", "------", "------");
}

/* "median/max" of v's timed runs into buf ("-/-" without any). */
static void spread(const bench_variant *v, char *buf, size_t cap) {
  double med = v && v->ok ? bench_median_ms(v) : -1;
  if (med < 0) snprintf(buf, cap, "-/-");
  else snprintf(buf, cap, "%.1f/%.1f", med, bench_max_ms(v));
}

void bench_table_row(const char *workload, const bench_variant *ours,
                     const bench_variant *yard, double target) {
  char o[32] = "n/a", y[32] = "n/a", r[32] = "n/a", t[48] = "(info)";
  char os[48], ys[48], mr[32] = "-";
  int have_o = ours && ours->ok, have_y = yard && yard->ok;
  if (have_o) snprintf(o, sizeof o, "%.1f", ours->best_ms);
  if (have_y) snprintf(y, sizeof y, "%.1f", yard->best_ms);
  double ratio = have_o && have_y && yard->best_ms > 0
                     ? ours->best_ms / yard->best_ms
                     : -1;
  if (ratio >= 0) snprintf(r, sizeof r, "%.2f", ratio);
  if (target > 0)
    snprintf(t, sizeof t, "<= %.2f %s", target,
             ratio < 0 ? "n/a" : ratio <= target ? "PASS" : "MISS");
  spread(ours, os, sizeof os);
  spread(yard, ys, sizeof ys);
  double om = have_o ? bench_median_ms(ours) : -1, ym = have_y ? bench_median_ms(yard) : -1;
  if (om >= 0 && ym > 0) snprintf(mr, sizeof mr, "%.2f", om / ym);
  printf(ROW_FMT, workload, o, y, r, os, ys, mr, t);
}

long bench_proc_status_kib(const char *name) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  size_t n = strlen(name);
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, name, n) == 0 && line[n] == ':') v = atol(line + n + 1);
  if (f) fclose(f);
  return v;
}

int bench_scan_only(const char *prog, const char *ext, const char *module,
                    const char *path, const char *opts, const char *sql,
                    const char *label) {
  sqlite3 *db = NULL;
  char *err = NULL, note[1024];
  sqlite3_open(":memory:", &db);
  if (bench_load_ext(db, ext, &err) != 0) {
    fprintf(stderr, "%s: load %s: %s\n", prog, ext, err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 1;
  }
  if (bench_create_vtab(db, "t", module, path, opts, note, sizeof note) != 0) {
    fprintf(stderr, "%s: %s\n", prog, note);
    sqlite3_close(db);
    return 1;
  }
  if (note[0]) printf("NOTE: %s\n", note);
  bench_variant v = {.name = "scan"};
  if (bench_prepare(db, sql, &v) != 0) {
    sqlite3_close(db);
    return 1;
  }
  double t0 = bench_now_ms();
  int rc = bench_run_sql(NULL, &v);
  double ms = bench_now_ms() - t0;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("scan %s: count=%lld sum=%lld in %.1f ms maxrss_kib=%ld "
         "rss_anon_kib=%ld rss_file_kib=%ld\n",
         label, (long long)v.r0, (long long)v.r1, ms, ru.ru_maxrss,
         bench_proc_status_kib("RssAnon"), bench_proc_status_kib("RssFile"));
  sqlite3_finalize(v.stmt);
  sqlite3_close(db);
  return rc == 0 ? 0 : 1;
}

uint64_t bench_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int k = 7; k >= 0; k--) v = v << 8 | p[k];
  return v;
}

uint8_t *bench_read_file(const char *path, uint64_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  uint8_t *data = NULL;
  if (fseek(f, 0, SEEK_END) == 0) {
    long s = ftell(f);
    data = s >= 0 ? malloc((size_t)s + 1) : NULL;
    rewind(f);
    if (data && fread(data, 1, (size_t)s, f) != (size_t)s) {
      free(data);
      data = NULL;
    }
    if (data) data[s] = 0;
    *size = (uint64_t)s;
  }
  fclose(f);
  return data;
}

int bench_load_bagz_shard(const char *prog, const char *path, bench_bagz_shard *s) {
  uint64_t size = 0;
  s->data = bench_read_file(path, &size);
  if (!s->data) {
    fprintf(stderr, "%s: cannot read %s\n", prog, path);
    return -1;
  }
  if (size == 0) return s->n = 0, s->records_size = 0, 0;
  uint64_t b = size >= 8 ? bench_le64(s->data + size - 8) : UINT64_MAX;
  if (b > size - 8 || (size - b) % 8 != 0) {
    fprintf(stderr, "%s: %s: bad bagz tail\n", prog, path);
    return -1;
  }
  s->records_size = b;
  s->n = (size - b) / 8;
  return 0;
}

int64_t *bench_random_rowids(int n, uint64_t total, uint64_t seed) {
  int64_t *r = malloc(sizeof *r * (size_t)n);
  for (int k = 0; r && k < n; k++) r[k] = (int64_t)(bench_splitmix64(&seed) % total);
  return r;
}

static volatile unsigned g_point_sink;

int bench_run_point(sqlite3 *db, bench_variant *v, const int64_t *rowids, int n) {
  int64_t found = 0, bytes = 0;
  unsigned touch = 0;
  if (bench_exec(db, "BEGIN", 0) != 0) return -1;
  for (int k = 0; k < n; k++) {
    sqlite3_bind_int64(v->stmt, 1, rowids[k]);
    int rc = sqlite3_step(v->stmt);
    if (rc == SQLITE_ROW) {
      const unsigned char *p = sqlite3_column_blob(v->stmt, 0);
      int len = sqlite3_column_bytes(v->stmt, 0);
      if (len > 0) touch += p[0] + p[len - 1];
      found++;
      bytes += len;
      rc = sqlite3_step(v->stmt);
    }
    sqlite3_reset(v->stmt);
    if (rc != SQLITE_DONE) {
      fprintf(stderr, "bench: %s: %s\n", v->name, sqlite3_errmsg(db));
      bench_exec(db, "COMMIT", 1);
      return -1;
    }
  }
  v->r0 = found;
  v->r1 = bytes;
  g_point_sink += touch; /* keeps the value reads alive */
  return bench_exec(db, "COMMIT", 0);
}

void bench_prepare_variant(sqlite3 *db, bench_variant *v, const char *name,
                           const char *sql, bench_run_fn run) {
  v->name = name;
  v->run = run;
  bench_prepare(db, sql, v);
}

int bench_check_same(const bench_variant *ref, const bench_variant *v, int both) {
  if (!ref->ok || !v->ok) return 0;
  if (v->r0 == ref->r0 && (!both || v->r1 == ref->r1)) return 0;
  printf("!!!!!!!! MISMATCH: %s gave (%lld, %lld), %s gave (%lld, %lld)\n", v->name,
         (long long)v->r0, (long long)v->r1, ref->name, (long long)ref->r0,
         (long long)ref->r1);
  return 1;
}

void bench_print_absolute(const bench_variant *v, int n, int runs, int width) {
  printf("\nabsolute times (min of %d runs after a warm-up, interleaved):\n", runs);
  for (int i = 0; i < n; i++)
    if (v[i].ok)
      printf("  %-*s %9.1f ms   -> (%lld, %lld)\n", width, v[i].name, v[i].best_ms,
             (long long)v[i].r0, (long long)v[i].r1);
    else if (v[i].name)
      printf("  %-*s       n/a\n", width, v[i].name);
}

int bench_options(int argc, char **argv, const char **ext, int *runs) {
  int i = 1;
  for (; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--ext") == 0) *ext = argv[i + 1];
    else if (strcmp(argv[i], "--runs") == 0) *runs = atoi(argv[i + 1]);
    else break;
  }
  return i;
}
