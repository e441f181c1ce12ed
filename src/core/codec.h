/* codec.h - decompression shared by the formats: zstd frames with an
 * optional dictionary (raw content or a trained, formatted one) and a
 * reusable context per thread. Output goes into a caller-owned, reused
 * ds_buf, so a scan does no per-row allocation once buffers have grown. */
#ifndef DS_CODEC_H
#define DS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

/* Largest decompressed value we agree to produce (a hostile frame header
 * can claim any size): 1 GiB. The default of every module's
 * max_value_bytes option. */
#define DS_MAX_VALUE_BYTES ((uint64_t)1 << 30)

typedef struct ds_zstd_dict ds_zstd_dict;

/* Digest a dictionary once; it can be shared by many contexts and threads. */
int ds_zstd_dict_new(const void *data, size_t n, ds_zstd_dict **out,
                     char **err);
void ds_zstd_dict_free(ds_zstd_dict *d);
/* The dictionary ID a frame names (0 = none), or 0 for a bad frame. */
unsigned ds_zstd_frame_dict_id(const void *src, size_t n);

/* The content size a frame header declares; 0 when unknown or invalid. */
uint64_t ds_zstd_content_size(const void *src, size_t n);

typedef struct ds_zstd_ctx {
  void *dctx;                /* ZSTD_DCtx, created lazily */
  const ds_zstd_dict *dict;  /* borrowed, may be NULL */
  uint64_t max_out;          /* DS_MAX_VALUE_BYTES unless changed */
  /* contiguous = 1 (set after init; atlas blocks): frames of up to
   * DS_ZSTD_CONTIG_OUT bytes with a dictionary of up to DS_ZSTD_CONTIG_DICT
   * bytes decode into a window that starts with a private copy of the
   * dictionary, right after it, so that zstd copies matches into the
   * dictionary as from earlier output (no separate dictionary segment:
   * about a third faster on small blocks), then into `out`. The window
   * (dictionary + largest frame) belongs to the context. */
  int contiguous;
  void *wddict;              /* ZSTD_DDict over the window's copy */
  uint64_t wfor;             /* the serial of the dictionary the window
                              * holds (an address may be reused) */
  uint8_t *win;
  size_t win_cap;
} ds_zstd_ctx;

#define DS_ZSTD_CONTIG_DICT ((size_t)1 << 20)
#define DS_ZSTD_CONTIG_OUT ((size_t)4 << 20)

void ds_zstd_ctx_init(ds_zstd_ctx *c, const ds_zstd_dict *dict);
void ds_zstd_ctx_free(ds_zstd_ctx *c);

/* Decompress src[0..n), which must be exactly one zstd frame when it
 * declares its content size, or one or more frames when it does not (they
 * are joined), as upstream bagz reads them. Sets out->len. At most
 * min(c->max_out, out->max when set) bytes: more is an error naming
 * max_value_bytes, found before allocating. The error text
 * says what is wrong ("truncated zstd frame", "zstd: <reason>", ...)
 * without naming a file: the caller adds where. */
int ds_zstd_decompress(ds_zstd_ctx *c, const uint8_t *src, size_t n,
                       ds_buf *out, char **err);

#endif
