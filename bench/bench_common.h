/* bench_common.h - shared pieces of the benchmark drivers (one per dataset,
 * bench_b1.c for bagz, later ones for the other formats): monotonic timing,
 * a fixed-seed PRNG, interleaved "min of N runs after a warm-up"
 * measurement of a set of variants (keeping every timed run for the
 * median/max spread; single-threaded variants pinned to one CPU per
 * round), the machine's load average, SQLite helpers (extension loading,
 * virtual tables with an optional option that may be rejected, the
 * virtual-table row floor), the result table, and what several drivers
 * need alike (bagz shards in memory, random rowids, the point loop,
 * result checks, the absolute-times list, option parsing). */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_RUNS 5
/* Timed runs a variant keeps for its spread (more still count for the
 * minimum). */
#define BENCH_MAX_TIMED 64

/* Milliseconds from CLOCK_MONOTONIC. */
double bench_now_ms(void);
/* splitmix64 step: advances *state, returns the next 64-bit value. */
uint64_t bench_splitmix64(uint64_t *state);

/* One timed thing. `run` does one complete run and stores its results in
 * r0/r1 (e.g. count and sum) so the variants can be checked against each
 * other; it returns 0, or -1 after printing why. */
typedef struct bench_variant bench_variant;
typedef int (*bench_run_fn)(void *ctx, bench_variant *v);
struct bench_variant {
  const char *name;
  bench_run_fn run;
  sqlite3_stmt *stmt; /* for bench_run_sql and similar */
  int ok;             /* 1 when available and every run succeeded */
  int one_cpu;        /* single-threaded: each round runs it pinned to the
                         round's CPU, as every other one_cpu variant */
  double best_ms;     /* minimum over the timed runs */
  int64_t r0, r1;
  int ntimed;         /* timed runs kept in timed_ms (the spread) */
  double timed_ms[BENCH_MAX_TIMED];
};

/* Count one timed run of v: its time joins the spread, and the minimum. */
void bench_record(bench_variant *v, double ms);
/* Multiply every time of v by f (a figure measured on a sample, scaled). */
void bench_scale(bench_variant *v, double f);
/* Median and maximum of v's timed runs; -1 when none was kept (a figure
 * set by hand, or a single untimed run). */
double bench_median_ms(const bench_variant *v);
double bench_max_ms(const bench_variant *v);

/* "load average (1/5/15 min) X Y Z at start, X Y Z at end" of this
 * process into buf (the start read when the driver started). */
void bench_load_line(char *buf, size_t cap);

/* A warm-up run, then `runs` timed runs; in every round each available
 * variant runs once, in array order (variants interleaved). A failing
 * variant is dropped (ok = 0). Variants marked one_cpu run pinned to one
 * CPU, the same for all of them in a round and the next allowed CPU in
 * the next round: the 2-vCPU machines here have had one vCPU run 30% slower
 * than the other for minutes at a time, and a single-threaded ratio must
 * not depend on which vCPU the scheduler gave each side. */
void bench_measure(void *ctx, bench_variant *v, int n, int runs);
/* The CPU the current round pins one_cpu variants to (-1 outside
 * bench_measure or when the CPU set is unknown): for a variant that times
 * work in a child process, which must then run on that CPU too. */
int bench_round_cpu(void);
/* One run of v in round `round` of a measurement (pinned to the round's
 * CPU when v->one_cpu; the thread's CPU set restored after): its time in
 * ms, v->run's status in *rc. For drivers with a loop of their own. */
double bench_run_in_round(void *ctx, bench_variant *v, int round, int *rc);

/* Run v->stmt to its first row and read up to two integer columns into
 * r0/r1 (ctx unused). */
int bench_run_sql(void *ctx, bench_variant *v);

/* Execute SQL; on error print it (unless quiet) and return -1. */
int bench_exec(sqlite3 *db, const char *sql, int quiet);
/* Prepare `sql` into v->stmt and mark v available; on error print it. */
int bench_prepare(sqlite3 *db, const char *sql, bench_variant *v);
/* Enable extension loading and load `path`; on error set *err
 * (sqlite3_free it). */
int bench_load_ext(sqlite3 *db, const char *path, char **err);

/* CREATE VIRTUAL TABLE temp.<name> USING <module>('<spec>', <opts>); if
 * that fails and opts is not empty, retry without the options and describe
 * the fallback in note. Returns 0 when a table exists, -1 otherwise (the
 * error is in note). */
