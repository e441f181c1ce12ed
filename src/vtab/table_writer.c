/* table_writer.c - the writing part every module's CREATE form shares
 * (see table_writer.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/abspath.h"
#include "core/common.h"
#include "core/npy.h"
#include "core/utf8.h"
#include "sql/value_sql.h"
#include "vtab/dataset.h"
#include "vtab/table_writer.h"
#include "vtab/vtab_util.h"
#include "vtab/writer_registry.h"

/* 1 when the option named `name` is mode= or one of `options` takes only
 * in the writer form (a table reading what its writer wrote leaves it out). */
static int write_only(const ds_opt_group *options, const char *name) {
  if (strcmp(name, ds_mode_specs[0].name) == 0) return 1;
  for (const ds_opt_group *g = options; g && g->specs; g++)
    for (const ds_opt_spec *s = g->specs; s->name; s++)
      if (strcmp(s->name, name) == 0) return !(s->forms & DS_FORM_CREATE);
  return 0;
}

/* The writer table SQLite is connecting on this thread (its xCreate or a
 * reconnect), for ds_table_writer_new and _attach in the module's declare
 * hook: the key of its writer in vtab/writer_registry.h. */
typedef struct connecting {
  sqlite3 *db;
  const char *schema, *name;
  char *args;             /* the CREATE arguments, 0x1f between them */
  ds_table_writer *found; /* the table's existing writer: a reconnect */
  int taken;              /* ds_table_writer_new handed `found` out */
  ds_table_writer *added; /* the writer this connect opened and keeps */
} connecting;
static _Thread_local connecting *current;

/* The CREATE arguments (path and options) as one string. */
static char *join_args(int argc, const char *const *argv) {
  size_t n = 1;
  for (int i = 3; i < argc; i++) n += strlen(argv[i]) + 1;
  char *s = malloc(n), *p = s;
  for (int i = 3; s && i < argc; i++) p += sprintf(p, "%s\x1f", argv[i]);
  if (s) *p = 0;
  return s;
}

static void writer_destroy(ds_table_writer *tw);
static void writer_retire(ds_table_writer *tw);

/* Make t read what its writer published since t last looked. */
static int catch_up(ds_table *t, ds_table_writer *tw, char **err) {
  if (t->publishes == tw->publishes) return 0;
  const char *path = tw->fmt->published(tw->w);
  if (path && ds_dataset_reopen(&t->ds, path, &tw->read_opts, err)) return -1;
  t->publishes = tw->publishes;
  return 0;
}

int ds_table_writer_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                            sqlite3_vtab **out, char **pzErr) {
  /* argv: module, database, table, path, options... Whether the table
   * writes (mode=) is known once its options are bound (ds_table_open,
   * which also refuses a writer outside TEMP); every CREATE form is
   * connected as one that may. */
  if (argc <= 3) return ds_table_connect(db, aux, argc, argv, out, pzErr);
  connecting c = {db, argv[1], argv[2], join_args(argc, argv), NULL, 0, NULL};
  if (!c.args) return SQLITE_NOMEM;
  c.found = ds_writer_registry_find(db, c.schema, c.name, c.args);
  connecting *prev = current;
  current = &c;
  int rc = ds_table_connect(db, aux, argc, argv, out, pzErr);
  current = prev;
  free(c.args);
  if (c.found && !c.taken && ds_writer_registry_release(c.found)) writer_destroy(c.found);
  if (rc != SQLITE_OK) {
    /* a failed xCreate: its table does not exist, nor does its writer */
    if (c.added && ds_writer_registry_forget(c.added)) writer_destroy(c.added);
    return rc;
  }
  ds_table *t = (ds_table *)*out;
  ds_table_writer *tw = ((ds_writable_table *)t)->writer;
  char *err = NULL;
  if (tw && catch_up(t, tw, &err)) {
    ds_table_disconnect(*out);
    *out = NULL;
    return ds_set_error(pzErr, argv[0], err);
  }
  return SQLITE_OK;
}

