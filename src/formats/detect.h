/* detect.h - which format a dataset path is, from file names, directory
 * entries and at most the last 8 bytes of a file: no reader is opened.
 * Used by dataset_info(path), dataset_shards(path) and the `dataset`
 * module. Plain C: knows paths and bytes, not SQLite.
 *
 * The rules are the formats' own (format.h: each format folder's
 * <fmt>_format.c), run a phase at a time over a list of formats, in its
 * order (the SQLite layer's format table, vtab/format_table.c):
 *   a directory: each format's detect_dir
 *   a regular file: each format's detect_file
 *   anything else: each format's detect_pattern (a glob, a shard spec),
 *   the first that claims it decides; none: why the path cannot be read.
 * Today's rules, in table order: a directory with __rootdirs__ (bcolz
 * ctable), meta/storage (bcolz carray), index.npy (atlas shard
 * directory), meta.json (atlas dataset root); a file X with X.offsets or
 * X.index (datadings), or named .bag / .bagz, with limits.NAME beside it,
 * or ending in a valid limits tail (bagz, bagz.md 2.1); a glob (a * ? [
 * outside an @* spec) whose first match is a datadings file; a shard spec
 * (@N, @*, a comma list, posix:) of bagz files.
 * Anything else is an error "<path>: not a dataset: looked for ...". */
#ifndef DS_DETECT_H
#define DS_DETECT_H

#include <stdint.h>

#include "formats/format.h"

typedef struct ds_detected {
  const ds_format_bytes *format; /* its name is the module that reads it */
  unsigned detail; /* the format's own flags, read only by its own code
                      (e.g. bagz: every file has limits.NAME beside it) */
} ds_detected;

/* Decide the format of `path` among those of `formats`. Errors (malloc'd,
 * naming the path): "<path>: no such file or directory", "<path>: not a
 * dataset: looked for ...", or the shard-spec / glob expansion's own
 * message. */
int ds_detect(const char *path, ds_format_list formats, ds_detected *out,
              char **err);

/* Bytes on disk of the files that make up the dataset (the format's
 * bytes): every bagz file (and its limits file); every datadings data
 * file and its X.offsets, .keys, .key_hashes, .filter, .md5 and .index
 * files; every regular file under an atlas or bcolz directory (symbolic
 * links are not followed). */
int ds_detect_bytes(const char *path, const ds_detected *d, uint64_t *bytes,
                    char **err);
/* The same rule for one shard: a datadings data file and its index files,
 * or every regular file under an atlas shard folder or bcolz root (a bagz
 * file and, when detection found limits.NAME, its limits file). */
int ds_detect_shard_bytes(const char *shard, const ds_detected *d,
                          uint64_t *bytes, char **err);

#endif
