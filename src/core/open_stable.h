/* open_stable.h - open a dataset of several files (shards, side files, a
 * directory tree) so that the files opened all belong to one version while
 * another process replaces the dataset (see README "Files that change
 * under a query"). A reader lists the paths its open reads, opens, and
 * the open counts only when nothing it lists changed meanwhile (identity,
 * size, change time; missing stays missing) and every file it holds is
 * still the one at its path; else the open is retried, a bounded number
 * of times, then fails with "<name>: the dataset changed while it was
 * read". An open that fails while nothing changed fails with its own
 * error at once. Plain C: no SQLite. */
#ifndef DS_OPEN_STABLE_H
#define DS_OPEN_STABLE_H

#include <stddef.h>
#include <stdint.h>

#include "core/shard_spec.h"

/* What a path was when looked at: kind 0 missing, 1 a file (identity,
 * size and change time), 2 a directory (identity only: its entries come
 * and go with other programs' temporaries). */
typedef struct ds_path_id {
  uint64_t dev, ino, size;
  int64_t mtime_ns;
  int kind;
} ds_path_id;

/* The paths an open reads, and what each was. */
typedef struct ds_path_set {
  char **paths;
  ds_path_id *ids;
  size_t n, cap;
} ds_path_set;

/* Add a copy of path (0, or -1 when out of memory). */
int ds_path_set_add(ds_path_set *s, const char *path);
void ds_path_set_free(ds_path_set *s);

/* How one reader opens: `paths` lists what `open` will read (it may look
 * at the disk, e.g. glob: a failure, -1, is returned as the open's error;
 * 1 is a failure because the set is incomplete, given the tries an
 * incomplete set gets);
 * `open` opens into ctx; `stale` says 1 when a file the open holds is no
 * longer the one at its path; `close` undoes a successful open;
 * `incomplete` (may be NULL) says 1 when what `set` saw (ids[i].kind 0:
 * missing) looks like a set in the middle of being replaced (a shard
 * missing beside others): a failed open is then tried again, up to
 * DS_OPEN_WAITS times, before its error is returned. */
typedef struct ds_open_steps {
  int (*paths)(void *ctx, ds_path_set *set, char **err);
  int (*open)(void *ctx, char **err);
  int (*stale)(void *ctx);
  void (*close)(void *ctx);
  int (*incomplete)(void *ctx, const ds_path_set *set);
} ds_open_steps;

/* Tries before an open that keeps seeing changes gives up. */
#define DS_OPEN_TRIES 8
/* Tries given to a set that stays incomplete (1 + 2 + 4 + 8 ms). */
#define DS_OPEN_WAITS 4

/* Open through `steps` as described above; `name` names the dataset in
 * the "changed while it was read" error (an incomplete set that stays so
 * gives the open's own error). */
int ds_open_stable(const char *name, const ds_open_steps *steps, void *ctx, char **err);

/* How a reader of a list of files (shards, each maybe with side files)
 * opens through ds_open_stable, the files expanded from its spec anew on
 * each try. Each step gets the spec and the reader's `arg`:
 * `expand` lists the data files (1: an incomplete set, as
 * ds_open_steps.paths); `side` (may be NULL) adds a data file's side files
 * to set after it (-1: out of memory); `open` opens the files into
 * *reader; `stale` and `close` (of an opened reader) and `incomplete` (may
 * be NULL) are ds_open_steps'. */
typedef struct ds_files_steps {
  int (*expand)(const char *spec, const void *arg, ds_shard_list *files, char **err);
  int (*side)(const void *arg, const char *file, ds_path_set *set);
  int (*open)(const char *spec, const void *arg, const ds_shard_list *files, void **reader,
              char **err);
  int (*stale)(const void *reader);
  void (*close)(void *reader);
  int (*incomplete)(const char *spec, const void *arg, const ds_path_set *set);
} ds_files_steps;

/* ds_open_stable of the files of `spec` through `steps`: the opened
 * reader, or NULL with *err. */
void *ds_open_files_stable(const char *spec, const ds_files_steps *steps, const void *arg,
                           char **err);

/* ds_files_steps.expand of a shard spec (core/shard_spec.h; arg unused):
 * 1 for an @* set found without its shard 0. */
int ds_files_expand_spec(const char *spec, const void *arg, ds_shard_list *files, char **err);

/* ds_open_steps.incomplete of a set of shard files named by spec
 * (core/shard_spec.h): every step-th path of set is a shard's data file
 * (step 2: each followed by one side file). 1 when a data file is missing
 * beside others (a sharded writer moves the old shard 0 away before it
 * renames the new shards in), or any is missing of a spec with `@*` (found
 * on disk a moment before: a writer replaced it with a set of another
 * shard count). */
int ds_shard_set_incomplete(const ds_path_set *set, size_t step, const char *spec);

/* The error of a read that found the dataset replaced under it: "<name>:
 * the dataset changed while it was read (...)"; returns -1. */
int ds_err_changed(char **err, const char *name);

#endif
