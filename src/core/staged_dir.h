/* staged_dir.h - a dataset that is one directory (atlas, bcolz), written
 * through a stage (core/stage.h) with the transaction steps of
 * vtab/writer_txn.h: begin makes a temporary directory beside the target
 * and opens the format's writer in it, a mark is a row count and rolling
 * back to it truncates, prepare finishes the format's files, names the
 * directory's final path and fsyncs the tree, publish renames (exchanges)
 * it into place, abort frees the writer and deletes the temporary.
 *
 * The format plugs in through ds_dir_format (its writer as a void *).
 * A transaction after a publish restages the whole dataset: begin opens a
 * new writer in a new temporary directory and replays every row of the
 * published one into it (the format's replay), the new rows follow, and
 * publish exchanges the new directory for the old one. A second commit
 * thus costs a rewrite of the dataset, and the result is what one
 * transaction with all the rows would have written. Knows no SQLite and
 * no bytes. */
#ifndef DS_STAGED_DIR_H
#define DS_STAGED_DIR_H

#include <stdint.h>

#include "core/stage.h"
#include "core/value.h"
#include "core/writer_steps.h"

typedef struct ds_dir_format {
  const char *name;   /* "atlas", for messages */
  int (*open)(const char *dir, const void *cfg, void **w, char **err);
  int (*add)(void *w, const ds_value *v, char **err);
  uint64_t (*count)(const void *w);
  int (*truncate)(void *w, uint64_t count, char **err);
  int (*finish)(void *w, char **err);
  void (*free)(void *w);
  /* add every row of the dataset published at `dir` to w, in order */
  int (*replay)(void *w, const char *dir, char **err);
  /* 0 when an existing `path` is a dataset of the format, which
   * mode=replace may replace; else an error naming what is there */
  int (*own)(const char *path, char **err);
} ds_dir_format;

typedef struct ds_staged_dir ds_staged_dir;

/* A writer of directory `path` on `stage` (borrowed); cfg is passed to
 * the format's open (borrowed, must outlive the writer). mode=create: an
 * error when path exists; replace: it is replaced whole at publish. */
int ds_staged_dir_open(ds_stage *stage, const char *path, const ds_dir_format *fmt,
                       const void *cfg, ds_staged_dir **out, char **err);
void ds_staged_dir_close(ds_staged_dir *d);

/* Directory and lock key (malloc'd) for a target directory path. */
int ds_staged_dir_target(const char *path, char **dir, char **key, char **err);

/* The transaction: ds_staged_dir_begin, _count, _mark, _rollback_to,
 * _prepare, _publish and _abort (core/writer_steps.h). */
DS_WRITER_STEPS(ds_staged_dir, ds_staged_dir);
int ds_staged_dir_add(ds_staged_dir *d, const ds_value *v, char **err);
/* The cfg given to ds_staged_dir_open. */
const void *ds_staged_dir_config(const ds_staged_dir *d);
/* The format writer of this transaction (what the format's open made),
 * or NULL before its first row: for a format's shortcut past add. */
void *ds_staged_dir_writer(const ds_staged_dir *d);
/* The published directory, or NULL before the first publish. */
const char *ds_staged_dir_published(const ds_staged_dir *d);

#endif
