/* abspath.c - dataset paths made absolute at table creation (see
 * abspath.h). */
#include "abspath.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"
#include "vfs.h"
#include "vfs_publish.h"
#include "remote/http_parse.h"

/* Append one element to b: the `posix:` prefix, the directory, the rest.
 * Nonzero when out of memory. */
static int put_element(ds_buf *b, const char *elem, size_t n, const char *cwd) {
  size_t pre = n >= 6 ? ds_vfs_posix_prefix(elem) : 0;
  int rc = ds_buf_append(b, elem, pre);
  if (n > pre && elem[pre] != '/' && !ds_vfs_has_scheme(elem + pre, n - pre) &&
      ds_vfs_backend_for(elem + pre) == &ds_vfs_local) { /* s3://, https://: as given */
    rc |= ds_buf_puts(b, cwd);
    if (strcmp(cwd, "/") != 0) rc |= ds_buf_puts(b, "/");
  }
  return rc | ds_buf_append(b, elem + pre, n - pre);
}

char *ds_path_absolute(const char *spec, char **err) {
  char *cwd = getcwd(NULL, 0);
  if (!cwd) {
    ds_err(err, "%s: cannot resolve a relative path: the current directory is unknown", spec);
    return NULL;
  }
  ds_buf b = {0};
  int rc = 0;
  /* (a remote spec is not probed: its options are not current yet) */
  if (!strchr(spec, ',') ||
      (ds_vfs_backend_for(spec) == &ds_vfs_local && ds_vfs_exists(spec))) {
    rc = put_element(&b, spec, strlen(spec), cwd);
  } else {
    for (const char *p = spec;;) {
      const char *end = strchr(p, ',');
      size_t n = end ? (size_t)(end - p) : strlen(p);
      rc |= put_element(&b, p, n, cwd);
      if (!end) break;
      rc |= ds_buf_puts(&b, ",");
      p = end + 1;
    }
  }
  free(cwd);
  if (rc || ds_buf_append(&b, "", 1)) {
    ds_buf_free(&b);
    ds_err(err, "out of memory");
    return NULL;
  }
  return (char *)b.data;
}

const char *ds_writer_path(const char *spec, char **err) {
  const char *p = spec + ds_vfs_posix_prefix(spec);
  if (!*p) {
    ds_err(err, "%s: no file named after the prefix", spec);
    return NULL;
  }
  if (ds_vfs_backend_for(p) != &ds_vfs_local && !ds_vfs_publisher_for(p)) {
    char shown[1024]; /* the URL without user info or query string */
    ds_http_url_for_message(p, shown, sizeof shown);
    ds_err(err, "%s: writing to %.*s:// is not supported (a web server takes no "
                "uploads: write to s3://, gs:// or a local path)",
           shown, (int)(strstr(p, "://") - p), p);
    return NULL;
  }
  if (strchr(p, ',')) {
    ds_err(err, "%s: a writer takes one path (or one name@N / name@* spec for "
                "bagz), not a comma list",
           spec);
    return NULL;
  }
  return p;
}
