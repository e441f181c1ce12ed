/* atlas.h - reader for torch-atlas-ds datasets: a root directory with
 * meta.json and numbered shard folders, each with meta.json, index.npy
 * (block offsets) and data.bin (blocks of pickled example lists, raw or
 * zstd, with no, a shared, or a per-shard dictionary); or one bare shard
 * directory. Knows bytes, not SQLite; blocks come back as pickle bytes for
 * the caller to decode (decoders/pickle.h).
 * Format notes: docs/formats/atlas.md sections 1-6. */
#ifndef DS_ATLAS_H
#define DS_ATLAS_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/mapped_file.h"
#include "core/common.h"

typedef struct atlas_reader atlas_reader;

/* Compression strategies (meta.json "compression_strategy"). */
enum {
  ATLAS_NO_COMPRESSION = 0,
  ATLAS_STANDARD_COMPRESSION = 1,   /* zstd, no dictionary */
  ATLAS_SHARED_DICTIONARY = 2,      /* zstd with ROOT/zstd_dict.bin */
  ATLAS_SHARD_DICTIONARY = 3        /* zstd with <shard>/zstd_dict.bin */
};

/* The six fields of a shard's meta.json (level and dict_size are
 * informational; 0 when absent). */
typedef struct atlas_meta {
  int version;                  /* always 1 once opened */
  uint64_t block_size;          /* > 0 */
  uint64_t stored_examples;
  int compression_strategy;     /* 0..3 */
  int64_t compression_level;
  double compression_dict_size;
} atlas_meta;

/* Open a dataset root or a bare shard directory: reads the meta.json
 * files, every index.npy header and offsets (checked: entry count, first
 * 0, non-decreasing, last == data.bin size) and the dictionaries the
 * strategies need. Errors name the file.
 * A directory holding index.npy is a bare shard; otherwise it must hold
 * meta.json, and its shards are the sub-directories whose names are all
 * ASCII digits, in numeric order. Hidden sub-directories (".name") and
 * plain files are ignored; any other sub-directory is an error naming it.
 * The root's shard_sizes must match the shard count and every shard's
 * stored_examples. */
int atlas_open(const char *path, atlas_reader **out, char **err);
/* The same, with `dict_path` (may be NULL) as the shared dictionary of
 * strategy-2 shards instead of ROOT/zstd_dict.bin. A bare strategy-2
 * shard can only be read this way (upstream's compression_dict_bytes). */
int atlas_open_dict(const char *path, const char *dict_path,
                    atlas_reader **out, char **err);
void atlas_close(atlas_reader *r);

uint64_t atlas_count(const atlas_reader *r);
size_t atlas_nshards(const atlas_reader *r);
uint64_t atlas_shard_count(const atlas_reader *r, size_t shard);
/* The shard's directory path (for error messages). */
const char *atlas_shard_path(const atlas_reader *r, size_t shard);
uint64_t atlas_block_size(const atlas_reader *r, size_t shard);
uint64_t atlas_num_blocks(const atlas_reader *r, size_t shard);
int atlas_shard_strategy(const atlas_reader *r, size_t shard);
/* 1 when `path` named a bare shard rather than a dataset root. */
int atlas_is_bare_shard(const atlas_reader *r);
/* The root meta.json compression_strategy; -1 for a bare shard. */
int atlas_root_strategy(const atlas_reader *r);
/* The shard's directory name as listed ("07"; "." for a bare shard). */
const char *atlas_shard_name(const atlas_reader *r, size_t shard);
/* The shard's parsed meta.json. */
const atlas_meta *atlas_shard_meta(const atlas_reader *r, size_t shard);
/* data.bin: 1 when the file exists (absent only for an empty shard), and
 * its size in bytes (0 when absent). */
int atlas_has_data(const atlas_reader *r, size_t shard);
uint64_t atlas_data_size(const atlas_reader *r, size_t shard);
/* index.npy: its dtype as numpy prints it ("|u1", "<u2", ">u4", ...) and
 * entry i (i <= num_blocks), widened. */
