/* abspath.c - dataset paths made absolute at table creation (see
 * abspath.h). */
#include "abspath.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

/* Does e[0..n) start with a file system prefix such as `gs:` (left for
 * the reader to refuse by name)? */
static int has_scheme(const char *e, size_t n) {
  size_t i = 0;
  while (i < n && ((e[i] >= 'a' && e[i] <= 'z') || (e[i] >= 'A' && e[i] <= 'Z'))) i++;
  return i >= 2 && i < n && e[i] == ':';
}

/* Append one element to b: the `posix:` prefix, the directory, the rest.
 * Nonzero when out of memory. */
static int put_element(ds_buf *b, const char *elem, size_t n, const char *cwd) {
  size_t pre = n >= 6 && strncmp(elem, "posix:", 6) == 0 ? 6 : 0;
  int rc = ds_buf_append(b, elem, pre);
  if (n > pre && elem[pre] != '/' && !has_scheme(elem + pre, n - pre)) {
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
  if (access(spec, F_OK) == 0 || !strchr(spec, ',')) {
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
  const char *p = strncmp(spec, "posix:", 6) == 0 ? spec + 6 : spec;
  if (!*p) {
    ds_err(err, "%s: no file named after the prefix", spec);
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
