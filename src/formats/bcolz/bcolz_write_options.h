/* bcolz_write_options.h - how a bcolz writer writes (chunk length, codec,
 * level, shuffle, fsync, the largest chunk): shared by the writer
 * (bcolz_writer.c, which defines the functions below) and its chunk
 * writer thread (bcolz_chunk_writer.c), which needs no more of the
 * writer than this. */
#ifndef DS_BCOLZ_WRITE_OPTIONS_H
#define DS_BCOLZ_WRITE_OPTIONS_H

#include <stdint.h>

typedef struct bcolz_write_options {
  uint64_t chunklen;     /* rows per chunk; 0: from expectedlen per column */
  uint64_t expectedlen;  /* upstream's size hint */
  char cname[16];        /* blosclz, lz4, lz4hc, snappy, zlib, zstd */
  int clevel;            /* 0..9 */
  int shuffle;           /* 0 none, 1 byte, 2 bit */
  int sync;              /* fsync every file and folder when finishing */
  uint64_t max_value_bytes;    /* most bytes one chunk (chunklen x cell) may hold:
                            the readers' max_value_bytes (0: its default,
                            DS_MAX_VALUE_BYTES); never above SQLite's default
                            length limit (1e9: readers cap max_value_bytes
                            there) nor what c-blosc compresses in one call */
} bcolz_write_options;

/* Upstream's defaults: lz4, clevel 5, shuffle 1; expectedlen 1,000,000. */
void bcolz_write_defaults(bcolz_write_options *o);
int bcolz_write_check(const bcolz_write_options *o, char **err);

#endif
