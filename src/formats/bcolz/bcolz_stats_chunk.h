/* bcolz_stats_chunk.h - the per-chunk loops of the bcolz column statistics
 * (bcolz_stats.c): running sum, min and max of native-order integers and
 * bools, the NaN count, min, max and compensated sum of native float64,
 * and the min, max, empty count and longest length of S cells, each one
 * typed pass over a decompressed chunk with no call or boxing per
 * cell. Knows bytes, not SQLite. */
#ifndef DS_BCOLZ_STATS_CHUNK_H
#define DS_BCOLZ_STATS_CHUNK_H

#include <stddef.h>
#include <stdint.h>

/* Integers and bools so far: sum exact; min/max signed (imin/imax) or, for
 * unsigned types, umin/umax. Start from bcolz_int_run_init. */
typedef struct bcolz_int_run {
  __int128 sum;
  int64_t imin, imax;
  uint64_t umin, umax;
  int have; /* a cell was seen */
} bcolz_int_run;

/* float64 so far: NaN cells counted in nulls and left out; min, max and
 * Neumaier's compensated sum (sum + comp) of the rest; nan_sum = 1 when
 * +inf and -inf were both added. Start from bcolz_float_run_init. */
typedef struct bcolz_float_run {
  double min, max, sum, comp;
  uint64_t nulls;
  int nan_sum;
  int have; /* a non-NaN cell was seen */
} bcolz_float_run;

/* S cells (NUL-padded bytes) so far: the least and greatest whole cells
 * in memcmp order (NUL-padded cells order as their stripped values do),
 * the cells that are empty once stripped, the longest stripped length. */
typedef struct bcolz_s_run {
  uint8_t *min, *max; /* w bytes each, the caller's */
  uint64_t empty, max_len;
  int have; /* min and max hold a cell */
} bcolz_s_run;

void bcolz_int_run_init(bcolz_int_run *r);
void bcolz_float_run_init(bcolz_float_run *r);

/* Add `rows` native-order cells at p to r. code is the cell type as a
 * struct-module letter: l i h b (int64 ... int8), I H B (uint32 ... uint8),
 * ? (bool: a non-zero byte is true; the sum counts them). 0, or -1 for
 * another letter (nothing added). */
int bcolz_int_run_add(bcolz_int_run *r, char code, const uint8_t *p, uint64_t rows);
/* The same without the AVX2 loops bcolz_int_run_add takes when the CPU
 * has AVX2 (the tests compare both). */
int bcolz_int_run_add_plain(bcolz_int_run *r, char code, const uint8_t *p, uint64_t rows);

/* Add `rows` native-order float64 cells at p to r. */
void bcolz_float_run_add(bcolz_float_run *r, const uint8_t *p, uint64_t rows);

/* Add `rows` S cells of w bytes at p to r. */
void bcolz_s_run_add(bcolz_s_run *r, size_t w, const uint8_t *p, uint64_t rows);

#endif
