/* vfs_each.h - the loop over a folder's entries that the folder walks
 * share (the bytes under a folder, fsync of a tree, what a writer may
 * replace): each entry as its path and what lstat says it is. */
#ifndef DS_VFS_EACH_H
#define DS_VFS_EACH_H

#include "core/vfs.h"

/* One entry of the folder: path is "dir/name"; st is its lstat, or NULL
 * when lstat failed (errno says why: it vanished meanwhile, ...). A
 * nonzero return ends the loop. */
typedef int (*ds_vfs_entry_fn)(void *ctx, const char *path, const char *name,
                               const ds_vfs_info *st, char **err);

/* Call fn on each entry of dir until one returns nonzero; returns that
 * value, 0 after the last entry, or -1 with *err when dir cannot be
 * listed or memory runs out. */
int ds_vfs_each(const char *dir, ds_vfs_entry_fn fn, void *ctx, char **err);

/* ds_vfs_each over a listing the caller opened (ds_vfs_list_open(NULL,
 * dir)), for callers that treat "cannot list" their own way; closes d. */
int ds_vfs_each_listed(ds_vfs_list *d, const char *dir, ds_vfs_entry_fn fn, void *ctx,
                       char **err);

#endif
