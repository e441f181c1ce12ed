/* detect.c - format detection of a dataset path over a list of formats'
 * rules, and the bytes its files take on disk (see detect.h). No format
 * is named here: each rule is its format's (format.h). */
#include "detect.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "formats/file_kind.h"
#include "formats/format_files.h"

/* rule with every "{}" replaced by base, appended to b; -1 when out of
 * memory. */
static int put_rule(ds_buf *b, const char *rule, const char *base) {
  int rc = 0;
  for (const char *p = rule; *p && rc == 0;) {
    const char *q = strstr(p, "{}");
    size_t n = q ? (size_t)(q - p) : strlen(p);
    rc = ds_buf_append(b, p, n);
    if (!q) break;
    if (rc == 0) rc = ds_buf_puts(b, base);
    p = q + 2;
  }
  return rc;
}

/* "A and B" (", " between all but the last two) of the formats' rules
 * (dir_rule, or file_rule with base): the "looked for" part of "not a
 * dataset". Malloc'd, NULL when out of memory. */
static char *looked_for(ds_format_list formats, int dir, const char *base) {
  size_t n = 0, k = 0;
  for (size_t i = 0; formats(i); i++) n += (dir ? formats(i)->dir_rule : formats(i)->file_rule) != NULL;
  ds_buf b = {0};
  int rc = 0;
  for (size_t i = 0; formats(i) && rc == 0; i++) {
    const char *rule = dir ? formats(i)->dir_rule : formats(i)->file_rule;
    if (!rule) continue;
    if (k) rc = ds_buf_puts(&b, k + 1 == n ? " and " : ", ");
    if (rc == 0) rc = put_rule(&b, rule, base);
    k++;
  }
  if (rc == 0) rc = ds_buf_append(&b, "", 1);
  if (rc) ds_buf_free(&b);
  return (char *)b.data;
}

/* Set *out to format f with detail; returns 0. */
static int found(ds_detected *out, const ds_format_bytes *f, unsigned detail) {
  out->format = f;
  out->detail = detail;
  return 0;
}

int ds_detect(const char *path, ds_format_list formats, ds_detected *out,
              char **err) {
  memset(out, 0, sizeof *out);
  if (!path || !*path) return ds_err(err, "no path given");
  unsigned detail = 0;
  if (ds_fmt_is_dir(path)) {
    for (size_t i = 0; formats(i); i++)
      if (formats(i)->detect_dir && formats(i)->detect_dir(path, &detail))
        return found(out, formats(i), detail);
    char *what = looked_for(formats, 1, "");
    int rc = what ? ds_err(err, "%s: not a dataset: looked for %s in this directory", path, what)
                  : ds_err(err, "out of memory");
    free(what);
    return rc;
  }
  if (ds_fmt_is_file(path)) {
    for (size_t i = 0; formats(i); i++)
      if (formats(i)->detect_file && formats(i)->detect_file(path, &detail))
        return found(out, formats(i), detail);
    const char *kind = ds_file_kind_of(path);
    char *what = looked_for(formats, 0, ds_basename(path));
    int rc = what ? ds_err(err, "%s: not a dataset%s%s: looked for %s", path,
                           kind ? ", it looks like " : "", kind ? kind : "", what)
                  : ds_err(err, "out of memory");
    free(what);
    return rc;
  }
  for (size_t i = 0; formats(i); i++) {
    if (!formats(i)->detect_pattern) continue;
    int rc = formats(i)->detect_pattern(path, &detail, err);
    if (rc < 0) return -1;
    if (rc > 0) return found(out, formats(i), detail);
  }
  return ds_fmt_path_problem(path, err);
}

int ds_detect_shard_bytes(const char *shard, const ds_detected *d,
                          uint64_t *bytes, char **err) {
  *bytes = 0;
  if (!d->format) return ds_err(err, "%s: unknown format", shard);
  if (d->format->file_bytes) {
    *bytes = d->format->file_bytes(shard, d->detail);
    return 0;
  }
  return d->format->shard_bytes(shard, d->detail, bytes, err);
}

int ds_detect_bytes(const char *path, const ds_detected *d, uint64_t *bytes,
                    char **err) {
  *bytes = 0;
  if (!d->format) return ds_err(err, "%s: unknown format", path);
  if (d->format->expand)
    return ds_fmt_listed_bytes(path, d->detail, d->format->expand, d->format->file_bytes, bytes,
                               err);
  return d->format->bytes(path, d->detail, bytes, err);
}
