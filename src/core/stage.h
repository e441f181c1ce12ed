/* stage.h - writing a dataset transactionally, for every format: files are
 * built under temporary names beside their target, made durable, and
 * published so that a reader sees the old dataset, the new one, or (for a
 * moment, in a multi-file replace) none, never a mix.
 *
 *   ds_stage_open      lock the target (one writer per path), finish or
 *                      undo what a dead writer journaled, remove the
 *                      temporaries it left behind
 *   ds_stage_file      a new append-only temporary file (ds_afile)
 *   ds_stage_dir       a new temporary directory (atlas shards, bcolz)
 *   ds_stage_final     say where a temporary goes at publish
 *   ds_stage_obsolete  an existing file or directory the new dataset
 *                      replaces (removed at publish if not overwritten)
 *   ds_stage_sync      prepare (xSync): everything that can fail
 *   ds_stage_publish   commit (xCommit): one rename
 *   ds_stage_discard   forget every temporary (rollback; after a prepare,
 *                      the old dataset is put back first)
 *
 * Names. For a target directory D and a lock name K (the dataset's base
 * name, e.g. "train.msgpack" or "clean@.bagz"): the lock is "D/.K.ds-lock"
 * (flock'ed; held for the stage's life), temporaries are
 * "D/.K.ds-tmp.<pid>.<seq>.<label>", the journal "D/.K.ds-journal", old
 * files waiting for the commit "D/.K.ds-old.<pid>.<n>". Only the holder of
 * the lock creates these, so whoever takes the lock may delete every
 * "D/.K.ds-tmp.*" it finds (after the journal's recovery): their owner is
 * dead. ds-old files are only ever deleted through a journal.
 *
 * The commit point is the temporary named last by ds_stage_final (a
 * multi-file dataset's readers look for it first: datadings' X.msgpack,
 * bagz's shard 0). Prepare (ds_stage_sync): fsync the temporaries; check
 * every final name (mode=create: nothing there that this writer did not
 * publish; mode=replace: only the format's own files, see
 * ds_stage_set_own); then, with one final and no other old file, nothing
 * more. With several: write and fsync the journal (stage_journal.h), move
 * the old files away (the old commit point first), rename the new files
 * but the commit point into place without replacing anything, fsync D.
 * Publish (ds_stage_publish): rename the commit point (a file: rename(2)
 * over its old self, else RENAME_NOREPLACE; a directory: RENAME_EXCHANGE
 * with its old self), fsync D, delete the old files and the journal.
 * A target folder on object storage (s3://, gs://) is staged in a private
 * local folder and published by core/stage_remote.h instead of renames.
 * Knows no SQLite. */
#ifndef DS_STAGE_H
#define DS_STAGE_H

#include <stddef.h>
#include <stdint.h>

#include "append_file.h"
#include "common.h"
#include "vfs.h" /* ds_fsync_path, ds_remove_tree */

typedef enum ds_stage_mode {
  DS_STAGE_CREATE = 0, /* refuse when any target exists */
  DS_STAGE_REPLACE = 1 /* the old dataset stays until publish */
} ds_stage_mode;

typedef struct ds_stage ds_stage;

/* Lock `dir`/.`key`.ds-lock (an error naming the path when another writer
 * holds it), recover a journal a dead writer left (stage_journal.h) and
 * delete stale temporaries of `key`. */
int ds_stage_open(const char *dir, const char *key, ds_stage_mode mode,
                  ds_stage **out, char **err);
/* Remove every temporary, release the lock, free. NULL is fine. */
void ds_stage_close(ds_stage *s);

ds_stage_mode ds_stage_get_mode(const ds_stage *s);
/* The directory targets live in (as given to ds_stage_open). */
const char *ds_stage_dir_path(const ds_stage *s);

/* mode=create: an error naming `path` when it exists ("already exists;
 * use mode=replace"), unless this writer published it. mode=replace:
 * nothing. */
int ds_stage_check_absent(const ds_stage *s, const char *path, char **err);

/* A new, empty temporary file; `label` ends its name (for people looking
 * at the directory). The stage owns *out. */
int ds_stage_file(ds_stage *s, const char *label, ds_afile **out, char **err);
/* The temporary file f will most likely be published as final_path (a
 * name known before the rows end): a remote stage uploads its bytes in
 * parts as they are written (core/stage_early.h); a local one starts their
 * disk writes as they are written (f->writeback), so that its fsync at
 * commit waits for little. A different final name at prepare only costs
 * the parts sent (or written early). */
void ds_stage_expect(ds_stage *s, ds_afile *f, const char *final_path);
/* A new temporary directory (its path in *out, owned by the stage). */
int ds_stage_dir(ds_stage *s, const char *label, const char **out, char **err);
/* Publish temporary `tmp_path` (a file's f->path or a directory from
 * ds_stage_dir) as `final_path`. The last one named is the commit point.
 * A temporary never named is deleted at publish. */
int ds_stage_final(ds_stage *s, const char *tmp_path, const char *final_path,
                   char **err);
/* `path` exists and belongs to the old dataset; `first`: it is the old
 * commit point (moved away before the new files appear). An error naming
 * what is there unless it is the format's own (a regular file, or what
 * the ds_stage_set_own check accepts). */
int ds_stage_obsolete(ds_stage *s, const char *path, int first, char **err);
/* A path the new dataset will occupy: mode=create, an error when it exists
 * (ds_stage_check_absent); mode=replace, an existing one is obsolete
 * (ds_stage_obsolete, `first` as there). */
int ds_stage_claim(ds_stage *s, const char *path, int first, char **err);

/* A dataset that is a directory: `own` says whether an existing path is
 * a dataset of the format (0) or refuses it (an error naming what is
 * there). Without it only regular files are replaced. */
void ds_stage_set_own(ds_stage *s, int (*own)(const char *path, char **err));

/* Prepare the publish (the order in the comment at the top): after it
 * succeeds only the commit point's rename is left. On failure nothing is
 * changed (what was moved is put back). Called again, it undoes itself
 * and prepares anew. */
int ds_stage_sync(ds_stage *s, char **err);
/* Commit: rename the commit point (ds_stage_sync first when not done).
 * 0: published. 1: published, but the directory's fsync (or memory for
 * the next version) failed: *err says so. -1: nothing published: the old
 * dataset is as it was and the temporaries stay on disk (*err names
 * them; the next writer of the dataset deletes them). Afterwards the
 * stage holds no temporaries, and the files just published are the
 * obsolete paths of the next version (its commit point first). */
int ds_stage_publish(ds_stage *s, char **err);
/* Delete every temporary and forget the finals (the obsolete paths stay:
 * they are still what the next publish replaces). After a prepare, the
 * old files come back first. */
void ds_stage_discard(ds_stage *s);

/* Close a temporary file's descriptor (flushed) to bound how many a
 * writer holds; ds_stage_unpark opens it again where it was. The stage
 * fsyncs a parked file by path. */
int ds_stage_park(ds_afile *f, char **err);
int ds_stage_unpark(ds_afile *f, char **err);

#endif