int ds_table_writer_destroy(sqlite3_vtab *vtab) {
  ds_table_writer *tw = ((ds_writable_table *)vtab)->writer;
  if (tw) {
    /* an older sqlite3_vtab of the table may wait to be disconnected:
     * the lock goes now, the shell with the last of them */
    writer_retire(tw);
    ds_writer_registry_forget(tw); /* this table still holds it */
  }
  return ds_table_disconnect(vtab);
}

int ds_table_writer_rename(sqlite3_vtab *vtab, const char *name) {
  ds_table *t = (ds_table *)vtab;
  ds_table_writer *tw = ((ds_writable_table *)vtab)->writer;
  if (!tw) return SQLITE_OK;
  /* a ROLLBACK would give the table its old name back, and SQLite would
   * connect it under a name its writer no longer has */
  if (!sqlite3_get_autocommit(t->db))
    return ds_vtab_error(vtab, t->def->name,
                         ds_strf("a writer table cannot be renamed inside a "
                                 "transaction: rename it after COMMIT"));
  return ds_writer_registry_rename(tw, name) ? SQLITE_NOMEM : SQLITE_OK;
}

int ds_table_writer_register(sqlite3 *db) { return ds_writer_registry_hook(db); }

int ds_table_register(sqlite3 *db, const ds_table_def *def) {
  int rc = sqlite3_create_module_v2(db, def->name, def->methods, (void *)def, NULL);
  if (rc == SQLITE_OK) rc = ds_table_writer_register(db);
  if (rc == SQLITE_OK && def->register_more) rc = def->register_more(db);
  return rc;
}

int ds_table_writer_new(const ds_options *o, const ds_opt_group *options,
                        ds_table_writer **out, char **err) {
  if (current && current->found && !current->taken) {
    current->taken = 1;
    *out = current->found;
    return 1;
  }
  ds_table_writer *tw = calloc(1, sizeof *tw);
  if (!tw) return ds_err(err, "out of memory");
  for (size_t i = 0; i < o->n; i++) {
    if (write_only(options, o->items[i].name)) continue;
    if (ds_options_put(&tw->read_opts, o->items[i].name, o->items[i].value, err)) {
      ds_table_writer_free(tw);
      return -1;
    }
  }
  *out = tw;
  return 0;
}

int ds_table_writer_open(const char *path, const ds_options *o, int mode,
                         const ds_table_writer_spec *spec, ds_table_writer **out,
                         char **err) {
  ds_table_writer *tw = NULL;
  ds_stage *stage = NULL;
  void *w = NULL;
  char *dir = NULL, *key = NULL;
  int rc = ds_table_writer_new(o, spec->options, &tw, err);
  if (rc == 1) {
    *out = tw;
    return 1;
  }
  const char *file = rc == 0 ? ds_writer_path(path, err) : NULL; /* no `posix:` */
  if (rc == 0 && !file) rc = -1;
  if (rc == 0) rc = spec->target(file, &dir, &key, err);
  if (rc == 0)
    rc = ds_stage_open(dir, key, mode == 2 ? DS_STAGE_REPLACE : DS_STAGE_CREATE, &stage, err);
  if (rc == 0) rc = spec->open(stage, file, spec->ctx, &w, err);
  free(dir);
  free(key);
  if (rc) {
    ds_stage_close(stage);
    ds_table_writer_free(tw);
    return -1;
  }
  ds_table_writer_attach(tw, spec->fmt, w, stage);
  tw->target = strdup(path); /* NULL (out of memory) only loses the name */
  *out = tw;
  return 0;
}

void ds_table_writer_attach(ds_table_writer *tw, const ds_table_writer_fmt *fmt,
                            void *w, ds_stage *stage) {
  tw->fmt = fmt;
  tw->w = w;
  tw->stage = stage;
  ds_txn_init(&tw->txn, &fmt->steps, w);
  if (current && !current->found && !current->added &&
      ds_writer_registry_add(current->db, current->schema, current->name, current->args,
                             tw, writer_destroy) == 0)
    current->added = tw;
}

void ds_table_writer_free(ds_table_writer *tw) {
  if (tw && ds_writer_registry_release(tw)) writer_destroy(tw);
}

/* End a writer's work: the open transaction aborted, the format writer
 * and the stage (temporaries, lock) closed. What is left is a shell that
 * answers no hook (writer_of), for a sqlite3_vtab SQLite has yet to
 * disconnect. */
