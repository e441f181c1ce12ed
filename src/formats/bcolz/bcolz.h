/* bcolz.h - reader for bcolz 1.x persistent carrays and ctables: a root
 * directory with meta/sizes, meta/storage, __attrs__ and data/__<N>.blp
 * chunk files (a 16-byte "blpk" header + one Blosc 1.x buffer), or a ctable
 * root with __rootdirs__ and one carray directory per column.
 * Knows bytes and the value model, not SQLite. Links c-blosc 1.x (-lblosc)
 * and jansson. Format notes: docs/formats/bcolz.md.
 *
 * Errors follow core/common.h (0 / -1 and a malloc'd *err) and name the
 * file involved. A bcolz_table keeps a per-column cache of the last loaded
 * chunk files, so one handle is used by one thread at a time. */
#ifndef DS_BCOLZ_H
#define DS_BCOLZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/common.h"
#include "core/value.h"

#define BCOLZ_MAX_DIMS 32

/* The dtype of one column: the element dtype of meta/storage plus the cell
 * shape of meta/sizes (shape[1:]). */
typedef struct bcolz_dtype {
  char kind;          /* 'b' bool, 'i', 'u', 'f', 'S', 'U', 'M' datetime64,
                         'm' timedelta64, 'O' object (pickles) */
  char byteorder;     /* '<', '>' or '|' (one-byte types, S, O) */
  uint32_t itemsize;  /* bytes per element (0 for 'O') */
  int unit;           /* 'M'/'m': enum ds_npy_unit; else -1 */
  int64_t mult;       /* 'M'/'m': unit multiplier ("[10s]" -> 10), else 1 */
  int ndim;           /* cell dimensions (0 for scalar cells) */
  uint64_t shape[BCOLZ_MAX_DIMS];
  uint64_t nelem;     /* elements per cell: product of shape (1 if scalar) */
  uint64_t atom;      /* bytes per row: itemsize * nelem (0 for 'O') */
  char str[40];       /* numpy dtype.str of one element: "<i4", "|S8",
                         "<U6", "|b1", "<M8[ns]", ">f8", "|O" */
} bcolz_dtype;

typedef struct bcolz_table bcolz_table;

/* Open a ctable root (has __rootdirs__) or a carray root (has
 * meta/storage). Reads and checks all the JSON metadata of every column
 * (shape, dtype, chunklen, attrs); columns of different lengths, an
 * unsupported dtype ('V', structured, complex, float128, generic datetime)
 * or unparseable JSON are errors naming the file. Chunk files are opened
 * lazily. */
int bcolz_open(const char *path, bcolz_table **out, char **err);
void bcolz_close(bcolz_table *t);

const char *bcolz_path(const bcolz_table *t);
int bcolz_is_ctable(const bcolz_table *t);
uint64_t bcolz_nrows(const bcolz_table *t);
size_t bcolz_ncols(const bcolz_table *t);
/* The table's __attrs__ as compact JSON text ("{}" when the file is
 * missing); owned by t. */
const char *bcolz_attrs_json(const bcolz_table *t);

/* Per column (col < bcolz_ncols). A carray has one column named "value". */
const char *bcolz_col_name(const bcolz_table *t, size_t col);
const bcolz_dtype *bcolz_col_dtype(const bcolz_table *t, size_t col);
/* The raw "dtype" string of meta/storage ("int32", "|S8", ">i4"). */
const char *bcolz_col_meta_dtype(const bcolz_table *t, size_t col);
/* Rows per chunk as in meta/storage (object columns store one row per
 * chunk whatever this says). */
uint64_t bcolz_col_chunklen(const bcolz_table *t, size_t col);
/* Number of chunk files used: full chunks + 1 when there is a leftover
 * (object columns: one per row). */
uint64_t bcolz_col_nchunks(const bcolz_table *t, size_t col);
/* Rows held by chunk k (< nchunks) and its first row. */
uint64_t bcolz_col_chunk_rows(const bcolz_table *t, size_t col, uint64_t k);
uint64_t bcolz_col_chunk_first(const bcolz_table *t, size_t col, uint64_t k);
/* The chunk that holds `row`. */
uint64_t bcolz_col_chunk_of(const bcolz_table *t, size_t col, uint64_t row);
/* The column's __attrs__ as compact JSON text (carray: the root's). */
const char *bcolz_col_attrs_json(const bcolz_table *t, size_t col);
/* Column directory (carray: the root). */
const char *bcolz_col_path(const bcolz_table *t, size_t col);

