/* bench_rq.c - one query of the remote workloads (R-*, run by
 * bench/bench_remote.py) in a fresh process:
 *
 *   bench_rq EXT MODULE SPEC OPTS PRE SQL
 *
 * loads EXT into a :memory: connection, creates
 * CREATE VIRTUAL TABLE temp.t USING MODULE('SPEC', OPTS) (OPTS may be
 * empty; an option the module refuses is an error, never dropped), runs
 * PRE (may be empty: e.g. a count(*) that opens the shards) to its end,
 * untimed, then SQL once, timed, and prints one line
 *
 *   rq r0=N r1=N ms=X all_ms=X t0=X t1=X maxrss_kib=N
 *
 * r0/r1: SQL's first row's first two integer columns; ms: SQL alone;
 * all_ms: from before the CREATE to the end of SQL; t0/t1: CLOCK_MONOTONIC
 * milliseconds at the start and end of SQL (the orchestrator matches them
 * with its server's request log, stamped by the same clock); maxrss_kib:
 * the process's peak RSS, VmHWM of /proc/self/status (getrusage's
 * ru_maxrss is not: Linux keeps it across execve, so it would be at least
 * the RSS of the process that forked this one). Exit status 1 (with the
 * error on stderr) when anything fails. */
#include <stdio.h>
#include <string.h>

#include "bench_common.h"

/* Run `sql` to its end (rows dropped); 0 or -1 with the error printed. */
static int run_pre(sqlite3 *db, const char *sql) {
  if (!sql[0]) return 0;
  bench_variant v = {.name = "pre"};
  if (bench_prepare(db, sql, &v) != 0) return -1;
  int rc = bench_run_sql(NULL, &v);
  sqlite3_finalize(v.stmt);
  return rc;
}

int main(int argc, char **argv) {
  if (argc != 7) {
    fprintf(stderr, "usage: bench_rq EXT MODULE SPEC OPTS PRE SQL\n");
    return 2;
  }
  sqlite3 *db = NULL;
  char *err = NULL, note[1024];
  sqlite3_open(":memory:", &db);
  if (bench_load_ext(db, argv[1], &err) != 0) {
    fprintf(stderr, "bench_rq: load %s: %s\n", argv[1], err ? err : "?");
    sqlite3_free(err);
    sqlite3_close(db);
    return 1;
  }
  double start = bench_now_ms();
  if (bench_create_vtab(db, "t", argv[2], argv[3], argv[4], note, sizeof note) != 0 ||
      note[0]) {
    fprintf(stderr, "bench_rq: %s\n", note);
    sqlite3_close(db);
    return 1;
  }
  bench_variant v = {.name = "query"};
  if (run_pre(db, argv[5]) != 0 || bench_prepare(db, argv[6], &v) != 0) {
    sqlite3_close(db);
    return 1;
  }
  double t0 = bench_now_ms();
  int rc = bench_run_sql(NULL, &v);
  double t1 = bench_now_ms();
  long hwm = bench_proc_status_kib("VmHWM");
  if (rc == 0)
    printf("rq r0=%lld r1=%lld ms=%.3f all_ms=%.3f t0=%.3f t1=%.3f maxrss_kib=%ld\n",
           (long long)v.r0, (long long)v.r1, t1 - t0, t1 - start, t0, t1, hwm);
  sqlite3_finalize(v.stmt);
  sqlite3_close(db);
  return rc == 0 ? 0 : 1;
}
