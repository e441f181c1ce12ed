/* datadings.h - reader for datadings datasets: X.msgpack (samples back to
 * back) with X.msgpack.offsets / .keys / .key_hashes / .filter / .md5, or
 * the legacy X.msgpack.index; a glob opens several as shards, in name
 * order, concatenated. Plain C: knows bytes, not SQLite.
 * Format notes: docs/formats/datadings.md. */
#ifndef DS_DATADINGS_H
#define DS_DATADINGS_H

#include <stddef.h>
#include <stdint.h>

#include "core/mapped_file.h"
#include "core/shard_spec.h"

typedef struct datadings_reader datadings_reader;

/* Open `path` (a .msgpack file, or a glob such as dir/train-*.msgpack).
 * Reads only headers and sizes; checks what is cheap (offsets size and
 * count, key count, filter header, key_hashes size). Errors name the file. */
int datadings_open(const char *path, datadings_reader **out, char **err);
void datadings_close(datadings_reader *r);

uint64_t datadings_count(const datadings_reader *r);
size_t datadings_nshards(const datadings_reader *r);
/* File name of shard s (its .msgpack path). */
const char *datadings_shard_path(const datadings_reader *r, size_t s);

/* One cursor's windows on the .offsets and data files (see ds_view).
 * Zero-initialise; free with datadings_io_free. */
typedef struct datadings_io {
  ds_view offsets, data;
} datadings_io;
void datadings_io_free(datadings_io *io);

/* The exact msgpack bytes of sample g: [offsets[i], offsets[i+1]) of its
 * shard, bounds- and monotonicity-checked, read through io: valid until
 * its next read. A sample past the end of a data file cut short (or one
 * that shrank since it was opened) is an error naming the file and the
 * offset; the samples before it read. */
int datadings_sample(const datadings_reader *r, datadings_io *io, uint64_t g,
                     const uint8_t **p, size_t *n, char **err);

/* Read samples g.. g+count-1 (those in g's shard) into io's windows with
 * one read of .offsets and, when they take at most DS_VIEW_AHEAD bytes,
 * one of the data file, so that reading them in order (schema inference)
 * makes no further system call. Nothing is checked here: the reads that
 * follow check as usual. */
void datadings_read_ahead(const datadings_reader *r, datadings_io *io, uint64_t g,
                          uint64_t count);

/* A hint: samples g[0..n) are read next (a `rowid IN` or `key IN` list).
 * On remote files their offsets and then their bytes are fetched now,
 * many requests in flight (core/vfs.h ds_vfs_prefetch); elsewhere nothing
 * happens. */
void datadings_prefetch(const datadings_reader *r, const uint64_t *g, size_t n);

/* 1 when any file of the dataset changed on disk since opening; 0 for
 * NULL (a writer's table before its first commit has no reader). */
int datadings_stale(const datadings_reader *r);

/* The index key of sample g (UTF-8 bytes read from the .keys or .index
 * file, valid until the next key read or lookup on r). The first call
 * builds a table of key positions. */
int datadings_key(datadings_reader *r, uint64_t g, const uint8_t **p,
                  size_t *n, char **err);

/* Find the sample whose index key equals key[0..n): 1 and *g when found,
 * 0 when absent, -1 on error. The Bloom filter until the shard's table is
 * built, then the table (placed by the salted key hashes, or by the
 * reader's hash of the keys when they are held in memory or the hashes
 * are missing), and the candidate's .keys entry is compared byte for
 * byte, so a false positive never returns a row. The first lookup builds
 * the in-memory table. Table
 * builds (here and in datadings_key) and datadings_verify give up with
 * "interrupted" when a core/cancel.h scope asks to stop. */
int datadings_find(datadings_reader *r, const uint8_t *key, size_t n,
                   uint64_t *g, char **err);
/* The first lookup of a shard refuses an index in which two samples have
 * the same key (a damaged index): the error names the key and both
 * samples, rather than answering with one of them. */

/* The index files datadings_find goes through: "filter+key_hashes",
 * "key_hashes", "index", "keys" (for documentation, dataset_info and
 * tests). Short keys, held in memory, are hashed by the reader itself
 * rather than placed by the stored key hashes. */
const char *datadings_lookup_method(const datadings_reader *r);

/* One line of the X.msgpack.md5 file, checked. */
typedef struct datadings_md5_row {
  const char *file;     /* as listed (base name) */
  const char *expected; /* 32 lowercase hex */
  char actual[33];      /* "" when the file is missing or unreadable */
  int ok;
} datadings_md5_row;

/* Read the .md5 file of `path` (one .msgpack file, or every shard of a
 * glob) and compute each listed file's md5. *rows is malloc'd (free with
 * datadings_md5_free). */
int datadings_verify(const char *path, datadings_md5_row **rows, size_t *n,
                     char **err);
void datadings_md5_free(datadings_md5_row *rows, size_t n);

/* ---- Additions: finer access, diagnostics and the hash functions ---- */

/* Number of samples in shard s (0 when s is out of range). */
uint64_t datadings_shard_count(const datadings_reader *r, size_t s);

/* Where sample g lives: its shard and the byte range [*start, *end) of
 * that shard's data file, checked exactly like datadings_sample. */
int datadings_sample_range(const datadings_reader *r, datadings_io *io, uint64_t g,
                           size_t *shard, uint64_t *start, uint64_t *end,
                           char **err);

/* The Bloom filter of shard s alone (section 7): 1 "maybe present", 0
 * "definitely absent", -1 when the shard has no .filter (or s is out of
 * range). For tests and diagnostics; datadings_find calls it itself. */
int datadings_filter_maybe(const datadings_reader *r, size_t s,
                           const uint8_t *key, size_t n);

/* The salted key hash H(k, salt) of section 6.1: the first 8 bytes of the
 * 32-byte BLAKE2s digest with `salt` in the parameter block. */
void datadings_key_hash(const uint8_t salt[8], const uint8_t *key, size_t n,
                        uint8_t out[8]);
/* (Two-step forms for many keys: formats/datadings/key_hash_state.h.) */

/* The writer's salt_for(c) of section 6.2 (salt_for(0) = 652e530edee5893b). */
void datadings_salt_for(uint64_t c, uint8_t out[8]);

/* Bytes of memory held right now by the lazily built key tables (key
 * positions, keys held in memory and lookup tables of every shard). */
size_t datadings_key_table_bytes(const datadings_reader *r);

/* ---- For dataset_info: what one shard holds beside its samples ---- */
typedef struct datadings_shard_facts {
  int has_offsets, has_keys, has_key_hashes, has_filter, has_index;
  uint8_t salt[8];          /* the .key_hashes salt (has_key_hashes) */
  uint64_t filter_bits;     /* the .filter's parameters (has_filter) */
  uint32_t filter_hashes;
  uint64_t filter_capacity; /* header num_elements */
  double filter_fp_rate;    /* header false_positive_prob */
} datadings_shard_facts;
/* Fill *f for shard s; -1 when s is out of range. */
int datadings_shard_facts_get(const datadings_reader *r, size_t s,
                              datadings_shard_facts *f);

/* The data files a datadings path names: a glob (sorted by name, at least
 * one match) or the path itself. Free with ds_shard_list_free. */
int datadings_expand_paths(const char *path, ds_shard_list *out, char **err);

#endif
