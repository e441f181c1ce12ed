/* bagz.h - reader for bagz files (google-deepmind/bagz): records back to
 * back, then one little-endian u64 end offset per record, in the same file
 * ("tail") or in `limits.<name>` beside it ("separate"); with zstd each
 * non-empty record is one frame. Several files (shards) open as one bag in
 * concatenated or interleaved order. Plain C: knows bytes, not SQLite.
 * Format notes: docs/formats/bagz.md. */
#ifndef DS_BAGZ_H
#define DS_BAGZ_H

#include <stddef.h>
#include <stdint.h>

#include "core/codec.h"
#include "core/mapped_file.h"
#include "core/shard_spec.h"

typedef enum { BAGZ_COMPRESSION_AUTO, BAGZ_COMPRESSION_NONE, BAGZ_COMPRESSION_ZSTD } bagz_compression;
typedef enum { BAGZ_LIMITS_TAIL, BAGZ_LIMITS_SEPARATE } bagz_limits;

typedef struct bagz_options {
  bagz_compression compression; /* auto: per file, name ends in ".bagz" */
  bagz_limits limits;
  ds_layout layout;
  const char *dictionary_path;  /* NULL: none */
} bagz_options;

typedef struct bagz_shard {
  ds_file data;          /* the records file */
  ds_file limits_file;   /* separate limits only */
  const ds_file *limits; /* where the limits live (&data or &limits_file) */
  uint64_t limits_off;   /* byte offset of limit 0 in *limits */
  uint64_t records_size; /* bytes of the records section */
  uint64_t count;
  int zstd;              /* records are zstd frames */
} bagz_shard;

typedef struct bagz_reader {
  bagz_shard *shards;
  size_t nshards;
  ds_shard_map map;
  ds_zstd_dict *dict;
  bagz_options opts;
} bagz_reader;

/* Open every file of `spec` and check each tail boundary. Errors name the
 * file: "<file>: ...". */
int bagz_open(const char *spec, const bagz_options *opts, bagz_reader **out,
              char **err);
/* The same over one file already in memory (fuzzing). */
int bagz_open_memory(const char *name, const uint8_t *data, size_t n,
                     const bagz_options *opts, bagz_reader **out, char **err);
void bagz_close(bagz_reader *r);

static inline uint64_t bagz_count(const bagz_reader *r) { return r->map.total; }

/* The stored bytes of record `index` of shard `shard`, checked against
 * the records section. */
int bagz_stored(const bagz_reader *r, size_t shard, uint64_t index,
                const uint8_t **p, size_t *n, char **err);
/* Where those bytes are: [*start, *end) of the shard's file, from its
 * limits alone, checked the same way. */
int bagz_stored_range(const bagz_reader *r, size_t shard, uint64_t index,
                      uint64_t *start, uint64_t *end, char **err);

/* Record g (global index < count), decompressed when the shard is zstd.
 * *p points into the mapped file (uncompressed) or into `scratch`; it stays
 * valid until the next call with the same scratch. scratch->max, when set,
 * is max_value_bytes: a larger record is an error, copied or not. */
int bagz_read(const bagz_reader *r, ds_zstd_ctx *z, uint64_t g,
              ds_buf *scratch, const uint8_t **p, size_t *n, char **err);
/* Same by (shard, index). */
int bagz_read_at(const bagz_reader *r, ds_zstd_ctx *z, size_t shard,
                 uint64_t index, uint64_t g, ds_buf *scratch,
                 const uint8_t **p, size_t *n, char **err);

/* 1 when any file of the bag changed on disk since it was opened. */
int bagz_stale(const bagz_reader *r);

/* A scan has passed every record of `shard` before `index` (index ==
 * count: the whole shard): drop their pages from memory. */
void bagz_release_before(const bagz_reader *r, size_t shard, uint64_t index);

/* Ascending scans call this for every row they visit; every
 * BAGZ_RELEASE_EVERY rows, and when the shard changes, it releases what lies
 * behind. `state` starts zeroed. */
typedef struct bagz_release_state {
  size_t shard;
  uint64_t index;
  uint64_t rows;
  int started;
} bagz_release_state;
void bagz_release_track(const bagz_reader *r, bagz_release_state *st,
                        size_t shard, uint64_t index);

#endif