static void writer_retire(ds_table_writer *tw) {
  tw->row_fast = NULL;
  if (tw->retired) return;
  if (tw->fmt) {
    ds_txn_free(&tw->txn); /* a connection closed without commit: abort */
    tw->fmt->close(tw->w);
  }
  ds_stage_close(tw->stage);
  tw->stage = NULL;
  tw->retired = 1;
}

/* Free a writer (retired first). */
static void writer_destroy(ds_table_writer *tw) {
  if (!tw) return;
  writer_retire(tw);
  ds_options_free(&tw->read_opts);
  free(tw->failed);
  free(tw->target);
  free(tw);
}

/* A COMMIT of this writer failed: the error SQLite dropped, for the
 * table's next statement (every next one when nothing was published:
 * the writer's state is no longer the files'). */
static int failed_commit(ds_table_writer *tw, char **err) {
  if (!tw->failed) return 0;
  ds_err(err, "%s (the COMMIT of this writer table failed: %s)",
         tw->failed_once ? "the last COMMIT reported an error"
                         : "this writer table writes no more; DROP it",
         tw->failed);
  if (tw->failed_once) {
    free(tw->failed);
    tw->failed = NULL;
  }
  return -1;
}

/* The writer of a table (NULL: a reading table, or its table dropped). */
static ds_table_writer *writer_of(ds_table *t) {
  ds_table_writer *tw = ((ds_writable_table *)t)->writer;
  return tw && !tw->retired ? tw : NULL;
}

/* The writer of a table for a transaction step (NULL: none), its row
 * shortcut cleared: a step may end what the shortcut points into, and the
 * first row after it goes the long way, through every check. */
static ds_table_writer *step_writer(ds_table *t) {
  ds_table_writer *tw = writer_of(t);
  if (tw) tw->row_fast = NULL;
  return tw;
}

const char *ds_table_writer_target(ds_table *t) {
  ds_table_writer *tw = writer_of(t);
  return tw ? tw->target : NULL;
}

/* Make the table's remote settings (endpoint=, region=, ...) current for
 * a writer call that may read what it published or upload; returns the
 * ones before. */
static const ds_vfs_remote_opts *use_remote(const ds_table *t) {
  return ds_vfs_remote_use(t->ds ? &t->ds->remote : ds_vfs_remote_current());
}

/* The checks of one INSERT: no I/O (so, unlike the transaction steps,
 * not under the table's remote settings: making them current costs two
 * thread-local accesses per row, a twentieth of a bcolz copy's time). */
int ds_table_writer_insert(ds_table *t, int argc, sqlite3_value **argv,
                           uint64_t *row, char **err) {
  ds_table_writer *tw = writer_of(t);
  if (!tw && t->tvf) /* no path of its own: say how to write */
    return ds_err(err, "the table-valued form only reads: to write, CREATE VIRTUAL "
                       "TABLE t USING %s('path', mode=create) and INSERT INTO t",
                  t->def->name);
  if (!tw)
    return ds_err(err, "%s: the table reads (mode=read, or a writer table "
                       "reopened from a database's schema); CREATE a table "
                       "with mode=create or mode=replace to write",
                  t->ds ? t->ds->path : "");
  if (failed_commit(tw, err)) return -1;
  if (argc == 1 || sqlite3_value_type(argv[0]) != SQLITE_NULL)
    return ds_err(err, "%s: datasets are written once: only INSERT, no %s",
                  t->ds ? t->ds->path : "", argc == 1 ? "DELETE" : "UPDATE");
  uint64_t next = tw->fmt->count(tw->w);
  if (sqlite3_value_type(argv[1]) != SQLITE_NULL &&
      (sqlite3_value_type(argv[1]) != SQLITE_INTEGER ||
       (uint64_t)sqlite3_value_int64(argv[1]) != next))
    return ds_err(err, "row %llu: rowid %s: a new row's rowid must be NULL or the "
                       "next index (%llu)",
                  (unsigned long long)next, (const char *)sqlite3_value_text(argv[1]),
                  (unsigned long long)next);
  *row = next;
  return 0;
}

