/* bcolz_filter.h - comparisons evaluated on decompressed bcolz cells, so a
 * scan can test one column's chunk before decompressing any other column
 * (late materialization). Knows cell bytes, not SQLite: the caller turns a
 * SQL value into a bcolz_filter following SQLite's comparison rules.
 *
 * A filter is a pre-filter: it rejects only cells whose comparison SQLite
 * would find false or NULL. Cells it cannot judge exactly (an `S` value that
 * is not ASCII, a uint64 above INT64_MAX that SQL sees as TEXT, a `U` code
 * unit that is not a character) are kept, so SQLite's own check of the
 * returned rows decides them. */
#ifndef DS_BCOLZ_FILTER_H
#define DS_BCOLZ_FILTER_H

#include <stddef.h>
#include <stdint.h>

#include "formats/bcolz/bcolz.h"

typedef enum {
  BCOLZ_OP_EQ,
  BCOLZ_OP_LT,
  BCOLZ_OP_LE,
  BCOLZ_OP_GT,
  BCOLZ_OP_GE,
  BCOLZ_OP_ISNULL,
  BCOLZ_OP_NOTNULL
} bcolz_op;

typedef enum {
  BCOLZ_FV_ANY,   /* keep every cell (value not comparable here) */
  BCOLZ_FV_NONE,  /* keep no cell (e.g. compared with NULL) */
  BCOLZ_FV_INT,
  BCOLZ_FV_FLOAT,
  BCOLZ_FV_TEXT   /* UTF-8 bytes s[0..n) */
} bcolz_fvalue;

typedef struct bcolz_filter {
  bcolz_op op;
  bcolz_fvalue vkind; /* ignored for ISNULL / NOTNULL */
  int64_t i;
  double f;
  const uint8_t *s;   /* owned by the caller */
  size_t n;
  uint32_t *cp;       /* private: s as code points (U columns) */
  size_t ncp;
  int cp_ok;          /* private: s is valid UTF-8 */
} bcolz_filter;

/* Can a filter on this column type do better than keep everything?
 * Scalar b/i/u/f/m (numeric) and S/U (text) columns; not M, O, multi-element
 * cells, or S read as BLOB (bytes_blob). *text = 1 for text columns. */
int bcolz_filter_supported(const bcolz_dtype *dt, int bytes_blob, int *text);

/* Prepare f for a column of dtype dt (decodes a text value for U columns).
 * -1 out of memory. */
int bcolz_filter_prepare(bcolz_filter *f, const bcolz_dtype *dt);
void bcolz_filter_free(bcolz_filter *f);

/* Does the cell at p (dt->atom bytes) pass? */
int bcolz_filter_test(const bcolz_filter *f, const bcolz_dtype *dt,
                      const uint8_t *p);

/* The first of rows [from, to) of a decompressed chunk (cells at
 * base + row * dt->atom) that passes, or `to` when none does. */
uint64_t bcolz_filter_scan(const bcolz_filter *f, const bcolz_dtype *dt,
                           const uint8_t *base, uint64_t from, uint64_t to);

#endif
