/* shards.h - the shards of a dataset of any format, as a scheduler needs
 * them: one entry per shard (a bagz file, a datadings file of a glob, an
 * atlas shard folder, a whole bcolz table or single file), or with
 * split_rows > 0 one entry per range of at most split_rows rows of a
 * shard. Reads only what each reader's open reads (limits, offsets,
 * index.npy, meta files) plus, for ranges, the index entries at their ends
 * and the sizes of the chunk files they cover. Plain C: no SQLite. */
#ifndef DS_SHARDS_H
#define DS_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "core/shard_spec.h"
#include "formats/bagz/bagz.h"
#include "formats/detect.h"
#include "formats/format.h"

typedef struct ds_shard_entry {
  uint64_t shard;       /* shard number, 0-based, as the modules number it */
  char *path;           /* the shard's file or directory (owned) */
  uint64_t first_rowid; /* global rowid of the entry's first row */
  uint64_t rows;        /* rows in the entry */
  uint64_t bytes;       /* see ds_shards_list */
  uint64_t shard_index; /* index inside the shard of the first row */
  char *dictionary;     /* atlas: the zstd dictionary file the shard decodes
                           with (owned), or NULL: a shard folder opened
                           alone needs it as option dictionary= */
} ds_shard_entry;

typedef struct ds_shard_listing {
  const ds_format_bytes *format;
  uint64_t nshards;     /* shards of the dataset (entries >= nshards) */
  uint64_t total_rows;  /* rows of the dataset */
  ds_layout layout;     /* bagz interleaved: row i of an entry has rowid
                           first_rowid + i * nshards; else + i */
  ds_shard_entry *items;
  size_t n, cap;
} ds_shard_listing;

typedef struct ds_shards_options {
  uint64_t split_rows;  /* 0: one entry per shard */
  bagz_limits limits;   /* bagz only */
  ds_layout layout;     /* bagz only */
  int limits_given;     /* 0: separate when detection found limits.NAME */
  char *dictionary;     /* atlas only: a bare shard's shared dictionary
                         * (the caller's: ds_shards_list never frees it) */
} ds_shards_options;

/* List the shards of `path`, whose format ds_detect found (*d): the
 * format's own list_shards (format.h). `bytes` is, for a
 * whole shard, the bytes on disk of its files (as dataset_info counts
 * them: a bagz file and its limits file, a datadings file and its index
 * files, every file under an atlas shard folder or bcolz root); for a
 * split_rows range, the stored bytes a task reading it reads: the records
 * (bagz) or samples (datadings) of the range, the blocks (atlas) or the
 * chunk files of every column (bcolz) that hold its rows. A shard with no
 * rows is one entry with rows 0. Errors name the file. */
int ds_shards_list(const char *path, const ds_detected *d,
                   const ds_shards_options *o, ds_shard_listing *out, char **err);
void ds_shard_listing_free(ds_shard_listing *l);
/* Free the strings of one entry (path, dictionary), e.g. of one taken
 * out of a listing. */
void ds_shard_entry_free(ds_shard_entry *e);

/* For the formats' list_shards (format.h): one shard as the format sees
 * it, before it is cut into ranges. */
typedef struct ds_shard_info {
  size_t shard;
  const char *path;
  uint64_t rows;
  uint64_t first;  /* global rowid of its row 0 */
  uint64_t stride; /* rowid step between its rows: 1, or nshards (interleaved) */
  uint64_t bytes;  /* bytes on disk of its files */
  const char *dictionary; /* atlas: the zstd dictionary it decodes with, or NULL */
} ds_shard_info;

/* Stored bytes of rows [a, b) (a < b) of one shard: the format's. */
typedef int (*ds_range_bytes_fn)(void *reader, size_t shard, uint64_t first,
                                 uint64_t a, uint64_t b, uint64_t *bytes,
                                 char **err);

/* Add shard s to l whole, or cut into ranges of at most split rows (the
 * bytes of each from range_bytes(reader, ...)). */
int ds_shards_add(ds_shard_listing *l, const ds_shard_info *s, uint64_t split,
                  ds_range_bytes_fn range_bytes, void *reader, char **err);

#endif