void ds_value_from_sql(sqlite3_value *v, ds_value *out) {
  int type = sqlite3_value_type(v); /* once: it is a call per value */
  memset(out, 0, sizeof *out);
  switch (type) {
    case SQLITE_INTEGER: out->type = DS_V_INT; out->u.i = sqlite3_value_int64(v); break;
    case SQLITE_FLOAT: out->type = DS_V_FLOAT; out->u.f = sqlite3_value_double(v); break;
    case SQLITE_TEXT:
    case SQLITE_BLOB: /* text or bytes: the empty string rather than NULL */
      out->type = type == SQLITE_TEXT ? DS_V_TEXT : DS_V_BYTES;
      out->u.s.p = type == SQLITE_TEXT ? sqlite3_value_text(v) : sqlite3_value_blob(v);
      out->u.s.n = (size_t)sqlite3_value_bytes(v);
      if (!out->u.s.p) out->u.s.p = (const uint8_t *)"";
      break;
    default: out->type = DS_V_NULL;
  }
}

/* v's numeric value when it is text SQLite reads as a number (its
 * numeric affinity, on a copy): SQLITE_INTEGER or SQLITE_FLOAT with *i or
 * *f set, else 0. */
static int numeric_text(sqlite3_value *v, int64_t *i, double *f) {
  sqlite3_value *c = sqlite3_value_dup(v);
  int t = c ? sqlite3_value_numeric_type(c) : 0;
  if (t == SQLITE_INTEGER) *i = sqlite3_value_int64(c);
  else if (t == SQLITE_FLOAT) *f = sqlite3_value_double(c);
  else t = 0;
  sqlite3_value_free(c);
  return t;
}

/* 1 when a BYTES value is a whole .npy array of numbers (bool, int, uint,
 * float): a list of values in a numeric column (tf.Example int64 and float
 * lists, msgpack-numpy arrays). */
static int numeric_npy(const ds_value *v) {
  ds_npy a;
  char *e = NULL;
  int ok = ds_npy_parse(v->u.s.p, v->u.s.n, &a, &e) == 0 && !a.structured &&
           (a.kind == 'b' || a.kind == 'i' || a.kind == 'u' || a.kind == 'f');
  free(e);
  return ok;
}

/* 1 when f is a whole number an int64 holds (*i set). */
static int whole(double f, int64_t *i) {
  if (!(f >= -9223372036854775808.0 && f < 9223372036854775808.0) || f != (double)(int64_t)f)
    return 0;
  *i = (int64_t)f;
  return 1;
}

/* The error for a value that is not `what`: "'abc' is not an integer"
 * (text escaped, at most 40 bytes shown), "a BLOB is not ...". -1. */
static int not_fit(sqlite3_value *v, const ds_value *out, const char *what, char **why) {
  if (sqlite3_value_type(v) != SQLITE_TEXT) return ds_err(why, "a BLOB is not %s", what);
  char *q = ds_escape(out->u.s.p, out->u.s.n < 40 ? out->u.s.n : 40);
  ds_err(why, "'%s%s' is not %s", q ? q : "", out->u.s.n > 40 ? "..." : "", what);
  free(q);
  return -1;
}

