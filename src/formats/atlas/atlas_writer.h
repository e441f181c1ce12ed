/* atlas_writer.h - writing torch-atlas-ds datasets as upstream's
 * AtlasDatasetWriter does (docs/formats/atlas.md sections 2-6): examples
 * go in blocks of block_size, each block one protocol-4 pickle of the list
 * of its examples (decoders/pickle_write.h), stored raw (strategy 0), as a
 * zstd frame (1), with a dictionary shared by every shard (2) or one per
 * shard (3); shards of shard_size examples in folders 0, 1, ... (renamed
 * to equal-width, zero-padded names at the end), each with data.bin,
 * index.npy (the smallest unsigned dtype that holds data.bin's size),
 * meta.json and zstd_dict.bin as upstream writes them; ROOT/meta.json.
 *
 * Dictionaries are trained as python-zstandard's train_dictionary does for
 * upstream (zstd's fastCover trainer, d=8, 4 steps over k, the writer's
 * level; the search on several threads) on the shard's pickled blocks at
 * max(int(dict_size * bytes) + 1, 1024) bytes,
 * as upstream: a shard of fewer than 7 blocks falls back to plain zstd
 * (its meta says 1), and when shard 0 of a strategy-2 dataset falls back,
 * the whole dataset does. A training that zstd refuses (too little data)
 * falls back the same way (upstream would raise).
 *
 * Memory is bounded by one block and the compressor's batches (blocks
 * compressed with a dictionary go through formats/bagz/bagz_compress.h: about
 * 1 MiB batches, a ring of 4, compressed on a helper thread with
 * threads=2): blocks of a shard that trains a dictionary wait in a
 * temporary file in the shard folder (".blocks.tmp"), read back through
 * mmap when the shard is finished. threads=1 also trains on one thread.
 * Knows no SQLite; writes into a directory the caller provides (a staging
 * directory) and never outside it. */
#ifndef DS_ATLAS_WRITE_H
#define DS_ATLAS_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

typedef struct atlas_write_options {
  uint64_t block_size;  /* examples per block, > 0 */
  uint64_t shard_size;  /* examples per shard, > 0 */
  int strategy;         /* 0..3 (atlas.h ATLAS_*) */
  int level;            /* zstd level */
  double dict_size;     /* dictionary size as a fraction of a shard, 0..1 */
  int sync;             /* fsync every file and folder when finishing */
  int threads;          /* 2: blocks with a dictionary are compressed on a
                         * helper thread too (in order); 1: none */
} atlas_write_options;

/* Upstream's defaults where it has them (strategy 2, level 3, dict_size
 * 0.01) and ours where it has none (block_size 64, shard_size 100000). */
void atlas_write_defaults(atlas_write_options *o);
/* Check the options; an error says which is wrong. */
int atlas_write_check(const atlas_write_options *o, char **err);

typedef struct atlas_writer atlas_writer;

/* Start a dataset in directory `dir`, which must exist and be empty. */
int atlas_writer_open(const char *dir, const atlas_write_options *o,
                      atlas_writer **out, char **err);
/* Append one example. On error nothing was added (the message says why:
 * a value the encoder refuses, or an I/O error naming the file). */
int atlas_writer_add(atlas_writer *w, const ds_value *example, char **err);
/* Examples added so far. */
uint64_t atlas_writer_count(const atlas_writer *w);
/* Go back to the state after the first `count` examples (a savepoint):
 * later shards and blocks are dropped, the block holding example `count`
 * is decoded and its first examples pickled again. */
int atlas_writer_truncate(atlas_writer *w, uint64_t count, char **err);
/* Finish every shard (dictionaries, index.npy, meta.json), write
 * ROOT/meta.json and give the shard folders their final names. The
 * writer can only be freed afterwards. */
int atlas_writer_finish(atlas_writer *w, char **err);
/* Free (without finishing: the directory keeps what was written). */
void atlas_writer_free(atlas_writer *w);
/* 0 when `path` is absent or an atlas directory this writer may replace
 * (only meta.json, zstd_dict.bin, data.bin, index.npy and numbered shard
 * folders holding those); else an error naming what is there. */
int atlas_write_is_own(const char *path, char **err);

#endif
