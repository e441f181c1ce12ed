/* stage_remote.h - the publish of a stage (core/stage.h) whose target is
 * on object storage (s3://, gs://). The files are staged locally as for a
 * local target (a private temporary folder, removed at close); prepare
 * (xSync) uploads every byte as multipart uploads that stay invisible;
 * publish (xCommit) completes them, the commit point last. What a reader
 * can see (ARCHITECTURE.md, "Publishing to object storage"):
 *   - one object (bagz/tfrecord single file, mode=create or replace):
 *     the old object or the new one, whole (CompleteMultipartUpload is
 *     atomic per object);
 *   - several objects, mode=create: nothing, then some of the new objects
 *     without the commit point (the format's readers fail on a missing
 *     shard or index: never a set that looks whole), then all of them;
 *   - several objects where any object of the dataset already exists
 *     (mode=replace, or a second COMMIT of the same writer): refused at
 *     prepare, nothing uploaded: objects would change one at a time and a
 *     reader could combine old and new ones. Except, with mode=replace,
 *     when the old set lacks its commit point (a writer killed during its
 *     COMMIT left the others): no reader can read it, so it is
 *     overwritten, the commit point last.
 * Prepare also completes every object but the commit point, so that what
 * can fail at publish is one request (SQLite drops an xCommit's error: the
 * writer reports it at the table's next statement); a rollback after the
 * prepare deletes them again (they are new: see above).
 * Knows no SQLite and no HTTP (core/vfs_publish.h does the requests). */
#ifndef DS_STAGE_REMOTE_H
#define DS_STAGE_REMOTE_H

#include <stddef.h>

#include "core/common.h"
#include "core/vfs_publish.h"

/* One staged temporary to publish: a local file or folder and its final
 * remote path (a folder's files become objects under "final/"). */
typedef struct ds_rpub_item {
  const char *local;
  int is_dir;
  const char *final;
  void *early; /* a file's upload started while it was written
                * (core/stage_early.h), owned by prepare from the call
                * on; or NULL */
} ds_rpub_item;

typedef struct ds_rpub ds_rpub;

/* A private local folder for the temporaries of remote target dir/key
 * (malloc'd path): "$TMPDIR/ds-remote-stage.<hash>.XXXXXX" ($TMPDIR else
 * /tmp). */
char *ds_rpub_local_dir(const char *dir, const char *key, char **err);

/* The writer lock of a remote target on this machine (malloc'd):
 * "$TMPDIR/.ds-remote.<hash of dir and key>.ds-lock" (object storage has
 * no lock: writers on other machines are not seen). */
char *ds_rpub_lock_path(const char *dir, const char *key);
/* Under that lock: delete the staging folders of dir/key other than
 * `mine` (a killed writer's: their owner is dead). */
int ds_rpub_clean_stale(const char *dir, const char *key, const char *mine, char **err);

/* Prepare: items in publish order (the commit point last); olds are the
 * old dataset's paths (mode=create: only what this writer published).
 * Checks every object (see the top), aborts the uploads a killed writer
 * left at each name (not an item's early one), uploads every file (an
 * early upload sends only the parts it has not sent), and completes all
 * but the commit point. On failure nothing is left open or completed. */
int ds_rpub_prepare(const ds_vfs_publisher *p, const ds_rpub_item *items, size_t n,
                    char *const *olds, size_t nolds, int create, ds_rpub **out,
                    char **err);
/* Publish: complete the commit point. On failure the objects completed at
 * prepare are deleted again: -1, nothing published (the old object, if
 * any, as it was). */
int ds_rpub_commit(ds_rpub *r, char **err);
/* Abort what is not committed; before a publish, delete what prepare
 * completed (a rollback); free. NULL is fine. */
void ds_rpub_free(ds_rpub *r);

#endif
