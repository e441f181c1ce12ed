/* writer_txn.h - a format writer inside SQLite's transactions, written once
 * for every writing module. The module's xBegin/xSync/xCommit/xRollback/
 * xSavepoint/xRelease/xRollbackTo hooks call these; the format writer
 * (bagz_writer, datadings_writer, ...) provides the steps:
 *
 *   xBegin        begin (stage; continue what an earlier commit published)
 *                 and a savepoint for "before this transaction"
 *   xSavepoint N  mark: remember the state as savepoint N
 *   xRollbackTo N go back to savepoint N (append-only files truncate);
 *                 a failed statement arrives here too
 *   xRelease N    forget savepoints N and above
 *   xSync         prepare: finish every file, fsync, check the targets and
 *                 move every file but the commit point into place (all
 *                 that can fail; core/stage.h)
 *   xCommit       publish: the commit point's rename
 *   xRollback     abort: the old files back, temporaries deleted
 *
 * No bytes here: only the order of the calls and the savepoint stack. */
#ifndef DS_WRITER_TXN_H
#define DS_WRITER_TXN_H

#include <stdint.h>

typedef struct ds_writer_steps {
  int (*begin)(void *w, char **err);
  int (*mark)(void *w, void **mark, char **err);     /* malloc'd mark */
  int (*rollback_to)(void *w, const void *mark, char **err);
  int (*prepare)(void *w, char **err);
  int (*publish)(void *w, char **err);
  void (*abort)(void *w);
  uint64_t (*count)(void *w);                       /* rows so far */
} ds_writer_steps;

typedef struct ds_txn {
  const ds_writer_steps *steps;
  void *w;            /* the format writer (borrowed) */
  void *base;         /* mark at xBegin */
  void **marks;       /* marks[N] for savepoint N, or NULL */
  int nmarks;
  int active;         /* between xBegin and xCommit / xRollback */
  uint64_t count0;    /* rows at xBegin */
  int rolled_back;    /* a statement or savepoint was rolled back */
  int published;      /* an earlier commit published the dataset */
  int prepared;       /* xSync done (a table connected twice syncs twice) */
  char *broken;       /* a rollback or a savepoint failed (e.g. after a
                       * failed write): the transaction goes on, but cannot
                       * commit; why */
} ds_txn;

void ds_txn_init(ds_txn *t, const ds_writer_steps *steps, void *w);
/* Abort what is open and free the marks. */
void ds_txn_free(ds_txn *t);

int ds_txn_begin(ds_txn *t, char **err);
int ds_txn_sync(ds_txn *t, char **err);
/* Publish; *published = 1 when files changed (the table reopens them).
 * Returns 0, -1 (nothing published: *err), or 1 (published, but *err:
 * e.g. the directory's fsync failed). SQLite ignores xCommit's result: the
 * caller keeps the error for the table's next statement.
 * A transaction that added no row publishes nothing when a statement of it
 * failed (the target stays exactly as it was) or when the dataset was
 * published before (nothing new); otherwise an empty dataset is written. */
int ds_txn_commit(ds_txn *t, int *published, char **err);
int ds_txn_rollback(ds_txn *t, char **err);
int ds_txn_savepoint(ds_txn *t, int n, char **err);
int ds_txn_release(ds_txn *t, int n, char **err);
int ds_txn_rollback_to(ds_txn *t, int n, char **err);

#endif
