/* vfs_each.c - each entry of a folder, by path and lstat (vfs_each.h). */
#include "core/vfs_each.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/common.h"

int ds_vfs_each(const char *dir, ds_vfs_entry_fn fn, void *ctx, char **err) {
  ds_vfs_list *d = ds_vfs_list_open(NULL, dir);
  if (!d) return ds_err(err, "%s: cannot list: %s", dir, strerror(errno));
  return ds_vfs_each_listed(d, dir, fn, ctx, err);
}

int ds_vfs_each_listed(ds_vfs_list *d, const char *dir, ds_vfs_entry_fn fn, void *ctx,
                       char **err) {
  int rc = 0;
  const char *name;
  while (rc == 0 && (name = ds_vfs_list_next(d)) != NULL) {
    char *p = ds_strf("%s/%s", dir, name);
    ds_vfs_info st;
    if (!p) rc = ds_err(err, "out of memory");
    else rc = fn(ctx, p, name, ds_vfs_lstat(p, &st) == 0 ? &st : NULL, err);
    free(p);
  }
  ds_vfs_list_close(d);
  return rc;
}