int bench_create_vtab(sqlite3 *db, const char *name, const char *module,
                      const char *spec, const char *opts, char *note,
                      size_t note_cap);

/* Prepare the row floor `SELECT sum(value) FROM generate_series(0, n-1)`
 * into v. Without generate_series in the linked library, registers the
 * driver's own minimal equivalent (bench_series) and says so in note. */
int bench_row_floor(sqlite3 *db, int64_t n, bench_variant *v, char *note,
                    size_t note_cap);

/* Result table: the load line, a header, then one row per comparison:
 * the minima and their ratio (what the target is judged on), then the
 * spread: median/maximum of each side's timed runs and the ratio of the
 * medians. `target` > 0 prints "<= target" and PASS/MISS; 0 means
 * information only. */
void bench_table_header(void);
void bench_table_row(const char *workload, const bench_variant *ours,
                     const bench_variant *yard, double target);

/* A field of /proc/self/status in KiB (-1 when missing). */
long bench_proc_status_kib(const char *name);

/* One scan in this process, for the peak-RSS runs: load the extension,
 * CREATE VIRTUAL TABLE temp.t USING module(path, opts), run `sql` (which
 * reads table t) once, and print "scan <label>: count=N sum=N in X ms
 * maxrss_kib=N rss_anon_kib=N rss_file_kib=N". Returns the exit status. */
int bench_scan_only(const char *prog, const char *ext, const char *module,
                    const char *path, const char *opts, const char *sql,
                    const char *label);

/* ---- pieces the drivers shared as copies (bench_b1, _d1, _tb1, _tf1) ---- */

/* The little-endian 64-bit value at p. */
uint64_t bench_le64(const uint8_t *p);
/* A whole file in memory (malloc'd, a NUL after its last byte, so text
 * files are strings), its size in *size; NULL when it cannot be read. */
uint8_t *bench_read_file(const char *path, uint64_t *size);

/* One bagz shard read whole into memory. */
typedef struct bench_bagz_shard {
  uint8_t *data;
  uint64_t records_size; /* B: end of the records section */
  uint64_t n;            /* number of records */
} bench_bagz_shard;
/* Read the shard at path into s and check its tail limits (bagz.md section
 * 2.1; an empty file is a shard of 0 records); on failure print why,
 * prefixed by prog, and return -1. */
int bench_load_bagz_shard(const char *prog, const char *path, bench_bagz_shard *s);

/* n row ids in [0, total), each the next splitmix64 value of seed modulo
 * total (malloc'd; NULL when out of memory). */
int64_t *bench_random_rowids(int n, uint64_t total, uint64_t seed);

/* The point workload: each of the n rowids bound in turn as parameter 1
 * of v->stmt (which returns one column), all inside BEGIN..COMMIT on db;
 * r0 = rows found, r1 = bytes of the column (the first and last byte of
 * every value touched, so nothing is skipped). 0, or -1 after printing
 * the error. */
int bench_run_point(sqlite3 *db, bench_variant *v, const int64_t *rowids, int n);

/* Name v, give it `run`, and prepare `sql` into v->stmt (bench_prepare). */
void bench_prepare_variant(sqlite3 *db, bench_variant *v, const char *name,
                           const char *sql, bench_run_fn run);

/* 0 when v's results equal ref's (r0, and r1 too when both) or either
 * is unavailable; otherwise print a MISMATCH line and return 1. */
int bench_check_same(const bench_variant *ref, const bench_variant *v, int both);

/* "absolute times" and one line per named variant: its minimum and its
 * results, or n/a; names padded to `width`. */
void bench_print_absolute(const bench_variant *v, int n, int runs, int width);

/* The options --ext PATH and --runs N at the front of argv (any order,
 * each optional) into *ext and *runs; returns the index of the first
 * other argument. */
int bench_options(int argc, char **argv, const char **ext, int *runs);

/* The tf.Example GROUP BY label workload over table %s (T-B1, TF-1),
 * folded into two integers so every variant's answer can be compared:
 * sum of the group counts, sum of the groups' avg(score) * 1e6. */
#define BENCH_GROUP_LABEL_SQL                            \
  "SELECT sum(n), sum(CAST(a * 1e6 AS INTEGER)) FROM " \
  "(SELECT label, count(*) AS n, avg(score) AS a FROM %s GROUP BY label)"

#endif