int ds_value_from_sql_decl(sqlite3_value *v, ds_decl decl, ds_value *out, char **why) {
  ds_value_from_sql(v, out);
  int t = sqlite3_value_type(v);
  if (t == SQLITE_NULL || decl == DS_DECL_NONE || decl == DS_DECL_BLOB || decl == DS_DECL_JSON)
    return 0;
  if (decl == DS_DECL_TEXT) {
    if (t == SQLITE_BLOB) return ds_err(why, "a BLOB is not TEXT");
    if (t != SQLITE_TEXT) { /* a number stored as its text, as SQLite does */
      out->type = DS_V_TEXT;
      out->u.s.p = sqlite3_value_text(v);
      out->u.s.n = (size_t)sqlite3_value_bytes(v);
      if (!out->u.s.p) return ds_err(why, "out of memory");
    }
    return 0;
  }
  if (t == SQLITE_BLOB && numeric_npy(out)) return 0; /* a list */
  int64_t i = 0;
  double f = 0;
  int num = t == SQLITE_INTEGER ? (i = out->u.i, SQLITE_INTEGER)
            : t == SQLITE_FLOAT ? (f = out->u.f, SQLITE_FLOAT)
            : t == SQLITE_TEXT  ? numeric_text(v, &i, &f)
                                : 0;
  switch (decl) {
    case DS_DECL_INTEGER:
      if (num == SQLITE_FLOAT && !whole(f, &i))
        return ds_err(why, "%.17g is not an integer", f);
      if (!num) return not_fit(v, out, "an integer", why);
      out->type = DS_V_INT;
      out->u.i = i;
      return 0;
    case DS_DECL_REAL:
      if (!num) return not_fit(v, out, "a REAL", why);
      out->type = DS_V_FLOAT;
      out->u.f = num == SQLITE_INTEGER ? (double)i : f;
      return 0;
    case DS_DECL_NUMERIC:
      if (!num) return not_fit(v, out, "a number", why);
      if (num == SQLITE_FLOAT && whole(f, &i)) num = SQLITE_INTEGER;
      out->type = num == SQLITE_INTEGER ? DS_V_INT : DS_V_FLOAT;
      if (num == SQLITE_INTEGER) out->u.i = i;
      else out->u.f = f;
      return 0;
    default:
      return 0;
  }
}

int ds_sql_is_json(sqlite3_value *v) {
  return sqlite3_value_type(v) == SQLITE_TEXT && sqlite3_value_subtype(v) == DS_JSON_SUBTYPE;
}

int ds_table_writer_begin(ds_table *t, char **err) {
  ds_table_writer *tw = step_writer(t);
  if (!tw) return 0;
  if (failed_commit(tw, err)) return -1;
  const ds_vfs_remote_opts *was = use_remote(t);
  int rc = catch_up(t, tw, err) || ds_txn_begin(&tw->txn, err) ? -1 : 0;
  ds_vfs_remote_use(was);
  return rc;
}

/* A transaction step of t's writer (0 when t has none), run with the
 * table's remote settings current. */
static int txn_step(ds_table *t, int (*step)(ds_txn *, char **), char **err) {
  ds_table_writer *tw = step_writer(t);
  const ds_vfs_remote_opts *was = use_remote(t);
  int rc = tw ? step(&tw->txn, err) : 0;
  ds_vfs_remote_use(was);
  return rc;
}

int ds_table_writer_sync(ds_table *t, char **err) { return txn_step(t, ds_txn_sync, err); }

/* Publish, then let the table read what it wrote. (Another sqlite3_vtab
 * of the same table, connected again, may commit the writer first.) */
int ds_table_writer_commit(ds_table *t, char **err) {
  ds_table_writer *tw = step_writer(t);
  int published;
  if (!tw) return 0;
  const ds_vfs_remote_opts *was = use_remote(t);
  int rc = ds_txn_commit(&tw->txn, &published, err);
  ds_vfs_remote_use(was);
  if (published) tw->publishes++;
  if (rc) { /* kept for the next statement: SQLite drops it */
    if (!tw->failed || tw->failed_once) {
      free(tw->failed);
      tw->failed = strdup(err && *err ? *err : "unknown error");
      tw->failed_once = rc > 0;
    }
    if (rc < 0) return -1;
  }
  return catch_up(t, tw, err) || rc ? -1 : 0;
}

int ds_table_writer_rollback(ds_table *t, char **err) {
  return txn_step(t, ds_txn_rollback, err);
}

int ds_table_writer_savepoint(ds_table *t, int n, char **err) {
  ds_table_writer *tw = step_writer(t);
  return tw ? ds_txn_savepoint(&tw->txn, n, err) : 0;
}

int ds_table_writer_release(ds_table *t, int n, char **err) {
  ds_table_writer *tw = step_writer(t);
  return tw ? ds_txn_release(&tw->txn, n, err) : 0;
}

int ds_table_writer_rollback_to(ds_table *t, int n, char **err) {
  ds_table_writer *tw = step_writer(t);
  return tw ? ds_txn_rollback_to(&tw->txn, n, err) : 0;
}
