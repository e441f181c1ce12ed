/* format.h - what the cross-format code (detection, dataset_info's bytes,
 * dataset_shards' listing) knows of one format: a descriptor each format
 * folder exports (formats/<fmt>/<fmt>_format.c), so that detect.c and
 * shards.c hold no per-format code. The list of formats and their order
 * is the SQLite layer's format table (vtab/format_table.c); detection
 * takes it as a ds_format_list. Plain C: paths and bytes, no SQLite. */
#ifndef DS_FORMAT_H
#define DS_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* bytes / shard_bytes of a folder on a file system that cannot list
 * (http(s)): not known (dataset_info and dataset_shards show NULL). */
#define DS_BYTES_UNKNOWN UINT64_MAX

struct ds_detected;
struct ds_shards_options;
struct ds_shard_listing;
struct ds_shard_list;

typedef struct ds_format_bytes {
  const char *name; /* "bagz": the format and the module that reads it */
  /* Detection (formats/detect.h runs the rules of every format in list
   * order, a phase at a time). Each sets *detail (the format's own flags,
   * which only its own code reads) when it says yes.
   * dir: 1 when the directory `path` is this format's, else 0 (NULL: the
   * format has no directory form). */
  int (*detect_dir)(const char *path, unsigned *detail);
  /* file: 1 when the regular file `path` is this format's, else 0. */
  int (*detect_file)(const char *path, unsigned *detail);
  /* pattern: `path` names no file or directory. 1 when it is this
   * format's pattern (a glob, a shard spec) and its files are this
   * format's; 0 when it is no pattern of this format; -1 when it is, but
   * the files are not (*err says why). */
  int (*detect_pattern)(const char *path, unsigned *detail, char **err);
  /* What the rules look for, for "not a dataset: looked for ... and ..."
   * (NULL: no such rule); in file_rule "{}" stands for the file's name. */
  const char *dir_rule;
  const char *file_rule;
  /* Bytes on disk of the dataset at `path` / of one shard of it (NULL:
   * those of a format kept in files, from expand and file_bytes). */
  int (*bytes)(const char *path, unsigned detail, uint64_t *bytes, char **err);
  int (*shard_bytes)(const char *shard, unsigned detail, uint64_t *bytes,
                     char **err);
  /* A format kept in files (bagz, datadings, tfrecord; formats/
   * format_files.h DS_FILE_FORMAT): the files the spec `path` names, and
   * the bytes on disk of one of them with its side files. */
  int (*expand)(const char *path, struct ds_shard_list *out, char **err);
  uint64_t (*file_bytes)(const char *file, unsigned detail);
  /* The shard listing (formats/shards.h): out is zeroed, out->format set. */
  int (*list_shards)(const char *path, const struct ds_detected *d,
                     const struct ds_shards_options *o,
                     struct ds_shard_listing *out, char **err);
} ds_format_bytes;

/* The i-th format of a list (detection order), NULL past its end. */
typedef const ds_format_bytes *(*ds_format_list)(size_t i);

#endif
