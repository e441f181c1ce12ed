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
  uint8_t *limits_mem;   /* the limits in memory, loaded once lookups jump
                            around (DS_VIEW_JUMPS_TO_LOAD); set atomically */
  uint64_t limit_jumps;  /* limit reads that missed every cursor's window,
                            counted over all cursors and threads (atomic):
                            SQLite opens a cursor per lookup statement */
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

/* One cursor's or thread's windows on the limits and records it reads
 * (see ds_view). Zero-initialise; free with bagz_io_free. */
typedef struct bagz_io {
  ds_view limits, data;
} bagz_io;
void bagz_io_free(bagz_io *io);
/* Forget what io's windows hold (so it can serve another reader or a
 * reopened bag), keeping buffers of up to 256 KiB for the next reads. */
void bagz_io_idle(bagz_io *io);

/* The stored bytes of record `index` of shard `shard`, checked against
 * the records section; *p is valid until the next read through io. */
int bagz_stored(const bagz_reader *r, bagz_io *io, size_t shard, uint64_t index,
                const uint8_t **p, size_t *n, char **err);
/* Where those bytes are: [*start, *end) of the shard's file, from its
 * limits alone (read through io->limits), checked the same way. */
int bagz_stored_range(const bagz_reader *r, bagz_io *io, size_t shard,
                      uint64_t index, uint64_t *start, uint64_t *end,
                      char **err);

/* A hint, nothing read: record `index` of shard `shard` comes next. When
 * the shard's limits are in memory, their line is fetched into the CPU
 * cache now, so that a point lookup's one cache miss (random rows of a
 * limits array of megabytes) overlaps the statement's work before the
 * record is read instead of stalling it. */
static inline void bagz_touch_limits(const bagz_reader *r, size_t shard, uint64_t index) {
  if (shard >= r->nshards) return;
  const bagz_shard *s = &r->shards[shard];
  const uint8_t *mem = __atomic_load_n(&s->limits_mem, __ATOMIC_ACQUIRE);
  if (mem && index < s->count) __builtin_prefetch(mem + 8 * index - (index ? 8 : 0));
}

/* Record g (global index < count), decompressed when the shard is zstd.
 * *p points into io's window (uncompressed) or into `scratch`; it stays
 * valid until the next call with the same io and scratch. scratch->max,
 * when set, is max_value_bytes: a larger record is an error, copied or not.
 * A file that shrank since it was opened is an error naming it. */
int bagz_read(const bagz_reader *r, ds_zstd_ctx *z, bagz_io *io, uint64_t g,
              ds_buf *scratch, const uint8_t **p, size_t *n, char **err);
/* Same by (shard, index). */
int bagz_read_at(const bagz_reader *r, ds_zstd_ctx *z, bagz_io *io, size_t shard,
                 uint64_t index, uint64_t g, ds_buf *scratch,
                 const uint8_t **p, size_t *n, char **err);

/* Record `index` of shard `shard` (row g, for errors) from its stored
 * bytes, read from byte `start` of the shard's file: decompressed into
 * scratch when the shard is zstd, else *p = stored. Same checks and errors
 * as bagz_read_at. */
int bagz_decode(const bagz_reader *r, ds_zstd_ctx *z, size_t shard, uint64_t index,
                uint64_t g, uint64_t start, const uint8_t *stored, size_t len,
                ds_buf *scratch, const uint8_t **p, size_t *n, char **err);
/* Bytes [start, end) of shard `shard`'s file (the records of a batch, from
 * their ranges; the first is record `index`, row g, named in errors) in
 * one read through io->data, which from then on reads exactly what it is
 * asked (no read-ahead: a batch reader's next batch is elsewhere). *p is
 * valid until the next read through io. */
int bagz_read_span(const bagz_reader *r, bagz_io *io, size_t shard, uint64_t index,
                   uint64_t g, uint64_t start, uint64_t end, const uint8_t **p,
                   char **err);

/* A hint: rows g[0..n) are read next (a `rowid IN (...)` list). On
 * remote files, their limits and then their records are fetched now, many
 * requests in flight (bagz_prefetch.c); elsewhere nothing happens. */
void bagz_prefetch(bagz_reader *r, const uint64_t *g, size_t n);
/* Shard s's limits in memory, read now if they are not (bagz_prefetch
 * loads them for a list that jumps, as lookups would after
 * DS_VIEW_JUMPS_TO_LOAD jumps); NULL when they cannot be (more than 2^26
 * records, or a read failed: lookups read them entry by entry). */
const uint8_t *bagz_limits_load(bagz_shard *s);

/* 1 when any file of the bag changed on disk since it was opened. */
int bagz_stale(const bagz_reader *r);

#endif
