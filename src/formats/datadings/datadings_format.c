/* datadings_format.c - the datadings descriptor (datadings_format.h): a
 * file X is a datadings file when X.offsets or X.index is beside it; a
 * glob (a * ? [ outside a bagz @* spec) when its first match is one.
 * Bytes on disk: each data file and its index files; shards: one per
 * file, ranges from the offsets. */
#include "datadings_format.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/mapped_file.h"
#include "core/shard_spec.h"
#include "formats/datadings/datadings.h"
#include "formats/detect.h"
#include "formats/format_files.h"
#include "formats/shards.h"

/* The sibling files of a datadings data file X (X<suffix>). */
static const char *const dd_suffixes[] = {".offsets", ".keys", ".key_hashes",
                                          ".filter", ".md5", ".index", NULL};

/* A datadings data file: X.offsets or X.index beside it. */
static int dd_file(const char *path) {
  return ds_fmt_is_file(path) && (ds_fmt_exists_join(path, "", ".offsets") ||
                                  ds_fmt_exists_join(path, "", ".index"));
}

/* format.h detect_file */
static int detect_file(const char *path, unsigned *detail) {
  *detail = 0;
  return dd_file(path);
}

/* format.h detect_pattern: a glob (a bagz @* spec is not one) whose first
 * match is a datadings file. */
static int detect_pattern(const char *path, unsigned *detail, char **err) {
  if (strpbrk(path, "*?[") == NULL || strstr(path, "@*") != NULL) return 0;
  ds_shard_list l;
  if (datadings_expand_paths(path, &l, err)) return -1;
  int ok = dd_file(l.paths[0]);
  if (!ok)
    ds_err(err, "%s: not a dataset: the first match %s has neither %s.offsets "
                "nor %s.index beside it (a glob names datadings files)",
           path, l.paths[0], ds_basename(l.paths[0]), ds_basename(l.paths[0]));
  ds_shard_list_free(&l);
  *detail = 0;
  return ok ? 1 : -1;
}

/* format.h file_bytes: datadings data file `file` and its index files. */
static uint64_t file_bytes(const char *file, unsigned detail) {
  (void)detail;
  uint64_t total = ds_fmt_file_size(file);
  for (size_t k = 0; dd_suffixes[k]; k++) {
    char *p = ds_strf("%s%s", file, dd_suffixes[k]);
    if (p) total += ds_fmt_file_size(p);
    free(p);
  }
  return total;
}

/* shards.h ds_range_bytes_fn: the samples of rows [a, b). */
static int range_bytes(void *reader, size_t shard, uint64_t first, uint64_t a,
                       uint64_t b, uint64_t *bytes, char **err) {
  size_t s1, s2;
  uint64_t start, end, x, y;
  datadings_io io; /* offsets read with pread */
  memset(&io, 0, sizeof io);
  int rc = datadings_sample_range(reader, &io, first + a, &s1, &start, &x, err) ||
           datadings_sample_range(reader, &io, first + b - 1, &s2, &y, &end, err);
  datadings_io_free(&io);
  if (rc) return -1;
  (void)shard;
  *bytes = end >= start ? end - start : 0;
  return 0;
}

/* format.h list_shards: one shard per file. */
static int list_shards(const char *path, const ds_detected *d,
                       const ds_shards_options *o, ds_shard_listing *l, char **err) {
  (void)d;
  datadings_reader *r;
  if (datadings_open(path, &r, err)) return -1;
  int rc = 0;
  uint64_t first = 0;
  l->nshards = datadings_nshards(r);
  l->total_rows = datadings_count(r);
  for (size_t i = 0; i < l->nshards && rc == 0; i++) {
    ds_shard_info si = {i, datadings_shard_path(r, i), datadings_shard_count(r, i),
                        first, 1, 0, NULL};
    si.bytes = file_bytes(si.path, 0);
    rc = ds_shards_add(l, &si, o->split_rows, range_bytes, r, err);
    first += si.rows;
  }
  datadings_close(r);
  return rc;
}

const ds_format_bytes ds_datadings_format = DS_FILE_FORMAT(
    "datadings", detect_file, detect_pattern, "{}.offsets or {}.index beside it (datadings)",
    datadings_expand_paths, file_bytes, list_shards);