const char *atlas_index_dtype(const atlas_reader *r, size_t shard);
uint64_t atlas_index_entry(const atlas_reader *r, size_t shard, uint64_t i);
/* The dictionary the shard decodes with: its file and its dictionary ID
 * (NULL and 0 when the shard uses none; ID 0 also for a raw-content
 * dictionary). */
const char *atlas_dict_path(const atlas_reader *r, size_t shard);
unsigned atlas_dict_id(const atlas_reader *r, size_t shard);
/* Byte range of a block in data.bin: 0, or -1 with *err when the shard
 * or block does not exist. */
int atlas_block_range(const atlas_reader *r, size_t shard, uint64_t block,
                      uint64_t *offset, uint64_t *length, char **err);
/* The read-ahead cap of a window on data.bin that atlas_block_stored
 * and atlas_block set when its owner has set none (v->max_ahead 0): a
 * scan reads this much past its block in one system call (tens of
 * compressed blocks) and no more, so that the memory of a scan (one
 * window per thread) does not grow with the size of the shards (the
 * default, DS_VIEW_AHEAD, reaches 1 MiB on shards past that size and stays
 * smaller on smaller ones). */
#define ATLAS_VIEW_AHEAD ((uint64_t)64 << 10)

/* The stored (possibly compressed) bytes of a block, read from data.bin
 * through the caller's window v (see ATLAS_VIEW_AHEAD); bounds-checked;
 * valid until the next read through v. */
int atlas_block_stored(const atlas_reader *r, ds_view *v, size_t shard,
                       uint64_t block, const uint8_t **p, size_t *n, char **err);

/* Global example index g (< count) -> shard, block, position in block.
 * Shards with no examples are never returned. g >= count gives shard
 * atlas_nshards(r) (no such example). */
void atlas_locate(const atlas_reader *r, uint64_t g, size_t *shard,
                  uint64_t *block, uint64_t *pos);
/* A hint: examples g[0..n) are read next (a `rowid IN` list). On remote
 * files their blocks are fetched now, many requests in flight (core/vfs.h
 * ds_vfs_prefetch); elsewhere nothing happens. */
void atlas_prefetch(const atlas_reader *r, const uint64_t *g, size_t n);
/* A hint: the shard's data.bin is read in order from off next, len bytes
 * or more (a scan nearing it). On remote files a stream starts fetching
 * it now, without waiting (core/vfs.h ds_vfs_read_ahead); elsewhere
 * nothing happens. */
void atlas_read_ahead(const atlas_reader *r, size_t shard, uint64_t off, uint64_t len);
/* The first global index of a shard. */
uint64_t atlas_shard_first(const atlas_reader *r, size_t shard);
/* Examples block `block` of `shard` must hold. */
uint64_t atlas_block_examples(const atlas_reader *r, size_t shard,
                              uint64_t block);

/* The pickle bytes of one block, in `buf`: decompressed with `z` (and the
 * shard's dictionary) from the stored bytes read through the window v (see
 * ATLAS_VIEW_AHEAD), or
 * read straight into buf when the shard is uncompressed. A wrong or
 * missing dictionary, a truncated frame, a block past the end of data.bin
 * or a data.bin that shrank since it was opened is an error naming the
 * file and block. Sets z->dict to the shard's dictionary. *p stays valid
 * until the next call with the same buf. A buffer with no capacity yet
 * gets exactly the frame's declared size. buf->max, when set, is
 * max_value_bytes: a larger block is an error. */
int atlas_block(const atlas_reader *r, ds_zstd_ctx *z, ds_view *v, size_t shard,
                uint64_t block, ds_buf *buf, const uint8_t **p, size_t *n,
                char **err);

/* Blocks the decoder has checked whole (atlas_decode.c): a bit per block
 * (memory: one bit per block of each shard), set and read atomically, so
 * threads and cursors sharing the reader may use it at once. */
int atlas_block_checked(const atlas_reader *r, size_t shard, uint64_t block);
void atlas_block_set_checked(const atlas_reader *r, size_t shard, uint64_t block);

/* 1 when a file (index.npy, data.bin) changed on disk since opening; 0
 * for NULL (a writer's table before its first commit has no reader). */
int atlas_stale(const atlas_reader *r);

#endif
