/* dataset.h - what every module's opened dataset shares: a reference count
 * (a table and its cursors hold it), the table-valued form's cache key,
 * the path, and change detection. A module puts `ds_dataset base` first in
 * its own dataset struct and describes itself with a ds_dataset_ops; the
 * functions here do the rest: opening from CREATE VIRTUAL TABLE arguments
 * or a table-valued call (with a one-dataset cache per table), reopening
 * when the files changed, refusing a CREATE-form table whose files did. */
#ifndef DS_DATASET_H
#define DS_DATASET_H

#include <stdint.h>

#include "core/option_spec.h"
#include "core/options.h"
#include "core/row_window.h"
#include "sql/sqlite_api.h"

typedef struct ds_dataset ds_dataset;

typedef struct ds_dataset_ops {
  const char *usage; /* the call, shown (with the options) when no path is given */
  /* Check the options (for the form: tvf 1 or 0) and open the files into
   * d, the module's struct (size bytes, ds_dataset first, zeroed). Every
   * error names the path or the file at fault; close runs either way. */
  int (*open)(ds_dataset *d, const char *path, const ds_options *o, int tvf, char **err);
  /* Free the module's part (of a struct open may have left half filled). */
  void (*close)(ds_dataset *d);
  /* 1 when the dataset's files changed on disk since they were opened. */
  int (*changed)(const ds_dataset *d);
  /* 1 when a read already found the files replaced under it (no system
   * call: looked at before every query); NULL when reads cannot. */
  int (*saw_change)(const ds_dataset *d);
  size_t size;       /* the module's dataset struct */
  const ds_opt_group *options; /* every option of the module (usage, help) */
} ds_dataset_ops;

/* mode=read|create|replace: the option of every writing module's CREATE
 * form (0, 1, 2; vtab/table_writer.h). */
extern const ds_opt_spec ds_mode_specs[];
/* The option groups `var` of a writing module (atlas, bcolz, datadings):
 * its own specs, bound at the start of its options struct `type`, then
 * what every writing module takes, bound into the fields mode, write,
 * common and window: mode=, the format writer's options, the common
 * options (core/option_spec.h) and the row window (core/row_window.h). */
#define DS_WRITING_MODULE_OPTIONS(var, type, own_specs, write_specs)                          \
  const ds_opt_group var[] = {{own_specs, 0},                                                 \
                              {ds_mode_specs, offsetof(type, mode)},                          \
                              {write_specs, offsetof(type, write)},                           \
                              {ds_common_option_specs, offsetof(type, common)},               \
                              {ds_row_window_specs, offsetof(type, window)},                  \
                              {0}}
/* The module's usage: its call and its options (malloc'd; NULL: out of
 * memory). */
char *ds_dataset_usage(const ds_dataset_ops *ops);

struct ds_dataset {
  const ds_dataset_ops *ops;
  int refs;
  char *key;          /* "path\noptions": names it in a table's cache */
  char *path;
  int64_t checked_ns; /* last look for changed files */
  int stale;          /* its files changed: unusable from now on */
  uint64_t max_value_bytes; /* option max_value_bytes (default DS_MAX_VALUE_BYTES):
                         cursors put it on their buffers and arenas */
  int mode;           /* option mode= (0 read, 1 create, 2 replace) */
  unsigned form;      /* DS_FORM_TVF, _CREATE or _WRITER (core/option_spec.h):
                         the options ops->open takes */
  ds_row_window win;  /* options shard, first_rowid, rowid_step,
                         shard_index, rows: the rows a table shows and their
                         whole-dataset numbers (vtab/table.c applies it) */
  ds_vfs_remote_opts remote; /* endpoint=, region=, ... (strings owned): current
                         (core/vfs.h) while the dataset opens, is checked and
                         read, so remote files opened later use them too */
};


/* CREATE VIRTUAL TABLE t USING module(path, name=value, ...): open the
 * dataset; *o gets the parsed options (free with ds_options_free) for the
 * module's own use (column inference, ...). */
int ds_dataset_create(const ds_dataset_ops *ops, int argc, const char *const *argv,
                      ds_options *o, ds_dataset **out, char **err);

/* The CREATE form's dataset at `path` with options o already parsed
 * (dataset_info). */
int ds_dataset_open_options(const ds_dataset_ops *ops, const char *path, const ds_options *o,
                            ds_dataset **out, char **err);

/* A table-valued call: the dataset named by args[0] (path) and args[1]
 * (options text), from *cache when the same and unchanged, else opened
 * (and cached). *path_arg / *options_arg get sqlite3_malloc'd copies for
 * the HIDDEN columns. */
int ds_dataset_for_call(const ds_dataset_ops *ops, ds_dataset **cache,
                        sqlite3_value *const *args, char **path_arg,
                        char **options_arg, char **err);

/* A CREATE-form table's dataset before a query: 0 usable; -1 its files
 * changed (and it stays refused). */
int ds_dataset_check(ds_dataset *d, char **err);

/* A CREATE-form table's dataset opened again at `path` (what a writer
 * just published) with options o; *d is replaced (the old one unref'd,
 * cursors that hold it keep it). 0, or -1 with *err and *d unchanged. */
int ds_dataset_reopen(ds_dataset **d, const char *path, const ds_options *o,
                      char **err);

void ds_dataset_ref(ds_dataset *d);
void ds_dataset_unref(ds_dataset *d); /* NULL is fine */

#endif
