/* bagz_compress.h - the record compressor of the bagz writer: one zstd
 * frame per non-empty record, made the way upstream makes it
 * (ZSTD_compress_usingCDict with a CDict of the dictionary, empty when
 * there is none: content size in the header, no checksum); empty records
 * pass through as 0 bytes. With two threads, records are gathered in
 * batches of about 256 KiB: a helper thread compresses one batch while the
 * caller's thread fills the next (and compresses one itself when the ring
 * of eight is full), and batches come out in order, so memory stays at the
 * ring's eight batches. Knows no SQLite. */
#ifndef DS_BAGZ_COMPRESS_H
#define DS_BAGZ_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

/* Receives each stored record, in input order. */
typedef int (*bagz_emit_fn)(void *ctx, const uint8_t *p, size_t n, char **err);

typedef struct bagz_compressor bagz_compressor;

/* level 0 = zstd's default; dict may be NULL. threads is 1 or 2. */
int bagz_compressor_new(int level, const uint8_t *dict, size_t dict_len,
                        int threads, bagz_emit_fn emit, void *ctx,
                        bagz_compressor **out, char **err);
void bagz_compressor_free(bagz_compressor *c);

/* Compress (or queue) one record; `row` names it in errors. Emits zero or
 * more earlier records. */
int bagz_compressor_add(bagz_compressor *c, uint64_t row, const uint8_t *p,
                        size_t n, char **err);
/* Emit everything queued; afterwards nothing is in flight. */
int bagz_compressor_drain(bagz_compressor *c, char **err);
/* Drop everything queued without emitting it (rollback). */
void bagz_compressor_reset(bagz_compressor *c);

/* One record compressed into out (grown as needed); for tests. */
int bagz_compress_one(int level, const uint8_t *dict, size_t dict_len,
                      const uint8_t *p, size_t n, uint8_t **out,
                      size_t *out_len, char **err);

#endif