/* Parse meta/storage and meta/sizes texts (the checks bcolz_open makes)
 * into the dtype, row count and chunklen. Exposed for the fuzzer. */
int bcolz_parse_meta(const uint8_t *storage, size_t storage_len,
                     const uint8_t *sizes, size_t sizes_len, bcolz_dtype *dt,
                     uint64_t *len, uint64_t *chunklen, char **err);

/* Check a chunk file's bytes p[0..size): size >= 32, magic "blpk", blpk
 * version 1, nchunks 1, Blosc version 1..2, blosc_cbuffer_validate against
 * size - 16. On success *nbytes = the Blosc uncompressed size. `name` is
 * used in messages. Exposed for the fuzzer. */
int bcolz_check_chunk_file(const uint8_t *p, uint64_t size, const char *name,
                           uint64_t *nbytes, char **err);
/* Check and decompress the Blosc buffer of a chunk file into buf (resized
 * to the chunk's nbytes; buf->len = nbytes). Exposed for the fuzzer. */
int bcolz_decode_chunk_file(const uint8_t *p, uint64_t size, const char *name,
                            ds_buf *buf, char **err);

/* A scan of rows from `row` on begins: the first chunk each column reads
 * there starts announcing the chunk files after it (a remote table
 * fetches them while that chunk is read), not only the second one. */
void bcolz_scan_from(bcolz_table *t, uint64_t row);

/* Decompress chunk k of a column into buf (reused between calls; grown
 * as needed; buf->max, when set, is max_value_bytes: a larger chunk, or
 * in bcolz_row_atom a larger row, is an error). On success *p points at the first row's bytes in buf,
 * *rows = rows of the chunk, and buf->len = the bytes of those rows
 * (rows * atom; for an object column the pickle's length). A full chunk
 * must hold exactly chunklen rows, the leftover at least its rows (only
 * the prefix is used). Errors name the chunk file. */
int bcolz_chunk(bcolz_table *t, size_t col, uint64_t k, ds_buf *buf,
                const uint8_t **p, uint64_t *rows, char **err);

/* bcolz_chunk for passes over a whole column (statistics): chunk k's file
 * is read into `file` (reused from call to call, so a pass allocates
 * nothing per chunk) instead of the table's chunk cache, then checked and
 * decompressed into buf as bcolz_chunk does. */
int bcolz_chunk_read(bcolz_table *t, size_t col, uint64_t k, ds_buf *file, ds_buf *buf,
                     const uint8_t **p, uint64_t *rows, char **err);

/* *one = 1 when chunk k of the column is a single Blosc block (or an
 * object chunk): reading one of its rows costs the whole chunk. */
int bcolz_chunk_one_block(bcolz_table *t, size_t col, uint64_t k, int *one,
                          char **err);

/* One row's atom (atom bytes; object columns: the pickle) into out
 * (out->len set), decompressing with blosc_getitem only the Blosc block
 * that holds it (the whole chunk for object columns). */
int bcolz_row_atom(bcolz_table *t, size_t col, uint64_t row, ds_buf *out,
                   char **err);

/* Flags of bcolz_cell_value. */
#define BCOLZ_BYTES_BLOB 1 /* S cells as BYTES even when valid UTF-8 */

/* Map one cell (atom bytes p[0..n), n == dt->atom except for 'O') to the
 * value model: ints INT (uint64 above INT64_MAX UINT), floats FLOAT
 * (float16 widened), bool BOOL, U TEXT (UTF-8, trailing U+0000 removed;
 * an invalid code unit is an error), S TEXT without trailing NULs (BYTES
 * when not UTF-8 or with BCOLZ_BYTES_BLOB), datetime64 TEXT ISO at the unit
 * (NaT NULL), timedelta64 INT ticks (NaT NULL), cells of more than one
 * element NDARRAY (a .npy file, dtype as stored), object the decoded pickle
 * (core pickle decoder; a global off its allow-list is an error). Big-endian
 * is swapped. Everything the value points to lives in `a`. */
int bcolz_cell_value(const bcolz_dtype *dt, const uint8_t *p, size_t n,
                     int flags, ds_arena *a, ds_value *out, char **err);

/* A scalar numeric cell (kinds b, i, u, f, m) as SQL sees it: *i for
 * BCOLZ_NUM_INT (bool 0/1, timedelta ticks), *d for BCOLZ_NUM_FLOAT;
 * BCOLZ_NUM_NULL for NaN / NaT, BCOLZ_NUM_BIG for a uint64 above INT64_MAX
 * (shown as decimal TEXT), BCOLZ_NUM_NONE for any other dtype. */
