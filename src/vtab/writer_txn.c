/* writer_txn.c - SQLite's transaction calls onto a format writer's steps
 * (see writer_txn.h). */
#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "vtab/writer_txn.h"

void ds_txn_init(ds_txn *t, const ds_writer_steps *steps, void *w) {
  memset(t, 0, sizeof *t);
  t->steps = steps;
  t->w = w;
}

/* Forget savepoints n and above. */
static void drop_marks(ds_txn *t, int n) {
  for (int i = n < 0 ? 0 : n; i < t->nmarks; i++) {
    free(t->marks[i]);
    t->marks[i] = NULL;
  }
  if (n <= 0) {
    free(t->marks);
    t->marks = NULL;
    t->nmarks = 0;
  }
}

/* End the transaction either way: marks gone. */
static void finish(ds_txn *t) {
  drop_marks(t, 0);
  free(t->base);
  t->base = NULL;
  t->active = 0;
  t->prepared = 0;
  free(t->broken);
  t->broken = NULL;
}

void ds_txn_free(ds_txn *t) {
  if (t->active) t->steps->abort(t->w);
  finish(t);
}

int ds_txn_begin(ds_txn *t, char **err) {
  if (t->active) return 0;
  if (t->steps->begin(t->w, err)) {
    t->steps->abort(t->w);
    return -1;
  }
  if (t->steps->mark(t->w, &t->base, err)) {
    t->steps->abort(t->w);
    return -1;
  }
  t->active = 1;
  t->rolled_back = 0;
  t->count0 = t->steps->count(t->w);
  return 0;
}

/* A transaction that added no row after a failed statement, or after an
 * earlier publish, publishes nothing. */
static int nothing_new(ds_txn *t) {
  return t->steps->count(t->w) == t->count0 && (t->rolled_back || t->published);
}

int ds_txn_sync(ds_txn *t, char **err) {
  if (!t->active || t->prepared) return 0;
  if (t->broken) return ds_err(err, "%s", t->broken);
  if (!nothing_new(t) && t->steps->prepare(t->w, err)) return -1;
  t->prepared = 1;
  return 0;
}

int ds_txn_commit(ds_txn *t, int *published, char **err) {
  *published = 0;
  if (!t->active) return 0;
  int rc = 0;
  if (t->broken) {
    rc = ds_err(err, "%s", t->broken);
    t->steps->abort(t->w);
  } else if (nothing_new(t)) {
    t->steps->abort(t->w); /* nothing to publish */
  } else if ((rc = t->steps->publish(t->w, err)) < 0) {
    t->steps->abort(t->w); /* keeps what the failed publish kept */
  } else {
    *published = t->published = 1;
  }
  finish(t);
  return rc;
}

int ds_txn_rollback(ds_txn *t, char **err) {
  (void)err;
  if (t->active) t->steps->abort(t->w);
  finish(t);
  return 0;
}

int ds_txn_savepoint(ds_txn *t, int n, char **err) {
  if (!t->active && ds_txn_begin(t, err)) return -1;
  if (n < 0) return 0;
  if (n >= t->nmarks) {
    void **m = realloc(t->marks, (size_t)(n + 1) * sizeof *m);
    if (!m) return ds_err(err, "out of memory");
    memset(m + t->nmarks, 0, (size_t)(n + 1 - t->nmarks) * sizeof *m);
    t->marks = m;
    t->nmarks = n + 1;
  }
  free(t->marks[n]);
  t->marks[n] = NULL;
  /* A mark that fails (a bagz writer drains its compressor: the rows of
   * statements already done may be lost) leaves no state to go back to,
   * and SQLite reports it without our message: the COMMIT fails with it. */
  int rc = t->steps->mark(t->w, &t->marks[n], err);
  if (rc && !t->broken)
    t->broken = ds_strf("a savepoint could not be taken (%s); the transaction "
                        "cannot commit, ROLLBACK it", err && *err ? *err : "?");
  return rc;
}

int ds_txn_release(ds_txn *t, int n, char **err) {
  (void)err;
  if (t->active && n < t->nmarks) drop_marks(t, n);
  return 0;
}

int ds_txn_rollback_to(ds_txn *t, int n, char **err) {
  if (!t->active) return 0;
  t->rolled_back = 1;
  t->prepared = 0;
  /* the state at savepoint n: its mark, else the closest earlier one, else
   * (the table joined the transaction after savepoint n) its start */
  const void *m = t->base;
  for (int i = n < t->nmarks ? n : t->nmarks - 1; i >= 0; i--)
    if (t->marks[i]) {
      m = t->marks[i];
      break;
    }
  if (n + 1 < t->nmarks) {
    for (int i = n + 1; i < t->nmarks; i++) {
      free(t->marks[i]);
      t->marks[i] = NULL;
    }
  }
  /* A failed rollback would make SQLite roll back the whole transaction
   * and run the next statements on their own (each one committed): the
   * transaction stays open instead, and its COMMIT fails with the reason. */
  char *e = NULL;
  if (t->steps->rollback_to(t->w, m, &e) && !t->broken)
    t->broken = ds_strf("a statement could not be undone (%s); the transaction "
                        "cannot commit, ROLLBACK it", e ? e : "?");
  free(e);
  (void)err;
  return 0;
}
