/* vfs_publish.c - the publisher a path's scheme names (vfs_publish.h). */
#include "vfs_publish.h"

#include <string.h>
#include <strings.h>

const ds_vfs_publisher *ds_vfs_publisher_for(const char *path) {
  static const ds_vfs_publisher *const all[] = {&ds_vfs_s3_publisher, &ds_vfs_gs_publisher,
                                                NULL};
  const char *colon = strstr(path, "://");
  if (!colon) return NULL;
  size_t n = (size_t)(colon - path);
  for (size_t i = 0; all[i]; i++)
    if (strlen(all[i]->scheme) == n && strncasecmp(all[i]->scheme, path, n) == 0) return all[i];
  return NULL;
}
