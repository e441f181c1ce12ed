/* vfs_publish.h - the seam's publishing operations, for writers whose
 * target is on object storage (s3://, gs://), where a file cannot be
 * renamed into place: a local file is uploaded as an object that stays
 * invisible (a multipart upload not yet completed) until its commit,
 * which makes it appear whole. The stage (core/stage.h) calls these at
 * prepare (upload every byte: what can fail) and at publish (commit in
 * order); only the remote backend (remote/vfs_publish.c) knows HTTP.
 * Plain C: no SQLite. */
#ifndef DS_VFS_PUBLISH_H
#define DS_VFS_PUBLISH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ds_vfs_publisher {
  const char *scheme;
  /* Upload the local file `local` for `target`, invisible until commit
   * (*up: the upload). 0, or -1 with *err naming the URL and the
   * server's code. */
  int (*prepare)(const char *target, const char *local, void **up, char **err);
  /* Make the object appear whole; create_only: refuse (where the server
   * supports conditional writes) when something is at target. */
  int (*commit)(void *up, int create_only, char **err);
  /* Abort an upload not committed, free it (a committed one: free). */
  void (*cancel)(void *up);
  /* Delete the object at target (0 also when none). */
  int (*remove)(const char *target, char **err);
  /* Abort the uploads to exactly `target` that a killed writer left
   * open, but `keep` (this writer's early upload, or NULL); *n how many.
   * 1: the server cannot list them (nothing done). */
  int (*clean)(const char *target, void *keep, size_t *n, char **err);
  /* Forget what the readers' caches know of target (before a check that
   * must see the server's answer of now). */
  void (*forget)(const char *target);
  /* Uploading a file while it is written (core/stage_early.h; NULL: not
   * supported): early starts an upload of the growing file `local` for
   * target; feed says its first `final` bytes are final (whole parts
   * below them go up, never blocking); cut says it was cut back to
   * `size` bytes; finish sends the rest of the file (complete now) and
   * waits, after which *up is as prepare's (on failure it is aborted:
   * cancel still frees it). */
  int (*early)(const char *target, const char *local, void **up, char **err);
  void (*feed)(void *up, uint64_t final);
  void (*cut)(void *up, uint64_t size);
  int (*finish)(void *up, char **err);
} ds_vfs_publisher;

/* The remote publishers (remote/vfs_publish.c). */
extern const ds_vfs_publisher ds_vfs_s3_publisher, ds_vfs_gs_publisher;

/* The publisher of a path's scheme, NULL for a local path (or one whose
 * backend cannot be written, http(s)://). */
const ds_vfs_publisher *ds_vfs_publisher_for(const char *path);

#endif
