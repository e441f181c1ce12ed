/* test_threads.c - several connections on several threads reading the same
 * datasets at once (each format, with the bagz and atlas read-ahead
 * threads on), and one connection shared by two threads: every thread must
 * get the answers a lone connection gets. Run under ThreadSanitizer by
 * `make tsan` (issue 11 item 15), where any data race fails the run. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "vtab/modules.h"

#define NTHREADS 4
#define ROUNDS 3

/* Queries touching every format; each gives one text answer. */
static const char *const QUERIES[] = {
    "SELECT count(*) || ':' || sum(length(record)) FROM "
    "bagz('tests/fixtures/upstream/bagz/mid.bagz', 'threads=2')",
    "SELECT group_concat(length(record)) FROM bagz('tests/fixtures/upstream/bagz/mid.bagz') "
    "WHERE rowid IN (5, 500, 5000, 9999)",
    "SELECT count(*) || ':' || sum(length(sample)) FROM "
    "datadings('tests/fixtures/upstream/datadings/mid/mid.msgpack')",
    "SELECT group_concat(rowid) FROM "
    "datadings('tests/fixtures/upstream/datadings/mid/mid.msgpack') WHERE key IN "
    "(SELECT key FROM datadings('tests/fixtures/upstream/datadings/mid/mid.msgpack') "
    "WHERE rowid % 997 = 0)",
    "SELECT count(*) || ':' || sum(length(example)) FROM "
    "atlas('tests/fixtures/upstream/atlas/mid', 'threads=2')",
    "SELECT count(*) || ':' || sum(length(row)) FROM "
    "bcolz('tests/fixtures/upstream/bcolz/carray_uint64')",
};
#define NQ (sizeof QUERIES / sizeof *QUERIES)

/* A connection with every module registered. */
static sqlite3 *open_db(void) {
  sqlite3 *db = NULL;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) return NULL;
  if (ds_table_register(db, &ds_bagz_def) || ds_table_register(db, &ds_datadings_def) ||
      ds_table_register(db, &ds_atlas_def) || ds_table_register(db, &ds_bcolz_def)) {
    sqlite3_close(db);
    return NULL;
  }
  return db;
}

/* The one-text answer of query q on db (malloc'd), or NULL. */
static char *answer(sqlite3 *db, const char *q) {
  sqlite3_stmt *st = NULL;
  char *out = NULL;
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(st, 0);
    out = strdup(t ? t : "");
  }
  sqlite3_finalize(st);
  return out;
}

static char *want[NQ];

typedef struct job {
  sqlite3 *db; /* shared, or NULL: the thread opens its own */
  int wrong;
  int start;
} job;

/* Run every query ROUNDS times and count answers that differ. */
static void *worker(void *arg) {
  job *j = arg;
  sqlite3 *db = j->db ? j->db : open_db();
  if (!db) {
    j->wrong = -1;
    return NULL;
  }
  for (int r = 0; r < ROUNDS; r++)
    for (size_t i = 0; i < NQ; i++) {
      size_t q = (i + (size_t)j->start) % NQ; /* threads start on different formats */
      char *got = answer(db, QUERIES[q]);
      if (!got || strcmp(got, want[q]) != 0) j->wrong++;
      free(got);
    }
  if (!j->db) sqlite3_close(db);
  return NULL;
}

int main(void) {
  sqlite3 *db = open_db();
  if (!CHECK(db != NULL)) return check_exit();
  for (size_t i = 0; i < NQ; i++) {
    want[i] = answer(db, QUERIES[i]);
    CHECK_MSG(want[i] && *want[i], "query %zu: %s", i, sqlite3_errmsg(db));
    if (!want[i]) return check_exit();
  }
  /* one connection per thread */
  pthread_t th[NTHREADS];
  job jobs[NTHREADS];
  for (int k = 0; k < NTHREADS; k++) {
    jobs[k] = (job){NULL, 0, k};
    pthread_create(&th[k], NULL, worker, &jobs[k]);
  }
  for (int k = 0; k < NTHREADS; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < NTHREADS; k++)
    CHECK_MSG(jobs[k].wrong == 0, "thread %d: %d wrong answers", k, jobs[k].wrong);
  /* one connection shared by two threads (SQLite serializes them) */
  for (int k = 0; k < 2; k++) {
    jobs[k] = (job){db, 0, k};
    pthread_create(&th[k], NULL, worker, &jobs[k]);
  }
  for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
  for (int k = 0; k < 2; k++)
    CHECK_MSG(jobs[k].wrong == 0, "shared connection, thread %d: %d wrong answers", k,
              jobs[k].wrong);
  for (size_t i = 0; i < NQ; i++) free(want[i]);
  sqlite3_close(db);
  return check_exit();
}