#define BCOLZ_NUM_NONE 0
#define BCOLZ_NUM_INT 1
#define BCOLZ_NUM_FLOAT 2
#define BCOLZ_NUM_NULL 3
#define BCOLZ_NUM_BIG 4
int bcolz_cell_number(const bcolz_dtype *dt, const uint8_t *p, int64_t *i,
                      double *d);

/* Cell helpers shared by bcolz.c and bcolz_stats.c. */
/* Length of an S cell p[0..n) without its trailing NULs (inline: every S
 * cell of a scan takes it). */
static inline size_t bcolz_s_len(const uint8_t *p, size_t n) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  while (n >= 8) { /* 8 bytes at a time: the last non-zero byte of a word */
    uint64_t x;
    memcpy(&x, p + n - 8, 8);
    if (x) return n - 8 + (size_t)(63 - __builtin_clzll(x)) / 8 + 1;
    n -= 8;
  }
#endif
  while (n > 0 && p[n - 1] == 0) n--;
  return n;
}
/* The UCS-4 units of a U cell (itemsize bytes, big-endian when big) as
 * UTF-8 appended to b, trailing U+0000 removed; *cps (when not NULL) = the
 * code points kept. An invalid code unit is an error. */
int bcolz_ucs4_to_utf8(const uint8_t *p, uint32_t itemsize, int big,
                       ds_buf *b, uint64_t *cps, char **err);

/* Whole-column statistics over the decompressed chunks (bcolz_stats.c). */
typedef struct bcolz_stats {
  uint64_t count;     /* rows */
  uint64_t nulls;     /* NaN (floats) / NaT (datetime, timedelta) cells */
  int has_values;     /* 0: min/max/sum/mean are not defined for the column
                         (multi-element cells, object columns) */
  ds_value min, max;  /* ignoring NaN/NaT; NULL when no value. ints INT/UINT,
                         bool INT 0/1, floats FLOAT, S/U TEXT or BYTES
                         (byte order = code point order), M ISO TEXT, m INT */
  ds_value sum;       /* ints/bool: exact (INT, or BIGINT decimal text);
                         floats: FLOAT ignoring NaN; NULL for S/U/M/m or
                         when there is no value */
  double mean;        /* sum / (count - nulls); NaN when undefined */
  int has_mean;
  int64_t tmin, tmax; /* 'M'/'m': min/max ticks ignoring NaT */
  uint64_t empty_count; /* S/U: empty values after stripping NULs */
  uint64_t max_len;     /* S/U: longest value in bytes / code points */
  ds_buf min_store_, max_store_; /* private: bytes min/max point into */
  char sum_text_[48];            /* private: BIGINT sum digits */
} bcolz_stats;

/* Compute the statistics of column col (*s is overwritten; free it with
 * bcolz_stats_free even after an error). Chunks are capped at the default
 * max_value_bytes; gives up with "interrupted" when a core/cancel.h scope
 * asks to stop. */
int bcolz_column_stats(bcolz_table *t, size_t col, bcolz_stats *s,
                       char **err);
void bcolz_stats_free(bcolz_stats *s);

/* How many times this process decompressed a chunk (or, for single-row
 * reads, a Blosc block) of the column stored in directory column_dir
 * (bcolz_col_path; a carray's root), over every table handle. */
uint64_t bcolz_decode_count(const char *column_dir);

/* 1 when a chunk file the table has read changed on disk since it was
 * read (its decompressed chunks may be cached); 0 for NULL (a writer's
 * table before its first commit has no table). */
int bcolz_stale(const bcolz_table *t);
/* 1 when a read found the table's folder replaced (no system call; the
 * read failed with "the dataset changed while it was read"). */
int bcolz_saw_change(const bcolz_table *t);

/* ---- For dataset_info: how a column was compressed ---- */
typedef struct bcolz_cparams {
  /* meta/storage "cparams" as upstream reports them: keys older files
   * lack get upstream's values (cname "blosclz", quantize 0, shuffle
   * true = 1; clevel 5 and shuffle 1 when there is no cparams at all) */
  int clevel, shuffle, quantize;
  char cname[16];
  /* chunk 0's Blosc header (has_chunk 0: the column has no chunk file) */
  int has_chunk;
  unsigned flags;    /* byte 2: shuffle bits, memcpyed, codec in bits 5-7 */
  unsigned typesize; /* byte 3 */
} bcolz_cparams;
/* Read them for column col. Errors name the file. */
int bcolz_col_cparams(const bcolz_table *t, size_t col, bcolz_cparams *out,
                      char **err);

#endif
