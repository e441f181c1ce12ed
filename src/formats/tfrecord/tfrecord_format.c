/* tfrecord_format.c - the TFRecord descriptor (tfrecord_format.h): a file
 * is TFRecord when it is named .tfrecord / .tfrecords, or when its name
 * has no extension (TensorFlow's train-00000-of-01024) or contains
 * ".tfrecord" (x.tfrecord.gz, x.tfrecord-00000-of-00004) and it starts
 * with a record header whose length CRC is good (tfrecord_probe:
 * decompressed first for gzip / zlib). Other names are not opened: the
 * row comes before datadings and bagz (vtab/format_table.c), whose files
 * are opened once per query (test_dataset_info_open.py). A pattern (a glob, @N, @*, a comma list) when
 * every file it names is one. The rules claim nothing else (a pattern of
 * other files is left to the formats after it). Bytes on disk: the files;
 * shards: one per file, rows from the index (the .idx sidecars first). */
#include "tfrecord_format.h"

#include <stdlib.h>
#include <string.h>

#include "core/common.h"
#include "core/shard_spec.h"
#include "formats/detect.h"
#include "formats/format_files.h"
#include "formats/shards.h"
#include "formats/tfrecord/tfrecord.h"
#include "formats/tfrecord/tfrecord_set.h"

/* 1 when the regular file `path` is a TFRecord file by name or bytes. */
static int tfr_file(const char *path) {
  if (!ds_fmt_is_file(path)) return 0;
  if (ds_fmt_ends_with(path, ".tfrecord") || ds_fmt_ends_with(path, ".tfrecords")) return 1;
  const char *base = ds_basename(path);
  if (strchr(base, '.') && !strstr(base, ".tfrecord")) return 0;
  tfrecord_file t;
  tfrecord_options o = {.compression = TFRECORD_AUTO};
  char *err = NULL;
  if (tfrecord_open(&t, path, &o, &err)) {
    free(err);
    return 0;
  }
  int yes = tfrecord_probe(&t);
  tfrecord_close(&t);
  return yes;
}

/* format.h detect_file */
static int detect_file(const char *path, unsigned *detail) {
  *detail = 0;
  return tfr_file(path);
}

/* format.h detect_pattern: a glob or shard spec whose files all are
 * TFRecord files (0, not an error, otherwise: another format may take it). */
static int detect_pattern(const char *path, unsigned *detail, char **err) {
  (void)err;
  *detail = 0;
  if (!strpbrk(path, "*?[@,:")) return 0;
  ds_shard_list l;
  char *why = NULL;
  if (tfrecord_set_paths(path, &l, &why)) {
    free(why);
    return 0;
  }
  int all = l.n > 0;
  for (size_t i = 0; i < l.n && all; i++) all = tfr_file(l.paths[i]);
  ds_shard_list_free(&l);
  return all;
}

/* shards.h ds_range_bytes_fn: the frames of rows [a, b) of an uncompressed
 * file (a damaged tail row: to the end of the file); a gzip / zlib file
 * cannot say, so its share of the file by rows. */
static int range_bytes(void *reader, size_t shard, uint64_t first, uint64_t a, uint64_t b,
                       uint64_t *bytes, char **err) {
  (void)first;
  (void)err;
  const tfrecord_set *s = reader;
  const tfrecord_file *t = &s->files[shard];
  uint64_t rows = tfrecord_set_rows(s, shard), size = t->file.size;
  if (t->compression != TFRECORD_NONE) {
    *bytes = rows ? (uint64_t)((double)size * (double)(b - a) / (double)rows) : 0;
    return 0;
  }
  uint64_t start = a < t->count ? t->offsets[a] : size;
  uint64_t end = b <= t->count ? t->offsets[b] : size;
  *bytes = end > start ? end - start : 0;
  return 0;
}

/* format.h list_shards: every file indexed (compression detected). */
static int list_shards(const char *path, const ds_detected *d, const ds_shards_options *o,
                       ds_shard_listing *l, char **err) {
  (void)d;
  tfrecord_set s;
  tfrecord_options to = {.compression = TFRECORD_AUTO};
  if (tfrecord_set_open(&s, path, &to, 1, err)) return -1;
  int rc = tfrecord_set_index(&s, err);
  if (rc == 0) {
    l->nshards = s.n;
    l->total_rows = s.map.total;
  }
  for (size_t i = 0; i < s.n && rc == 0; i++) {
    ds_shard_info si = {i, s.files[i].file.path, tfrecord_set_rows(&s, i), s.map.first[i], 1,
                        s.files[i].file.size, NULL};
    rc = ds_shards_add(l, &si, o->split_rows, range_bytes, &s, err);
  }
  tfrecord_set_close(&s);
  return rc;
}

const ds_format_bytes ds_tfrecord_format = DS_FILE_FORMAT(
    "tfrecord", detect_file, detect_pattern,
    "a .tfrecord or .tfrecords name, or a first record header with a good length CRC "
    "(tfrecord)",
    tfrecord_set_paths, ds_fmt_file_bytes, list_shards);
