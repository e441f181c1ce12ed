/* detect.h - which of the four formats a dataset path is, from file names,
 * directory entries and at most the last 8 bytes of a file: no reader is
 * opened. Used by dataset_info(path) and the `dataset` module. Plain C:
 * knows paths and bytes, not SQLite.
 *
 * Rules, in order:
 *   directory with __rootdirs__          bcolz ctable
 *   directory with meta/storage          bcolz carray
 *   directory with index.npy             atlas shard directory
 *   directory with meta.json             atlas dataset root
 *   file X with X.offsets or X.index     datadings (one .msgpack file)
 *   glob (a * ? [ outside an @* spec)    datadings shards, when the first
 *                                        match has X.offsets or X.index
 *   file, shard spec (@N, @*, a comma    bagz, when every file is named
 *   list, posix:) of existing files      .bag / .bagz, has limits.NAME
 *                                        beside it, or ends in a valid
 *                                        limits tail (bagz.md 2.1): limits
 *                                        non-decreasing, none past the
 *                                        records' end, the records not
 *                                        empty (a .tar or zero bytes is
 *                                        no bag)
 * Anything else is an error "<path>: not a dataset: looked for ...". */
#ifndef DS_DETECT_H
#define DS_DETECT_H

#include <stdint.h>

typedef enum ds_format {
  DS_FORMAT_BAGZ = 1,
  DS_FORMAT_DATADINGS,
  DS_FORMAT_ATLAS,
  DS_FORMAT_BCOLZ
} ds_format;

typedef struct ds_detected {
  ds_format format;
  const char *module;  /* the module that reads it: "bagz", "datadings", ... */
  int bagz_separate;   /* bagz: every file has limits.NAME beside it */
  int atlas_shard;     /* atlas: a bare shard directory, not a root */
  int bcolz_ctable;    /* bcolz: a ctable (else a carray) */
} ds_detected;

/* Decide the format of `path`. Errors (malloc'd, naming the path):
 * "<path>: no such file or directory", "<path>: not a dataset: looked for
 * ...", or the shard-spec / glob expansion's own message. */
int ds_detect(const char *path, ds_detected *out, char **err);

/* Bytes on disk of the files that make up the dataset: every bagz file (and
 * its limits file); every datadings data file and its X.offsets, .keys,
 * .key_hashes, .filter, .md5 and .index files; every regular file under an
 * atlas or bcolz directory (symbolic links are not followed). */
int ds_detect_bytes(const char *path, const ds_detected *d, uint64_t *bytes,
                    char **err);
/* The same rule for one shard: a datadings data file and its index files,
 * or every regular file under an atlas shard folder or bcolz root (a bagz
 * file and, with d->bagz_separate, its limits file). */
int ds_detect_shard_bytes(const char *shard, const ds_detected *d,
                          uint64_t *bytes, char **err);

#endif
